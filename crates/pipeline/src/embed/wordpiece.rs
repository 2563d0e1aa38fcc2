//! BERT's uncased WordPiece tokenizer over a `vocab.txt`, as Hugging Face's `BertTokenizer`
//! (and the `tokenizer.json` of all-MiniLM-L6-v2) does it:
//!
//! 1. clean: drop NUL, U+FFFD and control characters; every whitespace character becomes a space;
//! 2. put spaces around CJK ideographs;
//! 3. strip accents (NFD, then drop non-spacing marks) and lower-case;
//! 4. split on whitespace, and split off every punctuation character as a word of its own;
//! 5. WordPiece: the longest vocabulary prefix of each word, then the longest `##`-prefixed
//!    continuation, and so on; a word that cannot be covered (or is over 100 characters) is
//!    `[UNK]`;
//! 6. `[CLS]` + pieces (cut to fit) + `[SEP]`.

use std::collections::HashMap;
use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, GeneralCategoryGroup, UnicodeGeneralCategory};

/// Words longer than this many characters are `[UNK]` (BERT's `max_input_chars_per_word`).
const MAX_WORD_CHARS: usize = 100;

/// A WordPiece vocabulary and its special tokens.
#[derive(Clone, Debug)]
pub struct WordPiece {
    ids: HashMap<String, u32>,
    unk: u32,
    cls: u32,
    sep: u32,
}

/// A vocabulary that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VocabError {
    #[error("the vocabulary lacks the special token {0}")]
    MissingSpecial(&'static str),
    #[error("the vocabulary has more than 2^32 entries")]
    TooLarge,
}

impl WordPiece {
    /// Reads `vocab.txt` text: one token per line, its id the 0-based line number.
    pub fn from_vocab(text: &str) -> Result<WordPiece, VocabError> {
        let mut ids = HashMap::new();
        for (line, token) in text.lines().enumerate() {
            let id = u32::try_from(line).map_err(|_| VocabError::TooLarge)?;
            // A later duplicate does not replace the first id (as in Hugging Face's loader).
            ids.entry(token.trim_end_matches('\r').to_owned())
                .or_insert(id);
        }
        let special = |name: &'static str| {
            ids.get(name)
                .copied()
                .ok_or(VocabError::MissingSpecial(name))
        };
        Ok(WordPiece {
            unk: special("[UNK]")?,
            cls: special("[CLS]")?,
            sep: special("[SEP]")?,
            ids,
        })
    }

    /// Number of tokens in the vocabulary.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the vocabulary is empty (it never is once loaded: it has the special tokens).
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The ids of `text` with `[CLS]` and `[SEP]`, at most `max_len` in all (at least 2).
    pub fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        let budget = max_len.max(2) - 2;
        let mut ids = Vec::with_capacity(budget.min(512) + 2);
        ids.push(self.cls);
        'words: for word in pre_tokenize(&normalize(text)) {
            for id in self.word_pieces(&word) {
                if ids.len() > budget {
                    break 'words;
                }
                ids.push(id);
            }
        }
        ids.push(self.sep);
        ids
    }

    /// The pieces of one normalised word.
    fn word_pieces(&self, word: &str) -> Vec<u32> {
        if word.chars().count() > MAX_WORD_CHARS {
            return vec![self.unk];
        }
        let mut pieces = Vec::new();
        let mut start = 0;
        let mut candidate = String::with_capacity(word.len() + 2);
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while start < end {
                candidate.clear();
                if start > 0 {
                    candidate.push_str("##");
                }
                candidate.push_str(&word[start..end]);
                if let Some(&id) = self.ids.get(&candidate) {
                    found = Some(id);
                    break;
                }
                // Step back one character (not one byte).
                end = word[..end]
                    .char_indices()
                    .next_back()
                    .map_or(start, |(i, _)| i);
            }
            match found {
                Some(id) => {
                    pieces.push(id);
                    start = end;
                }
                None => return vec![self.unk],
            }
        }
        pieces
    }
}

/// Steps 1 to 3: clean, space out CJK ideographs, strip accents, lower-case.
fn normalize(text: &str) -> String {
    let mut cleaned = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if is_whitespace(c) {
            cleaned.push(' ');
        } else if is_cjk(c) {
            cleaned.push(' ');
            cleaned.push(c);
            cleaned.push(' ');
        } else {
            cleaned.push(c);
        }
    }
    cleaned
        .nfd()
        .filter(|c| c.general_category() != GeneralCategory::NonspacingMark)
        .flat_map(char::to_lowercase)
        .collect()
}

/// Step 4: words split on whitespace, punctuation characters split off as words.
fn pre_tokenize(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for chunk in text.split(char::is_whitespace) {
        let mut word = String::new();
        for c in chunk.chars() {
            if is_punctuation(c) {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                words.push(c.to_string());
            } else {
                word.push(c);
            }
        }
        if !word.is_empty() {
            words.push(word);
        }
    }
    words
}

/// Space, tab, new line, carriage return, or a space separator (Zs).
fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r') || c.general_category() == GeneralCategory::SpaceSeparator
}

/// Control, format, unassigned or private-use characters, except tab, new line and return.
fn is_control(c: char) -> bool {
    if matches!(c, '\t' | '\n' | '\r') {
        return false;
    }
    matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::Unassigned
            | GeneralCategory::PrivateUse
    )
}

/// ASCII punctuation and symbols (so `$`, `+`, `^` and the like split too), or Unicode P*.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.general_category_group() == GeneralCategoryGroup::Punctuation
}

/// CJK Unified Ideographs and their extensions and compatibility blocks (the list of Hugging
/// Face's BertNormalizer).
fn is_cjk(c: char) -> bool {
    matches!(
        u32::from(c),
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy vocabulary: ids are line numbers.
    fn toy() -> WordPiece {
        WordPiece::from_vocab(
            "[PAD]\n[UNK]\n[CLS]\n[SEP]\nun\n##aff\n##able\nrun\n##ning\n,\n!\ncafe\n",
        )
        .unwrap()
    }

    #[test]
    fn greedy_longest_match_with_continuations() {
        let wp = toy();
        assert_eq!(
            wp.encode("unaffable running, CAFÉ!", 64),
            [2, 4, 5, 6, 7, 8, 9, 11, 10, 3]
        );
        // An uncoverable word is one [UNK]; so is a very long one.
        assert_eq!(wp.encode("unx run", 64), [2, 1, 7, 3]);
        assert_eq!(wp.encode(&"un".repeat(51), 64), [2, 1, 3]);
        // The length cap keeps [CLS] and [SEP].
        assert_eq!(wp.encode("unaffable running", 4), [2, 4, 5, 3]);
        assert_eq!(wp.encode("", 64), [2, 3]);
    }

    #[test]
    fn normalisation_and_splitting_follow_bert() {
        assert_eq!(normalize("Café\tNAÏVE\u{0}x\u{200b}y"), "cafe naivexy");
        assert_eq!(
            pre_tokenize("il-6/stat3 (p<0.05)"),
            ["il", "-", "6", "/", "stat3", "(", "p", "<", "0", ".", "05", ")"]
        );
        assert_eq!(pre_tokenize(&normalize("中文a")), ["中", "文", "a"]);
        assert_eq!(pre_tokenize("a\u{3000}b — c"), ["a", "b", "—", "c"]);
    }

    #[test]
    fn a_vocabulary_needs_its_special_tokens() {
        assert_eq!(
            WordPiece::from_vocab("[PAD]\n[CLS]\n[SEP]\n").unwrap_err(),
            VocabError::MissingSpecial("[UNK]")
        );
    }
}
