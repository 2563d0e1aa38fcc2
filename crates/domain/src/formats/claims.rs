//! Claims files: SciFact `claims_*.jsonl` (evidence as lists of labelled sentence sets) and
//! SciFact-Open `claims.jsonl` (one evidence object per document, with provenance and model
//! ranks). The test split has only `id` and `claim`; the "retrieved" variant's `doc_ids` is
//! ignored here (read it as a run with `RunFormat::RetrievedClaims`).

use super::error::{FormatError, ParseError};
use super::input::{Input, LineParser, LineRecords, LineSource, Located};
use super::json::{parse_line, AnyLabel, Entries, Id};
use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::path::Path;

/// A claim and its gold evidence (empty when the file gives none).
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub id: ClaimId,
    pub text: String,
    /// The documents the claim's source sentence cited (SciFact train and dev only).
    pub cited_doc_ids: Option<Vec<DocId>>,
    /// One entry per evidence document, in file order.
    pub evidence: Vec<Evidence>,
}

/// A document that is evidence for a claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    pub doc_id: DocId,
    /// SUPPORT or CONTRADICT (never NEI).
    pub label: Label,
    /// Rationales: SciFact's evidence sets, or SciFact-Open's one flat list (none when empty).
    pub sentence_sets: Vec<Vec<u32>>,
    /// SciFact-Open only.
    pub provenance: Option<EvidenceProvenance>,
    /// SciFact-Open pooled evidence: the rank each system gave the pair.
    pub model_ranks: Option<BTreeMap<String, u32>>,
}

/// Where SciFact-Open evidence came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EvidenceProvenance {
    /// From the original SciFact, found through citation links.
    Citation,
    /// Found by pooling system predictions.
    Pooling,
}

#[derive(Deserialize)]
struct Line {
    id: Id<ClaimId>,
    claim: String,
    #[serde(default)]
    evidence: Option<Entries<Id<DocId>, RawEvidence>>,
    #[serde(default)]
    cited_doc_ids: Option<Vec<Id<DocId>>>,
}

/// SciFact's list of sets, or SciFact-Open's single object.
enum RawEvidence {
    Sets(Vec<RawSet>),
    Open(RawOpen),
}

#[derive(Deserialize)]
struct RawSet {
    sentences: Vec<u32>,
    label: AnyLabel,
}

#[derive(Deserialize)]
struct RawOpen {
    #[serde(default)]
    provenance: Option<EvidenceProvenance>,
    label: AnyLabel,
    #[serde(default)]
    sentences: SentenceSets,
    #[serde(default)]
    model_ranks: Option<Entries<String, u32>>,
}

struct RawEvidenceVisitor;

impl<'de> Visitor<'de> for RawEvidenceVisitor {
    type Value = RawEvidence;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of evidence sets or an evidence object")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<RawEvidence, A::Error> {
        Vec::deserialize(SeqAccessDeserializer::new(seq)).map(RawEvidence::Sets)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawEvidence, A::Error> {
        RawOpen::deserialize(MapAccessDeserializer::new(map)).map(RawEvidence::Open)
    }
}

impl<'de> Deserialize<'de> for RawEvidence {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawEvidenceVisitor)
    }
}

/// SciFact-Open `sentences`: a flat list of indices (one set, none if empty) or a list of lists.
#[derive(Default)]
struct SentenceSets(Vec<Vec<u32>>);

/// One element of a `sentences` list.
enum IndexOrSet {
    Index(u32),
    Set(Vec<u32>),
}

struct IndexOrSetVisitor;

impl<'de> Visitor<'de> for IndexOrSetVisitor {
    type Value = IndexOrSet;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sentence index or a list of sentence indices")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<IndexOrSet, E> {
        u32::try_from(v)
            .map(IndexOrSet::Index)
            .map_err(|_| E::custom(format_args!("sentence index {v} is too large")))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<IndexOrSet, A::Error> {
        Vec::deserialize(SeqAccessDeserializer::new(seq)).map(IndexOrSet::Set)
    }
}

impl<'de> Deserialize<'de> for IndexOrSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IndexOrSetVisitor)
    }
}

struct SentenceSetsVisitor;

impl<'de> Visitor<'de> for SentenceSetsVisitor {
    type Value = SentenceSets;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of sentence indices or a list of such lists")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SentenceSets, A::Error> {
        let mut flat = Vec::new();
        let mut sets = Vec::new();
        while let Some(item) = seq.next_element::<IndexOrSet>()? {
            match item {
                IndexOrSet::Index(i) => flat.push(i),
                IndexOrSet::Set(set) => sets.push(set),
            }
        }
        match (flat.is_empty(), sets.is_empty()) {
            (true, _) => Ok(SentenceSets(sets)),
            (false, true) => Ok(SentenceSets(vec![flat])),
            (false, false) => Err(de::Error::custom(
                "mixes sentence indices and lists of sentence indices",
            )),
        }
    }
}

impl<'de> Deserialize<'de> for SentenceSets {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(SentenceSetsVisitor)
    }
}

/// Why one evidence entry is wrong, and in which of its fields.
type EvidenceError = (Option<&'static str>, String);

fn evidence_of(doc_id: DocId, raw: RawEvidence) -> Result<Evidence, EvidenceError> {
    let (label, sentence_sets, provenance, model_ranks) = match raw {
        RawEvidence::Sets(sets) => {
            let Some(first) = sets.first() else {
                return Err((None, "has no evidence set".to_owned()));
            };
            let label = first.label.0;
            if let Some(other) = sets.iter().find(|s| s.label.0 != label) {
                return Err((
                    None,
                    format!(
                        "its evidence sets carry different labels ({label} and {})",
                        other.label.0
                    ),
                ));
            }
            (
                label,
                sets.into_iter().map(|s| s.sentences).collect(),
                None,
                None,
            )
        }
        RawEvidence::Open(open) => {
            let ranks = match open.model_ranks {
                None => None,
                Some(entries) => {
                    let mut ranks = BTreeMap::new();
                    for (system, rank) in entries.0 {
                        if ranks.insert(system.clone(), rank).is_some() {
                            return Err((
                                Some("model_ranks"),
                                format!("system {system:?} is listed twice"),
                            ));
                        }
                    }
                    Some(ranks)
                }
            };
            (open.label.0, open.sentences.0, open.provenance, ranks)
        }
    };
    if !label.is_evidence() {
        return Err((Some("label"), format!("{label} is not an evidence label")));
    }
    Ok(Evidence {
        doc_id,
        label,
        sentence_sets,
        provenance,
        model_ranks,
    })
}

struct ClaimsParser;

impl LineParser for ClaimsParser {
    type Record = Claim;

    fn parse_line(
        &mut self,
        file: &str,
        line: usize,
        text: &str,
        out: &mut VecDeque<Claim>,
    ) -> Result<(), ParseError> {
        let l: Line = parse_line(file, line, text)?;
        if l.claim.trim().is_empty() {
            return Err(ParseError::new(file, line, Some("claim"), "is empty"));
        }
        let entries = l.evidence.unwrap_or_default().0;
        let mut evidence: Vec<Evidence> = Vec::with_capacity(entries.len());
        for (doc_id, raw) in entries {
            let doc_id = doc_id.0;
            let err = |(sub, message): EvidenceError| {
                let field = match sub {
                    Some(sub) => format!("evidence.{doc_id}.{sub}"),
                    None => format!("evidence.{doc_id}"),
                };
                ParseError::new(file, line, Some(&field), message)
            };
            if evidence.iter().any(|e| e.doc_id == doc_id) {
                return Err(err((None, "the document is listed twice".to_owned())));
            }
            let item = evidence_of(doc_id.clone(), raw).map_err(err)?;
            evidence.push(item);
        }
        out.push_back(Claim {
            id: l.id.0,
            text: l.claim,
            cited_doc_ids: l
                .cited_doc_ids
                .map(|ids| ids.into_iter().map(|id| id.0).collect()),
            evidence,
        });
        Ok(())
    }
}

/// A streaming reader of a claims file: one [`Claim`] per line.
pub struct ClaimsReader(LineRecords<ClaimsParser>);

impl ClaimsReader {
    /// Opens `path` (gzip or not).
    pub fn open(path: &Path) -> Result<ClaimsReader, FormatError> {
        Ok(ClaimsReader(LineRecords::new(
            LineSource::open(path)?,
            ClaimsParser,
        )))
    }

    /// Reads an opened input, named `file_name` in errors.
    pub fn from_input(input: Input, file_name: impl Into<String>) -> Self {
        ClaimsReader(LineRecords::new(
            LineSource::new(input, file_name.into()),
            ClaimsParser,
        ))
    }
}

impl Iterator for ClaimsReader {
    type Item = Result<Located<Claim>, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::input::decompressed;

    fn read(text: &str) -> Vec<Result<Located<Claim>, ParseError>> {
        let input = decompressed(std::io::Cursor::new(text.as_bytes().to_vec())).unwrap();
        ClaimsReader::from_input(input, "claims.jsonl").collect()
    }

    fn one(text: &str) -> Claim {
        read(text).remove(0).unwrap().record
    }

    fn err(text: &str) -> ParseError {
        read(text).remove(0).unwrap_err()
    }

    #[test]
    fn reads_scifact_evidence_sets() {
        let c = one(
            r#"{"id": 3, "claim": "C.", "evidence": {"14717500": [{"sentences": [2, 5], "label": "SUPPORT"}, {"sentences": [7], "label": "SUPPORT"}]}, "cited_doc_ids": [14717500]}"#,
        );
        assert_eq!(c.id.as_str(), "3");
        assert_eq!(c.text, "C.");
        assert_eq!(
            c.cited_doc_ids,
            Some(vec![DocId::parse("14717500").unwrap()])
        );
        assert_eq!(c.evidence.len(), 1);
        let e = &c.evidence[0];
        assert_eq!(e.label, Label::Support);
        assert_eq!(e.sentence_sets, vec![vec![2, 5], vec![7]]);
        assert_eq!((e.provenance, e.model_ranks.as_ref()), (None, None));
    }

    #[test]
    fn reads_test_split_and_retrieved_variant() {
        let c = one(r#"{"id": 7, "claim": "Claim."}"#);
        assert!(c.evidence.is_empty() && c.cited_doc_ids.is_none());
        let c = one(
            r#"{"id": 1, "claim": "C.", "evidence": {}, "cited_doc_ids": [5], "doc_ids": ["9", "5"]}"#,
        );
        assert!(c.evidence.is_empty());
        assert_eq!(c.cited_doc_ids.unwrap().len(), 1);
    }

    #[test]
    fn reads_scifact_open_evidence() {
        let c = one(
            r#"{"id": 170, "claim": "B.", "evidence": {"5824985": {"provenance": "citation", "label": "CONTRADICT", "sentences": [10, 15], "model_ranks": null}, "7854739": {"provenance": "pooling", "label": "CONTRADICT", "sentences": [[2], [5, 6]], "model_ranks": {"vert5erini": 120, "multivers_10": 4556}}, "9": {"provenance": "pooling", "label": "SUPPORT", "sentences": []}}}"#,
        );
        assert_eq!(c.evidence.len(), 3);
        assert_eq!(c.evidence[0].provenance, Some(EvidenceProvenance::Citation));
        assert_eq!(c.evidence[0].sentence_sets, vec![vec![10, 15]]);
        assert_eq!(c.evidence[0].model_ranks, None);
        assert_eq!(c.evidence[1].sentence_sets, vec![vec![2], vec![5, 6]]);
        let ranks = c.evidence[1].model_ranks.as_ref().unwrap();
        assert_eq!(ranks.get("vert5erini"), Some(&120));
        assert_eq!(ranks.get("multivers_10"), Some(&4556));
        assert!(c.evidence[2].sentence_sets.is_empty());
        assert_eq!(c.evidence[2].label, Label::Support);
    }

    #[test]
    fn bad_claims_name_file_line_and_field() {
        let cases: &[(&str, &str)] = &[
            (
                r#"{"id": 1, "claim": "C", "evidence": {"5": [{"sentences": [1], "label": "SUPPORT"}, {"sentences": [2], "label": "CONTRADICT"}]}}"#,
                "evidence.5",
            ),
            (
                r#"{"id": 1, "claim": "C", "evidence": {"5": []}}"#,
                "evidence.5",
            ),
            (
                r#"{"id": 1, "claim": "C", "evidence": {"5": {"label": "NEI", "sentences": []}}}"#,
                "evidence.5.label",
            ),
            (
                r#"{"id": 1, "claim": "C", "evidence": {"5": {"label": "SUPPORT", "sentences": [1, [2]]}}}"#,
                "evidence.5.sentences",
            ),
            (
                r#"{"id": 1, "claim": "C", "evidence": {"5": {"label": "SUPPORT", "provenance": "guess"}}}"#,
                "evidence.5.provenance",
            ),
            (
                r#"{"id": 1, "claim": "C", "evidence": {"5": {"label": "SUPPORT", "model_ranks": {"a": 1, "a": 2}}}}"#,
                "evidence.5.model_ranks",
            ),
            (
                r#"{"id": 1, "claim": "C", "evidence": {"5": [{"sentences": [1], "label": "SUPPORTED!"}]}}"#,
                "evidence.5.label",
            ),
            (
                r#"{"id": 1, "claim": "C", "evidence": {"5": {"label": "SUPPORT"}, "5": {"label": "SUPPORT"}}}"#,
                "evidence.5",
            ),
            (r#"{"id": 1, "claim": "  "}"#, "claim"),
            (r#"{"id": 1}"#, "claim"),
            (
                r#"{"id": 1, "claim": "C", "cited_doc_ids": [1.5]}"#,
                "cited_doc_ids",
            ),
        ];
        for (text, field) in cases {
            let e = err(&format!("\n{text}"));
            assert_eq!(e.line, 2, "{e}");
            assert_eq!(e.field.as_deref(), Some(*field), "{text}: {e}");
            assert!(e.to_string().starts_with("claims.jsonl:2: field"), "{e}");
        }
    }
}
