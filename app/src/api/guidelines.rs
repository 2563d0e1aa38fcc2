//! A project's annotation guidelines: members read and confirm the current version
//! (`guidelines/...`); its leads write new versions (`lead/guidelines/...`).

use crate::error::ApiError;
use crate::model::guidelines::{GuidelinesEditor, GuidelinesView};
use leptos::prelude::*;

/// The current guidelines rendered to safe HTML, and whether the caller confirmed them; None
/// when the project has none.
#[server(endpoint = "guidelines/view")]
pub async fn view_guidelines(project: String) -> Result<Option<GuidelinesView>, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) = crate::api::project_caller(
                crate::domain::account::ProjectRole::Annotator,
                &project,
            )
            .await?;
            let Some(current) = commands::guidelines::current(&db, &caller).await? else {
                return Ok(None);
            };
            let confirmed = commands::guidelines::has_confirmed_current(&db, &caller).await?;
            Ok(Some(GuidelinesView {
                version: current.version,
                html: crate::domain::guidelines::render_html(&current.markdown),
                author: current.author,
                created_at_ms: current.created_at_ms,
                confirmed,
            }))
        }
        .await,
    )
}

/// Confirms that the caller read `version` of the guidelines, which must be the current one.
#[server(endpoint = "guidelines/confirm")]
pub async fn confirm_guidelines(project: String, version: i64) -> Result<(), ApiError> {
    crate::api::respond(
        async {
            let (db, caller) = crate::api::project_caller(
                crate::domain::account::ProjectRole::Annotator,
                &project,
            )
            .await?;
            Ok(commands::guidelines::confirm(&db, &caller, version).await?)
        }
        .await,
    )
}

/// The current Markdown and every version (lead view).
#[server(endpoint = "lead/guidelines")]
pub async fn lead_guidelines(project: String) -> Result<GuidelinesEditor, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                crate::api::project_caller(crate::domain::account::ProjectRole::Lead, &project)
                    .await?;
            let current = commands::guidelines::current(&db, &caller).await?;
            Ok(GuidelinesEditor {
                current: current.map(|g| (g.version, g.markdown)),
                history: commands::guidelines::history(&db, &caller).await?,
            })
        }
        .await,
    )
}

/// Saves the text as the next version of the guidelines; returns its number. Members confirm
/// it before their next item.
#[server(endpoint = "lead/guidelines/save")]
pub async fn save_guidelines(project: String, markdown: String) -> Result<i64, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                crate::api::project_caller(crate::domain::account::ProjectRole::Lead, &project)
                    .await?;
            Ok(commands::guidelines::save(&db, &caller, &markdown).await?)
        }
        .await,
    )
}
