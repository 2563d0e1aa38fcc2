//! Search and judge (issue 38): a project member searches the corpus for a claim (endpoint
//! `work/search`) and judges a result as a pair found by search (`work/search/judge`), which
//! becomes the next item of their queue. The commands check who may (`commands::search`).

use crate::error::ApiError;
use crate::model::annotate::QueueHead;
use crate::model::search::{FoundPair, SearchAnswer};
use leptos::prelude::*;

/// A page (0-based) of the search for `query` among the project's abstracts, for claim
/// `claim_id` (whose pairs the results mark); or how far the index's first build is.
#[server(endpoint = "work/search")]
pub async fn search_corpus(
    project: String,
    claim_id: String,
    query: String,
    page: usize,
) -> Result<SearchAnswer, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) = crate::api::project_caller(
                crate::domain::account::ProjectRole::Annotator,
                &project,
            )
            .await?;
            let searches = crate::state::searches()?;
            Ok(commands::search::search(&db, &searches, &caller, &claim_id, &query, page).await?)
        }
        .await,
    )
}

/// Judges a pair found by search: it joins the pool as the caller's find and is the current
/// item of their queue (the queue head returned).
#[server(endpoint = "work/search/judge", input = leptos::server_fn::codec::Json)]
pub async fn judge_found(project: String, found: FoundPair) -> Result<QueueHead, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) = crate::api::project_caller(
                crate::domain::account::ProjectRole::Annotator,
                &project,
            )
            .await?;
            commands::search::judge_found(&db, &caller, &found).await?;
            Ok(commands::annotate::queue_head(&db, &caller).await?)
        }
        .await,
    )
}
