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
/// run on the server), and bumps `version` when a job seen unfinished is done.
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
    let unfinished = StoredValue::new(Vec::<i64>::new());
    Effect::new(move |_| {
        let Some(Ok(list)) = jobs.get() else { return };
        let mut done = false;
        unfinished.update_value(|seen| {
            for job in &list {
                let id = job.job_id();
                if !job.finished() && !seen.contains(&id) {
                    seen.push(id);
                } else if job.finished() && seen.contains(&id) {
                    seen.retain(|s| *s != id);
                    done |= job.status() == "done";
                }
            }
        });
        if done {
            version.update(|v| *v += 1);
        }
    });
}
