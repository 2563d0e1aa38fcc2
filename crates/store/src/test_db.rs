//! Databases for the store's own tests, of the engine the tests run on: a SQLite file in a
//! temporary directory, or with `CLAIMPOOL_TEST_ENGINE=postgres` (as `make test`'s second pass
//! sets) a fresh database on the test process's throwaway PostgreSQL cluster, the one the
//! server's integration tests start.

use super::{Db, DbTarget};

use testdata::postgres as cluster;

pub(crate) use cluster::{held_writer_locks, tests_on_postgres, until_writer_locks_are_freed};

/// A fresh, migrated database of the tested engine; the SQLite file lives as long as this does.
pub(crate) struct TestDb {
    pub(crate) db: Db,
    target: DbTarget,
    _dir: tempfile::TempDir,
}

impl TestDb {
    pub(crate) async fn fresh() -> TestDb {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let arg = cluster::fresh_test_database(dir.path());
        let target: DbTarget = arg.parse().expect("a database");
        let db = super::db::connect(&target)
            .await
            .expect("open the database");
        let engine = super::engine(&db);
        assert_eq!(
            engine == super::Engine::Postgres,
            cluster::tests_on_postgres(),
            "{engine:?}"
        );
        TestDb {
            db,
            target,
            _dir: dir,
        }
    }

    /// Another pool on the same database, as a second process or server would open it.
    pub(crate) async fn reopen(&self) -> Db {
        super::db::connect(&self.target)
            .await
            .expect("reopen the database")
    }
}
