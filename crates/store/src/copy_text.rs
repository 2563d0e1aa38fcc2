//! PostgreSQL's `COPY ... FROM STDIN` text format: one line per row, tab-separated, `\N` for
//! NULL. Used by `db copy` and by bulk writes on PostgreSQL.

use std::fmt::Write as _;

pub(crate) fn push_integer(line: &mut String, value: i64) {
    let _ = write!(line, "{value}");
}

pub(crate) fn push_real(line: &mut String, value: f64) {
    // Rust prints the shortest text that reads back as the same double, as PostgreSQL does.
    if value.is_nan() {
        line.push_str("NaN");
    } else if value.is_infinite() {
        line.push_str(if value > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        let _ = write!(line, "{value}");
    }
}

/// COPY's text format: backslash, tab, newline and carriage return escaped.
pub(crate) fn push_text(line: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => line.push_str("\\\\"),
            '\t' => line.push_str("\\t"),
            '\n' => line.push_str("\\n"),
            '\r' => line.push_str("\\r"),
            c => line.push(c),
        }
    }
}

/// bytea's hex input (`\x0a1b`), its backslash escaped for COPY.
pub(crate) fn push_bytes(line: &mut String, value: &[u8]) {
    line.push_str("\\\\x");
    for b in value {
        let _ = write!(line, "{b:02x}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_for_copy() {
        let mut line = String::new();
        push_text(&mut line, "a\tb\nc\\d\re");
        assert_eq!(line, "a\\tb\\nc\\\\d\\re");
    }

    #[test]
    fn reals_and_bytes_read_back_alike() {
        let mut line = String::new();
        push_real(&mut line, 0.1 + 0.2);
        line.push(' ');
        push_real(&mut line, 1.0);
        line.push(' ');
        push_bytes(&mut line, &[0, 10, 255]);
        assert_eq!(line, "0.30000000000000004 1 \\\\x000aff");
    }
}
