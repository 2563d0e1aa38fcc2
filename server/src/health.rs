//! Health checks for load balancers and orchestrators: `GET /healthz` (the process answers) and
//! `GET /readyz` (it can serve: the database answers, this build's migrations are applied, and
//! the server is not stopping). Neither needs a login, and neither says more than ok or why not.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use commands::Db;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What `/readyz` looks at.
#[derive(Clone)]
pub struct Health {
    pub db: Db,
    pub draining: Arc<AtomicBool>,
}

/// The two routes, for a router of any state.
pub fn router<S: Clone + Send + Sync + 'static>(health: Health) -> Router<S> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(health)
}

async fn healthz() -> impl IntoResponse {
    (StatusCode::OK, "ok\n")
}

async fn readyz(State(health): State<Health>) -> impl IntoResponse {
    if health.draining.load(Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, "stopping\n".to_owned());
    }
    match commands::upkeep::readiness(&health.db).await {
        Ok(()) => (StatusCode::OK, "ready\n".to_owned()),
        Err(e) => {
            tracing::warn!(error = %e, "not ready");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "the database is not ready\n".to_owned(),
            )
        }
    }
}
