//! Account commands (administrators): create a user, set a password, change a role,
//! deactivate or reactivate. Each parses its input once and runs for an [`Admin`] proof; all
//! are audited. Setting a password ends the user's sessions.

use super::Admin;
use crate::error::{CommandError, CommandResult, Field};
use domain::account::{NewPassword, Role, User, Username};
use store::{self, Db};

/// A password to set: one the caller chose, or a fresh one-time password to show once.
#[derive(Debug)]
pub enum PasswordChoice {
    Given(NewPassword),
    OneTime,
}

impl PasswordChoice {
    /// The password to set, and its hash.
    fn resolve(self) -> CommandResult<(NewPassword, String)> {
        let password = match self {
            PasswordChoice::Given(password) => password,
            PasswordChoice::OneTime => crate::login::one_time_password()?,
        };
        let hash = crate::login::hash_password(&password)?;
        Ok((password, hash))
    }
}

/// Creates an account.
#[derive(Debug)]
pub struct CreateUser {
    pub username: Username,
    pub role: Role,
    pub password: PasswordChoice,
}

impl CreateUser {
    pub fn parse(
        username: &str,
        role: &str,
        password: PasswordChoice,
    ) -> CommandResult<CreateUser> {
        Ok(CreateUser {
            username: Username::parse(username)
                .map_err(|e| CommandError::field(Field::UserName, e))?,
            role: parse_role(role)?,
            password,
        })
    }

    /// Creates the user; returns them with the password set (to show once).
    pub async fn run(self, db: &Db, admin: &Admin) -> CommandResult<(User, NewPassword)> {
        let (password, hash) = self.password.resolve()?;
        let user =
            store::users::create(db, &self.username, self.role, &hash, admin.audit_id()).await?;
        Ok((user, password))
    }
}

/// `admin`, `lead` or `annotator`.
pub fn parse_role(text: &str) -> CommandResult<Role> {
    Role::parse(text.trim()).map_err(|e| CommandError::field(Field::Role, e))
}

/// Sets `username`'s password (ending their sessions); returns the password set.
pub async fn set_password(
    db: &Db,
    admin: &Admin,
    username: &str,
    password: PasswordChoice,
) -> CommandResult<NewPassword> {
    let (password, hash) = password.resolve()?;
    store::accounts::set_password(db, username.trim(), &hash, admin.audit_id()).await?;
    Ok(password)
}

/// Changes `username`'s account role (the last admin stays).
pub async fn set_role(db: &Db, admin: &Admin, username: &str, role: Role) -> CommandResult<User> {
    Ok(store::accounts::set_role(db, username.trim(), role, admin.audit_id()).await?)
}

/// Deactivates (their sessions and tokens stop at the next request) or reactivates an account.
pub async fn set_active(
    db: &Db,
    admin: &Admin,
    username: &str,
    active: bool,
) -> CommandResult<User> {
    Ok(store::accounts::set_active(db, username.trim(), active, admin.audit_id()).await?)
}

/// Every account.
pub async fn users(db: &Db, _admin: &Admin) -> CommandResult<Vec<User>> {
    Ok(store::users::list(db).await?)
}

/// A user changes their own password: the current one is checked first.
#[derive(Debug)]
pub struct ChangeOwnPassword {
    current: String,
    new: NewPassword,
}

impl ChangeOwnPassword {
    pub fn parse(current: &str, new: &str) -> CommandResult<ChangeOwnPassword> {
        Ok(ChangeOwnPassword {
            current: current.to_owned(),
            new: NewPassword::parse(new).map_err(|e| CommandError::field(Field::NewPassword, e))?,
        })
    }

    /// Sets the password of `user` (the request's authenticated user) if the current one is
    /// right; their other sessions end. Returns the new credentials version (the session that
    /// asked keeps it).
    pub async fn run(self, db: &Db, user: &User) -> CommandResult<i64> {
        if !crate::login::password_matches(db, &user.username, &self.current).await? {
            return Err(CommandError::Invalid(
                "the current password is wrong".into(),
            ));
        }
        let hash = crate::login::hash_password(&self.new)?;
        Ok(store::accounts::set_password(db, &user.username, &hash, Some(user.id)).await?)
    }
}
