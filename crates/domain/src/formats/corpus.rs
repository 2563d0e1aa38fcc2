//! Corpora of abstracts: SciFact / SciFact-Open `corpus.jsonl` (abstracts as sentence lists) and
//! BEIR `corpus.jsonl` (abstracts as one text, split here with [`split_sentences`]).

use super::error::{FormatError, ParseError};
use super::input::{first_line, Input, LineParser, LineRecords, LineSource, Located};
use super::json::{json_error, Id};
use super::sentences::split_sentences;
use crate::ids::DocId;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::fmt;
use std::path::Path;

/// One abstract of a corpus.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub doc_id: DocId,
    /// Empty when the file has none.
    pub title: String,
    /// The abstract's sentences, in order (sentence indices of evidence point into this).
    pub sentences: Vec<String>,
    /// Every other field of the line, in file order (`structured`, `metadata`, ...).
    pub extra: Map<String, Value>,
}

/// The corpus formats claimpool reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CorpusFormat {
    /// `{"doc_id": int or string, "title", "abstract": [sentences], ...}`.
    SciFact,
    /// `{"_id", "title", "text", "metadata"?}`; the text is split into sentences.
    Beir,
}

impl CorpusFormat {
    /// The keys holding the id and the abstract.
    fn keys(self) -> (&'static str, &'static str) {
        match self {
            CorpusFormat::SciFact => ("doc_id", "abstract"),
            CorpusFormat::Beir => ("_id", "text"),
        }
    }

    /// Tells the format from a corpus file's first line.
    pub fn detect_line(line: &str) -> Result<CorpusFormat, String> {
        let object: Map<String, Value> =
            serde_json::from_str(line).map_err(|e| format!("not a JSON object: {e}"))?;
        [CorpusFormat::SciFact, CorpusFormat::Beir]
            .into_iter()
            .find(|format| {
                let (id, text) = format.keys();
                object.contains_key(id) && object.contains_key(text)
            })
            .ok_or_else(|| {
                "neither doc_id and abstract (SciFact) nor _id and text (BEIR)".to_owned()
            })
    }

    /// Tells the format of a corpus file (gzip or not) from its first line.
    pub fn detect_file(path: &Path) -> Result<CorpusFormat, FormatError> {
        let undetected = |reason: String| FormatError::Undetected {
            file: path.display().to_string(),
            reason,
        };
        let line = first_line(path)?.ok_or_else(|| undetected("the file is empty".to_owned()))?;
        CorpusFormat::detect_line(&line).map_err(undetected)
    }
}

/// Reads one document object, keeping unknown fields in `extra` (no intermediate `Value` for
/// the known ones, so errors keep their position).
struct DocumentSeed(CorpusFormat);

impl<'de> DeserializeSeed<'de> for DocumentSeed {
    type Value = Document;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Document, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DocumentSeed {
    type Value = Document;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a document object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Document, A::Error> {
        let (id_key, text_key) = self.0.keys();
        let mut doc_id = None;
        let mut title = None;
        let mut sentences = None;
        let mut extra = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == id_key {
                doc_id = Some(map.next_value::<Id<DocId>>()?.0);
            } else if key == "title" {
                title = map.next_value::<Option<String>>()?;
            } else if key == text_key {
                sentences = Some(match self.0 {
                    CorpusFormat::SciFact => map.next_value::<Vec<String>>()?,
                    CorpusFormat::Beir => split_sentences(&map.next_value::<String>()?),
                });
            } else {
                extra.insert(key, map.next_value::<Value>()?);
            }
        }
        Ok(Document {
            doc_id: doc_id.ok_or_else(|| de::Error::missing_field(id_key))?,
            title: title.unwrap_or_default(),
            sentences: sentences.ok_or_else(|| de::Error::missing_field(text_key))?,
            extra,
        })
    }
}

struct CorpusParser(CorpusFormat);

impl LineParser for CorpusParser {
    type Record = Document;

    fn parse_line(
        &mut self,
        file: &str,
        line: usize,
        text: &str,
        out: &mut VecDeque<Document>,
    ) -> Result<(), ParseError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let doc = DocumentSeed(self.0)
            .deserialize(&mut de)
            .and_then(|doc| de.end().map(|()| doc))
            .map_err(|e| json_error(file, line, text, &e))?;
        out.push_back(doc);
        Ok(())
    }
}

/// A streaming reader of a corpus file: one [`Document`] per line.
pub struct CorpusReader(LineRecords<CorpusParser>);

impl CorpusReader {
    /// Opens `path` (gzip or not) in `format`.
    pub fn open(path: &Path, format: CorpusFormat) -> Result<CorpusReader, FormatError> {
        Ok(CorpusReader(LineRecords::new(
            LineSource::open(path)?,
            CorpusParser(format),
        )))
    }

    /// Reads an opened input, named `file_name` in errors.
    pub fn from_input(input: Input, file_name: impl Into<String>, format: CorpusFormat) -> Self {
        CorpusReader(LineRecords::new(
            LineSource::new(input, file_name.into()),
            CorpusParser(format),
        ))
    }
}

impl Iterator for CorpusReader {
    type Item = Result<Located<Document>, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::input::decompressed;

    fn read(text: &str, format: CorpusFormat) -> Vec<Result<Located<Document>, ParseError>> {
        let input = decompressed(std::io::Cursor::new(text.as_bytes().to_vec())).unwrap();
        CorpusReader::from_input(input, "corpus.jsonl", format).collect()
    }

    #[test]
    fn reads_scifact_documents_keeping_other_fields_in_order() {
        let text = "{\"doc_id\": 4983, \"title\": \"T\", \"abstract\": [\"A b.\", \"C d.\"], \
                    \"structured\": false, \"metadata\": {\"year\": 2001}}\n\
                    {\"doc_id\": \"MED-1\", \"abstract\": []}\n";
        let docs = read(text, CorpusFormat::SciFact);
        let first = &docs[0].as_ref().unwrap();
        assert_eq!(first.line, 1);
        assert_eq!(first.record.doc_id.as_str(), "4983");
        assert_eq!(first.record.sentences, vec!["A b.", "C d."]);
        let keys: Vec<&str> = first.record.extra.keys().map(String::as_str).collect();
        assert_eq!(keys, vec!["structured", "metadata"]);
        let second = &docs[1].as_ref().unwrap().record;
        assert_eq!(
            (second.doc_id.as_str(), second.title.as_str()),
            ("MED-1", "")
        );
    }

    #[test]
    fn reads_beir_documents_splitting_the_text() {
        let text = r#"{"_id": "MED-10", "title": "Statins", "text": "We did it. It worked (p < 0.05).", "metadata": {"url": "x"}}"#;
        let docs = read(text, CorpusFormat::Beir);
        let doc = &docs[0].as_ref().unwrap().record;
        assert_eq!(doc.doc_id.as_str(), "MED-10");
        assert_eq!(doc.sentences, vec!["We did it.", "It worked (p < 0.05)."]);
        assert_eq!(
            doc.extra.get("metadata"),
            Some(&serde_json::json!({"url": "x"}))
        );
    }

    #[test]
    fn bad_lines_name_file_line_and_field() {
        let text = "{\"doc_id\": 1, \"abstract\": [\"ok\"]}\n\
                    {\"doc_id\": \"a b\", \"abstract\": []}\n\
                    {\"doc_id\": 3, \"abstract\": \"one string\"}\n\
                    {\"doc_id\": 4}\n\
                    {\"abstract\": [], \"doc_id\": 5, \"title\": 7}\n\
                    {\"doc_id\": 6, \"abstract\": []} trailing\n";
        let got: Vec<(usize, Option<String>)> = read(text, CorpusFormat::SciFact)
            .into_iter()
            .skip(1)
            .map(|r| {
                let e = r.unwrap_err();
                assert!(e
                    .to_string()
                    .starts_with(&format!("corpus.jsonl:{}:", e.line)));
                (e.line, e.field)
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (2, Some("doc_id".to_owned())),
                (3, Some("abstract".to_owned())),
                (4, Some("abstract".to_owned())),
                (5, Some("title".to_owned())),
                (6, None),
            ]
        );
    }

    #[test]
    fn detects_the_format_from_the_first_line() {
        assert_eq!(
            CorpusFormat::detect_line(r#"{"doc_id": 1, "title": "", "abstract": []}"#),
            Ok(CorpusFormat::SciFact)
        );
        assert_eq!(
            CorpusFormat::detect_line(r#"{"_id": "1", "title": "", "text": ""}"#),
            Ok(CorpusFormat::Beir)
        );
        assert!(CorpusFormat::detect_line(r#"{"id": 1}"#).is_err());
        assert!(CorpusFormat::detect_line("not json").is_err());
    }
}
