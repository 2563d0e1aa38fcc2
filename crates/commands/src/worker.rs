//! The background worker's side of the job queue (`server/src/jobs.rs`): jobs taken from the
//! queue one at a time, their progress and their end written as they run (a pipeline job's
//! export is [`crate::export`]). A job's work runs with its starter's proof
//! ([`crate::Lead::of_job_starter`]); what the worker writes about a job it took needs the
//! [`ClaimedJob`] that taking it gave. Errors are the store's as they are: the worker writes them
//! into the job's message or its log.

use store::jobs::{self, Job};
use store::{Db, StoreResult};

pub use store::jobs::Lease;

/// A job the worker took from the queue (it is running, under the worker's lease): only
/// [`claim_next`] makes one. What it writes about the job is written only while the lease is
/// still this worker's; each end says whether it was (false: the lease expired and another
/// server failed the job).
#[derive(Clone, Debug)]
pub struct ClaimedJob {
    job: Job,
    lease: Lease,
}

/// Fails the running jobs whose lease expired (their server died or lost the database);
/// returns their ids. Jobs other servers are running keep running.
pub async fn expire_leases(db: &Db) -> StoreResult<Vec<i64>> {
    jobs::expire_leases(db).await
}

/// Takes the oldest queued job under `lease`, marking it running; None when the queue is
/// empty.
pub async fn claim_next(db: &Db, lease: &Lease) -> StoreResult<Option<ClaimedJob>> {
    Ok(jobs::claim_next(db, lease).await?.map(|job| ClaimedJob {
        job,
        lease: lease.clone(),
    }))
}

impl ClaimedJob {
    /// The job as stored when it was taken.
    pub fn job(&self) -> &Job {
        &self.job
    }

    pub fn id(&self) -> i64 {
        self.job.id
    }

    /// How long the job's lease lasts unrenewed, in milliseconds.
    pub fn lease_ms(&self) -> i64 {
        self.lease.ttl_ms
    }

    /// Renews the lease; false when it is no longer this worker's.
    pub async fn renew(&self, db: &Db) -> StoreResult<bool> {
        jobs::renew(db, self.job.id, &self.lease).await
    }

    /// Writes how many units of the work are done (and, when given, of how many).
    pub async fn progress(&self, db: &Db, done: i64, total: Option<i64>) -> StoreResult<()> {
        jobs::progress(db, self.job.id, &self.lease, done, total).await
    }

    /// Whether a lead asked to cancel the job.
    pub async fn cancel_requested(&self, db: &Db) -> StoreResult<bool> {
        jobs::cancel_requested(db, self.job.id).await
    }

    /// Ends the job as done, with what it produced.
    pub async fn finish(&self, db: &Db, result: &serde_json::Value) -> StoreResult<bool> {
        jobs::finish(db, self.job.id, &self.lease, result).await
    }

    /// Ends the job as failed, with why.
    pub async fn fail(&self, db: &Db, message: &str) -> StoreResult<bool> {
        jobs::fail(db, self.job.id, &self.lease, message).await
    }

    /// Ends the job as cancelled, with how far it got.
    pub async fn cancelled(&self, db: &Db, message: &str) -> StoreResult<bool> {
        jobs::cancelled(db, self.job.id, &self.lease, message).await
    }

    /// Puts the job back in the queue for another server (this one is stopping; the work
    /// was stopped and wrote nothing).
    pub async fn release(&self, db: &Db) -> StoreResult<bool> {
        jobs::release(db, self.job.id, &self.lease).await
    }
}
