//! Sampled pools (issue 15): `pool build --sample` stores each drawn pair's stratum and
//! inclusion probability as the design says, all or nothing; the report's and
//! `eval --estimate`'s estimates, stopping test and plan equal the domain's `Estimator` on the
//! same data and hand computations written here.
//!
//! The project: the demo sample's first 10 claims × 12 documents, one pooled system ranking
//! pair `i` (claim `i % 10`, document `i / 10`) at rank `i + 1` (confidence pooling), evidence
//! where [`truth`] says.

use crate::common;

use app::domain::judging::{Estimator, RecallTarget, Sample, StratumDesign};
use app::domain::pool::Pair;
use app::domain::report::survey::{Stopping, Survey};
use common::{demo_lines, TestApp};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use store::pool::{self as pools, BuildOptions, Estimated, SampleRequest};
use store::Db;

const CLAIMS: usize = 10;
const DOCS: usize = 12;
const PAIRS: usize = CLAIMS * DOCS;

/// Whether pair `i` is evidence.
fn truth(i: usize) -> bool {
    i % 4 == 1 || i.is_multiple_of(7)
}

fn ids() -> (Vec<String>, Vec<String>) {
    let id = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let claims = demo_lines("claims.jsonl")
        .iter()
        .take(CLAIMS)
        .map(|c| id(&c["id"]))
        .collect();
    let docs = demo_lines("corpus.jsonl")
        .iter()
        .take(DOCS)
        .map(|d| id(&d["doc_id"]))
        .collect();
    (claims, docs)
}

/// (claim id, doc id) of pair `i`.
fn pair_ids(i: usize) -> (String, String) {
    let (claims, docs) = ids();
    (claims[i % CLAIMS].clone(), docs[i / CLAIMS].clone())
}

async fn project(app: &TestApp, name: &str) -> i64 {
    let pairs: Vec<(String, String, f64)> = (0..PAIRS)
        .map(|i| {
            let (c, d) = pair_ids(i);
            (c, d, 1.0 - i as f64 / 1_000.0)
        })
        .collect();
    app.demo_project(name, true, &pairs).await
}

/// Database keys of the project's claims and documents by external id.
async fn keys(db: &Db, project: i64) -> (HashMap<String, i64>, HashMap<String, i64>) {
    let read = |sql: &'static str| async move {
        let rows: Vec<(i64, String)> = sqlx::query_as(sql)
            .bind(project)
            .fetch_all(db)
            .await
            .unwrap();
        rows.into_iter().map(|(k, e)| (e, k)).collect()
    };
    (
        read("SELECT id, claim_id FROM claims WHERE project_id = $1").await,
        read("SELECT id, doc_id FROM documents WHERE project_id = $1").await,
    )
}

/// The pair index of every (claim key, doc key).
async fn index_of(db: &Db, project: i64) -> HashMap<(i64, i64), usize> {
    let (claims, docs) = keys(db, project).await;
    (0..PAIRS)
        .map(|i| {
            let (c, d) = pair_ids(i);
            ((claims[&c], docs[&d]), i)
        })
        .collect()
}

/// Test-only judging: a final label (SUPPORT for evidence, else NEI) for each pair `i` of
/// `pairs`, its judgment taking `seconds(i)`.
async fn judge(db: &Db, project: i64, pairs: &[usize], seconds: impl Fn(usize) -> f64) {
    let (claims, docs) = keys(db, project).await;
    let mut tx = db.begin().await.unwrap();
    for &i in pairs {
        let (c, d) = pair_ids(i);
        let label = if truth(i) { "SUPPORT" } else { "NEI" };
        let id = sqlx::query_scalar::<_, i64>(
            "INSERT INTO judgment_rows (project_id, claim_id, doc_id, stage, label, seconds_spent, provenance, created_at)
             VALUES ($1, $2, $3, 'final', $4, $5, 'pooling', 0) RETURNING id",
        )
        .bind(project)
        .bind(claims[&c])
        .bind(docs[&d])
        .bind(label)
        .bind(seconds(i))
        .fetch_one(&mut *tx)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO final_label_rows (project_id, claim_id, doc_id, judgment_id, label, provenance, decided_at)
             VALUES ($1, $2, $3, $4, $5, 'pooling', 0)",
        )
        .bind(project)
        .bind(claims[&c])
        .bind(docs[&d])
        .bind(id)
        .bind(label)
        .execute(&mut *tx)
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
}

/// The stored sample of the project's latest sampled build: strata (stratum → population,
/// sampled) and pairs (pair index, stratum, draw, inclusion probability).
type Stored = (
    BTreeMap<u32, (usize, usize)>,
    Vec<(usize, Option<u32>, Option<i64>, f64)>,
);

async fn stored(db: &Db, project: i64) -> Stored {
    let index = index_of(db, project).await;
    let build: i64 = sqlx::query_scalar(
        "SELECT build_id FROM pool_samples WHERE project_id = $1 ORDER BY build_id DESC LIMIT 1",
    )
    .bind(project)
    .fetch_one(db)
    .await
    .unwrap();
    let strata: Vec<(i64, i64, i64)> = sqlx::query_as(
        "SELECT stratum, population, sampled FROM pool_sample_strata WHERE build_id = $1",
    )
    .bind(build)
    .fetch_all(db)
    .await
    .unwrap();
    type Row = (i64, i64, Option<i64>, Option<i64>, f64);
    let pairs: Vec<Row> = sqlx::query_as(
        "SELECT claim_id, doc_id, stratum, draw, inclusion_probability FROM pool_sample_pairs
         WHERE build_id = $1 ORDER BY stratum, draw",
    )
    .bind(build)
    .fetch_all(db)
    .await
    .unwrap();
    (
        strata
            .into_iter()
            .map(|(h, n, s)| (h as u32, (n as usize, s as usize)))
            .collect(),
        pairs
            .into_iter()
            .map(|(c, d, h, draw, pi)| (index[&(c, d)], h.map(|h| h as u32), draw, pi))
            .collect(),
    )
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 1e-9, "{what}: {a} != {b}");
}

fn target() -> RecallTarget {
    RecallTarget::new(0.9, 0.05).unwrap()
}

#[tokio::test]
async fn a_sample_stores_the_designs_inclusion_probabilities_and_grows_the_pool_with_it() {
    let app = TestApp::spawn().await;
    let db = &app.db;
    let project = project(&app, "sampled").await;
    pools::build(
        db,
        project,
        app::domain::pool::Strategy::Confidence,
        10,
        None,
    )
    .await
    .unwrap();
    // Pairs 12 and 30 (ranks 13 and 31) judged before the sample: certain, not drawn.
    judge(db, project, &[12, 30], |_| 10.0).await;
    let report = pools::build_sample(
        db,
        project,
        SampleRequest::new(14, 3, 7).unwrap(),
        None,
        &BuildOptions::default(),
    )
    .await
    .unwrap();
    // Bands beyond depth 10 to rank 80: ranks 11-20, 21-40, 41-80, less the judged pairs.
    let populations = [(0, 9), (1, 19), (2, 40)];
    assert_eq!(report.reach, 80);
    assert_eq!(report.judged_beyond, 2);
    let (strata, pairs) = stored(db, project).await;
    for (h, n) in populations {
        assert_eq!(strata[&h].0, n, "stratum {h}");
    }
    // Proportional allocation of 14 over 68: 1.85, 3.91, 8.24 → 2, 4, 8 (largest remainders).
    assert_eq!(
        strata.values().map(|s| s.1).collect::<Vec<_>>(),
        vec![2, 4, 8]
    );
    assert_eq!(report.build.added, 14);
    let mut seen = 0;
    for &(i, h, draw, pi) in &pairs {
        let rank = i as u32 + 1;
        match h {
            None => {
                assert!([12, 30].contains(&i), "certain pair {i}");
                assert_eq!(pi, 1.0);
                assert_eq!(draw, None);
            }
            Some(h) => {
                seen += 1;
                let band = if rank <= 20 {
                    0
                } else if rank <= 40 {
                    1
                } else {
                    2
                };
                assert_eq!(h, band, "pair {i} at rank {rank}");
                assert!(rank > 10 && rank <= 80);
                let (population, sampled) = strata[&h];
                assert_eq!(pi, sampled as f64 / population as f64, "pair {i}");
                let design = StratumDesign {
                    stratum: h,
                    population,
                    sampled,
                };
                assert_eq!(pi, design.inclusion_probability());
            }
        }
    }
    assert_eq!(seen, 14);
    // The drawn pairs are pool entries at their best rank, given to annotators like any other.
    let entries: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT e.entry_depth, (SELECT COUNT(*) FROM assignments a WHERE a.pool_entry_id = e.id)
         FROM pool_entries e WHERE e.project_id = $1 AND e.entry_depth > 10",
    )
    .bind(project)
    .fetch_all(db)
    .await
    .unwrap();
    assert_eq!(entries.len(), 14);
    // (No annotator is a member: nothing to assign; the pool lists them.)
    let listed = pools::list(db, project).await.unwrap();
    assert_eq!(listed.len(), 10 + 14);
    // The pool grows at the same depth and deeper with the sample in it.
    let same = pools::build(
        db,
        project,
        app::domain::pool::Strategy::Confidence,
        10,
        None,
    )
    .await
    .unwrap();
    assert_eq!(same.added, 0);
    let deeper = pools::build(
        db,
        project,
        app::domain::pool::Strategy::Confidence,
        20,
        None,
    )
    .await
    .unwrap();
    let drawn_in_band0 = pairs.iter().filter(|p| p.1 == Some(0)).count();
    assert_eq!(deeper.added, 10 - drawn_in_band0);
    assert_eq!(deeper.pool_size, 20);
}

#[tokio::test]
async fn a_sampled_build_is_hidden_until_done_and_leaves_nothing_when_it_fails() {
    let app = TestApp::spawn().await;
    let db = app.db.clone();
    let project = project(&app, "atomic").await;
    pools::build(
        &db,
        project,
        app::domain::pool::Strategy::Confidence,
        10,
        None,
    )
    .await
    .unwrap();
    let annotator = app
        .add_user("ann", app::domain::account::Role::Annotator)
        .await;
    store::projects::add_member(
        &db,
        project,
        annotator,
        app::domain::account::ProjectRole::Annotator,
        None,
    )
    .await
    .unwrap();
    let counts = |db: Db| async move {
        let mut out = Vec::new();
        for sql in [
            "SELECT COUNT(*) FROM pool_entries",
            "SELECT COUNT(*) FROM pool_entry_rows",
            "SELECT COUNT(*) FROM pool_samples",
            "SELECT COUNT(*) FROM pool_sample_pairs",
            "SELECT COUNT(*) FROM pool_sample_pair_rows",
            "SELECT COUNT(*) FROM pool_sample_stratum_rows",
            "SELECT COUNT(*) FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id",
            "SELECT COUNT(*) FROM pool_builds",
        ] {
            let n: i64 = sqlx::query_scalar(sql).fetch_one(&db).await.unwrap();
            out.push(n);
        }
        out
    };
    let before = counts(db.clone()).await;
    assert_eq!(before[0], 10);
    // Every chunk: readers see the pool as before. The sixth chunk's hook takes the build's
    // lock token away, so the build fails at its last transaction.
    let chunks = Arc::new(AtomicUsize::new(0));
    let hidden = Arc::new(AtomicUsize::new(0));
    let hook_db = db.clone();
    let (c, h) = (chunks.clone(), hidden.clone());
    let visible = before.clone();
    let hook: pools::ChunkHook = Arc::new(move || {
        let (db, c, h, visible) = (hook_db.clone(), c.clone(), h.clone(), visible.clone());
        Box::pin(async move {
            let n = c.fetch_add(1, Ordering::SeqCst) + 1;
            let now = counts(db.clone()).await;
            if [0, 2, 3, 6, 7].iter().all(|&k| now[k] == visible[k]) {
                h.fetch_add(1, Ordering::SeqCst);
            }
            if n == 6 {
                sqlx::query(
                    "UPDATE pool_build_rows SET lock_token = 'stolen' WHERE state = 'writing'",
                )
                .execute(&db)
                .await
                .unwrap();
            }
        })
    });
    let options = BuildOptions {
        chunk_rows: 3,
        after_chunk: Some(hook),
    };
    let failed = pools::build_sample(
        &db,
        project,
        SampleRequest::new(20, 2, 1).unwrap(),
        None,
        &options,
    )
    .await;
    assert!(failed.is_err(), "{failed:?}");
    let n = chunks.load(Ordering::SeqCst);
    assert!(n >= 6, "{n} chunks");
    assert_eq!(hidden.load(Ordering::SeqCst), n, "a chunk was visible");
    assert_eq!(
        counts(db.clone()).await,
        before,
        "a failed sample left rows"
    );
    // The same sample then succeeds, all at once.
    let chunks = Arc::new(AtomicUsize::new(0));
    let c = chunks.clone();
    let hook: pools::ChunkHook = Arc::new(move || {
        c.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {})
    });
    let done = pools::build_sample(
        &db,
        project,
        SampleRequest::new(20, 2, 1).unwrap(),
        None,
        &BuildOptions {
            chunk_rows: 3,
            after_chunk: Some(hook),
        },
    )
    .await
    .unwrap();
    assert!(chunks.load(Ordering::SeqCst) >= 6);
    let after = counts(db.clone()).await;
    assert_eq!(after[0], 10 + 20);
    assert_eq!(after[2], 1);
    assert_eq!(after[3], 20);
    assert_eq!(after[6], before[6] + 20, "each drawn pair is assigned");
    assert_eq!(done.build.to_annotate, 20);
    // A second sample waits until the first is judged.
    let again = pools::build_sample(
        &db,
        project,
        SampleRequest::new(5, 1, 2).unwrap(),
        None,
        &BuildOptions::default(),
    )
    .await;
    assert!(
        matches!(
            &again,
            Err(store::StoreError::Conflict {
                constraint: store::Constraint::SampleUnjudged,
                message,
            }) if message.contains("earlier sample")
        ),
        "{again:?}"
    );
}

/// The certain pairs and the sample, from the stored rows, as the domain reads them.
type Certain = Vec<(Pair<u32, u32>, bool)>;

fn domain_sample(stored: &Stored, depth: usize) -> (Certain, Sample<u32, u32>) {
    let (strata, pairs) = stored;
    let mut certain: Vec<(Pair<u32, u32>, bool)> = (0..depth)
        .map(|i| (Pair::new(i as u32, 0), truth(i)))
        .collect();
    certain.extend(
        pairs
            .iter()
            .filter(|p| p.1.is_none())
            .map(|p| (Pair::new(p.0 as u32, 0), truth(p.0))),
    );
    let design = strata
        .iter()
        .map(|(&stratum, &(population, sampled))| StratumDesign {
            stratum,
            population,
            sampled,
        })
        .collect();
    let drawn = pairs
        .iter()
        .filter_map(|p| p.1.map(|h| (Pair::new(p.0 as u32, 0), h)))
        .collect();
    (certain, Sample::from_parts(design, drawn).unwrap())
}

/// `value` as JSON read back (what a reader of the CLI's JSON gets: the same text, parsed
/// the same way).
fn as_json<T: serde::Serialize>(value: &T) -> serde_json::Value {
    serde_json::from_str(&serde_json::to_string(value).unwrap()).unwrap()
}

fn report_json(app: &TestApp, project: &str) -> serde_json::Value {
    let out = crate::support::cli::command()
        .args([
            "report",
            "--project",
            project,
            "--json",
            "--bootstrap",
            "2",
            "--db",
        ])
        .arg(&app.db_arg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test]
async fn the_reports_and_eval_estimates_equal_the_domain_estimator_and_hand_computations() {
    let app = TestApp::spawn().await;
    let db = &app.db;
    let project = project(&app, "estimated").await;
    pools::build(
        db,
        project,
        app::domain::pool::Strategy::Confidence,
        10,
        None,
    )
    .await
    .unwrap();
    // Before a sample: the planner's next depth only.
    let none = pools::survey(db, project, target(), Estimated::Project)
        .await
        .unwrap();
    assert!(none.estimates.is_none() && none.sample.is_none());
    assert_eq!(none.stopping, Stopping::NoSample);
    assert_eq!(none.plan.next_depth.map(|d| d.pairs_to_judge), Some(20));
    judge(db, project, &[12, 30], |_| 10.0).await;
    pools::build_sample(
        db,
        project,
        SampleRequest::new(14, 3, 7).unwrap(),
        None,
        &BuildOptions::default(),
    )
    .await
    .unwrap();
    let stored_sample = stored(db, project).await;
    // Waiting: the depth pool and the sample lack labels.
    let waiting = pools::survey(db, project, target(), Estimated::Project)
        .await
        .unwrap();
    assert!(waiting.estimates.is_none());
    assert!(waiting
        .waiting
        .as_deref()
        .unwrap_or("")
        .contains("10 of the 12 certain"));
    // Judge the depth pool and the drawn pairs; seconds 1, 2, 3, ... by pair index.
    let drawn: Vec<usize> = stored_sample
        .1
        .iter()
        .filter(|p| p.1.is_some())
        .map(|p| p.0)
        .collect();
    let mut to_judge: Vec<usize> = (0..10).collect();
    to_judge.extend(&drawn);
    judge(db, project, &to_judge, |i| (i + 1) as f64).await;
    let survey: Survey = pools::survey(db, project, target(), Estimated::Project)
        .await
        .unwrap();
    let estimates = survey.estimates.as_ref().expect("estimates");

    // 1. The domain Estimator on the same data.
    let (certain, sample) = domain_sample(&stored_sample, 10);
    let estimator =
        Estimator::new(certain.clone(), &sample, |p| Some(truth(p.claim as usize))).unwrap();
    assert_eq!(estimates.total_evidence, estimator.total_evidence().into());
    assert_eq!(estimates.universe, 80);
    // The system predicts every pair (canonical, p_support > p_contradict: SUPPORT): within
    // the universe, ranks 1-80.
    let retrieved: Vec<Pair<u32, u32>> = (0..80).map(|i| Pair::new(i as u32, 0)).collect();
    let system = estimator.system(retrieved).unwrap();
    assert_eq!(estimates.systems.len(), 1);
    assert_eq!(estimates.systems[0].estimate, system.into());
    assert_eq!(estimates.systems[0].outside, PAIRS - 80);

    // 2. By hand: Ŷ = certain evidence + Σ N_h/n_h · evidence drawn in h; V = Σ N_h² (1 −
    // n_h/N_h) s_h² / n_h.
    let (strata, pairs) = &stored_sample;
    let certain_evidence = certain.iter().filter(|c| c.1).count() as f64;
    let mut total = certain_evidence;
    let mut variance = 0.0;
    let mut found = certain_evidence;
    for (&h, &(big_n, n)) in strata {
        let ys: Vec<f64> = pairs
            .iter()
            .filter(|p| p.1 == Some(h))
            .map(|p| if truth(p.0) { 1.0 } else { 0.0 })
            .collect();
        assert_eq!(ys.len(), n);
        let sum: f64 = ys.iter().sum();
        found += sum;
        total += big_n as f64 / n as f64 * sum;
        let mean = sum / n as f64;
        let s2 = ys.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0);
        variance += (big_n * big_n) as f64 * (1.0 - n as f64 / big_n as f64) * s2 / n as f64;
    }
    close(estimates.total_evidence.value, total, "total evidence");
    close(
        estimates.total_evidence.standard_error,
        variance.sqrt(),
        "standard error",
    );
    assert_eq!(estimates.found as f64, found);
    close(estimates.not_found.value, total - found, "not found");
    // The release's datasheet states the recall these estimates give: found / total, the
    // interval from the total's.
    let lead = crate::common::operator_lead(db, project).await;
    let created = commands::release::CreateRelease {
        partial: true,
        unjudged: false,
        model_qrels: false,
    }
    .run(db, &lead)
    .await
    .unwrap();
    let readme = String::from_utf8(created.files.get("README.md").unwrap().to_vec()).unwrap();
    let t = &estimates.total_evidence;
    let recall_line = format!(
        "{:.1}% (95% interval {:.1}% to {:.1}%). {} evidence pairs were judged there, of an estimated {:.1}",
        100.0 * found / total,
        100.0 * found / t.high,
        (100.0 * found / t.low).min(100.0),
        estimates.found,
        total
    );
    assert!(readme.contains(&recall_line), "{recall_line}\n{readme}");
    // Precision of a system retrieving the whole universe = Ŷ / 80.
    close(
        estimates.systems[0].estimate.precision.unwrap().value,
        total / 80.0,
        "precision",
    );
    close(
        estimates.systems[0].estimate.recall.unwrap().value,
        1.0,
        "recall of the whole universe",
    );

    // 3. The planner by hand: median of the timed judgments; depth 20 pairs without a label.
    let mut seconds: Vec<f64> = vec![10.0, 10.0];
    seconds.extend(to_judge.iter().map(|&i| (i + 1) as f64));
    seconds.sort_by(f64::total_cmp);
    let median = (seconds[seconds.len() / 2 - 1] + seconds[seconds.len() / 2]) / 2.0;
    assert_eq!(seconds.len() % 2, 0);
    assert_eq!(survey.plan.median_seconds, Some(median));
    let next = survey.plan.next_depth.unwrap();
    let unlabelled_to_20 = (0..20)
        .filter(|i| !to_judge.contains(i) && ![12, 30].contains(i))
        .count();
    assert_eq!(next.depth, 20);
    assert_eq!(next.pairs_to_judge, unlabelled_to_20);
    close(
        next.hours.unwrap(),
        unlabelled_to_20 as f64 * median / 3600.0,
        "hours",
    );
    let band0 = strata[&0];
    let band0_evidence = pairs
        .iter()
        .filter(|p| p.1 == Some(0) && truth(p.0))
        .count() as f64;
    let certain_to_20 = certain.iter().filter(|c| c.0.claim < 20 && c.1).count() as f64;
    close(
        next.estimated_evidence.unwrap(),
        certain_to_20 + band0.0 as f64 / band0.1 as f64 * band0_evidence,
        "evidence to depth 20",
    );
    // Recall 90% of Ŷ: judging the undrawn pairs band after band, each at its stratum's rate.
    let recall = survey.plan.recall.unwrap();
    let goal = (0.9 * total - 1e-9).ceil() as usize;
    assert_eq!(recall.target_evidence, goal);
    let mut expected = found;
    let mut judgments = 0;
    let mut reached = (goal as f64 <= found).then_some(0);
    for (&h, &(big_n, n)) in strata {
        let rate = pairs
            .iter()
            .filter(|p| p.1 == Some(h) && truth(p.0))
            .count() as f64
            / n as f64;
        for _ in 0..big_n - n {
            if reached.is_some() {
                break;
            }
            judgments += 1;
            expected += rate;
            if (expected + 1e-9).floor() >= goal as f64 {
                reached = Some(judgments);
            }
        }
    }
    assert_eq!(recall.budget.map(|b| b.judgments), reached);
    if let Some(b) = recall.budget {
        close(
            b.hours,
            b.judgments as f64 * median / 3600.0,
            "recall hours",
        );
    }
    // Three strata: no stopping test.
    assert_eq!(survey.stopping, Stopping::Stratified { strata: 3 });

    // 4. The report's JSON carries the same survey.
    let json = report_json(&app, "estimated");
    assert_eq!(json["survey"], as_json(&survey));
    assert!(json["survey_note"].is_null());

    // 5. eval --estimate on a run file predicting pairs 0-59 as evidence (and 60-79 NEI):
    // the Estimator's system over those pairs.
    let run: String = (0..PAIRS)
        .map(|i| {
            let (c, d) = pair_ids(i);
            let label = if i < 60 { "SUPPORT" } else { "NEI" };
            format!(
                "{{\"claim_id\": {c}, \"doc_id\": {d}, \"predicted_label\": \"{label}\", \"p_support\": 0.5, \"p_contradict\": 0.1}}\n"
            )
        })
        .collect();
    let path = app.dir.path().join("eval-run.jsonl");
    std::fs::write(&path, run).unwrap();
    let out = crate::support::cli::command()
        .args([
            "eval",
            "--estimate",
            "--project",
            "estimated",
            "--json",
            "--run",
        ])
        .arg(&path)
        .arg("--db")
        .arg(&app.db_arg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let evaluated: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run_system = estimator
        .system((0..60).map(|i| Pair::new(i as u32, 0)))
        .unwrap();
    let mut want = as_json(&run_system);
    if let Some(o) = want.as_object_mut() {
        o.insert("system".into(), "eval-run.jsonl".into());
        o.insert("outside".into(), 0.into());
    }
    assert_eq!(evaluated["estimates"]["systems"][0], want);
    let e = serde_json::from_value::<Survey>(evaluated)
        .unwrap()
        .estimates
        .unwrap();
    assert_eq!(e.systems[0].system, "eval-run.jsonl");
    close(
        e.total_evidence.value,
        estimator.total_evidence().value,
        "total",
    );
    // Its precision by hand: evidence among pairs 0-59, certain ones counted, drawn ones
    // weighted by 1/π, over 60.
    let mut hits = 0.0;
    for i in 0..60 {
        if !truth(i) {
            continue;
        }
        if i < 10 || [12, 30].contains(&i) {
            hits += 1.0;
        } else if let Some(p) = pairs.iter().find(|p| p.0 == i && p.1.is_some()) {
            hits += 1.0 / p.3;
        }
    }
    close(
        e.systems[0].estimate.precision.unwrap().value,
        hits / 60.0,
        "run precision",
    );
}

/// `P(X ≤ k)`, X hypergeometric (N, K successes, n draws), by exact binomial coefficients.
fn hypergeometric(k: u64, big_n: u64, big_k: u64, n: u64) -> f64 {
    fn choose(n: u64, k: u64) -> f64 {
        if k > n {
            return 0.0;
        }
        (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
    }
    (0..=k)
        .map(|x| choose(big_k, x) * choose(big_n - big_k, n - x) / choose(big_n, n))
        .sum()
}

#[tokio::test]
async fn a_simple_random_sample_gives_the_stopping_test_and_a_census_gives_exact_estimates() {
    let app = TestApp::spawn().await;
    let db = &app.db;
    let project = project(&app, "stopping").await;
    pools::build(
        db,
        project,
        app::domain::pool::Strategy::Confidence,
        40,
        None,
    )
    .await
    .unwrap();
    // One band: ranks 41-80, 40 pairs, 25 drawn.
    pools::build_sample(
        db,
        project,
        SampleRequest::new(25, 1, 3).unwrap(),
        None,
        &BuildOptions::default(),
    )
    .await
    .unwrap();
    let stored_sample = stored(db, project).await;
    let drawn: Vec<usize> = stored_sample.1.iter().map(|p| p.0).collect();
    assert_eq!(drawn.len(), 25);
    let mut to_judge: Vec<usize> = (0..40).collect();
    to_judge.extend(&drawn);
    judge(db, project, &to_judge, |_| 30.0).await;
    let survey = pools::survey(db, project, target(), Estimated::Project)
        .await
        .unwrap();
    // By hand: K = evidence in ranks 1-40, k = evidence drawn, N = 40, n = 25;
    // R_tar = ⌊(K + k)/0.9⌋ + 1, K_tar = R_tar − K, p = P(X ≤ k) for X ~ H(40, K_tar, 25).
    let big_k = (0..40).filter(|&i| truth(i)).count() as u64;
    let k = drawn.iter().filter(|&&i| truth(i)).count() as u64;
    let r_tar = ((big_k + k) as f64 / 0.9).floor() as u64 + 1;
    let k_tar = r_tar - big_k;
    let p = if k_tar > 40 {
        0.0
    } else {
        hypergeometric(k, 40, k_tar, 25)
    };
    match &survey.stopping {
        Stopping::Tested {
            sample, decision, ..
        } => {
            assert_eq!(
                (
                    sample.found,
                    sample.unjudged,
                    sample.drawn,
                    sample.drawn_evidence
                ),
                (big_k, 40, 25, k)
            );
            assert_eq!(decision.null_remaining, k_tar);
            assert!(
                (decision.p_value - p).abs() < 1e-9,
                "{} != {p}",
                decision.p_value
            );
            assert_eq!(decision.stop, p < 0.05);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(survey.plan.median_seconds, Some(30.0));

    // A census of the band (every candidate drawn): the estimates are the truth, exactly.
    let census = project_census(&app).await;
    let truth_total = (0..80).filter(|&i| truth(i)).count() as f64;
    let e = census.estimates.unwrap();
    assert_eq!(e.total_evidence.value, truth_total);
    assert_eq!(e.total_evidence.standard_error, 0.0);
    assert_eq!(
        (e.total_evidence.low, e.total_evidence.high),
        (truth_total, truth_total)
    );
    assert_eq!(e.not_found.value, 0.0);
    let s = &e.systems[0].estimate;
    assert_eq!(s.precision.unwrap().value, truth_total / 80.0);
    assert_eq!(s.recall.unwrap().value, 1.0);
    // Every remaining pair drawn and none left: the test stops at any target.
    assert!(matches!(census.stopping, Stopping::Tested { decision, .. } if decision.stop));
}

async fn project_census(app: &TestApp) -> Survey {
    let db = &app.db;
    let project = project(app, "census").await;
    pools::build(
        db,
        project,
        app::domain::pool::Strategy::Confidence,
        40,
        None,
    )
    .await
    .unwrap();
    pools::build_sample(
        db,
        project,
        SampleRequest::new(40, 1, 0).unwrap(),
        None,
        &BuildOptions::default(),
    )
    .await
    .unwrap();
    judge(db, project, &(0..80).collect::<Vec<_>>(), |_| 5.0).await;
    pools::survey(db, project, target(), Estimated::Project)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_pool_page_adds_a_sample_and_the_report_page_shows_the_same_survey() {
    let app = TestApp::spawn().await;
    let db = &app.db;
    let project = project(&app, "web").await;
    pools::build(
        db,
        project,
        app::domain::pool::Strategy::Confidence,
        10,
        None,
    )
    .await
    .unwrap();
    app.add_lead("lead", "web").await;
    let client = app.logged_in("lead").await;
    let res = app
        .post_form(
            &client,
            "/api/lead/pool/sample",
            &[
                ("project", "web"),
                ("size", "6"),
                ("strata", "2"),
                ("seed", "5"),
            ],
        )
        .await;
    assert!(res.status().is_success(), "{}", res.text().await.unwrap());
    let built: serde_json::Value = res.json().await.unwrap();
    assert_eq!(built["added"], 6);
    let (strata, pairs) = stored(db, project).await;
    assert_eq!(strata.values().map(|s| s.0).sum::<usize>(), 30);
    let drawn: Vec<usize> = pairs
        .iter()
        .filter(|p| p.1.is_some())
        .map(|p| p.0)
        .collect();
    let mut to_judge: Vec<usize> = (0..10).collect();
    to_judge.extend(&drawn);
    judge(db, project, &to_judge, |i| i as f64).await;
    let res = app
        .post_form(&client, "/api/report/survey", &[("project", "web")])
        .await;
    assert!(res.status().is_success());
    let page: serde_json::Value = res.json().await.unwrap();
    let survey = pools::survey(db, project, target(), Estimated::Project)
        .await
        .unwrap();
    assert!(survey.estimates.is_some());
    assert_eq!(page["survey"], as_json(&survey));
    assert!(page["note"].is_null());
    // The report page renders the section.
    let html = client
        .get(app.url("/lead/projects/web/report"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains("data-testid=\"survey\""), "no survey section");
    // A refused sample says why: too few candidates for the draws asked.
    let res = app
        .post_form(
            &client,
            "/api/lead/pool/sample",
            &[
                ("project", "web"),
                ("size", "500"),
                ("strata", "1"),
                ("seed", "0"),
            ],
        )
        .await;
    assert_eq!(res.status(), 400);
    let message = common::error_message(res).await;
    assert!(
        message.contains("--sample") || message.contains("candidate"),
        "{message}"
    );
}
