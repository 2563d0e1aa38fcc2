//! SciFact leaderboard predictions (also MultiVerS output and merged ARSJoint predictions):
//! `{"id", "evidence": {doc_id: {"label", "sentences"?, "label_probs"?}}}`, one line per claim.
//!
//! `label_probs` holds the three label probabilities in a configurable [`LabelOrder`]. The dict
//! order is the retrieval order: `rank` is the 1-based position in the claim's dict.

use super::label_order::LabelOrder;
use super::record::RunRecord;
use crate::formats::error::ParseError;
use crate::formats::input::LineParser;
use crate::formats::json::{parse_line, AnyLabel, Entries, Id, Prob};
use crate::ids::{ClaimId, DocId};
use crate::label::{Label, Probability};
use serde::Deserialize;
use std::collections::VecDeque;

#[derive(Deserialize)]
struct Line {
    id: Id<ClaimId>,
    evidence: Entries<Id<DocId>, Pair>,
}

#[derive(Deserialize)]
struct Pair {
    label: AnyLabel,
    #[serde(default)]
    sentences: Option<Vec<u32>>,
    #[serde(default)]
    label_probs: Option<Vec<Prob>>,
}

/// Parses leaderboard lines with `label_probs` in the given order.
pub(crate) struct LeaderboardParser {
    pub(crate) order: LabelOrder,
}

/// The three probabilities, by label.
struct Probabilities {
    support: Probability,
    contradict: Probability,
    nei: Probability,
}

impl LeaderboardParser {
    fn probabilities(&self, probs: &[Prob]) -> Result<Probabilities, String> {
        let [a, b, c] = probs else {
            return Err(format!(
                "expected 3 probabilities in the order {}, got {}",
                self.order,
                probs.len()
            ));
        };
        // A label order names each label exactly once, so every field is set by the loop.
        let mut by_label = Probabilities {
            support: a.0,
            contradict: a.0,
            nei: a.0,
        };
        for (label, p) in self.order.labels().into_iter().zip([a, b, c]) {
            match label {
                Label::Support => by_label.support = p.0,
                Label::Contradict => by_label.contradict = p.0,
                Label::Nei => by_label.nei = p.0,
            }
        }
        Ok(by_label)
    }
}

impl LineParser for LeaderboardParser {
    type Record = RunRecord;

    fn parse_line(
        &mut self,
        file: &str,
        line: usize,
        text: &str,
        out: &mut VecDeque<RunRecord>,
    ) -> Result<(), ParseError> {
        let l: Line = parse_line(file, line, text)?;
        for (position, (doc_id, pair)) in l.evidence.0.into_iter().enumerate() {
            let probs = match pair.label_probs.as_deref().map(|p| self.probabilities(p)) {
                None => None,
                Some(Ok(probs)) => Some(probs),
                Some(Err(message)) => {
                    let field = format!("evidence.{}.label_probs", doc_id.0);
                    return Err(ParseError::new(file, line, Some(&field), message));
                }
            };
            out.push_back(RunRecord {
                system: None,
                claim_id: l.id.0.clone(),
                doc_id: doc_id.0,
                label: Some(pair.label.0),
                p_support: probs.as_ref().map(|p| p.support),
                p_contradict: probs.as_ref().map(|p| p.contradict),
                p_nei: probs.as_ref().map(|p| p.nei),
                score: None,
                rank: Some(super::position_rank(position)),
                sentences: pair.sentences,
            });
        }
        Ok(())
    }
}
