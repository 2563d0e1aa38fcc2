//! A corpus import (SciFact or BEIR `corpus.jsonl`, plain or gzip): parsed into a staging file
//! first, so that nothing is written before the whole file is known good, then written in short
//! transactions that stay hidden until the last.

use super::chunked::{self, Written};
use super::file::{display_name, file_sha};
use super::parser::{flush, push_row, spawn_parser, stage_checked};
use super::problems::{format_error, NewIds};
use crate::error::CommandResult;
use crate::Lead;
use domain::formats::{CorpusFormat, CorpusReader};
use std::path::Path;
use store::import::{self as stored, DocRow, ImportReport, NewImport, BATCH, CORPUS_CHUNK_BATCHES};
use store::Db;

/// The name an import records a corpus format under.
fn format_name(format: CorpusFormat) -> &'static str {
    match format {
        CorpusFormat::SciFact => "scifact-corpus",
        CorpusFormat::Beir => "beir-corpus",
    }
}

/// Imports a corpus; `format` None detects it from the first line.
pub async fn corpus(
    db: &Db,
    lead: &Lead,
    path: &Path,
    format: Option<CorpusFormat>,
) -> CommandResult<ImportReport> {
    let (project_id, actor_id) = (lead.project_id(), lead.audit_id());
    // A crashed import of this file no longer stands in the way.
    stored::reclaim_abandoned(db).await?;
    let format = match format {
        Some(f) => f,
        None => CorpusFormat::detect_file(path).map_err(format_error)?,
    };
    let file = display_name(path);
    let sha = file_sha(path).await?;
    stored::refuse_repeat(db, project_id, "corpus", &file, &sha).await?;
    let reader = CorpusReader::open(path, format).map_err(format_error)?;
    let mut ids = NewIds::new(
        stored::doc_ids(db, project_id).await?.into_keys().collect(),
        "document",
        "doc_id",
    );
    let parser = spawn_parser(
        move |tx, problems| {
            let mut batch = Vec::with_capacity(BATCH);
            for item in reader {
                let Some(located) = problems.record(item) else {
                    continue;
                };
                let doc = located.record;
                let id = doc.doc_id.as_str().to_owned();
                if !ids.admit(&id, located.line, problems) {
                    continue;
                }
                let sentences =
                    serde_json::to_string(&doc.sentences).unwrap_or_else(|_| "[]".into());
                let extra = (!doc.extra.is_empty())
                    .then(|| serde_json::Value::Object(doc.extra).to_string());
                push_row(
                    &mut batch,
                    BATCH,
                    DocRow {
                        doc_id: id,
                        title: doc.title,
                        sentences,
                        extra,
                    },
                    tx,
                    problems,
                );
            }
            flush(batch, tx, problems);
        },
        file.clone(),
    )?;
    let mut staged = stage_checked(parser).await?;
    let new = NewImport {
        project_id,
        kind: "corpus",
        file: &file,
        sha: &sha,
        format: format_name(format),
        actor_id,
        lock_token: None,
    };
    chunked::import(db, new, async |chunked| {
        loop {
            let mut chunk = Vec::with_capacity(CORPUS_CHUNK_BATCHES);
            while chunk.len() < CORPUS_CHUNK_BATCHES {
                let batch: Vec<DocRow> = staged.next_batch(BATCH).await?;
                if batch.is_empty() {
                    break;
                }
                chunk.push(batch);
            }
            if chunk.is_empty() {
                break;
            }
            stored::write_documents(db, chunk, project_id, chunked.import_id()).await?;
        }
        Ok(Written {
            rows: staged.rows(),
            judgments: 0,
        })
    })
    .await
}
