//! Suggestions (leads): whether annotators see a model assessor's label for the pair they
//! label, and whose. Each function checks that the caller leads the project, then runs its
//! command.

use crate::error::ApiError;
use crate::model::annotate::SuggestionsView;
use leptos::prelude::*;

/// The model assessor annotators see (None: off) and the project's assessors to choose from.
#[server(endpoint = "lead/suggestions")]
pub async fn load_suggestions(project: String) -> Result<SuggestionsView, ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            Ok(commands::assessor::suggestions(&db, &lead).await?)
        }
        .await,
    )
}

/// Turns suggestions on, from the project's model assessor `assessor`, or off (blank).
#[server(endpoint = "lead/suggestions/set")]
pub async fn set_suggestions(
    project: String,
    assessor: String,
) -> Result<SuggestionsView, ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            Ok(commands::assessor::SetSuggestions::parse(Some(&assessor))?
                .run(&db, &lead)
                .await?)
        }
        .await,
    )
}
