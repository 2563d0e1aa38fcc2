//! File names made from names people chose (systems, projects).

/// Longest file stem written.
const MAX_STEM: usize = 80;

/// A file name stem for `name` that is safe on every common file system: ASCII letters, digits,
/// `-`, `_` and `.` are kept, every other character becomes `_`; a leading `.` becomes `_` (no
/// hidden files, no `..`); the stem is cut to 80 bytes; an empty name gives `_`.
pub fn file_stem(name: &str) -> String {
    let mut stem: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(MAX_STEM)
        .collect();
    if stem.starts_with('.') {
        stem.replace_range(..1, "_");
    }
    if stem.is_empty() {
        stem.push('_');
    }
    stem
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_keep_safe_characters_only() {
        assert_eq!(
            file_stem("MultiVerS (fever_sci) v1.2"),
            "MultiVerS__fever_sci__v1.2"
        );
        assert_eq!(file_stem("../etc/passwd"), "_._etc_passwd");
        assert_eq!(file_stem(".hidden"), "_hidden");
        assert_eq!(file_stem(""), "_");
        assert_eq!(file_stem("système"), "syst_me");
        assert_eq!(file_stem(&"x".repeat(200)).len(), MAX_STEM);
    }
}
