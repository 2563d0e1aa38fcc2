//! CSV renderings of the report's tables and plot series (RFC 4180: comma-separated, fields
//! with a comma, quote or line break quoted, quotes doubled; `\n` line ends).

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

/// The field, quoted when it must be.
fn quote(field: &str) -> Cow<'_, str> {
    if field.contains([',', '"', '\n', '\r']) {
        Cow::Owned(format!("\"{}\"", field.replace('"', "\"\"")))
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
        assert_eq!(opt(Some(0.5)), "0.5");
    }
}
