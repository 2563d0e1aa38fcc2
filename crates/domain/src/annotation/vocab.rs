//! Closed vocabularies stored as text: one macro gives each its database spelling, parser and
//! human label, so the spellings live in one place.

/// Why a stored or submitted word is not one of a vocabulary's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {value:?} (expected one of: {})", .expected.join(", "))]
pub struct UnknownValue {
    /// The vocabulary, e.g. "stage".
    pub what: &'static str,
    /// The text that was given.
    pub value: String,
    /// Every accepted spelling.
    pub expected: &'static [&'static str],
}

/// Declares a closed vocabulary: the enum, `ALL`, `as_str` (the database spelling, also its serde
/// form), `human` (the label pages show), `parse` (exact database spelling, surrounding white
/// space ignored), `FromStr` and `Display`.
macro_rules! vocabulary {
    (
        $(#[$doc:meta])*
        $name:ident, $what:literal {
            $( $(#[$vdoc:meta])* $variant:ident => $text:literal, $human:literal; )+
        }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $( $(#[$vdoc])* #[serde(rename = $text)] $variant, )+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            const SPELLINGS: &'static [&'static str] = &[$($text),+];

            /// The database spelling.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)+ }
            }

            /// The label shown to people.
            pub fn human(self) -> &'static str {
                match self { $($name::$variant => $human,)+ }
            }

            /// Parses the database spelling.
            pub fn parse(text: &str) -> Result<$name, UnknownValue> {
                match text.trim() {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownValue {
                        what: $what,
                        value: text.to_owned(),
                        expected: $name::SPELLINGS,
                    }),
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = UnknownValue;
            fn from_str(text: &str) -> Result<$name, Self::Err> {
                $name::parse(text)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

/// For the vocabularies declared outside this module (`crate::webhooks`).
pub(crate) use vocabulary;

vocabulary!(
    /// A step of the annotation protocol, as `judgments.stage` and `assignments.stage` spell it.
    Stage, "stage" {
        /// The first pass over a pair.
        First => "first", "First pass";
        /// The second annotator's pass: confirm or, in blind mode, judge again.
        Second => "second", "Second pass";
        /// Resolution of a disagreement between the two passes.
        Adjudication => "adjudication", "Adjudication";
        /// A final judgment that came with an import (e.g. SciFact's citation evidence); no
        /// person submits this stage through the protocol.
        Final => "final", "Imported final label";
    }
);

vocabulary!(
    /// What the second annotator sees, as `projects.second_pass_mode` spells it.
    SecondPassMode, "second-pass mode" {
        /// The second annotator sees the first label and confirms or disagrees.
        Confirm => "confirm", "Confirm (second annotator sees the first label)";
        /// The second annotator judges without seeing the first label.
        Blind => "blind", "Blind (second annotator judges independently)";
    }
);

vocabulary!(
    /// How the evidence relates to the claim as written (SciFact-Open, Appendix A.2), as
    /// `judgments.specificity` spells it.
    Specificity, "specificity" {
        /// The evidence is about the claim as written.
        Matches => "matches", "The evidence matches the claim";
        /// The evidence is about a special case of the claim.
        EvidenceMoreSpecific => "evidence_more_specific", "The evidence is more specific than the claim";
        /// The evidence is about a generalization of the claim.
        EvidenceMoreGeneral => "evidence_more_general", "The evidence is more general than the claim";
        /// The evidence is about a closely related, different claim.
        CloselyRelated => "closely_related", "The evidence addresses a closely related claim";
    }
);

vocabulary!(
    /// Where a judgment or a final label came from, as `judgments.provenance` and
    /// `final_labels.provenance` spell it.
    Provenance, "provenance" {
        /// Evidence that came with the claims (cited abstracts).
        Citation => "citation", "Citation evidence";
        /// Judged by annotators after pooling.
        Pooling => "pooling", "Judged after pooling";
        /// Imported from a judgments file.
        Import => "import", "Imported judgment";
    }
);

impl Provenance {
    /// Whether the label predates annotation (so the pair is never queued).
    pub fn is_prior(self) -> bool {
        !matches!(self, Provenance::Pooling)
    }
}
