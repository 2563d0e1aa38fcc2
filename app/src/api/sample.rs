//! Sampled pools (issue 15): the pool page's "add a sample" and the report's section beyond the
//! depth (the sample's estimates, the stopping test and the planner). The figures are the
//! survey's (`commands::report::survey`, computed by `domain::report::survey`); the page only places
//! them.

use crate::error::ApiError;
use crate::model::survey::Survey;
use crate::model::BuildSummary;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// The stopping test's target recall and significance level on the report page (as the
/// command line's defaults).
pub const TARGET_RECALL: f64 = 0.9;
pub const ALPHA: f64 = 0.05;

/// The report's section beyond the depth: the survey, or why there is none (no pool yet, the
/// pooled systems changed since the sample).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SurveyView {
    pub survey: Option<Survey>,
    pub note: Option<String>,
}

/// Adds a stratified random sample of `size` unjudged pairs beyond the pool's depth over
/// `strata` rank bands (seeded by `seed`) to the pool; the drawn pairs go to annotators.
#[server(endpoint = "lead/pool/sample")]
pub async fn add_pool_sample(
    project: String,
    size: u32,
    strata: u32,
    seed: u64,
) -> Result<BuildSummary, ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            let r = commands::pool::AddSample::parse(u64::from(size), strata, seed)?
                .run(&db, &lead)
                .await?;
            Ok(BuildSummary {
                strategy: r.build.strategy,
                depth: r.build.depth,
                pool_size: r.build.pool_size,
                added: r.build.added,
                to_annotate: r.build.to_annotate,
            })
        }
        .await,
    )
}

/// The report's section beyond the depth, for the stopping test at [`TARGET_RECALL`] with
/// confidence 1 − [`ALPHA`].
#[server(endpoint = "report/survey")]
pub async fn report_survey(project: String) -> Result<SurveyView, ApiError> {
    crate::api::respond(
        async {
            use crate::domain::judging::RecallTarget;
            let (db, lead) = crate::api::lead(&project).await?;
            let target = RecallTarget::new(TARGET_RECALL, ALPHA)
                .map_err(|e| ApiError::Invalid(e.to_string()))?;
            let estimated = commands::report::Estimated::Project;
            let _turn = crate::state::heavy()?.turn("estimate").await?;
            Ok(
                match commands::report::survey(&db, &lead, target, estimated).await? {
                    Ok(survey) => SurveyView {
                        survey: Some(survey),
                        note: None,
                    },
                    Err(note) => SurveyView {
                        survey: None,
                        note: Some(note),
                    },
                },
            )
        }
        .await,
    )
}
