//! Model assessors (issue 16): register a system's predictions on the pool as an assessor, list
//! them, and compare them with the people. Each runs for a [`Lead`] proof.

use super::Lead;
use crate::domain::assessor::{self, AssessorReport, AssessorSummary};
use crate::error::{ApiError, ApiResult};
use crate::store::assessors::{self, NewLabel};
use crate::store::{self, Db};

/// Registers the predictions of `system` on the pooled pairs as the assessor `name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddAssessor {
    pub system: String,
    /// Checked by [`assessor::check_name`]; the system's name when none is given.
    pub name: String,
}

impl AddAssessor {
    /// Parses the system's name and the assessor's name (`None` or blank: the system's name).
    pub fn parse(system: &str, name: Option<&str>) -> ApiResult<AddAssessor> {
        let system = system.trim();
        if system.is_empty() {
            return Err(ApiError::Invalid("system: is empty".into()));
        }
        let name = match name.map(str::trim).filter(|n| !n.is_empty()) {
            Some(name) => name,
            None => system,
        };
        let name = assessor::check_name(name)
            .map_err(|e| ApiError::Invalid(format!("name: {e}")))?
            .to_owned();
        Ok(AddAssessor {
            system: system.to_owned(),
            name,
        })
    }

    /// Labels every pooled pair from the system's prediction and stores the assessor (audited).
    /// Refused before the pool is built, and for a run that gives a pooled pair neither a label
    /// nor both probabilities (the error names the pair).
    pub async fn run(&self, db: &Db, lead: &Lead) -> ApiResult<AssessorSummary> {
        let system_id = assessors::system_id(db, lead.project_id(), &self.system).await?;
        let pooled = assessors::pooled_predictions(db, lead.project_id(), system_id).await?;
        if pooled.is_empty() {
            return Err(ApiError::Conflict(
                "the project has no pooled pairs yet: build the pool first".into(),
            ));
        }
        let mut labels = Vec::with_capacity(pooled.len());
        for pair in &pooled {
            let (label, predicted) = match &pair.prediction {
                None => (crate::domain::label::Label::Nei, false),
                Some(prediction) => {
                    let label = assessor::model_label(prediction).ok_or_else(|| {
                        ApiError::Invalid(format!(
                            "system {:?} gives claim {} / doc {} neither a label nor \
                             p_support and p_contradict: a retrieval-only run cannot assess",
                            self.system, pair.claim, pair.doc
                        ))
                    })?;
                    (label, true)
                }
            };
            labels.push(NewLabel {
                key: pair.key,
                label,
                predicted,
            });
        }
        assessors::create(
            db,
            lead.project_id(),
            &self.name,
            system_id,
            &labels,
            lead.audit_id(),
        )
        .await?;
        list(db, lead)
            .await?
            .into_iter()
            .find(|a| a.name == self.name)
            .ok_or_else(|| {
                ApiError::from(store::StoreError::Fault("the new assessor is gone".into()))
            })
    }
}

/// The project's model assessors, by name.
pub async fn list(db: &Db, lead: &Lead) -> ApiResult<Vec<AssessorSummary>> {
    Ok(assessors::list(db, lead.project_id()).await?)
}

/// Each model assessor against the people: κ with the final labels, and the systems' ranking
/// under the human qrels against the model's (empty when the project has no model assessor).
pub async fn report(db: &Db, lead: &Lead) -> ApiResult<Vec<AssessorReport>> {
    let labels = assessors::labels(db, lead.project_id()).await?;
    if labels.is_empty() {
        return Ok(Vec::new());
    }
    let snapshot = store::report::snapshot(db, lead.project_id())
        .await?
        .snapshot;
    let computed = tokio::task::spawn_blocking(move || assessor::report(&snapshot, &labels))
        .await
        .map_err(|e| store::StoreError::Fault(format!("the assessor report stopped: {e}")))?;
    computed.map_err(|e| {
        ApiError::from(store::StoreError::Corrupt(format!(
            "the project's labels cannot be scored: {e}"
        )))
    })
}
