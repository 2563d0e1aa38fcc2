//! Undoing one's own judgment shortly after submitting it.
//!
//! Rule: a judgment may be undone (a row in `judgment_retractions`; judgments are append-only)
//! by its author, within the window after it was submitted, and only while no later stage
//! depends on it, that is while it is still the pair's latest non-retracted judgment: a first
//! pass can be undone until the second pass is in, a second pass until an adjudication is in.
//! Imported judgments are never undone this way. A judgment whose submission showed its author
//! an annotation they had not seen while judging (a blind second pass, which reveals the first
//! label) is never undone: otherwise the author could take it back and copy what was revealed.
//!
//! The [`UndoPlan`] gives the pair's state before and after. The caller then reopens the undone
//! stage's assignment ([`PairState::next_stage`] of `after`), withdraws the open assignments of
//! later stages (e.g. the second-pass assignment a first pass created), and, when
//! [`UndoPlan::withdraws_final_label`], deletes the pair's `final_labels` row in the same
//! transaction: a deciding judgment (a "clearly no evidence" first pass, an agreeing second
//! pass, an adjudication) can be undone within its window like any other, since a mis-click
//! there is the commonest case the window exists for.

use super::keys::AnnotatorId;
use super::protocol::{Judged, PairState, ProtocolError};
use super::vocab::{SecondPassMode, Stage};

/// Whether a judgment submitted at `submitted_at_ms` may still be undone at `now_ms` (UTC
/// milliseconds) with a window of `window_ms`: less than `window_ms` has elapsed. A clock that
/// went back (now before the submission) counts as no time elapsed.
pub fn can_undo(submitted_at_ms: i64, now_ms: i64, window_ms: i64) -> bool {
    elapsed_ms(submitted_at_ms, now_ms) < window_ms
}

fn elapsed_ms(submitted_at_ms: i64, now_ms: i64) -> i64 {
    now_ms.saturating_sub(submitted_at_ms).max(0)
}

/// Whether submitting a judgment at `stage` in `mode` shows its author an earlier annotation they
/// did not see while judging: the blind second pass learns the first label.
pub fn reveals_on_submit(stage: Stage, mode: SecondPassMode) -> bool {
    stage == Stage::Second && mode == SecondPassMode::Blind
}

/// Refuses the undo of a judgment whose submission revealed another annotation
/// ([`reveals_on_submit`]).
pub fn check_not_revealed(stage: Stage, mode: SecondPassMode) -> Result<(), UndoError> {
    if reveals_on_submit(stage, mode) {
        Err(UndoError::Revealed)
    } else {
        Ok(())
    }
}

/// The pair's state around an allowed undo.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct UndoPlan {
    /// With the judgment.
    pub before: PairState,
    /// Without it.
    pub after: PairState,
}

impl UndoPlan {
    /// The undone judgment had decided the final label, which must go.
    pub fn withdraws_final_label(&self) -> bool {
        matches!(self.before, PairState::Final(_)) && !matches!(self.after, PairState::Final(_))
    }
}

/// Why an undo is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UndoError {
    #[error("the pair has {count} judgment(s); there is no judgment {position} to undo")]
    NoSuchJudgment { position: usize, count: usize },
    #[error("imported judgments cannot be undone")]
    Imported,
    #[error("the first annotation was shown to you when you submitted this blind second pass; it can no longer be undone")]
    Revealed,
    #[error("only its author ({author}) may undo a judgment")]
    NotAuthor { author: AnnotatorId },
    #[error("a later {} depends on this judgment; it can no longer be undone", .0.human().to_lowercase())]
    LaterJudgment(Stage),
    #[error("the undo window of {window_ms} ms has passed ({elapsed_ms} ms ago)")]
    WindowClosed { elapsed_ms: i64, window_ms: i64 },
    #[error(transparent)]
    History(#[from] ProtocolError),
}

/// How long after submitting one may undo it (ms).
pub const UNDO_WINDOW_MS: i64 = 60_000;

/// Checks that `undoer` may undo the judgment at `position` of the pair's non-retracted
/// judgments (in order), submitted at `submitted_at_ms`, and gives the states around it.
pub fn plan_undo(
    judgments: &[Judged],
    position: usize,
    undoer: AnnotatorId,
    submitted_at_ms: i64,
    now_ms: i64,
    window_ms: i64,
) -> Result<UndoPlan, UndoError> {
    let target = judgments.get(position).ok_or(UndoError::NoSuchJudgment {
        position,
        count: judgments.len(),
    })?;
    if target.stage() == Stage::Final {
        return Err(UndoError::Imported);
    }
    if let Some(author) = target.annotator().filter(|&author| author != undoer) {
        return Err(UndoError::NotAuthor { author });
    }
    if let Some(later) = judgments.get(position + 1) {
        return Err(UndoError::LaterJudgment(later.stage()));
    }
    if !can_undo(submitted_at_ms, now_ms, window_ms) {
        return Err(UndoError::WindowClosed {
            elapsed_ms: elapsed_ms(submitted_at_ms, now_ms),
            window_ms,
        });
    }
    Ok(UndoPlan {
        before: PairState::from_judgments(judgments)?,
        after: PairState::from_judgments(&judgments[..position])?,
    })
}
