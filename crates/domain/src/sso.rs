//! Single sign-on's rules: which local account an identity of the OpenID provider signs in as.
//!
//! An identity is the provider's `(issuer, subject)`; the administrator names the claim that
//! carries the user name (`preferred_username` by default). The first sign-in binds the identity
//! to the account of that name (or creates it, if the administrator allows); from then on the
//! binding decides, so a name that changes at the provider never moves the sign-in to another
//! account, and one account is never bound to two identities of one provider.

use crate::account::{User, Username, UsernameError};

/// The password hash of an account created at sign-in: a well-formed argon2id hash (the
/// database requires one) whose output is all zeros, which no password reaches, so the account
/// signs in only through the provider until an administrator sets a password.
pub const NO_PASSWORD_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$c3NvLW9ubHk$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

/// What becomes of an identity whose user name has no account yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewUsers {
    /// An annotator's account of that name is created (no password: it signs in only through
    /// the provider, until an administrator sets one).
    Annotator,
    /// The sign-in is refused: an administrator creates accounts first.
    Refuse,
}

impl NewUsers {
    pub fn parse(text: &str) -> Result<NewUsers, String> {
        match text.trim() {
            "annotator" | "create" => Ok(NewUsers::Annotator),
            "refuse" => Ok(NewUsers::Refuse),
            other => Err(format!(
                "unknown policy for new users {other:?} (expected annotator or refuse)"
            )),
        }
    }
}

/// Why a sign-in through the provider is refused, in words for the person signing in.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the identity provider sent no {claim:?} claim, which names your claimpool account; ask the administrator")]
    NoClaim { claim: String },
    #[error(
        "the identity provider's {claim:?} claim {value:?} is no claimpool user name: {error}"
    )]
    BadName {
        claim: String,
        value: String,
        error: UsernameError,
    },
    #[error("there is no claimpool account {name:?}, and this server creates none at sign-in: ask an administrator to create it")]
    Unknown { name: String },
    #[error("the claimpool account {name:?} is deactivated")]
    Inactive { name: String },
    #[error(
        "the claimpool account {name:?} is already bound to another identity of this provider"
    )]
    BoundElsewhere { name: String },
}

/// The user name the identity's `claim` carries.
pub fn username(claim: &str, value: Option<&str>) -> Result<Username, Refusal> {
    let value = value
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| Refusal::NoClaim {
            claim: claim.to_owned(),
        })?;
    Username::parse(value).map_err(|error| Refusal::BadName {
        claim: claim.to_owned(),
        value: value.to_owned(),
        error,
    })
}

/// The account of the claimed user name, as the store found it.
#[derive(Clone, Debug)]
pub struct Named {
    pub user: User,
    /// Whether another identity of the same issuer is bound to it already.
    pub bound_elsewhere: bool,
}

/// What a sign-in does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The identity is bound to this account: sign in.
    SignIn(User),
    /// First sign-in of the identity: bind it to the account of its name, then sign in.
    Bind(User),
    /// First sign-in, no account of that name: create an annotator's account, bind, sign in.
    Create(Username),
    Refuse(Refusal),
}

/// Decides a sign-in from the account the identity is bound to (if any) and, failing that, the
/// account its claimed `name` names.
pub fn decide(
    bound: Option<User>,
    named: Option<Named>,
    name: Username,
    new_users: NewUsers,
) -> Decision {
    let usable = |user: User| {
        if user.active {
            Ok(user)
        } else {
            Err(Refusal::Inactive {
                name: user.username.clone(),
            })
        }
    };
    if let Some(user) = bound {
        return usable(user).map_or_else(Decision::Refuse, Decision::SignIn);
    }
    match named {
        Some(named) if named.bound_elsewhere => Decision::Refuse(Refusal::BoundElsewhere {
            name: named.user.username,
        }),
        Some(named) => usable(named.user).map_or_else(Decision::Refuse, Decision::Bind),
        None => match new_users {
            NewUsers::Annotator => Decision::Create(name),
            NewUsers::Refuse => Decision::Refuse(Refusal::Unknown {
                name: name.as_str().to_owned(),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::account::Role;

    fn user(id: i64, name: &str, active: bool) -> User {
        User {
            id,
            username: name.into(),
            role: Role::Lead,
            active,
        }
    }

    fn name(text: &str) -> Username {
        Username::parse(text).unwrap()
    }

    #[test]
    fn the_binding_decides_once_made() {
        // The provider now calls the identity "bob", but it is bound to alice's account.
        let bound = Some(user(1, "alice", true));
        let named = Some(Named {
            user: user(2, "bob", true),
            bound_elsewhere: false,
        });
        assert_eq!(
            decide(bound, named, name("bob"), NewUsers::Refuse),
            Decision::SignIn(user(1, "alice", true))
        );
        assert_eq!(
            decide(
                Some(user(1, "alice", false)),
                None,
                name("alice"),
                NewUsers::Annotator
            ),
            Decision::Refuse(Refusal::Inactive {
                name: "alice".into()
            })
        );
    }

    #[test]
    fn a_first_sign_in_binds_creates_or_refuses() {
        let named = |bound_elsewhere| {
            Some(Named {
                user: user(2, "bob", true),
                bound_elsewhere,
            })
        };
        assert_eq!(
            decide(None, named(false), name("bob"), NewUsers::Refuse),
            Decision::Bind(user(2, "bob", true))
        );
        assert_eq!(
            decide(None, named(true), name("bob"), NewUsers::Annotator),
            Decision::Refuse(Refusal::BoundElsewhere { name: "bob".into() })
        );
        assert_eq!(
            decide(None, None, name("carol"), NewUsers::Annotator),
            Decision::Create(name("carol"))
        );
        assert_eq!(
            decide(None, None, name("carol"), NewUsers::Refuse),
            Decision::Refuse(Refusal::Unknown {
                name: "carol".into()
            })
        );
    }

    #[test]
    fn the_claim_must_be_a_user_name() {
        assert_eq!(
            username("preferred_username", Some(" ann ")),
            Ok(name("ann"))
        );
        assert_eq!(
            username("preferred_username", None),
            Err(Refusal::NoClaim {
                claim: "preferred_username".into()
            })
        );
        assert!(matches!(
            username("email", Some("ann@example.org")),
            Err(Refusal::BadName { .. })
        ));
        assert_eq!(NewUsers::parse("refuse"), Ok(NewUsers::Refuse));
        assert!(NewUsers::parse("admin").is_err());
    }
}
