//! The project's corpus and claims written to files in SciFact's formats, for the pipeline's
//! retrieval: a pipeline job's input, and the corpus `claimpool simulate`'s cal order searches.

use crate::error::{CommandError, CommandResult};
use crate::Lead;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use store::Db;

/// What [`corpus_and_claims`] wrote.
#[derive(Debug)]
pub struct Exported {
    /// `corpus.jsonl`: `doc_id`, `title`, `abstract`.
    pub corpus: PathBuf,
    /// `claims.jsonl`: `id`, `claim`.
    pub claims: PathBuf,
    pub documents: u64,
    pub claim_count: u64,
}

fn create(path: &Path) -> CommandResult<BufWriter<File>> {
    File::create(path)
        .map(BufWriter::new)
        .map_err(|e| CommandError::Internal(format!("writing {}: {e}", path.display())))
}

/// Writes the lead's project's documents and claims into `dir` (`corpus.jsonl`,
/// `claims.jsonl`), streaming them from the database.
pub async fn corpus_and_claims(db: &Db, lead: &Lead, dir: &Path) -> CommandResult<Exported> {
    let project = lead.project_id();
    let (corpus, claims) = (dir.join("corpus.jsonl"), dir.join("claims.jsonl"));
    let documents = store::jobs::export_corpus(db, project, &mut create(&corpus)?).await?;
    let claim_count = store::jobs::export_claims(db, project, &mut create(&claims)?).await?;
    Ok(Exported {
        corpus,
        claims,
        documents,
        claim_count,
    })
}
