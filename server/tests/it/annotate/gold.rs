//! Gold checks and qualification (issue 16), through the server functions: checks come at the
//! set rate and look like any item; their answers never become judgments, final labels or
//! release content; the lead's accuracy equals an independent count; a qualification gates
//! real items, with feedback in training, the pass mark deciding and the lead admitting by hand.

use super::{count, queue, submit, PROJECT};
use crate::common::TestApp;
use app::domain::account::{ProjectRole, Role};
use app::model::annotate::QueueHead;
use app::model::gold::GoldOverview;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The demo sample with its citation evidence, a run over its claims pooled at `depth`, a
/// lead, and the annotators; `gold_every` and the qualification set, citation pairs made gold.
async fn setup(app: &TestApp, annotators: &[&str], depth: u32, settings: [&str; 4]) -> i64 {
    setup_with(app, &[], annotators, depth, settings).await
}

/// [`setup`] with `members` in the project before the settings are made.
async fn setup_with(
    app: &TestApp,
    members: &[&str],
    annotators: &[&str],
    depth: u32,
    settings: [&str; 4],
) -> i64 {
    let project = store::projects::create(&app.db, PROJECT, "", None)
        .await
        .unwrap();
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("demo");
    commands::import::corpus(
        &app.db,
        &crate::common::operator_lead(&app.db, project).await,
        &demo.join("corpus.jsonl"),
        None,
    )
    .await
    .unwrap();
    commands::import::claims(
        &app.db,
        &crate::common::operator_lead(&app.db, project).await,
        &demo.join("claims.jsonl"),
    )
    .await
    .unwrap();
    let claims = crate::common::demo_lines("claims.jsonl");
    let docs = crate::common::demo_lines("corpus.jsonl");
    let run = app.dir.path().join("run.jsonl");
    let mut lines = String::new();
    for (i, claim) in claims.iter().enumerate() {
        for k in 0..4 {
            let doc = &docs[(i * 11 + k * 3) % docs.len()]["doc_id"];
            lines.push_str(&format!(
                "{}\n",
                json!({ "claim_id": claim["id"], "doc_id": doc, "predicted_label": "SUPPORT",
                        "p_support": 0.9 - k as f64 * 0.1, "p_contradict": 0.0 })
            ));
        }
    }
    std::fs::write(&run, lines).unwrap();
    let import = commands::import::RunImport {
        path: run,
        format: Some(app::domain::formats::RunFormat::Canonical),
        options: Default::default(),
        system: commands::import::SystemSpec {
            name: Some("sys".into()),
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
    let lead = app.logged_in("lead").await;
    let res = lead
        .post(app.url("/api/lead/gold/add"))
        .form(&[
            ("project", PROJECT),
            ("source", "citation"),
            ("count", ""),
            ("seed", "3"),
        ])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    for name in members {
        let id = app.add_user(name, Role::Annotator).await;
        store::projects::add_member(&app.db, project, id, ProjectRole::Annotator, None)
            .await
            .unwrap();
    }
    let [every, training, graded, pass] = settings;
    let res = lead
        .post(app.url("/api/lead/gold/settings"))
        .form(&[
            ("project", PROJECT),
            ("every", every),
            ("training", training),
            ("graded", graded),
            ("pass", pass),
        ])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    for name in annotators {
        let id = app.add_user(name, Role::Annotator).await;
        store::projects::add_member(&app.db, project, id, ProjectRole::Annotator, None)
            .await
            .unwrap();
    }
    store::pool::build(
        &app.db,
        project,
        app::domain::pool::Strategy::Confidence,
        depth,
        None,
    )
    .await
    .unwrap();
    project
}

/// The gold item behind an assignment (None: a real item).
async fn gold_of(app: &TestApp, assignment: i64) -> Option<(String, String)> {
    let row: Option<(Option<i64>,)> =
        sqlx::query_as("SELECT gold_item_id FROM assignments WHERE id = $1")
            .bind(assignment)
            .fetch_optional(&app.db)
            .await
            .unwrap();
    let item = row.and_then(|r| r.0)?;
    Some(
        sqlx::query_as("SELECT label, rationale FROM gold_items WHERE id = $1")
            .bind(item)
            .fetch_one(&app.db)
            .await
            .unwrap(),
    )
}

fn answer(label: &str) -> Value {
    match label {
        "NEI" => json!({ "no_evidence": false, "label": "NEI" }),
        l => {
            json!({ "no_evidence": false, "label": l, "sentences": [0], "specificity": "matches" })
        }
    }
}

async fn overview(app: &TestApp, lead: &reqwest::Client) -> GoldOverview {
    let res = lead
        .post(app.url("/api/lead/gold"))
        .form(&[("project", PROJECT)])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    res.json().await.unwrap()
}

/// The keys of an item view that a page could show; a gold check must have the same.
fn shape(head: &QueueHead) -> Vec<String> {
    let item = serde_json::to_value(head.current.as_ref().unwrap()).unwrap();
    let mut keys: Vec<String> = item
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| format!("{k}:{}", if v.is_null() { "null" } else { "set" }))
        .collect();
    keys.retain(|k| !k.starts_with("first:"));
    keys
}

#[tokio::test]
async fn gold_checks_come_at_the_set_rate_look_like_items_and_stay_out_of_judgments() {
    let app = TestApp::spawn().await;
    setup(&app, &["a1", "a2"], 160, ["4", "0", "0", ""]).await;
    let a1 = app.logged_in("a1").await;
    let judgments_before = count(&app, "SELECT COUNT(*) FROM judgment_rows").await;
    let finals_before = count(&app, "SELECT COUNT(*) FROM final_label_rows").await;
    let mut kinds = Vec::new();
    let mut real_shape = None;
    let mut gold_shape = None;
    let mut answered = Vec::new();
    for n in 0..24 {
        let head = queue(&app, &a1).await;
        let Some(item) = head.current.clone() else {
            break;
        };
        assert_eq!(item.stage, "first");
        let assignment = item.assignment_id.unwrap();
        let gold = gold_of(&app, assignment).await;
        let label = match &gold {
            // Right on even items, wrong on odd ones.
            Some((reference, _)) if n % 2 == 0 => reference.clone(),
            Some((reference, _)) if reference == "NEI" => "SUPPORT".into(),
            Some(_) => "NEI".into(),
            None => "SUPPORT".into(),
        };
        if gold.is_some() {
            gold_shape.get_or_insert_with(|| shape(&head));
            answered.push((gold.clone().unwrap().0, label.clone()));
        } else {
            real_shape.get_or_insert_with(|| shape(&head));
        }
        kinds.push(gold.is_some());
        let res = submit(&app, &a1, assignment, answer(&label)).await;
        assert!(res.status().is_success(), "{}", res.status());
        let last: QueueHead = queue(&app, &a1).await;
        let last = last.last.unwrap();
        assert!(last.undoable, "a check undoes like a first pass");
        assert!(last.feedback.is_none(), "a check shows no reference");
    }
    assert!(kinds.len() >= 20, "worked {} items", kinds.len());
    for (b, block) in kinds.chunks_exact(4).enumerate() {
        assert_eq!(
            block.iter().filter(|g| **g).count(),
            1,
            "block {b} of {kinds:?}"
        );
    }
    assert_eq!(gold_shape, real_shape, "a gold item looks like a real one");

    // Gold answers are no judgments and make no final label.
    let gold_answers = count(&app, "SELECT COUNT(*) FROM gold_answers").await;
    assert_eq!(gold_answers as usize, answered.len());
    let real = kinds.iter().filter(|g| !**g).count() as i64;
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM judgment_rows").await,
        judgments_before + real
    );
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM judgment_rows j JOIN assignments a ON a.id = j.assignment_id
             WHERE a.gold_item_id IS NOT NULL"
        )
        .await,
        0
    );
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM final_label_rows").await,
        finals_before,
        "first passes and gold answers decide nothing alone"
    );
    // A wrong gold answer leaves the pair's final label at the reference.
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM gold_results r JOIN final_labels f
               ON f.claim_id = r.claim_id AND f.doc_id = r.doc_id
             WHERE f.label != r.reference_label"
        )
        .await,
        0
    );

    // The lead's accuracy equals the count of right answers.
    let lead = app.logged_in("lead").await;
    let o = overview(&app, &lead).await;
    let a = o.annotators.iter().find(|a| a.username == "a1").unwrap();
    let right = answered.iter().filter(|(r, l)| r == l).count() as u64;
    assert_eq!(a.checks.answered, answered.len() as u64);
    assert_eq!(a.checks.correct, right);
    assert_eq!(
        a.checks.accuracy,
        Some(right as f64 / answered.len() as f64)
    );
    let mut confusion: BTreeMap<(String, String), u64> = BTreeMap::new();
    for (r, l) in &answered {
        *confusion.entry((r.clone(), l.clone())).or_default() += 1;
    }
    let labels = app::model::gold::LABELS;
    for (i, r) in labels.iter().enumerate() {
        for (j, l) in labels.iter().enumerate() {
            let expected = confusion
                .get(&(r.to_string(), l.to_string()))
                .copied()
                .unwrap_or(0);
            assert_eq!(a.checks.confusion[i][j], expected, "{r} answered {l}");
        }
    }
    assert_eq!(
        a.drift.iter().map(|d| d.answered).sum::<u64>(),
        answered.len() as u64
    );
    // Annotators cannot see any of it.
    let res = a1
        .post(app.url("/api/lead/gold"))
        .form(&[("project", PROJECT)])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
}

#[tokio::test]
async fn undoing_a_gold_check_brings_it_back_like_any_item() {
    let app = TestApp::spawn().await;
    setup(&app, &["a1", "a2"], 160, ["2", "0", "0", ""]).await;
    let a1 = app.logged_in("a1").await;
    // Work until the current item is a gold check.
    let mut item = None;
    for _ in 0..4 {
        let head = queue(&app, &a1).await;
        let current = head.current.unwrap();
        let id = current.assignment_id.unwrap();
        if gold_of(&app, id).await.is_some() {
            item = Some(current);
            break;
        }
        assert!(submit(&app, &a1, id, answer("SUPPORT"))
            .await
            .status()
            .is_success());
    }
    let item = item.expect("a check within two blocks");
    let id = item.assignment_id.unwrap();
    assert!(submit(&app, &a1, id, answer("NEI"))
        .await
        .status()
        .is_success());
    let res = a1
        .post(app.url("/api/work/undo"))
        .form(&[("project", PROJECT)])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    let head: QueueHead = res.json().await.unwrap();
    assert_eq!(head.current.unwrap().assignment_id, Some(id));
    assert_eq!(count(&app, "SELECT COUNT(*) FROM gold_results").await, 0);
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM gold_answer_retractions").await,
        1
    );
}

#[tokio::test]
async fn a_qualification_gates_real_items_and_never_touches_the_release() {
    let app = TestApp::spawn().await;
    let project = setup(&app, &[], 160, ["", "2", "3", "0.6"]).await;
    let input_before = store::release::input(&app.db, project).await.unwrap();
    let judgments_before = count(&app, "SELECT COUNT(*) FROM judgment_rows").await;
    let finals_before = count(&app, "SELECT COUNT(*) FROM final_label_rows").await;
    for name in ["good", "poor"] {
        let id = app.add_user(name, Role::Annotator).await;
        store::projects::add_member(&app.db, project, id, ProjectRole::Annotator, None)
            .await
            .unwrap();
    }
    let real_items = |name: &'static str| {
        let app = &app;
        async move {
            count(
                app,
                &format!(
                    "SELECT COUNT(*) FROM assignments a JOIN users u ON u.id = a.annotator_id
                     WHERE u.username = '{name}' AND a.pool_entry_id IS NOT NULL"
                ),
            )
            .await
        }
    };
    assert_eq!(real_items("good").await, 0, "a candidate gets no real item");

    for (name, right) in [
        ("good", [true, false, true]),
        ("poor", [false, false, true]),
    ] {
        let client = app.logged_in(name).await;
        let head = queue(&app, &client).await;
        let q = head.qualification.clone().expect("a candidate");
        assert_eq!(
            (q.phase.as_str(), q.training_done, q.training),
            ("training", 0, 2)
        );
        // Training: the reference follows each answer.
        for _ in 0..2 {
            let head = queue(&app, &client).await;
            let id = head.current.unwrap().assignment_id.unwrap();
            let (reference, rationale) = gold_of(&app, id).await.expect("a gold item");
            let res = submit(&app, &client, id, answer("NEI")).await;
            assert!(res.status().is_success(), "{}", res.status());
            let last = queue(&app, &client).await.last.unwrap();
            let feedback = last.feedback.expect("feedback after a training item");
            assert_eq!(feedback.label, reference);
            assert_eq!(feedback.agrees, reference == "NEI");
            let sentences: Vec<Vec<u32>> = serde_json::from_str(&rationale).unwrap();
            let mut all: Vec<u32> = sentences.into_iter().flatten().collect();
            all.sort_unstable();
            all.dedup();
            assert_eq!(feedback.sentences, all);
            assert!(!last.undoable);
        }
        for ok in right {
            let head = queue(&app, &client).await;
            assert_eq!(head.qualification.as_ref().unwrap().phase, "graded");
            let id = head.current.unwrap().assignment_id.unwrap();
            let (reference, _) = gold_of(&app, id).await.unwrap();
            let label = if ok {
                reference.clone()
            } else if reference == "NEI" {
                "SUPPORT".to_owned()
            } else {
                "NEI".to_owned()
            };
            assert!(submit(&app, &client, id, answer(&label))
                .await
                .status()
                .is_success());
            assert!(queue(&app, &client).await.last.unwrap().feedback.is_none());
        }
    }
    // good: 2 of 3 ≥ 0.6 → admitted, with real items; poor: 1 of 3 → failed, none.
    let good = app.logged_in("good").await;
    let head = queue(&app, &good).await;
    assert!(head.qualification.is_none());
    assert!(real_items("good").await > 0);
    let current = head.current.expect("a real item");
    assert!(gold_of(&app, current.assignment_id.unwrap())
        .await
        .is_none());
    let poor = app.logged_in("poor").await;
    let head = queue(&app, &poor).await;
    let q = head.qualification.expect("still a candidate");
    assert_eq!((q.phase.as_str(), q.correct), ("failed", Some(1)));
    assert!(head.current.is_none());
    // good's first pass needs a second annotator: not poor, who failed.
    let id = current.assignment_id.unwrap();
    assert!(submit(&app, &good, id, answer("SUPPORT"))
        .await
        .status()
        .is_success());
    assert_eq!(real_items("poor").await, 0);
    let judgments_before = judgments_before + 1;

    // Nothing of it reached the judgments, the final labels or the release.
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM judgment_rows").await,
        judgments_before
    );
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM final_label_rows").await,
        finals_before
    );
    assert_eq!(
        store::release::input(&app.db, project).await.unwrap(),
        input_before
    );

    // The lead sees both scores and admits the one who failed.
    let lead = app.logged_in("lead").await;
    let o = overview(&app, &lead).await;
    let standing: Vec<(String, u64, u64, String)> = o
        .candidates
        .iter()
        .map(|c| {
            (
                c.username.clone(),
                c.graded_done,
                c.correct,
                c.standing.clone(),
            )
        })
        .collect();
    assert_eq!(
        standing,
        [
            ("good".into(), 3, 2, "admitted".into()),
            ("poor".into(), 3, 1, "failed".into())
        ]
    );
    let poor_gold = o.annotators.iter().find(|a| a.username == "poor").unwrap();
    assert_eq!(
        (poor_gold.graded.answered, poor_gold.graded.correct),
        (3, 1)
    );
    let res = lead
        .post(app.url("/api/lead/gold/admit"))
        .form(&[("project", PROJECT), ("username", "poor")])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    // Admitted, poor takes the second pass that waited.
    let head = queue(&app, &poor).await;
    assert!(head.qualification.is_none());
    assert_eq!(
        head.current.expect("the waiting second pass").stage,
        "second"
    );
    let o = overview(&app, &lead).await;
    let poor = o.candidates.iter().find(|c| c.username == "poor").unwrap();
    assert_eq!(
        (poor.standing.as_str(), poor.admitted_by.as_deref()),
        ("admitted", Some("lead"))
    );
}

#[tokio::test]
async fn members_before_the_qualification_keep_their_items_and_newcomers_qualify() {
    let app = TestApp::spawn().await;
    setup_with(&app, &["veteran"], &["newcomer"], 160, ["", "1", "1", "1"]).await;
    let veteran = app.logged_in("veteran").await;
    let head = queue(&app, &veteran).await;
    assert!(head.qualification.is_none());
    let item = head.current.expect("a real item");
    assert!(gold_of(&app, item.assignment_id.unwrap()).await.is_none());
    let newcomer = app.logged_in("newcomer").await;
    let head = queue(&app, &newcomer).await;
    assert_eq!(head.qualification.expect("a candidate").phase, "training");
    assert!(gold_of(&app, head.current.unwrap().assignment_id.unwrap())
        .await
        .is_some());
}

#[tokio::test]
async fn a_gold_answer_sent_again_under_its_key_is_stored_once() {
    let app = TestApp::spawn().await;
    setup(&app, &["a1"], 160, ["2", "0", "0", ""]).await;
    let a1 = app.logged_in("a1").await;
    let keyed = |assignment: i64, key: &str| {
        let body = json!({ "project": PROJECT, "assignment_id": assignment,
            "form": answer("NEI"), "seconds_spent": 2.0, "submission_key": key });
        let request = a1.post(app.url("/api/work/submit")).json(&body);
        async move { request.send().await.unwrap() }
    };
    // Work, each answer under its own key, until the current item is a gold check.
    let mut check = None;
    for n in 0..4 {
        let id = queue(&app, &a1)
            .await
            .current
            .unwrap()
            .assignment_id
            .unwrap();
        if gold_of(&app, id).await.is_some() {
            check = Some(id);
            break;
        }
        assert_eq!(keyed(id, &format!("19c30-{n:04}")).await.status(), 200);
    }
    let check = check.expect("a check within two blocks");
    let answers = || count(&app, "SELECT COUNT(*) FROM gold_answers");
    assert_eq!(answers().await, 0);
    let res = keyed(check, "19c30-9999").await;
    assert_eq!(res.status(), 200);
    let after: QueueHead = res.json().await.unwrap();
    assert_eq!(answers().await, 1);
    // The same answer again (its reply was lost): 200, the queue as it is, nothing written.
    let res = keyed(check, "19c30-9999").await;
    assert_eq!(res.status(), 200);
    let again: QueueHead = res.json().await.unwrap();
    assert_eq!(
        again.current.and_then(|c| c.assignment_id),
        after.current.and_then(|c| c.assignment_id)
    );
    assert_eq!(answers().await, 1);
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM gold_submission_keys").await,
        1
    );
    // Another key for the check already answered is another submission, refused as before.
    assert_eq!(keyed(check, "19c30-aaaa").await.status(), 409);
}
