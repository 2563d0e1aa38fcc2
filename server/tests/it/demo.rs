//! The demo database, checked against the shipped sample files.

use crate::common;

use std::collections::BTreeSet;

#[tokio::test]
async fn the_demo_holds_the_sample_three_runs_and_a_pool() {
    let app = common::TestApp::spawn().await;
    server::demo::seed(&app.db).await.unwrap();
    let summary = store::projects::summary(&app.db, server::demo::PROJECT)
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
    assert_eq!(summary.systems, 3);
    // Each system scored the top 20 abstracts of every claim.
    let per_system: Vec<(String, i64)> = sqlx::query_as(
        "SELECT s.name, COUNT(*) FROM predictions p JOIN systems s ON s.id = p.system_id
         GROUP BY s.name ORDER BY s.name",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    let lines = claims.lines().count() as i64 * 20;
    let expected: Vec<(String, i64)> = ["bm25", "trained-r0", "trained-r20"]
        .iter()
        .map(|name| (name.to_string(), lines))
        .collect();
    assert_eq!(per_system, expected);
    // The pool is the union of each system's DEMO_DEPTH most confident pairs (ties: lower
    // retrieval rank, then claim id, then doc id; the demo's ids are numbers).
    let mut pooled = BTreeSet::new();
    for (name, _) in &expected {
        let top: Vec<(i64, i64)> = sqlx::query_as(
            "SELECT p.claim_id, p.doc_id FROM predictions p
             JOIN systems s ON s.id = p.system_id
             JOIN claims c ON c.id = p.claim_id JOIN documents d ON d.id = p.doc_id
             WHERE s.name = $1
             ORDER BY p.confidence DESC, p.retrieval_rank,
                      CAST(c.claim_id AS INTEGER), CAST(d.doc_id AS INTEGER)
             LIMIT $2",
        )
        .bind(name)
        .bind(i64::from(server::demo::DEMO_DEPTH))
        .fetch_all(&app.db)
        .await
        .unwrap();
        pooled.extend(top);
    }
    let stored: BTreeSet<(i64, i64)> = sqlx::query_as("SELECT claim_id, doc_id FROM pool_entries")
        .fetch_all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(stored, pooled);
    assert_eq!(summary.pooled, pooled.len() as i64);
    assert!(pooled.len() > server::demo::DEMO_DEPTH as usize);
    // Every demo account logs in with its documented password.
    for (name, _) in server::demo::ACCOUNTS {
        let client = app.client();
        let res = app
            .login(&client, name, &server::demo::password_of(name))
            .await;
        assert!(res.status().is_success(), "{name}");
    }
}
