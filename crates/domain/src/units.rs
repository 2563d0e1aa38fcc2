//! Quantities for people, in the server's messages and on the pages alike.

/// A byte count for people: "512 KiB", "16 MiB", "8 GiB".
pub fn size_text(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in UNITS {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{} {name}", bytes / unit);
        }
    }
    match UNITS.iter().find(|(unit, _)| bytes >= *unit) {
        Some((unit, name)) => format!("{:.1} {name}", bytes as f64 / *unit as f64),
        None => format!("{bytes} bytes"),
    }
}

/// 1234567 → "1,234,567".
pub fn format_count(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}
