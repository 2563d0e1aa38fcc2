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
            let creator = commands::Creator::of(&user)?;
            // Admins see every project; a lead the projects they lead.
            Ok(commands::project::list(&crate::state::db()?, &creator).await?)
        }
        .await,
    )
}

#[server(endpoint = "lead/project")]
pub async fn project_overview(name: String) -> Result<ProjectSummary, ApiError> {
    crate::api::respond(
        async {
            let caller =
                crate::auth::require_project(&name, crate::domain::account::ProjectRole::Lead)
                    .await?;
            Ok(commands::project::summary(&crate::state::db()?, &caller).await?)
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
            let (db, caller) =
                crate::api::project_caller(crate::domain::account::ProjectRole::Lead, &project)
                    .await?;
            Ok(commands::project::claims_page(
                &db,
                &caller,
                &search,
                offset.max(0),
                CLAIMS_PER_PAGE,
            )
            .await?)
        }
        .await,
    )
}

/// Creates a project; its creator leads it. Returns its name (as stored: trimmed).
#[server(endpoint = "lead/project/create")]
pub async fn create_project(name: String, description: String) -> Result<String, ApiError> {
    crate::api::respond(
        async {
            let user = crate::auth::require(crate::domain::account::Role::Lead).await?;
            new_project(&crate::state::db()?, &user, &name, &description).await
        }
        .await,
    )
}

/// Creates a project led by `creator`, who must hold the lead role (the page's form and the
/// HTTP API); returns its name as stored (trimmed). Audited.
#[cfg(feature = "ssr")]
pub async fn new_project(
    db: &commands::Db,
    creator: &crate::domain::account::User,
    name: &str,
    description: &str,
) -> Result<String, ApiError> {
    let creator = commands::Creator::of(creator)?;
    let create = commands::project::CreateProject::parse(name, description)?;
    create.run(db, &creator).await?;
    Ok(create.name)
}

/// The project's members with their roles (leads first).
#[server(endpoint = "lead/members")]
pub async fn project_members(project: String) -> Result<Vec<crate::model::Member>, ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            Ok(commands::project::members(&db, &lead).await?)
        }
        .await,
    )
}

/// Adds a user to the project as a lead or an annotator (or changes their role there).
#[server(endpoint = "lead/members/add")]
pub async fn add_project_member(
    project: String,
    username: String,
    role: String,
) -> Result<(), ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            Ok(commands::project::AddMember::parse(&username, &role)?
                .run(&db, &lead)
                .await?)
        }
        .await,
    )
}

/// Ends a user's membership of the project (an annotator's open items go to the others).
#[server(endpoint = "lead/members/remove")]
pub async fn remove_project_member(project: String, username: String) -> Result<(), ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            Ok(commands::project::remove_member(&db, &lead, &username).await?)
        }
        .await,
    )
}
