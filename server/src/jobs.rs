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
    /// The server is stopping (SIGTERM): the job goes back to the queue for another server.
    Draining,
    /// The job's lease is no longer this server's: it could not be renewed in time, and
    /// another server failed the job.
    LeaseLost,
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
            Stopped::Draining => write!(f, "stopped: the server is stopping; back in the queue"),
            Stopped::LeaseLost => write!(f, "stopped: the job's lease was lost"),
        }
    }
}

impl std::error::Error for Stopped {}

/// How often the worker looks for queued jobs, and writes a running job's progress.
const TICK: Duration = Duration::from_millis(300);

/// How long a job's lease lasts unrenewed by default (`serve --job-lease-secs`): a server that
/// dies leaves its job to be failed by another server this long after its last renewal.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// The running worker: [`Worker::drain`] stops it.
pub struct Worker {
    task: tokio::task::JoinHandle<()>,
    draining: Arc<AtomicBool>,
}

impl Worker {
    /// Stops taking jobs and stops the running job's work, which goes back to the queue for
    /// another server; waits for that (at most `within`: a pipeline job's last step, its
    /// import, is not stopped midway; should it outlast `within`, its lease expires and
    /// another server fails it).
    pub async fn drain(self, within: Duration) {
        self.draining.store(true, Ordering::SeqCst);
        if tokio::time::timeout(within, self.task).await.is_err() {
            tracing::warn!(
                seconds = within.as_secs(),
                "the job worker did not stop in time; its job's lease will expire"
            );
        }
    }
}

/// This server's name in the leases of the jobs it runs: the host, the process and the moment
/// the worker started, so that two servers never share one.
pub(crate) fn lease_owner() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".to_owned());
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{host}:{}:{started:x}", std::process::id())
}

/// Starts the worker on the current tokio runtime, its jobs under leases of `lease` length.
/// Every so often it fails the running jobs whose lease expired (their server died); jobs
/// other servers are running are never touched, also when this server has just started.
pub fn spawn(db: Db, settings: Arc<PipelineSettings>, lease: Duration) -> Worker {
    let lease = worker::Lease {
        owner: lease_owner(),
        ttl_ms: i64::try_from(lease.as_millis()).unwrap_or(i64::MAX).max(1),
    };
    tracing::info!(owner = %lease.owner, "job worker started");
    let draining = Arc::new(AtomicBool::new(false));
    let stop = draining.clone();
    let task = tokio::spawn(async move {
        let expiry_period = Duration::from_millis((lease.ttl_ms / 2).max(1) as u64);
        let mut expired_at: Option<Instant> = None;
        while !stop.load(Ordering::SeqCst) {
            if expired_at.is_none_or(|at| at.elapsed() >= expiry_period) {
                expired_at = Some(Instant::now());
                match worker::expire_leases(&db).await {
                    Ok(ids) if !ids.is_empty() => {
                        tracing::warn!(
                            ?ids,
                            "failed the jobs whose server stopped renewing their lease"
                        )
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "job worker: cannot expire leases"),
                }
            }
            match worker::claim_next(&db, &lease).await {
                Ok(Some(job)) => run(&db, &settings, job, &stop).await,
                Ok(None) => tokio::time::sleep(TICK).await,
                Err(e) => {
                    tracing::error!(error = %e, "job worker: cannot read the jobs table");
                    tokio::time::sleep(TICK * 10).await;
                }
            }
        }
    });
    Worker { task, draining }
}

/// Renews a running job's lease every third of its length until dropped; sets `lost` when
/// the lease is no longer this server's.
fn heartbeat(db: &Db, job: &ClaimedJob, lost: &Arc<AtomicBool>) -> tokio::task::JoinHandle<()> {
    let (db, job, lost) = (db.clone(), job.clone(), lost.clone());
    tokio::spawn(async move {
        let every = Duration::from_millis((job.lease_ms() / 3).max(1) as u64);
        loop {
            tokio::time::sleep(every).await;
            match job.renew(&db).await {
                Ok(true) => {}
                Ok(false) => {
                    lost.store(true, Ordering::SeqCst);
                    return;
                }
                Err(e) => {
                    tracing::warn!(job = job.id(), error = %e, "cannot renew the job's lease")
                }
            }
        }
    })
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs one claimed job, its lease renewed all along, and records how it ended.
async fn run(
    db: &Db,
    settings: &Arc<PipelineSettings>,
    job: ClaimedJob,
    draining: &Arc<AtomicBool>,
) {
    let id = job.id();
    let lost = Arc::new(AtomicBool::new(false));
    let _heartbeat = AbortOnDrop(heartbeat(db, &job, &lost));
    let signals = Signals {
        draining,
        lost: &lost,
    };
    let outcome = match job.job().kind.as_str() {
        PIPELINE => pipeline(db, settings, &job, signals).await,
        commands::import::IMPORT => {
            import(
                db,
                settings.job_timeout.unwrap_or(JOB_TIMEOUT),
                &job,
                signals,
            )
            .await
        }
        other => Err(anyhow::anyhow!("unknown job kind {other:?}")),
    };
    let recorded = match outcome {
        Ok(result) => job.finish(db, &result).await,
        Err(e) => match e.downcast_ref::<Stopped>() {
            Some(Stopped::Cancelled(..)) => {
                tracing::info!(job = id, "job cancelled");
                job.cancelled(db, &e.to_string()).await
            }
            Some(Stopped::Draining) => {
                tracing::info!(
                    job = id,
                    "job put back in the queue: the server is stopping"
                );
                job.release(db).await
            }
            Some(Stopped::LeaseLost) => Ok(false),
            _ => {
                tracing::warn!(job = id, error = %format!("{e:#}"), "job failed");
                job.fail(db, &format!("{e:#}")).await
            }
        },
    };
    match recorded {
        Ok(true) => {}
        Ok(false) => tracing::error!(
            job = id,
            "the job's lease was lost (not renewed in time): another server failed the job, and this server's outcome is not recorded"
        ),
        Err(e) => tracing::error!(job = id, error = %e, "cannot record the end of a job"),
    }
}

/// What besides a lead's cancel and the time limit stops a running job's work.
#[derive(Clone, Copy)]
struct Signals<'a> {
    /// The server is stopping.
    draining: &'a AtomicBool,
    /// The job's lease is lost.
    lost: &'a AtomicBool,
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
    /// The server stopping, the lease lost.
    signals: Signals<'a>,
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
        let why = if progress.signals.lost.load(Ordering::SeqCst) {
            Stopped::LeaseLost
        } else if progress.signals.draining.load(Ordering::SeqCst) {
            Stopped::Draining
        } else {
            match job.cancel_requested(db).await {
                Ok(true) => Stopped::Cancelled(now, progress.total, progress.unit),
                Ok(false) if started.elapsed() > progress.timeout => {
                    Stopped::TimedOut(progress.timeout)
                }
                Ok(false) => continue,
                Err(e) => {
                    tracing::warn!(job = job_id, error = %e, "cannot read whether the job is cancelled");
                    continue;
                }
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
    signals: Signals<'_>,
) -> anyhow::Result<serde_json::Value> {
    let job = claimed.job();
    let params: commands::import::ImportJob =
        serde_json::from_str(&job.params).context("the job's parameters")?;
    // An upload kept in the database is written to this machine first (the removal below
    // takes that copy; the kept one goes with the job's end).
    let params = params
        .fetched(db)
        .await
        .context("reading the upload from the database")?;
    let upload = RemoveUpload {
        job: &params,
        keep: AtomicBool::new(false),
    };
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
        signals,
    };
    let (finished, stopped) = supervise(db, claimed, progress, work).await;
    match (finished, stopped) {
        // Stopped, and the import failed because it was: say why it stopped. A job back in
        // the queue keeps its upload.
        (Err(_), Some(why)) => {
            if matches!(why, Stopped::Draining) && params.upload.is_none() {
                upload.keep.store(true, Ordering::SeqCst);
            }
            Err(why.into())
        }
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

/// Removes an import job's upload when the job ends, however it ends, unless the job goes
/// back to the queue (`keep`).
struct RemoveUpload<'a> {
    job: &'a commands::import::ImportJob,
    keep: AtomicBool,
}

impl Drop for RemoveUpload<'_> {
    fn drop(&mut self) {
        if !self.keep.load(Ordering::SeqCst) {
            self.job.remove_upload();
        }
    }
}

/// A pipeline job: export, index, run, import.
async fn pipeline(
    db: &Db,
    settings: &Arc<PipelineSettings>,
    claimed: &ClaimedJob,
    signals: Signals<'_>,
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
        signals,
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
    if signals.draining.load(Ordering::SeqCst) {
        return Err(Stopped::Draining.into());
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
        let params = serde_json::json!({});
        let new = store::jobs::NewJob {
            project_id: project,
            kind: "import",
            params: &params,
            created_by: None,
            upload_id: None,
        };
        store::jobs::create(&db, slot, new).await.expect("a job");
        let lease = worker::Lease {
            owner: "test".into(),
            ttl_ms: 60_000,
        };
        let job = worker::claim_next(&db, &lease)
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
            signals: Signals {
                draining: &AtomicBool::new(false),
                lost: &AtomicBool::new(false),
            },
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
