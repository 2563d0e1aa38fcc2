//! Search and judge (issue 38): BM25 search of a project's corpus for a claim, and a result
//! judged by its finder as a pair found by search.
//!
//! The index is derived data ([`Searches`]): each server keeps its own copy in its cache
//! directory, built from the database the first time someone searches the project (a search
//! meanwhile answers how far the build is) and again when the corpus changes (its fingerprint,
//! the corpus imports' ids and hashes and the document count, changes). Several servers on one
//! PostgreSQL database each build their own.
//!
//! Who may: a member of the project (annotator or lead) who confirmed the current guidelines,
//! and, for an annotator, one admitted to real items (past the qualification, if the project
//! asks one): the same people the queue serves. Results say which pairs the caller judged and
//! which are pooled; nothing of systems, scores or other people's labels.

use crate::access::ProjectCaller;
use crate::error::{CommandError, CommandResult};
use domain::annotation::AnnotatorId;
use domain::ids::{ClaimId, DocId};
use domain::model::search::{
    FoundPair, Marked, SearchAnswer, SearchResult, SearchResults, MAX_QUERY_CHARS,
};
use pipeline::search::{counted, CorpusSearch, SearchIndex, SearchPage, MAX_RANK};
use pipeline::Highlighted;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use store::Db;

/// The search indexes of one server: one per project, in `root/<project id>/`.
pub struct Searches {
    root: PathBuf,
    /// Kept while the server runs when the root is a temporary directory of its own.
    _temporary: Option<tempfile::TempDir>,
    projects: Mutex<HashMap<i64, Slot>>,
}

/// A project's index as this server has it.
enum Slot {
    Ready {
        fingerprint: String,
        search: Arc<CorpusSearch>,
    },
    Building {
        fingerprint: String,
        done: Arc<AtomicU64>,
        total: u64,
    },
    /// The last build failed: the next search tries again.
    Failed {
        fingerprint: String,
        message: String,
    },
}

impl std::fmt::Debug for Searches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Searches")
            .field("root", &self.root)
            .finish()
    }
}

impl Searches {
    /// Indexes kept under `root` (created when first needed), which outlive the server: the
    /// next start opens them instead of building.
    pub fn in_dir(root: PathBuf) -> Searches {
        Searches {
            root,
            _temporary: None,
            projects: Mutex::default(),
        }
    }

    /// Indexes in a temporary directory removed with the server (tests, demos).
    pub fn temporary() -> std::io::Result<Searches> {
        let dir = tempfile::Builder::new()
            .prefix("claimpool-search-")
            .tempdir()?;
        Ok(Searches {
            root: dir.path().to_path_buf(),
            _temporary: Some(dir),
            projects: Mutex::default(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The project's index if it is built for `fingerprint`; otherwise starts building it (once)
    /// and says how far it is.
    fn ready_or_start(
        self: &Arc<Self>,
        db: &Db,
        project_id: i64,
        fingerprint: String,
        total: u64,
    ) -> CommandResult<Result<Arc<CorpusSearch>, (u64, u64)>> {
        let mut projects = self
            .projects
            .lock()
            .map_err(|_| CommandError::Internal("the search index table is poisoned".into()))?;
        match projects.get(&project_id) {
            Some(Slot::Ready {
                fingerprint: f,
                search,
            }) if *f == fingerprint => return Ok(Ok(search.clone())),
            Some(Slot::Building {
                fingerprint: f,
                done,
                total,
            }) if *f == fingerprint => return Ok(Err((done.load(Ordering::Relaxed), *total))),
            Some(Slot::Failed {
                fingerprint: f,
                message,
            }) if *f == fingerprint => {
                tracing::warn!(project_id, %message, "building the search index again");
            }
            _ => {}
        }
        let done = Arc::new(AtomicU64::new(0));
        projects.insert(
            project_id,
            Slot::Building {
                fingerprint: fingerprint.clone(),
                done: done.clone(),
                total,
            },
        );
        drop(projects);
        let (this, db) = (self.clone(), db.clone());
        tokio::spawn(async move {
            let built = this.build(&db, project_id, &fingerprint, total, done).await;
            let slot = match built {
                Ok(search) => Slot::Ready {
                    fingerprint,
                    search: Arc::new(search),
                },
                Err(e) => {
                    tracing::warn!(project_id, error = %e, "the search index was not built");
                    Slot::Failed {
                        fingerprint,
                        message: e.to_string(),
                    }
                }
            };
            if let Ok(mut projects) = this.projects.lock() {
                projects.insert(project_id, slot);
            }
        });
        Ok(Err((0, total)))
    }

    /// Builds (or opens, when this cache has it already) the project's index: the corpus is
    /// exported from the database to a temporary file first (seconds, so no read of the
    /// database stays open while the index is built), then indexed on a bulk thread.
    async fn build(
        &self,
        db: &Db,
        project_id: i64,
        fingerprint: &str,
        total: u64,
        done: Arc<AtomicU64>,
    ) -> CommandResult<CorpusSearch> {
        let dir = self.root.join(project_id.to_string());
        let opened = {
            let (dir, fingerprint) = (dir.clone(), fingerprint.to_owned());
            tokio::task::spawn_blocking(move || SearchIndex::open(&dir, &fingerprint))
                .await
                .map_err(|e| CommandError::Internal(format!("opening the search index: {e}")))?
        };
        if let Ok(Some(search)) = opened {
            return Ok(search);
        }
        std::fs::create_dir_all(&self.root).map_err(|e| {
            CommandError::Internal(format!("creating {}: {e}", self.root.display()))
        })?;
        let corpus = tempfile::Builder::new()
            .prefix(".corpus-")
            .suffix(".jsonl")
            .tempfile_in(&self.root)
            .map_err(|e| CommandError::Internal(format!("a file for the corpus export: {e}")))?;
        {
            let file = corpus
                .as_file()
                .try_clone()
                .map_err(|e| CommandError::Internal(format!("the corpus export: {e}")))?;
            let mut out = std::io::BufWriter::new(file);
            store::jobs::export_corpus(db, project_id, &mut out).await?;
        }
        let fingerprint = fingerprint.to_owned();
        crate::background::spawn("search index", move || {
            let docs = pipeline::generate::corpus_index_docs(corpus.path())
                .map_err(|e| format!("reading the exported corpus: {e}"))?;
            SearchIndex::try_ensure(&dir, &fingerprint, counted(docs, total), |n, _| {
                done.store(n, Ordering::Relaxed);
            })
            .map_err(|e| e.to_string())
        })?
        .join()
        .await?
        .map_err(|e| CommandError::Internal(format!("building the search index: {e}")))
    }
}

/// The fingerprint of a corpus: its imports (id, hash) and its document count.
fn fingerprint(imports: &[(i64, String)], documents: u64) -> String {
    let mut hash = Sha256::new();
    for (id, sha) in imports {
        hash.update(format!("{id}:{sha};"));
    }
    hash.update(format!("documents:{documents}"));
    format!("corpus-{}", &domain::hex::hex(&hash.finalize())[..32])
}

/// Refuses a caller the queue would not serve: guidelines to confirm, or an annotator not
/// admitted to real items.
async fn check_searcher(db: &Db, caller: &ProjectCaller) -> CommandResult<()> {
    let user = caller.user().id;
    if store::guidelines::to_confirm(db, caller.project_id(), user)
        .await?
        .is_some()
    {
        return Err(CommandError::Conflict(
            "confirm the project's current guidelines before searching".into(),
        ));
    }
    if !caller.is_lead()
        && !store::search::admitted(db, caller.project_id(), AnnotatorId(user)).await?
    {
        return Err(CommandError::Forbidden(
            "search opens once you are admitted to the project's real items".into(),
        ));
    }
    Ok(())
}

fn parse_claim(text: &str) -> CommandResult<ClaimId> {
    ClaimId::parse(text).map_err(|e| CommandError::Invalid(format!("claim id: {e}")))
}

fn marked(h: Highlighted) -> Marked {
    Marked {
        text: h.text,
        marks: h.marks,
    }
}

/// A page of the search for `query` among the project's abstracts, for claim `claim` (whose
/// pairs the results mark), or how far the index's build is.
pub async fn search(
    db: &Db,
    searches: &Arc<Searches>,
    caller: &ProjectCaller,
    claim_id: &str,
    query: &str,
    page: usize,
) -> CommandResult<SearchAnswer> {
    check_searcher(db, caller).await?;
    let project_id = caller.project_id();
    let claim_id = parse_claim(claim_id)?;
    // The claim is the project's (404 otherwise).
    let claim = store::search::claim_key(db, project_id, &claim_id).await?;
    let query = query.trim();
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(CommandError::Invalid(format!(
            "a query is at most {MAX_QUERY_CHARS} characters"
        )));
    }
    let (imports, documents) = store::search::corpus_imports(db, project_id).await?;
    if documents == 0 {
        return Err(CommandError::Conflict(
            "the project has no corpus to search yet".into(),
        ));
    }
    let index = match searches.ready_or_start(
        db,
        project_id,
        fingerprint(&imports, documents),
        documents,
    )? {
        Ok(index) => index,
        Err((done, total)) => return Ok(SearchAnswer::Indexing { done, total }),
    };
    let page_result: SearchPage = {
        let query = query.to_owned();
        tokio::task::spawn_blocking(move || index.search(&query, page))
            .await
            .map_err(|e| CommandError::Internal(format!("searching: {e}")))?
            .map_err(|e| CommandError::Invalid(e.to_string()))?
    };
    let (judged, pooled) =
        store::search::marks(db, project_id, claim, AnnotatorId(caller.user().id)).await?;
    let doc_ids: Vec<&str> = page_result.hits.iter().map(|h| h.doc_id.as_str()).collect();
    let mut papers = store::search::papers(db, project_id, &doc_ids).await?;
    let pages = page_result.page_count();
    Ok(SearchAnswer::Results(SearchResults {
        claim_id: claim_id.as_str().to_owned(),
        query: query.to_owned(),
        page,
        pages,
        total_hits: page_result.total_hits,
        results: page_result
            .hits
            .into_iter()
            .map(|hit| SearchResult {
                rank: hit.rank,
                paper: papers.remove(hit.doc_id.as_str()).unwrap_or_default(),
                judged_by_you: judged.contains(hit.doc_id.as_str()),
                in_pool: pooled.contains(hit.doc_id.as_str()),
                doc_id: hit.doc_id.as_str().to_owned(),
                title: marked(hit.title),
                snippet: marked(hit.snippet),
                matched_terms: hit.matched_terms,
            })
            .collect(),
    }))
}

/// The caller judges a pair they found by search: it joins the pool as found by them (the
/// query, the result's rank, the seconds spent searching) and is the next item of their queue,
/// a first pass; a second pass and adjudication follow as for any pooled pair. Returns the
/// item's assignment.
pub async fn judge_found(db: &Db, caller: &ProjectCaller, found: &FoundPair) -> CommandResult<i64> {
    check_searcher(db, caller).await?;
    let claim = parse_claim(&found.claim_id)?;
    let doc = DocId::parse(found.doc_id.as_str())
        .map_err(|e| CommandError::Invalid(format!("document id: {e}")))?;
    let query = found.query.trim();
    if query.is_empty() || query.chars().count() > MAX_QUERY_CHARS {
        return Err(CommandError::Invalid(format!(
            "the query that found the pair is 1 to {MAX_QUERY_CHARS} characters"
        )));
    }
    if found.rank == 0 || found.rank as usize > MAX_RANK {
        return Err(CommandError::Invalid(format!(
            "a result's rank is 1 to {MAX_RANK}"
        )));
    }
    let added = store::search::add_find(
        db,
        &store::search::NewFind {
            project_id: caller.project_id(),
            claim: &claim,
            doc: &doc,
            found_by: AnnotatorId(caller.user().id),
            query,
            result_rank: found.rank,
            seconds_searching: found.seconds_searching,
        },
    )
    .await?;
    Ok(added.assignment_id)
}

#[cfg(test)]
mod tests {
    use super::fingerprint;

    #[test]
    fn a_fingerprint_changes_with_any_import_or_the_document_count() {
        let one = vec![(1, "aa".to_owned())];
        let base = fingerprint(&one, 10);
        assert!(base.starts_with("corpus-") && base.len() == 7 + 32);
        assert_ne!(base, fingerprint(&one, 11));
        assert_ne!(base, fingerprint(&[(2, "aa".to_owned())], 10));
        assert_ne!(base, fingerprint(&[(1, "ab".to_owned())], 10));
        assert_ne!(
            base,
            fingerprint(&[(1, "aa".to_owned()), (3, "cc".to_owned())], 10)
        );
        assert_eq!(base, fingerprint(&one, 10));
    }
}
