//! Typed pieces for parsing JSON lines straight into records, and turning serde errors into
//! [`ParseError`]s that name the field.
//!
//! Values are checked while they are deserialized (a probability outside [0, 1] or an unknown
//! label fails right there); the failing field is then found from the error's byte column by
//! [`field_path_at`], so the hot path never builds a `serde_json::Value`.

use super::error::ParseError;
use crate::ids::IdError;
use crate::label::{Label, Probability};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::marker::PhantomData;

/// An external id (`ClaimId` or `DocId`) written as a JSON integer or string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Id<T>(pub T);

struct IdVisitor<T>(PhantomData<T>);

fn make_id<T: TryFrom<String, Error = IdError>, E: de::Error>(text: String) -> Result<Id<T>, E> {
    T::try_from(text)
        .map(Id)
        .map_err(|err| E::custom(format_args!("id {err}")))
}

impl<'de, T: TryFrom<String, Error = IdError>> Visitor<'de> for IdVisitor<T> {
    type Value = Id<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer or a string id")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        make_id(v.to_string())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        make_id(v.to_string())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        make_id(v.to_owned())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        make_id(v)
    }
}

impl<'de, T: TryFrom<String, Error = IdError>> Deserialize<'de> for Id<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IdVisitor(PhantomData))
    }
}

/// A verdict in any spelling [`Label::parse`] knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AnyLabel(pub Label);

struct LabelVisitor;

impl Visitor<'_> for LabelVisitor {
    type Value = AnyLabel;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a label such as SUPPORT, CONTRADICT or NEI")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<AnyLabel, E> {
        // The canonical spellings without the allocations of `Label::parse`.
        match v {
            "SUPPORT" => Ok(AnyLabel(Label::Support)),
            "CONTRADICT" => Ok(AnyLabel(Label::Contradict)),
            "NEI" => Ok(AnyLabel(Label::Nei)),
            _ => Label::parse(v).map(AnyLabel).map_err(E::custom),
        }
    }
}

impl<'de> Deserialize<'de> for AnyLabel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(LabelVisitor)
    }
}

/// A probability, checked as the number is read (so that errors point at it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Prob(pub Probability);

struct ProbVisitor;

impl Visitor<'_> for ProbVisitor {
    type Value = Prob;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a probability (a number in [0, 1])")
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Prob, E> {
        Probability::new(v).map(Prob).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Prob, E> {
        match v {
            0 | 1 => self.visit_f64(v as f64),
            _ => Err(E::custom(format_args!(
                "{v} is not a probability (a number in [0, 1])"
            ))),
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Prob, E> {
        Err(E::custom(format_args!(
            "{v} is not a probability (a number in [0, 1])"
        )))
    }
}

impl<'de> Deserialize<'de> for Prob {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_f64(ProbVisitor)
    }
}

/// A JSON object's entries in file order, duplicates kept (the order is the retrieval order).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entries<K, V>(pub Vec<(K, V)>);

impl<K, V> Default for Entries<K, V> {
    fn default() -> Self {
        Entries(Vec::new())
    }
}

struct EntriesVisitor<K, V>(PhantomData<(K, V)>);

impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Visitor<'de> for EntriesVisitor<K, V> {
    type Value = Entries<K, V>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Entries(entries))
    }
}

impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Deserialize<'de> for Entries<K, V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(EntriesVisitor(PhantomData))
    }
}

/// Parses one JSON line into `T`, turning a failure into a [`ParseError`] naming the field.
pub(crate) fn parse_line<'a, T: Deserialize<'a>>(
    file: &str,
    line: usize,
    text: &'a str,
) -> Result<T, ParseError> {
    serde_json::from_str(text).map_err(|err| json_error(file, line, text, &err))
}

/// A serde_json error on one line, with the field it happened in.
pub(crate) fn json_error(
    file: &str,
    line: usize,
    text: &str,
    err: &serde_json::Error,
) -> ParseError {
    let full = err.to_string();
    let position = format!(" at line {} column {}", err.line(), err.column());
    let message = full.strip_suffix(&position).unwrap_or(&full).to_owned();
    let mut path = if err.is_syntax() || err.is_eof() {
        Vec::new()
    } else {
        field_path_at(text, err.column())
    };
    if let Some(missing) = quoted_name(&message, "missing field `") {
        path.push(missing.to_owned());
    }
    let field = (!path.is_empty()).then(|| path.join("."));
    ParseError {
        file: file.to_owned(),
        line,
        field,
        message,
    }
}

/// The name in `` prefix`name` `` at the start of serde's message, if it has that form.
fn quoted_name<'m>(message: &'m str, prefix: &str) -> Option<&'m str> {
    message.strip_prefix(prefix)?.split('`').next()
}

enum Frame {
    Object { key: Option<String> },
    Array,
}

/// The path of object keys that is open at byte `offset` of the JSON text `text`: the field whose
/// value was being read there (`["evidence", "123", "label_probs"]`). Array positions are left
/// out: serde_json reports errors inside arrays at the array's end.
pub(crate) fn field_path_at(text: &str, offset: usize) -> Vec<String> {
    let bytes = text.as_bytes();
    let end = offset.min(bytes.len());
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < end {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object { key: key @ None }) = stack.last_mut() {
                    *key = Some(text.get(start..j.min(bytes.len())).unwrap_or("").to_owned());
                }
                i = j;
            }
            b'{' => stack.push(Frame::Object { key: None }),
            b'[' => stack.push(Frame::Array),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => {
                if let Some(Frame::Object { key }) = stack.last_mut() {
                    *key = None;
                }
            }
            _ => {}
        }
        i += 1;
    }
    let mut path = Vec::new();
    for frame in stack {
        match frame {
            Frame::Object { key: Some(key) } => path.push(key),
            Frame::Object { key: None } => break,
            Frame::Array => {}
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::DocId;

    #[derive(Deserialize, Debug)]
    struct Row {
        #[allow(dead_code)]
        doc_id: Id<DocId>,
        #[allow(dead_code)]
        p_support: Prob,
        #[allow(dead_code)]
        evidence: Entries<Id<DocId>, Inner>,
    }

    #[derive(Deserialize, Debug)]
    struct Inner {
        #[allow(dead_code)]
        label: AnyLabel,
        #[allow(dead_code)]
        probs: Vec<Prob>,
    }

    fn err_of(text: &str) -> ParseError {
        parse_line::<Row>("runs.jsonl", 17, text).unwrap_err()
    }

    #[test]
    fn ids_accept_integers_and_strings() {
        let a: Id<DocId> = serde_json::from_str("12").unwrap();
        let b: Id<DocId> = serde_json::from_str("\"12\"").unwrap();
        assert_eq!(a, b);
        assert!(serde_json::from_str::<Id<DocId>>("1.5").is_err());
        assert!(serde_json::from_str::<Id<DocId>>("\"a b\"").is_err());
    }

    #[test]
    fn entries_keep_order_and_duplicates() {
        let e: Entries<String, u32> = serde_json::from_str(r#"{"b":1,"a":2,"b":3}"#).unwrap();
        assert_eq!(e.0, vec![("b".into(), 1), ("a".into(), 2), ("b".into(), 3)]);
    }

    #[test]
    fn errors_name_the_field_they_happen_in() {
        let ok = r#"{"doc_id": 1, "p_support": 0.5, "evidence": {"7": {"label": "NEI", "probs": [0.1]}}}"#;
        assert!(parse_line::<Row>("f", 1, ok).is_ok());

        let e = err_of(r#"{"doc_id": 1, "p_support": 1.3, "evidence": {}}"#);
        assert_eq!(
            e.to_string(),
            "runs.jsonl:17: field \"p_support\": 1.3 is not a probability (a number in [0, 1])"
        );
        let e = err_of(
            r#"{"doc_id": 1, "p_support": 0.3, "evidence": {"7": {"label": "MAYBE", "probs": []}}}"#,
        );
        assert_eq!(e.field.as_deref(), Some("evidence.7.label"));
        assert!(e.message.starts_with("unknown label \"MAYBE\""), "{e}");
        let e = err_of(
            r#"{"doc_id": 1, "p_support": 0.3, "evidence": {"7": {"label": "NEI", "probs": [0.2, -1]}}}"#,
        );
        assert_eq!(e.field.as_deref(), Some("evidence.7.probs"));
        assert!(e.message.starts_with("-1 is not a probability"), "{e}");
        // A bad value as the last field of an object still names that field.
        let e = err_of(r#"{"doc_id": 1, "evidence": {}, "p_support": 2}"#);
        assert_eq!(e.field.as_deref(), Some("p_support"));
        let e = err_of(
            r#"{"evidence": {"7": {"probs": [], "label": "X"}}, "doc_id": 1, "p_support": 0}"#,
        );
        assert_eq!(e.field.as_deref(), Some("evidence.7.label"));
        let e = err_of(
            r#"{"doc_id": 1, "p_support": 0.3, "evidence": {"a b": {"label": "NEI", "probs": []}}}"#,
        );
        assert_eq!(e.field.as_deref(), Some("evidence.a b"));
        let e = err_of(r#"{"doc_id": "", "p_support": 0.3, "evidence": {}}"#);
        assert_eq!(e.field.as_deref(), Some("doc_id"));
        assert_eq!(e.message, "id is empty");
        let e = err_of(r#"{"doc_id": 4, "evidence": {}}"#);
        assert_eq!(e.field.as_deref(), Some("p_support"));
        let e = err_of(r#"{"doc_id": 4, "p_support": 0.1, "evidence": {"3": {"label": "NEI"}}}"#);
        assert_eq!(e.field.as_deref(), Some("evidence.3.probs"));
        let e = err_of(r#"{"doc_id": 4, "p_support": "high", "evidence": {}}"#);
        assert_eq!(e.field.as_deref(), Some("p_support"));
        let e = err_of(r#"{"doc_id": 4, "p_support": 0.1, "#);
        assert_eq!(e.field, None);
        assert_eq!(e.line, 17);
    }

    #[test]
    fn path_scanner_handles_escaped_quotes_and_arrays() {
        let text = r#"{"a\"b": [1, {"c": [2, 3"#;
        assert_eq!(field_path_at(text, text.len()), vec!["a\\\"b", "c"]);
        assert!(field_path_at("{", 1).is_empty());
    }
}
