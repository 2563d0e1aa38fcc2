//! What the features look at in a piece of text: the BM25 analyser's content terms, the plain
//! lower-cased words (stop words kept, so "not" and "no" count), the numbers, and the stance
//! cues (negations, words of increase and of decrease).

use crate::analyzer::{analyse, english_analyzer};
use tantivy::tokenizer::TextAnalyzer;

/// Words that negate what follows (lower-cased; the word splitter drops apostrophes, so
/// "didn't" arrives as "didn" and "t").
const NEGATIONS: &[&str] = &[
    "not",
    "no",
    "nor",
    "never",
    "neither",
    "none",
    "nothing",
    "without",
    "cannot",
    "lack",
    "lacks",
    "lacked",
    "lacking",
    "absence",
    "absent",
    "fail",
    "fails",
    "failed",
    "unable",
    "unaffected",
    "unchanged",
    "insignificant",
    "didn",
    "doesn",
    "don",
    "isn",
    "aren",
    "wasn",
    "weren",
    "couldn",
    "wouldn",
    "hasn",
    "haven",
];

/// Word prefixes of an increase.
const UP: &[&str] = &[
    "increas",
    "higher",
    "high",
    "elevat",
    "rais",
    "enhanc",
    "promot",
    "upregul",
    "induc",
    "activat",
    "improv",
    "gain",
    "acceler",
    "boost",
    "stimul",
    "exacerbat",
    "greater",
    "more",
    "augment",
    "amplif",
    "rise",
    "rose",
    "potentiat",
    "expan",
    "longer",
    "larger",
    "stronger",
];

/// Word prefixes of a decrease.
const DOWN: &[&str] = &[
    "decreas",
    "lower",
    "low",
    "reduc",
    "inhibit",
    "suppress",
    "less",
    "fewer",
    "downregul",
    "declin",
    "impair",
    "attenuat",
    "block",
    "diminish",
    "prevent",
    "loss",
    "lose",
    "slow",
    "abolish",
    "abrogat",
    "limit",
    "deplet",
    "drop",
    "shorter",
    "smaller",
    "weaker",
];

/// How often a text uses each kind of stance cue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cues {
    pub(crate) negations: u32,
    pub(crate) up: u32,
    pub(crate) down: u32,
}

impl Cues {
    /// Whether the text is negated an odd number of times.
    pub(crate) fn negated(self) -> bool {
        self.negations % 2 == 1
    }

    /// The text's direction: +1 when it speaks of increase more than of decrease, -1 for the
    /// reverse, 0 otherwise.
    pub(crate) fn direction(self) -> f32 {
        match self.up.cmp(&self.down) {
            std::cmp::Ordering::Greater => 1.0,
            std::cmp::Ordering::Less => -1.0,
            std::cmp::Ordering::Equal => 0.0,
        }
    }

    /// The direction, flipped when the text is negated ("does not increase" points down).
    pub(crate) fn polarity(self) -> f32 {
        if self.negated() {
            -self.direction()
        } else {
            self.direction()
        }
    }
}

/// A piece of text as the features see it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Analysed {
    /// The BM25 analyser's terms (stemmed, stop words removed), in order, repeats kept.
    pub(crate) terms: Vec<String>,
    /// Lower-cased alphanumeric words, stop words kept, in order.
    pub(crate) words: Vec<String>,
    /// Numbers, digits with their inner '.' kept and ',' dropped ("1,000" is "1000").
    pub(crate) numbers: Vec<String>,
    pub(crate) cues: Cues,
}

/// Analyses texts; holds the BM25 analyser (cloning one per thread is cheap).
#[derive(Clone)]
pub(crate) struct TextAnalysers {
    content: TextAnalyzer,
}

impl Default for TextAnalysers {
    fn default() -> Self {
        TextAnalysers {
            content: english_analyzer(),
        }
    }
}

impl TextAnalysers {
    /// Everything the features need from `text`.
    pub(crate) fn analyse(&mut self, text: &str) -> Analysed {
        let words = words(text);
        let cues = cues(&words);
        Analysed {
            terms: analyse(&mut self.content, text),
            numbers: numbers(text),
            words,
            cues,
        }
    }
}

/// Lower-cased maximal runs of alphanumeric characters.
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Counts the stance cues among `words`.
pub(crate) fn cues(words: &[String]) -> Cues {
    let mut cues = Cues::default();
    for word in words {
        if NEGATIONS.contains(&word.as_str()) {
            cues.negations += 1;
        }
        if UP.iter().any(|prefix| word.starts_with(prefix)) {
            cues.up += 1;
        }
        if DOWN.iter().any(|prefix| word.starts_with(prefix)) {
            cues.down += 1;
        }
    }
    cues
}

/// The numbers in `text`: runs of digits, with a '.' or ',' between two digits kept inside the
/// number ('.' as is, ',' dropped as a thousands separator).
pub(crate) fn numbers(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_digit() {
            current.push(c);
            continue;
        }
        let inner = (c == '.' || c == ',')
            && !current.is_empty()
            && chars.get(i + 1).is_some_and(char::is_ascii_digit);
        if inner {
            if c == '.' {
                current.push(c);
            }
        } else if !current.is_empty() {
            found.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        found.push(current);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_words_keeping_stop_words() {
        assert_eq!(
            words("The drug did NOT reduce IL-6 (p<0.05)."),
            ["the", "drug", "did", "not", "reduce", "il", "6", "p", "0", "05"]
        );
    }

    #[test]
    fn finds_numbers_with_decimal_points_and_thousands_separators() {
        assert_eq!(
            numbers("1,000 mice, 0.05 and 12.5%; at 3. Then 7,a"),
            ["1000", "0.05", "12.5", "3", "7"]
        );
        assert!(numbers("no digits").is_empty());
    }

    #[test]
    fn counts_cues_and_derives_direction_and_polarity() {
        let c = cues(&words("Statins do not reduce mortality"));
        assert_eq!(
            c,
            Cues {
                negations: 1,
                up: 0,
                down: 1
            }
        );
        assert!(c.negated());
        assert_eq!((c.direction(), c.polarity()), (-1.0, 1.0));
        let c = cues(&words("Higher doses increase risk but not never"));
        assert_eq!((c.negations, c.up, c.down), (2, 2, 0));
        assert!(!c.negated());
        assert_eq!((c.direction(), c.polarity()), (1.0, 1.0));
        assert_eq!(cues(&words("Neutral text")).direction(), 0.0);
    }

    #[test]
    fn analyses_terms_with_the_bm25_analyser() {
        let a = TextAnalysers::default().analyse("Mutations do not increase 2.5-fold risk");
        // "do" is not one of Lucene's stop words; "not" is.
        assert_eq!(
            a.terms,
            ["mutat", "do", "increas", "2", "5", "fold", "risk"]
        );
        assert_eq!(a.numbers, ["2.5"]);
        assert_eq!((a.cues.negations, a.cues.up, a.cues.down), (1, 1, 0));
    }
}
