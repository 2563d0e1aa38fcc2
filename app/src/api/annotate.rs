//! Annotation: the annotator's queue and form (endpoints `work/...`), and the lead's
//! annotation management and adjudication (`lead/annotation/...`). Every function checks the
//! caller's role; the store checks that an item is the caller's.

use crate::error::ApiError;
use crate::model::annotate::{
    AnnotationOverview, CommentView, DraftForm, ItemView, LastSubmission, OpenItemRow, QueueHead,
};
use crate::model::history::{HistoryFilter, HistoryPage};
use leptos::prelude::*;

#[cfg(feature = "ssr")]
mod ssr {
    use super::*;
    use crate::auth::ProjectCaller;
    use crate::domain::account::ProjectRole;
    use commands::Db;

    pub(crate) use crate::api::project_caller as caller;

    /// The caller of something on pair `entry_id`, who must be able to act as `role` in its
    /// project.
    pub async fn caller_of_entry(
        role: ProjectRole,
        entry_id: i64,
    ) -> Result<(Db, ProjectCaller), ApiError> {
        let db = crate::state::db()?;
        let user = crate::auth::current_user()
            .await?
            .ok_or(ApiError::Unauthenticated)?;
        let caller = commands::annotate::caller_of_entry(&db, user, entry_id, role).await?;
        Ok((db, caller))
    }

    /// The caller's queue head; no item before they confirmed the current guidelines.
    pub async fn head(db: &Db, caller: &ProjectCaller) -> Result<QueueHead, ApiError> {
        Ok(commands::annotate::queue_head(db, caller).await?)
    }
}

/// The head of the caller's queue in `project`: current item, next item, counts.
#[server(endpoint = "work/queue")]
pub async fn load_queue(project: String) -> Result<QueueHead, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                ssr::caller(crate::domain::account::ProjectRole::Annotator, &project).await?;
            ssr::head(&db, &caller).await
        }
        .await,
    )
}

/// Submits the caller's annotation of their open item, once per `submission_key` when there is
/// one (the browser's key of this submission, ui/annotate/unsent.rs); returns the new queue
/// head.
#[server(endpoint = "work/submit", input = leptos::server_fn::codec::Json)]
pub async fn submit_item(
    project: String,
    assignment_id: i64,
    form: DraftForm,
    seconds_spent: f64,
    submission_key: Option<String>,
) -> Result<QueueHead, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                ssr::caller(crate::domain::account::ProjectRole::Annotator, &project).await?;
            // A repeat (the same key again) answers like the first: with the queue as it is.
            commands::annotate::submit(
                &db,
                &caller,
                assignment_id,
                &form.to_draft(),
                seconds_spent,
                submission_key.as_deref(),
            )
            .await?;
            ssr::head(&db, &caller).await
        }
        .await,
    )
}

/// Undoes the caller's last submission in `project` (within the window).
#[server(endpoint = "work/undo")]
pub async fn undo_last(project: String) -> Result<QueueHead, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                ssr::caller(crate::domain::account::ProjectRole::Annotator, &project).await?;
            commands::annotate::undo_last(&db, &caller).await?;
            ssr::head(&db, &caller).await
        }
        .await,
    )
}

/// Page `page` (0-based) of the caller's own judgments in `project` that `filter` lets through,
/// newest first, with the submission they may still undo.
#[server(endpoint = "work/history", input = leptos::server_fn::codec::Json)]
pub async fn own_history(
    project: String,
    filter: HistoryFilter,
    page: usize,
) -> Result<HistoryPage, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                ssr::caller(crate::domain::account::ProjectRole::Annotator, &project).await?;
            Ok(commands::history::own_history(&db, &caller, &filter, page).await?)
        }
        .await,
    )
}

/// Sends the caller's open item to the end of their queue.
#[server(endpoint = "work/skip")]
pub async fn skip_item(project: String, assignment_id: i64) -> Result<QueueHead, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                ssr::caller(crate::domain::account::ProjectRole::Annotator, &project).await?;
            commands::annotate::skip(&db, &caller, assignment_id).await?;
            ssr::head(&db, &caller).await
        }
        .await,
    )
}

/// Flags the caller's open item "needs attention" (a blank note clears the flag).
#[server(endpoint = "work/flag")]
pub async fn flag_item(
    project: String,
    assignment_id: i64,
    note: String,
) -> Result<QueueHead, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                ssr::caller(crate::domain::account::ProjectRole::Annotator, &project).await?;
            commands::annotate::flag(&db, &caller, assignment_id, &note).await?;
            ssr::head(&db, &caller).await
        }
        .await,
    )
}

/// Adds a comment to a pair the caller judged (or any pair, for a lead).
#[server(endpoint = "work/comment")]
pub async fn add_comment(entry_id: i64, body: String) -> Result<Vec<CommentView>, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                ssr::caller_of_entry(crate::domain::account::ProjectRole::Annotator, entry_id)
                    .await?;
            Ok(commands::annotate::add_comment(&db, &caller, entry_id, &body).await?)
        }
        .await,
    )
}

/// The projects where the caller has items: (project, open items).
#[server(endpoint = "work/projects")]
pub async fn my_projects() -> Result<Vec<(String, i64)>, ApiError> {
    crate::api::respond(
        async {
            let user = crate::auth::require(crate::domain::account::Role::Annotator).await?;
            let db = crate::state::db()?;
            Ok(commands::work::projects_of(&db, &user).await?)
        }
        .await,
    )
}

/// Annotation in a project at a glance (leads).
#[server(endpoint = "lead/annotation")]
pub async fn annotation_summary(project: String) -> Result<AnnotationOverview, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                ssr::caller(crate::domain::account::ProjectRole::Lead, &project).await?;
            Ok(commands::annotate::overview(&db, &caller).await?)
        }
        .await,
    )
}

/// Adds, reactivates or deactivates an annotator; returns how many items moved.
#[server(endpoint = "lead/annotation/member")]
pub async fn set_annotator_active(
    project: String,
    username: String,
    active: bool,
) -> Result<usize, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                ssr::caller(crate::domain::account::ProjectRole::Lead, &project).await?;
            Ok(commands::annotate::set_active(&db, &caller, &username, active).await?)
        }
        .await,
    )
}

/// Every open item of the project, for reassignment.
#[server(endpoint = "lead/annotation/open")]
pub async fn open_items(project: String) -> Result<Vec<OpenItemRow>, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                ssr::caller(crate::domain::account::ProjectRole::Lead, &project).await?;
            Ok(commands::annotate::open_items(&db, &caller).await?)
        }
        .await,
    )
}

/// Hands an open item to another active annotator.
#[server(endpoint = "lead/annotation/reassign")]
pub async fn reassign_item(
    project: String,
    assignment_id: i64,
    to: String,
) -> Result<(), ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                ssr::caller(crate::domain::account::ProjectRole::Lead, &project).await?;
            Ok(commands::annotate::reassign_item(&db, &caller, assignment_id, &to).await?)
        }
        .await,
    )
}

/// Sets the second-pass mode: confirm or blind.
#[server(endpoint = "lead/annotation/mode")]
pub async fn set_second_pass_mode(project: String, mode: String) -> Result<(), ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                ssr::caller(crate::domain::account::ProjectRole::Lead, &project).await?;
            let mode = crate::domain::annotation::SecondPassMode::parse(&mode)
                .map_err(|e| ApiError::Invalid(e.to_string()))?;
            Ok(commands::annotate::set_mode(&db, &caller, mode).await?)
        }
        .await,
    )
}

/// Sets the judging order (`depth`, `mtf`, `mab-maxmean`, `mab-thompson`, `hedge`, `cal`), its
/// seed, the first-pass budget (blank: no limit) and `cal`'s corpus retrievals per claim
/// (blank or left out: unchanged), and whether to make them again (after the corpus or the
/// claims changed); returns what changed in the queues.
#[server(endpoint = "lead/annotation/judging")]
pub async fn set_judging_order(
    project: String,
    order: String,
    seed: String,
    budget: String,
    candidates: Option<String>,
    #[server(default)] retrieve_again: bool,
) -> Result<String, ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            let change = commands::project::SetJudging::parse_form(
                &order,
                &seed,
                &budget,
                candidates.as_deref().unwrap_or(""),
                retrieve_again,
            )?;
            Ok(change.run(&db, &lead).await?.unwrap_or_default())
        }
        .await,
    )
}

/// Draws a stopping sample for the `cal` order: a simple random sample of its candidates
/// unjudged now, served before its next proposals, for the hypergeometric test of `recall`
/// (blank: 0.9) with `confidence` (blank: 0.95); `size` blank: as many as the test needs.
#[server(endpoint = "lead/annotation/stop-sample")]
pub async fn draw_stop_sample(
    project: String,
    recall: String,
    confidence: String,
    size: String,
    seed: String,
) -> Result<String, ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            let draw =
                commands::project::DrawStopSample::parse_form(&recall, &confidence, &size, &seed)?;
            Ok(draw.run(&db, &lead).await?)
        }
        .await,
    )
}

/// A pooled pair with all its annotations and discussion (leads).
#[server(endpoint = "lead/annotation/pair")]
pub async fn pair_for_lead(project: String, entry_id: i64) -> Result<ItemView, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                ssr::caller(crate::domain::account::ProjectRole::Lead, &project).await?;
            commands::annotate::check_entry(&db, &caller, entry_id).await?;
            Ok(commands::annotate::item_for_lead(&db, &caller, entry_id).await?)
        }
        .await,
    )
}

/// A lead records the final label of a pair whose passes disagree.
#[server(endpoint = "lead/annotation/adjudicate", input = leptos::server_fn::codec::Json)]
pub async fn adjudicate(
    project: String,
    entry_id: i64,
    form: DraftForm,
    seconds_spent: f64,
) -> Result<LastSubmission, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                ssr::caller(crate::domain::account::ProjectRole::Lead, &project).await?;
            commands::annotate::check_entry(&db, &caller, entry_id).await?;
            Ok(commands::annotate::adjudicate(
                &db,
                &caller,
                entry_id,
                &form.to_draft(),
                seconds_spent,
            )
            .await?)
        }
        .await,
    )
}
