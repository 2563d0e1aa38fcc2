//! The inputs of commands that their errors name: a form's field, the command line's option.

use serde::{Deserialize, Serialize};

/// A command's input that an error names (the `Field` error of commands and server functions):
/// a form's field, the command line's option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    Format,
    Role,
    LabelOrder,
    Annotator,
    Stage,
    NegativeSamplingRatio,
    Strategy,
    Depth,
    Order,
    Seed,
    Budget,
    /// The `cal` order's corpus retrievals per claim.
    Candidates,
    Name,
    UserName,
    NewPassword,
    Command,
    Assessor,
    Samples,
    Count,
    System,
    Reannotate,
    /// An annotation's label (the form's `label`).
    Label,
    /// An annotation's evidence sentences.
    Rationale,
    Specificity,
    /// The form's `revised_claim`.
    RevisedClaim,
    /// An annotation's note.
    Note,
    /// The note of an item's "needs attention" flag.
    FlagNote,
    /// A comment on a pair.
    Comment,
    /// The time a submission says its item took (`seconds_spent`).
    SecondsSpent,
    /// A listing's search text.
    Search,
    /// A stopping test's target recall.
    TargetRecall,
    /// A stopping test's confidence (1 − α).
    Confidence,
    /// A stopping sample's size.
    SampleSize,
    /// A webhook's URL.
    Url,
    /// A webhook's events.
    Events,
}

impl Field {
    /// How messages name the field.
    pub fn label(self) -> &'static str {
        match self {
            Field::Format => "format",
            Field::Role => "role",
            Field::LabelOrder => "label order",
            Field::Annotator => "annotator",
            Field::Stage => "stage",
            Field::NegativeSamplingRatio => "negative sampling ratio",
            Field::Strategy => "strategy",
            Field::Depth => "depth",
            Field::Order => "order",
            Field::Seed => "seed",
            Field::Budget => "budget",
            Field::Candidates => "candidates",
            Field::Name => "name",
            Field::UserName => "user name",
            Field::NewPassword => "new password",
            Field::Command => "command",
            Field::Assessor => "assessor",
            Field::Samples => "samples",
            Field::Count => "count",
            Field::System => "system",
            Field::Reannotate => "reannotate",
            Field::Label => "label",
            Field::Rationale => "rationale",
            Field::Specificity => "specificity",
            Field::RevisedClaim => "revised_claim",
            Field::Note => "note",
            Field::FlagNote => "flag note",
            Field::Comment => "comment",
            Field::SecondsSpent => "seconds_spent",
            Field::Search => "search",
            Field::TargetRecall => "target recall",
            Field::Confidence => "confidence",
            Field::SampleSize => "sample size",
            Field::Url => "URL",
            Field::Events => "events",
        }
    }
}
