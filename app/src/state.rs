//! The server's shared state, reachable from handlers (axum `FromRef`) and server functions
//! (Leptos context).

use crate::error::{ApiError, ApiResult};
use axum::extract::FromRef;
use commands::Db;
use leptos::prelude::LeptosOptions;

#[derive(Clone, FromRef)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub db: Db,
    /// What pipeline jobs may use (commands and models named on the server's command line).
    pub pipeline: std::sync::Arc<crate::pipeline::job::PipelineSettings>,
    /// How much a browser may upload.
    pub limits: UploadLimits,
    /// The turns of heavy computations (reports, release diffs, estimates).
    pub heavy: HeavyWork,
    /// The corpus search indexes of this server (search and judge, issue 38).
    pub searches: std::sync::Arc<commands::search::Searches>,
    /// Single sign-on through an OpenID provider, if the server was given one.
    pub sso: Option<std::sync::Arc<commands::sso::Sso>>,
}

/// How many heavy computations — a lead report (bootstrap, permutations), a release diff, the
/// sample's estimates — a server runs at once, and how many more may wait for their turn
/// (issue 35: four parallel reports of 55 s each took annotators' `work/queue` from 3 to 31 ms
/// median). One more than that is refused at once with 503, "busy, try again". Each server
/// (each [`AppState`]) has its own; the command line runs its one computation without it.
#[derive(Clone, Debug)]
pub struct HeavyWork {
    turns: std::sync::Arc<tokio::sync::Semaphore>,
    /// Computations running or waiting.
    admitted: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    running: usize,
    waiting: usize,
}

/// A heavy computation's turn: while it is held, no other starts beyond the limit.
#[derive(Debug)]
pub struct HeavyTurn {
    _turn: tokio::sync::OwnedSemaphorePermit,
    _admitted: Admitted,
}

/// One computation counted as running or waiting, until dropped (also when the request that
/// waited is dropped).
#[derive(Debug)]
struct Admitted(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl Drop for Admitted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Heavy computations a server runs at once by default.
pub const HEAVY_RUNNING: usize = 1;
/// Heavy computations that may wait for a turn by default.
pub const HEAVY_WAITING: usize = 3;

impl HeavyWork {
    /// At most `running` at once (at least 1), `waiting` more waiting.
    pub fn new(running: usize, waiting: usize) -> HeavyWork {
        let running = running.max(1);
        HeavyWork {
            turns: std::sync::Arc::new(tokio::sync::Semaphore::new(running)),
            admitted: std::sync::Arc::default(),
            running,
            waiting,
        }
    }

    /// Waits for a turn for `what` (a report, a release diff), or refuses it at once when as
    /// many computations as allowed are running and waiting already.
    pub async fn turn(&self, what: &str) -> ApiResult<HeavyTurn> {
        use std::sync::atomic::Ordering;
        let before = self.admitted.fetch_add(1, Ordering::SeqCst);
        let admitted = Admitted(self.admitted.clone());
        if before >= self.running + self.waiting {
            return Err(ApiError::Overloaded(format!(
                "the server is computing {} and {} more wait{}; the {what} was not started, try again in a minute",
                if self.running == 1 { "one report or diff".to_owned() } else { format!("{} reports or diffs", self.running) },
                self.waiting,
                if self.waiting == 1 { "s" } else { "" },
            )));
        }
        let turn = self
            .turns
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| ApiError::Internal(format!("the heavy-work gate: {e}")))?;
        Ok(HeavyTurn {
            _turn: turn,
            _admitted: admitted,
        })
    }
}

impl Default for HeavyWork {
    fn default() -> Self {
        HeavyWork::new(HEAVY_RUNNING, HEAVY_WAITING)
    }
}

/// The server's heavy-work turns, inside a server function.
pub fn heavy() -> ApiResult<HeavyWork> {
    leptos::prelude::use_context::<AppState>()
        .map(|state| state.heavy)
        .ok_or_else(|| ApiError::Internal("the server state is missing".into()))
}

/// Limits on what a browser uploads, set on `serve` (`--max-upload-mb`, `--max-decompressed-mb`,
/// `--max-line-kb`, `--max-sentences`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UploadLimits {
    /// The largest uploaded file, in bytes, as sent (compressed when it is gzip).
    pub max_file_bytes: u64,
    /// The most an uploaded file may hold once decompressed, in bytes.
    pub max_decompressed_bytes: u64,
    /// The longest line of an uploaded file, in bytes.
    pub max_line_bytes: usize,
    /// The most predicted rationale sentences per prediction.
    pub max_sentences: usize,
    /// The longest form field other than the file (a system name, a description), in bytes.
    pub max_field_bytes: usize,
}

impl Default for UploadLimits {
    fn default() -> Self {
        UploadLimits {
            max_file_bytes: 1024 * 1024 * 1024,
            // A 10-million-line run is about 1.5 GiB of JSON lines.
            max_decompressed_bytes: 8 * 1024 * 1024 * 1024,
            max_line_bytes: 16 * 1024 * 1024,
            max_sentences: 1_000,
            max_field_bytes: 64 * 1024,
        }
    }
}

/// The upload limits, inside a server function.
pub fn limits() -> ApiResult<UploadLimits> {
    leptos::prelude::use_context::<AppState>()
        .map(|state| state.limits)
        .ok_or_else(|| ApiError::Internal("the server state is missing".into()))
}

/// The database, inside a server function or a page rendered on the server.
pub fn db() -> ApiResult<Db> {
    leptos::prelude::use_context::<AppState>()
        .map(|state| state.db)
        .ok_or_else(|| ApiError::Internal("the server state is missing".into()))
}

/// The server's corpus search indexes, inside a server function.
pub fn searches() -> ApiResult<std::sync::Arc<commands::search::Searches>> {
    leptos::prelude::use_context::<AppState>()
        .map(|state| state.searches)
        .ok_or_else(|| ApiError::Internal("the server state is missing".into()))
}

/// The pipeline settings, inside a server function.
pub fn pipeline() -> ApiResult<std::sync::Arc<crate::pipeline::job::PipelineSettings>> {
    leptos::prelude::use_context::<AppState>()
        .map(|state| state.pipeline)
        .ok_or_else(|| ApiError::Internal("the server state is missing".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn heavy_work_runs_its_turns_lets_some_wait_and_refuses_the_rest() {
        let heavy = HeavyWork::new(1, 1);
        let first = heavy.turn("report").await.unwrap();
        let waiting = tokio::spawn({
            let heavy = heavy.clone();
            async move { heavy.turn("report").await.map(|_| ()) }
        });
        tokio::task::yield_now().await;
        while heavy.admitted.load(std::sync::atomic::Ordering::SeqCst) < 2 {
            tokio::task::yield_now().await;
        }
        let refused = heavy.turn("release diff").await.unwrap_err();
        assert!(matches!(refused, ApiError::Overloaded(_)), "{refused:?}");
        assert!(refused.to_string().contains("release diff"), "{refused}");
        assert_eq!(
            refused.status(),
            axum::http::StatusCode::SERVICE_UNAVAILABLE
        );
        drop(first);
        waiting.await.unwrap().unwrap();
        // Everything was given back: two turns in a row again.
        drop(heavy.turn("report").await.unwrap());
        drop(heavy.turn("report").await.unwrap());
        assert_eq!(heavy.admitted.load(std::sync::atomic::Ordering::SeqCst), 0);
    }
}
