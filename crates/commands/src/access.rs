//! Who a request's caller is and what they may do in a project: the account behind a session
//! or an API token, and the project membership check that makes a [`ProjectCaller`].

use crate::error::{CommandError, CommandResult};
use domain::account::{may_act_in_project, ProjectRole, Role, User};
use store::Db;

/// The account of a session's user id, if it is active and its credentials `version` is the
/// one the session was started with (a password set since ends the session).
pub async fn session_user(db: &Db, id: i64, version: i64) -> CommandResult<Option<User>> {
    Ok(store::accounts::for_session(db, id)
        .await?
        .filter(|(user, current)| user.active && *current == version)
        .map(|(user, _)| user))
}

/// The credentials version of `user` now, which a new session records (0 for a user gone).
pub async fn credentials_version(db: &Db, user: &User) -> CommandResult<i64> {
    Ok(store::accounts::for_session(db, user.id)
        .await?
        .map(|(_, version)| version)
        .unwrap_or_default())
}

/// The user of a live API token (a token wrong or revoked, or of a deactivated user, is
/// [`CommandError::BadToken`]).
pub async fn token_user(db: &Db, token: &str) -> CommandResult<User> {
    store::api_tokens::user_for(db, token)
        .await?
        .ok_or(CommandError::BadToken)
}

/// Proof that a user may act in a project as a given [`ProjectRole`]: obtainable only from
/// the app's `require_project` (a server function's caller) or [`project_access`] (a page's), which
/// check the account and the membership on the server. Everything that touches one project
/// takes its project id from here.
#[derive(Clone, Debug)]
pub struct ProjectCaller {
    user: User,
    project_id: i64,
    project: String,
    role: ProjectRole,
}

impl ProjectCaller {
    pub fn user(&self) -> &User {
        &self.user
    }

    pub fn project_id(&self) -> i64 {
        self.project_id
    }

    pub fn project(&self) -> &str {
        &self.project
    }

    /// Whether the caller leads the project (leads and admins).
    pub fn is_lead(&self) -> bool {
        self.role == ProjectRole::Lead
    }
}

/// Whether `user` may act in the project named `project` as `required`: 404 for a project that
/// does not exist, 403 for one the user may not act in.
pub async fn project_access(
    db: &Db,
    user: User,
    project: &str,
    required: ProjectRole,
) -> CommandResult<ProjectCaller> {
    let membership = store::projects::membership_by_name(db, project, user.id).await?;
    check_project(user, membership, required)
}

/// [`project_access`] to the project with id `project_id`.
pub async fn project_access_at(
    db: &Db,
    user: User,
    project_id: i64,
    required: ProjectRole,
) -> CommandResult<ProjectCaller> {
    let membership = store::projects::membership_at(db, project_id, user.id).await?;
    check_project(user, membership, required)
}

fn check_project(
    user: User,
    membership: store::projects::Membership,
    required: ProjectRole,
) -> CommandResult<ProjectCaller> {
    let store::projects::Membership {
        project_id,
        project,
        role: member,
    } = membership;
    if !may_act_in_project(user.role, member, required) {
        return Err(CommandError::Forbidden(match required {
            ProjectRole::Lead => format!("you do not lead the project {project:?}"),
            ProjectRole::Annotator => format!("you are not a member of the project {project:?}"),
        }));
    }
    let role = match (user.role, member) {
        (Role::Admin, _) => ProjectRole::Lead,
        (_, Some(role)) => role,
        (_, None) => required,
    };
    Ok(ProjectCaller {
        user,
        project_id,
        project,
        role,
    })
}
