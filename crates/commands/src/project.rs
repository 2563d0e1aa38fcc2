//! Project commands: create a project, manage its members, set its judging order. Each parses
//! its input once and runs for a proof ([`Creator`] or [`Lead`]).

use super::{Creator, Lead};
use crate::access::ProjectCaller;
use crate::error::{CommandError, CommandResult, Field};
use domain::account::{ProjectRole, Role};
use domain::judging::{JudgingSettings, Order};
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

/// A change of the project's judging order, seed or first-pass budget; what is not given stays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SetJudging {
    pub order: Option<Order>,
    pub seed: Option<u64>,
    /// Some(None): no budget.
    pub budget: Option<Option<u64>>,
}

/// The project's judging settings with the first passes spent and held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Judging {
    pub settings: JudgingSettings,
    pub spent: u64,
    pub held: u64,
}

impl SetJudging {
    /// The page's form: every field given as text (`seed` and `budget` blank: 0 and none).
    pub fn parse_form(order: &str, seed: &str, budget: &str) -> CommandResult<SetJudging> {
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
        })
    }

    /// Whether anything changes.
    pub fn changes_anything(&self) -> bool {
        self.order.is_some() || self.seed.is_some() || self.budget.is_some()
    }

    /// Applies the change (audited) and says what changed in the queues; None when nothing
    /// was to change.
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
        let change: JudgingChange =
            store::annotate::set_judging(db, lead.project_id(), settings, lead.audit_id()).await?;
        Ok(Some(change.describe(&settings)))
    }
}

/// `depth`, `mtf`, `mab-maxmean`, `mab-thompson` or `hedge`.
pub fn parse_order(text: &str) -> CommandResult<Order> {
    Order::parse(text.trim()).map_err(|e| CommandError::field(Field::Order, e))
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
    fn the_forms_text_is_parsed_once_and_named_when_wrong() {
        let set = SetJudging::parse_form("mtf", "", "120").expect("valid");
        assert_eq!(set.order, Some(Order::parse("mtf").expect("mtf")));
        assert_eq!(set.seed, Some(0));
        assert_eq!(set.budget, Some(Some(120)));
        assert_eq!(
            SetJudging::parse_form("depth", "7", " ")
                .expect("valid")
                .budget,
            Some(None)
        );
        for (form, field) in [
            (("sideways", "", ""), "order"),
            (("mtf", "x", ""), "seed"),
            (("mtf", "", "-3"), "budget"),
        ] {
            let e = SetJudging::parse_form(form.0, form.1, form.2).expect_err("refused");
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
