//! Imports and the pool through the store, on the real SciFact release and staged runs (skipped
//! when ../shared is absent), checked against an independent computation written here.

use crate::common;

use app::domain::formats::{LabelOrder, RunFormat, RunReadOptions, RunReader};
use app::domain::ids::{ClaimId, DocId};
use app::domain::pool::Role as SystemRole;
use commands::import::{RunImport, SystemSpec};
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use store::pool as pools;
use store::Db;

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
    let project = store::projects::create(db, "scifact", "", None)
        .await
        .unwrap();
    commands::import::corpus(
        db,
        &crate::common::operator_lead(db, project).await,
        &data.join("scifact/corpus.jsonl"),
        None,
    )
    .await
    .unwrap();
    commands::import::claims(
        db,
        &crate::common::operator_lead(db, project).await,
        &data.join("scifact/claims_dev.jsonl"),
    )
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
        commands::import::run(db, &crate::common::operator_lead(db, project).await, run)
            .await
            .unwrap();
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
    let project = store::projects::create(db, "p", "", None).await.unwrap();
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
    let err = commands::import::corpus(
        db,
        &crate::common::operator_lead(db, project).await,
        &corpus,
        None,
    )
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
    commands::import::corpus(
        db,
        &crate::common::operator_lead(db, project).await,
        &corpus,
        None,
    )
    .await
    .unwrap();
    let err = commands::import::corpus(
        db,
        &crate::common::operator_lead(db, project).await,
        &corpus,
        None,
    )
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
    commands::import::claims(
        db,
        &crate::common::operator_lead(db, project).await,
        &claims,
    )
    .await
    .unwrap();
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
    let err = commands::import::run(
        db,
        &crate::common::operator_lead(db, project).await,
        spec("s"),
    )
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

/// A scored pair of every demo claim with every demo abstract: one system's run over the
/// demo project (17,720 pairs).
fn demo_pairs() -> Vec<(String, String, f64)> {
    let claims = common::demo_lines("claims.jsonl");
    let docs = common::demo_lines("corpus.jsonl");
    let mut pairs = Vec::new();
    for (c, claim) in claims.iter().enumerate() {
        for (d, doc) in docs.iter().enumerate() {
            let p = ((c * 7919 + d * 104_729) % 10_007) as f64 / 10_007.0;
            pairs.push((claim["id"].to_string(), doc["doc_id"].to_string(), p));
        }
    }
    pairs
}

/// The demo project (no evidence: every pooled pair waits for annotation) with two active
/// annotators, pooled at depth 100; returns the project and the annotators.
async fn pooled_demo(app: &common::TestApp) -> (i64, [i64; 2]) {
    let project = app.demo_project("p", true, &demo_pairs()).await;
    let mut annotators = [0; 2];
    for (i, name) in ["ann1", "ann2"].iter().enumerate() {
        annotators[i] = app
            .add_user(name, app::domain::account::Role::Annotator)
            .await;
        store::projects::add_member(
            &app.db,
            project,
            annotators[i],
            app::domain::account::ProjectRole::Annotator,
            None,
        )
        .await
        .unwrap();
    }
    pools::build(&app.db, project, confidence(), 100, None)
        .await
        .unwrap();
    (project, annotators)
}

fn confidence() -> app::domain::pool::Strategy {
    pools::parse_strategy("confidence").unwrap()
}

/// What readers of the project see: the pool's listing and statistics, each annotator's queue
/// head and open items, the lead's overview, the builds, and the views' counts.
async fn readers(db: &Db, project: i64, annotators: &[i64]) -> serde_json::Value {
    let mut queues = Vec::new();
    for &id in annotators {
        // An annotator's queue: gold served, the discussion only at adjudication.
        let terms = store::annotate::QueueTerms {
            serves_gold: true,
            shows_discussion: false,
        };
        let annotator = app::domain::annotation::AnnotatorId(id);
        let mut head = store::annotate::queue_head(db, annotator, project, terms)
            .await
            .unwrap();
        // The server's clock at the read, not what readers see of the project.
        head.server_ms = 0;
        queues.push(serde_json::json!({
            "head": head,
            "open": store::work::open_count(db, id).await.unwrap(),
            "projects": store::work::projects_of(db, id).await.unwrap(),
        }));
    }
    let counts: (i64, i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM pool_entries), (SELECT COUNT(*) FROM pool_ranks),
                (SELECT COUNT(*) FROM pool_builds),
                (SELECT COUNT(*) FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id)",
    )
    .fetch_one(db)
    .await
    .unwrap();
    serde_json::json!({
        "list": pools::list(db, project).await.unwrap(),
        "stats": pools::stats(db, project, 50).await.unwrap(),
        "settings": pools::settings(db, project).await.unwrap(),
        "queues": queues,
        "overview": store::annotate::overview(db, project).await.unwrap(),
        "counts": counts,
    })
}

/// Rows of builds still being written: (entries, ranks, open assignments of their entries).
async fn hidden(db: &Db) -> (i64, i64, i64) {
    sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM pool_entry_rows e JOIN pool_build_rows b ON b.id = e.build_id
                  WHERE b.state = 'writing'),
                (SELECT COUNT(*) FROM pool_rank_rows r JOIN pool_build_rows b ON b.id = r.build_id
                  WHERE b.state = 'writing'),
                (SELECT COUNT(*) FROM assignments a JOIN pool_entry_rows e ON e.id = a.pool_entry_id
                  JOIN pool_build_rows b ON b.id = e.build_id WHERE b.state = 'writing')",
    )
    .fetch_one(db)
    .await
    .unwrap()
}

/// Build options of `chunk_rows` rows whose hook stops after each chunk until the receiver of
/// the returned channel resumes it (with the sender it gets).
fn held(
    chunk_rows: usize,
) -> (
    pools::BuildOptions,
    tokio::sync::mpsc::UnboundedReceiver<tokio::sync::oneshot::Sender<()>>,
) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let hook: pools::ChunkHook = std::sync::Arc::new(move || {
        let tx = tx.clone();
        Box::pin(async move {
            let (resume, wait) = tokio::sync::oneshot::channel();
            if tx.send(resume).is_ok() {
                let _ = wait.await;
            }
        })
    });
    (
        pools::BuildOptions {
            chunk_rows,
            after_chunk: Some(hook),
        },
        rx,
    )
}

#[tokio::test]
async fn a_growing_pool_stays_as_it_was_for_readers_until_the_build_is_done() {
    let app = common::TestApp::spawn().await;
    let db = &app.db;
    let (project, annotators) = pooled_demo(&app).await;
    let before = readers(db, project, &annotators).await;
    // Grown from depth 100 to 1,000 in chunks of 200 rows, held after each one.
    let (options, mut holds) = held(200);
    let build = {
        let db = db.clone();
        tokio::spawn(async move {
            pools::build_with(&db, project, confidence(), 1_000, None, &options).await
        })
    };
    let (mut chunks, mut most) = (0, (0, 0, 0));
    while let Some(resume) = holds.recv().await {
        chunks += 1;
        let now = hidden(db).await;
        most = (most.0.max(now.0), most.1.max(now.1), most.2.max(now.2));
        assert_eq!(
            readers(db, project, &annotators).await,
            before,
            "after chunk {chunks}"
        );
        if chunks == 1 {
            // One build of a project at a time.
            let err = pools::build(db, project, confidence(), 1_000, None)
                .await
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    store::StoreError::Conflict {
                        constraint: store::Constraint::PoolBuilding,
                        ..
                    }
                ),
                "{err}"
            );
            assert!(err.to_string().contains("is being built"), "{err}");
        }
        resume.send(()).unwrap();
    }
    let report = build.await.unwrap().unwrap();
    assert_eq!(report.added, 900);
    // The new entries, their ranks and their first passes were all written hidden.
    assert_eq!(
        most,
        (900, 900, 900),
        "most hidden rows after {chunks} chunks"
    );
    assert!(chunks >= 10, "{chunks} chunks");
    assert_eq!(hidden(db).await, (0, 0, 0));
    let after = readers(db, project, &annotators).await;
    assert_ne!(after, before);
    assert_eq!(after["list"].as_array().unwrap().len(), 1_000);
    assert_eq!(after["counts"], serde_json::json!([1_000, 1_000, 2, 1_000]));
    // Every pair waits for its first pass, balanced between the two annotators.
    assert_eq!(after["queues"][0]["open"], 500);
    assert_eq!(after["queues"][1]["open"], 500);
    // The lead's overview counts them alike, per stage and per annotator.
    let overview = &after["overview"];
    assert_eq!(
        [
            &overview["open_first"],
            &overview["open_second"],
            &overview["open_adjudication"]
        ],
        [1_000, 0, 0]
    );
    let open: Vec<&serde_json::Value> = overview["annotators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["open"])
        .collect();
    assert_eq!(open, [500, 500]);
}

#[tokio::test]
async fn a_build_that_dies_midway_leaves_the_pool_as_it_was_and_the_next_removes_its_rows() {
    let app = common::TestApp::spawn().await;
    let db = &app.db;
    let (project, annotators) = pooled_demo(&app).await;
    let before = readers(db, project, &annotators).await;
    // The build stops for good after its 6th chunk, and is dropped there (as a killed process
    // leaves it: rows written, lock file unlocked).
    let (options, mut holds) = held(200);
    let build = {
        let db = db.clone();
        tokio::spawn(async move {
            pools::build_with(&db, project, confidence(), 1_000, None, &options).await
        })
    };
    for _ in 1..6 {
        holds.recv().await.unwrap().send(()).unwrap();
    }
    let stopped = holds.recv().await.unwrap();
    build.abort();
    drop(stopped);
    assert!(build.await.unwrap_err().is_cancelled());
    common::postgres::until_writer_locks_are_freed(db).await;
    let left = hidden(db).await;
    assert!(left.0 > 0, "{left:?}");
    assert_eq!(readers(db, project, &annotators).await, before);
    // The next build removes the dead one's rows and grows the pool.
    let report = pools::build(db, project, confidence(), 1_000, None)
        .await
        .unwrap();
    assert_eq!(report.added, 900);
    assert_eq!(hidden(db).await, (0, 0, 0));
    let after = readers(db, project, &annotators).await;
    assert_eq!(after["counts"], serde_json::json!([1_000, 1_000, 2, 1_000]));
    let rows: (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM pool_entry_rows), (SELECT COUNT(*) FROM pool_build_rows),
                (SELECT COUNT(*) FROM assignments)",
    )
    .fetch_one(db)
    .await
    .unwrap();
    assert_eq!(rows, (1_000, 2, 1_000));

    // A build left writing by a dead process is removed at `serve` start (reclaim) too.
    let (options, mut holds) = held(200);
    let build = {
        let db = db.clone();
        tokio::spawn(async move {
            pools::build_with(&db, project, confidence(), 2_000, None, &options).await
        })
    };
    let resume = holds.recv().await.unwrap();
    build.abort();
    drop(resume);
    let _ = build.await;
    common::postgres::until_writer_locks_are_freed(db).await;
    assert!(hidden(db).await.0 > 0);
    assert_eq!(pools::reclaim_abandoned(db).await.unwrap(), 1);
    assert_eq!(hidden(db).await, (0, 0, 0));
    assert_eq!(readers(db, project, &annotators).await, after);
}

#[tokio::test]
async fn work_given_to_an_annotator_who_leaves_during_a_build_goes_to_the_others() {
    let app = common::TestApp::spawn().await;
    let db = &app.db;
    let (project, [ann1, ann2]) = pooled_demo(&app).await;
    let (options, mut holds) = held(200);
    let build = {
        let db = db.clone();
        tokio::spawn(async move {
            pools::build_with(&db, project, confidence(), 1_000, None, &options).await
        })
    };
    let mut left = false;
    while let Some(resume) = holds.recv().await {
        // Once ann2 holds hidden work of the build, ann2 leaves the project.
        let theirs: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM assignments a JOIN pool_entry_rows e ON e.id = a.pool_entry_id
             JOIN pool_build_rows b ON b.id = e.build_id
             WHERE b.state = 'writing' AND a.annotator_id = $1",
        )
        .bind(ann2)
        .fetch_one(db)
        .await
        .unwrap();
        if theirs > 0 && !left {
            store::projects::remove_member(db, project, "ann2", None)
                .await
                .unwrap();
            left = true;
        }
        resume.send(()).unwrap();
    }
    assert!(left, "ann2 never held work of the build");
    build.await.unwrap().unwrap();
    let open = |who: i64| {
        sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id
             WHERE a.annotator_id = $1 AND a.status = 'open'",
        )
        .bind(who)
        .fetch_one(db)
    };
    assert_eq!(open(ann2).await.unwrap(), 0);
    assert_eq!(open(ann1).await.unwrap(), 1_000);
}

/// Imports a second pooled system `s2` into the project: the first one's scores, slightly
/// perturbed (it ranks some of the first one's pairs higher, and pools a few others).
async fn import_second_system(app: &common::TestApp, project: i64) {
    let run: String = demo_pairs()
        .iter()
        .enumerate()
        .map(|(i, (claim, doc, p))| {
            let p = (p * 0.99 + ((i * 31_337) % 9_973) as f64 / 9_973.0 * 0.01).min(1.0);
            format!("{{\"claim_id\": {claim}, \"doc_id\": {doc}, \"p_support\": {p}, \"p_contradict\": 0.0}}\n")
        })
        .collect();
    let path = app.dir.path().join("s2-run.jsonl");
    std::fs::write(&path, run).unwrap();
    let spec = RunImport {
        path,
        format: Some(RunFormat::Canonical),
        options: RunReadOptions::default(),
        system: SystemSpec {
            name: Some("s2".into()),
            role: SystemRole::Pooled,
            description: String::new(),
            negative_sampling_ratio: None,
        },
        allow_missing_docs: false,
    };
    commands::import::run(
        &app.db,
        &crate::common::operator_lead(&app.db, project).await,
        spec,
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_pool_grown_with_a_system_pooled_since_equals_the_pool_built_at_once() {
    // Grown: depth 100 with s, then s2 imported and the pool grown to depth 150, in chunks.
    let grown = common::TestApp::spawn().await;
    let (project, annotators) = pooled_demo(&grown).await;
    import_second_system(&grown, project).await;
    let before = readers(&grown.db, project, &annotators).await;
    let (options, mut holds) = held(100);
    let build = {
        let db = grown.db.clone();
        tokio::spawn(async move {
            pools::build_with(&db, project, confidence(), 150, None, &options).await
        })
    };
    let mut chunks = 0;
    while let Some(resume) = holds.recv().await {
        chunks += 1;
        assert_eq!(readers(&grown.db, project, &annotators).await, before);
        resume.send(()).unwrap();
    }
    let report = build.await.unwrap().unwrap();
    assert!(chunks > 3, "{chunks} chunks");
    // At once: both systems imported, then one build at depth 150.
    let at_once = common::TestApp::spawn().await;
    let project2 = at_once.demo_project("p", true, &demo_pairs()).await;
    import_second_system(&at_once, project2).await;
    let direct = pools::build(&at_once.db, project2, confidence(), 150, None)
        .await
        .unwrap();
    assert_eq!(report.pool_size, direct.pool_size);
    let listed = pools::list(&grown.db, project).await.unwrap();
    assert_eq!(listed, pools::list(&at_once.db, project2).await.unwrap());
    // Old pairs got s2's ranks, and some a shallower entry depth (s2 ranks them higher).
    assert!(listed.iter().all(|r| r.model_ranks.len() == 2));
    assert!(listed.iter().any(|r| {
        let (s, s2) = (r.model_ranks["s"], r.model_ranks["s2"]);
        s <= 100 && s2 < s && r.entry_depth == s2
    }));
}
