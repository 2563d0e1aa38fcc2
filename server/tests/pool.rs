//! Imports and the pool through the store, on the real SciFact release and staged runs (skipped
//! when ../shared is absent), checked against an independent computation written here.

mod common;

use app::domain::formats::{LabelOrder, RunFormat, RunReadOptions, RunReader};
use app::domain::ids::{ClaimId, DocId};
use app::store::import::{self, RunImport, SystemRole, SystemSpec};
use app::store::pool as pools;
use app::store::Db;
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

fn data() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipped: {} is absent", dir.display());
        None
    }
}

/// The runs used here: (system, file under scifact-runs, format, label order).
const RUNS: [(&str, &str, RunFormat, &str); 4] = [
    (
        "arsjoint-0327",
        "arsjoint/2021-03-27_21c6c29/label_predictions.jsonl",
        RunFormat::VeriSci,
        "CONTRADICT,NEI,SUPPORT",
    ),
    (
        "rationale-k30",
        "rationale_scores_neverneverendup/k30_scores_baseline_predicted_rationale_selection.jsonl",
        RunFormat::SentenceScores,
        "CONTRADICT,NEI,SUPPORT",
    ),
    (
        "hybrid-6d32",
        "hybrid_rag_kaikoepchen/predictions_dev_6d32d0d.jsonl",
        RunFormat::Leaderboard,
        "CONTRADICT,NEI,SUPPORT",
    ),
    (
        "mv-citint",
        "multivers_jedick/dev/citint_scifact_dev.jsonl",
        RunFormat::Leaderboard,
        "REFUTE,NEI,SUPPORT",
    ),
];

async fn project_with_runs(db: &Db, data: &Path) -> i64 {
    let project = app::store::projects::create(db, "scifact", "", None)
        .await
        .unwrap();
    import::corpus(db, project, &data.join("scifact/corpus.jsonl"), None, None)
        .await
        .unwrap();
    import::claims(db, project, &data.join("scifact/claims_dev.jsonl"), None)
        .await
        .unwrap();
    for (name, file, format, order) in RUNS {
        let run = RunImport {
            path: data.join("scifact-runs").join(file),
            format: Some(format),
            options: RunReadOptions {
                label_order: order.parse::<LabelOrder>().unwrap(),
                ..RunReadOptions::default()
            },
            system: SystemSpec {
                name: Some(name.into()),
                role: SystemRole::Pooled,
                description: String::new(),
                negative_sampling_ratio: None,
            },
            allow_missing_docs: false,
        };
        import::run(db, project, run, None).await.unwrap();
    }
    project
}

/// One prediction as the test reads it straight from the file.
struct Pred {
    claim: ClaimId,
    doc: DocId,
    confidence: f64,
    rank: Option<u32>,
}

fn read_runs(data: &Path) -> Vec<(String, Vec<Pred>)> {
    RUNS.iter()
        .map(|(name, file, format, order)| {
            let options = RunReadOptions {
                label_order: order.parse().unwrap(),
                ..RunReadOptions::default()
            };
            let preds = RunReader::open(&data.join("scifact-runs").join(file), *format, &options)
                .unwrap()
                .map(|r| {
                    let r = r.unwrap().record;
                    Pred {
                        confidence: r.confidence(),
                        rank: r.rank,
                        claim: r.claim_id,
                        doc: r.doc_id,
                    }
                })
                .collect();
            (name.to_string(), preds)
        })
        .collect()
}

/// The tie-break of the pooling definition, written out: confidence descending, then lower
/// retrieval rank (missing last), then claim id, then doc id.
fn before(a: &Pred, b: &Pred) -> Ordering {
    b.confidence
        .partial_cmp(&a.confidence)
        .unwrap()
        .then_with(|| match (a.rank, b.rank) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        })
        .then_with(|| a.claim.cmp(&b.claim))
        .then_with(|| a.doc.cmp(&b.doc))
}

type Expected = BTreeMap<(String, String), (u32, BTreeMap<String, u32>)>;

/// The pool computed independently: each system's ranks by sorting its pairs (globally, or
/// within each claim), then the union of each system's top `depth`.
fn expected_pool(runs: &mut [(String, Vec<Pred>)], depth: u32, per_claim: bool) -> Expected {
    let mut ranks: HashMap<(String, String), BTreeMap<String, u32>> = HashMap::new();
    for (name, preds) in runs.iter_mut() {
        preds.sort_by(|a, b| {
            if per_claim {
                a.claim.cmp(&b.claim).then_with(|| before(a, b))
            } else {
                before(a, b)
            }
        });
        let mut position = 0u32;
        let mut current: Option<ClaimId> = None;
        for p in preds.iter() {
            if per_claim && current.as_ref() != Some(&p.claim) {
                current = Some(p.claim.clone());
                position = 0;
            }
            position += 1;
            ranks
                .entry((p.claim.to_string(), p.doc.to_string()))
                .or_default()
                .insert(name.clone(), position);
        }
    }
    ranks
        .into_iter()
        .filter_map(|(pair, by_system)| {
            let best = *by_system.values().min()?;
            (best <= depth).then_some((pair, (best, by_system)))
        })
        .collect()
}

fn listed(rows: &[pools::PoolRow]) -> Expected {
    rows.iter()
        .map(|r| {
            (
                (r.claim_id.clone(), r.doc_id.clone()),
                (r.entry_depth, r.model_ranks.clone()),
            )
        })
        .collect()
}

#[tokio::test]
async fn pools_equal_an_independent_computation_and_grow_without_touching_judgments() {
    let Some(data) = data() else { return };
    let app = common::TestApp::spawn().await;
    let db = &app.db;
    let project = project_with_runs(db, &data).await;
    let mut runs = read_runs(&data);

    // Confidence strategy: d=50 then grown to d=100 equals d=100 computed directly.
    pools::build(
        db,
        project,
        pools::parse_strategy("confidence").unwrap(),
        50,
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        listed(&pools::list(db, project).await.unwrap()),
        expected_pool(&mut runs, 50, false)
    );
    let judged_before: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM judgments")
        .fetch_one(db)
        .await
        .unwrap();
    let finals_before: Vec<(i64, i64, String)> =
        sqlx::query_as("SELECT claim_id, doc_id, label FROM final_labels ORDER BY 1, 2")
            .fetch_all(db)
            .await
            .unwrap();
    let grown = pools::build(
        db,
        project,
        pools::parse_strategy("confidence").unwrap(),
        100,
        None,
    )
    .await
    .unwrap();
    let expected_100 = expected_pool(&mut runs, 100, false);
    assert_eq!(
        listed(&pools::list(db, project).await.unwrap()),
        expected_100
    );
    assert_eq!(grown.pool_size, expected_100.len());
    // Judgments and final labels are untouched by growth.
    let judged_after: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM judgments")
        .fetch_one(db)
        .await
        .unwrap();
    let finals_after: Vec<(i64, i64, String)> =
        sqlx::query_as("SELECT claim_id, doc_id, label FROM final_labels ORDER BY 1, 2")
            .fetch_all(db)
            .await
            .unwrap();
    assert_eq!(
        (judged_before, &finals_before),
        (judged_after, &finals_after)
    );
    // Pools never shrink.
    assert!(pools::build(
        db,
        project,
        pools::parse_strategy("confidence").unwrap(),
        60,
        None
    )
    .await
    .is_err());

    // Per-claim strategy (TREC depth-k) in a second project.
    let app2 = common::TestApp::spawn().await;
    let project2 = project_with_runs(&app2.db, &data).await;
    pools::build(
        &app2.db,
        project2,
        pools::parse_strategy("per-claim").unwrap(),
        3,
        None,
    )
    .await
    .unwrap();
    pools::build(
        &app2.db,
        project2,
        pools::parse_strategy("per-claim").unwrap(),
        5,
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        listed(&pools::list(&app2.db, project2).await.unwrap()),
        expected_pool(&mut runs, 5, true)
    );

    // Stats: pooled and judged counts by number of systems, against a count from the listing.
    let stats = pools::stats(db, project, 50).await.unwrap();
    let rows = pools::list(db, project).await.unwrap();
    let mut by_count: BTreeMap<usize, (usize, usize, usize)> = BTreeMap::new();
    for r in &rows {
        let found = r.model_ranks.values().filter(|&&rank| rank <= 100).count();
        let e = by_count.entry(found).or_default();
        e.0 += 1;
        e.1 += usize::from(r.final_label.is_some());
        e.2 += usize::from(matches!(
            r.final_label.as_deref(),
            Some("SUPPORT" | "CONTRADICT")
        ));
    }
    let got: BTreeMap<usize, (usize, usize, usize)> = stats
        .stats
        .by_system_count
        .iter()
        .filter(|r| r.pooled > 0)
        .map(|r| (r.systems as usize, (r.pooled, r.judged, r.evidence)))
        .collect();
    assert_eq!(got, by_count);
    assert_eq!(stats.stats.pool_size, rows.len());
    // Citation evidence of dev: 209 pairs (SciFact SOURCES.md).
    assert_eq!(stats.prior_evidence.total, 209);
}

#[tokio::test]
async fn a_bad_file_is_rejected_whole_with_lines_and_fields_and_writes_nothing() {
    let app = common::TestApp::spawn().await;
    let db = &app.db;
    let project = app::store::projects::create(db, "p", "", None)
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus.jsonl");
    std::fs::write(
        &corpus,
        "{\"doc_id\": 1, \"title\": \"A\", \"abstract\": [\"One.\"]}\n\
         {\"doc_id\": 2, \"title\": \"B\", \"abstract\": [\"Two.\"]}\n\
         {\"doc_id\": 1, \"title\": \"C\", \"abstract\": [\"Again.\"]}\n\
         {\"doc_id\": 3, \"title\": 7, \"abstract\": [\"Bad title.\"]}\n",
    )
    .unwrap();
    let err = import::corpus(db, project, &corpus, None, None)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("2 problems found, nothing was imported"),
        "{err}"
    );
    assert!(
        err.contains(
            "corpus.jsonl:3: field \"doc_id\": document 1 appears twice (first on line 1)"
        ),
        "{err}"
    );
    assert!(err.contains("corpus.jsonl:4: field \"title\""), "{err}");
    let docs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM documents")
        .fetch_one(db)
        .await
        .unwrap();
    let imports: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM imports")
        .fetch_one(db)
        .await
        .unwrap();
    assert_eq!((docs, imports), (0, 0));

    // A good corpus, then a run naming an unknown claim and a probability out of range.
    std::fs::write(
        &corpus,
        "{\"doc_id\": 1, \"title\": \"A\", \"abstract\": [\"One.\"]}\n",
    )
    .unwrap();
    import::corpus(db, project, &corpus, None, None)
        .await
        .unwrap();
    let err = import::corpus(db, project, &corpus, None, None)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("imported into the project already"), "{err}");
    let claims = dir.path().join("claims.jsonl");
    std::fs::write(
        &claims,
        "{\"id\": 5, \"claim\": \"X.\", \"evidence\": {}, \"cited_doc_ids\": [1]}\n",
    )
    .unwrap();
    import::claims(db, project, &claims, None).await.unwrap();
    let run = dir.path().join("run.jsonl");
    std::fs::write(
        &run,
        "{\"claim_id\": 5, \"doc_id\": 1, \"predicted_label\": \"SUPPORT\", \"p_support\": 0.9, \"p_contradict\": 0.05}\n\
         {\"claim_id\": 6, \"doc_id\": 1, \"predicted_label\": \"SUPPORT\", \"p_support\": 0.9, \"p_contradict\": 0.05}\n\
         {\"claim_id\": 5, \"doc_id\": 2, \"predicted_label\": \"SUPPORT\", \"p_support\": 1.3, \"p_contradict\": 0.05}\n",
    )
    .unwrap();
    let spec = |name: &str| RunImport {
        path: run.clone(),
        format: None,
        options: RunReadOptions::default(),
        system: SystemSpec {
            name: Some(name.into()),
            role: SystemRole::Pooled,
            description: String::new(),
            negative_sampling_ratio: None,
        },
        allow_missing_docs: false,
    };
    let err = import::run(db, project, spec("s"), None)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("run.jsonl:2: field \"claim_id\": claim 6 is not in the project"),
        "{err}"
    );
    assert!(err.contains("run.jsonl:3: field \"p_support\""), "{err}");
    let (systems, predictions): (i64, i64) =
        sqlx::query_as("SELECT (SELECT COUNT(*) FROM systems), (SELECT COUNT(*) FROM predictions)")
            .fetch_one(db)
            .await
            .unwrap();
    assert_eq!((systems, predictions), (0, 0));
    // The cited document without evidence is a judged NEI pair.
    let nei: Vec<(String,)> = sqlx::query_as("SELECT label FROM final_labels")
        .fetch_all(db)
        .await
        .unwrap();
    assert_eq!(nei, vec![("NEI".to_owned(),)]);
}
