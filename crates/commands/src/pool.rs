//! Pool commands: build or grow the pool, add a sample beyond its depth, preview depths, read
//! its statistics. Each parses its input once ([`BuildPool::parse`], ...) and runs for a
//! [`Lead`] proof; the command line, the server functions and the HTTP API call these.

use super::Lead;
use crate::error::{CommandError, CommandResult, Field};
use domain::pool::{DepthStep, Strategy};
use store::pool::{self as pools, BuildOptions, BuildReport, SampleReport, SampleRequest};
use store::Db;

/// The pool's statistics as [`stats`] gives them.
pub use store::pool::StatsReport;

/// Builds the project's pool at a depth with a strategy, or grows it (judgments stay).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildPool {
    pub strategy: Strategy,
    pub depth: u32,
}

fn strategy(text: &str) -> CommandResult<Strategy> {
    pools::parse_strategy(text.trim()).map_err(|e| CommandError::from(e).about(Field::Strategy))
}

impl BuildPool {
    /// `strategy` is `confidence` or `per-claim`; a depth of at least 1.
    pub fn parse(strategy_text: &str, depth: u32) -> CommandResult<BuildPool> {
        if depth == 0 {
            return Err(CommandError::field(
                Field::Depth,
                "a pool takes at least each system's top pair (depth >= 1)",
            ));
        }
        Ok(BuildPool {
            strategy: strategy(strategy_text)?,
            depth,
        })
    }

    /// Builds or grows the pool, audited as the lead's action.
    pub async fn run(self, db: &Db, lead: &Lead) -> CommandResult<BuildReport> {
        Ok(pools::build(
            db,
            lead.project_id(),
            self.strategy,
            self.depth,
            lead.audit_id(),
        )
        .await?)
    }
}

/// Adds a seeded stratified random sample of unjudged pairs beyond the pool's depth.
#[derive(Clone, Debug)]
pub struct AddSample(SampleRequest);

impl AddSample {
    /// `size` pairs over `strata` rank bands, drawn with `seed`.
    pub fn parse(size: u64, strata: u32, seed: u64) -> CommandResult<AddSample> {
        let size = usize::try_from(size)
            .map_err(|_| CommandError::Invalid(format!("sample size {size} is too large")))?;
        Ok(AddSample(SampleRequest::new(size, strata, seed)?))
    }

    /// Draws and stores the sample, audited as the lead's action.
    pub async fn run(self, db: &Db, lead: &Lead) -> CommandResult<SampleReport> {
        Ok(pools::build_sample(
            db,
            lead.project_id(),
            self.0,
            lead.audit_id(),
            &BuildOptions::default(),
        )
        .await?)
    }
}

/// What a pool would hold at several depths (nothing is written).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreviewPool {
    pub strategy: Strategy,
    pub depths: Vec<u32>,
}

impl PreviewPool {
    pub fn parse(strategy_text: &str, depths: Vec<u32>) -> CommandResult<PreviewPool> {
        Ok(PreviewPool {
            strategy: strategy(strategy_text)?,
            depths,
        })
    }

    pub async fn run(&self, db: &Db, lead: &Lead) -> CommandResult<Vec<DepthStep>> {
        Ok(pools::preview(db, lead.project_id(), self.strategy, &self.depths).await?)
    }
}

/// The pool's statistics (SciFact-Open Tables 2b and 2c), with prior evidence in each system's
/// top `top_k`; None before the first build.
pub async fn stats(db: &Db, lead: &Lead, top_k: u32) -> CommandResult<Option<StatsReport>> {
    if pools::settings(db, lead.project_id()).await?.is_none() {
        return Ok(None);
    }
    Ok(Some(pools::stats(db, lead.project_id(), top_k).await?))
}

/// Every pooled pair with its entry depth, final label and systems' ranks.
pub async fn list(db: &Db, lead: &Lead) -> CommandResult<Vec<pools::PoolRow>> {
    Ok(pools::list(db, lead.project_id()).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_options_are_parsed_once_and_named_when_wrong() {
        assert_eq!(
            BuildPool::parse(" per-claim ", 3).expect("valid"),
            BuildPool {
                strategy: Strategy::PerClaim,
                depth: 3
            }
        );
        let e = BuildPool::parse("deepest", 3).expect_err("bad strategy");
        assert!(e.to_string().starts_with("strategy:"), "{e}");
        let e = BuildPool::parse("confidence", 0).expect_err("depth 0");
        assert!(e.to_string().starts_with("depth:"), "{e}");
        assert!(AddSample::parse(0, 1, 1).is_err());
        assert!(PreviewPool::parse("confidence", vec![1, 2]).is_ok());
    }
}
