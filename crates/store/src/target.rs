//! Where the data lives: a SQLite file or a PostgreSQL database, parsed from `--db` or
//! `CLAIMPOOL_DB` (a path, `sqlite://PATH` or `postgres://USER@HOST/DB`).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// A database named on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DbTarget {
    /// A SQLite file (created when missing).
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL (`postgres://` or `postgresql://`).
    Postgres(PgUrl),
}

/// A PostgreSQL connection URL; shown with its password masked.
#[derive(Clone, PartialEq, Eq)]
pub struct PgUrl(String);

impl PgUrl {
    /// The URL as given, password included: for connecting, never for printing.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // postgres://user:secret@host/db -> postgres://user:***@host/db
        let (scheme, rest) = self.0.split_once("://").unwrap_or(("postgres", &self.0));
        match rest.rsplit_once('@') {
            Some((who, place)) => match who.split_once(':') {
                Some((user, _)) => write!(f, "{scheme}://{user}:***@{place}"),
                None => write!(f, "{}", self.0),
            },
            None => write!(f, "{}", self.0),
        }
    }
}

impl fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PgUrl({self})")
    }
}

impl fmt::Display for DbTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbTarget::Sqlite(path) => write!(f, "{}", path.display()),
            DbTarget::Postgres(url) => url.fmt(f),
        }
    }
}

/// Why a `--db` value names no database.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DbTargetError {
    #[error("an empty database name: give a file path, sqlite://PATH or postgres://USER@HOST/DB")]
    Empty,
    #[error(
        "unknown database scheme {0}:// (use a file path, sqlite://PATH or postgres://USER@HOST/DB)"
    )]
    Scheme(String),
    #[error("{0} names no database: use postgres://USER@HOST[:PORT]/DB")]
    NoPgDatabase(String),
}

impl FromStr for DbTarget {
    type Err = DbTargetError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.is_empty() {
            return Err(DbTargetError::Empty);
        }
        let Some((scheme, rest)) = s.split_once("://") else {
            // `sqlite:PATH` (sqlx's own spelling) or a plain path.
            let path = s.strip_prefix("sqlite:").unwrap_or(s);
            return match path {
                "" => Err(DbTargetError::Empty),
                path => Ok(DbTarget::Sqlite(PathBuf::from(path))),
            };
        };
        match scheme.to_ascii_lowercase().as_str() {
            "sqlite" if rest.is_empty() => Err(DbTargetError::Empty),
            "sqlite" => Ok(DbTarget::Sqlite(PathBuf::from(rest))),
            "postgres" | "postgresql" => {
                let after_host = rest.rsplit_once('@').map_or(rest, |(_, place)| place);
                let database = after_host
                    .split_once('/')
                    .map(|(_, db)| db.split('?').next().unwrap_or(""))
                    .unwrap_or("");
                if database.is_empty() {
                    let shown = PgUrl(s.to_owned()).to_string();
                    return Err(DbTargetError::NoPgDatabase(shown));
                }
                Ok(DbTarget::Postgres(PgUrl(s.to_owned())))
            }
            other => Err(DbTargetError::Scheme(other.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<DbTarget, DbTargetError> {
        s.parse()
    }

    #[test]
    fn paths_and_sqlite_urls_name_sqlite_files() {
        assert_eq!(
            parse("claimpool.db"),
            Ok(DbTarget::Sqlite("claimpool.db".into()))
        );
        assert_eq!(parse("/var/x.db"), Ok(DbTarget::Sqlite("/var/x.db".into())));
        assert_eq!(
            parse("sqlite://a/b.db"),
            Ok(DbTarget::Sqlite("a/b.db".into()))
        );
        assert_eq!(
            parse("sqlite:///abs.db"),
            Ok(DbTarget::Sqlite("/abs.db".into()))
        );
        assert_eq!(
            parse("sqlite:rel.db"),
            Ok(DbTarget::Sqlite("rel.db".into()))
        );
        assert_eq!(parse(""), Err(DbTargetError::Empty));
        assert_eq!(parse("sqlite://"), Err(DbTargetError::Empty));
    }

    #[test]
    fn postgres_urls_need_a_database_and_hide_the_password() {
        let target = parse("postgres://ann:s3cret@db.lab:5433/claims?sslmode=disable").unwrap();
        let DbTarget::Postgres(url) = &target else {
            panic!("not postgres: {target:?}");
        };
        assert_eq!(
            url.expose(),
            "postgres://ann:s3cret@db.lab:5433/claims?sslmode=disable"
        );
        assert_eq!(
            target.to_string(),
            "postgres://ann:***@db.lab:5433/claims?sslmode=disable"
        );
        assert!(!format!("{target:?}").contains("s3cret"));
        assert!(parse("postgresql://ann@localhost/claims").is_ok());
        assert_eq!(
            parse("postgres://ann:pw@localhost"),
            Err(DbTargetError::NoPgDatabase(
                "postgres://ann:***@localhost".into()
            ))
        );
        assert_eq!(
            parse("mysql://x@y/z"),
            Err(DbTargetError::Scheme("mysql".into()))
        );
    }
}
