//! The error every command returns: the same kinds as the server functions' error (the app's
//! `ApiError`, which converts from it one variant to one variant), without the server-function
//! machinery's own.

pub use domain::field::Field;

/// `head`, then each cause of `source` and its own sources, `: `-separated: what a library error
/// (an HTTP client's, say) says only across its chain.
pub fn with_causes(mut head: String, source: Option<&(dyn std::error::Error + 'static)>) -> String {
    let mut cause = source;
    while let Some(c) = cause {
        head.push_str(": ");
        head.push_str(&c.to_string());
        cause = c.source();
    }
    head
}

/// Why a command (or a read behind a proof) failed: a kind the caller can act on, and a message
/// a person can read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CommandError {
    /// No session: the caller must log in.
    #[error("please log in")]
    Unauthenticated,
    /// Logged in, but the role does not allow this.
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// A login's user name or password is wrong.
    #[error("wrong user name or password")]
    BadCredentials,
    /// The request's API token is no live token of an active user.
    #[error("the API token is invalid or revoked, or its user is deactivated")]
    BadToken,
    /// Too many failed logins for this user name.
    #[error("too many failed logins for {username}; try again in {retry_after_secs} s")]
    Throttled {
        username: String,
        retry_after_secs: i64,
    },
    /// Too many logins are being checked at once; the client may retry shortly.
    #[error("the server is busy checking other logins; try again in a moment")]
    Busy,
    /// What the command names does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// The command's input is wrong; the message says which field and why.
    #[error("{0}")]
    Invalid(String),
    /// One named input of a command is wrong: the pages show `field: message`, the command line
    /// names its option (`--field: message`).
    #[error("{}: {message}", .field.label())]
    Field { field: Field, message: String },
    /// The command conflicts with the current state (a duplicate, a stale item).
    #[error("{0}")]
    Conflict(String),
    /// The server is doing as much heavy work as it allows; the message says what was refused.
    #[error("busy: {0}")]
    Overloaded(String),
    /// Something failed on the server; the detail is for the server log.
    #[error("server error: {0}")]
    Internal(String),
}

/// Shorthand for command results.
pub type CommandResult<T> = Result<T, CommandError>;

impl CommandError {
    /// The input `field` is wrong: `message` says why.
    pub fn field(field: Field, message: impl std::fmt::Display) -> CommandError {
        CommandError::Field {
            field,
            message: message.to_string(),
        }
    }

    /// The same error about the input `field`: an invalid input becomes [`CommandError::Field`];
    /// other errors pass unchanged.
    pub fn about(self, field: Field) -> CommandError {
        match self {
            CommandError::Invalid(message) | CommandError::Field { message, .. } => {
                CommandError::Field { field, message }
            }
            other => other,
        }
    }
}

impl From<store::StoreError> for CommandError {
    fn from(err: store::StoreError) -> CommandError {
        match err {
            store::StoreError::NotFound(what) => CommandError::NotFound(what),
            store::StoreError::Conflict { message, .. } => CommandError::Conflict(message),
            store::StoreError::Invalid {
                field: Some(field),
                message,
            } => CommandError::Field { field, message },
            store::StoreError::Invalid {
                field: None,
                message,
            } => CommandError::Invalid(message),
            other => CommandError::Internal(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_errors_keep_their_kind_faults_become_internal() {
        assert_eq!(
            CommandError::from(store::StoreError::NotFound("project x".into())),
            CommandError::NotFound("project x".into())
        );
        assert_eq!(
            CommandError::from(store::StoreError::conflict(
                store::Constraint::ImportedFile,
                "already imported"
            )),
            CommandError::Conflict("already imported".into())
        );
        // An input the store names is the command's field error, and reads as the store's did.
        let budget = store::StoreError::invalid(Field::Budget, "too large");
        assert_eq!(budget.to_string(), "budget: too large");
        let budget = CommandError::from(budget);
        assert_eq!(budget, CommandError::field(Field::Budget, "too large"));
        assert_eq!(budget.to_string(), "budget: too large");
        assert_eq!(
            CommandError::from(store::StoreError::invalid(
                None,
                "the pool depth is at least 1"
            )),
            CommandError::Invalid("the pool depth is at least 1".into())
        );
        let io = CommandError::from(store::StoreError::Fault("writing /tmp/x: disk full".into()));
        assert!(matches!(io, CommandError::Internal(_)), "{io:?}");
        assert_eq!(
            CommandError::Invalid("is empty".into()).about(Field::Name),
            CommandError::field(Field::Name, "is empty")
        );
        assert_eq!(
            CommandError::NotFound("project x".into()).about(Field::Name),
            CommandError::NotFound("project x".into())
        );
    }
}
