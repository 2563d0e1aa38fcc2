//! Gold checks and qualification (leads): the project's settings, its gold items, admitting a
//! candidate by hand, and every annotator's figures. Each function checks that the caller leads
//! the project, then runs its command.

use crate::error::ApiError;
use crate::model::gold::GoldOverview;
use leptos::prelude::*;

/// The project's gold settings, items, annotators' figures and qualification candidates.
#[server(endpoint = "lead/gold")]
pub async fn load_gold(project: String) -> Result<GoldOverview, ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            Ok(commands::gold::overview(&db, &lead).await?)
        }
        .await,
    )
}

/// Sets one gold check among every `every` items (blank: none) and the qualification:
/// `training` items with feedback, then `graded` items passed at `pass` (graded 0: none).
#[server(endpoint = "lead/gold/settings")]
pub async fn set_gold(
    project: String,
    every: String,
    training: String,
    graded: String,
    pass: String,
) -> Result<(), ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            Ok(
                commands::gold::SetGold::parse_form(&every, &training, &graded, &pass)?
                    .run(&db, &lead)
                    .await?,
            )
        }
        .await,
    )
}

/// Adds decided pairs from `source` (citation or final) as gold items: `count` of them (blank:
/// all), drawn by `seed`. Returns how many were added.
#[server(endpoint = "lead/gold/add")]
pub async fn add_gold(
    project: String,
    source: String,
    count: String,
    seed: String,
) -> Result<usize, ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            Ok(commands::gold::AddGold::parse(&source, &count, &seed)?
                .run(&db, &lead)
                .await?)
        }
        .await,
    )
}

/// Turns re-annotation of disagreements by a fresh annotator on or off (`on`/`off`).
#[server(endpoint = "lead/gold/reannotation")]
pub async fn set_reannotation(project: String, reannotate: String) -> Result<(), ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            Ok(commands::gold::set_reannotation(&db, &lead, &reannotate).await?)
        }
        .await,
    )
}

/// Admits a qualification candidate by hand.
#[server(endpoint = "lead/gold/admit")]
pub async fn admit_candidate(project: String, username: String) -> Result<(), ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            Ok(commands::gold::admit(&db, &lead, &username).await?)
        }
        .await,
    )
}
