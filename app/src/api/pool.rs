//! The lead's pool tools: systems, preview, build or grow, statistics, one claim's pairs.

use crate::error::ApiError;
use crate::model::{BuildSummary, ClaimDetail, PoolStatsView, PreviewStep, SystemRow};
use leptos::prelude::*;

#[server(endpoint = "lead/systems")]
pub async fn list_systems(project: String) -> Result<Vec<SystemRow>, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                crate::api::project_caller(crate::domain::account::ProjectRole::Lead, &project)
                    .await?;
            Ok(commands::project::systems(&db, &caller).await?)
        }
        .await,
    )
}

#[server(endpoint = "lead/pool/preview")]
pub async fn preview_pool(
    project: String,
    strategy: String,
    depths: Vec<u32>,
) -> Result<Vec<PreviewStep>, ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            let preview = commands::pool::PreviewPool::parse(&strategy, depths)?;
            let steps = preview.run(&db, &lead).await?;
            Ok(steps
                .into_iter()
                .map(|s| PreviewStep {
                    depth: s.depth,
                    pool_size: s.pool_size,
                    added: s.added,
                    to_annotate: s.to_annotate,
                })
                .collect())
        }
        .await,
    )
}

#[server(endpoint = "lead/pool/build")]
pub async fn build_pool(
    project: String,
    strategy: String,
    depth: u32,
) -> Result<BuildSummary, ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            build(&db, &lead, &strategy, depth).await
        }
        .await,
    )
}

/// Builds the project's pool at `depth` with `strategy` (`confidence` or `per-claim`), or grows
/// it (judgments stay): the command behind the page's button and the HTTP API. Audited.
#[cfg(feature = "ssr")]
pub async fn build(
    db: &commands::Db,
    lead: &commands::Lead,
    strategy: &str,
    depth: u32,
) -> Result<BuildSummary, ApiError> {
    let r = commands::pool::BuildPool::parse(strategy, depth)?
        .run(db, lead)
        .await?;
    Ok(BuildSummary {
        strategy: r.strategy,
        depth: r.depth,
        pool_size: r.pool_size,
        added: r.added,
        to_annotate: r.to_annotate,
    })
}

/// The pool statistics, or None before the first build.
#[server(endpoint = "lead/pool/stats")]
pub async fn pool_stats(project: String) -> Result<Option<PoolStatsView>, ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            stats(&db, &lead).await
        }
        .await,
    )
}

/// The project's pool statistics (Tables 2b and 2c), or None before the first build.
#[cfg(feature = "ssr")]
pub async fn stats(
    db: &commands::Db,
    lead: &commands::Lead,
) -> Result<Option<PoolStatsView>, ApiError> {
    let Some(r) = commands::pool::stats(db, lead, 50).await? else {
        return Ok(None);
    };
    let s = r.stats;
    let p = r.prior_evidence;
    Ok(Some(PoolStatsView {
        strategy: r.strategy,
        depth: s.depth,
        pool_size: s.pool_size,
        judged: s.judged,
        evidence: s.evidence,
        by_system_count: s
            .by_system_count
            .into_iter()
            .map(|row| {
                (
                    row.systems,
                    row.pooled,
                    row.judged,
                    row.evidence,
                    row.percent_evidence,
                )
            })
            .collect(),
        per_system: s
            .per_system
            .into_iter()
            .map(|row| (row.system, row.pooled, row.unique))
            .collect(),
        prior_total: p.total,
        prior_in_pool: p.in_pool,
        top_k: p.top_k,
        prior: p
            .per_system
            .into_iter()
            .map(|row| {
                let role = match row.role {
                    crate::domain::pool::Role::Pooled => "pooled",
                    crate::domain::pool::Role::EvaluationOnly => "evaluation-only",
                };
                (
                    row.system,
                    role.to_owned(),
                    row.retrieved,
                    row.in_top_k,
                    row.in_top_depth,
                )
            })
            .collect(),
    }))
}

#[server(endpoint = "lead/claim")]
pub async fn get_claim(project: String, claim_id: String) -> Result<ClaimDetail, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                crate::api::project_caller(crate::domain::account::ProjectRole::Lead, &project)
                    .await?;
            Ok(commands::project::claim_detail(&db, &caller, &claim_id).await?)
        }
        .await,
    )
}
