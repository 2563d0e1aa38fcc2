//! Qrels: `claim_id 0 doc_id JUDGMENT`, white-space separated, one per line. The judgment is a
//! label (`SUPPORT`, `CONTRADICT`, `NEI`, any spelling [`Label::parse`] knows) or, in plain TREC
//! qrels, an integer relevance grade. One file holds one kind; the first line decides which.

use super::error::{FormatError, ParseError};
use super::input::{Input, LineParser, LineRecords, LineSource, Located};
use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use std::collections::VecDeque;
use std::path::Path;

/// A judgment of one claim/doc pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Judgment {
    /// A verdict, from labelled qrels.
    Label(Label),
    /// A relevance grade, from plain TREC qrels (0 = not relevant).
    Relevance(i32),
}

impl Judgment {
    fn kind(self) -> &'static str {
        match self {
            Judgment::Label(_) => "a label",
            Judgment::Relevance(_) => "a relevance grade",
        }
    }
}

/// One line of a qrels file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Qrel {
    pub claim_id: ClaimId,
    pub doc_id: DocId,
    pub judgment: Judgment,
}

struct QrelsParser {
    /// The first judgment's kind and line.
    first: Option<(Judgment, usize)>,
}

impl LineParser for QrelsParser {
    type Record = Qrel;

    fn parse_line(
        &mut self,
        file: &str,
        line: usize,
        text: &str,
        out: &mut VecDeque<Qrel>,
    ) -> Result<(), ParseError> {
        let err = |field: &str, message: String| ParseError::new(file, line, Some(field), message);
        let columns: Vec<&str> = text.split_whitespace().collect();
        let [claim, _iteration, doc, judgment] = columns.as_slice() else {
            return Err(ParseError::new(
                file,
                line,
                None,
                format!(
                    "a qrels line has 4 columns (claim_id 0 doc_id judgment), this one has {}",
                    columns.len()
                ),
            ));
        };
        let claim_id = ClaimId::parse(*claim).map_err(|e| err("claim_id", format!("id {e}")))?;
        let doc_id = DocId::parse(*doc).map_err(|e| err("doc_id", format!("id {e}")))?;
        let judgment = match judgment.parse::<i32>() {
            Ok(grade) => Judgment::Relevance(grade),
            Err(_) => Label::parse(judgment).map(Judgment::Label).map_err(|_| {
                err(
                    "judgment",
                    format!(
                        "{judgment:?} is neither a label (SUPPORT, CONTRADICT, NEI) nor a relevance grade"
                    ),
                )
            })?,
        };
        match self.first {
            None => self.first = Some((judgment, line)),
            Some((first, first_line)) if first.kind() != judgment.kind() => {
                return Err(err(
                    "judgment",
                    format!(
                        "{} in a file whose line {first_line} gave {}",
                        judgment.kind(),
                        first.kind()
                    ),
                ));
            }
            Some(_) => {}
        }
        out.push_back(Qrel {
            claim_id,
            doc_id,
            judgment,
        });
        Ok(())
    }
}

/// A streaming reader of a qrels file: one [`Qrel`] per line.
pub struct QrelsReader(LineRecords<QrelsParser>);

impl QrelsReader {
    /// Opens `path` (gzip or not).
    pub fn open(path: &Path) -> Result<QrelsReader, FormatError> {
        Ok(QrelsReader(LineRecords::new(
            LineSource::open(path)?,
            QrelsParser { first: None },
        )))
    }

    /// Reads an opened input, named `file_name` in errors.
    pub fn from_input(input: Input, file_name: impl Into<String>) -> Self {
        QrelsReader(LineRecords::new(
            LineSource::new(input, file_name.into()),
            QrelsParser { first: None },
        ))
    }
}

impl Iterator for QrelsReader {
    type Item = Result<Located<Qrel>, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::input::decompressed;

    fn read(text: &str) -> Vec<Result<Located<Qrel>, ParseError>> {
        let input = decompressed(std::io::Cursor::new(text.as_bytes().to_vec())).unwrap();
        QrelsReader::from_input(input, "qrels.txt").collect()
    }

    #[test]
    fn reads_labelled_and_graded_qrels() {
        let got: Vec<(usize, String, String, Judgment)> =
            read("1 0 10 SUPPORT\n\n1\t0\t11 refutes\n2 Q0 MED-3 NEI\n")
                .into_iter()
                .map(|r| {
                    let r = r.unwrap();
                    (
                        r.line,
                        r.record.claim_id.to_string(),
                        r.record.doc_id.to_string(),
                        r.record.judgment,
                    )
                })
                .collect();
        assert_eq!(
            got,
            vec![
                (1, "1".into(), "10".into(), Judgment::Label(Label::Support)),
                (
                    3,
                    "1".into(),
                    "11".into(),
                    Judgment::Label(Label::Contradict)
                ),
                (4, "2".into(), "MED-3".into(), Judgment::Label(Label::Nei)),
            ]
        );
        let graded: Vec<Judgment> = read("q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 -1\n")
            .into_iter()
            .map(|r| r.unwrap().record.judgment)
            .collect();
        assert_eq!(
            graded,
            vec![
                Judgment::Relevance(2),
                Judgment::Relevance(0),
                Judgment::Relevance(-1)
            ]
        );
    }

    #[test]
    fn bad_lines_name_file_line_and_field() {
        let got: Vec<(usize, Option<String>)> =
            read("1 0 10 SUPPORT\n1 0 10\n1 0 11 MAYBE\n1 0 12 1\n1 0 13 NEI extra\n")
                .into_iter()
                .skip(1)
                .map(|r| {
                    let e = r.unwrap_err();
                    assert!(
                        e.to_string().starts_with(&format!("qrels.txt:{}:", e.line)),
                        "{e}"
                    );
                    (e.line, e.field)
                })
                .collect();
        assert_eq!(
            got,
            vec![
                (2, None),
                (3, Some("judgment".into())),
                (4, Some("judgment".into())),
                (5, None),
            ]
        );
    }
}
