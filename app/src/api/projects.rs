//! Projects: the lead's overview and claim lists; the annotator's own counts.

use crate::error::ApiError;
use crate::model::{ClaimRow, Page, ProjectSummary};
use leptos::prelude::*;

/// Claims per page of the claim list.
pub const CLAIMS_PER_PAGE: i64 = 50;

#[server(endpoint = "lead/projects")]
pub async fn list_projects() -> Result<Vec<ProjectSummary>, ApiError> {
    crate::api::respond(
        async {
            let user = crate::auth::require(crate::domain::account::Role::Lead).await?;
            let db = crate::state::db()?;
            // Admins see every project; a lead the projects they lead.
            Ok(match user.role {
                crate::domain::account::Role::Admin => crate::store::projects::list(&db).await?,
                _ => crate::store::projects::led_by(&db, user.id).await?,
            })
        }
        .await,
    )
}

#[server(endpoint = "lead/project")]
pub async fn project_overview(name: String) -> Result<ProjectSummary, ApiError> {
    crate::api::respond(
        async {
            crate::auth::require_project(&name, crate::domain::account::ProjectRole::Lead).await?;
            Ok(crate::store::projects::summary(&crate::state::db()?, &name).await?)
        }
        .await,
    )
}

#[server(endpoint = "lead/claims")]
pub async fn claims_page(
    project: String,
    search: String,
    offset: i64,
) -> Result<Page<ClaimRow>, ApiError> {
    crate::api::respond(
        async {
            let id =
                crate::auth::require_project(&project, crate::domain::account::ProjectRole::Lead)
                    .await?
                    .project_id();
            let db = crate::state::db()?;
            Ok(crate::store::projects::claims_page(
                &db,
                id,
                &search,
                offset.max(0),
                CLAIMS_PER_PAGE,
            )
            .await?)
        }
        .await,
    )
}
