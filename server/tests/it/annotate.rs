//! Annotation through the server functions: who may fetch and submit what, what each annotator
//! sees, the protocol end to end, and concurrent submissions.

use crate::common;
mod gold;
mod history;
mod import_rules;
mod live_cal;
mod live_order;
mod reannotation;
pub(crate) mod search;
mod shared_service;
mod suggestions;
mod webhooks;

use app::domain::account::Role;
use app::model::annotate::{AnnotationOverview, DraftForm, QueueHead};
use common::TestApp;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::io::Write;

const PROJECT: &str = "p";

/// A project with the demo sample, one run of `pairs` pairs over its claims, a lead, the given
/// annotators as members, and the pool built at depth `pairs` (so every pair is pooled).
async fn setup(app: &TestApp, annotators: &[&str], pairs: usize) -> i64 {
    setup_with_depth(app, annotators, pairs, pairs).await
}

/// [`setup`] with the pool built at `depth` of the run's `pairs`.
async fn setup_with_depth(app: &TestApp, annotators: &[&str], pairs: usize, depth: usize) -> i64 {
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("demo");
    setup_from(app, annotators, pairs, depth, &demo.join("corpus.jsonl")).await
}

/// [`setup_with_depth`] with the corpus file `corpus` (the demo sample's documents, in its
/// order, perhaps with more fields).
async fn setup_from(
    app: &TestApp,
    annotators: &[&str],
    pairs: usize,
    depth: usize,
    corpus_file: &std::path::Path,
) -> i64 {
    let project = store::projects::create(&app.db, PROJECT, "", None)
        .await
        .unwrap();
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("demo");
    commands::import::corpus(
        &app.db,
        &crate::common::operator_lead(&app.db, project).await,
        corpus_file,
        None,
    )
    .await
    .unwrap();
    // Claims without their evidence, so every pooled pair waits for annotation.
    let claims_text = std::fs::read_to_string(demo.join("claims.jsonl")).unwrap();
    let claims: Vec<Value> = claims_text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let bare = app.dir.path().join("claims.jsonl");
    let mut f = std::fs::File::create(&bare).unwrap();
    for c in &claims {
        writeln!(
            f,
            "{}",
            json!({ "id": c["id"], "claim": c["claim"], "evidence": {}, "cited_doc_ids": [] })
        )
        .unwrap();
    }
    drop(f);
    commands::import::claims(
        &app.db,
        &crate::common::operator_lead(&app.db, project).await,
        &bare,
    )
    .await
    .unwrap();
    let corpus = std::fs::read_to_string(corpus_file).unwrap();
    let docs: Vec<String> = corpus
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["doc_id"].to_string())
        .collect();
    let run = app.dir.path().join("run.jsonl");
    let mut f = std::fs::File::create(&run).unwrap();
    // Decreasing confidences, all in [0, 1].
    let step = if pairs > 980 {
        0.98 / pairs as f64
    } else {
        0.001
    };
    for i in 0..pairs {
        let claim = &claims[i % claims.len()]["id"];
        let doc = &docs[i / claims.len() * 7 + i % 5 + 3];
        let p = 0.99 - i as f64 * step;
        writeln!(
            f,
            "{}",
            json!({ "claim_id": claim, "doc_id": doc.parse::<i64>().unwrap(), "predicted_label": "SUPPORT", "p_support": p, "p_contradict": 0.0 })
        )
        .unwrap();
    }
    drop(f);
    let import = commands::import::RunImport {
        path: run,
        format: Some(app::domain::formats::RunFormat::Canonical),
        options: Default::default(),
        system: commands::import::SystemSpec {
            name: Some("secret-system".into()),
            role: app::domain::pool::Role::Pooled,
            description: String::new(),
            negative_sampling_ratio: None,
        },
        allow_missing_docs: false,
    };
    commands::import::run(
        &app.db,
        &crate::common::operator_lead(&app.db, project).await,
        import,
    )
    .await
    .unwrap();
    app.add_lead("lead", PROJECT).await;
    for name in annotators {
        let id = app.add_user(name, Role::Annotator).await;
        store::projects::add_member(
            &app.db,
            project,
            id,
            app::domain::account::ProjectRole::Annotator,
            None,
        )
        .await
        .unwrap();
    }
    store::pool::build(
        &app.db,
        project,
        app::domain::pool::Strategy::Confidence,
        u32::try_from(depth).unwrap(),
        None,
    )
    .await
    .unwrap();
    project
}

async fn queue(app: &TestApp, client: &reqwest::Client) -> QueueHead {
    let res = client
        .post(app.url("/api/work/queue"))
        .form(&[("project", PROJECT)])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    res.json().await.unwrap()
}

async fn submit(
    app: &TestApp,
    client: &reqwest::Client,
    assignment: i64,
    form: Value,
) -> reqwest::Response {
    client
        .post(app.url("/api/work/submit"))
        .json(&json!({ "project": PROJECT, "assignment_id": assignment, "form": form, "seconds_spent": 4.5 }))
        .send()
        .await
        .unwrap()
}

fn support() -> Value {
    json!({ "no_evidence": false, "label": "SUPPORT", "sentences": [0], "specificity": "matches" })
}

fn contradict() -> Value {
    json!({ "no_evidence": false, "label": "CONTRADICT", "sentences": [1], "specificity": "evidence_more_general", "revised_claim": "A more general claim." })
}

fn clearly_nei() -> Value {
    json!({ "no_evidence": true })
}

async fn count(app: &TestApp, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(&app.db).await.unwrap()
}

async fn set_mode(app: &TestApp, mode: &str) {
    sqlx::query("UPDATE projects SET second_pass_mode = $1")
        .bind(mode)
        .execute(&app.db)
        .await
        .unwrap();
}

#[tokio::test]
async fn pool_pairs_are_assigned_balanced_and_served_shallowest_first() {
    let app = TestApp::spawn().await;
    setup(&app, &["a1", "a2", "a3"], 30).await;
    let open: Vec<(String, i64)> = sqlx::query_as(
        "SELECT u.username, COUNT(*) FROM assignments a JOIN users u ON u.id = a.annotator_id
         WHERE a.status = 'open' AND a.stage = 'first' GROUP BY u.username ORDER BY u.username",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(
        open,
        [("a1".into(), 10), ("a2".into(), 10), ("a3".into(), 10)]
    );
    // Each annotator's queue is in entry-depth order.
    let a1 = app.logged_in("a1").await;
    let head = queue(&app, &a1).await;
    assert_eq!(head.open, 10);
    let depths: Vec<i64> = sqlx::query_scalar(
        "SELECT e.entry_depth FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id
         JOIN users u ON u.id = a.annotator_id WHERE u.username = 'a1' ORDER BY e.entry_depth",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    let current = head.current.unwrap();
    let current_depth: i64 =
        sqlx::query_scalar("SELECT entry_depth FROM pool_entries WHERE id = $1")
            .bind(current.pool_entry_id)
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!(current_depth, depths[0]);
    assert!(head.next.is_some());
    // The annotator's view names no system, confidence or rank.
    let raw = a1
        .post(app.url("/api/work/queue"))
        .form(&[("project", PROJECT)])
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!raw.contains("secret-system"));
    assert!(!raw.contains("rank") && !raw.contains("confidence") && !raw.contains("0.99"));
}

/// Open assignments of pooled pairs per annotator of the project, counted by joining each
/// assignment to its pool entry (what `assignments.project_id` stands for).
const LOADS_BY_ENTRY: &str = "SELECT a.annotator_id, COUNT(*) FROM assignments a
     JOIN pool_entry_rows e ON e.id = a.pool_entry_id
     WHERE e.project_id = $1 AND a.status = 'open' GROUP BY a.annotator_id ORDER BY a.annotator_id";

#[tokio::test]
async fn assignments_name_their_pairs_project_and_loads_count_by_it() {
    let app = TestApp::spawn().await;
    let project = setup(&app, &["a1", "a2", "a3"], 30).await;
    // Each first pass submitted gives out a second pass, one assignment at a time.
    let a1 = app.logged_in("a1").await;
    for _ in 0..3 {
        let item = queue(&app, &a1).await.current.unwrap();
        let res = submit(&app, &a1, item.assignment_id.unwrap(), support()).await;
        assert!(res.status().is_success(), "{}", res.status());
    }
    let seconds = count(
        &app,
        "SELECT COUNT(*) FROM assignments WHERE stage = 'second'",
    )
    .await;
    assert_eq!(seconds, 3, "every first pass asked for a second");
    let mismatched = count(
        &app,
        "SELECT COUNT(*) FROM assignments a LEFT JOIN pool_entry_rows e ON e.id = a.pool_entry_id
         WHERE a.project_id IS DISTINCT FROM e.project_id",
    )
    .await;
    assert_eq!(mismatched, 0);
    let by_column: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT annotator_id, COUNT(*) FROM assignments
         WHERE project_id = $1 AND status = 'open' AND pool_entry_id IS NOT NULL
         GROUP BY annotator_id ORDER BY annotator_id",
    )
    .bind(project)
    .fetch_all(&app.db)
    .await
    .unwrap();
    let by_entry: Vec<(i64, i64)> = sqlx::query_as(LOADS_BY_ENTRY)
        .bind(project)
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert_eq!(by_column, by_entry);
    assert_eq!(by_entry.iter().map(|(_, n)| n).sum::<i64>(), 30);

    // The database refuses an assignment naming another project than its pair's, or none.
    let other = store::projects::create(&app.db, "other", "", None)
        .await
        .unwrap();
    for wrong in [Some(other), None] {
        let refused = sqlx::query(
            "INSERT INTO assignments (pool_entry_id, project_id, annotator_id, stage, status,
                                      queue_pos, created_at)
             SELECT e.id, $1, a.annotator_id, 'adjudication', 'open', 0, 0
             FROM pool_entry_rows e JOIN assignments a ON a.pool_entry_id = e.id LIMIT 1",
        )
        .bind(wrong)
        .execute(&app.db)
        .await;
        let err = refused
            .expect_err("a wrong project was written")
            .to_string();
        assert!(err.contains("names the project of its pool entry"), "{err}");
    }
    let moved = sqlx::query("UPDATE assignments SET project_id = $1")
        .bind(other)
        .execute(&app.db)
        .await;
    assert!(moved.is_err(), "an assignment moved to another project");
}

#[tokio::test]
async fn annotators_cannot_touch_or_read_others_items() {
    let app = TestApp::spawn().await;
    setup(&app, &["a1", "a2", "a3"], 12).await;
    set_mode(&app, "blind").await;
    let a1 = app.logged_in("a1").await;
    let a2 = app.logged_in("a2").await;
    let a3 = app.logged_in("a3").await;
    let mine = queue(&app, &a1).await.current.unwrap();
    let theirs = queue(&app, &a2).await.current.unwrap();
    // Submitting someone else's item: refused, nothing written.
    let res = submit(&app, &a1, theirs.assignment_id.unwrap(), support()).await;
    assert_eq!(res.status(), 404);
    assert!(common::error_message(res)
        .await
        .contains("not in your queue"));
    assert_eq!(count(&app, "SELECT COUNT(*) FROM judgments").await, 0);
    // Skip and flag of someone else's item: refused too.
    for (path, extra) in [("/api/work/skip", None), ("/api/work/flag", Some("look"))] {
        let mut form = vec![
            ("project", PROJECT.to_owned()),
            ("assignment_id", theirs.assignment_id.unwrap().to_string()),
        ];
        if let Some(note) = extra {
            form.push(("note", note.to_owned()));
        }
        let res = a1.post(app.url(path)).form(&form).send().await.unwrap();
        assert_eq!(res.status(), 404, "{path}");
    }
    // a1 gives the first pass; the second pass goes to someone else, who in blind mode does not
    // see the first label anywhere before submitting.
    let res = submit(&app, &a1, mine.assignment_id.unwrap(), contradict()).await;
    assert!(
        res.status().is_success(),
        "{}",
        common::error_message(res).await
    );
    let second: (i64, String) = sqlx::query_as(
        "SELECT a.id, u.username FROM assignments a JOIN users u ON u.id = a.annotator_id
         WHERE a.pool_entry_id = $1 AND a.stage = 'second' AND a.status = 'open'",
    )
    .bind(mine.pool_entry_id)
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_ne!(second.1, "a1");
    let client = if second.1 == "a2" { &a2 } else { &a3 };
    let mut seen_second = false;
    for _ in 0..20 {
        let head = queue(&app, client).await;
        let raw = serde_json::to_string(&head).unwrap();
        let Some(item) = head.current else { break };
        if item.assignment_id == Some(second.0) {
            seen_second = true;
            assert_eq!(item.stage, "second");
            assert!(item.first.is_none(), "blind mode shows no first label");
            assert!(item.opinions.is_empty());
            assert!(!raw.contains("CONTRADICT"), "{raw}");
            break;
        }
        // Work through earlier items (clearly no evidence) to reach it.
        let res = submit(&app, client, item.assignment_id.unwrap(), clearly_nei()).await;
        assert!(res.status().is_success());
    }
    assert!(seen_second);
    // Commenting on the pair (which would reveal the discussion) is refused before judging.
    let res = client
        .post(app.url("/api/work/comment"))
        .form(&[
            ("entry_id", mine.pool_entry_id.to_string()),
            ("body", "what did you say?".into()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    // After submitting, the second annotator learns the first label.
    let res = submit(&app, client, second.0, support()).await;
    assert!(res.status().is_success());
    let head: QueueHead = res.json().await.unwrap();
    let last = head.last.unwrap();
    assert_eq!(last.first_label.as_deref(), Some("CONTRADICT"));
    assert!(last.outcome.contains("adjudication"));
    // Having seen the first label, the blind second annotator cannot take their label back (and
    // resubmit the revealed one): the undo is refused within its window, nothing is retracted.
    assert!(!last.undoable);
    let judgments = count(&app, "SELECT COUNT(*) FROM judgments").await;
    let res = client
        .post(app.url("/api/work/undo"))
        .form(&[("project", PROJECT)])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 409);
    let text = common::error_message(res).await;
    assert!(text.contains("blind second pass"), "{text}");
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM judgments").await,
        judgments
    );
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM judgment_retractions").await,
        0
    );
    let stages: i64 = count(
        &app,
        "SELECT COUNT(*) FROM assignments WHERE stage = 'second' AND status = 'open'",
    )
    .await;
    assert_eq!(stages, 0, "no second pass reopened");
    // The queue still says so after a reload.
    assert_eq!(
        queue(&app, client).await.last.map(|l| l.undoable),
        Some(false)
    );
    // Lead functions are refused to annotators.
    for path in ["/api/lead/annotation", "/api/lead/annotation/open"] {
        let res = a1
            .post(app.url(path))
            .form(&[("project", PROJECT)])
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 403, "{path}");
    }
}

#[tokio::test]
async fn confirm_mode_shows_the_first_annotation_to_the_second_annotator() {
    let app = TestApp::spawn().await;
    setup(&app, &["a1", "a2"], 2).await;
    let a1 = app.logged_in("a1").await;
    let a2 = app.logged_in("a2").await;
    let (c1, c2) = (a1.clone(), a2.clone());
    // Whoever holds the shallowest pair gives the first pass.
    let (first, second) = if queue(&app, &c1)
        .await
        .current
        .is_some_and(|i| i.stage == "first")
    {
        (c1, c2)
    } else {
        (c2, c1)
    };
    let item = queue(&app, &first).await.current.unwrap();
    assert!(submit(&app, &first, item.assignment_id.unwrap(), support())
        .await
        .status()
        .is_success());
    let mut found = None;
    for _ in 0..5 {
        let head = queue(&app, &second).await;
        let it = head.current.unwrap();
        if it.pool_entry_id == item.pool_entry_id {
            found = Some(it);
            break;
        }
        assert!(
            submit(&app, &second, it.assignment_id.unwrap(), clearly_nei())
                .await
                .status()
                .is_success()
        );
    }
    let seen = found.expect("the second pass reaches the other annotator");
    assert_eq!(seen.stage, "second");
    let shown = seen.first.expect("confirm mode shows the first annotation");
    assert_eq!(shown.label, "SUPPORT");
    assert_eq!(shown.sentences, [0]);
    // Agreeing makes the label final. The second annotator saw the first label before judging,
    // so nothing is revealed by submitting: the confirm-mode second pass may be undone.
    let res = submit(&app, &second, seen.assignment_id.unwrap(), support()).await;
    assert!(res.status().is_success());
    let head: QueueHead = res.json().await.unwrap();
    assert_eq!(head.last.map(|l| l.undoable), Some(true));
    let finals: Vec<(String, String)> = sqlx::query_as(
        "SELECT f.label, f.provenance FROM final_labels f JOIN pool_entries e ON e.claim_id = f.claim_id AND e.doc_id = f.doc_id WHERE e.id = $1",
    )
    .bind(item.pool_entry_id)
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(finals, [("SUPPORT".into(), "pooling".into())]);
    // The judgment says the first annotation was confirmed as it was, field by field.
    let confirmed: Vec<(String, String)> = sqlx::query_as(
        "SELECT c.kept, c.edited FROM confirmations c JOIN judgment_rows j ON j.id = c.judgment_id
         JOIN judgment_rows f ON f.id = c.first_judgment_id
         WHERE j.stage = 'second' AND f.stage = 'first' AND f.claim_id = j.claim_id AND f.doc_id = j.doc_id",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(
        confirmed,
        [(
            r#"["label","rationale","specificity","revised_claim"]"#.into(),
            "[]".into()
        )]
    );
}

#[tokio::test]
async fn the_second_annotator_is_never_the_first_even_when_annotators_leave() {
    let app = TestApp::spawn().await;
    let project = setup(&app, &["a1", "a2", "a3"], 9).await;
    let lead = app.logged_in("lead").await;
    // a3 leaves: their open items go to a1 and a2.
    let res = lead
        .post(app.url("/api/lead/annotation/member"))
        .form(&[
            ("project", PROJECT),
            ("username", "a3"),
            ("active", "false"),
        ])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success());
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM assignments a JOIN users u ON u.id = a.annotator_id WHERE u.username = 'a3' AND a.status = 'open'").await,
        0
    );
    // Every first pass is a label, so every pair needs a second pass.
    for name in ["a1", "a2"] {
        let c = app.logged_in(name).await;
        loop {
            let head = queue(&app, &c).await;
            let Some(item) = head.current else { break };
            if item.stage != "first" {
                break;
            }
            assert!(submit(&app, &c, item.assignment_id.unwrap(), support())
                .await
                .status()
                .is_success());
        }
    }
    let same: i64 = count(
        &app,
        "SELECT COUNT(*) FROM assignments s JOIN judgments j ON j.stage = 'first'
           JOIN pool_entries e ON e.id = s.pool_entry_id AND e.claim_id = j.claim_id AND e.doc_id = j.doc_id
         WHERE s.stage = 'second' AND s.annotator_id = j.annotator_id",
    )
    .await;
    assert_eq!(same, 0);
    // Only a1 left: second passes a1 gave the first pass of cannot be given to anyone.
    let res = lead
        .post(app.url("/api/lead/annotation/member"))
        .form(&[
            ("project", PROJECT),
            ("username", "a2"),
            ("active", "false"),
        ])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success());
    let overview: AnnotationOverview = lead
        .post(app.url("/api/lead/annotation"))
        .form(&[("project", PROJECT)])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let a1_second_of_own: i64 = count(
        &app,
        "SELECT COUNT(*) FROM assignments s JOIN judgments j ON j.stage = 'first'
           JOIN pool_entries e ON e.id = s.pool_entry_id AND e.claim_id = j.claim_id AND e.doc_id = j.doc_id
         WHERE s.stage = 'second' AND s.annotator_id = j.annotator_id",
    )
    .await;
    assert_eq!(a1_second_of_own, 0);
    let a1_firsts = count(&app, "SELECT COUNT(*) FROM judgments j JOIN users u ON u.id = j.annotator_id WHERE u.username = 'a1' AND j.stage = 'first'").await;
    assert!(
        overview.unassigned >= a1_firsts,
        "{} < {a1_firsts}",
        overview.unassigned
    );
    // Each annotator's open items, counted independently through the pool entries.
    let shown: Vec<(String, i64)> = overview
        .annotators
        .iter()
        .map(|p| (p.username.clone(), p.open))
        .collect();
    let mut counted = Vec::new();
    for name in ["a1", "a2", "a3"] {
        let sql = format!(
            "SELECT COUNT(*) FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id
             JOIN users u ON u.id = a.annotator_id
             WHERE a.status = 'open' AND e.project_id = {project} AND u.username = '{name}'"
        );
        counted.push((name.to_owned(), count(&app, &sql).await));
    }
    assert_eq!(shown, counted);
    assert!(counted.iter().any(|(_, n)| *n > 0), "{counted:?}");
    // The open items per stage, counted the same way.
    let mut per_stage = Vec::new();
    for stage in ["first", "second", "adjudication"] {
        let sql = format!(
            "SELECT COUNT(*) FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id
             WHERE a.status = 'open' AND e.project_id = {project} AND a.stage = '{stage}'"
        );
        per_stage.push(count(&app, &sql).await);
    }
    let shown = [
        overview.open_first,
        overview.open_second,
        overview.open_adjudication,
    ];
    assert_eq!(shown.to_vec(), per_stage);
}

#[tokio::test]
async fn disagreement_goes_to_adjudication_with_comments_and_one_final_label() {
    let app = TestApp::spawn().await;
    setup(&app, &["a1", "a2"], 1).await;
    let a1 = app.logged_in("a1").await;
    let a2 = app.logged_in("a2").await;
    let (first, second) = if queue(&app, &a1).await.current.is_some() {
        (a1, a2)
    } else {
        (a2, a1)
    };
    let item = queue(&app, &first).await.current.unwrap();
    assert!(submit(&app, &first, item.assignment_id.unwrap(), support())
        .await
        .status()
        .is_success());
    let it = queue(&app, &second).await.current.unwrap();
    assert!(
        submit(&app, &second, it.assignment_id.unwrap(), contradict())
            .await
            .status()
            .is_success()
    );
    // The adjudication goes to one of the two, who sees both annotations.
    let (holder_client, other) = if queue(&app, &first).await.current.is_some() {
        (&first, &second)
    } else {
        (&second, &first)
    };
    let adj = queue(&app, holder_client).await.current.unwrap();
    assert_eq!(adj.stage, "adjudication");
    let labels: BTreeSet<String> = adj.opinions.iter().map(|o| o.label.clone()).collect();
    assert_eq!(
        labels,
        BTreeSet::from(["SUPPORT".into(), "CONTRADICT".into()])
    );
    // Both may discuss.
    for (c, text) in [
        (holder_client, "I read sentence 1 as support"),
        (other, "sentence 2 refutes the general case"),
    ] {
        let res = c
            .post(app.url("/api/work/comment"))
            .form(&[
                ("entry_id", item.pool_entry_id.to_string()),
                ("body", text.to_owned()),
            ])
            .send()
            .await
            .unwrap();
        assert!(res.status().is_success());
    }
    let adj = queue(&app, holder_client).await.current.unwrap();
    assert_eq!(adj.comments.len(), 2);
    let res = submit(
        &app,
        holder_client,
        adj.assignment_id.unwrap(),
        contradict(),
    )
    .await;
    assert!(res.status().is_success());
    // Submitting again, or the lead adjudicating after, changes nothing.
    let res = submit(&app, holder_client, adj.assignment_id.unwrap(), support()).await;
    assert_eq!(res.status(), 409);
    let lead = app.logged_in("lead").await;
    let res = lead
        .post(app.url("/api/lead/annotation/adjudicate"))
        .json(&json!({ "project": PROJECT, "entry_id": item.pool_entry_id, "form": support(), "seconds_spent": 1.0 }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 409);
    let finals: Vec<(String, String)> =
        sqlx::query_as("SELECT label, provenance FROM final_labels")
            .fetch_all(&app.db)
            .await
            .unwrap();
    assert_eq!(finals, [("CONTRADICT".into(), "pooling".into())]);
    // The audit trail has every submission and comment.
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM audit_events WHERE action = 'submit'"
        )
        .await,
        3
    );
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM audit_events WHERE action = 'comment'"
        )
        .await,
        2
    );
    let spec: (String, String) = sqlx::query_as(
        "SELECT j.specificity, j.revised_claim FROM final_labels f JOIN judgments j ON j.id = f.judgment_id",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(
        spec,
        (
            "evidence_more_general".into(),
            "A more general claim.".into()
        )
    );
}

/// An undo puts the item back with the answer it had (the form's fields as submitted), for its
/// annotator only; answered again, the item no longer carries it. The queue says the server's
/// time, against which the page closes the undo window.
#[tokio::test]
async fn an_undone_answer_comes_back_with_its_item() {
    let app = TestApp::spawn().await;
    setup(&app, &["a1", "a2"], 3).await;
    let a1 = app.logged_in("a1").await;
    let head = queue(&app, &a1).await;
    let item = head.current.unwrap();
    assert_eq!(item.undone, None);
    let answer = json!({
        "label": "SUPPORT",
        "sentences": [0],
        "specificity": "evidence_more_specific",
        "revised_claim": "In mice, the claim holds.",
        "note": "checked twice",
    });
    let res = submit(&app, &a1, item.assignment_id.unwrap(), answer.clone()).await;
    assert!(res.status().is_success());
    let before = store::now_ms();
    let head: QueueHead = a1
        .post(app.url("/api/work/undo"))
        .form(&[("project", PROJECT)])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let back = head.current.unwrap();
    assert_eq!(back.assignment_id, item.assignment_id);
    let expected: DraftForm = serde_json::from_value(answer.clone()).unwrap();
    assert_eq!(back.undone, Some(expected));
    assert_eq!(head.next.unwrap().undone, None);
    assert!(head.server_ms >= before && head.server_ms <= store::now_ms());
    // Read again (a reload), the answer is still there.
    let again = queue(&app, &a1).await.current.unwrap();
    assert_eq!(again.undone, back.undone);
    // Answered again: the item is done, and its next stage carries nothing of it.
    let res = submit(&app, &a1, item.assignment_id.unwrap(), answer).await;
    assert!(res.status().is_success());
    let head = queue(&app, &a1).await;
    assert!(head
        .current
        .iter()
        .chain(head.next.iter())
        .all(|i| i.undone.is_none()));
    let last = head.last.unwrap();
    assert!(last.undo_until_ms - head.server_ms <= app::domain::annotation::UNDO_WINDOW_MS);
    assert!(last.undo_until_ms > head.server_ms);
    let a2 = app.logged_in("a2").await;
    let theirs = queue(&app, &a2).await;
    assert!(theirs
        .current
        .iter()
        .chain(theirs.next.iter())
        .all(|i| i.undone.is_none()));
}

#[tokio::test]
async fn undo_skip_and_flag() {
    let app = TestApp::spawn().await;
    setup(&app, &["a1"], 3).await;
    let a1 = app.logged_in("a1").await;
    let head = queue(&app, &a1).await;
    let (first, next) = (head.current.unwrap(), head.next.unwrap());
    // Skip sends the current item to the end.
    let res = a1
        .post(app.url("/api/work/skip"))
        .form(&[
            ("project", PROJECT.to_owned()),
            ("assignment_id", first.assignment_id.unwrap().to_string()),
        ])
        .send()
        .await
        .unwrap();
    let head: QueueHead = res.json().await.unwrap();
    assert_eq!(
        head.current.as_ref().unwrap().assignment_id,
        next.assignment_id
    );
    // Flag with a note.
    let res = a1
        .post(app.url("/api/work/flag"))
        .form(&[
            ("project", PROJECT.to_owned()),
            ("assignment_id", next.assignment_id.unwrap().to_string()),
            ("note", "abstract is truncated".into()),
        ])
        .send()
        .await
        .unwrap();
    let head: QueueHead = res.json().await.unwrap();
    assert!(head.current.as_ref().unwrap().flagged);
    // Submit (clearly no evidence: final at once), then undo: the final label is withdrawn, the
    // judgment stays (retracted), the item is back in front.
    let res = submit(&app, &a1, next.assignment_id.unwrap(), clearly_nei()).await;
    assert!(res.status().is_success());
    assert_eq!(count(&app, "SELECT COUNT(*) FROM final_labels").await, 1);
    let res = a1
        .post(app.url("/api/work/undo"))
        .form(&[("project", PROJECT)])
        .send()
        .await
        .unwrap();
    assert!(
        res.status().is_success(),
        "{}",
        common::error_message(res).await
    );
    let head: QueueHead = res.json().await.unwrap();
    assert_eq!(head.current.unwrap().assignment_id, next.assignment_id);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM final_labels").await, 0);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM judgments").await, 1);
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM judgment_retractions").await,
        1
    );
    // Nothing left to undo.
    let res = a1
        .post(app.url("/api/work/undo"))
        .form(&[("project", PROJECT)])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 409);
    // Invalid forms are refused with the field named.
    let res = submit(
        &app,
        &a1,
        next.assignment_id.unwrap(),
        json!({ "label": "SUPPORT", "sentences": [], "specificity": "matches" }),
    )
    .await;
    assert_eq!(res.status(), 400);
    assert!(common::error_message(res).await.contains("rationale"));
    let res = submit(
        &app,
        &a1,
        next.assignment_id.unwrap(),
        json!({ "label": "SUPPORT", "sentences": [99], "specificity": "matches" }),
    )
    .await;
    assert_eq!(res.status(), 400);
    let audit: Vec<String> = sqlx::query_scalar("SELECT action FROM audit_events WHERE action IN ('skip', 'flag', 'submit', 'undo') ORDER BY id")
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert_eq!(audit, ["skip", "flag", "submit", "undo"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_submissions_never_lose_or_duplicate_a_judgment() {
    let app = TestApp::spawn().await;
    let names: Vec<String> = (1..=8).map(|i| format!("c{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    setup(&app, &refs, 40).await;
    let mut clients = HashMap::new();
    for n in &names {
        clients.insert(n.clone(), app.logged_in(n).await);
    }
    // Every annotator submits all their first passes at once, each item twice in parallel.
    let items: Vec<(String, i64)> = sqlx::query_as(
        "SELECT u.username, a.id FROM assignments a JOIN users u ON u.id = a.annotator_id WHERE a.status = 'open'",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    let mut tasks = Vec::new();
    for (name, id) in items.iter().flat_map(|x| [x.clone(), x.clone()]) {
        let client = clients[&name].clone();
        let url = app.url("/api/work/submit");
        tasks.push(tokio::spawn(async move {
            let res = client
                .post(url)
                .json(&json!({ "project": PROJECT, "assignment_id": id, "form": { "no_evidence": true }, "seconds_spent": 1.0 }))
                .send()
                .await
                .unwrap();
            let status = res.status().as_u16();
            if status == 500 {
                eprintln!("500: {}", res.text().await.unwrap_or_default());
            }
            status
        }));
    }
    let mut ok = 0;
    let mut conflict = 0;
    for t in tasks {
        match t.await.unwrap() {
            200 => ok += 1,
            409 => conflict += 1,
            other => panic!("status {other}"),
        }
    }
    assert_eq!(ok, items.len());
    assert_eq!(conflict, items.len());
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM judgments").await,
        items.len() as i64
    );
    assert_eq!(count(&app, "SELECT COUNT(*) FROM final_labels").await, 40);
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM (SELECT claim_id, doc_id FROM judgments GROUP BY claim_id, doc_id HAVING COUNT(*) > 1) twice").await,
        0
    );
}

/// A submission sent again under its key (the browser resends an answer whose reply it never
/// got: ui/annotate/unsent.rs) is answered like the first and stored once; the key is the
/// annotator's own, and a malformed one is refused.
#[tokio::test]
async fn a_submission_sent_again_under_its_key_is_stored_once() {
    let app = TestApp::spawn().await;
    setup(&app, &["k1", "k2"], 6).await;
    let (k1, k2) = (app.logged_in("k1").await, app.logged_in("k2").await);
    let keyed = |client: &reqwest::Client, assignment: i64, key: &str| {
        let body = json!({ "project": PROJECT, "assignment_id": assignment, "form": support(),
            "seconds_spent": 2.0, "submission_key": key });
        let request = client.post(app.url("/api/work/submit")).json(&body);
        async move { request.send().await.unwrap() }
    };
    let item = |head: &QueueHead| head.current.as_ref().and_then(|c| c.assignment_id).unwrap();
    let judgments = || count(&app, "SELECT COUNT(*) FROM judgment_rows");

    let first = item(&queue(&app, &k1).await);
    let res = keyed(&k1, first, "19c2f-aaaa").await;
    assert_eq!(res.status(), 200);
    let after: QueueHead = res.json().await.unwrap();
    assert_eq!(judgments().await, 1);
    // The same submission again: 200 with the queue as it now is, nothing written.
    let res = keyed(&k1, first, "19c2f-aaaa").await;
    assert_eq!(res.status(), 200);
    let again: QueueHead = res.json().await.unwrap();
    assert_eq!(item(&again), item(&after));
    assert_ne!(item(&again), first);
    assert_eq!(judgments().await, 1);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM submission_keys").await, 1);
    // Another key for the item already done is another submission, refused as before.
    assert_eq!(keyed(&k1, first, "19c2f-bbbb").await.status(), 409);
    // Another annotator's key may be spelled the same: it stores their own judgment.
    let theirs = item(&queue(&app, &k2).await);
    assert_eq!(keyed(&k2, theirs, "19c2f-aaaa").await.status(), 200);
    assert_eq!(judgments().await, 2);
    // A malformed key is refused before anything is written.
    let next = item(&queue(&app, &k1).await);
    let res = keyed(&k1, next, "not a key").await;
    assert_eq!(res.status(), 400);
    assert!(common::error_message(res).await.contains("submission key"));
    assert_eq!(judgments().await, 2);
    // Without a key (scripts, older pages) a submission is stored as before.
    assert_eq!(submit(&app, &k1, next, support()).await.status(), 200);
    assert_eq!(judgments().await, 3);
}

#[tokio::test]
async fn judgments_import_checks_the_protocol() {
    let app = TestApp::spawn().await;
    let project = setup(&app, &["a1", "a2"], 4).await;
    let pairs: Vec<(String, String)> = sqlx::query_as(
        "SELECT c.claim_id, d.doc_id FROM pool_entries e JOIN claims c ON c.id = e.claim_id JOIN documents d ON d.id = e.doc_id ORDER BY e.entry_depth",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    let write = |name: &str, lines: &[String]| {
        let path = app.dir.path().join(name);
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path
    };
    let lead = crate::common::operator_lead(&app.db, project).await;
    let import = |path: std::path::PathBuf, who: &str, stage: app::domain::annotation::Stage| {
        commands::import::judgments(
            &app.db,
            &lead,
            commands::import::JudgmentsImport {
                path,
                format: None,
                annotator: who.into(),
                stage,
            },
        )
    };
    use app::domain::annotation::Stage;
    let firsts: Vec<String> = pairs
        .iter()
        .map(|(c, d)| format!("{c} 0 {d} SUPPORT"))
        .collect();
    let report = import(write("first.qrels", &firsts), "a1", Stage::First)
        .await
        .unwrap();
    assert_eq!(report.rows, 4);
    // The second stage by the first annotator is refused, naming the line; nothing is written.
    let seconds: Vec<String> = pairs
        .iter()
        .map(|(c, d)| format!("{c} 0 {d} NEI"))
        .collect();
    let err = import(write("second.qrels", &seconds), "a1", Stage::Second)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("second.qrels:1"), "{err}");
    assert!(err.contains("someone else"), "{err}");
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM judgments WHERE stage = 'second'"
        )
        .await,
        0
    );
    // By a2 it lands; the disagreements go to adjudication.
    let report = import(write("second-a2.qrels", &seconds), "a2", Stage::Second)
        .await
        .unwrap();
    assert_eq!(report.rows, 4);
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM assignments WHERE stage = 'adjudication' AND status = 'open'"
        )
        .await,
        4
    );
    // A pair not in the pool and a bad label are reported with their lines.
    let bad = vec![
        format!("{} 0 999999 SUPPORT", pairs[0].0),
        format!("{} 0 {} MAYBE", pairs[1].0, pairs[1].1),
    ];
    let err = import(write("bad.qrels", &bad), "a1", Stage::Final)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad.qrels:1") && err.contains("bad.qrels:2"),
        "{err}"
    );
    // Final-stage import makes labels final.
    let finals: Vec<String> = pairs
        .iter()
        .map(|(c, d)| format!("{c} 0 {d} CONTRADICT"))
        .collect();
    let report = import(write("final.qrels", &finals), "lead", Stage::Final)
        .await
        .unwrap();
    assert_eq!(report.judgments, 4);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM final_labels WHERE provenance = 'import' AND label = 'CONTRADICT'").await, 4);
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM assignments WHERE status = 'open'"
        )
        .await,
        0
    );
    // The same file again is refused.
    assert!(import(write("final.qrels", &finals), "lead", Stage::Final)
        .await
        .is_err());
}

/// A canonical run of `systems` systems named `bulk-<i>`, each predicting every claim/abstract
/// pair of the demo sample (40 × 443 = 17,720 lines per system).
fn bulk_run(app: &TestApp, systems: usize) -> std::path::PathBuf {
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("demo");
    let ids = |file: &str, field: &str| -> Vec<String> {
        std::fs::read_to_string(demo.join(file))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()[field].to_string())
            .collect()
    };
    let (claims, docs) = (ids("claims.jsonl", "id"), ids("corpus.jsonl", "doc_id"));
    let path = app.dir.path().join("bulk.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for s in 0..systems {
        for (c, claim) in claims.iter().enumerate() {
            for (d, doc) in docs.iter().enumerate() {
                let p = ((s * 7 + c * 13 + d * 31) % 1000) as f64 / 1000.0;
                writeln!(
                    f,
                    "{{\"system\": \"bulk-{s}\", \"claim_id\": {claim}, \"doc_id\": {doc}, \"p_support\": {p}, \"p_contradict\": 0.0}}"
                )
                .unwrap();
            }
        }
    }
    f.flush().unwrap();
    path
}

/// Issue 13 (concurrency): 50 annotators keep submitting while a lead imports a
/// 1,010,040-line run, grows the pool and exports a release, all at once: no submission fails,
/// each accepted one is exactly one judgment row, and every lead action succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn submissions_never_fail_while_a_lead_imports_grows_the_pool_and_releases() {
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    let app = TestApp::spawn().await;
    let names: Vec<String> = (1..=50).map(|i| format!("w{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    // 2,400 pairs, pooled to depth 1,200 first: the lead grows it to 2,400 meanwhile.
    let project = setup_with_depth(&app, &refs, 2_400, 1_200).await;
    let mut clients = Vec::new();
    for n in &names {
        clients.push(app.logged_in(n).await);
    }
    // 57 systems × 40 claims × 443 abstracts.
    let run = bulk_run(&app, 57);
    let (import_done, lead_done) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let import = {
        let (db, done) = (app.db.clone(), import_done.clone());
        tokio::spawn(async move {
            let spec = commands::import::RunImport {
                path: run,
                format: Some(app::domain::formats::RunFormat::Canonical),
                options: Default::default(),
                system: commands::import::SystemSpec {
                    name: None,
                    role: app::domain::pool::Role::EvaluationOnly,
                    description: String::new(),
                    negative_sampling_ratio: None,
                },
                allow_missing_docs: false,
            };
            let started = Instant::now();
            let report =
                commands::import::run(&db, &crate::common::operator_lead(&db, project).await, spec)
                    .await;
            done.store(true, SeqCst);
            (report, started.elapsed())
        })
    };
    // The lead grows the pool and releases once the import is writing.
    let lead = {
        let (db, import_done, lead_done) = (app.db.clone(), import_done.clone(), lead_done.clone());
        tokio::spawn(async move {
            while sqlx::query_scalar::<_, i64>(
                "SELECT COUNT(*) FROM imports WHERE state = 'writing'",
            )
            .fetch_one(&db)
            .await
            .unwrap()
                == 0
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let grown = store::pool::build(
                &db,
                project,
                app::domain::pool::Strategy::Confidence,
                2_400,
                None,
            )
            .await;
            let grown_during_import = !import_done.load(SeqCst);
            let lead = common::operator_lead(&db, project).await;
            let released = commands::release::CreateRelease {
                partial: true,
                ..Default::default()
            }
            .run(&db, &lead)
            .await;
            let released_during_import = !import_done.load(SeqCst);
            lead_done.store(true, SeqCst);
            (
                grown,
                grown_during_import,
                released.map(|r| r.new),
                released_during_import,
            )
        })
    };
    let mut tasks = Vec::new();
    for (i, client) in clients.into_iter().enumerate() {
        let (queue_url, submit_url) = (app.url("/api/work/queue"), app.url("/api/work/submit"));
        let (import_done, lead_done) = (import_done.clone(), lead_done.clone());
        tasks.push(tokio::spawn(async move {
            // (status, submitted while the lead worked, milliseconds)
            let mut results = Vec::new();
            // Queue loads refused: status and body (a fault's reference is in the server log).
            let mut refused = Vec::new();
            let mut k = 0u64;
            while !(import_done.load(SeqCst) && lead_done.load(SeqCst)) {
                let res = client
                    .post(&queue_url)
                    .form(&[("project", PROJECT)])
                    .send()
                    .await
                    .unwrap();
                let status = res.status().as_u16();
                let body = res.text().await.unwrap_or_default();
                let head: QueueHead = match serde_json::from_str(&body) {
                    Ok(head) if status == 200 => head,
                    _ => {
                        refused.push(format!("{status}: {body}"));
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        continue;
                    }
                };
                let Some(item) = head.current else {
                    // The pool's growth brings new items.
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                };
                // Think time, spread over the sessions.
                k += 1;
                tokio::time::sleep(Duration::from_millis(150 + (i as u64 * 37 + k * 11) % 200)).await;
                let form = if item.stage == "first" && !(i as u64 + k).is_multiple_of(5) {
                    clearly_nei()
                } else {
                    support()
                };
                let during = !(import_done.load(SeqCst) && lead_done.load(SeqCst));
                let started = Instant::now();
                let res = client
                    .post(&submit_url)
                    .json(&json!({ "project": PROJECT, "assignment_id": item.assignment_id, "form": form, "seconds_spent": 1.0 }))
                    .send()
                    .await
                    .unwrap();
                let status = res.status().as_u16();
                if status != 200 {
                    eprintln!("{status}: {}", res.text().await.unwrap_or_default());
                }
                results.push((status, during, started.elapsed().as_millis()));
            }
            (results, refused)
        }));
    }
    let (mut results, mut refused) = (Vec::new(), Vec::new());
    for t in tasks {
        let (done, queue_refused) = t.await.unwrap();
        results.extend(done);
        refused.extend(queue_refused);
    }
    let (report, import_took) = import.await.unwrap();
    let report = report.unwrap();
    assert_eq!(report.rows, 57 * 40 * 443);
    let (grown, grown_during, released, released_during) = lead.await.unwrap();
    let grown = grown.unwrap();
    assert!(grown.added > 0, "the pool did not grow");
    assert!(released.unwrap(), "no new release");
    assert!(
        grown_during,
        "the pool grew after the import ended: make the run larger"
    );
    let failed: Vec<_> = results.iter().filter(|(s, _, _)| *s != 200).collect();
    assert!(failed.is_empty(), "failed submissions: {failed:?}");
    assert!(refused.is_empty(), "queue loads refused: {refused:?}");
    let during = results.iter().filter(|(_, d, _)| *d).count();
    assert!(
        during >= 100,
        "only {during} submissions overlapped the lead's work"
    );
    let mut ms: Vec<u128> = results.iter().map(|(_, _, ms)| *ms).collect();
    ms.sort_unstable();
    eprintln!(
        "{} submissions by 50 annotators, {during} during the lead's work (import {import_took:?}, pool grown by {} pairs, release during import: {released_during}); p50 {} ms, p99 {} ms, slowest {} ms (debug build)",
        results.len(),
        grown.added,
        ms[ms.len() / 2],
        ms[(ms.len() - 1) * 99 / 100],
        ms[ms.len() - 1]
    );
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM judgments").await,
        results.len() as i64
    );
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM systems WHERE ready = 1").await,
        58
    );
}
