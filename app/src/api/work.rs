//! The annotator's own work.

use crate::error::ApiError;
use leptos::prelude::*;

/// How many items wait in the caller's own queue.
#[server(endpoint = "work/open-count")]
pub async fn my_open_items() -> Result<i64, ApiError> {
    crate::api::respond(
        async {
            let user = crate::auth::require(crate::domain::account::Role::Annotator).await?;
            Ok(commands::work::open_count(&crate::state::db()?, &user).await?)
        }
        .await,
    )
}
