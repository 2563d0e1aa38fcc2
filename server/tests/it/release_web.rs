//! Releases through the real HTTP server, on a small hand-made project whose every expected
//! line is written out here: roles, refusal while unjudged, numbering, the downloaded archive.

use crate::common;

use app::domain::account::Role;
use app::domain::pool::Role as SystemRole;
use commands::import::{RunImport, SystemSpec};
use common::{error_message, TestApp};
use reqwest::StatusCode;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;

/// 2099-12-31T23:59:59.999Z: the time given to the hand-made judgment, later than every import,
/// so the release's date must be this day.
const JUDGED_AT: i64 = 4_102_444_799_999;

/// Project `p`: documents 11-14, claims 1 and 2 (claim 1 has citation evidence 11 and cites 12),
/// a run of system `sys` pooled at depth 3, and one pooled pair judged by an annotator.
async fn project(app: &TestApp) -> i64 {
    let db = &app.db;
    let project = store::projects::create(db, "p", "", None).await.unwrap();
    let dir = app.dir.path();
    let corpus = dir.join("corpus.jsonl");
    let mut lines = String::new();
    for doc in 11..=14 {
        lines.push_str(&format!(
            "{{\"doc_id\": {doc}, \"title\": \"T{doc}\", \"abstract\": [\"S0.\", \"S1.\", \"S2.\"]}}\n"
        ));
    }
    std::fs::write(&corpus, lines).unwrap();
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
        "{\"id\": 1, \"claim\": \"A.\", \"evidence\": {\"11\": [{\"sentences\": [0], \"label\": \"SUPPORT\"}]}, \"cited_doc_ids\": [11, 12]}\n\
         {\"id\": 2, \"claim\": \"B.\", \"evidence\": {}, \"cited_doc_ids\": []}\n",
    )
    .unwrap();
    commands::import::claims(
        db,
        &crate::common::operator_lead(db, project).await,
        &claims,
    )
    .await
    .unwrap();
    let run = dir.join("run.jsonl");
    std::fs::write(
        &run,
        "{\"claim_id\": 1, \"doc_id\": 11, \"predicted_label\": \"SUPPORT\", \"p_support\": 0.9, \"p_contradict\": 0.05}\n\
         {\"claim_id\": 1, \"doc_id\": 13, \"predicted_label\": \"SUPPORT\", \"p_support\": 0.8, \"p_contradict\": 0.1}\n\
         {\"claim_id\": 2, \"doc_id\": 14, \"predicted_label\": \"CONTRADICT\", \"p_support\": 0.2, \"p_contradict\": 0.7}\n\
         {\"claim_id\": 2, \"doc_id\": 12, \"predicted_label\": \"NEI\", \"p_support\": 0.1, \"p_contradict\": 0.05}\n",
    )
    .unwrap();
    commands::import::run(
        db,
        &crate::common::operator_lead(db, project).await,
        RunImport {
            path: run,
            format: None,
            options: Default::default(),
            system: SystemSpec {
                name: Some("sys".into()),
                role: SystemRole::Pooled,
                description: "a test system".into(),
                negative_sampling_ratio: None,
            },
            allow_missing_docs: false,
        },
    )
    .await
    .unwrap();
    // Pooled: (1, 11) rank 1, (1, 13) rank 2, (2, 14) rank 3.
    store::pool::build(
        db,
        project,
        store::pool::parse_strategy("confidence").unwrap(),
        3,
        None,
    )
    .await
    .unwrap();
    // An annotator's final label for (2, 14), as the annotation pages will write it.
    let key = |sql: &'static str, id: i64| {
        sqlx::query_scalar::<_, i64>(sql)
            .bind(project)
            .bind(id.to_string())
            .fetch_one(db)
    };
    let claim = key(
        "SELECT id FROM claims WHERE project_id = $1 AND claim_id = $2",
        2,
    )
    .await
    .unwrap();
    let doc = key(
        "SELECT id FROM documents WHERE project_id = $1 AND doc_id = $2",
        14,
    )
    .await
    .unwrap();
    let judgment = sqlx::query_scalar::<_, i64>(
        "INSERT INTO judgment_rows (project_id, claim_id, doc_id, stage, label, rationale, specificity,
                                revised_claim, provenance, created_at)
         VALUES ($1, $2, $3, 'adjudication', 'CONTRADICT', '[[2], [1, 2]]', 'evidence_more_specific',
                 'B, in mice.', 'pooling', $4) RETURNING id",
    )
    .bind(project)
    .bind(claim)
    .bind(doc)
    .bind(JUDGED_AT)
    .fetch_one(db)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO final_label_rows (project_id, claim_id, doc_id, judgment_id, label, provenance, decided_at)
         VALUES ($1, $2, $3, $4, 'CONTRADICT', 'pooling', $5)",
    )
    .bind(project)
    .bind(claim)
    .bind(doc)
    .bind(judgment)
    .bind(JUDGED_AT)
    .execute(db)
    .await
    .unwrap();
    project
}

async fn post(
    client: &reqwest::Client,
    app: &TestApp,
    endpoint: &str,
    form: &[(&str, &str)],
) -> reqwest::Response {
    client
        .post(app.url(&format!("/api/{endpoint}")))
        .form(form)
        .send()
        .await
        .unwrap()
}

fn create_form(partial: bool, unjudged: bool) -> Vec<(&'static str, &'static str)> {
    let b = |x: bool| if x { "true" } else { "false" };
    vec![
        ("project", "p"),
        ("partial", b(partial)),
        ("unjudged", b(unjudged)),
    ]
}

/// The files of a `.tar.gz`, by path below its root directory, and the root.
fn unpack(bytes: &[u8]) -> (String, BTreeMap<String, Vec<u8>>) {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let mut root = String::new();
    let mut files = BTreeMap::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().to_string_lossy().into_owned();
        if entry.header().entry_type().is_dir() {
            if root.is_empty() {
                root = path.trim_end_matches('/').to_owned();
            }
            continue;
        }
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        let inner = path
            .strip_prefix(&format!("{root}/"))
            .unwrap_or_else(|| panic!("{path} is outside {root}/"))
            .to_owned();
        files.insert(inner, data);
    }
    (root, files)
}

fn text(files: &BTreeMap<String, Vec<u8>>, path: &str) -> String {
    String::from_utf8(files[path].clone()).unwrap()
}

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test]
async fn annotators_are_refused_everywhere_on_releases() {
    let app = TestApp::spawn().await;
    project(&app).await;
    app.add_lead("lea", "p").await;
    app.add_user("ann", Role::Annotator).await;
    let lead = app.logged_in("lea").await;
    let res = post(&lead, &app, "release/create", &create_form(true, false)).await;
    assert_eq!(res.status(), StatusCode::OK);

    let ann = app.logged_in("ann").await;
    for (endpoint, form) in [
        ("release/overview", vec![("project", "p")]),
        ("release/create", create_form(true, false)),
    ] {
        let res = post(&ann, &app, endpoint, &form).await;
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{endpoint}");
        assert_eq!(
            error_message(res).await,
            "forbidden: this needs the lead role"
        );
    }
    for page in [
        "/lead/projects/p/releases",
        "/lead/projects/p/releases/1/download",
    ] {
        let res = ann.get(app.url(page)).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{page}");
    }
    // Not logged in: sent to the login page, never given the archive.
    let res = app
        .client()
        .get(app.url("/lead/projects/p/releases/1/download"))
        .send()
        .await
        .unwrap();
    assert!(res.status().is_redirection(), "{}", res.status());
    assert!(res.headers()["location"]
        .to_str()
        .unwrap()
        .starts_with("/login"));
    // The annotator's attempt made no release.
    let releases: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM releases")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(releases, 1);
}

#[tokio::test]
async fn leads_release_download_and_get_the_same_release_for_the_same_state() {
    let app = TestApp::spawn().await;
    project(&app).await;
    app.add_lead("lea", "p").await;
    let lead = app.logged_in("lea").await;

    let res = post(&lead, &app, "release/overview", &[("project", "p")]).await;
    assert_eq!(res.status(), StatusCode::OK);
    let view: serde_json::Value = res.json().await.unwrap();
    // Pooled (1,11) (1,13) (2,14); final labels (1,11) (1,12) (2,14); unjudged (1,13).
    assert_eq!(
        (&view["pooled"], &view["unjudged"], &view["final_labels"]),
        (&3.into(), &1.into(), &3.into())
    );
    assert_eq!(view["releases"], serde_json::json!([]));
    let page = lead
        .get(app.url("/lead/projects/p/releases"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);

    // Refused while a pooled pair has no final label; nothing is recorded.
    let res = post(&lead, &app, "release/create", &create_form(false, false)).await;
    assert_eq!(res.status(), StatusCode::CONFLICT);
    let message = error_message(res).await;
    assert!(
        message.starts_with("1 pooled pair has no final label yet (e.g. claim 1 / doc 13)"),
        "{message}"
    );

    // Partial: release 1; the same request again gives release 1 back, unchanged.
    let res = post(&lead, &app, "release/create", &create_form(true, false)).await;
    assert_eq!(res.status(), StatusCode::OK);
    let first: serde_json::Value = res.json().await.unwrap();
    assert_eq!(first["new"], true);
    assert_eq!(first["release"]["number"], 1);
    assert_eq!(first["release"]["partial"], true);
    assert_eq!(first["release"]["date"], "2099-12-31");
    let again: serde_json::Value = post(&lead, &app, "release/create", &create_form(true, false))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(again["new"], false);
    assert_eq!(again["release"], first["release"]);
    // Unjudged pairs in the qrels: a different release, number 2.
    let second: serde_json::Value = post(&lead, &app, "release/create", &create_form(true, true))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (&second["new"], &second["release"]["number"]),
        (&true.into(), &2.into())
    );
    let events: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM audit_events WHERE action = 'release'")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!(events, 2);
    let view: serde_json::Value = post(&lead, &app, "release/overview", &[("project", "p")])
        .await
        .json()
        .await
        .unwrap();
    let numbers: Vec<u64> = view["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [2, 1]);

    // The download of release 1.
    let res = lead
        .get(app.url("/lead/projects/p/releases/1/download"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["content-type"], "application/gzip");
    assert_eq!(
        res.headers()["content-disposition"],
        "attachment; filename=\"p-release-1.tar.gz\""
    );
    let bytes = res.bytes().await.unwrap();
    assert_eq!(
        hex(&bytes),
        first["release"]["sha256"].as_str().unwrap(),
        "the listed SHA-256 is the archive's"
    );
    let (root, files) = unpack(&bytes);
    assert_eq!(root, "p-release-1");
    let manifest: serde_json::Value = serde_json::from_slice(&files["MANIFEST.json"]).unwrap();
    let listed: BTreeMap<String, String> = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["sha256"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let unpacked: BTreeMap<String, String> = files
        .iter()
        .filter(|(path, _)| *path != "MANIFEST.json")
        .map(|(path, data)| (path.clone(), hex(data)))
        .collect();
    assert_eq!(listed, unpacked);
    assert_eq!(manifest["release"], 1);
    assert_eq!(manifest["date"], "2099-12-31");
    assert_eq!(manifest["partial"], true);
    assert_eq!(
        manifest["pool"],
        serde_json::json!({"strategy": "confidence", "depth": 3})
    );

    // Every file, line by line.
    assert_eq!(
        text(&files, "claims.jsonl"),
        "{\"id\":1,\"claim\":\"A.\",\"evidence\":{\"11\":{\"provenance\":\"citation\",\"label\":\"SUPPORT\",\"sentences\":[0],\"model_ranks\":null}}}\n\
         {\"id\":2,\"claim\":\"B.\",\"evidence\":{\"14\":{\"provenance\":\"pooling\",\"label\":\"CONTRADICT\",\"sentences\":[1,2],\"model_ranks\":{\"sys\":3}}}}\n"
    );
    assert_eq!(
        text(&files, "qrels-labels.txt"),
        "1 0 11 SUPPORT\n1 0 12 NEI\n2 0 14 CONTRADICT\n"
    );
    assert_eq!(text(&files, "qrels.txt"), "1 0 11 1\n1 0 12 0\n2 0 14 1\n");
    assert_eq!(
        text(&files, "specificity.jsonl"),
        "{\"claim_id\":2,\"doc_id\":14,\"relation\":\"evidence_more_specific\",\"revised_claim\":\"B, in mice.\"}\n"
    );
    let docs: Vec<serde_json::Value> = text(&files, "corpus_candidates.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let doc_ids: Vec<u64> = docs.iter().map(|d| d["doc_id"].as_u64().unwrap()).collect();
    assert_eq!(doc_ids, [11, 12, 13, 14]);
    let run: Vec<serde_json::Value> = text(&files, "runs/sys.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        run[0],
        serde_json::json!({"system": "sys", "claim_id": "1", "doc_id": "11",
                           "predicted_label": "SUPPORT", "p_support": 0.9, "p_contradict": 0.05})
    );
    assert_eq!(run.len(), 4);

    // Release 2 lists the unjudged pair with -1; a release that does not exist is not found.
    let res = lead
        .get(app.url("/lead/projects/p/releases/2/download"))
        .send()
        .await
        .unwrap();
    let (_, files) = unpack(&res.bytes().await.unwrap());
    assert_eq!(
        text(&files, "qrels.txt"),
        "1 0 11 1\n1 0 12 0\n1 0 13 -1\n2 0 14 1\n"
    );
    for missing in ["9", "0", "x"] {
        let res = lead
            .get(app.url(&format!("/lead/projects/p/releases/{missing}/download")))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::NOT_FOUND, "{missing}");
    }
}
