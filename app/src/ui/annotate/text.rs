//! Claim words in an abstract: which words of a sentence to highlight.

use std::collections::HashSet;

/// Common English words that carry no topic, never highlighted.
const STOP_WORDS: &[&str] = &[
    "about", "after", "also", "among", "and", "are", "been", "before", "being", "between", "both",
    "but", "can", "could", "does", "during", "each", "for", "from", "had", "has", "have", "into",
    "its", "may", "more", "most", "not", "than", "that", "the", "their", "there", "these", "they",
    "this", "those", "through", "was", "were", "when", "which", "while", "who", "will", "with",
    "within", "without", "would",
];

/// The key a word is matched by: lower case, cut to its first six characters (a crude stem, so
/// that "reduces" and "reduced" meet), or None for short and common words.
fn key(word: &str) -> Option<String> {
    let lower = word.to_lowercase();
    let has_digit = lower.chars().any(|c| c.is_ascii_digit());
    if (lower.chars().count() < 3 && !has_digit) || STOP_WORDS.contains(&lower.as_str()) {
        return None;
    }
    Some(lower.chars().take(6).collect())
}

/// The keys of a claim's words.
pub fn claim_keys(claim: &str) -> HashSet<String> {
    words(claim)
        .into_iter()
        .filter(|(_, is_word)| *is_word)
        .filter_map(|(w, _)| key(w))
        .collect()
}

/// `text` cut into words and the runs between them, in order: (piece, is_word).
fn words(text: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_word = None;
    for (i, c) in text.char_indices() {
        let w = c.is_alphanumeric() || c == '-';
        match in_word {
            Some(prev) if prev != w => {
                out.push((&text[start..i], prev));
                start = i;
            }
            _ => {}
        }
        in_word = Some(w);
    }
    if let Some(w) = in_word {
        out.push((&text[start..], w));
    }
    out
}

/// `sentence` as pieces, each marked when it is a word of the claim.
pub fn highlight(sentence: &str, keys: &HashSet<String>) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    for (piece, is_word) in words(sentence) {
        let marked = is_word && key(piece).is_some_and(|k| keys.contains(&k));
        match out.last_mut() {
            Some((text, m)) if *m == marked => text.push_str(piece),
            _ => out.push((piece.to_owned(), marked)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_words_are_marked_in_sentences() {
        let keys = claim_keys("Aspirin reduces the risk of colorectal cancer.");
        let pieces = highlight("Daily aspirin reduced cancer risk (n=12).", &keys);
        let marked: Vec<&str> = pieces
            .iter()
            .filter(|(_, m)| *m)
            .map(|(t, _)| t.as_str())
            .collect();
        assert_eq!(marked, ["aspirin", "reduced", "cancer", "risk"]);
        // The pieces put together give the sentence back.
        let whole: String = pieces.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(whole, "Daily aspirin reduced cancer risk (n=12).");
        // Short and common words are never marked.
        assert!(!keys.contains("the"));
        assert!(!keys.contains("of"));
    }

    #[test]
    fn empty_and_wordless_text() {
        assert!(highlight("", &HashSet::new()).is_empty());
        assert_eq!(
            highlight("(--)", &claim_keys("x")),
            [("(--)".to_owned(), false)]
        );
    }
}
