//! A small hand-made release input, and helpers.

use crate::annotation::{Provenance, Specificity};
use crate::formats::{decompressed, Document, Input, RunRecord};
use crate::ids::{ClaimId, DocId};
use crate::label::{Label, Probability};
use crate::pool::{Role, Strategy};
use crate::release::*;
use std::collections::BTreeMap;
use std::num::NonZeroU32;

pub fn c(id: &str) -> ClaimId {
    ClaimId::parse(id).unwrap()
}

pub fn d(id: &str) -> DocId {
    DocId::parse(id).unwrap()
}

pub fn p(x: f64) -> Option<Probability> {
    Some(Probability::new(x).unwrap())
}

pub fn input_of(bytes: &[u8]) -> Input {
    decompressed(std::io::Cursor::new(bytes.to_vec())).unwrap()
}

pub fn text(files: &ReleaseFiles, path: &str) -> String {
    String::from_utf8(files.get(path).unwrap().to_vec()).unwrap()
}

fn doc(id: &str, sentences: usize, extra: serde_json::Value) -> Document {
    Document {
        doc_id: d(id),
        title: format!("Title {id}"),
        sentences: (0..sentences).map(|s| format!("Sentence {s}.")).collect(),
        extra: extra.as_object().unwrap().clone(),
    }
}

fn label(
    claim: &str,
    doc: &str,
    label: Label,
    provenance: Provenance,
    sentences: Vec<Vec<u32>>,
    ranks: Option<&[(&str, u32)]>,
) -> FinalLabel {
    FinalLabel {
        claim: c(claim),
        doc: d(doc),
        label,
        provenance,
        sentences,
        model_ranks: ranks.map(|r| r.iter().map(|(s, k)| (s.to_string(), *k)).collect()),
    }
}

pub fn record(
    claim: &str,
    doc: &str,
    label: Option<Label>,
    probs: Option<(f64, f64)>,
) -> RunRecord {
    RunRecord {
        label,
        p_support: probs.and_then(|(s, _)| p(s)),
        p_contradict: probs.and_then(|(_, c)| p(c)),
        ..RunRecord::bare(c(claim), d(doc))
    }
}

/// Claims 1, 2, 3 (no evidence) and 10; documents 7, 20, 100 and ABC; every kind of label,
/// provenance, rationale and rank; two unjudged pairs; two specificity notes; two runs.
pub fn small_input() -> ReleaseInput {
    use Label::*;
    use Provenance::*;
    let claims = [
        ("1", "Aspirin reduces fever."),
        ("2", "Statins cause  muscle pain."),
        ("3", "A claim without evidence."),
        ("10", "Vitamin D \"prevents\" colds."),
    ];
    ReleaseInput {
        project: "Demo project".to_owned(),
        number: NonZeroU32::new(2).unwrap(),
        date: ReleaseDate::parse("2026-03-01").unwrap(),
        partial: true,
        pool: Some(PoolSettings {
            strategy: Strategy::Confidence,
            depth: NonZeroU32::new(50).unwrap(),
        }),
        systems: vec![
            SystemInfo {
                name: "b/c".to_owned(),
                role: Role::EvaluationOnly,
                description: String::new(),
                negative_sampling_ratio: None,
            },
            SystemInfo {
                name: "a".to_owned(),
                role: Role::Pooled,
                description: "First system,\non two lines".to_owned(),
                negative_sampling_ratio: Some(0.25),
            },
        ],
        claims: claims
            .iter()
            .map(|(id, text)| ClaimText {
                id: c(id),
                text: text.to_string(),
            })
            .collect(),
        final_labels: vec![
            label("10", "ABC", Contradict, Import, vec![vec![0]], None),
            label(
                "1",
                "100",
                Support,
                Citation,
                vec![vec![2, 0], vec![0]],
                Some(&[("a", 3)]),
            ),
            label(
                "1",
                "20",
                Nei,
                Pooling,
                vec![],
                Some(&[("a", 1), ("b/c", 2)]),
            ),
            label(
                "2",
                "20",
                Support,
                Pooling,
                vec![vec![1]],
                Some(&[("b/c", 5), ("a", 7)]),
            ),
            label("1", "7", Contradict, Pooling, vec![], Some(&[("a", 2)])),
        ],
        unjudged_pooled: vec![(c("2"), d("100")), (c("10"), d("20"))],
        specificity: vec![
            SpecificityNote {
                claim: c("2"),
                doc: d("20"),
                relation: Some(Specificity::EvidenceMoreSpecific),
                revised_claim: Some("Statins cause muscle pain in mice.".to_owned()),
            },
            SpecificityNote {
                claim: c("1"),
                doc: d("100"),
                relation: Some(Specificity::Matches),
                revised_claim: None,
            },
        ],
        documents: vec![
            doc("100", 3, serde_json::json!({})),
            doc(
                "ABC",
                1,
                serde_json::json!({"structured": false, "metadata": {"year": 2001, "a": 1}}),
            ),
            doc("7", 2, serde_json::json!({})),
            doc("20", 2, serde_json::json!({})),
        ],
        runs: vec![
            (
                "a".to_owned(),
                vec![
                    record("2", "20", Some(Support), Some((0.75, 0.125))),
                    record("1", "100", Some(Support), Some((0.5, 0.25))),
                    record("1", "7", Some(Nei), None),
                ],
            ),
            ("b/c".to_owned(), vec![record("10", "ABC", None, None)]),
        ],
        model_labels: Vec::new(),
        recall: Default::default(),
    }
}

/// Every list of `input` reversed (the release must not depend on their order).
pub fn reversed(input: &ReleaseInput) -> ReleaseInput {
    let mut r = input.clone();
    r.systems.reverse();
    r.claims.reverse();
    r.final_labels.reverse();
    r.unjudged_pooled.reverse();
    r.specificity.reverse();
    r.documents.reverse();
    r.runs.reverse();
    for (_, records) in &mut r.runs {
        records.reverse();
    }
    r
}

/// The rank maps of the fixture, for tests that check them.
pub fn ranks_of(input: &ReleaseInput, claim: &str, doc: &str) -> Option<BTreeMap<String, u32>> {
    input
        .final_labels
        .iter()
        .find(|l| l.claim.as_str() == claim && l.doc.as_str() == doc)
        .and_then(|l| l.model_ranks.clone())
}
