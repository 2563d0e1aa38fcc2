//! Bulk work on threads of its own at a lower CPU priority: an import's parser and its `COPY`
//! text. On a machine whose cores are all busy (a run import keeps PostgreSQL's `COPY` backend
//! on about one core and its parser on much of another), the scheduler then runs what people
//! wait for first — a submission's request, its database backend, a page — and the import takes
//! the time left over. Nothing else changes: the import does the same work, in the same order.
//!
//! Each job gets a new thread (not one of tokio's blocking threads, which are reused: a lowered
//! priority cannot be raised again without privileges). A thread costs tens of microseconds;
//! the jobs here take milliseconds to seconds.

use crate::error::{CommandError, CommandResult};
use tokio::sync::oneshot;

/// How much lower than the server's threads bulk work runs (Linux's nice scale: at +10 a
/// thread gets about a tenth of the CPU a normal one gets when both want it).
const NICENESS: i32 = 10;

/// What the name of every bulk thread starts with (the test clusters' panic hook, in
/// `crates/testdata/src/postgres.rs`, tells a bulk job's panic from a test's by it).
const THREAD_PREFIX: &str = "bulk: ";

/// A job running on its own thread; [`Background::join`] waits for its result.
#[derive(Debug)]
pub struct Background<R> {
    name: &'static str,
    result: oneshot::Receiver<R>,
}

/// Runs `work` on a new thread named `name` (after [`THREAD_PREFIX`]), at a lower CPU priority.
pub fn spawn<R: Send + 'static>(
    name: &'static str,
    work: impl FnOnce() -> R + Send + 'static,
) -> CommandResult<Background<R>> {
    let (send, result) = oneshot::channel();
    std::thread::Builder::new()
        .name(format!("{THREAD_PREFIX}{name}"))
        .spawn(move || {
            lower_priority();
            // The receiver is gone only when the caller stopped waiting.
            let _ = send.send(work());
        })
        .map_err(|e| CommandError::Internal(format!("could not start the {name} thread: {e}")))?;
    Ok(Background { name, result })
}

/// The store's bulk writes run their CPU-heavy part here too (a run's `COPY` text on
/// PostgreSQL): on a thread of its own at the lower priority.
pub struct Bulk;

impl store::import::Offload for Bulk {
    fn offload(
        &self,
        name: &'static str,
        work: Box<dyn FnOnce() + Send>,
    ) -> store::StoreResult<()> {
        spawn(name, work)
            .map(drop)
            .map_err(|e| store::StoreError::Fault(e.to_string()))
    }
}

impl<R> Background<R> {
    /// The job's result; an error if it panicked.
    pub async fn join(self) -> CommandResult<R> {
        let name = self.name;
        self.result
            .await
            .map_err(|_| CommandError::Internal(format!("the {name} stopped before it was done")))
    }
}

/// Lowers the calling thread's (only this thread's) scheduling priority. Where that is not
/// possible the work runs at normal priority, as it did before.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread's own id; no memory is shared.
    unsafe {
        let thread = libc::gettid();
        let _ = libc::setpriority(libc::PRIO_PROCESS, thread as libc::id_t, NICENESS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The thread's niceness as the kernel reports it.
    #[cfg(target_os = "linux")]
    fn own_niceness() -> i32 {
        // SAFETY: reads the calling thread's own priority.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn bulk_work_runs_at_a_lower_priority_than_its_caller() {
        let caller = own_niceness();
        let job = spawn("test job", own_niceness).unwrap();
        let worker = job.join().await.unwrap();
        assert_eq!(worker, (caller + NICENESS).min(19));
        assert_eq!(
            own_niceness(),
            caller,
            "the caller's thread keeps its priority"
        );
    }

    #[tokio::test]
    async fn bulk_threads_are_named_for_their_job() {
        let job = spawn("test job", || {
            std::thread::current().name().map(str::to_owned)
        });
        let name = job.unwrap().join().await.unwrap();
        assert_eq!(name.as_deref(), Some("bulk: test job"));
    }

    #[tokio::test]
    async fn a_job_that_panics_is_an_error_naming_it() {
        let job = spawn("test job", || -> u32 { panic!("on purpose") }).unwrap();
        let err = job.join().await.unwrap_err().to_string();
        assert!(err.contains("the test job stopped"), "{err}");
    }
}
