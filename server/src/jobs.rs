//! The background worker: takes queued jobs from the `jobs` table one at a time and runs them
//! outside any request, writing progress into the job's row as it goes.
//!
//! A pipeline job exports the project's corpus and claims to a temporary directory, indexes
//! them, runs the chosen retriever and scorer ([`app::pipeline::job::run_job`]) and imports the
//! run as a new system with the same checks as any run import. Whatever fails ends in the row's
//! message; a failed job imports nothing.

use anyhow::Context;
use app::pipeline::job::{run_job, JobFiles, PipelineJobParams, PipelineSettings, JOB_TIMEOUT};
use commands::import::{Import, ImportKind, ImportWhat};
use commands::jobs::PIPELINE;
use commands::worker::{self, ClaimedJob};
use commands::{Db, Lead};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why a job stopped before its end.
#[derive(Debug)]
enum Stopped {
    /// A lead cancelled it after this many of so many units (claims, bytes).
    Cancelled(u64, u64, &'static str),
    /// It ran longer than the server allows.
    TimedOut(Duration),
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stopped::Cancelled(done, total, unit) => {
                write!(f, "cancelled by a lead after {done} of {total} {unit}")
            }
            Stopped::TimedOut(limit) => {
                let secs = limit.as_secs();
                let after = if secs >= 60 && secs % 60 == 0 {
                    format!("{} minutes", secs / 60)
                } else {
                    format!("{secs} seconds")
                };
                write!(
                    f,
                    "stopped after {after}, the server's limit for a job (serve --job-timeout-min)"
                )
            }
        }
    }
}

impl std::error::Error for Stopped {}

/// How often the worker looks for queued jobs, and writes a running job's progress.
const TICK: Duration = Duration::from_millis(300);

/// Starts the worker on the current tokio runtime. Jobs left running by a previous server are
/// failed first (their work died with it).
pub async fn spawn(
    db: Db,
    settings: Arc<PipelineSettings>,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let interrupted = worker::fail_interrupted(&db).await?;
    if interrupted > 0 {
        tracing::warn!(
            interrupted,
            "jobs left running by a stopped server are failed"
        );
    }
    Ok(tokio::spawn(async move {
        loop {
            match worker::claim_next(&db).await {
                Ok(Some(job)) => run(&db, &settings, job).await,
                Ok(None) => tokio::time::sleep(TICK).await,
                Err(e) => {
                    tracing::error!(error = %e, "job worker: cannot read the jobs table");
                    tokio::time::sleep(TICK * 10).await;
                }
            }
        }
    }))
}

/// Runs one claimed job and records how it ended.
async fn run(db: &Db, settings: &Arc<PipelineSettings>, job: ClaimedJob) {
    let id = job.id();
    let outcome = match job.job().kind.as_str() {
        PIPELINE => pipeline(db, settings, &job).await,
        commands::import::IMPORT => {
            import(db, settings.job_timeout.unwrap_or(JOB_TIMEOUT), &job).await
        }
        other => Err(anyhow::anyhow!("unknown job kind {other:?}")),
    };
    let recorded = match outcome {
        Ok(result) => job.finish(db, &result).await,
        Err(e) if matches!(e.downcast_ref::<Stopped>(), Some(Stopped::Cancelled(..))) => {
            tracing::info!(job = id, "job cancelled");
            job.cancelled(db, &e.to_string()).await
        }
        Err(e) => {
            tracing::warn!(job = id, error = %format!("{e:#}"), "job failed");
            job.fail(db, &format!("{e:#}")).await
        }
    };
    if let Err(e) = recorded {
        tracing::error!(job = id, error = %e, "cannot record the end of a job");
    }
}

/// How a running job's work is followed: how much of it is done, and how to stop it.
struct Progress<'a> {
    /// Units of the whole work (bytes of a file, claims).
    total: u64,
    unit: &'static str,
    /// The longest the work may run.
    timeout: Duration,
    /// Units done so far.
    done: &'a (dyn Fn() -> u64 + Sync),
    /// Asks the work to stop early (it then ends with an error).
    stop: &'a (dyn Fn() + Sync),
}

/// Runs `work` to its end, writing its progress into the job's row every [`TICK`], and asks it
/// to stop when a lead cancels the job or it outlives its time limit: gives the work's outcome
/// and why it was asked to stop, if it was.
///
/// The work is polled all along, also while the progress is written: work paused inside its
/// write transaction would hold SQLite's write lock that the progress write waits for (the job
/// then failed with "database is locked" after the busy timeout). A progress write or cancel
/// check that fails is logged and tried again at the next tick; it never fails the work.
///
/// Dropped before the work ends (the server stopping with the job running), it asks the work
/// to stop: the work's blocking thread would otherwise hold up the runtime's shutdown until the
/// job's end (a runtime waits for its blocking threads), and an external command would outlive
/// the server.
async fn supervise<T>(
    db: &Db,
    job: &ClaimedJob,
    progress: Progress<'_>,
    work: impl std::future::Future<Output = T>,
) -> (T, Option<Stopped>) {
    let stopped = std::sync::Mutex::new(None);
    let mut unfinished = StopOnDrop(Some(progress.stop));
    let finished = tokio::select! {
        finished = work => finished,
        never = watch(db, job, &progress, &stopped) => match never {},
    };
    unfinished.0 = None;
    let stopped = stopped.into_inner().unwrap_or_else(|p| p.into_inner());
    (finished, stopped)
}

/// Asks a job's work to stop when dropped while it holds the work's stop (see [`supervise`]).
struct StopOnDrop<'a>(Option<&'a (dyn Fn() + Sync)>);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(stop) = self.0 {
            stop();
        }
    }
}

/// [`supervise`]'s watch over a running job, every [`TICK`] until the work ends: writes its
/// progress, and sets `stopped` and stops the work once a lead cancels it or it outlives its
/// time limit.
async fn watch(
    db: &Db,
    job: &ClaimedJob,
    progress: &Progress<'_>,
    stopped: &std::sync::Mutex<Option<Stopped>>,
) -> std::convert::Infallible {
    let job_id = job.id();
    let started = Instant::now();
    let mut reported = 0;
    loop {
        tokio::time::sleep(TICK).await;
        let now = (progress.done)();
        if now != reported {
            match job.progress(db, now as i64, None).await {
                Ok(()) => reported = now,
                Err(e) => {
                    tracing::warn!(job = job_id, error = %e, "cannot write the job's progress")
                }
            }
        }
        let asked = stopped.lock().map(|s| s.is_some()).unwrap_or(true);
        if asked {
            continue;
        }
        let why = match job.cancel_requested(db).await {
            Ok(true) => Stopped::Cancelled(now, progress.total, progress.unit),
            Ok(false) if started.elapsed() > progress.timeout => {
                Stopped::TimedOut(progress.timeout)
            }
            Ok(false) => continue,
            Err(e) => {
                tracing::warn!(job = job_id, error = %e, "cannot read whether the job is cancelled");
                continue;
            }
        };
        if let Ok(mut s) = stopped.lock() {
            *s = Some(why);
        }
        (progress.stop)();
    }
}

/// An import job: the uploaded file imported with the same checks as the command line, its
/// progress the bytes of the file read; a cancel (or the time limit) stops the reading, and
/// the import then fails and writes nothing. The upload's directory is removed at the end.
async fn import(
    db: &Db,
    timeout: Duration,
    claimed: &ClaimedJob,
) -> anyhow::Result<serde_json::Value> {
    let job = claimed.job();
    let params: commands::import::ImportJob =
        serde_json::from_str(&job.params).context("the job's parameters")?;
    let _upload = RemoveUpload(&params);
    let project = job.project_id.context("the job has no project")?;
    let lead = Lead::of_job_starter(db, job.created_by, project).await?;
    let command = params.command();
    let total = params.bytes;
    claimed.progress(db, 0, Some(total as i64)).await?;
    let watch = app::domain::formats::watch(&params.path);
    let work = command.run(db, &lead);
    let progress = Progress {
        total,
        unit: "bytes",
        timeout,
        done: &|| watch.bytes_read().min(total),
        stop: &|| watch.cancel(),
    };
    let (finished, stopped) = supervise(db, claimed, progress, work).await;
    match (finished, stopped) {
        // Stopped, and the import failed because it was: say why it stopped.
        (Err(_), Some(why)) => Err(why.into()),
        // Messages name the uploaded file, never a server's directory for an upload.
        (Err(e), None) => Err(anyhow::anyhow!(params.shown(&e.to_string()))),
        (Ok(report), _) => {
            claimed.progress(db, total as i64, None).await?;
            Ok(serde_json::json!({
                "file": params.file,
                "rows": report.rows,
                "systems": report.systems,
                "judgments": report.judgments,
                "import_id": report.import_id,
            }))
        }
    }
}

/// Removes an import job's upload when the job ends, however it ends.
struct RemoveUpload<'a>(&'a commands::import::ImportJob);

impl Drop for RemoveUpload<'_> {
    fn drop(&mut self) {
        self.0.remove_upload();
    }
}

/// A pipeline job: export, index, run, import.
async fn pipeline(
    db: &Db,
    settings: &Arc<PipelineSettings>,
    claimed: &ClaimedJob,
) -> anyhow::Result<serde_json::Value> {
    let job = claimed.job();
    let params: PipelineJobParams =
        serde_json::from_str(&job.params).context("the job's parameters")?;
    let project = job.project_id.context("the job has no project")?;
    let lead = Lead::of_job_starter(db, job.created_by, project).await?;
    let dir = tempfile::tempdir().context("a temporary directory for the job")?;
    let out = dir.path().join("run.jsonl");
    let commands::export::Exported {
        corpus,
        claims,
        claim_count: total,
        ..
    } = commands::export::corpus_and_claims(db, &lead, dir.path()).await?;
    claimed.progress(db, 0, Some(total as i64)).await?;

    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let work = {
        let (settings, params) = (settings.clone(), params.clone());
        let (done, stop) = (done.clone(), stop.clone());
        let (work, corpus, claims, out) = (dir.path().to_path_buf(), corpus, claims, out.clone());
        tokio::task::spawn_blocking(move || {
            let files = JobFiles {
                corpus: &corpus,
                claims: &claims,
                work: &work,
                out: &out,
            };
            run_job(
                &settings,
                &params,
                files,
                &|n| {
                    done.fetch_max(n, Ordering::Relaxed);
                },
                &stop,
            )
        })
    };
    let progress = Progress {
        total,
        unit: "claims",
        timeout: settings.job_timeout.unwrap_or(JOB_TIMEOUT),
        done: &|| done.load(Ordering::Relaxed),
        stop: &|| stop.store(true, Ordering::Relaxed),
    };
    let (finished, stopped) = supervise(db, claimed, progress, work).await;
    let finished = finished.context("the pipeline stopped")?;
    if let Some(why) = stopped {
        return Err(why.into());
    }
    let pairs = finished?;
    if claimed.cancel_requested(db).await? {
        return Err(Stopped::Cancelled(total, total, "claims").into());
    }
    claimed.progress(db, total as i64, None).await?;

    let import = Import {
        path: out,
        kind: ImportKind::try_from(ImportWhat::Run {
            system: Some(params.system.clone()),
            role: params.role.clone(),
            format: Some(
                app::domain::formats::RunFormat::Canonical
                    .as_str()
                    .to_owned(),
            ),
            label_order: None,
            description: params.describe(),
            negative_sampling_ratio: None,
            allow_missing_docs: false,
        })?,
        limits: None,
    };
    // Messages name the run, not the job's temporary directory.
    let prefix = format!("{}/", dir.path().display());
    let report = import.run(db, &lead).await.map_err(|e| {
        anyhow::anyhow!(
            "importing the generated run: {}",
            e.to_string().replace(&prefix, "")
        )
    })?;
    Ok(serde_json::json!({
        "system": params.system,
        "pairs": pairs,
        "rows": report.rows,
        "import_id": report.import_id,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The work sits inside its write transaction at a tick whose progress write waits for
    /// that transaction: the job still ends, as soon as its work does.
    #[tokio::test]
    async fn a_tick_during_the_works_write_transaction_waits_for_the_work() {
        let dir = tempfile::tempdir().expect("a directory");
        let db = store::open(&dir.path().join("jobs.db"))
            .await
            .expect("a database");
        let project = store::projects::create(&db, "p", "", None)
            .await
            .expect("a project");
        let slot = store::jobs::reserve(&db)
            .await
            .expect("a place in the queue");
        store::jobs::create(&db, slot, project, "import", &serde_json::json!({}), None)
            .await
            .expect("a job");
        let job = worker::claim_next(&db)
            .await
            .expect("claimed")
            .expect("the job");
        let done = AtomicU64::new(0);
        let work = async {
            let tx = db.begin_with("BEGIN IMMEDIATE").await?;
            done.store(1, Ordering::Relaxed);
            tokio::time::sleep(TICK * 3).await;
            tx.commit().await
        };
        let progress = Progress {
            total: 1,
            unit: "bytes",
            timeout: Duration::from_secs(600),
            done: &|| done.load(Ordering::Relaxed),
            stop: &|| {},
        };
        let started = Instant::now();
        let (finished, stopped) = supervise(&db, &job, progress, work).await;
        finished.expect("the work committed");
        assert!(stopped.is_none());
        // SQLite's busy timeout is 10 s: a progress write that stalled the work would wait it out.
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
}
