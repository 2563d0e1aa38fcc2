//! Model assessors (issue 16): register a system's predictions on the pool, or an external
//! command's answers about it, as an assessor, list them, and compare them with the people.
//! Each runs for a [`Lead`] proof, but a command runs only for the [`Operator`]: only the
//! server's administrator, at its shell, may start a program on the server. The lead may show
//! one assessor's labels to annotators as suggestions ([`SetSuggestions`]).

use super::{Lead, Operator};
use crate::error::{CommandError, CommandResult, Field};
use domain::assessor::{self, AssessorReport, AssessorSummary, StoredPrediction};
use domain::formats::RunRecord;
use domain::ids::{ClaimId, DocId};
use domain::model::annotate::SuggestionsView;
use pipeline::external::{self, Candidate, ClaimRequest, ExternalCommand, ExternalError};
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use store::assessors::{self, NewLabel, NewSource, PooledClaim};
use store::{self, Db};

/// Registers the predictions of `system` on the pooled pairs as the assessor `name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddAssessor {
    pub system: String,
    /// Checked by [`assessor::check_name`]; the system's name when none is given.
    pub name: String,
}

impl AddAssessor {
    /// Parses the system's name and the assessor's name (`None` or blank: the system's name).
    pub fn parse(system: &str, name: Option<&str>) -> CommandResult<AddAssessor> {
        let system = system.trim();
        if system.is_empty() {
            return Err(CommandError::field(Field::System, "is empty"));
        }
        let name = match name.map(str::trim).filter(|n| !n.is_empty()) {
            Some(name) => name,
            None => system,
        };
        let name = assessor::check_name(name)
            .map_err(|e| CommandError::field(Field::Name, e))?
            .to_owned();
        Ok(AddAssessor {
            system: system.to_owned(),
            name,
        })
    }

    /// Labels every pooled pair from the system's prediction and stores the assessor (audited).
    /// Refused before the pool is built, and for a run that gives a pooled pair neither a label
    /// nor both probabilities (the error names the pair).
    pub async fn run(&self, db: &Db, lead: &Lead) -> CommandResult<AssessorSummary> {
        let system_id = assessors::system_id(db, lead.project_id(), &self.system).await?;
        let pooled = assessors::pooled_predictions(db, lead.project_id(), system_id).await?;
        if pooled.is_empty() {
            return Err(CommandError::Conflict(
                "the project has no pooled pairs yet: build the pool first".into(),
            ));
        }
        let mut labels = Vec::with_capacity(pooled.len());
        for pair in &pooled {
            let (label, predicted) = match &pair.prediction {
                None => (domain::label::Label::Nei, false),
                Some(prediction) => {
                    let label = assessor::model_label(prediction).ok_or_else(|| {
                        CommandError::Invalid(format!(
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
                sentences: None,
            });
        }
        assessors::create(
            db,
            lead.project_id(),
            &self.name,
            NewSource::System(system_id),
            &labels,
            lead.audit_id(),
        )
        .await?;
        summary(db, lead, &self.name).await
    }
}

/// The assessor `name` as [`list`] shows it.
async fn summary(db: &Db, lead: &Lead, name: &str) -> CommandResult<AssessorSummary> {
    list(db, lead)
        .await?
        .into_iter()
        .find(|a| a.name == name)
        .ok_or_else(|| {
            CommandError::from(store::StoreError::Fault("the new assessor is gone".into()))
        })
}

/// Runs an external command (the external scorer's protocol) once over every pooled pair of a
/// project and registers its answers as the assessor `name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddCommandAssessor {
    /// The command line as given (stored and shown as such).
    pub line: String,
    pub command: ExternalCommand,
    /// Checked by [`assessor::check_name`]; required (a command has no name of its own).
    pub name: String,
}

impl AddCommandAssessor {
    /// Parses the command line (split into words without a shell, see
    /// [`ExternalCommand::parse`]) and the assessor's name.
    pub fn parse(line: &str, name: Option<&str>) -> CommandResult<AddCommandAssessor> {
        let command =
            ExternalCommand::parse(line).map_err(|e| CommandError::field(Field::Command, e))?;
        let name = name
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| CommandError::field(Field::Name, "is needed for a command assessor"))?;
        let name = assessor::check_name(name)
            .map_err(|e| CommandError::field(Field::Name, e))?
            .to_owned();
        Ok(AddCommandAssessor {
            line: line.trim().to_owned(),
            command,
            name,
        })
    }

    /// Sends every claim of the pool with its pooled abstracts to the command (one line per
    /// claim, the external scorer's request format, in claim id order; each claim's abstracts by
    /// doc id, `rank` their place in that order, no `bm25_score`), checks every answer as the
    /// external scorer does (every pair answered once with a label and both probabilities;
    /// rationale sentences within the abstract), and stores the labels (the stated label, the
    /// rationale if given) in one transaction. A command that cannot start, exits non-zero, or
    /// answers badly stores nothing; the error names the command, the output line and field, or
    /// the unanswered pairs. `progress` gets the number of claims answered, of `claims` (called
    /// once with 0 before the command starts).
    ///
    /// Only the operator at the shell may run a command on the server: no request reaches this.
    pub async fn run(
        &self,
        db: &Db,
        operator: &Operator,
        project: &str,
        progress: impl Fn(u64, u64) + Send + Sync + 'static,
    ) -> CommandResult<AssessorSummary> {
        let lead = operator.lead(db, project).await?;
        assessors::check_name_free(db, lead.project_id(), &self.name).await?;
        let claims = assessors::pooled_claims(db, lead.project_id()).await?;
        if claims.is_empty() {
            return Err(CommandError::Conflict(
                "the project has no pooled pairs yet: build the pool first".into(),
            ));
        }
        let keys: HashMap<(ClaimId, DocId), (i64, i64)> = claims
            .iter()
            .flat_map(|c| {
                c.docs
                    .iter()
                    .map(|(key, doc)| ((c.claim_id.clone(), doc.clone()), (c.key, *key)))
            })
            .collect();
        let total = claims.len() as u64;
        progress(0, total);
        let ran_at = store::now_ms();
        let records = ask(db.clone(), self.command.clone(), claims, move |n| {
            progress(n, total)
        })
        .await?;
        let mut labels = Vec::with_capacity(records.len());
        for record in records {
            let pair = (record.claim_id.clone(), record.doc_id.clone());
            let (Some(&key), Some(label)) =
                (keys.get(&pair), assessor::model_label(&stored(&record)))
            else {
                return Err(CommandError::from(store::StoreError::Fault(format!(
                    "the command's answer for claim {} / doc {} passed the checks unlabelled                      or unsent",
                    pair.0, pair.1
                ))));
            };
            labels.push(NewLabel {
                key,
                label,
                predicted: true,
                sentences: record.sentences,
            });
        }
        assessors::create(
            db,
            lead.project_id(),
            &self.name,
            NewSource::Command {
                line: &self.line,
                ran_at,
            },
            &labels,
            lead.audit_id(),
        )
        .await?;
        summary(db, &lead, &self.name).await
    }
}

/// What a checked answer gives, as a stored prediction.
fn stored(record: &RunRecord) -> StoredPrediction {
    StoredPrediction {
        label: record.label,
        p_support: record.p_support.map(|p| p.get()),
        p_contradict: record.p_contradict.map(|p| p.get()),
        p_nei: record.p_nei.map(|p| p.get()),
    }
}

/// Runs `command` over `claims` on a blocking thread, reading each claim's abstracts as it is
/// sent; every checked answer, or the command's error.
async fn ask(
    db: Db,
    command: ExternalCommand,
    claims: Vec<PooledClaim>,
    progress: impl Fn(u64) + Send + Sync + 'static,
) -> CommandResult<Vec<RunRecord>> {
    let handle = tokio::runtime::Handle::current();
    let asked = tokio::task::spawn_blocking(move || {
        let count = claims.len();
        let requests = claims.into_iter().map(|claim| {
            let keys: Vec<i64> = claim.docs.iter().map(|(key, _)| *key).collect();
            let abstracts = handle
                .block_on(assessors::abstracts(&db, &keys))
                .map_err(|e| ExternalError::Input(e.to_string()))?;
            let candidates = claim
                .docs
                .into_iter()
                .zip(abstracts)
                .zip(1_u32..)
                .map(|(((_, doc_id), text), rank)| Candidate {
                    doc_id,
                    title: text.title,
                    sentences: text.sentences,
                    rank,
                    bm25_score: None,
                })
                .collect();
            Ok(ClaimRequest {
                claim_id: claim.claim_id,
                claim: claim.text,
                candidates,
            })
        });
        let mut records = Vec::new();
        // The command line stops a run with Ctrl-C.
        let never = AtomicBool::new(false);
        external::exchange(
            &command,
            requests,
            count,
            &mut |record| {
                records.push(record);
                Ok(())
            },
            &progress,
            &never,
        )
        .map(|_| records)
    })
    .await
    .map_err(|e| store::StoreError::Fault(format!("the command's run stopped: {e}")))?;
    asked.map_err(|e| match e {
        ExternalError::Input(_) | ExternalError::Panicked(_) | ExternalError::Write(_) => {
            CommandError::Internal(e.to_string())
        }
        _ => CommandError::Invalid(e.to_string()),
    })
}

/// Turns the project's suggestions on, from one of its model assessors, or off: annotators
/// then see that assessor's label for the pair at the first and second pass (nothing else of
/// it). Off by default, for the anchoring it brings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetSuggestions {
    /// None: off.
    pub assessor: Option<String>,
}

impl SetSuggestions {
    /// Parses the assessor's name (None or blank: off), checked by [`assessor::check_name`].
    pub fn parse(assessor: Option<&str>) -> CommandResult<SetSuggestions> {
        let assessor = match assessor.map(str::trim).filter(|n| !n.is_empty()) {
            None => None,
            Some(name) => Some(
                assessor::check_name(name)
                    .map_err(|e| CommandError::field(Field::Assessor, e))?
                    .to_owned(),
            ),
        };
        Ok(SetSuggestions { assessor })
    }

    /// Sets the choice (audited); an assessor the project does not have is invalid, the message
    /// naming the field `assessor`. Returns the suggestions as they now stand.
    pub async fn run(&self, db: &Db, lead: &Lead) -> CommandResult<SuggestionsView> {
        assessors::set_suggestions(
            db,
            lead.project_id(),
            self.assessor.as_deref(),
            lead.audit_id(),
        )
        .await?;
        suggestions(db, lead).await
    }
}

/// The project's suggestions: the assessor annotators see (None: off) and those to choose from.
pub async fn suggestions(db: &Db, lead: &Lead) -> CommandResult<SuggestionsView> {
    Ok(assessors::suggestions(db, lead.project_id()).await?)
}

/// The project's model assessors, by name.
pub async fn list(db: &Db, lead: &Lead) -> CommandResult<Vec<AssessorSummary>> {
    Ok(assessors::list(db, lead.project_id()).await?)
}

/// Each model assessor against the people: κ with the final labels, and the systems' ranking
/// under the human qrels against the model's (empty when the project has no model assessor).
pub async fn report(db: &Db, lead: &Lead) -> CommandResult<Vec<AssessorReport>> {
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
        CommandError::from(store::StoreError::Corrupt(format!(
            "the project's labels cannot be scored: {e}"
        )))
    })
}
