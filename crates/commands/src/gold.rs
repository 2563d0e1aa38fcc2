//! Gold commands (issue 16): how a project uses gold, which pairs are gold, admitting a
//! qualification candidate by hand, and the lead's figures. Each runs for a [`Lead`].

use super::Lead;
use crate::error::{CommandError, CommandResult, Field};
use domain::gold_checks::{GoldError, GoldSettings, Source};
use domain::model::gold::GoldOverview;
use store::{self, Db};

/// A gold rule's error names its field itself.
fn invalid(e: GoldError) -> CommandError {
    CommandError::Invalid(e.to_string())
}

/// Sets the project's gold checks (one in every N items) and qualification.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SetGold(pub GoldSettings);

impl SetGold {
    /// Reads the form's (or the command line's) text: `every` blank for no checks; `graded` 0
    /// for no qualification; `pass` a share or a percentage.
    pub fn parse_form(
        every: &str,
        training: &str,
        graded: &str,
        pass: &str,
    ) -> CommandResult<SetGold> {
        GoldSettings::parse_form(every, training, graded, pass)
            .map(SetGold)
            .map_err(invalid)
    }

    pub async fn run(self, db: &Db, lead: &Lead) -> CommandResult<()> {
        Ok(
            store::annotate::gold::set_settings(db, lead.audit_id(), lead.project_id(), self.0)
                .await?,
        )
    }
}

/// Adds decided pairs as gold items: the claims' citation evidence, or a sample of the pool's
/// final labels (test–retest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddGold {
    pub source: Source,
    /// None: every pair of the source not yet gold.
    pub count: Option<usize>,
    pub seed: u64,
}

impl AddGold {
    pub fn parse(source: &str, count: &str, seed: &str) -> CommandResult<AddGold> {
        let source = Source::parse(source.trim()).map_err(invalid)?;
        let count = match count.trim() {
            "" | "all" => None,
            t => Some(t.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
                CommandError::field(
                    Field::Count,
                    format!("{t} is not a positive whole number (or all)"),
                )
            })?),
        };
        let seed = match seed.trim() {
            "" => 0,
            t => t.parse::<u64>().map_err(|_| {
                CommandError::field(Field::Seed, format!("{t} is not a whole number"))
            })?,
        };
        Ok(AddGold {
            source,
            count,
            seed,
        })
    }

    /// Returns how many items were added.
    pub async fn run(self, db: &Db, lead: &Lead) -> CommandResult<usize> {
        Ok(store::annotate::gold::add_items(
            db,
            lead.audit_id(),
            lead.project_id(),
            self.source,
            self.count,
            self.seed,
        )
        .await?)
    }
}

/// Turns re-annotation on or off ("on"/"off", or true/false).
pub async fn set_reannotation(db: &Db, lead: &Lead, on: &str) -> CommandResult<()> {
    let on = match on.trim() {
        "on" | "true" | "yes" | "1" => true,
        "off" | "false" | "no" | "0" => false,
        t => {
            return Err(CommandError::field(
                Field::Reannotate,
                format!("{t} is neither on nor off"),
            ))
        }
    };
    Ok(store::annotate::gold::set_reannotation(db, lead.audit_id(), lead.project_id(), on).await?)
}

/// Admits a qualification candidate by hand, whatever their score.
pub async fn admit(db: &Db, lead: &Lead, username: &str) -> CommandResult<()> {
    Ok(
        store::annotate::gold::admit(db, lead.audit_id(), lead.project_id(), username.trim())
            .await?,
    )
}

/// The project's gold settings, items, every annotator's figures and the candidates.
pub async fn overview(db: &Db, lead: &Lead) -> CommandResult<GoldOverview> {
    Ok(store::annotate::gold::overview(db, lead.project_id()).await?)
}
