//! The demo: a fresh database with the shipped SciFact sample, demo accounts, and the project.

use anyhow::Context;
use app::domain::account::{NewPassword, ProjectRole, Role};
use commands::{Db, Operator};
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
    let db = commands::db::open(path).await?;
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

/// Abstracts retrieved per claim by each demo system.
const DEMO_K: usize = 20;

/// The trained scorers shipped with the demo (see server/demo/ATTRIBUTION.md): trained on the
/// SciFact train claims and corpus with `claimpool pipeline train --hash-bits 16` and R = 0 and
/// R = 20 negatives per claim.
const TRAINED_R0: &[u8] = include_bytes!("../demo/models/trained-r0.json.gz");
const TRAINED_R20: &[u8] = include_bytes!("../demo/models/trained-r20.json.gz");

/// One of the demo's systems: how it scores and how it is described.
struct DemoSystem {
    name: &'static str,
    description: &'static str,
    negatives: Option<f64>,
    model: Option<&'static [u8]>,
}

const SYSTEMS: [DemoSystem; 3] = [
    DemoSystem {
        name: "bm25",
        description: "BM25 over title + abstract (top 20), calibrated probability of evidence",
        negatives: None,
        model: None,
    },
    DemoSystem {
        name: "trained-r0",
        description: "Trained claim/sentence model over the BM25 top 20, no sampled negatives",
        negatives: Some(0.0),
        model: Some(TRAINED_R0),
    },
    DemoSystem {
        name: "trained-r20",
        description: "Trained claim/sentence model over the BM25 top 20, 20 negatives per claim",
        negatives: Some(20.0),
        model: Some(TRAINED_R20),
    },
];

/// Indexes the sample once and writes each demo system's run into `dir` (`NAME.jsonl`).
fn generate_runs(corpus: &Path, claims: &Path, dir: &Path) -> anyhow::Result<()> {
    use app::pipeline::generate::{self, Scorer};
    let index = dir.join("index");
    generate::index_corpus(corpus, &index, &|_| {})?;
    let retriever = app::pipeline::Retriever::open(&index)?;
    let claims = generate::read_claims(claims)?;
    for system in &SYSTEMS {
        let scorer = match system.model {
            None => Scorer::Bm25(app::pipeline::Bm25Scorer::SCIFACT_TRAIN),
            Some(bytes) => {
                let origin = Path::new(system.name);
                let model = app::pipeline::trained::TrainedModel::from_bytes(bytes, origin)?;
                Scorer::Trained {
                    model: Box::new(model),
                    corpus: generate::read_corpus(corpus)?,
                }
            }
        };
        let out = dir.join(format!("{}.jsonl", system.name));
        let mut file = std::io::BufWriter::new(
            std::fs::File::create(&out).with_context(|| format!("creating {}", out.display()))?,
        );
        generate::generate_run(&retriever, &claims, DEMO_K, &scorer, 2, &mut file, &|_| {})
            .with_context(|| format!("generating the demo's {} run", system.name))?;
        std::io::Write::flush(&mut file)?;
    }
    Ok(())
}

/// The shipped sample (see server/demo/ATTRIBUTION.md), embedded so the binary is self-contained.
const CORPUS: &str = include_str!("../demo/corpus.jsonl");
const CLAIMS: &str = include_str!("../demo/claims.jsonl");

/// Fills an empty database with the demo accounts, the project and its sample.
pub async fn seed(db: &Db) -> anyhow::Result<()> {
    use commands::account::{CreateUser, PasswordChoice};
    use commands::import::{Import, ImportKind, ImportWhat};
    use commands::pool::BuildPool;
    use commands::project::{AddMember, CreateProject};
    // `claimpool demo` runs at the shell, on the database file it creates.
    let operator = Operator::at_the_shell();
    CreateProject::parse(
        PROJECT,
        "40 SciFact dev claims and 443 abstracts (demo sample), pooled from three pipeline runs",
    )?
    .run(db, &operator.creator())
    .await?;
    let lead = operator.lead(db, PROJECT).await?;
    let dir = tempfile::tempdir().context("creating a temporary directory for the demo sample")?;
    let corpus = dir.path().join("corpus.jsonl");
    let claims = dir.path().join("claims.jsonl");
    std::fs::write(&corpus, CORPUS).context("writing the demo corpus")?;
    std::fs::write(&claims, CLAIMS).context("writing the demo claims")?;
    let import = |path: &Path, what: ImportWhat| -> anyhow::Result<Import> {
        Ok(Import {
            path: path.to_path_buf(),
            kind: ImportKind::try_from(what)?,
            limits: None,
        })
    };
    import(&corpus, ImportWhat::Corpus { format: None })?
        .run(db, &lead)
        .await?;
    import(&claims, ImportWhat::Claims)?.run(db, &lead).await?;
    let runs = dir.path().to_path_buf();
    {
        let (corpus, claims) = (corpus.clone(), claims.clone());
        tokio::task::spawn_blocking(move || generate_runs(&corpus, &claims, &runs))
            .await
            .context("generating the demo's runs")??;
    }
    for system in &SYSTEMS {
        let what = ImportWhat::Run {
            system: Some(system.name.into()),
            role: "pooled".into(),
            format: Some(app::domain::formats::RunFormat::Canonical.as_str().into()),
            label_order: None,
            description: system.description.into(),
            negative_sampling_ratio: system.negatives,
            allow_missing_docs: false,
        };
        import(&dir.path().join(format!("{}.jsonl", system.name)), what)?
            .run(db, &lead)
            .await?;
    }
    // Accounts first, so that building the pool assigns its pairs to the annotators.
    let admin = operator.admin();
    for (name, role) in ACCOUNTS {
        let password = PasswordChoice::Given(NewPassword::parse(&password_of(name))?);
        let create = CreateUser::parse(name, role.as_str(), password)?;
        create.run(db, &admin).await?;
        // The lead leads the project, the annotators annotate it; the admin acts everywhere.
        let member = match role {
            Role::Admin => None,
            Role::Lead => Some(ProjectRole::Lead),
            Role::Annotator => Some(ProjectRole::Annotator),
        };
        if let Some(member) = member {
            AddMember::parse(name, member.as_str())?
                .run(db, &lead)
                .await?;
        }
    }
    BuildPool::parse("confidence", DEMO_DEPTH)?
        .run(db, &lead)
        .await?;
    Ok(())
}
