//! The English analyser shared by indexing and querying, so a claim's terms match the index's.

use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer,
};

/// Name under which the analyser is registered in every claimpool index.
pub const ANALYZER_NAME: &str = "claimpool_en";

/// Tokens longer than this many bytes (sequences, hashes, URLs) are dropped.
const MAX_TOKEN_BYTES: usize = 40;

/// Split on non-alphanumerics, drop over-long tokens, lower-case, remove Lucene's English stop
/// words, and apply the Snowball English (Porter 2) stemmer.
pub fn english_analyzer() -> TextAnalyzer {
    let builder = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
        .filter(LowerCaser)
        .dynamic();
    // The stop word list is compiled in (feature "stopwords"), so `new` returns Some for English;
    // without it the analyser only loses stop word removal, which BM25's idf nearly cancels.
    let builder = match StopWordFilter::new(Language::English) {
        Some(stop_words) => builder.filter_dynamic(stop_words),
        None => builder,
    };
    builder
        .filter_dynamic(Stemmer::new(Language::English))
        .build()
}

/// The analysed terms of `text`, in order, repeats kept.
pub fn analyse(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut terms = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while let Some(token) = stream.next() {
        terms.push(token.text.clone());
    }
    terms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_cases_removes_stop_words_and_stems() {
        let mut analyzer = english_analyzer();
        let terms = analyse(
            &mut analyzer,
            "The Mutations are NOT associated with +increased (risk): \"Cancers\"-studies",
        );
        assert_eq!(
            terms,
            ["mutat", "associ", "increas", "risk", "cancer", "studi"]
        );
    }

    #[test]
    fn drops_over_long_tokens_and_keeps_numbers() {
        let mut analyzer = english_analyzer();
        let long = "x".repeat(MAX_TOKEN_BYTES + 1);
        let terms = analyse(&mut analyzer, &format!("{long} 1,000 IL-6"));
        assert_eq!(terms, ["1", "000", "il", "6"]);
    }
}
