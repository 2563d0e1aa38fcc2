//! Accounts: roles, user names, passwords and the login throttle rule.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What a user may do. Admins can do everything leads can; leads everything annotators can,
/// except that annotators alone receive annotation work.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Admin,
    Lead,
    Annotator,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown role {0:?} (expected admin, lead or annotator)")]
pub struct RoleError(pub String);

impl Role {
    pub fn parse(text: &str) -> Result<Role, RoleError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "admin" => Ok(Role::Admin),
            "lead" => Ok(Role::Lead),
            "annotator" => Ok(Role::Annotator),
            _ => Err(RoleError(text.to_owned())),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Lead => "lead",
            Role::Annotator => "annotator",
        }
    }

    /// Leads and admins manage projects, pools and releases.
    pub fn can_lead(self) -> bool {
        matches!(self, Role::Admin | Role::Lead)
    }

    /// Whether this role satisfies a page's or function's requirement.
    pub fn satisfies(self, required: Role) -> bool {
        match required {
            Role::Admin => self == Role::Admin,
            Role::Lead => self.can_lead(),
            Role::Annotator => true,
        }
    }
}

impl std::str::FromStr for Role {
    type Err = RoleError;
    fn from_str(text: &str) -> Result<Role, RoleError> {
        Role::parse(text)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A user name: 2 to 64 characters of letters, digits, '.', '_' or '-'.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Username(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsernameError {
    #[error("a user name has 2 to 64 characters")]
    Length,
    #[error("a user name has only letters, digits, '.', '_' and '-' (got {0:?})")]
    Character(char),
}

impl Username {
    pub fn parse(text: &str) -> Result<Username, UsernameError> {
        let text = text.trim();
        if !(2..=64).contains(&text.chars().count()) {
            return Err(UsernameError::Length);
        }
        if let Some(c) = text
            .chars()
            .find(|c| !(c.is_alphanumeric() || matches!(c, '.' | '_' | '-')))
        {
            return Err(UsernameError::Character(c));
        }
        Ok(Username(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Username {
    type Error = UsernameError;
    fn try_from(text: String) -> Result<Username, UsernameError> {
        Username::parse(&text)
    }
}

impl From<Username> for String {
    fn from(name: Username) -> String {
        name.0
    }
}

impl fmt::Display for Username {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A new password, checked for length only; it never leaves the server and is never logged.
pub struct NewPassword(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a password has at least {min} characters", min = NewPassword::MIN_CHARS)]
pub struct PasswordError;

impl NewPassword {
    pub const MIN_CHARS: usize = 8;

    pub fn parse(text: &str) -> Result<NewPassword, PasswordError> {
        let text = text.trim_end_matches(['\r', '\n']);
        if text.chars().count() < Self::MIN_CHARS {
            return Err(PasswordError);
        }
        Ok(NewPassword(text.to_owned()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for NewPassword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NewPassword(***)")
    }
}

/// Login throttling: after `max_failures` failed logins for one user name within `window_ms`,
/// further tries are refused until `lockout_ms` after the last of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThrottlePolicy {
    pub max_failures: usize,
    pub window_ms: i64,
    pub lockout_ms: i64,
}

impl Default for ThrottlePolicy {
    fn default() -> Self {
        ThrottlePolicy {
            max_failures: 5,
            window_ms: 60_000,
            lockout_ms: 5 * 60_000,
        }
    }
}

impl ThrottlePolicy {
    /// Given the times of the most recent failures (newest first, at least `max_failures` of
    /// them when there are that many) and the current time, how many milliseconds the user
    /// name stays locked, if it is locked.
    pub fn locked_for(&self, recent_failures_newest_first: &[i64], now: i64) -> Option<i64> {
        let newest = *recent_failures_newest_first.first()?;
        let oldest_of_burst =
            *recent_failures_newest_first.get(self.max_failures.checked_sub(1)?)?;
        let burst = newest - oldest_of_burst <= self.window_ms;
        let remaining = newest + self.lockout_ms - now;
        (burst && remaining > 0).then_some(remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_parse_and_order() {
        assert_eq!(Role::parse("Lead"), Ok(Role::Lead));
        assert!(Role::parse("boss").is_err());
        assert!(Role::Admin.satisfies(Role::Lead));
        assert!(Role::Lead.satisfies(Role::Lead));
        assert!(!Role::Annotator.satisfies(Role::Lead));
        assert!(!Role::Lead.satisfies(Role::Admin));
        assert!(Role::Annotator.satisfies(Role::Annotator));
    }

    #[test]
    fn usernames_and_passwords() {
        assert!(Username::parse("ann-1").is_ok());
        assert_eq!(Username::parse("a"), Err(UsernameError::Length));
        assert_eq!(Username::parse("a b"), Err(UsernameError::Character(' ')));
        assert!(NewPassword::parse("short").is_err());
        assert_eq!(
            NewPassword::parse("longenough\n").unwrap().expose(),
            "longenough"
        );
        assert_eq!(
            format!("{:?}", NewPassword::parse("longenough").unwrap()),
            "NewPassword(***)"
        );
    }

    #[test]
    fn throttle_engages_after_a_burst_and_releases() {
        let p = ThrottlePolicy::default();
        let now = 1_000_000;
        // four failures: not locked
        let four = [now - 1_000, now - 2_000, now - 3_000, now - 4_000];
        assert_eq!(p.locked_for(&four, now), None);
        // five within a minute: locked for the rest of five minutes after the newest
        let five = [
            now - 1_000,
            now - 2_000,
            now - 3_000,
            now - 4_000,
            now - 5_000,
        ];
        assert_eq!(p.locked_for(&five, now), Some(p.lockout_ms - 1_000));
        // the same burst, after the lockout: free again
        assert_eq!(p.locked_for(&five, now + p.lockout_ms), None);
        // five failures spread over more than a minute: no burst
        let spread = [
            now - 1_000,
            now - 20_000,
            now - 40_000,
            now - 60_000,
            now - 80_000,
        ];
        assert_eq!(p.locked_for(&spread, now), None);
        assert_eq!(p.locked_for(&[], now), None);
    }
}

/// A user as the application sees one (never with the password hash).
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct User {
    pub id: i64,
    pub username: String,
    pub role: Role,
    pub active: bool,
}
