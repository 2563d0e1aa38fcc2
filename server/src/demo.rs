//! The demo: a fresh database with the shipped SciFact sample, demo accounts, and the project.

use anyhow::Context;
use app::domain::account::{NewPassword, Role, Username};
use app::store::{self, Db};
use std::path::Path;

pub const DEFAULT_DB: &str = "claimpool-demo.db";
pub const PROJECT: &str = "scifact-demo";

/// Demo accounts: (user name, role). The password of each is "<name>-demo".
pub const ACCOUNTS: [(&str, Role); 5] = [
    ("admin", Role::Admin),
    ("lead", Role::Lead),
    ("ann1", Role::Annotator),
    ("ann2", Role::Annotator),
    ("ann3", Role::Annotator),
];

pub fn password_of(username: &str) -> String {
    format!("{username}-demo")
}

/// Removes any database at `path` (with its WAL files) and creates the demo in its place.
pub async fn create(path: &Path) -> anyhow::Result<Db> {
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("cannot remove the old demo database {}", path.display())
                })
            }
        }
    }
    let db = store::open(path).await?;
    seed(&db).await?;
    println!("claimpool demo: database {}", path.display());
    println!("  accounts (user / password):");
    for (name, role) in ACCOUNTS {
        println!("    {name:<6} / {:<12} {role}", password_of(name));
    }
    Ok(db)
}

/// The shipped sample (see server/demo/ATTRIBUTION.md), embedded so the binary is self-contained.
const CORPUS: &str = include_str!("../demo/corpus.jsonl");
const CLAIMS: &str = include_str!("../demo/claims.jsonl");

/// Fills an empty database with the demo accounts, the project and its sample.
pub async fn seed(db: &Db) -> anyhow::Result<()> {
    let project = store::projects::create(
        db,
        PROJECT,
        "40 SciFact dev claims and 443 abstracts (demo sample)",
        None,
    )
    .await?;
    let dir = tempfile::tempdir().context("creating a temporary directory for the demo sample")?;
    let corpus = dir.path().join("corpus.jsonl");
    let claims = dir.path().join("claims.jsonl");
    std::fs::write(&corpus, CORPUS).context("writing the demo corpus")?;
    std::fs::write(&claims, CLAIMS).context("writing the demo claims")?;
    store::import::corpus(db, project, &corpus, None, None).await?;
    store::import::claims(db, project, &claims, None).await?;
    for (name, role) in ACCOUNTS {
        let username = Username::parse(name)?;
        let hash = app::auth::hash_password(&NewPassword::parse(&password_of(name))?)?;
        let user = store::users::create(db, &username, role, &hash, None).await?;
        store::projects::add_member(db, project, user.id, None).await?;
    }
    Ok(())
}
