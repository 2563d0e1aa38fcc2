//! The annotator's own history (`work/history`, issue 39) and the paper behind an abstract
//! (its corpus line's venue, year, authors and links) on the item and in search results.

use super::{clearly_nei, contradict, queue, setup, setup_from, submit, support, PROJECT};
use crate::common::{self, TestApp};
use app::model::history::HistoryPage;
use app::model::paper::LinkKind;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::io::Write;

async fn history(
    app: &TestApp,
    client: &reqwest::Client,
    filter: Value,
    page: usize,
) -> HistoryPage {
    let res = client
        .post(app.url("/api/work/history"))
        .json(&json!({ "project": PROJECT, "filter": filter, "page": page }))
        .send()
        .await
        .unwrap();
    if res.status() != StatusCode::OK {
        panic!("{}: {}", res.status(), common::error_message(res).await);
    }
    res.json().await.unwrap()
}

#[tokio::test]
async fn ones_history_lists_only_ones_own_judgments_filters_them_and_undoes_the_last() {
    let app = TestApp::spawn().await;
    setup(&app, &["a1", "a2"], 6).await;
    let a1 = app.logged_in("a1").await;
    let a2 = app.logged_in("a2").await;
    let mut mine = Vec::new();
    for answer in [support(), clearly_nei(), contradict()] {
        let item = queue(&app, &a1).await.current.unwrap();
        mine.push(item.claim_id.clone());
        let res = submit(&app, &a1, item.assignment_id.unwrap(), answer).await;
        assert!(res.status().is_success());
    }
    let theirs = queue(&app, &a2).await.current.unwrap();
    assert!(submit(&app, &a2, theirs.assignment_id.unwrap(), support())
        .await
        .status()
        .is_success());

    let all = history(&app, &a1, json!({}), 0).await;
    assert_eq!(all.total, 3);
    assert_eq!((all.page, all.pages), (0, 1));
    let labels: Vec<&str> = all.rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, vec!["CONTRADICT", "NEI", "SUPPORT"], "newest first");
    let claims: Vec<&str> = all.rows.iter().rev().map(|r| r.claim_id.as_str()).collect();
    assert_eq!(claims, mine.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(all.rows[1].no_evidence && all.rows[1].sentences.is_empty());
    assert_eq!(
        all.rows[0].sentences,
        vec![2],
        "sentence 1 (0-based) is shown as 2"
    );
    assert!(all.rows.iter().all(|r| r.stage == "first" && !r.undone));
    // The last one may be undone, as on the annotation page.
    let last = all.last.clone().unwrap();
    assert_eq!(last.judgment_id, all.rows[0].judgment_id);
    assert!(last.undoable && last.undo_until_ms > all.server_ms);

    let nei = history(&app, &a1, json!({ "label": "NEI" }), 0).await;
    assert_eq!(nei.total, 1);
    assert_eq!(nei.rows[0].label, "NEI");
    let by_title = all.rows[2].title.to_uppercase();
    let words: String = by_title
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    let found = history(&app, &a1, json!({ "text": words }), 0).await;
    assert!(
        found
            .rows
            .iter()
            .any(|r| r.judgment_id == all.rows[2].judgment_id),
        "{words}"
    );
    let none = history(&app, &a1, json!({ "stage": "adjudication" }), 0).await;
    assert_eq!((none.total, none.rows.len(), none.pages), (0, 0, 1));
    // The other annotator sees only their own.
    let other = history(&app, &a2, json!({}), 0).await;
    assert_eq!(other.total, 1);
    assert_eq!(other.rows[0].claim_id, theirs.claim_id);

    // Undo from the history: the judgment drops out, and comes back marked with "undone too".
    let res = a1
        .post(app.url("/api/work/undo"))
        .form(&[("project", PROJECT)])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success());
    let after = history(&app, &a1, json!({}), 0).await;
    assert_eq!(after.total, 2);
    assert_ne!(
        after.last.as_ref().map(|l| l.judgment_id),
        Some(last.judgment_id)
    );
    let with_undone = history(&app, &a1, json!({ "with_undone": true }), 0).await;
    assert_eq!(with_undone.total, 3);
    assert!(with_undone.rows[0].undone && with_undone.rows[0].judgment_id == last.judgment_id);

    // A filter that is not one says so, in words.
    for (filter, words) in [
        (
            json!({ "label": "MAYBE" }),
            "choose SUPPORT, CONTRADICT or NEI",
        ),
        (json!({ "stage": "final" }), "choose the first pass"),
        (json!({ "text": "x".repeat(201) }), "at most 200 characters"),
    ] {
        let res = a1
            .post(app.url("/api/work/history"))
            .json(&json!({ "project": PROJECT, "filter": filter, "page": 0 }))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
        let message = common::error_message(res).await;
        assert!(message.contains(words), "{message}");
    }
}

/// The demo corpus with S2ORC-style metadata on every line, and on the first line an address
/// that is no web address.
fn corpus_with_papers(dir: &std::path::Path) -> std::path::PathBuf {
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/corpus.jsonl");
    let path = dir.join("corpus-with-papers.jsonl");
    let mut out = std::fs::File::create(&path).unwrap();
    for (i, line) in std::fs::read_to_string(demo).unwrap().lines().enumerate() {
        let mut doc: Value = serde_json::from_str(line).unwrap();
        let id = doc["doc_id"].to_string();
        doc["metadata"] = json!({
            "paper_id": id, "year": 1990 + (i % 30), "venue": "Test Venue", "journal": null,
            "doi": format!("10.5555/test.{id}"), "pubmed_id": format!("{}", 100 + i),
            "authors": [{"first": "Ada", "middle": [], "last": format!("Author{i}")}, {"first": "B", "middle": ["C"], "last": "Second"}],
        });
        doc["url"] = json!(if i == 0 {
            "javascript:alert(1)".to_owned()
        } else {
            format!("https://example.org/{id}")
        });
        writeln!(out, "{doc}").unwrap();
    }
    path
}

#[tokio::test]
async fn the_corpus_lines_paper_comes_with_the_item_and_the_search_result() {
    let app = TestApp::spawn().await;
    let corpus = corpus_with_papers(app.dir.path());
    setup_from(&app, &["a1"], 4, 4, &corpus).await;
    let a1 = app.logged_in("a1").await;
    let item = queue(&app, &a1).await.current.unwrap();
    let paper = &item.paper;
    assert_eq!(paper.venue.as_deref(), Some("Test Venue"));
    let year = paper.year.unwrap();
    assert!((1990..2020).contains(&year));
    let links: Vec<(LinkKind, String)> = paper.links.iter().map(|l| (l.kind(), l.href())).collect();
    assert_eq!(
        links[0],
        (
            LinkKind::Doi,
            format!("https://doi.org/10.5555/test.{}", item.doc_id)
        )
    );
    assert_eq!(
        links[2],
        (
            LinkKind::SemanticScholar,
            format!("https://api.semanticscholar.org/CorpusID:{}", item.doc_id)
        )
    );
    assert_eq!(
        links[3],
        (
            LinkKind::Web,
            format!("https://example.org/{}", item.doc_id)
        )
    );
    assert_eq!(paper.authors[1], "B C Second");

    let results = super::search::search(&app, &a1, "breast cancer", 0).await;
    assert!(!results.results.is_empty());
    for r in &results.results {
        assert_eq!(r.paper.venue.as_deref(), Some("Test Venue"), "{}", r.doc_id);
        assert_eq!(r.paper.links[0].id(), format!("10.5555/test.{}", r.doc_id));
        // The first line's `javascript:` address is never a link.
        assert!(r
            .paper
            .links
            .iter()
            .all(|l| l.href().starts_with("https://")));
    }
}
