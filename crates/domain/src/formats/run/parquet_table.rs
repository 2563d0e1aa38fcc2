//! The SciFact-Open prediction table: a parquet file with one row per system/claim/doc,
//! columns `model, claim_id, doc_id, predicted_label, rank, p_support, p_contradict` (as pandas
//! writes them: ids as integers or strings, `rank` as an integer or a float).
//!
//! Read row by row with the parquet crate's record API, reading only the columns used. Rows are
//! numbered from 1 and errors give that number as the line. Missing values (null, or NaN as pandas
//! writes them in float columns) are `None`. Other columns are ignored; `p_nei`, `score` and
//! `sentences` (a list of integers) are read too when present.

use super::record::RunRecord;
use crate::formats::error::{FormatError, ParseError};
use crate::formats::input::Located;
use crate::ids::{ClaimId, DocId};
use crate::label::{Label, Probability};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::reader::RowIter;
use parquet::record::{Field, Row};
use parquet::schema::types::Type;
use std::fs::File;
use std::io::Read;
use std::sync::Arc;

/// The columns read; all others are skipped.
const COLUMNS: &[&str] = &[
    "model",
    "system",
    "claim_id",
    "doc_id",
    "predicted_label",
    "rank",
    "p_support",
    "p_contradict",
    "p_nei",
    "score",
    "sentences",
];
/// The columns a table must have.
const REQUIRED: &[&str] = &["claim_id", "doc_id"];

/// A streaming iterator over the rows of a prediction table.
pub(crate) struct ParquetRecords {
    rows: RowIter<'static>,
    file: String,
    row: usize,
    finished: bool,
}

/// The first bytes of every parquet file.
pub(crate) const PARQUET_MAGIC: &[u8; 4] = b"PAR1";

impl ParquetRecords {
    /// Opens the table in `file` (named `name` in errors).
    pub(crate) fn new(file: File, name: String) -> Result<Self, FormatError> {
        let bad = |message: String| FormatError::Parquet {
            file: name.clone(),
            message,
        };
        let reader = SerializedFileReader::new(file).map_err(|e| bad(e.to_string()))?;
        let root = reader
            .metadata()
            .file_metadata()
            .schema_descr()
            .root_schema();
        let fields: Vec<Arc<Type>> = root
            .get_fields()
            .iter()
            .filter(|f| COLUMNS.contains(&f.name()))
            .cloned()
            .collect();
        for required in REQUIRED {
            if !fields.iter().any(|f| f.name() == *required) {
                return Err(bad(format!("it has no column {required:?}")));
            }
        }
        let projection = Type::group_type_builder(root.name())
            .with_fields(fields)
            .build()
            .map_err(|e| bad(e.to_string()))?;
        let rows = RowIter::from_file_into(Box::new(reader))
            .project(Some(projection))
            .map_err(|e| bad(e.to_string()))?;
        Ok(ParquetRecords {
            rows,
            file: name,
            row: 0,
            finished: false,
        })
    }
}

impl Iterator for ParquetRecords {
    type Item = Result<Located<RunRecord>, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        let next = self.rows.next();
        self.row += 1;
        match next {
            None => {
                self.finished = true;
                None
            }
            Some(Err(err)) => {
                self.finished = true;
                Some(Err(ParseError::new(
                    &self.file,
                    self.row,
                    None,
                    format!("unreadable row: {err}"),
                )))
            }
            Some(Ok(row)) => Some(
                record_of(row)
                    .map(|record| Located {
                        line: self.row,
                        record,
                    })
                    .map_err(|(field, message)| {
                        ParseError::new(&self.file, self.row, Some(field), message)
                    }),
            ),
        }
    }
}

type FieldError = (&'static str, String);

fn record_of(row: Row) -> Result<RunRecord, FieldError> {
    let mut system = None;
    let mut claim_id = None;
    let mut doc_id = None;
    let mut label = None;
    let mut rank = None;
    let mut p = [None, None, None];
    let mut score = None;
    let mut sentences = None;
    for (name, field) in row.into_columns() {
        match name.as_str() {
            "model" => system = text("model", field)?,
            "system" => system = system.or(text("system", field)?),
            "claim_id" => claim_id = id_text("claim_id", field)?,
            "doc_id" => doc_id = id_text("doc_id", field)?,
            "predicted_label" => {
                label = text("predicted_label", field)?
                    .map(|t| Label::parse(&t).map_err(|e| ("predicted_label", e.to_string())))
                    .transpose()?;
            }
            "rank" => rank = whole("rank", &field)?,
            "p_support" => p[0] = probability("p_support", &field)?,
            "p_contradict" => p[1] = probability("p_contradict", &field)?,
            "p_nei" => p[2] = probability("p_nei", &field)?,
            "score" => score = number("score", &field)?,
            "sentences" => sentences = indices(&field)?,
            _ => {}
        }
    }
    let claim_id = claim_id.ok_or(("claim_id", "is missing".to_owned()))?;
    let doc_id = doc_id.ok_or(("doc_id", "is missing".to_owned()))?;
    let [p_support, p_contradict, p_nei] = p;
    Ok(RunRecord {
        system,
        claim_id: ClaimId::parse(claim_id).map_err(|e| ("claim_id", format!("id {e}")))?,
        doc_id: DocId::parse(doc_id).map_err(|e| ("doc_id", format!("id {e}")))?,
        label,
        p_support,
        p_contradict,
        p_nei,
        score,
        rank,
        sentences,
    })
}

fn type_error(column: &'static str, expected: &str, field: &Field) -> FieldError {
    (column, format!("expected {expected}, found {field}"))
}

fn text(column: &'static str, field: Field) -> Result<Option<String>, FieldError> {
    match field {
        Field::Null => Ok(None),
        Field::Str(s) => Ok(Some(s)),
        Field::Bytes(b) => match std::str::from_utf8(b.data()) {
            Ok(s) => Ok(Some(s.to_owned())),
            Err(_) => Err((column, "is not UTF-8 text".to_owned())),
        },
        other => Err(type_error(column, "text", &other)),
    }
}

/// Integers (any width), integral floats and text, as id text.
fn id_text(column: &'static str, field: Field) -> Result<Option<String>, FieldError> {
    if let Some(n) = integer(&field) {
        return Ok(Some(n.to_string()));
    }
    match field {
        Field::Float(_) | Field::Double(_) => match number(column, &field)? {
            Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => Ok(Some(format!("{x:.0}"))),
            Some(x) => Err((column, format!("{x} is not a whole-number id"))),
            None => Ok(None),
        },
        other => text(column, other),
    }
}

fn integer(field: &Field) -> Option<i128> {
    match *field {
        Field::Byte(v) => Some(v.into()),
        Field::Short(v) => Some(v.into()),
        Field::Int(v) => Some(v.into()),
        Field::Long(v) => Some(v.into()),
        Field::UByte(v) => Some(v.into()),
        Field::UShort(v) => Some(v.into()),
        Field::UInt(v) => Some(v.into()),
        Field::ULong(v) => Some(v.into()),
        _ => None,
    }
}

/// A number; null and NaN (pandas' missing value) are `None`, infinities are refused.
fn number(column: &'static str, field: &Field) -> Result<Option<f64>, FieldError> {
    let x = match *field {
        Field::Null => return Ok(None),
        Field::Float(v) => f64::from(v),
        Field::Double(v) => v,
        _ => match integer(field) {
            Some(n) => n as f64,
            None => return Err(type_error(column, "a number", field)),
        },
    };
    if x.is_nan() {
        Ok(None)
    } else if x.is_finite() {
        Ok(Some(x))
    } else {
        Err((column, format!("{x} is not a finite number")))
    }
}

fn whole(column: &'static str, field: &Field) -> Result<Option<u32>, FieldError> {
    match number(column, field)? {
        None => Ok(None),
        Some(x) if x.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&x) => {
            Ok(Some(x as u32))
        }
        Some(x) => Err((column, format!("{x} is not a rank (a whole number >= 0)"))),
    }
}

fn probability(column: &'static str, field: &Field) -> Result<Option<Probability>, FieldError> {
    number(column, field)?
        .map(|x| Probability::new(x).map_err(|e| (column, e.to_string())))
        .transpose()
}

fn indices(field: &Field) -> Result<Option<Vec<u32>>, FieldError> {
    match field {
        Field::Null => Ok(None),
        Field::ListInternal(list) => list
            .elements()
            .iter()
            .map(|f| match whole("sentences", f)? {
                Some(i) => Ok(i),
                None => Err(("sentences", "has a missing sentence index".to_owned())),
            })
            .collect::<Result<Vec<u32>, _>>()
            .map(Some),
        other => Err(type_error("sentences", "a list of sentence indices", other)),
    }
}

/// Copies `input` into an anonymous temporary file (created, then unlinked while open) so that it
/// can be read as parquet, which needs random access: for gzip-compressed tables and uploads.
pub(crate) fn spool(input: &mut dyn Read) -> std::io::Result<File> {
    use std::io::{Seek, SeekFrom};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let path = std::env::temp_dir().join(format!(
        "claimpool-spool-{}-{}-{}.parquet",
        std::process::id(),
        nanos,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    // On Unix the open file outlives its name; elsewhere the file stays until the OS cleans up.
    let _ = std::fs::remove_file(&path);
    std::io::copy(input, &mut file)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(file)
}
