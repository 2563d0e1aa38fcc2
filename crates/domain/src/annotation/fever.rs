//! The FEVER conventions for evidence whose specificity differs from the claim's (SciFact-Open,
//! Appendix B.2; Thorne et al. 2018):
//!
//! | the evidence is…        | and supports it | and refutes it | and does neither |
//! |-------------------------|-----------------|----------------|------------------|
//! | as specific as the claim| SUPPORT         | CONTRADICT     | NEI              |
//! | more specific           | SUPPORT         | NEI            | NEI              |
//! | more general            | NEI             | CONTRADICT     | NEI              |
//! | closely related         | no rule         | no rule        | no rule          |
//!
//! A special case that holds proves the general claim; a special case that fails does not refute
//! it. A generalization that holds does not prove the special claim; one that fails refutes it.
//! The form shows [`rule_text`] for the chosen relation and a [`Warning`] (never a refusal) when
//! the chosen label cannot arise from that relation.

use super::vocab::Specificity;
use crate::label::Label;
use std::fmt;

/// What the evidence does to the claim it is about.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Direction {
    /// The evidence says the (special or general) case holds.
    Supports,
    /// The evidence says it does not hold.
    Refutes,
    /// The evidence says neither.
    Neither,
}

impl Direction {
    /// Every direction.
    pub const ALL: [Direction; 3] = [Direction::Supports, Direction::Refutes, Direction::Neither];
}

/// The label FEVER prescribes for evidence in `relation` to the claim that goes in `direction`;
/// `None` when no rule applies ([`Specificity::CloselyRelated`]).
pub fn fever_label(relation: Specificity, direction: Direction) -> Option<Label> {
    use Direction::{Neither, Refutes, Supports};
    use Specificity::{CloselyRelated, EvidenceMoreGeneral, EvidenceMoreSpecific, Matches};
    match (relation, direction) {
        (CloselyRelated, _) => None,
        (_, Neither) => Some(Label::Nei),
        (Matches | EvidenceMoreSpecific, Supports) => Some(Label::Support),
        (Matches | EvidenceMoreGeneral, Refutes) => Some(Label::Contradict),
        (EvidenceMoreGeneral, Supports) | (EvidenceMoreSpecific, Refutes) => Some(Label::Nei),
    }
}

/// The rule the form shows next to the chosen relation.
pub fn rule_text(relation: Specificity) -> &'static str {
    match relation {
        Specificity::Matches => {
            "The evidence is about the claim as written: SUPPORT if it supports the claim, \
             CONTRADICT if it refutes it, NEI if it does neither."
        }
        Specificity::EvidenceMoreSpecific => {
            "The evidence is about a special case of the claim (FEVER convention): if it supports \
             the special case, label SUPPORT; if it refutes the special case, label NEI, since one \
             failing case does not refute the general claim. Give the special case as the revised claim."
        }
        Specificity::EvidenceMoreGeneral => {
            "The evidence is about a generalization of the claim (FEVER convention): if it refutes \
             the generalization, label CONTRADICT, since the claim falls with it; if it supports \
             the generalization, label NEI, since the general case does not prove the special one. \
             Give the generalization as the revised claim."
        }
        Specificity::CloselyRelated => {
            "The evidence is about a closely related claim; no FEVER rule applies: label by what \
             it says about the claim as written, and give the claim it does address as the revised claim."
        }
    }
}

/// The chosen label cannot arise from the chosen relation under the FEVER conventions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Warning {
    /// The label chosen.
    pub label: Label,
    /// The relation chosen.
    pub relation: Specificity,
    /// The label the convention gives for evidence going the way the chosen label suggests.
    pub suggested: Label,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is unusual for evidence where \"{}\": under the FEVER convention such evidence \
             gets {}. {}",
            self.label,
            self.relation.human().to_lowercase(),
            self.suggested,
            rule_text(self.relation)
        )
    }
}

/// A [`Warning`] when no direction of the evidence gives `label` under `relation`.
pub fn check_fever(label: Label, relation: Specificity) -> Option<Warning> {
    let possible = Direction::ALL.map(|d| fever_label(relation, d));
    if possible.iter().all(Option::is_none) || possible.contains(&Some(label)) {
        return None;
    }
    // The direction the label suggests: SUPPORT reads as "supports", CONTRADICT as "refutes".
    let direction = match label {
        Label::Support => Direction::Supports,
        Label::Contradict => Direction::Refutes,
        Label::Nei => Direction::Neither,
    };
    fever_label(relation, direction).map(|suggested| Warning {
        label,
        relation,
        suggested,
    })
}
