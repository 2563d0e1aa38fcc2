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
            crate::auth::require(crate::domain::account::Role::Lead).await?;
            Ok(crate::store::projects::list(&crate::state::db()?).await?)
        }
        .await,
    )
}

#[server(endpoint = "lead/project")]
pub async fn project_overview(name: String) -> Result<ProjectSummary, ApiError> {
    crate::api::respond(
        async {
            crate::auth::require(crate::domain::account::Role::Lead).await?;
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
            crate::auth::require(crate::domain::account::Role::Lead).await?;
            let db = crate::state::db()?;
            let id = crate::store::projects::id_by_name(&db, &project).await?;
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
