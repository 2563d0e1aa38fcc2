//! A system run import (one system, or one per system the file names): parsed on a thread of
//! its own while the store's [`RunWriter`] writes its batches in short transactions; the run
//! appears whole when the last one commits, and a failed import removes what it wrote.

use super::file::{blocking, display_name, file_sha};
use super::parser::{flush, push_row, spawn_parser};
use super::problems::format_error;
use crate::background::Bulk;
use crate::error::{CommandError, CommandResult};
use crate::Lead;
use domain::formats::{RunFormat, RunReadOptions, RunReader, Scoring, ScoringTally};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use store::import::{
    self as stored, ImportReport, PredictionRow, RunKeys, RunWriter, SystemSpec, Written, RUN_BATCH,
};
use store::Db;

/// How to read a run file.
#[derive(Clone, Debug)]
pub struct RunImport {
    pub path: PathBuf,
    /// None: detected from the file.
    pub format: Option<RunFormat>,
    pub options: RunReadOptions,
    pub system: SystemSpec,
    /// Skip (and count) pairs whose document is not in the corpus instead of refusing the file.
    pub allow_missing_docs: bool,
}

/// What the parser learned about the systems of a run file.
#[derive(Default)]
struct RunSummary {
    names: Vec<String>,
    tallies: Vec<ScoringTally>,
    missing_docs: u64,
}

/// Imports a system run into the project, audited under `actor_id`.
pub async fn run(db: &Db, lead: &Lead, import: RunImport) -> CommandResult<ImportReport> {
    let (project_id, actor_id) = (lead.project_id(), lead.audit_id());
    // A crashed import of this file or of these systems no longer stands in the way.
    stored::reclaim_abandoned(db).await?;
    let path = import.path.clone();
    let file = display_name(&path);
    let format = match import.format {
        Some(f) => f,
        None => RunFormat::detect_file(&path).map_err(format_error)?,
    };
    let opened_path = path.clone();
    let options = RunReadOptions {
        one_system: import.system.name.is_some(),
        ..import.options.clone()
    };
    let reader =
        blocking(move || RunReader::open(&opened_path, format, &options).map_err(format_error))
            .await?;
    let sha = file_sha(&path).await?;
    stored::refuse_repeat(db, project_id, "run", &file, &sha).await?;
    let (mut writer, keys) = RunWriter::open(db, project_id, actor_id).await?;
    let result = write_run(
        db,
        &mut writer,
        keys,
        &import,
        reader,
        (&file, &sha, format),
    )
    .await;
    let closed = writer.close().await;
    let report = result?;
    closed?;
    Ok(report)
}

/// Parses the run and writes it with `writer`; see [`run`].
async fn write_run(
    db: &Db,
    writer: &mut RunWriter,
    keys: RunKeys,
    import: &RunImport,
    reader: RunReader,
    (file, sha, format): (&str, &str, RunFormat),
) -> CommandResult<ImportReport> {
    let RunKeys {
        docs,
        claims,
        systems: existing_systems,
    } = keys;
    let given_name = import.system.name.clone();
    let allow_missing = import.allow_missing_docs;
    let summary = Arc::new(Mutex::new(RunSummary::default()));
    let shared = Arc::clone(&summary);
    let (rx, parser) = spawn_parser(
        move |tx, problems| {
            let mut local = RunSummary::default();
            let mut index: HashMap<String, usize> = HashMap::new();
            // Per system index: whether its first row was sent (with the system's name).
            let mut announced: Vec<bool> = Vec::new();
            let mut batch = Vec::with_capacity(RUN_BATCH);
            for item in reader {
                let Some(located) = problems.record(item) else {
                    continue;
                };
                let (line, rec) = (located.line, located.record);
                let name: &str = match (&given_name, &rec.system) {
                    (Some(name), _) => name,
                    (None, Some(name)) => name,
                    (None, None) => {
                        problems.at(
                            line,
                            None,
                            "the file does not name its system: give the system's name",
                        );
                        break;
                    }
                };
                let system = match index.get(name) {
                    Some(&i) => i,
                    None => {
                        if existing_systems.contains(name) {
                            problems.at(
                                line,
                                Some("system"),
                                format!("the project has a system named {name:?} already"),
                            );
                            break;
                        }
                        if name == store::search::SEARCH_SYSTEM || name == store::search::CAL_SYSTEM
                        {
                            problems.at(
                                line,
                                Some("system"),
                                format!(
                                    "{name:?} names the pairs found beyond the runs (by search or by cal) in the reports: give the run another name"
                                ),
                            );
                            break;
                        }
                        index.insert(name.to_owned(), local.names.len());
                        local.names.push(name.to_owned());
                        local.tallies.push(ScoringTally::default());
                        announced.push(false);
                        local.names.len() - 1
                    }
                };
                let Some(claim) = claims.get(rec.claim_id.as_str()) else {
                    problems.at(
                        line,
                        Some("claim_id"),
                        format!("claim {} is not in the project", rec.claim_id),
                    );
                    continue;
                };
                let Some(doc) = docs.get(rec.doc_id.as_str()) else {
                    if allow_missing {
                        local.missing_docs += 1;
                    } else {
                        problems.at(
                            line,
                            Some("doc_id"),
                            format!("document {} is not in the corpus (allow this with --allow-missing-docs)", rec.doc_id),
                        );
                    }
                    continue;
                };
                if let Some(tally) = local.tallies.get_mut(system) {
                    tally.observe(&rec);
                }
                // A system announces itself (is created) with its first row that is written.
                let new_system = match announced.get_mut(system) {
                    Some(sent) if !*sent => {
                        *sent = true;
                        local.names.get(system).cloned()
                    }
                    _ => None,
                };
                let row = PredictionRow {
                    system,
                    new_system,
                    claim,
                    doc,
                    label: rec.label,
                    p_support: rec.p_support.map(|p| p.get()),
                    p_contradict: rec.p_contradict.map(|p| p.get()),
                    p_nei: rec.p_nei.map(|p| p.get()),
                    confidence: rec.confidence(),
                    rank: rec.rank,
                    sentences: rec
                        .sentences
                        .as_ref()
                        .map(|s| serde_json::to_string(s).unwrap_or_default()),
                };
                push_row(&mut batch, RUN_BATCH, row, tx, problems);
            }
            flush(batch, tx, problems);
            if let Ok(mut summary) = shared.lock() {
                *summary = local;
            }
        },
        file.to_owned(),
    )?;
    let import_id = writer.begin(file, sha, format.as_str()).await?;
    let Written {
        system_keys,
        created,
        rows,
    } = writer.write(db, rx, &import.system, &Bulk).await?;
    let problems = parser.join().await?;
    if !problems.is_empty() {
        return Err(problems.into_error());
    }
    let summary = std::mem::take(
        &mut *summary
            .lock()
            .map_err(|_| CommandError::Invalid("the parser failed".into()))?,
    );
    if created.is_empty() {
        return Err(CommandError::Invalid(format!(
            "{file}: the run has no predictions for the project's claims and documents; nothing was imported"
        )));
    }
    // How each new system scores, from what the parser saw of its rows.
    let systems: Vec<(i64, Scoring)> = created
        .iter()
        .filter_map(|(i, _)| {
            let scoring = match summary.tallies.get(*i).map(ScoringTally::scoring) {
                Some(Scoring::Scores) => Scoring::Scores,
                _ => Scoring::Order,
            };
            system_keys.get(i).map(|key| (*key, scoring))
        })
        .collect();
    let report = ImportReport {
        import_id,
        file: file.to_owned(),
        format: format.as_str().to_owned(),
        rows,
        systems: created.into_iter().map(|(_, name)| name).collect(),
        judgments: 0,
        missing_docs: summary.missing_docs,
    };
    // The last transaction: the systems become ready and the import done, at once.
    writer.complete(&systems, &report).await?;
    Ok(report)
}
