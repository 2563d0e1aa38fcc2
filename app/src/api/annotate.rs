//! Annotation: the annotator's queue and form (endpoints `work/...`), and the lead's
//! annotation management and adjudication (`lead/annotation/...`). Every function checks the
//! caller's role; the store checks that an item is the caller's.

use crate::error::ApiError;
use crate::model::annotate::{
    AnnotationOverview, CommentView, DraftForm, ItemView, LastSubmission, OpenItemRow, QueueHead,
};
use leptos::prelude::*;

#[cfg(feature = "ssr")]
mod ssr {
    use super::*;
    use crate::domain::account::{Role, User};
    use crate::store::annotate::Actor;
    use crate::store::Db;

    pub fn actor(user: &User) -> Actor {
        Actor {
            id: user.id,
            is_lead: user.role.satisfies(Role::Lead),
        }
    }

    pub async fn caller(role: Role, project: &str) -> Result<(Db, i64, User), ApiError> {
        let user = crate::auth::require(role).await?;
        let db = crate::state::db()?;
        let id = crate::store::projects::id_by_name(&db, project).await?;
        Ok((db, id, user))
    }

    pub async fn head(db: &Db, user: &User, project: i64) -> Result<QueueHead, ApiError> {
        Ok(crate::store::annotate::queue_head(db, actor(user), project).await?)
    }
}

/// The head of the caller's queue in `project`: current item, next item, counts.
#[server(endpoint = "work/queue")]
pub async fn load_queue(project: String) -> Result<QueueHead, ApiError> {
    crate::api::respond(
        async {
            let (db, id, user) =
                ssr::caller(crate::domain::account::Role::Annotator, &project).await?;
            ssr::head(&db, &user, id).await
        }
        .await,
    )
}

/// Submits the caller's annotation of their open item; returns the new queue head.
#[server(endpoint = "work/submit", input = leptos::server_fn::codec::Json)]
pub async fn submit_item(
    project: String,
    assignment_id: i64,
    form: DraftForm,
    seconds_spent: f64,
) -> Result<QueueHead, ApiError> {
    crate::api::respond(
        async {
            let (db, id, user) =
                ssr::caller(crate::domain::account::Role::Annotator, &project).await?;
            crate::store::annotate::submit(
                &db,
                ssr::actor(&user),
                crate::store::annotate::Target::Assignment(assignment_id),
                &form.to_draft(),
                seconds_spent,
            )
            .await?;
            ssr::head(&db, &user, id).await
        }
        .await,
    )
}

/// Undoes the caller's last submission in `project` (within the window).
#[server(endpoint = "work/undo")]
pub async fn undo_last(project: String) -> Result<QueueHead, ApiError> {
    crate::api::respond(
        async {
            let (db, id, user) =
                ssr::caller(crate::domain::account::Role::Annotator, &project).await?;
            crate::store::annotate::undo_last(&db, ssr::actor(&user), id).await?;
            ssr::head(&db, &user, id).await
        }
        .await,
    )
}

/// Sends the caller's open item to the end of their queue.
#[server(endpoint = "work/skip")]
pub async fn skip_item(project: String, assignment_id: i64) -> Result<QueueHead, ApiError> {
    crate::api::respond(
        async {
            let (db, id, user) =
                ssr::caller(crate::domain::account::Role::Annotator, &project).await?;
            crate::store::annotate::skip(&db, ssr::actor(&user), assignment_id).await?;
            ssr::head(&db, &user, id).await
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
            let (db, id, user) =
                ssr::caller(crate::domain::account::Role::Annotator, &project).await?;
            crate::store::annotate::flag(&db, ssr::actor(&user), assignment_id, &note).await?;
            ssr::head(&db, &user, id).await
        }
        .await,
    )
}

/// Adds a comment to a pair the caller judged (or any pair, for a lead).
#[server(endpoint = "work/comment")]
pub async fn add_comment(entry_id: i64, body: String) -> Result<Vec<CommentView>, ApiError> {
    crate::api::respond(
        async {
            let user = crate::auth::require(crate::domain::account::Role::Annotator).await?;
            let db = crate::state::db()?;
            Ok(
                crate::store::annotate::add_comment(&db, ssr::actor(&user), entry_id, &body)
                    .await?,
            )
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
            Ok(crate::store::work::projects_of(&db, user.id).await?)
        }
        .await,
    )
}

/// Annotation in a project at a glance (leads).
#[server(endpoint = "lead/annotation")]
pub async fn annotation_summary(project: String) -> Result<AnnotationOverview, ApiError> {
    crate::api::respond(
        async {
            let (db, id, _) = ssr::caller(crate::domain::account::Role::Lead, &project).await?;
            Ok(crate::store::annotate::overview(&db, id).await?)
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
            let (db, id, user) = ssr::caller(crate::domain::account::Role::Lead, &project).await?;
            Ok(
                crate::store::annotate::set_active(&db, id, &username, active, ssr::actor(&user))
                    .await?,
            )
        }
        .await,
    )
}

/// Every open item of the project, for reassignment.
#[server(endpoint = "lead/annotation/open")]
pub async fn open_items(project: String) -> Result<Vec<OpenItemRow>, ApiError> {
    crate::api::respond(
        async {
            let (db, id, _) = ssr::caller(crate::domain::account::Role::Lead, &project).await?;
            Ok(crate::store::annotate::open_items(&db, id).await?)
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
            let (db, id, user) = ssr::caller(crate::domain::account::Role::Lead, &project).await?;
            Ok(crate::store::annotate::reassign_item(
                &db,
                id,
                assignment_id,
                &to,
                ssr::actor(&user),
            )
            .await?)
        }
        .await,
    )
}

/// Sets the second-pass mode: confirm or blind.
#[server(endpoint = "lead/annotation/mode")]
pub async fn set_second_pass_mode(project: String, mode: String) -> Result<(), ApiError> {
    crate::api::respond(
        async {
            let (db, id, user) = ssr::caller(crate::domain::account::Role::Lead, &project).await?;
            let mode = crate::domain::annotation::SecondPassMode::parse(&mode)
                .map_err(|e| ApiError::Invalid(e.to_string()))?;
            Ok(crate::store::annotate::set_mode(&db, id, mode, ssr::actor(&user)).await?)
        }
        .await,
    )
}

/// A pooled pair with all its annotations and discussion (leads).
#[server(endpoint = "lead/annotation/pair")]
pub async fn pair_for_lead(project: String, entry_id: i64) -> Result<ItemView, ApiError> {
    crate::api::respond(
        async {
            let (db, id, user) = ssr::caller(crate::domain::account::Role::Lead, &project).await?;
            let item =
                crate::store::annotate::item_for_lead(&db, ssr::actor(&user), entry_id).await?;
            let project_of: i64 = crate::store::annotate::project_of_entry(&db, entry_id).await?;
            if project_of != id {
                return Err(ApiError::NotFound(format!("pair #{entry_id} in {project}")));
            }
            Ok(item)
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
            let (db, id, user) = ssr::caller(crate::domain::account::Role::Lead, &project).await?;
            if crate::store::annotate::project_of_entry(&db, entry_id).await? != id {
                return Err(ApiError::NotFound(format!("pair #{entry_id} in {project}")));
            }
            Ok(crate::store::annotate::submit(
                &db,
                ssr::actor(&user),
                crate::store::annotate::Target::LeadAdjudication { entry_id },
                &form.to_draft(),
                seconds_spent,
            )
            .await?)
        }
        .await,
    )
}
