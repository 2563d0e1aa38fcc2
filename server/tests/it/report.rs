//! The lead report from the database, on the real SciFact dev claims and staged runs (skipped
//! when ../shared is absent): pooled, judged in bulk by a deterministic rule with two test
//! annotators, and checked against an independent computation written here; the CLI's JSON,
//! the dashboard's server function and the CSV downloads agree with the store-level report;
//! annotators are refused. A generated project written to the database reads back as the same
//! report.

mod agreement;
use crate::common;
use crate::support::snapshot_db;

use app::domain::formats::{LabelOrder, RunFormat, RunReadOptions};
use app::domain::pool::Role as SystemRole;
use app::domain::report::{Report, ReportOptions};
use commands::import::{RunImport, SystemSpec};
use reqwest::StatusCode;
use std::collections::{BTreeMap, BTreeSet, HashMap};
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

/// (system, file under scifact-runs, format, label order, role)
const RUNS: [(&str, &str, RunFormat, &str, SystemRole); 5] = [
    (
        "arsjoint-0327",
        "arsjoint/2021-03-27_21c6c29/label_predictions.jsonl",
        RunFormat::VeriSci,
        "CONTRADICT,NEI,SUPPORT",
        SystemRole::Pooled,
    ),
    (
        "rationale-k30",
        "rationale_scores_neverneverendup/k30_scores_baseline_predicted_rationale_selection.jsonl",
        RunFormat::SentenceScores,
        "CONTRADICT,NEI,SUPPORT",
        SystemRole::Pooled,
    ),
    (
        "hybrid-6d32",
        "hybrid_rag_kaikoepchen/predictions_dev_6d32d0d.jsonl",
        RunFormat::Leaderboard,
        "CONTRADICT,NEI,SUPPORT",
        SystemRole::Pooled,
    ),
    (
        "mv-citint",
        "multivers_jedick/dev/citint_scifact_dev.jsonl",
        RunFormat::Leaderboard,
        "REFUTE,NEI,SUPPORT",
        SystemRole::Pooled,
    ),
    (
        "mv-fever-sci",
        "multivers_jedick/dev/fever_sci_scifact_dev.jsonl",
        RunFormat::Leaderboard,
        "REFUTE,NEI,SUPPORT",
        SystemRole::EvaluationOnly,
    ),
];

const DEPTH: u32 = 60;
const STEP: u32 = 20;

type Pair = (String, String);

/// SciFact dev evidence: (claim, doc) → SUPPORT/CONTRADICT, and which claims keep it as
/// citation evidence (even ids); odd claims' evidence is hidden, for the pool to discover.
struct Gold {
    evidence: BTreeMap<Pair, &'static str>,
    citation: BTreeMap<Pair, &'static str>,
}

fn label_of(text: &str) -> &'static str {
    match text {
        "SUPPORT" => "SUPPORT",
        "CONTRADICT" => "CONTRADICT",
        other => panic!("unexpected evidence label {other}"),
    }
}

/// Reads dev claims; writes a copy whose odd claims have no evidence and no cited documents.
fn split_claims(data: &Path, out: &Path) -> Gold {
    let text = std::fs::read_to_string(data.join("scifact/claims_dev.jsonl")).unwrap();
    let mut evidence = BTreeMap::new();
    let mut citation = BTreeMap::new();
    let mut lines = Vec::new();
    for line in text.lines() {
        let mut claim: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = claim["id"].as_u64().unwrap();
        for (doc, sets) in claim["evidence"].as_object().unwrap() {
            let label = label_of(sets[0]["label"].as_str().unwrap());
            evidence.insert((id.to_string(), doc.clone()), label);
            if id.is_multiple_of(2) {
                citation.insert((id.to_string(), doc.clone()), label);
            }
        }
        if !id.is_multiple_of(2) {
            claim["evidence"] = serde_json::json!({});
            claim["cited_doc_ids"] = serde_json::json!([]);
        }
        lines.push(claim.to_string());
    }
    std::fs::write(out, lines.join("\n") + "\n").unwrap();
    Gold { evidence, citation }
}

async fn import_project(db: &Db, data: &Path, claims: &Path) -> i64 {
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
    commands::import::claims(db, &crate::common::operator_lead(db, project).await, claims)
        .await
        .unwrap();
    for (name, file, format, order, role) in RUNS {
        import_run(
            db,
            project,
            &data.join("scifact-runs").join(file),
            name,
            format,
            order,
            role,
        )
        .await;
    }
    project
}

async fn import_run(
    db: &Db,
    project: i64,
    path: &Path,
    name: &str,
    format: RunFormat,
    order: &str,
    role: SystemRole,
) {
    let run = RunImport {
        path: path.to_owned(),
        format: Some(format),
        options: RunReadOptions {
            label_order: order.parse::<LabelOrder>().unwrap(),
            ..RunReadOptions::default()
        },
        system: SystemSpec {
            name: Some(name.into()),
            role,
            description: String::new(),
            negative_sampling_ratio: None,
        },
        allow_missing_docs: false,
    };
    commands::import::run(db, &crate::common::operator_lead(db, project).await, run)
        .await
        .unwrap();
}

/// One judgment the test writes: (pair, stage, annotator, label, seconds, retracted).
#[derive(Clone)]
struct Written {
    pair: Pair,
    stage: &'static str,
    annotator: &'static str,
    label: &'static str,
    seconds: f64,
    retracted: bool,
    /// The final label rests on this judgment.
    deciding: bool,
    specificity: Option<&'static str>,
}

/// What the bulk judging decided, for the independent computation.
struct Judged {
    finals: BTreeMap<Pair, &'static str>,
    written: Vec<Written>,
}

fn other(label: &'static str) -> &'static str {
    match label {
        "SUPPORT" => "CONTRADICT",
        "CONTRADICT" => "NEI",
        _ => "SUPPORT",
    }
}

const RELATIONS: [&str; 4] = [
    "matches",
    "evidence_more_specific",
    "evidence_more_general",
    "closely_related",
];

/// The deterministic annotation of the pool pairs that need it (sorted by claim, then doc;
/// `i` is the position): the true label is the hidden dev evidence, else NEI. ann1 and ann2
/// alternate as first annotator; every 13th pair (from 5) waits for its second pass; every
/// 7th (from 3) is a disagreement, adjudicated by the lead when `i` is even, else left
/// waiting; every 17th first pass is edited (a wrong label, then the right one); every 19th
/// pair gets a wrong second-pass label that is retracted before the right one.
fn plan(to_annotate: &[Pair], gold: &Gold) -> Judged {
    let mut written = Vec::new();
    let mut finals = BTreeMap::new();
    for (i, pair) in to_annotate.iter().enumerate() {
        let truth = gold.evidence.get(pair).copied().unwrap_or("NEI");
        let (a, b) = if i.is_multiple_of(2) {
            ("ann1", "ann2")
        } else {
            ("ann2", "ann1")
        };
        let seconds = 10.0 + ((i * 7) % 90) as f64;
        let w = |stage, annotator, label, seconds| Written {
            pair: pair.clone(),
            stage,
            annotator,
            label,
            seconds,
            retracted: false,
            deciding: false,
            specificity: None,
        };
        if i % 17 == 0 {
            written.push(w("first", a, other(truth), seconds / 2.0));
        }
        written.push(w("first", a, truth, seconds));
        if i % 13 == 5 {
            continue;
        }
        if i % 19 == 0 {
            let mut wrong = w("second", b, other(truth), seconds);
            wrong.retracted = true;
            written.push(wrong);
        }
        let specificity = (truth != "NEI").then_some(RELATIONS[i % 4]);
        if i % 7 == 3 {
            written.push(w("second", b, other(truth), seconds + 1.0));
            if i.is_multiple_of(2) {
                let mut adjudication = w("adjudication", "lead", truth, seconds * 2.0);
                adjudication.deciding = true;
                adjudication.specificity = specificity;
                written.push(adjudication);
                finals.insert(pair.clone(), truth);
            }
        } else {
            let mut second = w("second", b, truth, seconds + 1.0);
            second.deciding = true;
            second.specificity = specificity;
            written.push(second);
            finals.insert(pair.clone(), truth);
        }
    }
    Judged { finals, written }
}

/// Test-only bulk judging: judgments, retractions and final labels inserted with SQL.
async fn judge(db: &Db, project: i64, judged: &Judged) {
    let mut users = HashMap::new();
    for (name, role) in [
        ("ann1", "annotator"),
        ("ann2", "annotator"),
        ("lead", "lead"),
    ] {
        users.insert(name, snapshot_db::user(db, name, role).await);
    }
    let ids = |sql: &'static str| async move {
        let rows: Vec<(i64, String)> = sqlx::query_as(sql)
            .bind(project)
            .fetch_all(db)
            .await
            .unwrap();
        rows.into_iter()
            .map(|(id, ext)| (ext, id))
            .collect::<HashMap<String, i64>>()
    };
    let claims = ids("SELECT id, claim_id FROM claims WHERE project_id = $1").await;
    let docs = ids("SELECT id, doc_id FROM documents WHERE project_id = $1").await;
    let mut tx = db.begin().await.unwrap();
    for (n, j) in judged.written.iter().enumerate() {
        let (claim, doc) = (claims[&j.pair.0], docs[&j.pair.1]);
        let id = sqlx::query_scalar::<_, i64>(
            "INSERT INTO judgment_rows (project_id, claim_id, doc_id, annotator_id, stage, label, specificity, seconds_spent, provenance, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pooling', $9) RETURNING id",
        )
        .bind(project)
        .bind(claim)
        .bind(doc)
        .bind(users[j.annotator])
        .bind(j.stage)
        .bind(j.label)
        .bind(j.specificity)
        .bind(j.seconds)
        .bind(1_700_000_000_000_i64 + 1_000 * n as i64)
        .fetch_one(&mut *tx)
        .await
        .unwrap();
        if j.retracted {
            sqlx::query("INSERT INTO judgment_retractions (judgment_id, retracted_by, retracted_at) VALUES ($1, $2, 0)")
                .bind(id)
                .bind(users[j.annotator])
                .execute(&mut *tx)
                .await
                .unwrap();
        }
        if j.deciding {
            sqlx::query(
                "INSERT INTO final_label_rows (project_id, claim_id, doc_id, judgment_id, label, provenance, decided_at)
                 VALUES ($1, $2, $3, $4, $5, 'pooling', 0)",
            )
            .bind(project)
            .bind(claim)
            .bind(doc)
            .bind(id)
            .bind(j.label)
            .execute(&mut *tx)
            .await
            .unwrap();
        }
    }
    tx.commit().await.unwrap();
}

/// Precision, recall and F1 of every system against `gold`, from the stored predictions read
/// with plain SQL: a pair is predicted evidence when its label is SUPPORT, CONTRADICT or
/// missing (a label-less run), and correct when it is gold evidence with the same label (any
/// evidence label for a label-less run).
async fn expected_scores(
    db: &Db,
    project: i64,
    gold: &BTreeMap<Pair, &'static str>,
) -> BTreeMap<String, (f64, f64, f64)> {
    let rows: Vec<(String, String, String, Option<String>)> = sqlx::query_as(
        "SELECT s.name, c.claim_id, d.doc_id, p.label FROM predictions p
         JOIN systems s ON s.id = p.system_id JOIN claims c ON c.id = p.claim_id
         JOIN documents d ON d.id = p.doc_id WHERE s.project_id = $1",
    )
    .bind(project)
    .fetch_all(db)
    .await
    .unwrap();
    let mut counts: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for (system, claim, doc, label) in rows {
        let entry = counts.entry(system).or_default();
        if label.as_deref() == Some("NEI") {
            continue;
        }
        entry.0 += 1;
        if let Some(&g) = gold.get(&(claim, doc)) {
            if label.as_deref().is_none_or(|l| l == g) {
                entry.1 += 1;
            }
        }
    }
    counts
        .into_iter()
        .map(|(system, (predicted, correct))| {
            let p = if predicted == 0 {
                0.0
            } else {
                correct as f64 / predicted as f64
            };
            let r = correct as f64 / gold.len() as f64;
            let f1 = if p + r == 0.0 {
                0.0
            } else {
                2.0 * p * r / (p + r)
            };
            (system, (p, r, f1))
        })
        .collect()
}

/// Cohen's kappa over the three labels, from (first, second) label pairs.
fn kappa(pairs: &[(&str, &str)]) -> (f64, f64) {
    let n = pairs.len() as f64;
    let labels = ["SUPPORT", "CONTRADICT", "NEI"];
    let observed = pairs.iter().filter(|(a, b)| a == b).count() as f64 / n;
    let expected: f64 = labels
        .iter()
        .map(|l| {
            let a = pairs.iter().filter(|(x, _)| x == l).count() as f64 / n;
            let b = pairs.iter().filter(|(_, y)| y == l).count() as f64 / n;
            a * b
        })
        .sum();
    ((observed - expected) / (1.0 - expected), observed)
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 1e-12, "{what}: report {a} vs expected {b}");
}

fn options(bootstrap: u32, seed: u64) -> ReportOptions {
    ReportOptions::parse(STEP, bootstrap, seed, u32::MAX).unwrap()
}

#[tokio::test]
async fn the_report_of_a_judged_scifact_pool_equals_an_independent_computation() {
    let Some(data) = data() else { return };
    let app = common::TestApp::spawn().await;
    let db = &app.db;
    let claims_file = app.dir.path().join("claims_split.jsonl");
    let gold = split_claims(&data, &claims_file);
    let project = import_project(db, &data, &claims_file).await;
    // Before the first build: no curve, the pooled systems still pooled, citation evidence.
    let before = commands::report::project_report(
        db,
        &common::operator_lead(db, project).await,
        options(20, 1),
    )
    .await
    .unwrap();
    assert!(before.pool.is_none() && before.not_yet_pooled.is_empty());
    assert!(before.report.depth_curve.0.is_empty());
    assert_eq!(before.report.evidence.citation, gold.citation.len() as u64);
    let role = before
        .report
        .systems
        .by_system
        .get("mv-citint")
        .unwrap()
        .role;
    assert_eq!(role, app::domain::pool::Role::Pooled);
    pools::build(
        db,
        project,
        pools::parse_strategy("confidence").unwrap(),
        DEPTH,
        None,
    )
    .await
    .unwrap();
    let rows = pools::list(db, project).await.unwrap();
    // Pairs judged at import: citation evidence and the even claims' other cited documents.
    let prior: BTreeSet<Pair> = rows
        .iter()
        .filter(|r| r.final_label.is_some())
        .map(|r| (r.claim_id.clone(), r.doc_id.clone()))
        .collect();
    let to_annotate: Vec<Pair> = {
        let mut pairs: Vec<(u64, u64)> = rows
            .iter()
            .filter(|r| r.final_label.is_none())
            .map(|r| (r.claim_id.parse().unwrap(), r.doc_id.parse().unwrap()))
            .collect();
        pairs.sort_unstable();
        pairs
            .into_iter()
            .map(|(c, d)| (c.to_string(), d.to_string()))
            .collect()
    };
    let judged = plan(&to_annotate, &gold);
    judge(db, project, &judged).await;

    let options = options(200, 7);
    let computed =
        commands::report::project_report(db, &common::operator_lead(db, project).await, options)
            .await
            .unwrap();
    let report = &computed.report;
    assert!(computed.not_yet_pooled.is_empty());

    // `claimpool simulate --order depth`: judging in depth order finds, after as many
    // judgments as the pool at depth d holds, the report's evidence at d plus the citation
    // evidence in that pool (the simulator's truth counts citation evidence, the curve not).
    let out = crate::support::cli::command()
        .args(["--db", app.db_arg.as_str(), "simulate"])
        .args(["--project", "scifact", "--order", "depth", "--json"])
        .args(["--budget", &rows.len().to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let simulated: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(simulated["order"], "depth");
    assert_eq!(simulated["budget"], rows.len());
    let curve = simulated["curve"].as_array().unwrap();
    assert_eq!(curve.len(), rows.len(), "one point per judgment");
    for (i, point) in curve.iter().enumerate() {
        assert_eq!(point["judgments"], i + 1);
    }
    for point in &report.depth_curve.0 {
        let citation_here = rows
            .iter()
            .filter(|r| r.entry_depth <= point.depth)
            .filter(|r| {
                gold.citation
                    .contains_key(&(r.claim_id.clone(), r.doc_id.clone()))
            })
            .count() as u64;
        assert_eq!(
            curve[point.pool_size - 1]["evidence"].as_u64().unwrap(),
            point.evidence + citation_here,
            "simulated depth order at depth {}",
            point.depth
        );
    }

    // Depth curve: evidence discovered at each depth, and every system's scores there.
    let depths: Vec<u32> = report.depth_curve.0.iter().map(|p| p.depth).collect();
    assert_eq!(depths, [20, 40, 60]);
    let mut discovered_at_full = 0;
    for point in &report.depth_curve.0 {
        let discovered: BTreeMap<Pair, &str> = rows
            .iter()
            .filter(|r| r.entry_depth <= point.depth)
            .filter_map(|r| {
                let pair = (r.claim_id.clone(), r.doc_id.clone());
                let label = *judged.finals.get(&pair)?;
                (label != "NEI" && !gold.citation.contains_key(&pair)).then_some((pair, label))
            })
            .collect();
        assert_eq!(
            point.evidence,
            discovered.len() as u64,
            "depth {}",
            point.depth
        );
        assert_eq!(
            point.pool_size,
            rows.iter().filter(|r| r.entry_depth <= point.depth).count()
        );
        let mut gold_here = gold.citation.clone();
        gold_here.extend(discovered.clone());
        let expected = expected_scores(db, project, &gold_here).await;
        assert_eq!(expected.len(), RUNS.len());
        for (system, (p, r, f1)) in &expected {
            let got = point.systems.get(system).unwrap();
            close(
                got.precision,
                *p,
                &format!("precision of {system} at {}", point.depth),
            );
            close(
                got.recall,
                *r,
                &format!("recall of {system} at {}", point.depth),
            );
            close(got.f1, *f1, &format!("F1 of {system} at {}", point.depth));
        }
        if point.depth == DEPTH {
            discovered_at_full = discovered.len() as u64;
            for (system, (_, _, f1)) in &expected {
                let summary = report.systems.by_system.get(system).unwrap();
                close(
                    summary.scores.f1,
                    *f1,
                    &format!("F1 of {system} in systems"),
                );
            }
            // Unique evidence: discovered pairs that only one pooled system ranks within the depth.
            for row in &report.inclusion.0 {
                let unique = rows
                    .iter()
                    .filter(|r| discovered.contains_key(&(r.claim_id.clone(), r.doc_id.clone())))
                    .filter(|r| {
                        let within: Vec<&String> = r
                            .model_ranks
                            .iter()
                            .filter(|(_, &rank)| rank <= DEPTH)
                            .map(|(s, _)| s)
                            .collect();
                        within == [&row.system]
                    })
                    .count();
                assert_eq!(row.unique_evidence, unique as u64, "{}", row.system);
            }
        }
    }
    assert!(
        discovered_at_full > 10,
        "the test pool discovers evidence: {discovered_at_full}"
    );
    assert_eq!(report.evidence.discovered, discovered_at_full);
    assert_eq!(report.evidence.citation, gold.citation.len() as u64);
    let inclusion: Vec<&str> = report
        .inclusion
        .0
        .iter()
        .map(|r| r.system.as_str())
        .collect();
    assert_eq!(
        inclusion,
        ["arsjoint-0327", "hybrid-6d32", "mv-citint", "rationale-k30"]
    );
    assert_eq!(report.system_count_curve.0.len(), 4);
    assert_eq!(report.system_count_curve.0[0].orderings, 24);

    // Agreement: the latest standing first and second label of each pair.
    let mut latest: BTreeMap<(Pair, &str), &str> = BTreeMap::new();
    for w in judged.written.iter().filter(|w| !w.retracted) {
        latest.insert((w.pair.clone(), w.stage), w.label);
    }
    let both: Vec<(&str, &str)> = latest
        .iter()
        .filter(|((_, stage), _)| *stage == "first")
        .filter_map(|((pair, _), &first)| Some((first, *latest.get(&(pair.clone(), "second"))?)))
        .collect();
    let (expected_kappa, observed) = kappa(&both);
    let pass = report.agreement.first_vs_second.as_ref().unwrap();
    assert_eq!(pass.agreement.pairs, both.len() as u64);
    close(pass.agreement.kappa.unwrap(), expected_kappa, "kappa");
    close(pass.percent_agreement, 100.0 * observed, "% agreement");
    assert!(report.agreement.confirm_mode);
    let awaiting = to_annotate
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 13 != 5 && i % 7 == 3 && i % 2 == 1)
        .count();
    assert_eq!(report.agreement.awaiting_adjudication.count, awaiting);
    assert!(awaiting > 0);

    // Progress and annotators.
    let progress = &report.annotation.progress;
    assert_eq!(progress.pool_pairs, rows.len());
    assert_eq!(progress.prior_judged, prior.len());
    assert_eq!(progress.to_annotate, to_annotate.len());
    assert_eq!(progress.finalized, judged.finals.len());
    for annotator in ["ann1", "ann2", "lead"] {
        let items: BTreeSet<(&Pair, &str)> = judged
            .written
            .iter()
            .filter(|w| w.annotator == annotator && !w.retracted)
            .map(|w| (&w.pair, w.stage))
            .collect();
        let row = report
            .annotation
            .annotators
            .iter()
            .find(|r| r.annotator == annotator)
            .unwrap();
        assert_eq!(row.items, items.len(), "{annotator}");
    }
    let relations = judged
        .written
        .iter()
        .filter(|w| w.specificity == Some("matches"))
        .count();
    assert_eq!(report.evidence.specificity.matches, relations as u64);

    // The CLI's JSON is the store-level report.
    let out = crate::support::cli::command()
        .args([
            "--db",
            app.db_arg.as_str(),
            "report",
            "--project",
            "scifact",
        ])
        .args([
            "--step",
            "20",
            "--bootstrap",
            "200",
            "--seed",
            "7",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "depth_curve",
        "system_count_curve",
        "inclusion",
        "systems",
        "agreement",
        "evidence",
    ] {
        assert!(cli.get(key).is_some(), "key {key}");
    }
    assert_eq!(cli["depth_curve"][2]["depth"], 60);
    assert!(cli["depth_curve"][0]["systems"]["mv-citint"]["f1"].is_f64());
    assert!(cli["system_count_curve"][0]["f1"]["mv-citint"]["sd"].is_f64());
    assert!(
        cli["inclusion"][0]["change_pct"].is_f64() || cli["inclusion"][0]["change_pct"].is_null()
    );
    // Text equality: parsing floats back is not always exact without serde_json's
    // float_roundtrip, but the printed shortest representations are. After the report's keys
    // come the store's survey beyond the depth (no sample here: the planner only) and its note.
    let survey = store::pool::survey(
        db,
        project,
        app::domain::judging::RecallTarget::new(0.9, 0.05).unwrap(),
        store::pool::Estimated::Project,
    )
    .await
    .unwrap();
    assert!(survey.sample.is_none() && survey.plan.next_depth.is_some());
    let report_text = serde_json::to_string(report).unwrap();
    let expected = format!(
        "{},\"survey\":{},\"survey_note\":null,\"model_assessors\":[]}}\n",
        report_text.strip_suffix('}').unwrap(),
        serde_json::to_string(&survey).unwrap()
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);
    let out = crate::support::cli::command()
        .args([
            "--db",
            app.db_arg.as_str(),
            "report",
            "--project",
            "scifact",
            "--bootstrap",
            "20",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Pool depth: evidence discovered"), "{text}");
    assert!(
        text.contains("Differences between systems (Holm-adjusted p-values)"),
        "{text}"
    );
    assert!(text.contains("after Holm's correction"), "{text}");
    assert!(
        text.contains(&format!(
            "evidence {} (citation {}, discovered {})",
            report.evidence.total, report.evidence.citation, report.evidence.discovered
        )),
        "{text}"
    );
    let out = crate::support::cli::command()
        .args([
            "--db",
            app.db_arg.as_str(),
            "report",
            "--project",
            "scifact",
            "--step",
            "0",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--step"));

    // The dashboard's server function and the CSV downloads, for a lead; refused to annotators.
    app.add_lead("boss", "scifact").await;
    app.add_user("ann9", app::domain::account::Role::Annotator)
        .await;
    let lead = app.logged_in("boss").await;
    let form = [
        ("project", "scifact"),
        ("step", "20"),
        ("bootstrap", "200"),
        ("seed", "7"),
    ];
    let res = lead
        .post(app.url("/api/report/view"))
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let view: app::api::report::ReportView = res.json().await.unwrap();
    let evidence: Vec<u64> = view.depth_curve.iter().map(|p| p.evidence).collect();
    let expected: Vec<u64> = report.depth_curve.0.iter().map(|p| p.evidence).collect();
    assert_eq!(evidence, expected);
    let f1 = |name: &str| view.scores.iter().find(|s| s.system == name).unwrap().f1;
    close(
        f1("mv-citint"),
        report.systems.by_system.get("mv-citint").unwrap().scores.f1,
        "view F1",
    );
    assert_eq!(view.strategy.as_deref(), Some("confidence"));
    // The significance marks: the report's (checked against the metrics' significance module
    // in the domain's tests), on the dashboard as on the command line.
    let marks = &report.systems.significance;
    let shown = &view.significance;
    assert_eq!(
        (
            shown.permutations,
            shown.seed,
            shown.alpha,
            shown.pairs.len()
        ),
        (
            marks.permutations,
            marks.seed,
            marks.alpha,
            marks.pairs.len()
        )
    );
    for (got, want) in shown.pairs.iter().zip(&marks.pairs) {
        assert_eq!(
            (
                &got.a,
                &got.b,
                got.f1_significant,
                got.average_precision_significant
            ),
            (
                &want.a,
                &want.b,
                want.f1_significant,
                want.average_precision_significant
            )
        );
        // Through JSON, floats may move in their last digit.
        for (x, y) in [
            (got.f1_difference, want.f1_difference),
            (
                got.average_precision_difference,
                want.average_precision_difference,
            ),
            (got.f1_p_holm, want.f1_p_holm),
            (got.average_precision_p_holm, want.average_precision_p_holm),
        ] {
            close(x, y, &format!("{} - {}", want.a, want.b));
        }
    }
    assert!(!marks.pairs.is_empty());
    let html = lead
        .get(app.url("/lead/projects/scifact/report?step=20&bootstrap=200&seed=7"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
        // Erased components (`--cfg erase_components`) end a text node with Leptos's `<!>`
        // hydration marker when the page streams its Suspense (as it does on PostgreSQL).
        .replace("<!>", "");
    assert!(html.contains("data-testid=\"system-significance\""));
    assert!(html.contains("data-testid=\"significance-legend\""));
    let legend = format!(
        "significant at α = 0.05 after Holm&#x27;s correction over the {} pairs of systems",
        marks.pairs.len()
    );
    let plain = legend.replace("&#x27;", "'");
    assert!(html.contains(&legend) || html.contains(&plain), "no legend");
    let star = |significant: bool| if significant { "*" } else { "" };
    for p in &marks.pairs {
        // The pair's row: name, ΔF1, p, ΔAP, p.
        let name = format!("<td>{} − {}</td>", p.a, p.b);
        let start = html.find(&name).unwrap_or_else(|| panic!("no row {name}"));
        let row = &html[start..start + html[start..].find("</tr>").unwrap()];
        let cells: Vec<&str> = row.split("<td").skip(1).collect();
        for (cell, difference, significant) in [
            (cells[1], p.f1_difference, p.f1_significant),
            (
                cells[3],
                p.average_precision_difference,
                p.average_precision_significant,
            ),
        ] {
            let text = format!(">{difference:+.3}{}</td>", star(significant));
            let flag = format!("data-significant=\"{significant}\"");
            assert!(
                cell.contains(&text) && cell.contains(&flag),
                "{name}: {cell}"
            );
        }
    }
    // The report page's judging orders: every order, each curve the CLI's (thinned), and the
    // depth order's evidence at each pool size the report's depth curve plus citation evidence.
    let res = lead
        .post(app.url("/api/report/judging"))
        .form(&[("project", "scifact")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let replay: app::api::report::JudgingReplay = res.json().await.unwrap();
    let orders: Vec<&str> = replay.curves.iter().map(|(o, _)| o.as_str()).collect();
    assert_eq!(
        orders,
        ["depth", "mtf", "mab-maxmean", "mab-thompson", "hedge"]
    );
    assert_eq!(
        replay.budget,
        (2 * rows.len()).max(2_000).min(replay.candidate_pairs)
    );
    let (_, depth_points) = &replay.curves[0];
    for &(judgments, evidence) in depth_points {
        let cli = curve
            .get(judgments as usize - 1)
            .map(|p| p["evidence"].as_u64().unwrap());
        if let Some(cli) = cli {
            assert_eq!(
                u64::from(evidence),
                cli,
                "depth order at {judgments} judgments"
            );
        }
    }
    let csv_url =
        app.url("/lead/projects/scifact/report/csv/depth_curve?step=20&bootstrap=200&seed=7");
    let res = lead.get(&csv_url).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.headers()[reqwest::header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .starts_with("text/csv"));
    assert_eq!(
        res.text().await.unwrap(),
        report.to_csv("depth_curve").unwrap()
    );
    let res = lead
        .get(app.url("/lead/projects/scifact/report/csv/nonsense"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    let res = lead
        .get(app.url("/lead/projects/scifact/report/csv/depth_curve?bootstrap=1"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);

    let annotator = app.logged_in("ann9").await;
    let res = annotator
        .post(app.url("/api/report/view"))
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    let res = annotator.get(&csv_url).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    let res = app.client().get(&csv_url).send().await.unwrap();
    assert!(res.status().is_redirection(), "{}", res.status());

    // A pooled system added after the build is not in the pool until it grows.
    import_run(
        db,
        project,
        &data.join("scifact-runs/hybrid_rag_kaikoepchen/predictions_dev_a780913.jsonl"),
        "hybrid-a780",
        RunFormat::Leaderboard,
        "CONTRADICT,NEI,SUPPORT",
        SystemRole::Pooled,
    )
    .await;
    let later =
        commands::report::project_report(db, &common::operator_lead(db, project).await, options)
            .await
            .unwrap();
    assert_eq!(later.not_yet_pooled, ["hybrid-a780"]);
    let role = later
        .report
        .systems
        .by_system
        .get("hybrid-a780")
        .unwrap()
        .role;
    assert_eq!(role, app::domain::pool::Role::EvaluationOnly);
    let later_evidence: Vec<u64> = later
        .report
        .depth_curve
        .0
        .iter()
        .map(|p| p.evidence)
        .collect();
    assert_eq!(later_evidence, expected);
}

#[tokio::test]
async fn a_generated_project_reads_back_from_the_database_as_the_same_report() {
    use benchdata::report::{generate, GenShape};
    let app = common::TestApp::spawn().await;
    let shape = GenShape {
        claims: 60,
        evaluation_only: 1,
        label_less: true,
        depth: 80,
        seed: 11,
        ..GenShape::SCIFACT_OPEN
    };
    let mut snapshot = generate(&shape).unwrap();
    // Names in the order the database lists systems (by name).
    for (i, system) in snapshot.systems.iter_mut().enumerate() {
        system.name = format!("{i:02}-{}", system.name);
    }
    let project = snapshot_db::write(&app.db, "generated", &snapshot).await;
    let loaded = store::report::snapshot(&app.db, project).await.unwrap();
    assert!(loaded.not_yet_pooled.is_empty());
    let options = options(100, 3);
    let expected = Report::compute(&snapshot, &options).unwrap();
    let got = Report::compute(&loaded.snapshot, &options).unwrap();
    assert_eq!(got, expected);
    assert!(got.agreement.first_vs_second.is_some());
    assert!(got.evidence.discovered > 0);
}
