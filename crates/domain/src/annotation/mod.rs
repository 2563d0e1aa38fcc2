//! Annotation in the browser (issue "Annotate in the browser: first pass, second-annotator
//! confirmation, adjudication, specificity and claim revision"): the protocol of SciFact-Open
//! (Wadden et al. 2022, Appendix A.2) with the FEVER conventions for specificity (Appendix B.2).
//!
//! - [`vocab`]: [`Stage`], [`SecondPassMode`], [`Specificity`], [`Provenance`], with their
//!   database spellings.
//! - [`form`]: [`Annotation::parse`] turns the submitted form into an annotation that can
//!   only be in an allowed state.
//! - [`fever`]: the specificity rules, the text the form shows, and a [`Warning`] (not a refusal)
//!   when a label contradicts them.
//! - [`protocol`]: a pair's [`PairState`] from its judgments, [`check_submission`],
//!   [`visible_first_label`].
//! - [`assign`]: seeded, balanced assignment; second passes never to the first annotator;
//!   reassignment when an annotator is deactivated.
//! - [`queue`]: queue order and skipping. [`undo`]: the undo window and its rule.
//!
//! The database layer drives `assignments`, `judgments`, `judgment_retractions` and
//! `final_labels` from these functions.

#[cfg(feature = "server")]
pub mod assign;
pub mod confirmation;
pub mod fever;
pub mod form;
pub mod keys;
pub mod protocol;
pub mod queue;
pub mod submission_key;
pub mod undo;
pub mod vocab;

#[cfg(all(test, feature = "server"))]
mod tests;

#[cfg(feature = "server")]
pub use assign::{
    assign_adjudication, assign_first, assign_reannotation, assign_second, reassign, AssignError,
    Assigned, Loads, OpenItem, PoolPair, Reassigned, Work,
};
pub use fever::{check_fever, fever_label, rule_text, Direction, Warning};
pub use form::{
    Annotation, AnnotationDraft, AnnotationError, EvidenceSet, Relation, MAX_NOTE_CHARS,
    MAX_REVISED_CLAIM_CHARS,
};
pub use keys::{AnnotatorId, PoolEntryId};
pub use protocol::{
    check_new_judgment, check_stage_verdict, check_submission, shows_first_label,
    visible_first_label, Decision, FinalLabel, Judged, Opinion, PairState, ProtocolError, Verdict,
};
pub use queue::{skip_position, QueueFull, QueueKey, FRESH_POSITION};
pub use submission_key::{SubmissionKey, SubmissionKeyError};
pub use undo::{
    can_undo, check_not_revealed, plan_undo, reveals_on_submit, UndoError, UndoPlan, UNDO_WINDOW_MS,
};
pub use vocab::{Provenance, SecondPassMode, Specificity, Stage, UnknownValue};
