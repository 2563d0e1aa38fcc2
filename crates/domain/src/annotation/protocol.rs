//! The annotation protocol for one pair (SciFact-Open, Appendix A.2): a first pass; a first pass
//! of "clearly no evidence" makes the pair NEI at once; otherwise a second annotator, never the
//! first, confirms (or, in blind mode, judges again); the same label from both makes it final,
//! different labels send it to adjudication by one of the two annotators or a lead. Where the
//! project asks for re-annotation (AVeriTeC's phases), a disagreement first goes to a fresh
//! annotator (a second pass by someone who gave neither label): agreeing with either label
//! makes that label final (a majority); a third label sends the pair to adjudication.
//!
//! [`PairState::from_judgments`] replays a pair's non-retracted judgments in order;
//! [`check_submission`] says whether a person may submit a stage now; [`visible_first_label`]
//! what the form may show of the first pass. The state does not depend on the second-pass mode:
//! the mode changes only what the second annotator sees, not what the judgments decide.

use super::form::Annotation;
use super::keys::AnnotatorId;
use super::vocab::{SecondPassMode, Stage};
use crate::label::Label;

/// What a judgment decides for the protocol: its label, and whether it was the first pass's
/// "clearly no evidence" (then the label is NEI).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Verdict {
    /// First pass only: the abstract clearly holds no evidence. Means NEI.
    ClearlyNoEvidence,
    /// A label given after reading.
    Label(Label),
}

impl Verdict {
    /// Reads `judgments.label` and `judgments.no_evidence`.
    pub fn from_columns(label: Label, no_evidence: bool) -> Result<Verdict, ProtocolError> {
        match (no_evidence, label) {
            (false, label) => Ok(Verdict::Label(label)),
            (true, Label::Nei) => Ok(Verdict::ClearlyNoEvidence),
            (true, label) => Err(ProtocolError::NoEvidenceWithLabel(label)),
        }
    }

    /// The label, NEI for "clearly no evidence".
    pub fn label(self) -> Label {
        match self {
            Verdict::ClearlyNoEvidence => Label::Nei,
            Verdict::Label(label) => label,
        }
    }

    /// Whether it is the first pass's "clearly no evidence".
    pub fn no_evidence(self) -> bool {
        matches!(self, Verdict::ClearlyNoEvidence)
    }
}

impl From<&Annotation> for Verdict {
    fn from(annotation: &Annotation) -> Verdict {
        if annotation.no_evidence() {
            Verdict::ClearlyNoEvidence
        } else {
            Verdict::Label(annotation.label())
        }
    }
}

/// One non-retracted judgment of a pair, as the protocol reads it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Judged {
    stage: Stage,
    annotator: Option<AnnotatorId>,
    verdict: Verdict,
}

impl Judged {
    /// A judgment row: every stage but [`Stage::Final`] (imports) has an annotator, and only
    /// the first stage may say "clearly no evidence".
    pub fn new(
        stage: Stage,
        annotator: Option<AnnotatorId>,
        verdict: Verdict,
    ) -> Result<Judged, ProtocolError> {
        check_stage_verdict(stage, verdict)?;
        if annotator.is_none() && stage != Stage::Final {
            return Err(ProtocolError::MissingAnnotator(stage));
        }
        Ok(Judged {
            stage,
            annotator,
            verdict,
        })
    }

    /// The stage.
    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// Who judged; `None` only for imported final labels.
    pub fn annotator(&self) -> Option<AnnotatorId> {
        self.annotator
    }

    /// What was decided.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }
}

/// One annotator's label in a pass.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Opinion {
    pub annotator: AnnotatorId,
    pub label: Label,
}

/// How a final label came about.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Decision {
    /// The first pass said "clearly no evidence": NEI, no second pass.
    ClearlyNoEvidence { first: AnnotatorId },
    /// Both passes gave the same label.
    Agreement { first: Opinion, second: Opinion },
    /// The passes disagreed and a fresh annotator's re-annotation agreed with one of them.
    Majority {
        first: Opinion,
        second: Opinion,
        third: Opinion,
    },
    /// The passes disagreed and an adjudicator decided.
    Adjudication {
        first: Opinion,
        second: Opinion,
        adjudicator: AnnotatorId,
    },
    /// The label came with an import ([`Stage::Final`]).
    Imported { annotator: Option<AnnotatorId> },
}

/// A pair's final label: what `final_labels` holds.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct FinalLabel {
    pub label: Label,
    pub decision: Decision,
    /// Position, in the slice given to [`PairState::from_judgments`], of the judgment that
    /// `final_labels.judgment_id` names: the deciding one (for an agreement, the second pass).
    pub judgment: usize,
}

/// Where a pair stands in the protocol.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum PairState {
    /// No judgment yet.
    NeedsFirst,
    /// The first pass is in and read the abstract; a second annotator is needed.
    NeedsSecond { first: Opinion },
    /// The two passes disagree: adjudication is needed, or, while `third` is None, a fresh
    /// annotator's re-annotation may come first. `third`: a re-annotation that agreed with
    /// neither.
    NeedsAdjudication {
        first: Opinion,
        second: Opinion,
        third: Option<Opinion>,
    },
    /// Done: from "clearly no evidence", agreement, adjudication or an import.
    Final(FinalLabel),
}

/// Why a judgment is refused, now or in a pair's history.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("the pair is already final ({0}); nothing more can be submitted")]
    AlreadyFinal(Label),
    #[error("the pair needs its {} now, not the {}", .expected.human().to_lowercase(), .got.human().to_lowercase())]
    OutOfOrder { expected: Stage, got: Stage },
    #[error("{0} gave the first pass; the second pass must come from someone else")]
    SecondBySameAnnotator(AnnotatorId),
    #[error("{0} already labelled the pair; a re-annotation must come from a fresh annotator")]
    ReannotationByPartisan(AnnotatorId),
    #[error("the pair was already re-annotated; it needs its adjudication now")]
    ReannotatedTwice,
    #[error("the two passes disagree and re-annotation is off in this project: the pair needs its adjudication, not another second pass")]
    ReannotationOff,
    #[error("{annotator} may not adjudicate: only one of the two annotators ({first} or {second}) or a lead may")]
    NotAdjudicator {
        annotator: AnnotatorId,
        first: AnnotatorId,
        second: AnnotatorId,
    },
    #[error("final labels come only from imports; a person submits the first, second or adjudication stage")]
    FinalStageSubmitted,
    #[error("\"clearly no evidence\" belongs to the first pass; at the {} give a label", .0.human().to_lowercase())]
    NoEvidenceOutsideFirstPass(Stage),
    #[error("a judgment marked \"clearly no evidence\" must be NEI, not {0}")]
    NoEvidenceWithLabel(Label),
    #[error("a judgment at the {} needs an annotator", .0.human().to_lowercase())]
    MissingAnnotator(Stage),
    #[error("judgment {position} of the pair's history is out of protocol: {reason}")]
    InHistory {
        position: usize,
        reason: Box<ProtocolError>,
    },
}

/// Whether `verdict` may be given at `stage`: "clearly no evidence" only at the first pass.
pub fn check_stage_verdict(stage: Stage, verdict: Verdict) -> Result<(), ProtocolError> {
    if verdict.no_evidence() && stage != Stage::First {
        Err(ProtocolError::NoEvidenceOutsideFirstPass(stage))
    } else {
        Ok(())
    }
}

/// Whether `annotator` (a lead when `is_lead`) may submit `stage` for a pair in `state`.
/// Refused: anything once final; the [`Stage::Final`] stage (imports only); a stage other than
/// the one the pair needs; the second pass by the first annotator; adjudication by anyone but
/// the two annotators or a lead. Whether the person holds the open assignment is the caller's
/// check.
pub fn check_submission(
    state: &PairState,
    stage: Stage,
    annotator: AnnotatorId,
    is_lead: bool,
) -> Result<(), ProtocolError> {
    let expected = state.needs().map_err(ProtocolError::AlreadyFinal)?;
    if stage == Stage::Final {
        return Err(ProtocolError::FinalStageSubmitted);
    }
    if let (
        PairState::NeedsAdjudication {
            first,
            second,
            third,
        },
        Stage::Second,
    ) = (state, stage)
    {
        // A re-annotation.
        return if third.is_some() {
            Err(ProtocolError::ReannotatedTwice)
        } else if annotator == first.annotator || annotator == second.annotator {
            Err(ProtocolError::ReannotationByPartisan(annotator))
        } else {
            Ok(())
        };
    }
    if stage != expected {
        return Err(ProtocolError::OutOfOrder {
            expected,
            got: stage,
        });
    }
    match state {
        PairState::NeedsSecond { first } if first.annotator == annotator => {
            Err(ProtocolError::SecondBySameAnnotator(annotator))
        }
        PairState::NeedsAdjudication { first, second, .. }
            if !is_lead && annotator != first.annotator && annotator != second.annotator =>
        {
            Err(ProtocolError::NotAdjudicator {
                annotator,
                first: first.annotator,
                second: second.annotator,
            })
        }
        _ => Ok(()),
    }
}

/// Whether `annotator` may give a new judgment at `stage` for a pair in `state`: the one rule
/// the browser's submissions and judgments imports both apply. It is [`check_submission`], and
/// a re-annotation (a second pass of a pair whose two passes disagree) only where
/// `reannotation` says the project asked for one: its re-annotation setting is on (an import),
/// or the person holds the re-annotation the project gave out while it was on (a browser
/// submission). Replaying a pair's history ([`PairState::after`]) does not apply it: a setting
/// changed later leaves past judgments valid.
pub fn check_new_judgment(
    state: &PairState,
    stage: Stage,
    annotator: AnnotatorId,
    is_lead: bool,
    reannotation: bool,
) -> Result<(), ProtocolError> {
    check_submission(state, stage, annotator, is_lead)?;
    if stage == Stage::Second
        && matches!(state, PairState::NeedsAdjudication { .. })
        && !reannotation
    {
        return Err(ProtocolError::ReannotationOff);
    }
    Ok(())
}

impl PairState {
    /// The state after `judged`, the judgment at `position` of the pair's history. People's
    /// judgments follow [`check_submission`]; past adjudicators are trusted to have had the
    /// right (roles may have changed since). An import makes any unfinished pair final.
    pub fn after(&self, position: usize, judged: &Judged) -> Result<PairState, ProtocolError> {
        let label = judged.verdict.label();
        let annotator = match (judged.stage, judged.annotator) {
            (Stage::Final, annotator) => {
                return match self {
                    PairState::Final(done) => Err(ProtocolError::AlreadyFinal(done.label)),
                    _ => Ok(PairState::Final(FinalLabel {
                        label,
                        decision: Decision::Imported { annotator },
                        judgment: position,
                    })),
                };
            }
            (stage, None) => return Err(ProtocolError::MissingAnnotator(stage)),
            (_, Some(annotator)) => annotator,
        };
        check_submission(self, judged.stage, annotator, true)?;
        let opinion = Opinion { annotator, label };
        let done = |decision| {
            PairState::Final(FinalLabel {
                label,
                decision,
                judgment: position,
            })
        };
        Ok(match (self, judged.verdict) {
            (PairState::NeedsFirst, Verdict::ClearlyNoEvidence) => {
                done(Decision::ClearlyNoEvidence { first: annotator })
            }
            (PairState::NeedsFirst, Verdict::Label(_)) => PairState::NeedsSecond { first: opinion },
            (PairState::NeedsSecond { first }, _) if first.label == label => {
                done(Decision::Agreement {
                    first: *first,
                    second: opinion,
                })
            }
            (PairState::NeedsSecond { first }, _) => PairState::NeedsAdjudication {
                first: *first,
                second: opinion,
                third: None,
            },
            // A re-annotation (check_submission allowed it): a majority, or still disputed.
            (PairState::NeedsAdjudication { first, second, .. }, _)
                if judged.stage == Stage::Second =>
            {
                if label == first.label || label == second.label {
                    done(Decision::Majority {
                        first: *first,
                        second: *second,
                        third: opinion,
                    })
                } else {
                    PairState::NeedsAdjudication {
                        first: *first,
                        second: *second,
                        third: Some(opinion),
                    }
                }
            }
            (PairState::NeedsAdjudication { first, second, .. }, _) => {
                done(Decision::Adjudication {
                    first: *first,
                    second: *second,
                    adjudicator: annotator,
                })
            }
            // check_submission refuses anything after final.
            (PairState::Final(done), _) => return Err(ProtocolError::AlreadyFinal(done.label)),
        })
    }

    /// Replays a pair's non-retracted judgments, in submission order.
    pub fn from_judgments(judgments: &[Judged]) -> Result<PairState, ProtocolError> {
        judgments
            .iter()
            .enumerate()
            .try_fold(PairState::NeedsFirst, |state, (position, judged)| {
                state
                    .after(position, judged)
                    .map_err(|reason| ProtocolError::InHistory {
                        position,
                        reason: Box::new(reason),
                    })
            })
    }

    /// The stage a person submits next; `None` once final.
    pub fn next_stage(&self) -> Option<Stage> {
        self.needs().ok()
    }

    /// The stage needed next, or the final label.
    fn needs(&self) -> Result<Stage, Label> {
        match self {
            PairState::NeedsFirst => Ok(Stage::First),
            PairState::NeedsSecond { .. } => Ok(Stage::Second),
            PairState::NeedsAdjudication { .. } => Ok(Stage::Adjudication),
            PairState::Final(done) => Err(done.label),
        }
    }

    /// Whether the pair waits for a re-annotation or its adjudication after a disagreement,
    /// with no re-annotation yet.
    pub fn may_reannotate(&self) -> bool {
        matches!(self, PairState::NeedsAdjudication { third: None, .. })
    }

    /// The first pass's opinion, when there was one.
    pub fn first(&self) -> Option<Opinion> {
        match self {
            PairState::NeedsFirst => None,
            PairState::NeedsSecond { first } | PairState::NeedsAdjudication { first, .. } => {
                Some(*first)
            }
            PairState::Final(done) => match done.decision {
                Decision::ClearlyNoEvidence { first } => Some(Opinion {
                    annotator: first,
                    label: Label::Nei,
                }),
                Decision::Agreement { first, .. }
                | Decision::Majority { first, .. }
                | Decision::Adjudication { first, .. } => Some(first),
                Decision::Imported { .. } => None,
            },
        }
    }
}

/// Whether a form at `stage` for a pair in `state` may show the first pass at all: not to a
/// re-annotator (a second pass after a disagreement), who judges blind whatever the mode.
pub fn shows_first_label(stage: Stage, state: &PairState) -> bool {
    !(stage == Stage::Second && state.may_reannotate())
}

/// The first pass's label as `viewer` may see it on the form. The first annotator always sees
/// their own. In confirm mode everyone sees it. In blind mode it is hidden from everyone else
/// while the pair waits for its second pass, and shown once the second judgment is in (the
/// second annotator sees it after submitting; adjudicators see both). A re-annotation is never
/// shown it: see [`shows_first_label`].
pub fn visible_first_label(
    mode: SecondPassMode,
    state: &PairState,
    viewer: AnnotatorId,
) -> Option<Label> {
    let first = state.first()?;
    let hidden = mode == SecondPassMode::Blind
        && matches!(state, PairState::NeedsSecond { .. })
        && viewer != first.annotator;
    (!hidden).then_some(first.label)
}
