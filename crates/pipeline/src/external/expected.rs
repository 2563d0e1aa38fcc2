//! The pairs sent to the command and not yet answered, and the checks each answer passes beyond
//! the canonical run reader's (which already checks JSON, ids, labels, probabilities in [0, 1]
//! and repeated pairs).

use domain::formats::{Located, ParseError, RunRecord};
use domain::ids::{ClaimId, DocId};
use std::collections::HashMap;

/// What was sent about one pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sent {
    rank: u32,
    sentences: usize,
}

/// The open pairs, and how many of each sent claim's pairs are still open.
#[derive(Debug, Default)]
pub(crate) struct Expected {
    pairs: HashMap<(ClaimId, DocId), Sent>,
    open: HashMap<ClaimId, usize>,
    /// Every claim sent so far (to tell an unknown claim from an unknown doc, and repeats).
    sent_claims: HashMap<ClaimId, ()>,
}

/// What an accepted answer completed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Answered {
    /// The claim still has open pairs.
    Pair,
    /// The claim's last open pair.
    Claim,
}

impl Expected {
    /// Records a claim about to be sent with its candidates (doc id and number of sentences,
    /// in rank order). Returns false if the claim was sent before.
    pub(crate) fn send(
        &mut self,
        claim_id: &ClaimId,
        candidates: impl Iterator<Item = (DocId, u32, usize)>,
    ) -> bool {
        if self.sent_claims.insert(claim_id.clone(), ()).is_some() {
            return false;
        }
        let mut count = 0;
        for (doc_id, rank, sentences) in candidates {
            self.pairs
                .insert((claim_id.clone(), doc_id), Sent { rank, sentences });
            count += 1;
        }
        if count > 0 {
            self.open.insert(claim_id.clone(), count);
        }
        true
    }

    /// Checks one answer and takes its pair off the open list. The returned record has the
    /// retrieval rank that was sent; rank, score and system in the answer are not used.
    pub(crate) fn answer(
        &mut self,
        file: &str,
        at: Located<RunRecord>,
    ) -> Result<(RunRecord, Answered), ParseError> {
        let line = at.line;
        let error =
            |field: &str, message: String| ParseError::new(file, line, Some(field), message);
        let mut record = at.record;
        if record.label.is_none() {
            return Err(error("predicted_label", "missing".into()));
        }
        if record.p_support.is_none() {
            return Err(error("p_support", "missing".into()));
        }
        if record.p_contradict.is_none() {
            return Err(error("p_contradict", "missing".into()));
        }
        let key = (record.claim_id.clone(), record.doc_id.clone());
        let Some(&sent) = self.pairs.get(&key) else {
            return Err(if self.sent_claims.contains_key(&record.claim_id) {
                error(
                    "doc_id",
                    format!(
                        "doc {} was not a candidate sent for claim {}",
                        record.doc_id, record.claim_id
                    ),
                )
            } else {
                error(
                    "claim_id",
                    format!("claim {} was not sent to the command", record.claim_id),
                )
            });
        };
        if let Some(past) = record
            .sentences
            .iter()
            .flatten()
            .find(|&&i| i as usize >= sent.sentences)
        {
            return Err(error(
                "sentences",
                format!(
                    "sentence {past} does not exist: doc {} has {} sentences (numbered from 0)",
                    record.doc_id, sent.sentences
                ),
            ));
        }
        self.pairs.remove(&key);
        record.rank = Some(sent.rank);
        record.score = None;
        record.system = None;
        let answered = match self.open.get_mut(&record.claim_id) {
            Some(open) if *open > 1 => {
                *open -= 1;
                Answered::Pair
            }
            _ => {
                self.open.remove(&record.claim_id);
                Answered::Claim
            }
        };
        Ok((record, answered))
    }

    /// How many sent pairs have no answer, and a few of them (claim, doc), smallest first.
    pub(crate) fn missing(&self, examples: usize) -> (usize, Vec<(ClaimId, DocId)>) {
        let mut some: Vec<(ClaimId, DocId)> = self.pairs.keys().cloned().collect();
        some.sort();
        some.truncate(examples);
        (self.pairs.len(), some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::label::{Label, Probability};

    fn claim(id: &str) -> ClaimId {
        ClaimId::parse(id).unwrap()
    }
    fn doc(id: &str) -> DocId {
        DocId::parse(id).unwrap()
    }
    fn answer(claim_id: &str, doc_id: &str, line: usize) -> Located<RunRecord> {
        let p = |x| Some(Probability::new(x).unwrap());
        Located {
            line,
            record: RunRecord {
                label: Some(Label::Support),
                p_support: p(0.7),
                p_contradict: p(0.1),
                rank: Some(40),
                score: Some(3.0),
                sentences: Some(vec![1]),
                ..RunRecord::bare(claim(claim_id), doc(doc_id))
            },
        }
    }

    #[test]
    fn answers_close_pairs_then_claims_and_take_the_sent_rank() {
        let mut expected = Expected::default();
        assert!(expected.send(
            &claim("1"),
            [(doc("a"), 1, 2), (doc("b"), 2, 3)].into_iter()
        ));
        assert!(
            !expected.send(&claim("1"), std::iter::empty()),
            "a claim is sent once"
        );
        let (record, answered) = expected.answer("out", answer("1", "b", 1)).unwrap();
        assert_eq!(
            (record.rank, record.score, answered),
            (Some(2), None, Answered::Pair)
        );
        assert_eq!(expected.missing(5), (1, vec![(claim("1"), doc("a"))]));
        let (_, answered) = expected.answer("out", answer("1", "a", 2)).unwrap();
        assert_eq!(answered, Answered::Claim);
        assert_eq!(expected.missing(5), (0, vec![]));
    }

    #[test]
    fn unknown_pairs_missing_fields_and_bad_sentences_name_line_and_field() {
        let mut expected = Expected::default();
        expected.send(&claim("1"), [(doc("a"), 1, 1)].into_iter());
        let err = expected.answer("out", answer("1", "zz", 3)).unwrap_err();
        assert_eq!((err.line, err.field.as_deref()), (3, Some("doc_id")));
        let err = expected.answer("out", answer("9", "a", 4)).unwrap_err();
        assert_eq!((err.line, err.field.as_deref()), (4, Some("claim_id")));
        let mut no_label = answer("1", "a", 5);
        no_label.record.label = None;
        let err = expected.answer("out", no_label).unwrap_err();
        assert_eq!(err.to_string(), "out:5: field \"predicted_label\": missing");
        let mut no_p = answer("1", "a", 6);
        no_p.record.p_contradict = None;
        let err = expected.answer("out", no_p).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("p_contradict"));
        // Sentence 1 of a one-sentence abstract does not exist.
        let err = expected.answer("out", answer("1", "a", 7)).unwrap_err();
        assert_eq!((err.line, err.field.as_deref()), (7, Some("sentences")));
        assert_eq!(
            expected.missing(5).0,
            1,
            "a refused answer leaves its pair open"
        );
    }
}
