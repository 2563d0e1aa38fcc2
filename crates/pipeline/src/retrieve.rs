//! BM25 retrieval of abstracts for a claim, without any query syntax.

use super::analyzer::{analyse, english_analyzer};
use super::error::PipelineError;
use super::index::open_index;
use super::passage::{decode, Passage};
use super::schema::IndexFields;
use domain::ids::DocId;
use std::path::{Path, PathBuf};
use tantivy::collector::TopDocs;
use tantivy::query::{Bm25Weight, BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DocAddress, ReloadPolicy, Searcher, TantivyDocument, Term};

/// One retrieved abstract.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub doc_id: DocId,
    /// The BM25 score (k1 = 1.2, b = 0.75) of the abstract for the claim.
    pub score: f32,
    /// 1-based position in the ranking.
    pub rank: u32,
}

/// The top abstracts for a claim, best first, and the claim's BM25 ceiling.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranking {
    /// Sorted by score, highest first, ties by doc id (so a ranking does not depend on how
    /// the index happens to be split into segments).
    pub hits: Vec<Hit>,
    /// The score an abstract would get if every claim term saturated in it:
    /// sum over the claim's terms of count x idf x (k1 + 1). Every hit's score is below it, and
    /// `score / ceiling` is the share of the claim's term weight an abstract matches, a number
    /// that means the same for short and long claims. 0 when the claim has no term.
    pub ceiling: f32,
}

/// A claim as BM25 sees it: its distinct analysed terms with their counts, in first-seen order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimTerms(Vec<(String, u32)>);

impl ClaimTerms {
    /// The distinct terms and how often each occurs in the claim.
    pub fn terms(&self) -> &[(String, u32)] {
        &self.0
    }

    /// Whether the claim has no term (only stop words or punctuation): it matches nothing.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// With the shortest length and the largest frequency, a term's BM25 contribution is its
/// saturation value, count x idf x (k1 + 1), to f32 precision (tf / (tf + k1 (1 - b)) rounds
/// to 1). Asking tantivy for it keeps its k1 and idf the only ones in play.
const SHORTEST_FIELD_NORM: u8 = 0;

/// One hit past `k` is fetched, to see whether a tie straddles the cut.
const TIE_PROBE: usize = 1;

/// Searches an index built by [`super::index::build_index`]. `Send + Sync`: share one
/// retriever between threads to retrieve claims in parallel.
pub struct Retriever {
    dir: PathBuf,
    fields: IndexFields,
    searcher: Searcher,
    analyzer: TextAnalyzer,
}

impl Retriever {
    /// Opens the index in `dir`.
    pub fn open(dir: &Path) -> Result<Retriever, PipelineError> {
        let (index, fields) = open_index(dir)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(PipelineError::tantivy("opening a reader", dir))?;
        Ok(Retriever {
            dir: dir.to_path_buf(),
            fields,
            searcher: reader.searcher(),
            analyzer: english_analyzer(),
        })
    }

    /// The index's directory, its fields and the searcher over its one committed state, for
    /// the other readers of the crate ([`super::search::CorpusSearch`]).
    pub(crate) fn parts(&self) -> (&Path, IndexFields, &Searcher) {
        (&self.dir, self.fields, &self.searcher)
    }

    /// Number of abstracts in the index.
    pub fn num_docs(&self) -> u64 {
        self.searcher.num_docs()
    }

    /// The claim's terms, through the same analyser as the index.
    pub fn claim_terms(&self, claim_text: &str) -> ClaimTerms {
        let mut analyzer = self.analyzer.clone();
        let mut counted: Vec<(String, u32)> = Vec::new();
        for term in analyse(&mut analyzer, claim_text) {
            match counted.iter_mut().find(|(seen, _)| *seen == term) {
                Some((_, count)) => *count += 1,
                None => counted.push((term, 1)),
            }
        }
        ClaimTerms(counted)
    }

    /// The `k` best abstracts for the claim, best first. A claim with no term gets no hit.
    pub fn retrieve(&self, claim_text: &str, k: usize) -> Result<Vec<Hit>, PipelineError> {
        Ok(self.search(&self.claim_terms(claim_text), k)?.hits)
    }

    /// The `k` best abstracts for the claim's terms and the claim's BM25 ceiling.
    ///
    /// The query is a disjunction of one term query per token of the claim, so its score is
    /// exactly the BM25 sum over the claim's tokens.
    pub fn search(&self, claim: &ClaimTerms, k: usize) -> Result<Ranking, PipelineError> {
        if claim.is_empty() {
            return Ok(Ranking {
                hits: Vec::new(),
                ceiling: 0.0,
            });
        }
        let ceiling = self.ceiling(claim)?;
        let query = self.query(claim);
        let hits = self.top_hits(&query, k)?;
        Ok(Ranking {
            hits: hits.into_iter().map(|(hit, _)| hit).collect(),
            ceiling,
        })
    }

    /// Like [`Retriever::search`], with each hit's stored title and sentences (same order as
    /// the hits). Needs an index that stores them (built by this version of claimpool).
    pub fn search_passages(
        &self,
        claim: &ClaimTerms,
        k: usize,
    ) -> Result<(Ranking, Vec<Passage>), PipelineError> {
        let passage_field = self
            .fields
            .passage
            .ok_or_else(|| PipelineError::NoPassages {
                dir: self.dir.clone(),
            })?;
        if claim.is_empty() {
            let ranking = Ranking {
                hits: Vec::new(),
                ceiling: 0.0,
            };
            return Ok((ranking, Vec::new()));
        }
        let ceiling = self.ceiling(claim)?;
        let query = self.query(claim);
        let mut hits = Vec::new();
        let mut passages = Vec::new();
        for (hit, address) in self.top_hits(&query, k)? {
            let doc: TantivyDocument = self
                .searcher
                .doc(address)
                .map_err(self.tantivy_err("reading a stored document"))?;
            let stored = doc
                .get_first(passage_field)
                .and_then(|value| value.as_str())
                .ok_or_else(|| PipelineError::BadPassage {
                    dir: self.dir.clone(),
                    doc_id: hit.doc_id.clone(),
                    problem: "missing".to_owned(),
                })?;
            let passage = decode(stored).map_err(|e| PipelineError::BadPassage {
                dir: self.dir.clone(),
                doc_id: hit.doc_id.clone(),
                problem: e.to_string(),
            })?;
            hits.push(hit);
            passages.push(passage);
        }
        Ok((Ranking { hits, ceiling }, passages))
    }

    /// The claim's BM25 ceiling: sum over its terms of count x idf x (k1 + 1).
    fn ceiling(&self, claim: &ClaimTerms) -> Result<f32, PipelineError> {
        let mut ceiling = 0.0f32;
        for (text, count) in &claim.0 {
            let term = Term::from_field_text(self.fields.text, text);
            ceiling += Bm25Weight::for_terms(&self.searcher, std::slice::from_ref(&term))
                .map_err(self.tantivy_err("reading term statistics"))?
                .boost_by(*count as f32)
                .score(SHORTEST_FIELD_NORM, u32::MAX);
        }
        Ok(ceiling)
    }

    /// The disjunction of one term query per token of the claim.
    pub(crate) fn query(&self, claim: &ClaimTerms) -> BooleanQuery {
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::with_capacity(claim.0.len());
        for (text, count) in &claim.0 {
            let term = Term::from_field_text(self.fields.text, text);
            // A repeated term is repeated as a clause rather than boosted: tantivy prunes
            // (block-max WAND) only disjunctions of plain term queries.
            for _ in 0..*count {
                let query = TermQuery::new(term.clone(), IndexRecordOption::WithFreqs);
                clauses.push((Occur::Should, Box::new(query) as Box<dyn Query>));
            }
        }
        BooleanQuery::new(clauses)
    }

    /// The top `k` hits with their addresses, ties at the cut resolved by doc id: fetches past
    /// `k` until the last fetched score is below the k-th (or the matches run out).
    pub(crate) fn top_hits(
        &self,
        query: &BooleanQuery,
        k: usize,
    ) -> Result<Vec<(Hit, DocAddress)>, PipelineError> {
        if k == 0 {
            return Ok(Vec::new());
        }
        let mut limit = k.saturating_add(TIE_PROBE);
        let scored = loop {
            let scored: Vec<(f32, DocAddress)> = self
                .searcher
                .search(query, &TopDocs::with_limit(limit).order_by_score())
                .map_err(self.tantivy_err("searching"))?;
            let cut_is_clean = scored.len() < limit
                || match (scored.get(k - 1), scored.last()) {
                    (Some((kth, _)), Some((last, _))) => last < kth,
                    _ => true,
                };
            if cut_is_clean {
                break scored;
            }
            limit = limit.saturating_mul(2);
        };
        let mut hits = Vec::with_capacity(scored.len());
        for (score, address) in scored {
            hits.push((score, self.doc_id(address)?, address));
        }
        hits.sort_by(|(sa, da, _), (sb, db, _)| sb.total_cmp(sa).then_with(|| da.cmp(db)));
        hits.truncate(k);
        Ok(hits
            .into_iter()
            .zip(1u32..)
            .map(|((score, doc_id, address), rank)| {
                (
                    Hit {
                        doc_id,
                        score,
                        rank,
                    },
                    address,
                )
            })
            .collect())
    }

    /// The stored doc id of an indexed document.
    fn doc_id(&self, address: DocAddress) -> Result<DocId, PipelineError> {
        let bad = |problem: String| PipelineError::BadStoredId {
            dir: self.dir.clone(),
            address: format!("{}/{}", address.segment_ord, address.doc_id),
            problem,
        };
        let doc: TantivyDocument = self
            .searcher
            .doc(address)
            .map_err(self.tantivy_err("reading a stored document"))?;
        let text = doc
            .get_first(self.fields.doc_id)
            .and_then(|value| value.as_str())
            .ok_or_else(|| bad("missing".to_owned()))?;
        DocId::parse(text).map_err(|err| bad(format!("{text:?} {err}")))
    }

    fn tantivy_err(
        &self,
        context: &'static str,
    ) -> impl Fn(tantivy::TantivyError) -> PipelineError + '_ {
        PipelineError::tantivy(context, &self.dir)
    }
}
