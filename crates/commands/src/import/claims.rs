//! A claims import (SciFact or SciFact-Open `claims.jsonl`). Evidence in the file becomes final
//! judgments with provenance `citation` (or `pooling`, as a SciFact-Open file says); the cited
//! documents without evidence were read by SciFact's annotators and become final NEI judgments
//! with provenance `citation`. A claims file without evidence imports claims only.

use super::chunked::{self, Written};
use super::file::{display_name, file_sha};
use super::parser::{flush, push_row, spawn_parser, stage_checked};
use super::problems::{format_error, NewIds};
use crate::error::CommandResult;
use crate::Lead;
use domain::formats::{ClaimsReader, EvidenceProvenance};
use domain::ids::DocId;
use domain::label::Label;
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use store::import::{self as stored, ClaimRow, ImportReport, NewImport, BATCH, CLAIMS_CHUNK};
use store::Db;

/// The name an import records the claims format under.
const FORMAT: &str = "scifact-claims";

/// Imports claims; see the module's documentation.
pub async fn claims(db: &Db, lead: &Lead, path: &Path) -> CommandResult<ImportReport> {
    let (project_id, actor_id) = (lead.project_id(), lead.audit_id());
    // A crashed import of this file no longer stands in the way.
    stored::reclaim_abandoned(db).await?;
    let file = display_name(path);
    let sha = file_sha(path).await?;
    stored::refuse_repeat(db, project_id, "claims", &file, &sha).await?;
    let reader = ClaimsReader::open(path).map_err(format_error)?;
    let docs = Arc::new(stored::doc_ids(db, project_id).await?);
    let mut ids = NewIds::new(
        stored::claim_ids(db, project_id)
            .await?
            .into_keys()
            .collect(),
        "claim",
        "id",
    );
    let parser = spawn_parser(
        move |tx, problems| {
            let mut batch = Vec::with_capacity(BATCH);
            for item in reader {
                let Some(located) = problems.record(item) else {
                    continue;
                };
                let (line, claim) = (located.line, located.record);
                let id = claim.id.as_str().to_owned();
                if !ids.admit(&id, line, problems) {
                    continue;
                }
                let mut judged = Vec::new();
                let mut evidence_docs = HashSet::new();
                for ev in &claim.evidence {
                    let Some(&doc) = docs.get(ev.doc_id.as_str()) else {
                        let field = format!("evidence.{}", ev.doc_id);
                        problems.at(
                            line,
                            Some(&field),
                            format!("document {} is not in the corpus", ev.doc_id),
                        );
                        continue;
                    };
                    evidence_docs.insert(ev.doc_id.clone());
                    let provenance = match ev.provenance {
                        Some(EvidenceProvenance::Pooling) => "pooling",
                        Some(EvidenceProvenance::Citation) | None => "citation",
                    };
                    let sets =
                        serde_json::to_string(&ev.sentence_sets).unwrap_or_else(|_| "[]".into());
                    judged.push((doc, ev.label, sets, provenance.to_owned()));
                }
                for (i, cited) in claim.cited_doc_ids.iter().flatten().enumerate() {
                    // A claim may cite one document twice; its judgment is written once.
                    if !evidence_docs.insert(cited.clone()) {
                        continue;
                    }
                    match docs.get(cited.as_str()) {
                        Some(&doc) => {
                            judged.push((doc, Label::Nei, "[]".to_owned(), "citation".to_owned()))
                        }
                        None => {
                            let field = format!("cited_doc_ids.{i}");
                            problems.at(
                                line,
                                Some(&field),
                                format!("document {cited} is not in the corpus"),
                            );
                        }
                    }
                }
                let cited = claim.cited_doc_ids.as_ref().map(|ids| {
                    serde_json::to_string(&ids.iter().map(DocId::as_str).collect::<Vec<_>>())
                        .unwrap_or_default()
                });
                push_row(
                    &mut batch,
                    BATCH,
                    ClaimRow {
                        claim_id: id,
                        text: claim.text,
                        cited,
                        judged,
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
        kind: "claims",
        file: &file,
        sha: &sha,
        format: FORMAT,
        actor_id,
        lock_token: None,
    };
    chunked::import(db, new, async |chunked| {
        let mut written = Written {
            rows: 0,
            judgments: 0,
        };
        loop {
            let batch: Vec<ClaimRow> = staged.next_batch(CLAIMS_CHUNK).await?;
            if batch.is_empty() {
                break;
            }
            let (rows, judgments) = stored::write_claims(db, batch, project_id, chunked).await?;
            written.rows += rows;
            written.judgments += judgments;
        }
        Ok(written)
    })
    .await
}
