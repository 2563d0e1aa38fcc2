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

/// A member's role in one project. A project's leads manage it (imports, pool, annotation,
/// releases); its annotators receive its items. Only users whose account role can lead may be
/// a project's lead, and only annotators its annotators.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProjectRole {
    Lead,
    Annotator,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown project role {0:?} (expected lead or annotator)")]
pub struct ProjectRoleError(pub String);

impl ProjectRole {
    pub fn parse(text: &str) -> Result<ProjectRole, ProjectRoleError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "lead" => Ok(ProjectRole::Lead),
            "annotator" => Ok(ProjectRole::Annotator),
            _ => Err(ProjectRoleError(text.to_owned())),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ProjectRole::Lead => "lead",
            ProjectRole::Annotator => "annotator",
        }
    }

    /// Whether a member with this role may do what `required` may (a lead may do what an
    /// annotator may: open the project's work pages).
    pub fn satisfies(self, required: ProjectRole) -> bool {
        self == ProjectRole::Lead || required == ProjectRole::Annotator
    }

    /// Whether a user whose account has `role` may hold this role in a project.
    pub fn fits(self, role: Role) -> bool {
        match self {
            ProjectRole::Lead => role.can_lead(),
            ProjectRole::Annotator => role == Role::Annotator,
        }
    }
}

impl std::str::FromStr for ProjectRole {
    type Err = ProjectRoleError;
    fn from_str(text: &str) -> Result<ProjectRole, ProjectRoleError> {
        ProjectRole::parse(text)
    }
}

impl fmt::Display for ProjectRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a user whose account has `role` and whose membership of a project (if any, and
/// active) has `member` may act there as `required`. Admins may act everywhere; everyone else
/// only through a membership whose role satisfies `required`.
pub fn may_act_in_project(role: Role, member: Option<ProjectRole>, required: ProjectRole) -> bool {
    role == Role::Admin || member.is_some_and(|m| m.satisfies(required) && m.fits(role))
}

/// A one-time password from 15 random bytes: 24 characters of an alphabet without look-alikes
/// (no 0/O, 1/l/I), in groups of four for reading aloud: about 119 bits.
pub fn one_time_password(bytes: [u8; 15]) -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijkmnpqrstuvwxyz23456789";
    let mut bits: u128 = 0;
    for b in bytes {
        bits = (bits << 8) | u128::from(b);
    }
    let mut out = String::with_capacity(29);
    for i in 0..24 {
        if i > 0 && i % 4 == 0 {
            out.push('-');
        }
        let index = ((bits >> (5 * (23 - i))) & 31) as usize;
        out.push(char::from(ALPHABET[index]));
    }
    out
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
#[error(
    "a password has {min} to {max} characters",
    min = NewPassword::MIN_CHARS,
    max = NewPassword::MAX_CHARS
)]
pub struct PasswordError;

impl NewPassword {
    pub const MIN_CHARS: usize = 8;
    pub const MAX_CHARS: usize = 1024;

    pub fn parse(text: &str) -> Result<NewPassword, PasswordError> {
        let text = text.trim_end_matches(['\r', '\n']);
        if !(Self::MIN_CHARS..=Self::MAX_CHARS).contains(&text.chars().count()) {
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

/// Login throttling. Every attempt is counted before its password is checked, and an attempt
/// counts as failed until it succeeds, so parallel tries are counted too. Within the last
/// `window_ms`, refused are:
/// - a user name from one client address with `per_client_name` failures since that pair's last
///   success (the lock an attacker can only put on themselves);
/// - a client address with `per_client` failures over all names (password spraying);
/// - a user name with `per_name` failures over all addresses: a backstop against guessing from
///   many addresses, high enough that one attacker cannot lock a user out by themselves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThrottlePolicy {
    pub per_client_name: u32,
    pub per_client: u32,
    pub per_name: u32,
    pub window_ms: i64,
}

impl Default for ThrottlePolicy {
    fn default() -> Self {
        ThrottlePolicy {
            per_client_name: 5,
            per_client: 30,
            per_name: 100,
            window_ms: 5 * 60_000,
        }
    }
}

/// Counts of failed logins within the policy's window, as the store reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RecentFailures {
    /// For this user name from this address, since the pair's last success.
    pub client_name: u32,
    pub client: u32,
    pub name: u32,
    /// The oldest failure within the window among the counts that reached their limit.
    pub oldest_at: Option<i64>,
}

impl ThrottlePolicy {
    /// Whether `recent` (which does not include the attempt being made) refuses another try.
    pub fn refuses(&self, recent: &RecentFailures) -> bool {
        recent.client_name >= self.per_client_name
            || recent.client >= self.per_client
            || recent.name >= self.per_name
    }

    /// How many milliseconds until the oldest counted failure leaves the window (at least 1 s).
    pub fn retry_after_ms(&self, oldest_at: i64, now: i64) -> i64 {
        (oldest_at + self.window_ms - now).max(1_000)
    }
}

/// The longest user name and password a login is checked for: longer ones are refused before any
/// hashing or storage (no user can have them).
pub const MAX_LOGIN_NAME_CHARS: usize = 64;
pub const MAX_PASSWORD_CHARS: usize = NewPassword::MAX_CHARS;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_time_passwords_use_every_bit_and_pass_the_password_rules() {
        assert_eq!(one_time_password([0; 15]), "aaaa-aaaa-aaaa-aaaa-aaaa-aaaa");
        assert_eq!(
            one_time_password([255; 15]),
            "9999-9999-9999-9999-9999-9999"
        );
        // 0b00001 in the first five bits, the rest zero: the first character moves by one.
        let mut first = [0u8; 15];
        first[0] = 0b0000_1000;
        assert_eq!(one_time_password(first), "baaa-aaaa-aaaa-aaaa-aaaa-aaaa");
        let mut last = [0u8; 15];
        last[14] = 1;
        assert_eq!(one_time_password(last), "aaaa-aaaa-aaaa-aaaa-aaaa-aaab");
        assert!(NewPassword::parse(&one_time_password([7; 15])).is_ok());
    }

    #[test]
    fn project_roles_parse_and_decide_who_may_act() {
        assert_eq!(ProjectRole::parse(" Lead "), Ok(ProjectRole::Lead));
        assert_eq!("annotator".parse(), Ok(ProjectRole::Annotator));
        assert!(ProjectRole::parse("admin").is_err());
        use ProjectRole::{Annotator as A, Lead as L};
        // (account role, membership, required) -> may act; every combination, by hand.
        let table = [
            (Role::Admin, None, L, true),
            (Role::Admin, None, A, true),
            (Role::Admin, Some(A), L, true),
            (Role::Lead, None, L, false),
            (Role::Lead, None, A, false),
            (Role::Lead, Some(L), L, true),
            (Role::Lead, Some(L), A, true),
            // A lead listed as an annotator (no longer possible to add) gets nothing.
            (Role::Lead, Some(A), A, false),
            (Role::Lead, Some(A), L, false),
            (Role::Annotator, None, A, false),
            (Role::Annotator, Some(A), A, true),
            (Role::Annotator, Some(A), L, false),
            // An annotator listed as a lead (an account demoted since) leads nothing.
            (Role::Annotator, Some(L), L, false),
            (Role::Annotator, Some(L), A, false),
        ];
        for (role, member, required, expected) in table {
            assert_eq!(
                may_act_in_project(role, member, required),
                expected,
                "{role} as {member:?} for {required}"
            );
        }
        assert!(L.fits(Role::Admin) && L.fits(Role::Lead) && !L.fits(Role::Annotator));
        assert!(A.fits(Role::Annotator) && !A.fits(Role::Lead));
    }

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
    fn throttle_refuses_at_each_limit() {
        let p = ThrottlePolicy::default();
        let under = RecentFailures {
            client_name: 4,
            client: 29,
            name: 99,
            oldest_at: None,
        };
        assert!(!p.refuses(&under));
        assert!(p.refuses(&RecentFailures {
            client_name: 5,
            ..under
        }));
        assert!(p.refuses(&RecentFailures {
            client: 30,
            ..under
        }));
        assert!(p.refuses(&RecentFailures { name: 100, ..under }));
        assert!(!p.refuses(&RecentFailures::default()));
        let now = 1_000_000;
        assert_eq!(p.retry_after_ms(now - 60_000, now), p.window_ms - 60_000);
        assert_eq!(p.retry_after_ms(now - p.window_ms, now), 1_000);
    }

    #[test]
    fn passwords_have_a_ceiling() {
        assert!(NewPassword::parse(&"x".repeat(NewPassword::MAX_CHARS)).is_ok());
        assert!(NewPassword::parse(&"x".repeat(NewPassword::MAX_CHARS + 1)).is_err());
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
