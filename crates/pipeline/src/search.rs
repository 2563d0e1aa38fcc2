//! Searching a corpus the way a person does (issue 38, "Search and judge"): BM25 over titles
//! and abstracts, 20 results a page, each with its title and a snippet of its abstract with the
//! query's words marked, and the query's words it contains.
//!
//! The query is plain words, never query syntax: it goes through the index's analyser like a
//! claim does ([`Retriever::claim_terms`]), so quotes, colons, parentheses, `AND` or `-` typed
//! by a person are only separators (or, for `AND`, a word like any other) and never an error.
//! Ranking is [`Retriever`]'s: the BM25 sum over the query's tokens, ties by doc id, so a page
//! continues the one before it exactly.
//!
//! [`SearchIndex`] keeps the index of a corpus in a cache directory, built when missing; see
//! [`cache`].

pub mod cache;

pub use cache::{counted, Counted, SearchIndex};

use super::analyzer::english_analyzer;
use super::error::PipelineError;
use super::passage::decode;
use super::retrieve::{ClaimTerms, Hit, Retriever};
use domain::ids::DocId;
use std::path::Path;
use tantivy::collector::Count;
use tantivy::schema::{Field, Value};
use tantivy::snippet::SnippetGenerator;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DocAddress, TantivyDocument};

/// Results on a page.
pub const PAGE_SIZE: usize = 20;

/// Longest query searched, in characters (a claim is one or two sentences; a longer text is
/// a paste, not a query).
pub const MAX_QUERY_CHARS: usize = 1_000;

/// Results served: pages past rank 10,000 are refused ([`PipelineError::PageTooDeep`]), which
/// bounds the work (and memory) a page number from a request can ask for.
pub const MAX_RANK: usize = 10_000;

/// The last page served, 0-based.
pub const MAX_PAGE: usize = MAX_RANK / PAGE_SIZE - 1;

/// Longest snippet, in bytes of the abstract (tantivy's fragment length, about two lines).
const SNIPPET_BYTES: usize = 240;

/// Put before a snippet that does not start the abstract, and after one that does not end it.
const ELLIPSIS: &str = "…";

/// A text with the query's words marked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Highlighted {
    pub text: String,
    /// Byte ranges `(start, end)` of `text` holding a word of the query (after analysis: a
    /// word marks wherever the text has a word with the same stem), in order, not overlapping;
    /// each range starts and ends on a character boundary.
    pub marks: Vec<(usize, usize)>,
}

impl Highlighted {
    /// The marked words, in order.
    pub fn marked(&self) -> impl Iterator<Item = &str> + '_ {
        self.marks
            .iter()
            .filter_map(|&(start, end)| self.text.get(start..end))
    }
}

/// One result.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHit {
    /// 1-based position over the whole result list (page 1 starts at 21).
    pub rank: u32,
    pub doc_id: DocId,
    /// The BM25 score (k1 = 1.2, b = 0.75) of the abstract for the query.
    pub score: f32,
    /// The whole title.
    pub title: Highlighted,
    /// The passage of the abstract (at most about 240 bytes) with the most of the query's rare
    /// words, with "…" where it is cut; the abstract's opening when only the title matches.
    pub snippet: Highlighted,
    /// The query's words that the title or abstract contains (by stem), each once, in the
    /// order of the query, lower-cased as typed.
    pub matched_terms: Vec<String>,
}

/// One page of results.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchPage {
    /// Abstracts that contain at least one of the query's words.
    pub total_hits: u64,
    /// 0-based page number, as asked.
    pub page: usize,
    /// At most [`PAGE_SIZE`] results, ranks `page * 20 + 1` on; none past the last page.
    pub hits: Vec<SearchHit>,
}

impl SearchPage {
    /// Pages there are to serve: the results up to [`MAX_RANK`], 20 a page.
    pub fn page_count(&self) -> usize {
        let served = usize::try_from(self.total_hits).map_or(MAX_RANK, |n| n.min(MAX_RANK));
        served.div_ceil(PAGE_SIZE)
    }
}

/// Searches an index built by [`super::index::build_index`] (by a claimpool that stores the
/// abstracts' text). `Send + Sync`: one per index, shared by the requests.
pub struct CorpusSearch {
    retriever: Retriever,
    passage: Field,
    analyzer: TextAnalyzer,
}

impl CorpusSearch {
    /// Opens the index in `dir`.
    pub fn open(dir: &Path) -> Result<CorpusSearch, PipelineError> {
        let retriever = Retriever::open(dir)?;
        let (dir, fields, _) = retriever.parts();
        let passage = fields.passage.ok_or_else(|| PipelineError::NoPassages {
            dir: dir.to_path_buf(),
        })?;
        Ok(CorpusSearch {
            retriever,
            passage,
            analyzer: english_analyzer(),
        })
    }

    /// Number of abstracts in the index.
    pub fn num_docs(&self) -> u64 {
        self.retriever.num_docs()
    }

    /// The index's directory.
    pub fn dir(&self) -> &Path {
        self.retriever.parts().0
    }

    /// Page `page` (0-based) of the results for `query`, 20 a page, best first.
    ///
    /// A query without a searchable word (empty, blank, only stop words or punctuation) gets
    /// an empty page. Refused: a query over [`MAX_QUERY_CHARS`] characters
    /// ([`PipelineError::QueryTooLong`]) and a page past [`MAX_PAGE`]
    /// ([`PipelineError::PageTooDeep`]). A page past the last one is empty, with the total.
    pub fn search(&self, query: &str, page: usize) -> Result<SearchPage, PipelineError> {
        let chars = query.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(PipelineError::QueryTooLong {
                chars,
                max: MAX_QUERY_CHARS,
            });
        }
        let terms = self.retriever.claim_terms(query);
        if terms.is_empty() {
            return Ok(SearchPage {
                total_hits: 0,
                page,
                hits: Vec::new(),
            });
        }
        if page > MAX_PAGE {
            return Err(PipelineError::PageTooDeep {
                page,
                max_page: MAX_PAGE,
                max_rank: MAX_RANK,
            });
        }
        let (dir, fields, searcher) = self.retriever.parts();
        let tantivy_query = self.retriever.query(&terms);
        let total_hits = searcher
            .search(&tantivy_query, &Count)
            .map_err(PipelineError::tantivy("counting the results", dir))?
            as u64;
        let start = page * PAGE_SIZE;
        if start as u64 >= total_hits {
            return Ok(SearchPage {
                total_hits,
                page,
                hits: Vec::new(),
            });
        }
        let top = self.retriever.top_hits(&tantivy_query, start + PAGE_SIZE)?;
        let mut snippets = SnippetGenerator::create(searcher, &tantivy_query, fields.text)
            .map_err(PipelineError::tantivy("preparing the snippets", dir))?;
        snippets.set_max_num_chars(SNIPPET_BYTES);
        let words = QueryWords::new(&mut self.analyzer.clone(), query, &terms);
        let mut analyzer = self.analyzer.clone();
        let hits = top
            .into_iter()
            .skip(start)
            .map(|(hit, address)| self.hit(hit, address, &words, &snippets, &mut analyzer))
            .collect::<Result<_, _>>()?;
        Ok(SearchPage {
            total_hits,
            page,
            hits,
        })
    }

    /// A hit with its title, snippet and matched words.
    fn hit(
        &self,
        hit: Hit,
        address: DocAddress,
        words: &QueryWords,
        snippets: &SnippetGenerator,
        analyzer: &mut TextAnalyzer,
    ) -> Result<SearchHit, PipelineError> {
        let (dir, _, searcher) = self.retriever.parts();
        let bad = |problem: String| PipelineError::BadPassage {
            dir: dir.to_path_buf(),
            doc_id: hit.doc_id.clone(),
            problem,
        };
        let doc: TantivyDocument = searcher
            .doc(address)
            .map_err(PipelineError::tantivy("reading a stored document", dir))?;
        let stored = doc
            .get_first(self.passage)
            .and_then(|value| value.as_str())
            .ok_or_else(|| bad("missing".to_owned()))?;
        let passage = decode(stored).map_err(|e| bad(e.to_string()))?;
        let mut matched = vec![false; words.0.len()];
        let title = mark_all(analyzer, passage.title, words, &mut matched);
        let text = passage.sentences.join(" ");
        for_each_token(analyzer, &text, |term, _, _| {
            if let Some(i) = words.position(term) {
                matched[i] = true;
            }
        });
        let snippet = snippet(snippets, &text);
        let matched_terms = words
            .0
            .iter()
            .zip(matched)
            .filter(|(_, matched)| *matched)
            .map(|((_, word), _)| word.clone())
            .collect();
        Ok(SearchHit {
            rank: hit.rank,
            doc_id: hit.doc_id,
            score: hit.score,
            title,
            snippet,
            matched_terms,
        })
    }
}

/// The query's distinct terms in order, each with the first word of the query (lower-cased)
/// that gave it.
struct QueryWords(Vec<(String, String)>);

impl QueryWords {
    fn new(analyzer: &mut TextAnalyzer, query: &str, terms: &ClaimTerms) -> QueryWords {
        let mut words: Vec<(String, String)> = Vec::with_capacity(terms.terms().len());
        for_each_token(analyzer, query, |term, start, end| {
            if !words.iter().any(|(seen, _)| seen == term) {
                let word = query.get(start..end).unwrap_or(term).to_lowercase();
                words.push((term.to_owned(), word));
            }
        });
        QueryWords(words)
    }

    fn position(&self, term: &str) -> Option<usize> {
        self.0.iter().position(|(seen, _)| seen == term)
    }
}

/// Calls `f` with each analysed term of `text` and its byte range in `text`.
fn for_each_token(analyzer: &mut TextAnalyzer, text: &str, mut f: impl FnMut(&str, usize, usize)) {
    let mut stream = analyzer.token_stream(text);
    while let Some(token) = stream.next() {
        f(&token.text, token.offset_from, token.offset_to);
    }
}

/// `text` with every word of the query marked (noting which words occur in `matched`).
fn mark_all(
    analyzer: &mut TextAnalyzer,
    text: String,
    words: &QueryWords,
    matched: &mut [bool],
) -> Highlighted {
    let mut marks = Vec::new();
    for_each_token(analyzer, &text, |term, start, end| {
        if let Some(i) = words.position(term) {
            matched[i] = true;
            marks.push((start, end));
        }
    });
    Highlighted { text, marks }
}

/// tantivy's best fragment of `text` for the query, or the opening of `text` when it has none
/// of the query's words. The fragment runs from a word to a word; punctuation or stop words
/// before or after it are kept when nothing else is (so an abstract short enough is whole).
fn snippet(snippets: &SnippetGenerator, text: &str) -> Highlighted {
    let snippet = snippets.snippet(text);
    if snippet.is_empty() {
        return opening(text);
    }
    let range = snippet.fragment_range();
    let (Some(before), Some(after)) = (text.get(..range.start), text.get(range.end..)) else {
        return opening(text);
    };
    let is_word = |c: char| c.is_alphanumeric();
    let cut_before = before.chars().any(is_word);
    let cut_after = after.chars().any(is_word);
    let start = if cut_before { range.start } else { 0 };
    let end = if cut_after { range.end } else { text.len() };
    let mut out = String::with_capacity(end - start + 2 * (ELLIPSIS.len() + 1));
    if cut_before {
        out.push_str(ELLIPSIS);
        out.push(' ');
    }
    let shift = out.len() + (range.start - start);
    out.push_str(text.get(start..end).unwrap_or(snippet.fragment()));
    if cut_after {
        out.push(' ');
        out.push_str(ELLIPSIS);
    }
    let marks = snippet
        .highlighted()
        .iter()
        .map(|marked| (marked.start + shift, marked.end + shift))
        .collect();
    Highlighted { text: out, marks }
}

/// The first [`SNIPPET_BYTES`] of `text`, cut after a whole word, unmarked.
fn opening(text: &str) -> Highlighted {
    if text.len() <= SNIPPET_BYTES {
        return Highlighted {
            text: text.to_owned(),
            marks: Vec::new(),
        };
    }
    let mut limit = SNIPPET_BYTES;
    while !text.is_char_boundary(limit) {
        limit -= 1;
    }
    let head = &text[..limit];
    // Cut at the last space unless the next character starts a word anyway.
    let cut = match text[limit..].chars().next() {
        Some(next) if next.is_whitespace() => head,
        _ => head
            .rfind(char::is_whitespace)
            .map_or(head, |at| &head[..at]),
    };
    Highlighted {
        text: format!("{} {ELLIPSIS}", cut.trim_end()),
        marks: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
