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

/// The depth of the demo's pool (confidence strategy).
pub const DEMO_DEPTH: u32 = 30;

/// Indexes the sample and writes a BM25 run of the top 20 abstracts of each claim.
fn generate_bm25_run(corpus: &Path, claims: &Path, index: &Path, out: &Path) -> anyhow::Result<()> {
    use app::pipeline::generate::{self, Scorer};
    generate::index_corpus(corpus, index, &|_| {})?;
    let retriever = app::pipeline::Retriever::open(index)?;
    let claims = generate::read_claims(claims)?;
    let mut file = std::io::BufWriter::new(std::fs::File::create(out)?);
    let scorer = Scorer::Bm25(app::pipeline::Bm25Scorer::SCIFACT_TRAIN);
    generate::generate_run(&retriever, &claims, 20, &scorer, 2, &mut file, &|_| {})?;
    Ok(())
}

/// The shipped sample (see server/demo/ATTRIBUTION.md), embedded so the binary is self-contained.
const CORPUS: &str = include_str!("../demo/corpus.jsonl");
const CLAIMS: &str = include_str!("../demo/claims.jsonl");

/// Fills an empty database with the demo accounts, the project and its sample.
pub async fn seed(db: &Db) -> anyhow::Result<()> {
    let project = store::projects::create(
        db,
        PROJECT,
        "40 SciFact dev claims and 443 abstracts (demo sample), pooled from a BM25 run",
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
    let run = dir.path().join("bm25.jsonl");
    let (index, generated) = (dir.path().join("index"), run.clone());
    tokio::task::spawn_blocking(move || generate_bm25_run(&corpus, &claims, &index, &generated))
        .await
        .context("generating the demo's BM25 run")??;
    let import = store::import::RunImport {
        path: run,
        format: Some(app::domain::formats::RunFormat::Canonical),
        options: app::domain::formats::RunReadOptions::default(),
        system: store::import::SystemSpec {
            name: Some("bm25".into()),
            role: store::import::SystemRole::Pooled,
            description: "BM25 over title + abstract (top 20), calibrated probability of evidence"
                .into(),
            negative_sampling_ratio: None,
        },
        allow_missing_docs: false,
    };
    store::import::run(db, project, import, None).await?;
    store::pool::build(
        db,
        project,
        app::domain::pool::Strategy::Confidence,
        DEMO_DEPTH,
        None,
    )
    .await?;
    for (name, role) in ACCOUNTS {
        let username = Username::parse(name)?;
        let hash = app::auth::hash_password(&NewPassword::parse(&password_of(name))?)?;
        let user = store::users::create(db, &username, role, &hash, None).await?;
        store::projects::add_member(db, project, user.id, None).await?;
    }
    Ok(())
}
