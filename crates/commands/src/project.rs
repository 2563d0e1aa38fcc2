//! Project commands: create a project, manage its members, set its judging order. Each parses
//! its input once and runs for a proof ([`Creator`] or [`Lead`]).

use super::{Creator, Lead};
use crate::access::ProjectCaller;
use crate::error::{CommandError, CommandResult, Field};
use crate::simulate::CorpusRetrieval;
use domain::account::{ProjectRole, Role};
use domain::judging::{JudgingOrder, JudgingSettings, RecallTarget};
use domain::model::{ClaimDetail, ClaimRow, Page, SystemRow};
use domain::model::{Member, ProjectSummary};
use store::annotate::JudgingChange;
use store::{self, Db};

/// Creates a project; a user who creates one leads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreateProject {
    /// 1 to 100 printable characters, trimmed.
    pub name: String,
    pub description: String,
}

impl CreateProject {
    pub fn parse(name: &str, description: &str) -> CommandResult<CreateProject> {
        let name = store::projects::check_name(name)
            .map_err(|e| CommandError::from(e).about(Field::Name))?
            .to_owned();
        Ok(CreateProject {
            name,
            description: description.trim().to_owned(),
        })
    }

    /// Creates the project (audited); returns its id.
    pub async fn run(&self, db: &Db, creator: &Creator) -> CommandResult<i64> {
        Ok(store::projects::create(
            db,
            &self.name,
            &self.description,
            creator.actor().audit_id(),
        )
        .await?)
    }
}

/// The projects the creator may lead: every project for admins and the operator, the projects
/// a lead leads.
pub async fn list(db: &Db, creator: &Creator) -> CommandResult<Vec<ProjectSummary>> {
    Ok(match creator.actor().user() {
        Some(user) if user.role != Role::Admin => store::projects::led_by(db, user.id).await?,
        _ => store::projects::list(db).await?,
    })
}

/// Makes a user a lead or an annotator of the project (or changes their role there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddMember {
    pub username: String,
    pub role: ProjectRole,
}

impl AddMember {
    pub fn parse(username: &str, role: &str) -> CommandResult<AddMember> {
        Ok(AddMember {
            username: username.trim().to_owned(),
            role: ProjectRole::parse(role.trim())
                .map_err(|e| CommandError::field(Field::Role, e))?,
        })
    }

    pub async fn run(&self, db: &Db, lead: &Lead) -> CommandResult<()> {
        let user = store::users::id_by_name(db, &self.username).await?;
        Ok(
            store::projects::add_member(db, lead.project_id(), user, self.role, lead.audit_id())
                .await?,
        )
    }
}

/// Ends a user's membership of the project (an annotator's open items go to the others).
pub async fn remove_member(db: &Db, lead: &Lead, username: &str) -> CommandResult<()> {
    Ok(
        store::projects::remove_member(db, lead.project_id(), username.trim(), lead.audit_id())
            .await?,
    )
}

/// The project's members with their roles (leads first).
pub async fn members(db: &Db, lead: &Lead) -> CommandResult<Vec<Member>> {
    Ok(store::projects::members(db, lead.project_id()).await?)
}

/// A change of the project's judging order, seed, first-pass budget or `cal`'s corpus
/// retrievals per claim; what is not given stays.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetJudging {
    pub order: Option<JudgingOrder>,
    pub seed: Option<u64>,
    /// Some(None): no budget.
    pub budget: Option<Option<u64>>,
    pub candidates: Option<u32>,
    /// How `cal`'s corpus retrievals are made when they must be (BM25 unless asked).
    pub retrieval: CorpusRetrieval,
    /// Make `cal`'s corpus retrievals again even if their count per claim is unchanged (the
    /// corpus or the claims changed).
    pub retrieve_again: bool,
}

/// The project's judging settings with the first passes spent and held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Judging {
    pub settings: JudgingSettings,
    pub spent: u64,
    pub held: u64,
}

impl SetJudging {
    /// The page's form: every field given as text (`seed` and `budget` blank: 0 and none,
    /// `candidates` blank: unchanged), and its "make the retrievals again" box.
    pub fn parse_form(
        order: &str,
        seed: &str,
        budget: &str,
        candidates: &str,
        retrieve_again: bool,
    ) -> CommandResult<SetJudging> {
        let number = |field: Field, text: &str| {
            text.parse::<u64>().map_err(|e| {
                CommandError::field(field, format!("{text:?} is not a whole number ({e})"))
            })
        };
        Ok(SetJudging {
            order: Some(parse_order(order)?),
            seed: Some(match seed.trim() {
                "" => 0,
                text => number(Field::Seed, text)?,
            }),
            budget: Some(match budget.trim() {
                "" => None,
                text => Some(number(Field::Budget, text)?),
            }),
            candidates: match candidates.trim() {
                "" => None,
                text => Some(parse_candidates(number(Field::Candidates, text)?)?),
            },
            retrieve_again,
            ..SetJudging::default()
        })
    }

    /// Whether anything changes.
    pub fn changes_anything(&self) -> bool {
        self.order.is_some()
            || self.seed.is_some()
            || self.budget.is_some()
            || self.candidates.is_some()
            || self.retrieve_again
    }

    /// Applies the change (audited) and says what changed in the queues; None when nothing
    /// was to change. Under `cal`, the corpus retrievals are made first when there are none,
    /// their count per claim or retriever changed, or `retrieve_again` asks: if they fail,
    /// nothing changes.
    pub async fn run(self, db: &Db, lead: &Lead) -> CommandResult<Option<String>> {
        if !self.changes_anything() {
            return Ok(None);
        }
        let (mut settings, _, _) = store::annotate::judging(db, lead.project_id()).await?;
        if let Some(order) = self.order {
            settings.order = order;
        }
        if let Some(seed) = self.seed {
            settings.seed = seed;
        }
        if let Some(budget) = self.budget {
            if budget.is_some_and(|b| i64::try_from(b).is_err()) {
                return Err(CommandError::field(Field::Budget, "too large"));
            }
            settings.budget = budget;
        }
        if let Some(candidates) = self.candidates {
            settings.candidates = candidates;
        }
        let mut retrieved = None;
        if settings.order == JudgingOrder::Cal {
            let made = store::judging::cal_retrieval_set(db, lead.project_id()).await?;
            let current = made.is_some_and(|(per_claim, retriever)| {
                per_claim == settings.candidates && retriever == self.retrieval.name()
            });
            if !current || self.retrieve_again {
                retrieved = Some(
                    crate::simulate::make_cal_retrievals(
                        db,
                        lead,
                        &self.retrieval,
                        settings.candidates,
                    )
                    .await?,
                );
            }
        }
        let change: JudgingChange =
            store::annotate::set_judging(db, lead.project_id(), settings, lead.audit_id()).await?;
        let mut text = change.describe(&settings);
        if let Some(pairs) = retrieved {
            text.push_str(&format!(
                " The corpus was searched for each claim's top {} ({}): {pairs} pairs.",
                settings.candidates,
                self.retrieval.name()
            ));
        }
        Ok(Some(text))
    }
}

/// A stopping sample for the live `cal` order: a target recall, the confidence the test
/// states it with, the sample's size (None: as many as the test needs) and its seed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrawStopSample {
    pub target: RecallTarget,
    pub size: Option<u64>,
    pub seed: u64,
}

/// The test's defaults: recall 0.9 with 95% confidence.
pub const DEFAULT_TARGET_RECALL: f64 = 0.9;
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

impl DrawStopSample {
    /// `recall` in (0, 1], `confidence` in (0, 1), `size` at least 1 if given.
    pub fn parse(
        recall: f64,
        confidence: f64,
        size: Option<u64>,
        seed: u64,
    ) -> CommandResult<DrawStopSample> {
        if !(confidence > 0.0 && confidence < 1.0) {
            return Err(CommandError::field(
                Field::Confidence,
                format!("{confidence} is not between 0 and 1"),
            ));
        }
        let target = RecallTarget::new(recall, 1.0 - confidence).map_err(|_| {
            CommandError::field(
                Field::TargetRecall,
                format!("{recall} is not above 0 and at most 1"),
            )
        })?;
        if size == Some(0) {
            return Err(CommandError::field(Field::SampleSize, "must be at least 1"));
        }
        Ok(DrawStopSample { target, size, seed })
    }

    /// The page's form, every field as text (blank: the default; `size` blank: as many as the
    /// test needs, `seed` blank: 0).
    pub fn parse_form(
        recall: &str,
        confidence: &str,
        size: &str,
        seed: &str,
    ) -> CommandResult<DrawStopSample> {
        let real = |field: Field, text: &str, default: f64| match text.trim() {
            "" => Ok(default),
            text => text
                .parse::<f64>()
                .map_err(|e| CommandError::field(field, format!("{text:?} is not a number ({e})"))),
        };
        let whole = |field: Field, text: &str| match text.trim() {
            "" => Ok(None),
            text => text.parse::<u64>().map(Some).map_err(|e| {
                CommandError::field(field, format!("{text:?} is not a whole number ({e})"))
            }),
        };
        DrawStopSample::parse(
            real(Field::TargetRecall, recall, DEFAULT_TARGET_RECALL)?,
            real(Field::Confidence, confidence, DEFAULT_CONFIDENCE)?,
            whole(Field::SampleSize, size)?,
            whole(Field::Seed, seed)?.unwrap_or(0),
        )
    }

    /// Draws the sample (audited) and says what was drawn.
    pub async fn run(self, db: &Db, lead: &Lead) -> CommandResult<String> {
        let drawn = store::annotate::draw_stop_sample(
            db,
            lead.project_id(),
            lead.audit_id(),
            self.target,
            self.size,
            self.seed,
        )
        .await?;
        let recall = 100.0 * self.target.recall();
        let confidence = 100.0 * (1.0 - self.target.alpha());
        Ok(match drawn {
            None => format!(
                "No sample is needed: even were every unjudged candidate evidence, cal has found {recall:.0}% of the candidates' evidence."
            ),
            Some(drawn) => format!(
                "Drew {} of the {} unjudged candidates at random (seed {}); they are served before cal's next proposals. Once all are judged, the test says whether cal has found {recall:.0}% of the evidence with {confidence:.0}% confidence ({} evidence pairs found so far).",
                drawn.size, drawn.unjudged, self.seed, drawn.found
            ),
        })
    }
}

/// The `cal` order's latest stopping sample and its test (None: none, or the order is not
/// `cal`).
pub async fn stop_sample(
    db: &Db,
    lead: &Lead,
) -> CommandResult<Option<domain::model::annotate::CalStopView>> {
    Ok(cal_view(db, lead).await?.and_then(|cal| cal.stopping))
}

/// What `cal` works with and has added, once its retrievals were made.
pub async fn cal_view(
    db: &Db,
    lead: &Lead,
) -> CommandResult<Option<domain::model::annotate::CalView>> {
    Ok(store::annotate::judging_view(db, lead.project_id())
        .await?
        .cal)
}

/// The most corpus retrievals per claim `cal` may add.
pub const MAX_CAL_CANDIDATES: u64 = 10_000;

/// `cal`'s corpus retrievals per claim: 1 to [`MAX_CAL_CANDIDATES`].
pub fn parse_candidates(k: u64) -> CommandResult<u32> {
    match u32::try_from(k) {
        Ok(k) if (1..=MAX_CAL_CANDIDATES).contains(&u64::from(k)) => Ok(k),
        _ => Err(CommandError::field(
            Field::Candidates,
            format!("{k} is not between 1 and {MAX_CAL_CANDIDATES}"),
        )),
    }
}

/// `depth`, `mtf`, `mab-maxmean`, `mab-thompson`, `hedge` or `cal`.
pub fn parse_order(text: &str) -> CommandResult<JudgingOrder> {
    JudgingOrder::parse(text.trim()).map_err(|e| CommandError::field(Field::Order, e))
}

/// The project's judging settings and first passes spent and held.
pub async fn judging(db: &Db, lead: &Lead) -> CommandResult<Judging> {
    let (settings, spent, held) = store::annotate::judging(db, lead.project_id()).await?;
    Ok(Judging {
        settings,
        spent,
        held,
    })
}

/// The ready systems of the caller's project.
pub async fn systems(db: &Db, caller: &ProjectCaller) -> CommandResult<Vec<SystemRow>> {
    Ok(store::projects::systems(db, caller.project_id()).await?)
}

/// The caller's project at a glance.
pub async fn summary(db: &Db, caller: &ProjectCaller) -> CommandResult<ProjectSummary> {
    Ok(store::projects::summary(db, caller.project()).await?)
}

/// A page of the project's claims matching `search`, from `offset`, at most `limit`.
pub async fn claims_page(
    db: &Db,
    caller: &ProjectCaller,
    search: &str,
    offset: i64,
    limit: i64,
) -> CommandResult<Page<ClaimRow>> {
    Ok(store::projects::claims_page(db, caller.project_id(), search, offset, limit).await?)
}

/// One claim of the project with its pooled pairs.
pub async fn claim_detail(
    db: &Db,
    caller: &ProjectCaller,
    claim_id: &str,
) -> CommandResult<ClaimDetail> {
    Ok(store::projects::claim_detail(db, caller.project_id(), claim_id).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopping_samples_form_has_defaults_and_names_what_is_wrong() {
        let draw = DrawStopSample::parse_form("", "", "", "").expect("defaults");
        assert_eq!(draw.target.recall(), DEFAULT_TARGET_RECALL);
        assert!((draw.target.alpha() - (1.0 - DEFAULT_CONFIDENCE)).abs() < 1e-12);
        assert_eq!((draw.size, draw.seed), (None, 0));
        let draw = DrawStopSample::parse_form("0.8", "0.9", "250", "4").expect("valid");
        assert_eq!(draw.target.recall(), 0.8);
        assert_eq!((draw.size, draw.seed), (Some(250), 4));
        for (form, field) in [
            (("1.5", "", "", ""), "target recall"),
            (("0", "", "", ""), "target recall"),
            (("x", "", "", ""), "target recall"),
            (("", "1", "", ""), "confidence"),
            (("", "0.95.", "", ""), "confidence"),
            (("", "", "0", ""), "sample size"),
            (("", "", "-3", ""), "sample size"),
            (("", "", "", "seed"), "seed"),
        ] {
            let e =
                DrawStopSample::parse_form(form.0, form.1, form.2, form.3).expect_err("refused");
            assert!(e.to_string().starts_with(field), "{form:?}: {e}");
        }
    }

    #[test]
    fn the_forms_text_is_parsed_once_and_named_when_wrong() {
        let set = SetJudging::parse_form("mtf", "", "120", "", false).expect("valid");
        assert_eq!(set.order, Some(JudgingOrder::parse("mtf").expect("mtf")));
        assert_eq!(set.seed, Some(0));
        assert_eq!(set.budget, Some(Some(120)));
        assert_eq!(
            SetJudging::parse_form("depth", "7", " ", "", false)
                .expect("valid")
                .budget,
            Some(None)
        );
        let cal = SetJudging::parse_form("CAL", "3", "", "250", false).expect("valid");
        assert_eq!(cal.order, Some(JudgingOrder::Cal));
        assert_eq!(cal.candidates, Some(250));
        for (form, field) in [
            (("sideways", "", "", ""), "order"),
            (("mtf", "x", "", ""), "seed"),
            (("mtf", "", "-3", ""), "budget"),
            (("cal", "", "", "0"), "candidates"),
            (("cal", "", "", "10001"), "candidates"),
        ] {
            let e =
                SetJudging::parse_form(form.0, form.1, form.2, form.3, false).expect_err("refused");
            assert!(e.to_string().starts_with(field), "{form:?}: {e}");
        }
        assert!(!SetJudging::default().changes_anything());
        assert!(AddMember::parse("ann", "owner").is_err());
        assert_eq!(
            CreateProject::parse("  scifact ", " d ").expect("valid"),
            CreateProject {
                name: "scifact".into(),
                description: "d".into()
            }
        );
        assert!(CreateProject::parse("  ", "").is_err());
    }
}
