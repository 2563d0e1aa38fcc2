//! Re-annotation (issue 16, AVeriTeC's phases): with the project's setting on, a disagreement
//! goes to a fresh annotator, blind, before adjudication; agreeing with either pass makes that
//! label final, a third label sends the pair to adjudication. Off, disagreements go straight to
//! adjudication as before.

use super::{count, queue, setup, submit, PROJECT};
use crate::common::TestApp;
use serde_json::{json, Value};
use std::collections::HashMap;

fn label(l: &str) -> Value {
    match l {
        "NEI" => json!({ "no_evidence": false, "label": "NEI" }),
        l => {
            json!({ "no_evidence": false, "label": l, "sentences": [0], "specificity": "matches" })
        }
    }
}

async fn set(app: &TestApp, on: &str) {
    let lead = app.logged_in("lead").await;
    let res = lead
        .post(app.url("/api/lead/gold/reannotation"))
        .form(&[("project", PROJECT), ("reannotate", on)])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
}

/// Who holds the open assignment of `entry`, at which stage.
async fn holder(app: &TestApp, entry: i64) -> Option<(String, String)> {
    sqlx::query_as(
        "SELECT u.username, a.stage FROM assignments a JOIN users u ON u.id = a.annotator_id
         WHERE a.pool_entry_id = $1 AND a.status = 'open'",
    )
    .bind(entry)
    .fetch_optional(&app.db)
    .await
    .unwrap()
}

/// The open assignment of `entry`.
async fn open_of(app: &TestApp, entry: i64) -> i64 {
    sqlx::query_scalar("SELECT id FROM assignments WHERE pool_entry_id = $1 AND status = 'open'")
        .bind(entry)
        .fetch_one(&app.db)
        .await
        .unwrap()
}

/// `by` gives the first pass of their current item with `first`; whoever then holds its second
/// pass gives `second`. Returns the pair's entry and the second annotator.
async fn disagree(
    app: &TestApp,
    clients: &HashMap<&str, reqwest::Client>,
    by: &str,
    first: &str,
    second: &str,
) -> (i64, String) {
    // Their first item at the first pass (an adjudication may come first).
    let mut item = queue(app, &clients[by]).await.current.unwrap();
    while item.stage != "first" {
        let r = clients[by]
            .post(app.url("/api/work/skip"))
            .form(&[
                ("project", PROJECT),
                ("assignment_id", &item.assignment_id.unwrap().to_string()),
            ])
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
        item = r
            .json::<app::model::annotate::QueueHead>()
            .await
            .unwrap()
            .current
            .unwrap();
    }
    let entry = item.pool_entry_id;
    let r = submit(app, &clients[by], item.assignment_id.unwrap(), label(first)).await;
    assert!(r.status().is_success());
    let (second_name, stage) = holder(app, entry).await.expect("a second pass");
    assert_eq!(stage, "second");
    let id = open_of(app, entry).await;
    let r = submit(app, &clients[second_name.as_str()], id, label(second)).await;
    assert!(r.status().is_success());
    (entry, second_name)
}

async fn clients(app: &TestApp) -> HashMap<&'static str, reqwest::Client> {
    let mut all = HashMap::new();
    for name in ["a1", "a2", "a3"] {
        all.insert(name, app.logged_in(name).await);
    }
    all
}

#[tokio::test]
async fn a_disagreement_goes_to_a_fresh_blind_annotator_and_a_majority_decides() {
    let app = TestApp::spawn().await;
    setup(&app, &["a1", "a2", "a3"], 30).await;
    set(&app, "on").await;
    let clients = clients(&app).await;
    let (entry, second) = disagree(&app, &clients, "a1", "SUPPORT", "NEI").await;
    let first = "a1".to_owned();
    let (fresh, stage) = holder(&app, entry).await.expect("a re-annotation");
    assert_eq!(stage, "second");
    assert!(fresh != first && fresh != second, "{fresh} is fresh");
    // Blind: the re-annotator's item shows no first pass, in confirm mode too.
    let c = &clients[fresh.as_str()];
    let id = open_of(&app, entry).await;
    let mut seen = None;
    for _ in 0..40 {
        let head = queue(&app, c).await;
        let item = head.current.unwrap();
        if item.assignment_id == Some(id) {
            seen = Some(item);
            break;
        }
        let r = c
            .post(app.url("/api/work/skip"))
            .form(&[
                ("project", PROJECT),
                ("assignment_id", &item.assignment_id.unwrap().to_string()),
            ])
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
    }
    let item = seen.expect("the re-annotation in the queue");
    assert!(item.first.is_none(), "the re-annotator is blind");
    assert!(item.opinions.is_empty());
    let r = submit(&app, c, id, label("NEI")).await;
    assert!(r.status().is_success());
    let last = queue(&app, c).await.last.unwrap();
    assert!(!last.undoable, "a re-annotation showed both labels");
    let fin: String = sqlx::query_scalar(
        "SELECT f.label FROM final_labels f JOIN pool_entries e
           ON e.claim_id = f.claim_id AND e.doc_id = f.doc_id WHERE e.id = $1",
    )
    .bind(entry)
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(fin, "NEI", "the majority");
    assert!(holder(&app, entry).await.is_none());
}

#[tokio::test]
async fn a_third_label_goes_to_adjudication_and_without_the_setting_nothing_changes() {
    let app = TestApp::spawn().await;
    setup(&app, &["a1", "a2", "a3"], 30).await;
    let clients = clients(&app).await;
    // Off: straight to adjudication by one of the two.
    let (entry, second) = disagree(&app, &clients, "a1", "SUPPORT", "NEI").await;
    let first = "a1".to_owned();
    let (who, stage) = holder(&app, entry).await.unwrap();
    assert_eq!(stage, "adjudication");
    assert!(who == first || who == second);

    // On: a third label leaves the pair to adjudication.
    set(&app, "on").await;
    let (entry, second) = disagree(&app, &clients, "a1", "SUPPORT", "NEI").await;
    let (fresh, stage) = holder(&app, entry).await.unwrap();
    assert_eq!(stage, "second");
    assert!(fresh != first && fresh != second);
    let id = open_of(&app, entry).await;
    let r = submit(&app, &clients[fresh.as_str()], id, label("CONTRADICT")).await;
    assert!(r.status().is_success());
    let (who, stage) = holder(&app, entry).await.expect("an adjudication");
    assert_eq!(stage, "adjudication");
    assert!(who == first || who == second);
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM judgments WHERE stage = 'second'"
        )
        .await,
        3
    );
}
