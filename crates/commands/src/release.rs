//! The release command: record the project's current state as a release (or find that the
//! latest release holds it). The command line's `export`, the releases page and the HTTP API
//! call it with a [`Lead`] proof.
//!
//! The command reads the state and the latest release from the store, refuses an incomplete
//! release that was not asked to be partial, builds the files and the archive off the async
//! threads, and has the store record the new release; the store only reads and writes.
//! Numbering: releases are numbered 1, 2, ... per project and never change. When the state and
//! the options give the same files as the latest release (the same manifest, which holds the
//! SHA-256 of every file), that release is returned and nothing is recorded.

use super::Lead;
use crate::error::{CommandError, CommandResult};
use domain::judging::RecallTarget;
use domain::release::{sha256_hex, RecallStatement, ReleaseFiles, ReleaseInput, ReleaseOptions};
use std::num::NonZeroU32;
use store::pool::Estimated;
use store::release::{self, NewArchive};
/// A stored release, and how far annotation of the pool has come.
pub use store::release::{Completeness, Release};
use store::{Db, StoreError};

/// At most this many unjudged pairs are named when a release is refused.
pub const EXAMPLES: usize = 5;

/// Releases the project's state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreateRelease {
    /// Release although pooled pairs lack a final label.
    pub partial: bool,
    /// List unjudged pooled pairs in `qrels.txt` with relevance -1.
    pub unjudged: bool,
    /// Also write `qrels-model.txt`, the model assessors' labels (refused without one).
    pub model_qrels: bool,
}

/// The outcome of [`CreateRelease::run`].
#[derive(Debug)]
pub struct Created {
    pub release: Release,
    /// `false` when the state equals the latest release's, which is returned unchanged.
    pub new: bool,
    /// The release's files, byte for byte those of the recorded archive.
    pub files: ReleaseFiles,
}

impl CreateRelease {
    /// Records the release (audited as the lead's action); refused while pooled pairs lack a
    /// final label, unless `partial`: the error says how many and names a few.
    pub async fn run(self, db: &Db, lead: &Lead) -> CommandResult<Created> {
        let options = ReleaseOptions {
            qrels_unjudged: self.unjudged,
            model_qrels: self.model_qrels,
        };
        let project_id = lead.project_id();
        let mut input = release::input_with(db, project_id, &options).await?;
        input.recall = recall_statement(db, project_id).await?;
        check_complete(&input, self.partial)?;
        let latest = release::latest(db, project_id).await?;
        let built = tokio::task::spawn_blocking(move || build(input, options, latest))
            .await
            .map_err(|e| CommandError::Internal(format!("building the release stopped: {e}")))??;
        let Some(archive) = built.archive else {
            return Ok(Created {
                release: release::get(db, project_id, built.number).await?,
                new: false,
                files: built.files,
            });
        };
        let sha256 = sha256_hex(&archive);
        let manifest = String::from_utf8(built.files.manifest().to_vec()).map_err(|e| {
            CommandError::Internal(format!("the release manifest is not UTF-8: {e}"))
        })?;
        let partial = built.files.counts().unjudged_pooled_pairs > 0;
        let audit = serde_json::json!({
            "number": built.number,
            "partial": partial,
            "qrels_unjudged": options.qrels_unjudged,
            "model_qrels": options.model_qrels,
            "sha256": sha256,
            "counts": built.files.counts(),
        });
        release::record(
            db,
            project_id,
            NewArchive {
                number: built.number,
                partial,
                manifest: &manifest,
                sha256: &sha256,
                archive: &archive,
                actor_id: lead.audit_id(),
                audit,
            },
        )
        .await?;
        Ok(Created {
            release: release::get(db, project_id, built.number).await?,
            new: true,
            files: built.files,
        })
    }
}

/// What the datasheet says of the collection's recall: the estimates of the project's latest
/// sample, once it is judged (none: not estimated).
async fn recall_statement(db: &Db, project_id: i64) -> CommandResult<RecallStatement> {
    let target = RecallTarget::new(0.9, 0.05)
        .map_err(|e| CommandError::Internal(format!("the recall target: {e}")))?;
    let survey = match store::pool::survey(db, project_id, target, Estimated::Project).await {
        Ok(survey) => survey,
        // No pool, no sample, or a pool that changed since the sample: nothing to estimate.
        Err(StoreError::Invalid { .. } | StoreError::Conflict { .. } | StoreError::NotFound(_)) => {
            return Ok(RecallStatement::NotEstimated)
        }
        Err(e) => return Err(e.into()),
    };
    Ok(match (survey.sample, survey.estimates) {
        (Some(sample), Some(estimates)) => RecallStatement::Sampled {
            found: estimates.found,
            total: estimates.total_evidence.value,
            low: estimates.total_evidence.low,
            high: estimates.total_evidence.high,
            depth: sample.depth,
            reach: sample.reach,
            strata: sample.strata.len(),
            drawn: sample.drawn,
        },
        _ => RecallStatement::NotEstimated,
    })
}

/// Refuses a release while pooled pairs lack a final label, unless it is asked to be partial.
fn check_complete(input: &ReleaseInput, partial: bool) -> CommandResult<()> {
    let unjudged = &input.unjudged_pooled;
    if unjudged.is_empty() || partial {
        return Ok(());
    }
    let examples: Vec<String> = unjudged
        .iter()
        .take(EXAMPLES)
        .map(|(claim, doc)| format!("claim {claim} / doc {doc}"))
        .collect();
    let more = if unjudged.len() > EXAMPLES {
        ", …"
    } else {
        ""
    };
    Err(CommandError::Conflict(format!(
        "{} pooled pair{} no final label yet (e.g. {}{more}): finish annotating, or make a \
         partial release",
        unjudged.len(),
        if unjudged.len() == 1 {
            " has"
        } else {
            "s have"
        },
        examples.join(", ")
    )))
}

/// What the blocking step decided: the files, their number, and the archive when new.
struct Built {
    files: ReleaseFiles,
    number: u32,
    /// `None` when the files equal the latest release's.
    archive: Option<Vec<u8>>,
}

/// Writes the files (at the latest number first, to compare with the latest release) and, when
/// they are new, the archive. CPU work: run on a blocking thread.
fn build(
    mut input: ReleaseInput,
    options: ReleaseOptions,
    latest: Option<(u32, String)>,
) -> CommandResult<Built> {
    let mut at = |number: u32| {
        input.number = NonZeroU32::new(number).ok_or_else(|| {
            CommandError::Internal("stored data is corrupt: release number 0".into())
        })?;
        ReleaseFiles::build(&input, &options).map_err(|e| CommandError::Invalid(e.to_string()))
    };
    if let Some((number, manifest)) = &latest {
        let files = at(*number)?;
        if files.manifest() == manifest.as_bytes() {
            return Ok(Built {
                files,
                number: *number,
                archive: None,
            });
        }
    }
    let number = match latest {
        Some((n, _)) => n
            .checked_add(1)
            .ok_or_else(|| CommandError::Invalid("too many releases".into()))?,
        None => 1,
    };
    let files = at(number)?;
    let archive = files
        .to_tar_gz()
        .map_err(|e| CommandError::Internal(format!("cannot write the archive: {e}")))?;
    Ok(Built {
        files,
        number,
        archive: Some(archive),
    })
}

/// How complete the caller's project is, its releases (latest first) and how many model
/// assessors it has.
pub async fn overview(
    db: &Db,
    caller: &crate::access::ProjectCaller,
) -> CommandResult<(Completeness, Vec<Release>, u64)> {
    let id = caller.project_id();
    let state = release::completeness(db, id).await?;
    let releases = release::list(db, id).await?;
    let model_assessors = store::assessors::list(db, id).await?.len() as u64;
    Ok((state, releases, model_assessors))
}
