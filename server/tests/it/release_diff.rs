//! Release diffs (issue 17) on two real releases of a small hand-made project: between them a
//! final label changes, a pair is judged (added) and a judgment is undone (withdrawn).
//! `claimpool release diff --json` and the lead's diff page are checked against figures
//! computed here from the labels and runs written out below, with plain arithmetic.

use crate::common;

use app::domain::metrics::ClaimResampler;
use app::domain::pool::Role as SystemRole;
use commands::import::{RunImport, SystemSpec};
use common::TestApp;
use reqwest::StatusCode;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The runs: (claim, doc, label, p_support, p_contradict).
const SYS: &[(&str, &str, &str, f64, f64)] = &[
    ("1", "11", "SUPPORT", 0.9, 0.05),
    ("1", "13", "SUPPORT", 0.8, 0.1),
    ("2", "14", "CONTRADICT", 0.1, 0.7),
    ("2", "15", "SUPPORT", 0.6, 0.2),
    ("3", "16", "SUPPORT", 0.5, 0.1),
    ("3", "17", "NEI", 0.2, 0.1),
];
const ALT: &[(&str, &str, &str, f64, f64)] = &[
    ("1", "11", "SUPPORT", 0.95, 0.0),
    ("2", "14", "SUPPORT", 0.7, 0.2),
    ("3", "16", "SUPPORT", 0.6, 0.3),
    ("3", "17", "CONTRADICT", 0.1, 0.8),
];

/// Final labels of release 1: citation evidence (1, 11) and four judged pooled pairs; (3, 17)
/// is pooled but unjudged.
const FIRST: &[(&str, &str, &str)] = &[
    ("1", "11", "SUPPORT"),
    ("1", "13", "NEI"),
    ("2", "14", "CONTRADICT"),
    ("2", "15", "SUPPORT"),
    ("3", "16", "SUPPORT"),
];
/// Release 2: (2, 15) becomes NEI, (3, 17) is judged CONTRADICT, (3, 16)'s label is undone.
const SECOND: &[(&str, &str, &str)] = &[
    ("1", "11", "SUPPORT"),
    ("1", "13", "NEI"),
    ("2", "14", "CONTRADICT"),
    ("2", "15", "NEI"),
    ("3", "17", "CONTRADICT"),
];
const CLAIMS: [&str; 3] = ["1", "2", "3"];
const SAMPLES: u32 = 400;
const SEED: u64 = 11;

fn write_run(path: &Path, run: &[(&str, &str, &str, f64, f64)]) {
    let lines: String = run
        .iter()
        .map(|(c, d, l, s, k)| {
            format!(
                "{{\"claim_id\": {c}, \"doc_id\": {d}, \"predicted_label\": \"{l}\", \"p_support\": {s}, \"p_contradict\": {k}}}\n"
            )
        })
        .collect();
    std::fs::write(path, lines).unwrap();
}

async fn import_run(
    app: &TestApp,
    project: i64,
    name: &str,
    role: SystemRole,
    run: &[(&str, &str, &str, f64, f64)],
) {
    let path = app.dir.path().join(format!("{name}.jsonl"));
    write_run(&path, run);
    commands::import::run(
        &app.db,
        &crate::common::operator_lead(&app.db, project).await,
        RunImport {
            path,
            format: None,
            options: Default::default(),
            system: SystemSpec {
                name: Some(name.into()),
                role,
                description: String::new(),
                negative_sampling_ratio: None,
            },
            allow_missing_docs: false,
        },
    )
    .await
    .unwrap();
}

/// Project `p`: documents 11-17, claims 1-3 (claim 1 cites 11 as SUPPORT evidence), runs `sys`
/// (pooled, all six pairs pooled) and `alt` (evaluation only).
async fn project(app: &TestApp) -> i64 {
    let db = &app.db;
    let project = store::projects::create(db, "p", "", None).await.unwrap();
    let dir = app.dir.path();
    let corpus = dir.join("corpus.jsonl");
    let docs: String = (11..=17)
        .map(|d| {
            format!("{{\"doc_id\": {d}, \"title\": \"T{d}\", \"abstract\": [\"S0.\", \"S1.\"]}}\n")
        })
        .collect();
    std::fs::write(&corpus, docs).unwrap();
    commands::import::corpus(
        db,
        &crate::common::operator_lead(db, project).await,
        &corpus,
        None,
    )
    .await
    .unwrap();
    let claims = dir.join("claims.jsonl");
    std::fs::write(
        &claims,
        "{\"id\": 1, \"claim\": \"A.\", \"evidence\": {\"11\": [{\"sentences\": [0], \"label\": \"SUPPORT\"}]}, \"cited_doc_ids\": [11]}\n\
         {\"id\": 2, \"claim\": \"B.\", \"evidence\": {}, \"cited_doc_ids\": []}\n\
         {\"id\": 3, \"claim\": \"C.\", \"evidence\": {}, \"cited_doc_ids\": []}\n",
    )
    .unwrap();
    commands::import::claims(
        db,
        &crate::common::operator_lead(db, project).await,
        &claims,
    )
    .await
    .unwrap();
    import_run(app, project, "sys", SystemRole::Pooled, SYS).await;
    import_run(app, project, "alt", SystemRole::EvaluationOnly, ALT).await;
    store::pool::build(
        db,
        project,
        store::pool::parse_strategy("confidence").unwrap(),
        6,
        None,
    )
    .await
    .unwrap();
    project
}

/// The row ids of a claim and a document of `p`.
async fn keys(app: &TestApp, project: i64, claim: &str, doc: &str) -> (i64, i64) {
    let key = |sql: &'static str, id: &str| {
        sqlx::query_scalar::<_, i64>(sql)
            .bind(project)
            .bind(id.to_owned())
            .fetch_one(&app.db)
    };
    (
        key(
            "SELECT id FROM claims WHERE project_id = $1 AND claim_id = $2",
            claim,
        )
        .await
        .unwrap(),
        key(
            "SELECT id FROM documents WHERE project_id = $1 AND doc_id = $2",
            doc,
        )
        .await
        .unwrap(),
    )
}

/// An adjudicated judgment of the pair, made its final label, as the annotation pages write it.
async fn judge(app: &TestApp, project: i64, claim: &str, doc: &str, label: &str, at: i64) -> i64 {
    let (c, d) = keys(app, project, claim, doc).await;
    let rationale = if label == "NEI" { "[]" } else { "[[0]]" };
    let judgment = sqlx::query_scalar::<_, i64>(
        "INSERT INTO judgment_rows (project_id, claim_id, doc_id, stage, label, rationale, provenance, created_at)
         VALUES ($1, $2, $3, 'adjudication', $4, $5, 'pooling', $6) RETURNING id",
    )
    .bind(project)
    .bind(c)
    .bind(d)
    .bind(label)
    .bind(rationale)
    .bind(at)
    .fetch_one(&app.db)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO final_label_rows (project_id, claim_id, doc_id, judgment_id, label, provenance, decided_at)
         VALUES ($1, $2, $3, $4, $5, 'pooling', $6)",
    )
    .bind(project)
    .bind(c)
    .bind(d)
    .bind(judgment)
    .bind(label)
    .bind(at)
    .execute(&app.db)
    .await
    .unwrap();
    judgment
}

/// Undoes a judgment as `store::annotate` does: a retraction row, and the final label it made
/// is withdrawn.
async fn undo(
    app: &TestApp,
    project: i64,
    claim: &str,
    doc: &str,
    judgment: i64,
    by: i64,
    at: i64,
) {
    let (c, d) = keys(app, project, claim, doc).await;
    sqlx::query("INSERT INTO judgment_retractions (judgment_id, retracted_by, retracted_at) VALUES ($1, $2, $3)")
        .bind(judgment)
        .bind(by)
        .bind(at)
        .execute(&app.db)
        .await
        .unwrap();
    sqlx::query(
        "DELETE FROM final_label_rows WHERE claim_id = $1 AND doc_id = $2 AND judgment_id = $3",
    )
    .bind(c)
    .bind(d)
    .bind(judgment)
    .execute(&app.db)
    .await
    .unwrap();
}

async fn release(app: &TestApp, project: i64) -> u32 {
    let created = common::release_partial(&app.db, project).await;
    assert!(created.new);
    created.release.number
}

/// Per claim: (correct, predicted evidence, gold evidence) of a run against final labels.
fn counts(labels: &[(&str, &str, &str)], run: &[(&str, &str, &str, f64, f64)]) -> Vec<[u64; 3]> {
    let gold: BTreeMap<(&str, &str), &str> = labels
        .iter()
        .filter(|(_, _, l)| *l != "NEI")
        .map(|&(c, d, l)| ((c, d), l))
        .collect();
    CLAIMS
        .iter()
        .map(|claim| {
            let predicted: Vec<_> = run
                .iter()
                .filter(|(c, _, l, _, _)| c == claim && *l != "NEI")
                .collect();
            let correct = predicted
                .iter()
                .filter(|(c, d, l, _, _)| gold.get(&(*c, *d)) == Some(l))
                .count();
            let evidence = gold.keys().filter(|(c, _)| c == claim).count();
            [correct as u64, predicted.len() as u64, evidence as u64]
        })
        .collect()
}

/// Precision, recall and F1 from per-claim counts weighted by `weights`.
fn prf(counts: &[[u64; 3]], weights: &[u32]) -> [f64; 3] {
    let mut sum = [0u64; 3];
    for (c, &w) in counts.iter().zip(weights) {
        for i in 0..3 {
            sum[i] += c[i] * u64::from(w);
        }
    }
    let ratio = |n: u64, d: u64| if d == 0 { 0.0 } else { n as f64 / d as f64 };
    let (p, r) = (ratio(sum[0], sum[1]), ratio(sum[0], sum[2]));
    let f1 = if p + r == 0.0 {
        0.0
    } else {
        2.0 * p * r / (p + r)
    };
    [p, r, f1]
}

/// numpy's default percentile (linear between order statistics).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Per system: scores under 1, under 2, and per score (value, low, high) of 2 minus 1.
struct Expected {
    under_a: [f64; 3],
    under_b: [f64; 3],
    difference: [[f64; 3]; 3],
}

fn expected(run: &[(&str, &str, &str, f64, f64)]) -> Expected {
    let (a, b) = (counts(FIRST, run), counts(SECOND, run));
    let ones = [1u32; 3];
    let (under_a, under_b) = (prf(&a, &ones), prf(&b, &ones));
    let mut resampler = ClaimResampler::new(CLAIMS.len(), SEED);
    let mut draws: [Vec<f64>; 3] = Default::default();
    for _ in 0..SAMPLES {
        let w = resampler.next_weights().to_vec();
        let (x, y) = (prf(&a, &w), prf(&b, &w));
        for i in 0..3 {
            draws[i].push(y[i] - x[i]);
        }
    }
    let difference = std::array::from_fn(|i| {
        draws[i].sort_by(f64::total_cmp);
        [
            under_b[i] - under_a[i],
            quantile(&draws[i], 0.025),
            quantile(&draws[i], 0.975),
        ]
    });
    Expected {
        under_a,
        under_b,
        difference,
    }
}

fn close(got: &Value, want: f64, what: &str) {
    let got = got.as_f64().unwrap_or_else(|| panic!("{what}: {got}"));
    assert!((got - want).abs() < 1e-12, "{what}: {got} vs {want}");
}

fn check_json(diff: &Value) {
    assert_eq!(
        (&diff["a"], &diff["b"], &diff["project"]),
        (&1.into(), &2.into(), &"p".into())
    );
    assert_eq!(
        diff["changed"],
        serde_json::json!([{"claim": "2", "doc": "15", "old": "SUPPORT", "new": "NEI"}])
    );
    assert_eq!(
        diff["added"],
        serde_json::json!([{"claim": "3", "doc": "17", "label": "CONTRADICT"}])
    );
    assert_eq!(
        diff["withdrawn"],
        serde_json::json!([{"claim": "3", "doc": "16", "label": "SUPPORT"}])
    );
    assert_eq!(
        diff["bootstrap"],
        serde_json::json!({"samples": SAMPLES, "seed": SEED})
    );
    let systems = diff["systems"].as_array().unwrap();
    let names: Vec<&str> = systems
        .iter()
        .map(|s| s["system"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alt", "sys"]);
    for (system, run) in systems.iter().zip([ALT, SYS]) {
        let want = expected(run);
        let name = system["system"].as_str().unwrap();
        for (i, score) in ["precision", "recall", "f1"].into_iter().enumerate() {
            close(
                &system["under_a"][score],
                want.under_a[i],
                &format!("{name} {score} 1"),
            );
            close(
                &system["under_b"][score],
                want.under_b[i],
                &format!("{name} {score} 2"),
            );
            let d = &system["difference"][score];
            let [value, low, high] = want.difference[i];
            close(&d["value"], value, &format!("{name} Δ{score}"));
            close(&d["low"], low, &format!("{name} Δ{score} low"));
            close(&d["high"], high, &format!("{name} Δ{score} high"));
        }
    }
}

#[tokio::test]
async fn the_diff_of_two_releases_equals_a_hand_computation_in_the_cli_and_on_the_page() {
    let app = TestApp::spawn().await;
    let project = project(&app).await;
    let lead = app.add_lead("lea", "p").await;
    // Release 1.
    let mut judgments = BTreeMap::new();
    for (i, &(c, d, l)) in FIRST.iter().skip(1).enumerate() {
        judgments.insert(
            (c, d),
            judge(&app, project, c, d, l, 4_000_000_000_000 + i as i64).await,
        );
    }
    assert_eq!(release(&app, project).await, 1);
    // A label changes (undone, judged again), a pair is judged, a judgment is undone.
    let at = 4_100_000_000_000;
    undo(&app, project, "2", "15", judgments[&("2", "15")], lead, at).await;
    judge(&app, project, "2", "15", "NEI", at + 1).await;
    judge(&app, project, "3", "17", "CONTRADICT", at + 2).await;
    undo(
        &app,
        project,
        "3",
        "16",
        judgments[&("3", "16")],
        lead,
        at + 3,
    )
    .await;
    assert_eq!(release(&app, project).await, 2);

    // The command line.
    let out = crate::support::cli::command()
        .arg("--db")
        .arg(&app.db_arg)
        .args(["release", "diff", "--project", "p", "1", "2", "--json"])
        .args([
            "--bootstrap",
            &SAMPLES.to_string(),
            "--seed",
            &SEED.to_string(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    check_json(&cli);
    // Its text names the changes.
    let out = crate::support::cli::claimpool(
        &app.db_arg,
        &["release", "diff", "--project", "p", "1", "2"],
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("pairs: 1 changed label, 1 added, 1 withdrawn"),
        "{text}"
    );
    assert!(text.contains("  2 15 SUPPORT -> NEI"), "{text}");
    // A release that does not exist is named.
    let out = crate::support::cli::claimpool(
        &app.db_arg,
        &["release", "diff", "--project", "p", "1", "7"],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("release 7"), "{err}");

    // The server function the page calls gives the same diff.
    let client = app.logged_in("lea").await;
    let res = app
        .post_form(
            &client,
            "/api/release/diff",
            &[
                ("project", "p"),
                ("a", "1"),
                ("b", "2"),
                ("samples", &SAMPLES.to_string()),
                ("seed", &SEED.to_string()),
            ],
        )
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    let web: Value = res.json().await.unwrap();
    assert_eq!(web, cli);

    // The page shows the figures, each as computed here.
    let html = client
        .get(app.url(&format!(
            "/lead/projects/p/releases/diff?a=1&b=2&samples={SAMPLES}&seed={SEED}"
        )))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for testid in [
        "diff-systems",
        "diff-changed",
        "diff-added",
        "diff-withdrawn",
    ] {
        assert!(
            html.contains(&format!("data-testid=\"{testid}\"")),
            "{testid}: {html}"
        );
    }
    for (name, run) in [("alt", ALT), ("sys", SYS)] {
        let want = expected(run);
        let start = html
            .find(&format!("data-system=\"{name}\""))
            .unwrap_or_else(|| panic!("{name}"));
        let row = &html[start..start + html[start..].find("</tr>").unwrap()];
        for x in want.under_a.iter().chain(&want.under_b) {
            assert!(row.contains(&format!(">{x:.3}<")), "{name} {x:.3}: {row}");
        }
        for [value, low, high] in want.difference {
            assert!(
                row.contains(&format!("{value:+.3}")),
                "{name} {value:+.3}: {row}"
            );
            assert!(
                row.contains(&format!("[{low:+.3}, {high:+.3}]")),
                "{name} [{low:+.3}, {high:+.3}]: {row}"
            );
        }
    }
    // The releases page links each release to its diff with the one before.
    let html = client
        .get(app.url("/lead/projects/p/releases"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        html.contains("/lead/projects/p/releases/diff?a=1&amp;b=2")
            || html.contains("/lead/projects/p/releases/diff?a=1&b=2"),
        "{html}"
    );
    // Without numbers the page compares the latest release with the one before.
    let html = client
        .get(app.url("/lead/projects/p/releases/diff"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains("data-testid=\"diff-changed\""), "{html}");
}
