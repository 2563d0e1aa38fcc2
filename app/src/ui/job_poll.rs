//! Following background jobs on a page: poll while one is unfinished, and reload what a job
//! changes once it is done. Shared by the project page's Jobs and Generate-a-run sections.

use crate::error::ApiError;
use leptos::prelude::*;
use std::time::Duration;

/// What the poller needs to know of a job.
pub trait JobState {
    fn job_id(&self) -> i64;
    /// Done, failed or cancelled.
    fn finished(&self) -> bool;
    fn status(&self) -> &str;
}

impl JobState for crate::api::pipeline::JobView {
    fn job_id(&self) -> i64 {
        self.id
    }
    fn finished(&self) -> bool {
        crate::api::pipeline::JobView::finished(self)
    }
    fn status(&self) -> &str {
        &self.status
    }
}

impl JobState for crate::api::imports::JobRow {
    fn job_id(&self) -> i64 {
        self.id
    }
    fn finished(&self) -> bool {
        crate::api::imports::JobRow::finished(self)
    }
    fn status(&self) -> &str {
        &self.status
    }
}

/// Bumps `tick` every `every` while one of `jobs` is unfinished (in the browser: effects do not
/// run on the server), and bumps `version` when a job the page had not seen finished is done.
pub fn follow_jobs<J: JobState + Clone + Send + Sync + 'static>(
    jobs: Resource<Result<Vec<J>, ApiError>>,
    tick: RwSignal<u32>,
    version: RwSignal<u32>,
    every: Duration,
) {
    let active = Memo::new(move |_| {
        jobs.get()
            .and_then(Result::ok)
            .is_some_and(|list| list.iter().any(|j| !j.finished()))
    });
    Effect::new(move |_| {
        if let Ok(handle) = set_interval_with_handle(
            move || {
                if active.get_untracked() {
                    tick.update(|t| *t = t.wrapping_add(1));
                }
            },
            every,
        ) {
            on_cleanup(move || handle.clear());
        }
    });
    let known = StoredValue::new(None::<KnownJobs>);
    Effect::new(move |_| {
        let Some(Ok(list)) = jobs.get() else { return };
        let done = known.try_update_value(|known| {
            let (next, done) = KnownJobs::observe(known.take(), &list);
            *known = Some(next);
            done
        });
        if done == Some(true) {
            version.update(|v| *v += 1);
        }
    });
}

/// The jobs a page has seen, by id, and whether each was finished when last seen.
#[derive(Debug, Default)]
pub struct KnownJobs(std::collections::HashMap<i64, bool>);

impl KnownJobs {
    /// Takes in a new list of jobs; true when a job is done that the page had not seen finished:
    /// one seen running that has finished, or one that appears already done (a small import can
    /// end before the page's first poll after its upload sees it running). The first list a page
    /// loads only sets what it knows: its jobs were done before the page showed its tables.
    pub fn observe<J: JobState>(known: Option<KnownJobs>, list: &[J]) -> (KnownJobs, bool) {
        let first = known.is_none();
        let mut known = known.unwrap_or_default();
        let mut done = false;
        for job in list {
            let was_finished = known.0.insert(job.job_id(), job.finished());
            done |= !first && job.status() == "done" && was_finished != Some(true);
        }
        (known, done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone)]
    struct Job(i64, &'static str);

    impl JobState for Job {
        fn job_id(&self) -> i64 {
            self.0
        }
        fn finished(&self) -> bool {
            matches!(self.1, "done" | "failed" | "cancelled")
        }
        fn status(&self) -> &str {
            self.1
        }
    }

    fn observe(known: Option<KnownJobs>, list: &[Job]) -> (Option<KnownJobs>, bool) {
        let (known, done) = KnownJobs::observe(known, list);
        (Some(known), done)
    }

    #[test]
    fn the_first_list_reloads_nothing() {
        let (_, done) = observe(None, &[Job(1, "done"), Job(2, "running")]);
        assert!(!done);
    }

    #[test]
    fn a_job_seen_running_reloads_once_when_done() {
        let (known, done) = observe(None, &[Job(1, "done")]);
        assert!(!done);
        let (known, done) = observe(known, &[Job(1, "done"), Job(2, "running")]);
        assert!(!done);
        let (known, done) = observe(known, &[Job(1, "done"), Job(2, "done")]);
        assert!(done);
        let (_, done) = observe(known, &[Job(1, "done"), Job(2, "done")]);
        assert!(!done, "a job already seen done reloads nothing again");
    }

    #[test]
    fn a_job_that_appears_already_done_reloads() {
        // The upload's job ended before the first poll after it: never seen running.
        let (known, _) = observe(None, &[Job(1, "done")]);
        let (_, done) = observe(known, &[Job(1, "done"), Job(2, "done")]);
        assert!(done);
    }

    #[test]
    fn failed_and_cancelled_jobs_reload_nothing() {
        let (known, _) = observe(None, &[]);
        let (known, done) = observe(known, &[Job(1, "running"), Job(2, "queued")]);
        assert!(!done);
        let (_, done) = observe(
            known,
            &[Job(1, "failed"), Job(2, "cancelled"), Job(3, "failed")],
        );
        assert!(!done);
    }
}
