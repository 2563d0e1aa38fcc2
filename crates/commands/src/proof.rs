//! Proofs of authority: values that say who acts and what they may do, obtainable only from a
//! check. Every command takes one, so a command cannot run for a caller nobody checked.
//!
//! - From a request: [`Lead::of`] turns a [`ProjectCaller`] (only [`crate::access`]'s membership
//!   checks make one, which the app's session and token checks run) into the proof that its user leads the project; [`Admin::of`] and
//!   [`Creator::of`] check the account role of the request's authenticated user.
//! - From the shell: [`Operator`] is whoever runs `claimpool` on the database file itself, and so
//!   has every right over it (the file is theirs to edit anyway). Only the command line makes one
//!   (`server/tests/it/commands.rs` checks that no other source file calls
//!   [`Operator::at_the_shell`]); what it does is audited with no user.

use crate::access::ProjectCaller;
use crate::error::{CommandError, CommandResult};
use domain::account::{Role, User};
use store::{self, Db};

/// Who acts, as the audit trail records it.
#[derive(Clone, Debug, PartialEq)]
pub enum Actor {
    /// A user of the server, through a session or an API token.
    User(User),
    /// The operator at the server's shell (the command line).
    Operator,
}

impl Actor {
    /// The user id the audit trail records (None: the operator).
    pub fn audit_id(&self) -> Option<i64> {
        match self {
            Actor::User(user) => Some(user.id),
            Actor::Operator => None,
        }
    }

    /// The acting user, if a user acts.
    pub fn user(&self) -> Option<&User> {
        match self {
            Actor::User(user) => Some(user),
            Actor::Operator => None,
        }
    }
}

/// The operator at the server's shell. See the module's documentation.
#[derive(Debug)]
pub struct Operator(());

impl Operator {
    /// The command line's authority over the database file it was given. Nothing that serves
    /// requests may call this.
    pub fn at_the_shell() -> Operator {
        Operator(())
    }

    /// The operator as the lead of the project named `project` (404 if there is none).
    pub async fn lead(&self, db: &Db, project: &str) -> CommandResult<Lead> {
        let project_id = store::projects::id_by_name(db, project).await?;
        Ok(Lead {
            project_id,
            project: project.to_owned(),
            actor: Actor::Operator,
        })
    }

    /// The operator as an administrator of accounts.
    pub fn admin(&self) -> Admin {
        Admin {
            actor: Actor::Operator,
        }
    }

    /// The operator as one who may create projects.
    pub fn creator(&self) -> Creator {
        Creator {
            actor: Actor::Operator,
        }
    }
}

/// Proof that the actor leads a project (its leads, and admins).
#[derive(Clone, Debug)]
pub struct Lead {
    project_id: i64,
    project: String,
    actor: Actor,
}

impl Lead {
    /// The caller as the project's lead; 403 for a caller who is only its annotator.
    pub fn of(caller: &ProjectCaller) -> CommandResult<Lead> {
        if !caller.is_lead() {
            return Err(CommandError::Forbidden(format!(
                "you do not lead the project {:?}",
                caller.project()
            )));
        }
        Ok(Lead {
            project_id: caller.project_id(),
            project: caller.project().to_owned(),
            actor: Actor::User(caller.user().clone()),
        })
    }

    /// The user who started a background job (`jobs.created_by`), checked again when the job
    /// runs: a job whose starter no longer leads the project (removed, deactivated, or no user
    /// at all) does not run.
    pub async fn of_job_starter(
        db: &Db,
        started_by: Option<i64>,
        project_id: i64,
    ) -> CommandResult<Lead> {
        let gone = || {
            CommandError::Forbidden(
                "the user who started this job can no longer act in the project".into(),
            )
        };
        let (user, _) = store::accounts::for_session(db, started_by.ok_or_else(gone)?)
            .await?
            .filter(|(user, _)| user.active)
            .ok_or_else(gone)?;
        let caller = crate::access::project_access_at(
            db,
            user,
            project_id,
            domain::account::ProjectRole::Lead,
        )
        .await?;
        Lead::of(&caller)
    }

    pub fn project_id(&self) -> i64 {
        self.project_id
    }

    pub fn project(&self) -> &str {
        &self.project
    }

    pub fn actor(&self) -> &Actor {
        &self.actor
    }

    /// The user id the audit trail records.
    pub fn audit_id(&self) -> Option<i64> {
        self.actor.audit_id()
    }
}

/// Checks that `user` holds `role`: the account-role half of a proof.
fn holding(user: &User, role: Role) -> CommandResult<Actor> {
    if user.role.satisfies(role) {
        Ok(Actor::User(user.clone()))
    } else {
        Err(CommandError::Forbidden(format!(
            "this needs the {role} role"
        )))
    }
}

/// Proof that the actor administers accounts.
#[derive(Clone, Debug)]
pub struct Admin {
    actor: Actor,
}

impl Admin {
    /// The authenticated `user` as an administrator; 403 unless they hold the admin role.
    pub fn of(user: &User) -> CommandResult<Admin> {
        Ok(Admin {
            actor: holding(user, Role::Admin)?,
        })
    }

    pub fn actor(&self) -> &Actor {
        &self.actor
    }

    pub fn audit_id(&self) -> Option<i64> {
        self.actor.audit_id()
    }
}

/// Proof that the actor may create projects (the account role `lead`, or admin).
#[derive(Clone, Debug)]
pub struct Creator {
    actor: Actor,
}

impl Creator {
    /// The authenticated `user` as a project creator; 403 unless they hold the lead role.
    pub fn of(user: &User) -> CommandResult<Creator> {
        Ok(Creator {
            actor: holding(user, Role::Lead)?,
        })
    }

    pub fn actor(&self) -> &Actor {
        &self.actor
    }
}
