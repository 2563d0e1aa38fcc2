//! The frame of a chunked import (corpus, claims): the import recorded as `writing`, its chunks
//! written hidden, then the last transaction that makes them appear whole, or, when anything
//! failed, what was written removed.

use crate::error::CommandResult;
use store::import::{self as stored, Chunked, ImportReport, NewImport};
use store::Db;

/// What a chunked import wrote: its rows and the judgments that came with them.
pub(super) struct Written {
    pub rows: u64,
    pub judgments: u64,
}

/// Runs the chunked import `import`: `write` writes its chunks (each in a transaction of its
/// own, hidden while the import is `writing`), then the import is completed with its report.
pub(super) async fn import(
    db: &Db,
    import: NewImport<'_>,
    write: impl AsyncFnOnce(&Chunked) -> CommandResult<Written>,
) -> CommandResult<ImportReport> {
    let (project_id, actor_id) = (import.project_id, import.actor_id);
    let (file, format) = (import.file.to_owned(), import.format.to_owned());
    let chunked = stored::begin_chunked(db, import).await?;
    let result = async {
        let written = write(&chunked).await?;
        let report = ImportReport {
            import_id: chunked.import_id(),
            file,
            format,
            rows: written.rows,
            systems: vec![],
            judgments: written.judgments,
            missing_docs: 0,
        };
        // The last transaction: the import appears whole.
        stored::complete(db, project_id, chunked.import_id(), actor_id, &report).await?;
        Ok(report)
    }
    .await;
    stored::finish_chunked(db, chunked, result).await
}
