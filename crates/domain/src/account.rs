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

/// A user name: 2 to 64 characters of ASCII letters, digits, '.', '_' or '-' (issue 35: no
/// look-alikes from other scripts, such as `ädmin` or a Cyrillic `аdmin` for `admin`). Names
/// compare without case; one that [looks like](Username::looks_like) an existing name is
/// refused when the user is created.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Username(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsernameError {
    #[error("a user name has 2 to 64 characters")]
    Length,
    #[error("a user name has only ASCII letters, digits, '.', '_' and '-' (got {0:?})")]
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
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        {
            return Err(UsernameError::Character(c));
        }
        Ok(Username(text.to_owned()))
    }

    /// Whether this name reads like `other` (the same [`name_skeleton`]): `adm1n`, `admln`,
    /// `adrnin` or `ADMIN` for `admin`.
    pub fn looks_like(&self, other: &str) -> bool {
        name_skeleton(&self.0) == name_skeleton(other)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A user name's look-alike key: lower case, with the ASCII characters that common fonts draw
/// alike folded together (`1`, `i`, `l` and `|`; `0` and `o`; `rn` and `m`; `vv` and `w`, after
/// Unicode's confusables for ASCII). Two names with the same key are one too many.
pub fn name_skeleton(name: &str) -> String {
    let folded: String = name
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            '1' | 'i' | '|' => 'l',
            '0' => 'o',
            c => c,
        })
        .collect();
    folded.replace("rn", "m").replace("vv", "w")
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

/// Login throttling (issue 35). Counted are failed password checks and the attempts being
/// checked right now (in flight), so that parallel guesses cannot overrun a limit; a login that
/// would reach a limit only because of attempts in flight waits for them to end, and a login
/// the server is too busy to check, or whose client went away before its answer, counts for
/// nothing. Within the last `window_ms`, refused are:
/// - a user name from one client address with `per_client_name` failures since that pair's last
///   success (the lock an attacker can only put on themselves);
/// - a client address with `per_client` failures over all names (password spraying);
/// - a user name with `per_name` failures over all addresses, but only from addresses that have
///   not logged in as that user within `known_client_ms`: a backstop against guessing from many
///   addresses that cannot lock the user out of the addresses they use (OWASP's advice against
///   lockouts an attacker can trigger).
///
/// A refusal names the time until every limit reached lets the login through: for each, when
/// the failure whose leaving brings the count under the limit leaves the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThrottlePolicy {
    pub per_client_name: u32,
    pub per_client: u32,
    pub per_name: u32,
    pub window_ms: i64,
    /// How long a successful login makes its address one of the user's usual ones.
    pub known_client_ms: i64,
    /// How long an attempt may stay in flight; an older one (its server stopped while checking
    /// it) counts as failed.
    pub in_flight_ms: i64,
}

impl Default for ThrottlePolicy {
    fn default() -> Self {
        ThrottlePolicy {
            per_client_name: 5,
            per_client: 30,
            per_name: 100,
            window_ms: 5 * 60_000,
            known_client_ms: 90 * 24 * 3_600_000,
            in_flight_ms: 60_000,
        }
    }
}

/// A failed or in-flight login attempt of the user name or from the client address being
/// checked, within the policy's window, as the store reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CountedAttempt {
    /// Milliseconds since the Unix epoch.
    pub at: i64,
    /// For the user name being checked (compared as user names are, without case).
    pub same_name: bool,
    /// From the client address being checked.
    pub same_client: bool,
    /// Still being checked: neither failed nor succeeded yet.
    pub in_flight: bool,
}

/// What the store knows about a login's user name and client address.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoginHistory {
    /// The failed and in-flight attempts of the name or from the address within the window.
    pub attempts: Vec<CountedAttempt>,
    /// When the name last logged in from the address, if ever.
    pub pair_last_success: Option<i64>,
}

/// What the throttle makes of a login attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Check the password (the attempt is counted while it is checked).
    Check,
    /// A limit would be reached with the attempts in flight: wait until they end.
    Wait,
    /// A limit is reached: refused for this many milliseconds (at least one second).
    Refuse { retry_after_ms: i64 },
}

/// Which of a history's attempts one limit counts.
type AttemptFilter<'a> = dyn Fn(&CountedAttempt) -> bool + 'a;

impl ThrottlePolicy {
    /// Whether a login of the name from the address whose history is `history` may have its
    /// password checked at `now` (see [`ThrottlePolicy`]).
    pub fn admit(&self, history: &LoginHistory, now: i64) -> Admission {
        let since = now - self.window_ms;
        let stale = now - self.in_flight_ms;
        let pair_since = history.pair_last_success.map_or(since, |at| at.max(since));
        let known_client = history
            .pair_last_success
            .is_some_and(|at| at > now - self.known_client_ms);
        let in_pair = |a: &CountedAttempt| a.same_name && a.same_client && a.at > pair_since;
        let from_client = |a: &CountedAttempt| a.same_client;
        let of_name = |a: &CountedAttempt| a.same_name && !known_client;
        let limits: [(u32, &AttemptFilter); 3] = [
            (self.per_client_name, &in_pair),
            (self.per_client, &from_client),
            (self.per_name, &of_name),
        ];
        let mut refused_until: Option<i64> = None;
        let mut wait = false;
        for (limit, counts) in limits {
            let limit = usize::try_from(limit.max(1)).unwrap_or(usize::MAX);
            let counted = history
                .attempts
                .iter()
                .filter(|a| a.at > since && counts(a));
            let (mut failed, mut in_flight) = (Vec::new(), 0usize);
            for attempt in counted {
                if attempt.in_flight && attempt.at > stale {
                    in_flight += 1;
                } else {
                    failed.push(attempt.at);
                }
            }
            if failed.len() >= limit {
                // Newest first: the count falls under the limit when the limit-th newest leaves.
                failed.sort_unstable_by(|a, b| b.cmp(a));
                let frees_at = failed[limit - 1] + self.window_ms;
                refused_until = Some(refused_until.map_or(frees_at, |at| at.max(frees_at)));
            } else if failed.len() + in_flight >= limit {
                wait = true;
            }
        }
        match refused_until {
            Some(until) => Admission::Refuse {
                retry_after_ms: (until - now).max(1_000),
            },
            None if wait => Admission::Wait,
            None => Admission::Check,
        }
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

    fn attempt(age_ms: i64, same_name: bool, same_client: bool) -> CountedAttempt {
        CountedAttempt {
            at: NOW - age_ms,
            same_name,
            same_client,
            in_flight: false,
        }
    }

    const NOW: i64 = 1_000_000_000;

    fn history(attempts: Vec<CountedAttempt>) -> LoginHistory {
        LoginHistory {
            attempts,
            pair_last_success: None,
        }
    }

    #[test]
    fn throttle_refuses_at_each_limit_and_says_when_it_lets_the_login_through() {
        let p = ThrottlePolicy::default();
        let pair = |n: usize| (0..n).map(|i| attempt(1_000 * (i as i64 + 1), true, true));
        assert_eq!(p.admit(&history(pair(4).collect()), NOW), Admission::Check);
        // Five failures of the pair: free when the oldest (5 s old) leaves the window.
        assert_eq!(
            p.admit(&history(pair(5).collect()), NOW),
            Admission::Refuse {
                retry_after_ms: p.window_ms - 5_000
            }
        );
        // Seven: the count falls under five when the fifth newest leaves, not the oldest.
        assert_eq!(
            p.admit(&history(pair(7).collect()), NOW),
            Admission::Refuse {
                retry_after_ms: p.window_ms - 5_000
            }
        );
        // Failures older than the window or before the pair's last success do not count.
        let mut h = history(pair(5).collect());
        h.attempts.push(attempt(p.window_ms + 1, true, true));
        h.pair_last_success = Some(NOW - 3_500);
        assert_eq!(p.admit(&h, NOW), Admission::Check);
        // The address: 30 failures over other names.
        let client = |n: usize, age: i64| (0..n).map(move |_| attempt(age, false, true));
        assert_eq!(
            p.admit(&history(client(29, 10).collect()), NOW),
            Admission::Check
        );
        assert_eq!(
            p.admit(&history(client(30, 60_000).collect()), NOW),
            Admission::Refuse {
                retry_after_ms: p.window_ms - 60_000
            }
        );
        // Two limits reached: the later of the two.
        let mut both: Vec<_> = pair(5)
            .map(|a| CountedAttempt {
                at: NOW - 250_000,
                ..a
            })
            .collect();
        both.extend(client(30, 100_000));
        assert_eq!(
            p.admit(&history(both), NOW),
            Admission::Refuse {
                retry_after_ms: p.window_ms - 100_000
            }
        );
        // At least a second.
        assert_eq!(
            p.admit(&history(client(30, p.window_ms - 10).collect()), NOW),
            Admission::Refuse {
                retry_after_ms: 1_000
            }
        );
    }

    #[test]
    fn attempts_in_flight_make_a_login_wait_not_fail() {
        let p = ThrottlePolicy::default();
        let flying = |n: usize, age: i64| {
            (0..n).map(move |_| CountedAttempt {
                in_flight: true,
                ..attempt(age, true, true)
            })
        };
        assert_eq!(
            p.admit(&history(flying(4, 10).collect()), NOW),
            Admission::Check
        );
        assert_eq!(
            p.admit(&history(flying(5, 10).collect()), NOW),
            Admission::Wait
        );
        let mut h = history(flying(2, 10).collect());
        h.attempts.extend((0..3).map(|_| attempt(10, true, true)));
        assert_eq!(p.admit(&h, NOW), Admission::Wait);
        // In flight for longer than a check can take: its server stopped; it counts as failed.
        assert!(matches!(
            p.admit(&history(flying(5, p.in_flight_ms + 1).collect()), NOW),
            Admission::Refuse { .. }
        ));
    }

    #[test]
    fn the_name_backstop_spares_the_users_usual_addresses() {
        let p = ThrottlePolicy::default();
        let elsewhere: Vec<_> = (0..100).map(|_| attempt(10, true, false)).collect();
        let mut h = history(elsewhere);
        assert!(matches!(p.admit(&h, NOW), Admission::Refuse { .. }));
        h.pair_last_success = Some(NOW - 24 * 3_600_000);
        assert_eq!(p.admit(&h, NOW), Admission::Check);
        h.pair_last_success = Some(NOW - p.known_client_ms - 1);
        assert!(matches!(p.admit(&h, NOW), Admission::Refuse { .. }));
    }

    #[test]
    fn user_names_are_ascii_and_look_alikes_are_found() {
        for bad in [
            "ädmin",
            "\u{430}dmin",
            "\u{ff41}dmin",
            "adm\u{131}n",
            "admin\u{200b}",
        ] {
            assert!(
                matches!(Username::parse(bad), Err(UsernameError::Character(_))),
                "{bad:?}"
            );
        }
        let admin = Username::parse("admin").unwrap();
        for alike in ["ADMIN", "adm1n", "admln", "adrnin", "AdmIn", "adm|n"] {
            assert!(admin.looks_like(alike), "{alike}");
        }
        for other in ["admins", "a.dmin", "ann1", "bob"] {
            assert!(!admin.looks_like(other), "{other}");
        }
        assert!(Username::parse("vvalter").unwrap().looks_like("walter"));
        assert!(!Username::parse("ann1").unwrap().looks_like("ann2"));
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
