//! The demo database, checked against the shipped sample files.

mod common;

use std::collections::BTreeSet;

#[tokio::test]
async fn the_demo_holds_the_sample_a_bm25_run_and_a_pool() {
    let app = common::TestApp::spawn().await;
    server::demo::seed(&app.db).await.unwrap();
    let summary = app::store::projects::summary(&app.db, server::demo::PROJECT)
        .await
        .unwrap();

    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("demo");
    let corpus = std::fs::read_to_string(dir.join("corpus.jsonl")).unwrap();
    let claims = std::fs::read_to_string(dir.join("claims.jsonl")).unwrap();
    // Judged pairs: evidence documents plus cited documents, once per claim and document.
    let mut judged = BTreeSet::new();
    for line in claims.lines() {
        let c: serde_json::Value = serde_json::from_str(line).unwrap();
        for doc in c["evidence"].as_object().unwrap().keys() {
            judged.insert((c["id"].to_string(), doc.clone()));
        }
        for doc in c["cited_doc_ids"].as_array().unwrap() {
            judged.insert((c["id"].to_string(), doc.to_string()));
        }
    }
    assert_eq!(summary.documents, corpus.lines().count() as i64);
    assert_eq!(summary.claims, claims.lines().count() as i64);
    assert_eq!(summary.final_labels, judged.len() as i64);
    assert_eq!(summary.systems, 1);
    // One pooled system at depth d pools exactly its d most confident pairs.
    assert_eq!(summary.pooled, i64::from(server::demo::DEMO_DEPTH));
    // Every demo account logs in with its documented password.
    for (name, _) in server::demo::ACCOUNTS {
        let client = app.client();
        let res = app
            .login(&client, name, &server::demo::password_of(name))
            .await;
        assert!(res.status().is_success(), "{name}");
    }
}
