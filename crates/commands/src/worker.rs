//! The background worker's side of the job queue (`server/src/jobs.rs`): jobs taken from the
//! queue one at a time, their progress and their end written as they run (a pipeline job's
//! export is [`crate::export`]). A job's work runs with its starter's proof
//! ([`crate::Lead::of_job_starter`]); what the worker writes about a job it took needs the
//! [`ClaimedJob`] that taking it gave. Errors are the store's as they are: the worker writes them
//! into the job's message or its log.

use store::jobs::{self, Job};
use store::{Db, StoreResult};

/// A job the worker took from the queue (it is running): only [`claim_next`] makes one.
#[derive(Debug)]
pub struct ClaimedJob(Job);

/// Fails the jobs a previous server left running (their work died with it); returns how many.
pub async fn fail_interrupted(db: &Db) -> StoreResult<u64> {
    jobs::fail_interrupted(db).await
}

/// Takes the oldest queued job, marking it running; None when the queue is empty.
pub async fn claim_next(db: &Db) -> StoreResult<Option<ClaimedJob>> {
    Ok(jobs::claim_next(db).await?.map(ClaimedJob))
}

impl ClaimedJob {
    /// The job as stored when it was taken.
    pub fn job(&self) -> &Job {
        &self.0
    }

    pub fn id(&self) -> i64 {
        self.0.id
    }

    /// Writes how many units of the work are done (and, when given, of how many).
    pub async fn progress(&self, db: &Db, done: i64, total: Option<i64>) -> StoreResult<()> {
        jobs::progress(db, self.0.id, done, total).await
    }

    /// Whether a lead asked to cancel the job.
    pub async fn cancel_requested(&self, db: &Db) -> StoreResult<bool> {
        jobs::cancel_requested(db, self.0.id).await
    }

    /// Ends the job as done, with what it produced.
    pub async fn finish(&self, db: &Db, result: &serde_json::Value) -> StoreResult<()> {
        jobs::finish(db, self.0.id, result).await
    }

    /// Ends the job as failed, with why.
    pub async fn fail(&self, db: &Db, message: &str) -> StoreResult<()> {
        jobs::fail(db, self.0.id, message).await
    }

    /// Ends the job as cancelled, with how far it got.
    pub async fn cancelled(&self, db: &Db, message: &str) -> StoreResult<()> {
        jobs::cancelled(db, self.0.id, message).await
    }
}
