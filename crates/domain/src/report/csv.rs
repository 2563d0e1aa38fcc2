//! CSV renderings of the report's tables and plot series (RFC 4180: comma-separated, fields
//! with a comma, quote or line break quoted, quotes doubled; `\n` line ends). A text field that a
//! spreadsheet would run as a formula (it starts with `=`, `+`, `-`, `@`, a tab or a carriage
//! return and is not a number) gets a leading `'` (OWASP's advice on CSV injection): system and
//! annotator names are typed by users.

use std::borrow::Cow;

/// One table: a name (a file stem, e.g. `depth_curve`), a header and rows of fields.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CsvTable {
    /// A file stem, e.g. `depth_curve`.
    pub name: &'static str,
    /// Column names.
    pub header: Vec<&'static str>,
    /// Rows, each with one field per column.
    pub rows: Vec<Vec<String>>,
}

impl CsvTable {
    /// An empty table.
    pub fn new(name: &'static str, header: &[&'static str]) -> CsvTable {
        CsvTable {
            name,
            header: header.to_vec(),
            rows: Vec::new(),
        }
    }

    /// Adds a row.
    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// The CSV text: the header line, then one line per row.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        write_line(&mut out, self.header.iter().copied());
        for row in &self.rows {
            write_line(&mut out, row.iter().map(String::as_str));
        }
        out
    }
}

fn write_line<'a>(out: &mut String, fields: impl Iterator<Item = &'a str>) {
    for (i, field) in fields.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&quote(field));
    }
    out.push('\n');
}

/// The field, defused when a spreadsheet would read it as a formula, quoted when it must be.
fn quote(field: &str) -> Cow<'_, str> {
    let field = defuse(field);
    if field.contains([',', '"', '\n', '\r']) {
        Cow::Owned(format!("\"{}\"", field.replace('"', "\"\"")))
    } else {
        field
    }
}

/// `'` before a text that starts like a formula; numbers (`-0.5`, `+1e3`) stay as they are.
fn defuse(field: &str) -> Cow<'_, str> {
    let formula_like = field.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if formula_like && field.parse::<f64>().is_err() {
        Cow::Owned(format!("'{field}"))
    } else {
        Cow::Borrowed(field)
    }
}

/// A number as CSV writes it: the shortest text that reads back as the same `f64`.
pub(super) fn num(value: f64) -> String {
    value.to_string()
}

/// An optional number: empty when absent.
pub(super) fn opt(value: Option<f64>) -> String {
    value.map(num).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_quoting() {
        let mut table = CsvTable::new("t", &["a", "b"]);
        table.push(vec!["plain".into(), "with,comma".into()]);
        table.push(vec!["say \"hi\"".into(), "two\nlines".into()]);
        assert_eq!(
            table.to_csv(),
            "a,b\nplain,\"with,comma\"\n\"say \"\"hi\"\"\",\"two\nlines\"\n"
        );
        assert_eq!(opt(None), "");
        assert_eq!(opt(Some(-0.25)), "-0.25");
    }

    #[test]
    fn formulas_are_defused_numbers_are_not() {
        let mut table = CsvTable::new("t", &["system", "change"]);
        table.push(vec![
            "=HYPERLINK(\"http://x\",\"y\")".into(),
            "-12.5".into(),
        ]);
        table.push(vec!["+cmd".into(), "+3".into()]);
        table.push(vec!["-sys".into(), "-inf".into()]);
        table.push(vec!["@SUM(A1)".into(), "\tx".into()]);
        table.push(vec!["bm25=x".into(), "1e-3".into()]);
        assert_eq!(
            table.to_csv(),
            "system,change\n\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",-12.5\n'+cmd,+3\n'-sys,-inf\n'@SUM(A1),'\tx\nbm25=x,1e-3\n"
        );
        assert_eq!(opt(Some(0.5)), "0.5");
    }
}
