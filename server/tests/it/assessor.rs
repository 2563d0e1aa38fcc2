//! Models as a separate assessor (issue 16), run as a user would: `claimpool assessor add` turns
//! a system's predictions on the pool, or the answers of an external command run over it (a
//! stand-in LLM written here), into labels kept apart from the people's; a release
//! carries them only as `qrels-model.txt` (`export --model-qrels`), and `qrels.txt` and
//! `claims.jsonl` are byte for byte those of the release without them; the report compares the
//! model with the people. Expected values are worked out by hand from the files written here.

use crate::common;

use crate::support::cli;
use cli::{claimpool, failed, ok};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn id(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The labels the people give each pooled pair (the final stage), chosen to disagree with the
/// model on most pairs, so that any model label in qrels.txt or claims.jsonl would show.
const HUMAN: &[(&str, &str, &str)] = &[
    ("1", "11", "SUPPORT"),
    ("1", "12", "NEI"),
    ("1", "13", "CONTRADICT"),
    ("1", "14", "NEI"),
    ("1", "15", "SUPPORT"),
    ("2", "14", "SUPPORT"),
    ("2", "15", "NEI"),
    ("2", "16", "NEI"),
];

/// A project of two claims and six abstracts; system `lab` (labels and probabilities) and
/// `prob` (probabilities only) pooled per claim at depth 3, `ret` (TREC, no labels) evaluated
/// only. Pool by hand: claim 1: lab 11, 13, 12; prob 11, 14, 15; claim 2: lab 14, 15; prob 16,
/// 14. Every pooled pair gets the final label of [`HUMAN`].
fn project(dir: &Path) -> String {
    let db = common::postgres::fresh_test_database(dir);
    project_at(dir, db.as_ref());
    db
}

/// [`project`] in the database `db` (a SQLite file or a PostgreSQL URL).
fn project_at(dir: &Path, db: &std::ffi::OsStr) {
    let db = db.to_owned();
    let corpus: String = (11..=16)
        .map(|d| {
            format!(
                "{{\"doc_id\": {d}, \"title\": \"Title {d}\", \"abstract\": [\"First sentence of {d}.\", \"Second sentence.\"]}}\n"
            )
        })
        .collect();
    let corpus = write(dir, "corpus.jsonl", &corpus);
    let claims = write(
        dir,
        "claims.jsonl",
        "{\"id\": 1, \"claim\": \"Aspirin reduces fever.\", \"evidence\": {}, \"cited_doc_ids\": []}\n\
         {\"id\": 2, \"claim\": \"Statins cause muscle pain.\", \"evidence\": {}, \"cited_doc_ids\": []}\n",
    );
    let lab = write(
        dir,
        "lab.jsonl",
        &[
            ("1", "11", "SUPPORT", 0.9, 0.05),
            ("1", "12", "NEI", 0.2, 0.1),
            ("1", "13", "CONTRADICT", 0.1, 0.8),
            ("2", "14", "SUPPORT", 0.7, 0.1),
            ("2", "15", "NEI", 0.3, 0.2),
        ]
        .iter()
        .map(|(c, d, l, s, x)| {
            format!("{{\"claim_id\": {c}, \"doc_id\": {d}, \"predicted_label\": \"{l}\", \"p_support\": {s}, \"p_contradict\": {x}}}\n")
        })
        .collect::<String>(),
    );
    let prob = write(
        dir,
        "prob.jsonl",
        &[
            ("1", "11", 0.6, 0.1),
            ("1", "14", 0.2, 0.5),
            ("1", "15", 0.3, 0.3),
            ("2", "14", 0.1, 0.7),
            ("2", "16", 0.8, 0.1),
        ]
        .iter()
        .map(|(c, d, s, x)| {
            format!("{{\"claim_id\": {c}, \"doc_id\": {d}, \"p_support\": {s}, \"p_contradict\": {x}}}\n")
        })
        .collect::<String>(),
    );
    let ret = write(dir, "ret.trec", "1 Q0 11 1 9.5 ret\n2 Q0 16 1 8.0 ret\n");
    let path = |p: &PathBuf| p.to_str().unwrap().to_owned();
    ok(claimpool(&db, &["project", "create", "p"]));
    let mut add = crate::support::cli::command();
    add.arg("--db")
        .arg(&db)
        .args(["user", "add", "--username", "judge", "--role", "annotator"])
        .arg("--password-stdin")
        .stdin(Stdio::piped());
    let mut child = add.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"a long password\n")
        .unwrap();
    assert!(child.wait().unwrap().success());
    ok(claimpool(
        &db,
        &[
            "project",
            "member",
            "add",
            "--project",
            "p",
            "--user",
            "judge",
            "--role",
            "annotator",
        ],
    ));
    ok(claimpool(
        &db,
        &["import", "corpus", "--project", "p", &path(&corpus)],
    ));
    ok(claimpool(
        &db,
        &["import", "claims", "--project", "p", &path(&claims)],
    ));
    for (system, file, role) in [
        ("lab", &lab, "pooled"),
        ("prob", &prob, "pooled"),
        ("ret", &ret, "evaluation-only"),
    ] {
        ok(claimpool(
            &db,
            &[
                "import",
                "run",
                "--project",
                "p",
                "--system",
                system,
                "--role",
                role,
                &path(file),
            ],
        ));
    }
    ok(claimpool(
        &db,
        &[
            "pool",
            "build",
            "--project",
            "p",
            "--depth",
            "3",
            "--strategy",
            "per-claim",
        ],
    ));
    let pool: Value = serde_json::from_str(&ok(claimpool(
        &db,
        &["pool", "list", "--project", "p", "--json"],
    )))
    .unwrap();
    let mut pooled: Vec<(String, String)> = pool
        .as_array()
        .unwrap()
        .iter()
        .map(|row| (id(&row["claim_id"]), id(&row["doc_id"])))
        .collect();
    pooled.sort();
    let expected: Vec<(String, String)> = HUMAN
        .iter()
        .map(|(c, d, _)| (c.to_string(), d.to_string()))
        .collect();
    assert_eq!(pooled, expected, "the pool worked out by hand");
    let labels: String = HUMAN
        .iter()
        .map(|(c, d, l)| format!("{c} 0 {d} {l}\n"))
        .collect();
    let labels = write(dir, "human.qrels", &labels);
    ok(claimpool(
        &db,
        &[
            "import",
            "judgments",
            "--project",
            "p",
            "--annotator",
            "judge",
            "--stage",
            "final",
            "--format",
            "qrels-labels",
            &path(&labels),
        ],
    ));
}

fn export(db: &str, out: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["export", "--project", "p", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    serde_json::from_str(&ok(claimpool(db, &args))).unwrap()
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap()
}

#[test]
fn model_labels_stay_out_of_qrels_and_claims_and_go_to_qrels_model() {
    let dir = tempfile::tempdir().unwrap();
    let db = project(dir.path());
    let before = dir.path().join("before");
    let first = export(&db, &before, &[]);
    assert_eq!(first["release"]["number"], 1);

    // A run without labels or probabilities cannot assess; nothing is registered.
    let err = failed(claimpool(
        &db,
        &["assessor", "add", "--project", "p", "--system", "ret"],
    ));
    assert!(
        err.contains("neither a label nor p_support and p_contradict")
            && err.contains("claim 1 / doc 11"),
        "{err}"
    );
    let err = failed(claimpool(
        &db,
        &[
            "assessor",
            "add",
            "--project",
            "p",
            "--system",
            "prob",
            "--name",
            "two words",
        ],
    ));
    assert!(err.contains("--name:"), "{err}");
    let err = failed(claimpool(
        &db,
        &["assessor", "add", "--project", "p", "--system", "nope"],
    ));
    assert!(err.contains("\"nope\""), "{err}");

    let added = ok(claimpool(
        &db,
        &[
            "assessor",
            "add",
            "--project",
            "p",
            "--system",
            "prob",
            "--name",
            "model-prob",
        ],
    ));
    assert!(
        added.contains("8 pooled pairs labelled, 4 as evidence, 3 not in the run"),
        "{added}"
    );
    ok(claimpool(
        &db,
        &["assessor", "add", "--project", "p", "--system", "lab"],
    ));
    let err = failed(claimpool(
        &db,
        &["assessor", "add", "--project", "p", "--system", "lab"],
    ));
    assert!(
        err.contains("model assessor named \"lab\" already"),
        "{err}"
    );
    let list: Value = serde_json::from_str(&ok(claimpool(
        &db,
        &["assessor", "list", "--project", "p", "--json"],
    )))
    .unwrap();
    let summary: Vec<(String, String, u64, u64, u64)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                id(&a["name"]),
                id(&a["system"]),
                a["labels"].as_u64().unwrap(),
                a["evidence"].as_u64().unwrap(),
                a["not_in_run"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("lab".into(), "lab".into(), 8, 3, 3),
            ("model-prob".into(), "prob".into(), 8, 4, 3),
        ]
    );

    // Nothing the people released changes: the same state, the same release.
    let unchanged = dir.path().join("unchanged");
    let again = export(&db, &unchanged, &[]);
    assert_eq!(again["new"], false);
    assert_eq!(again["release"]["number"], 1);
    assert!(!unchanged.join("qrels-model.txt").exists());

    // With --model-qrels: a new release whose qrels.txt and claims.jsonl are the bytes of the
    // release without the models, and whose qrels-model.txt holds exactly the models' labels.
    let with = dir.path().join("with");
    let second = export(&db, &with, &["--model-qrels"]);
    assert_eq!(second["new"], true);
    assert_eq!(second["release"]["number"], 2);
    for name in ["qrels.txt", "claims.jsonl", "qrels-labels.txt"] {
        assert_eq!(
            String::from_utf8(read(&before, name)).unwrap(),
            String::from_utf8(read(&with, name)).unwrap(),
            "{name} changed with the model assessors"
        );
    }
    // And they are the people's labels (so the comparison above is not of two empty files).
    let qrels = String::from_utf8(read(&with, "qrels.txt")).unwrap();
    let relevance: BTreeMap<(String, String), String> = qrels
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            ((f[0].to_owned(), f[2].to_owned()), f[3].to_owned())
        })
        .collect();
    let human: BTreeMap<(String, String), String> = HUMAN
        .iter()
        .map(|(c, d, l)| {
            let grade = if *l == "NEI" { "0" } else { "1" };
            ((c.to_string(), d.to_string()), grade.to_owned())
        })
        .collect();
    assert_eq!(relevance, human);
    let claims = String::from_utf8(read(&with, "claims.jsonl")).unwrap();
    for line in claims.lines() {
        let claim: Value = serde_json::from_str(line).unwrap();
        for (doc, evidence) in claim["evidence"].as_object().unwrap() {
            let pair = (id(&claim["id"]), doc.clone());
            assert_eq!(human.get(&pair).map(String::as_str), Some("1"), "{pair:?}");
            assert_eq!(evidence["provenance"], "pooling", "{pair:?}");
        }
    }
    // The models' labels, by hand: prob's most probable label (NEI = 1 - p_s - p_c; 1/15 has
    // 0.3/0.3/0.4), NEI where the run lacks the pair; lab's stated labels.
    let expected = "\
1 lab 11 SUPPORT
1 lab 12 NEI
1 lab 13 CONTRADICT
1 lab 14 NEI
1 lab 15 NEI
2 lab 14 SUPPORT
2 lab 15 NEI
2 lab 16 NEI
1 model-prob 11 SUPPORT
1 model-prob 12 NEI
1 model-prob 13 NEI
1 model-prob 14 CONTRADICT
1 model-prob 15 NEI
2 model-prob 14 CONTRADICT
2 model-prob 15 NEI
2 model-prob 16 SUPPORT
";
    assert_eq!(
        String::from_utf8(read(&with, "qrels-model.txt")).unwrap(),
        expected
    );
    let readme = String::from_utf8(read(&with, "README.md")).unwrap();
    assert!(
        readme.contains("- `qrels-model.txt`: labels of model assessors, not of people")
            && readme.contains("`model-prob` (system `prob`)"),
        "{readme}"
    );
    let manifest: Value = serde_json::from_slice(&read(&with, "MANIFEST.json")).unwrap();
    assert_eq!(manifest["model_assessors"][1]["name"], "model-prob");
    assert!(manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["path"] == "qrels-model.txt"));
    let before_manifest: Value = serde_json::from_slice(&read(&before, "MANIFEST.json")).unwrap();
    assert!(before_manifest.get("model_assessors").is_none());
}

#[test]
fn model_qrels_without_a_model_assessor_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = project(dir.path());
    let out = dir.path().join("r");
    let err = failed(claimpool(
        &db,
        &[
            "export",
            "--project",
            "p",
            "--out",
            out.to_str().unwrap(),
            "--model-qrels",
        ],
    ));
    assert!(err.contains("no model assessor"), "{err}");
    assert!(!out.exists());
}

/// The report's model assessor section, against a hand computation. Human gold (evidence):
/// 1/11 S, 1/13 C, 1/15 S, 2/14 S. Model `model-prob` gold: 1/11 S, 1/14 C, 2/14 C, 2/16 S.
/// lab predicts S 1/11, C 1/13, S 2/14 (3 evidence): human 3 of 3 right, gold 4 → P 1,
/// R 0.75, F1 6/7; model: 1/11 only → P 1/3, R 1/4, F1 2/7. prob (labels from its
/// probabilities? no: a run without labels is label-less, every pair predicted evidence and
/// judged label-agnostically) predicts 5 pairs: human hits 1/11, 1/15, 2/14 → P 3/5, R 3/4,
/// F1 2/3; model hits 1/11, 1/14, 2/14, 2/16 → P 4/5, R 1, F1 8/9. ret predicts 1/11, 2/16:
/// human 1 hit → P 1/2, R 1/4, F1 1/3; model 2 hits → P 1, R 1/2, F1 2/3.
/// Human ranking lab, prob, ret; model: prob, ret, lab. τ-b: lab–prob discordant, lab–ret
/// discordant, prob–ret concordant: (1 − 2)/3.
/// κ (human rows, model columns) over the 8 pairs: agreements 1/11 S, 1/12 NEI, 2/15 NEI:
/// p_o = 3/8; human S 3, C 1, N 4; model S 2, C 2, N 4; p_e = (6 + 2 + 16)/64 = 3/8; κ = 0.
#[test]
fn the_report_compares_the_model_with_the_people() {
    let dir = tempfile::tempdir().unwrap();
    let db = project(dir.path());
    ok(claimpool(
        &db,
        &[
            "assessor",
            "add",
            "--project",
            "p",
            "--system",
            "prob",
            "--name",
            "model-prob",
        ],
    ));
    let report: Value = serde_json::from_str(&ok(claimpool(
        &db,
        &["report", "--project", "p", "--json", "--bootstrap", "2"],
    )))
    .unwrap();
    let a = &report["model_assessors"][0];
    assert_eq!(a["name"], "model-prob");
    assert_eq!(a["agreement"]["n"], 8);
    let close = |v: &Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-9;
    assert!(
        close(&a["agreement"]["observed_agreement"], 3.0 / 8.0),
        "{a}"
    );
    assert!(close(&a["agreement"]["kappa"], 0.0), "{a}");
    let systems: Vec<(String, u64, u64)> = a["systems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                id(&s["system"]),
                s["human_rank"].as_u64().unwrap(),
                s["model_rank"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        systems,
        vec![
            ("lab".into(), 1, 3),
            ("prob".into(), 2, 1),
            ("ret".into(), 3, 2)
        ]
    );
    let f1: Vec<(f64, f64)> = a["systems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["human_f1"].as_f64().unwrap(),
                s["model_f1"].as_f64().unwrap(),
            )
        })
        .collect();
    let want = [
        (6.0 / 7.0, 2.0 / 7.0),
        (2.0 / 3.0, 8.0 / 9.0),
        (1.0 / 3.0, 2.0 / 3.0),
    ];
    for (got, want) in f1.iter().zip(want) {
        assert!(
            (got.0 - want.0).abs() < 1e-9 && (got.1 - want.1).abs() < 1e-9,
            "{f1:?}"
        );
    }
    assert!(close(&a["kendall_tau_b"], -1.0 / 3.0), "{a}");
    let changed: Vec<bool> = a["top_three"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["changed"].as_bool().unwrap())
        .collect();
    assert_eq!(changed, vec![true, true, true]);
    let text = ok(claimpool(
        &db,
        &["report", "--project", "p", "--bootstrap", "2"],
    ));
    assert!(
        text.contains("Model assessor model-prob (system prob, 8 labels): Cohen's kappa with the final labels 0.000 (n = 8")
            && text.contains("Kendall's tau-b -0.333"),
        "{text}"
    );
}

/// The lead's claim page shows each pair's model labels beside its final label.
#[tokio::test]
async fn the_claim_page_shows_model_labels_beside_the_final_label() {
    let dir = tempfile::tempdir().unwrap();
    let db = project(dir.path());
    ok(claimpool(
        &db,
        &[
            "assessor",
            "add",
            "--project",
            "p",
            "--system",
            "prob",
            "--name",
            "model-prob",
        ],
    ));
    ok(claimpool(
        &db,
        &["assessor", "add", "--project", "p", "--system", "lab"],
    ));
    let pool = common::open_db(&db).await;
    let project = store::projects::id_by_name(&pool, "p").await.unwrap();
    let detail = store::projects::claim_detail(&pool, project, "1")
        .await
        .unwrap();
    type Shown = (String, Option<String>, Vec<(String, String)>);
    let shown: Vec<Shown> = detail
        .pairs
        .iter()
        .map(|p| {
            (
                p.doc_id.clone(),
                p.final_label.clone(),
                p.model_labels.clone(),
            )
        })
        .collect();
    let pair = |doc: &str, human: &str, lab: &str, prob: &str| {
        (
            doc.to_owned(),
            Some(human.to_owned()),
            vec![
                ("lab".to_owned(), lab.to_owned()),
                ("model-prob".to_owned(), prob.to_owned()),
            ],
        )
    };
    let mut shown = shown;
    shown.sort();
    assert_eq!(
        shown,
        vec![
            pair("11", "SUPPORT", "SUPPORT", "SUPPORT"),
            pair("12", "NEI", "NEI", "NEI"),
            pair("13", "CONTRADICT", "CONTRADICT", "NEI"),
            pair("14", "NEI", "NEI", "CONTRADICT"),
            pair("15", "SUPPORT", "NEI", "NEI"),
        ]
    );
    pool.close().await;
}

/// The releases page offers qrels-model.txt once the project has a model assessor; the server
/// function writes it only when asked, and the release's qrels.txt stays the people's.
#[tokio::test]
async fn the_releases_page_adds_qrels_model_when_asked() {
    let app = common::TestApp::spawn().await;
    project_at(app.dir.path(), app.db_arg.as_ref());
    app.add_lead("lea", "p").await;
    let lead = app.logged_in("lea").await;
    let overview = |client: reqwest::Client| {
        let url = app.url("/api/release/overview");
        async move {
            let view: Value = client
                .post(url)
                .form(&[("project", "p")])
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            view
        }
    };
    assert_eq!(overview(lead.clone()).await["model_assessors"], 0);
    let create = |model_qrels: &'static str| {
        let client = lead.clone();
        let url = app.url("/api/release/create");
        async move {
            let mut form = vec![
                ("project", "p"),
                ("partial", "false"),
                ("unjudged", "false"),
            ];
            if !model_qrels.is_empty() {
                form.push(("model_qrels", model_qrels));
            }
            client.post(url).form(&form).send().await.unwrap()
        }
    };
    let res = create("true").await;
    assert_eq!(res.status(), reqwest::StatusCode::CONFLICT);
    assert!(common::error_message(res)
        .await
        .contains("no model assessor"));
    let first: Value = create("").await.json().await.unwrap();
    assert_eq!(first["release"]["number"], 1);

    ok(claimpool(
        &app.db_arg,
        &[
            "assessor",
            "add",
            "--project",
            "p",
            "--system",
            "prob",
            "--name",
            "model-prob",
        ],
    ));
    assert_eq!(overview(lead.clone()).await["model_assessors"], 1);
    let page = lead
        .get(app.url("/lead/projects/p/releases"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), reqwest::StatusCode::OK);
    // Without the option: the same state, release 1 again.
    let same: Value = create("false").await.json().await.unwrap();
    assert_eq!(
        (&same["new"], &same["release"]["number"]),
        (&false.into(), &1.into())
    );
    let second: Value = create("true").await.json().await.unwrap();
    assert_eq!(
        (&second["new"], &second["release"]["number"]),
        (&true.into(), &2.into())
    );
    let project = store::projects::id_by_name(&app.db, "p").await.unwrap();
    let files = |number: u32| {
        let db = app.db.clone();
        async move {
            let (_, bytes) = store::release::archive(&db, project, number).await.unwrap();
            let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes.as_slice()));
            let mut files = BTreeMap::new();
            for entry in archive.entries().unwrap() {
                let mut entry = entry.unwrap();
                let path = entry.path().unwrap().to_string_lossy().into_owned();
                let name = path
                    .split_once('/')
                    .map_or(path.clone(), |(_, n)| n.to_owned());
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut entry, &mut bytes).unwrap();
                files.insert(name, bytes);
            }
            files
        }
    };
    let (one, two) = (files(1).await, files(2).await);
    assert!(!one.contains_key("qrels-model.txt"));
    for name in ["qrels.txt", "claims.jsonl"] {
        assert_eq!(one[name], two[name], "{name}");
    }
    let model = String::from_utf8(two["qrels-model.txt"].clone()).unwrap();
    assert_eq!(model.lines().count(), 8);
    assert!(
        model
            .lines()
            .all(|l| l.split(' ').nth(1) == Some("model-prob")),
        "{model}"
    );
}

/// The labels the stand-in LLM of [`STANDIN`] gives each pooled pair. Against [`HUMAN`]: six
/// agree (1/11, 1/12, 1/13, 1/15, 2/14, 2/15), 1/14 and 2/16 do not.
const COMMAND: &[(&str, &str, &str)] = &[
    ("1", "11", "SUPPORT"),
    ("1", "12", "NEI"),
    ("1", "13", "CONTRADICT"),
    ("1", "14", "SUPPORT"),
    ("1", "15", "SUPPORT"),
    ("2", "14", "SUPPORT"),
    ("2", "15", "NEI"),
    ("2", "16", "CONTRADICT"),
];

/// A stand-in for an LLM assessor speaking the external scorer's protocol: `standin.py MODE
/// [DUMP]` answers each pair with its label of `LABELS` (the rationale: sentence 0 for an
/// evidence label), writes the input it read to DUMP, and misbehaves as MODE says.
const STANDIN: &str = r#"
import json, sys
LABELS = LABELS_HERE
mode = sys.argv[1]
dump = sys.argv[2] if len(sys.argv) > 2 else None
read, n = [], 0
for line in sys.stdin:
    read.append(line)
    claim = json.loads(line)
    for c in claim["candidates"]:
        n += 1
        label = LABELS[claim["claim_id"] + "/" + c["doc_id"]]
        out = {"claim_id": claim["claim_id"], "doc_id": c["doc_id"], "predicted_label": label,
               "p_support": 0.8 if label == "SUPPORT" else 0.1,
               "p_contradict": 0.8 if label == "CONTRADICT" else 0.1,
               "sentences": [0] if label != "NEI" else []}
        if mode == "bad-prob" and n == 2:
            out["p_support"] = 1.5
        if mode == "skip-third" and n == 3:
            continue
        print(json.dumps(out), flush=True)
if dump:
    open(dump, "w").write("".join(read))
if mode == "exit-1":
    sys.stderr.write("the model's API said: rate limited\n")
    sys.exit(1)
"#;

/// Writes [`STANDIN`] to `dir`; `None` (the test skipped) where python3 is missing.
fn standin(dir: &Path) -> Option<String> {
    let python = Command::new("python3").arg("--version").output();
    if !python.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: python3 is not available");
        return None;
    }
    let labels: BTreeMap<String, &str> = COMMAND
        .iter()
        .map(|(c, d, l)| (format!("{c}/{d}"), *l))
        .collect();
    let script = STANDIN.replace("LABELS_HERE", &serde_json::to_string(&labels).unwrap());
    Some(
        write(dir, "standin.py", &script)
            .to_str()
            .unwrap()
            .to_owned(),
    )
}

fn add_command(db: &str, line: &str) -> Output {
    claimpool(
        db,
        &[
            "assessor",
            "add",
            "--project",
            "p",
            "--name",
            "llm",
            "--command",
            line,
        ],
    )
}

/// A command assessor, run as an administrator would: every pooled pair is sent once (the
/// claim, the abstract's title and sentences; no BM25 score), its answers are stored as labels
/// with their rationale, `assessor list` and the report show it as a command (κ by hand: p_o =
/// 6/8; human S 3, C 1, N 4, command S 4, C 2, N 2: p_e = (12 + 2 + 8)/64 = 11/32; κ = (3/4 −
/// 11/32)/(21/32) = 13/21), the claim page marks its column, and a release carries its labels
/// only in qrels-model.txt: qrels.txt and claims.jsonl are the bytes of the release without it.
#[tokio::test]
async fn a_command_assessor_labels_the_pool_and_stays_out_of_qrels_and_claims() {
    let dir = tempfile::tempdir().unwrap();
    let Some(script) = standin(dir.path()) else {
        return;
    };
    let db = project(dir.path());
    let before = dir.path().join("before");
    export(&db, &before, &[]);

    let dump = dir.path().join("input.jsonl");
    let line = format!("python3 {script} good {}", dump.display());
    let added = ok(add_command(&db, &line));
    assert!(
        added.contains(&format!(
            "registered model assessor llm (command `{line}`): 8 pooled pairs labelled, 6 as evidence"
        )),
        "{added}"
    );

    // What the command read: one line per claim, its pooled abstracts by doc id.
    let input: Vec<Value> = std::fs::read_to_string(&dump)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(input.len(), 2);
    assert_eq!(input[0]["claim_id"], "1");
    assert_eq!(input[0]["claim"], "Aspirin reduces fever.");
    let docs: Vec<String> = input[0]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| id(&c["doc_id"]))
        .collect();
    assert_eq!(docs, ["11", "12", "13", "14", "15"]);
    assert_eq!(
        input[1]["candidates"][0],
        serde_json::json!({"doc_id": "14", "title": "Title 14",
            "abstract": ["First sentence of 14.", "Second sentence."], "rank": 1})
    );

    let list: Value = serde_json::from_str(&ok(claimpool(
        &db,
        &["assessor", "list", "--project", "p", "--json"],
    )))
    .unwrap();
    let a = &list[0];
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(
        (&a["name"], &a["source"], &a["command"]),
        (&"llm".into(), &"command".into(), &line.clone().into())
    );
    assert!(a.get("system").is_none(), "{a}");
    assert!(a["ran_at"].as_i64().unwrap() <= a["created_at"].as_i64().unwrap());
    assert_eq!(
        (&a["labels"], &a["evidence"], &a["not_in_run"]),
        (&8.into(), &6.into(), &0.into())
    );
    let text = ok(claimpool(&db, &["assessor", "list", "--project", "p"]));
    assert!(
        text.contains(&format!("llm\tcommand: {line}\t8\t6\t0\t(shell)")),
        "{text}"
    );

    // The labels and rationales stored, pair by pair.
    let pool = common::open_db(&db).await;
    let stored: Vec<(String, String, String, i64, Option<String>)> = sqlx::query_as(
        "SELECT c.claim_id, d.doc_id, l.label, l.predicted, l.sentences FROM model_labels l
         JOIN claims c ON c.id = l.claim_id JOIN documents d ON d.id = l.doc_id
         ORDER BY c.claim_id, d.doc_id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let want: Vec<(String, String, String, i64, Option<String>)> = COMMAND
        .iter()
        .map(|(c, d, l)| {
            let rationale = if *l == "NEI" { "[]" } else { "[0]" };
            (
                c.to_string(),
                d.to_string(),
                l.to_string(),
                1,
                Some(rationale.to_owned()),
            )
        })
        .collect();
    assert_eq!(stored, want);

    // The claim page marks the command's column.
    let project = store::projects::id_by_name(&pool, "p").await.unwrap();
    let detail = store::projects::claim_detail(&pool, project, "1")
        .await
        .unwrap();
    let mut shown: Vec<(String, Vec<(String, String)>)> = detail
        .pairs
        .iter()
        .map(|p| (p.doc_id.clone(), p.model_labels.clone()))
        .collect();
    shown.sort();
    let want: Vec<(String, Vec<(String, String)>)> = COMMAND
        .iter()
        .filter(|(c, _, _)| *c == "1")
        .map(|(_, d, l)| {
            (
                d.to_string(),
                vec![("llm (command)".to_owned(), l.to_string())],
            )
        })
        .collect();
    assert_eq!(shown, want);
    pool.close().await;

    let report: Value = serde_json::from_str(&ok(claimpool(
        &db,
        &["report", "--project", "p", "--json", "--bootstrap", "2"],
    )))
    .unwrap();
    let a = &report["model_assessors"][0];
    assert_eq!(
        (&a["name"], &a["source"]),
        (&"llm".into(), &"command".into())
    );
    assert_eq!(a["command"], line.as_str());
    assert_eq!(a["agreement"]["n"], 8);
    let close = |v: &Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-9;
    assert!(close(&a["agreement"]["observed_agreement"], 0.75), "{a}");
    assert!(close(&a["agreement"]["kappa"], 13.0 / 21.0), "{a}");
    let text = ok(claimpool(
        &db,
        &["report", "--project", "p", "--bootstrap", "2"],
    ));
    assert!(
        text.contains(&format!(
            "Model assessor llm (command `{line}`, 8 labels): Cohen's kappa with the final labels 0.619 (n = 8"
        )),
        "{text}"
    );

    let with = dir.path().join("with");
    let second = export(&db, &with, &["--model-qrels"]);
    assert_eq!(second["release"]["number"], 2);
    for name in ["qrels.txt", "claims.jsonl", "qrels-labels.txt"] {
        assert_eq!(
            read(&before, name),
            read(&with, name),
            "{name} changed with the command assessor"
        );
    }
    // The people's labels, not the command's: 1/14 is NEI for the people, SUPPORT for it.
    let qrels = String::from_utf8(read(&with, "qrels.txt")).unwrap();
    assert!(
        qrels.contains("1 0 11 1\n") && qrels.contains("1 0 14 0\n"),
        "{qrels}"
    );
    let claims = String::from_utf8(read(&with, "claims.jsonl")).unwrap();
    for l in claims.lines() {
        let claim: Value = serde_json::from_str(l).unwrap();
        for doc in claim["evidence"].as_object().unwrap().keys() {
            let pair = (id(&claim["id"]), doc.clone());
            let human = HUMAN
                .iter()
                .find(|(c, d, _)| (c.to_string(), d.to_string()) == pair)
                .map(|(_, _, l)| *l);
            assert!(
                matches!(human, Some("SUPPORT" | "CONTRADICT")),
                "{pair:?} is evidence in claims.jsonl"
            );
        }
    }
    let model: String = COMMAND
        .iter()
        .map(|(c, d, l)| format!("{c} llm {d} {l}\n"))
        .collect();
    assert_eq!(
        String::from_utf8(read(&with, "qrels-model.txt")).unwrap(),
        model
    );
    let manifest: Value = serde_json::from_slice(&read(&with, "MANIFEST.json")).unwrap();
    assert_eq!(manifest["model_assessors"][0]["command"], line.as_str());
    assert!(manifest["model_assessors"][0].get("system").is_none());
    let readme = String::from_utf8(read(&with, "README.md")).unwrap();
    assert!(readme.contains("`llm` (command `python3 "), "{readme}");
}

/// A command that fails, answers badly or leaves a pair unanswered registers nothing, and the
/// error names the problem: the exit status with the end of stderr, the output line and field,
/// the unanswered pair, the program that does not start.
#[test]
fn a_failing_or_malformed_command_writes_nothing_and_names_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let Some(script) = standin(dir.path()) else {
        return;
    };
    let db = project(dir.path());
    let cases = [
        (
            format!("python3 {script} exit-1"),
            vec![
                "failed (exit status: 1)".to_owned(),
                "the model's API said: rate limited".to_owned(),
            ],
        ),
        (
            format!("python3 {script} bad-prob"),
            vec![
                format!("stdout of `python3 {script} bad-prob`:2: field \"p_support\""),
                "1.5".to_owned(),
            ],
        ),
        (
            format!("python3 {script} skip-third"),
            vec!["answered 7 of 8 pairs: no prediction for claim 1 / doc 13".to_owned()],
        ),
        (
            "/nonexistent/llm --fast".to_owned(),
            vec!["cannot start `/nonexistent/llm --fast`".to_owned()],
        ),
    ];
    for (line, wanted) in cases {
        let err = failed(add_command(&db, &line));
        for want in wanted {
            assert!(err.contains(&want), "{line}: {err}");
        }
        let list: Value = serde_json::from_str(&ok(claimpool(
            &db,
            &["assessor", "list", "--project", "p", "--json"],
        )))
        .unwrap();
        assert_eq!(list, serde_json::json!([]), "{line}: something was stored");
    }
    let out = dir.path().join("r");
    let err = failed(claimpool(
        &db,
        &[
            "export",
            "--project",
            "p",
            "--out",
            out.to_str().unwrap(),
            "--model-qrels",
        ],
    ));
    assert!(err.contains("no model assessor"), "{err}");

    // A name taken is refused before the command runs (it would write its dump otherwise).
    ok(claimpool(
        &db,
        &[
            "assessor",
            "add",
            "--project",
            "p",
            "--system",
            "lab",
            "--name",
            "llm",
        ],
    ));
    let dump = dir.path().join("never.jsonl");
    let err = failed(add_command(
        &db,
        &format!("python3 {script} good {}", dump.display()),
    ));
    assert!(
        err.contains("model assessor named \"llm\" already"),
        "{err}"
    );
    assert!(!dump.exists(), "the command ran");
}

/// `assessor add` takes exactly one of --system and --command; a command needs a name and a
/// line that splits into words.
#[test]
fn the_cli_wants_exactly_one_of_system_and_command() {
    let dir = tempfile::tempdir().unwrap();
    let db = project(dir.path());
    let err = failed(claimpool(
        &db,
        &[
            "assessor",
            "add",
            "--project",
            "p",
            "--system",
            "lab",
            "--command",
            "true",
            "--name",
            "x",
        ],
    ));
    assert!(
        err.contains("--system")
            && err.contains("--command")
            && err.contains("cannot be used with"),
        "{err}"
    );
    let err = failed(claimpool(
        &db,
        &["assessor", "add", "--project", "p", "--name", "x"],
    ));
    assert!(
        err.contains("required") && err.contains("--system") && err.contains("--command"),
        "{err}"
    );
    let err = failed(claimpool(
        &db,
        &["assessor", "add", "--project", "p", "--command", "true"],
    ));
    assert!(
        err.contains("--name: is needed for a command assessor"),
        "{err}"
    );
    let err = failed(claimpool(
        &db,
        &[
            "assessor",
            "add",
            "--project",
            "p",
            "--command",
            "run 'x",
            "--name",
            "x",
        ],
    ));
    assert!(
        err.contains("--command: the command has an unclosed single quote"),
        "{err}"
    );
    let list = ok(claimpool(
        &db,
        &["assessor", "list", "--project", "p", "--json"],
    ));
    assert_eq!(list.trim(), "[]");
}

/// Only the shell registers a command assessor: the command layer's entry point takes the
/// operator's proof, and no source file but the command line's names it.
#[test]
fn only_the_command_line_can_register_a_command_assessor() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut naming = Vec::new();
    let mut stack = vec![
        root.join("app/src"),
        root.join("crates/commands/src"),
        root.join("server/src"),
    ];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && std::fs::read_to_string(&path)
                    .unwrap()
                    .contains("AddCommandAssessor")
            {
                naming.push(
                    path.strip_prefix(&root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    naming.sort();
    assert_eq!(
        naming,
        [
            "crates/commands/src/assessor.rs",
            "server/src/assessor_cmd.rs"
        ]
    );
}
