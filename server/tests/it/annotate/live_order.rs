//! Live judging orders (issue 15): the first passes served under `mtf` and `mab-thompson` are
//! the domain selector's, step by step, given the same labels; what counts as evidence; the
//! budget; the lead's settings and what switching does to the queues.

use super::{clearly_nei, count, queue, submit, support, PROJECT};
use crate::common::TestApp;
use crate::support::serve::Server;
use app::domain::account::Role;
use app::domain::judging::{label_so_far, Order, Selector};
use app::domain::pool::{Pair, Strategy};
use app::model::annotate::{AnnotationOverview, ItemView, QueueHead};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::Write;

pub(super) type RowPair = Pair<i64, i64>;

fn nei_after_reading() -> Value {
    json!({ "no_evidence": false, "label": "NEI" })
}

/// A project with the demo corpus and bare claims, one pooled system per ranking of
/// `(claim index, doc index)` pairs (best first), the annotators, a lead, `order` set before the
/// pool is built at a depth that pools every pair. Returns the rankings as row-id pairs.
async fn setup(
    app: &TestApp,
    annotators: &[&str],
    rankings: &[Vec<(usize, usize)>],
    order: Option<(Order, u64, Option<u64>)>,
) -> (i64, Vec<Vec<RowPair>>) {
    setup_at(app, annotators, rankings, order, None).await
}

/// [`setup`] with the pool built at `depth` (None: deep enough to pool every pair).
pub(super) async fn setup_at(
    app: &TestApp,
    annotators: &[&str],
    rankings: &[Vec<(usize, usize)>],
    order: Option<(Order, u64, Option<u64>)>,
    depth: Option<usize>,
) -> (i64, Vec<Vec<RowPair>>) {
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
    let claims: Vec<Value> = crate::common::demo_lines("claims.jsonl");
    let docs: Vec<Value> = crate::common::demo_lines("corpus.jsonl");
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
    for (s, ranking) in rankings.iter().enumerate() {
        let run = app.dir.path().join(format!("run-{s}.jsonl"));
        let mut f = std::fs::File::create(&run).unwrap();
        for (i, &(claim, doc)) in ranking.iter().enumerate() {
            writeln!(
                f,
                "{}",
                json!({ "claim_id": claims[claim]["id"], "doc_id": docs[doc]["doc_id"], "predicted_label": "SUPPORT", "p_support": 0.99 - i as f64 * 0.01, "p_contradict": 0.0 })
            )
            .unwrap();
        }
        drop(f);
        let import = commands::import::RunImport {
            path: run,
            format: Some(app::domain::formats::RunFormat::Canonical),
            options: Default::default(),
            system: commands::import::SystemSpec {
                name: Some(format!("secret-system-{s}")),
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
    }
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
    if let Some((order, seed, budget)) = order {
        let settings = app::domain::judging::JudgingSettings {
            order: order.into(),
            seed,
            budget,
            ..Default::default()
        };
        store::annotate::set_judging(&app.db, project, settings, None)
            .await
            .unwrap();
    }
    let depth = depth.unwrap_or_else(|| rankings.iter().map(Vec::len).max().unwrap());
    store::pool::build(
        &app.db,
        project,
        Strategy::Confidence,
        u32::try_from(depth).unwrap(),
        None,
    )
    .await
    .unwrap();
    let mut rows = Vec::new();
    for ranking in rankings {
        let mut list = Vec::new();
        for &(claim, doc) in ranking {
            list.push(row_pair(app, &claims[claim]["id"], &docs[doc]["doc_id"]).await);
        }
        rows.push(list);
    }
    (project, rows)
}

/// The row ids of a pair named by its external ids (as the demo files write them).
async fn row_pair(app: &TestApp, claim: &Value, doc: &Value) -> RowPair {
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    let claim: i64 = sqlx::query_scalar("SELECT id FROM claims WHERE claim_id = $1")
        .bind(text(claim))
        .fetch_one(&app.db)
        .await
        .unwrap();
    let doc: i64 = sqlx::query_scalar("SELECT id FROM documents WHERE doc_id = $1")
        .bind(text(doc))
        .fetch_one(&app.db)
        .await
        .unwrap();
    Pair::new(claim, doc)
}

/// The row-id pair of an item.
pub(super) async fn pair_of(app: &TestApp, item: &ItemView) -> RowPair {
    let (claim, doc): (i64, i64) =
        sqlx::query_as("SELECT claim_id, doc_id FROM pool_entries WHERE id = $1")
            .bind(item.pool_entry_id)
            .fetch_one(&app.db)
            .await
            .unwrap();
    Pair::new(claim, doc)
}

/// Three overlapping systems over 5 claims × 12 docs.
pub(super) fn three_systems() -> Vec<Vec<(usize, usize)>> {
    let mut rankings = Vec::new();
    for s in 0..3_usize {
        let mut list = Vec::new();
        for i in 0..24_usize {
            // Each system walks the grid with its own stride; overlaps on purpose.
            let k = (i * (5 + 2 * s) + 3 * s) % 60;
            let pair = (k % 5, 10 + k / 5);
            if !list.contains(&pair) {
                list.push(pair);
            }
        }
        rankings.push(list);
    }
    rankings
}

/// What an annotator labels a pair (by its position in the grid): evidence for some, NEI after
/// reading for others, "clearly no evidence" for the rest.
pub(super) fn label_for(pair: RowPair) -> (Value, bool) {
    match (pair.claim * 7 + pair.doc * 3) % 5 {
        0 | 1 => (support(), true),
        2 => (nei_after_reading(), false),
        _ => (clearly_nei(), false),
    }
}

/// One annotator judges every first pass the queue serves, asking `servers` in turn (a server's
/// base URL and the annotator's client logged in there); before each, the pair served must be
/// the one a fresh domain selector proposes given the labels so far (the domain's reading of the
/// pairs' states, from the database). Returns the pairs served.
async fn serve_in_turn(
    app: &TestApp,
    project: i64,
    rankings: &[Vec<RowPair>],
    (order, seed): (Order, u64),
    servers: &[(String, reqwest::Client)],
) -> Vec<RowPair> {
    let mut labels: HashMap<RowPair, bool> = HashMap::new();
    let mut served = Vec::new();
    for step in 0.. {
        let (base, client) = &servers[step % servers.len()];
        let res = client
            .post(format!("{base}/api/work/queue"))
            .form(&[("project", PROJECT)])
            .send()
            .await
            .unwrap();
        assert!(res.status().is_success(), "queue: {}", res.status());
        let head: QueueHead = res.json().await.unwrap();
        let expected = Selector::new(Strategy::Confidence, rankings.to_vec(), order, seed)
            .unwrap()
            .with_labels(labels.iter().map(|(p, e)| (*p, *e)))
            .unwrap()
            .next_pair();
        let Some(item) = head.current.clone() else {
            assert_eq!(
                expected, None,
                "{order}: the queue ran dry before the selector"
            );
            break;
        };
        assert_eq!(item.stage, "first");
        let pair = pair_of(app, &item).await;
        let on = step % servers.len();
        assert_eq!(Some(pair), expected, "{order}: step {step}, on server {on}");
        served.push(pair);
        let res = client
            .post(format!("{base}/api/work/submit"))
            .json(&json!({ "project": PROJECT, "assignment_id": item.assignment_id, "form": label_for(pair).0, "seconds_spent": 2.0 }))
            .send()
            .await
            .unwrap();
        assert!(res.status().is_success(), "submit: {}", res.status());
        labels = labels_so_far(app, project).await;
    }
    served
}

/// [`serve_in_turn`] on the test's one server.
async fn served_sequence_equals_selector(order: Order, seed: u64) {
    let app = TestApp::spawn().await;
    let (project, rankings) =
        setup(&app, &["solo"], &three_systems(), Some((order, seed, None))).await;
    let distinct: std::collections::BTreeSet<RowPair> =
        rankings.iter().flatten().copied().collect();
    // Nothing was pre-assigned: the order serves first passes when asked.
    assert_eq!(count(&app, "SELECT COUNT(*) FROM assignments").await, 0);
    let servers = [(app.url(""), app.logged_in("solo").await)];
    let served = serve_in_turn(&app, project, &rankings, (order, seed), &servers).await;
    assert_eq!(served.len(), distinct.len());
    // Each label is what the annotator gave: evidence exactly for the SUPPORT ones.
    let labels = labels_so_far(&app, project).await;
    for pair in &served {
        assert_eq!(labels.get(pair).copied(), Some(label_for(*pair).1));
    }
    // The order made a difference: not the depth sequence.
    let depth: Vec<RowPair> = {
        let mut s = Selector::new(Strategy::Confidence, rankings.clone(), Order::Depth, 0).unwrap();
        let mut out = Vec::new();
        while let Some(p) = s.next_pair() {
            out.push(p);
            s.record(p, label_for(p).1).unwrap();
        }
        out
    };
    assert_ne!(served, depth, "{order} served the depth order");
}

/// Two servers of one database (the test's own and a `claimpool serve` process) serve one
/// annotator in turn, a step on one and the next on the other (issue 40: behind a load
/// balancer): each server's live selector, kept in its own memory, takes in the labels the
/// other stored, so the pairs served are still the domain selector's, step by step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_in_turn_serve_the_selectors_sequence() {
    let (order, seed) = (Order::Mtf, 0);
    let app = TestApp::spawn().await;
    let (project, rankings) =
        setup(&app, &["solo"], &three_systems(), Some((order, seed, None))).await;
    let distinct: std::collections::BTreeSet<RowPair> =
        rankings.iter().flatten().copied().collect();
    let mut other = Server::start(&app.db_arg, &app.dir.path().join("other"), &[]);
    assert!(other.ready().await, "{}", other.log());
    let servers = [
        (app.url(""), app.logged_in("solo").await),
        (other.url(""), other.logged_in("solo").await),
    ];
    let served = serve_in_turn(&app, project, &rankings, (order, seed), &servers).await;
    assert_eq!(served.len(), distinct.len());
}

/// The labels so far by the protocol states of the pairs' judgments.
pub(super) async fn labels_so_far(app: &TestApp, project: i64) -> HashMap<RowPair, bool> {
    let rows: Vec<(i64, i64, String, Option<i64>, String, i64)> = sqlx::query_as(
        "SELECT claim_id, doc_id, stage, annotator_id, label, no_evidence FROM judgments
         WHERE project_id = $1 AND id NOT IN (SELECT judgment_id FROM judgment_retractions)
         ORDER BY claim_id, doc_id, id",
    )
    .bind(project)
    .fetch_all(&app.db)
    .await
    .unwrap();
    let mut judged: HashMap<RowPair, Vec<app::domain::annotation::Judged>> = HashMap::new();
    for (claim, doc, stage, annotator, label, no_evidence) in rows {
        let label = app::domain::label::Label::parse(&label).unwrap();
        let verdict =
            app::domain::annotation::Verdict::from_columns(label, no_evidence != 0).unwrap();
        let judged_row = app::domain::annotation::Judged::new(
            app::domain::annotation::Stage::parse(&stage).unwrap(),
            annotator.map(app::domain::annotation::AnnotatorId),
            verdict,
        )
        .unwrap();
        judged
            .entry(Pair::new(claim, doc))
            .or_default()
            .push(judged_row);
    }
    judged
        .into_iter()
        .filter_map(|(pair, list)| {
            let state = app::domain::annotation::PairState::from_judgments(&list).unwrap();
            label_so_far(&state).map(|e| (pair, e))
        })
        .collect()
}

#[tokio::test]
async fn mtf_serves_the_selectors_sequence() {
    served_sequence_equals_selector(Order::Mtf, 0).await;
}

#[tokio::test]
async fn mab_thompson_serves_the_selectors_sequence_for_its_seed() {
    served_sequence_equals_selector(Order::MabThompson, 42).await;
}

/// Two disjoint systems A = a1..a4 and B = b1..b4 (claim 0 and claim 1).
fn two_systems() -> Vec<Vec<(usize, usize)>> {
    vec![
        (0..4).map(|d| (0, 20 + d)).collect(),
        (0..4).map(|d| (1, 30 + d)).collect(),
    ]
}

/// Under `mtf`: a first-pass SUPPORT counts as evidence (the order stays with A) until the
/// second pass disagrees; then it counts as NEI (A drops below B). With `agree`, the second
/// pass confirms and A keeps the lead.
async fn first_pass_counts_until_the_second_disagrees(agree: bool) {
    let app = TestApp::spawn().await;
    let (_, r) = setup(
        &app,
        &["ann1", "ann2"],
        &two_systems(),
        Some((Order::Mtf, 0, None)),
    )
    .await;
    let (a, b) = (&r[0], &r[1]);
    let ann1 = app.logged_in("ann1").await;
    let ann2 = app.logged_in("ann2").await;
    let head = queue(&app, &ann1).await;
    let item = head.current.unwrap();
    assert_eq!(pair_of(&app, &item).await, a[0]);
    // a1 SUPPORT: evidence so far, mtf stays with A.
    let head: app::model::annotate::QueueHead =
        submit(&app, &ann1, item.assignment_id.unwrap(), support())
            .await
            .json()
            .await
            .unwrap();
    let ann1_item = head.current.unwrap();
    assert_eq!(pair_of(&app, &ann1_item).await, a[1]);
    // ann2 holds a1's second pass and takes a first pass: a2 is held (counted as evidence for
    // the choice), so a3.
    let head = queue(&app, &ann2).await;
    let second = head.current.unwrap();
    assert_eq!(
        (second.stage.as_str(), pair_of(&app, &second).await),
        ("second", a[0])
    );
    let ann2_first = head.next.unwrap();
    assert_eq!(
        (ann2_first.stage.as_str(), pair_of(&app, &ann2_first).await),
        ("first", a[2])
    );
    let verdict = if agree {
        support()
    } else {
        nei_after_reading()
    };
    let res = submit(&app, &ann2, second.assignment_id.unwrap(), verdict).await;
    assert!(res.status().is_success(), "{}", res.status());
    // ann1 labels a2 SUPPORT and asks for the next. If a1 still counted as evidence, A (0) would
    // tie B (0) and win on index: a4 (a3 is held). Disagreed, A is at -1: B's top, b1.
    let head: app::model::annotate::QueueHead =
        submit(&app, &ann1, ann1_item.assignment_id.unwrap(), support())
            .await
            .json()
            .await
            .unwrap();
    // ann1 may hold a1's adjudication too: the first pass is the one of stage first.
    let next = [head.current, head.next]
        .into_iter()
        .flatten()
        .find(|item| item.stage == "first")
        .expect("a first pass");
    let expected = if agree { a[3] } else { b[0] };
    assert_eq!(pair_of(&app, &next).await, expected, "agree: {agree}");
}

#[tokio::test]
async fn a_first_pass_label_counts_as_evidence_until_the_second_pass_disagrees() {
    first_pass_counts_until_the_second_disagrees(false).await;
}

#[tokio::test]
async fn a_confirmed_first_pass_label_keeps_counting_as_evidence() {
    first_pass_counts_until_the_second_disagrees(true).await;
}

#[tokio::test]
async fn clearly_no_evidence_and_a_final_nei_count_as_nei() {
    let app = TestApp::spawn().await;
    let (_, r) = setup(
        &app,
        &["ann1", "ann2"],
        &two_systems(),
        Some((Order::Mtf, 0, None)),
    )
    .await;
    let (a, b) = (&r[0], &r[1]);
    let ann1 = app.logged_in("ann1").await;
    let ann2 = app.logged_in("ann2").await;
    // "Clearly no evidence" on a1: final NEI, A drops to -1, B's b1 next.
    let item = queue(&app, &ann1).await.current.unwrap();
    assert_eq!(pair_of(&app, &item).await, a[0]);
    let head: app::model::annotate::QueueHead =
        submit(&app, &ann1, item.assignment_id.unwrap(), clearly_nei())
            .await
            .json()
            .await
            .unwrap();
    let b1 = head.current.unwrap();
    assert_eq!(pair_of(&app, &b1).await, b[0]);
    // b1 NEI after reading, confirmed NEI by the second pass (a final NEI): B at -1 too;
    // tie at -1, A wins on index: a2.
    let head: app::model::annotate::QueueHead =
        submit(&app, &ann1, b1.assignment_id.unwrap(), nei_after_reading())
            .await
            .json()
            .await
            .unwrap();
    let a2 = head.current.unwrap();
    assert_eq!(pair_of(&app, &a2).await, a[1]);
    let head = queue(&app, &ann2).await;
    let second = head.current.unwrap();
    assert_eq!(
        (second.stage.as_str(), pair_of(&app, &second).await),
        ("second", b[0])
    );
    let res = submit(
        &app,
        &ann2,
        second.assignment_id.unwrap(),
        nei_after_reading(),
    )
    .await;
    assert!(res.status().is_success());
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM final_labels WHERE label = 'NEI'"
        )
        .await,
        2
    );
    // a2 clearly no evidence: A at -2, B at -1: B's next, b2 (b1 used). ann2 took a first
    // pass when it read its queue: a2 was held then, counted as evidence: a3 — held now.
    let head: app::model::annotate::QueueHead =
        submit(&app, &ann1, a2.assignment_id.unwrap(), clearly_nei())
            .await
            .json()
            .await
            .unwrap();
    assert_eq!(pair_of(&app, &head.current.unwrap()).await, b[1]);
}

#[tokio::test]
async fn the_budget_stops_first_passes_while_second_passes_go_on() {
    let app = TestApp::spawn().await;
    setup(&app, &["ann1", "ann2"], &two_systems(), None).await;
    let lead = app.logged_in("lead").await;
    // Depth pre-assigned every first pass; the lead sets mtf with a budget of 3.
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM assignments WHERE status = 'open' AND stage = 'first'"
        )
        .await,
        8
    );
    let res = app
        .post_form(
            &lead,
            "/api/lead/annotation/judging",
            &[
                ("project", PROJECT),
                ("order", "mtf"),
                ("seed", "5"),
                ("budget", "3"),
            ],
        )
        .await;
    assert!(res.status().is_success(), "{}", res.status());
    let message: String = res.json().await.unwrap();
    assert!(
        message.contains("6 pre-assigned first passes went back"),
        "{message}"
    );
    // Each annotator kept the first item of their queue.
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM assignments WHERE status = 'open' AND stage = 'first'"
        )
        .await,
        2
    );
    let ann1 = app.logged_in("ann1").await;
    let ann2 = app.logged_in("ann2").await;
    // ann1 labels its kept item and the next; ann2 its kept one: 3 first passes spent.
    let mut head = queue(&app, &ann1).await;
    for _ in 0..2 {
        let item = head.current.unwrap();
        assert_eq!(item.stage, "first");
        head = submit(&app, &ann1, item.assignment_id.unwrap(), support())
            .await
            .json()
            .await
            .unwrap();
    }
    let head2 = queue(&app, &ann2).await;
    // ann2's queue: its kept first pass and the second passes of ann1's two.
    let mut firsts = 0;
    let mut seconds = 0;
    let mut head2 = head2;
    while let Some(item) = head2.current.clone() {
        match item.stage.as_str() {
            "first" => firsts += 1,
            "second" => seconds += 1,
            other => panic!("{other}"),
        }
        let res = submit(&app, &ann2, item.assignment_id.unwrap(), support()).await;
        assert!(res.status().is_success(), "{}", res.status());
        head2 = res.json().await.unwrap();
    }
    assert_eq!(
        (firsts, seconds),
        (1, 2),
        "ann2 takes no first pass past the budget"
    );
    // ann1 now holds ann2's second pass, and no first pass.
    let head = queue(&app, &ann1).await;
    let item = head.current.unwrap();
    assert_eq!(item.stage, "second");
    assert!(head.next.is_none());
    let res = submit(&app, &ann1, item.assignment_id.unwrap(), support()).await;
    assert!(res.status().is_success());
    let head: app::model::annotate::QueueHead = res.json().await.unwrap();
    assert!(head.current.is_none(), "no first pass past the budget");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM final_labels").await, 3);
    // The lead's page: the order, the budget, first passes spent / budget.
    let overview: AnnotationOverview = app
        .post_form(&lead, "/api/lead/annotation", &[("project", PROJECT)])
        .await
        .json()
        .await
        .unwrap();
    let j = overview.judging;
    assert_eq!(
        (j.order.as_str(), j.seed, j.budget, j.spent, j.held, j.live),
        ("mtf", 5, Some(3), 3, 0, true)
    );
    // Raising the budget serves first passes again; going back to depth pre-assigns the rest.
    let res = app
        .post_form(
            &lead,
            "/api/lead/annotation/judging",
            &[
                ("project", PROJECT),
                ("order", "mtf"),
                ("seed", "5"),
                ("budget", "4"),
            ],
        )
        .await;
    assert!(res.status().is_success());
    let head = queue(&app, &ann1).await;
    assert_eq!(head.current.unwrap().stage, "first");
    let head2 = queue(&app, &ann2).await;
    assert!(
        head2.current.is_none(),
        "the one first pass left within the budget is ann1's"
    );
    let res = app
        .post_form(
            &lead,
            "/api/lead/annotation/judging",
            &[
                ("project", PROJECT),
                ("order", "depth"),
                ("seed", "0"),
                ("budget", ""),
            ],
        )
        .await;
    let message: String = res.json().await.unwrap();
    assert!(
        message.contains("4 first passes were assigned"),
        "{message}"
    );
    // Audited.
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM audit_events WHERE action = 'set_judging'"
        )
        .await,
        3
    );
}

#[tokio::test]
async fn annotators_see_no_order_and_cannot_set_it() {
    let app = TestApp::spawn().await;
    setup(
        &app,
        &["ann1"],
        &two_systems(),
        Some((Order::MabThompson, 7, Some(5))),
    )
    .await;
    let ann1 = app.logged_in("ann1").await;
    let raw = app
        .post_form(&ann1, "/api/work/queue", &[("project", PROJECT)])
        .await
        .text()
        .await
        .unwrap();
    for secret in ["secret-system", "mab-thompson", "p_support"] {
        assert!(!raw.contains(secret), "{secret} in {raw}");
    }
    let res = app
        .post_form(
            &ann1,
            "/api/lead/annotation/judging",
            &[
                ("project", PROJECT),
                ("order", "depth"),
                ("seed", "0"),
                ("budget", ""),
            ],
        )
        .await;
    assert_eq!(res.status(), reqwest::StatusCode::FORBIDDEN);
    let order: String = sqlx::query_scalar("SELECT judging_order FROM projects")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(order, "mab-thompson");
}

// The live selector is kept in memory and reads only what changed since it last synced; these
// check that what changes a label without a new first pass (an undo, an adjudication, an
// import, finished or in flight) is seen: each choice equals a fresh selector's.

/// The labels so far as the order reads them (a final label counts as what it says), with
/// `overrides` (`None`: no label), and the first passes others than `chooser` hold: what a
/// fresh selector serves `chooser`.
async fn fresh_choice(
    app: &TestApp,
    project: i64,
    rankings: &[Vec<RowPair>],
    chooser: &str,
    overrides: &[(RowPair, Option<bool>)],
) -> Option<RowPair> {
    let mut labels = labels_so_far(app, project).await;
    let finals: Vec<(i64, i64, String)> =
        sqlx::query_as("SELECT claim_id, doc_id, label FROM final_labels WHERE project_id = $1")
            .bind(project)
            .fetch_all(&app.db)
            .await
            .unwrap();
    for (claim, doc, label) in finals {
        labels.insert(Pair::new(claim, doc), label != "NEI");
    }
    for (pair, label) in overrides {
        match label {
            Some(evidence) => labels.insert(*pair, *evidence),
            None => labels.remove(pair),
        };
    }
    let held: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT e.claim_id, e.doc_id FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id
         JOIN users u ON u.id = a.annotator_id
         WHERE a.status = 'open' AND a.stage = 'first' AND e.project_id = $1 AND u.username != $2",
    )
    .bind(project)
    .bind(chooser)
    .fetch_all(&app.db)
    .await
    .unwrap();
    let held: std::collections::HashSet<RowPair> =
        held.into_iter().map(|(c, d)| Pair::new(c, d)).collect();
    let mut live = app::domain::judging::LiveSelector::new(
        Selector::new(Strategy::Confidence, rankings.to_vec(), Order::Mtf, 0).unwrap(),
    );
    live.sync(&labels).unwrap();
    live.next_untaken(|pair| held.contains(pair))
}

/// The first pass of a queue's head.
async fn first_pass(app: &TestApp, head: &app::model::annotate::QueueHead) -> Option<RowPair> {
    match [&head.current, &head.next]
        .into_iter()
        .flatten()
        .find(|item| item.stage == "first")
    {
        Some(item) => Some(pair_of(app, item).await),
        None => None,
    }
}

/// `name`, holding no first pass, reads its queue: the pair served is the fresh selector's,
/// and not the one served had the label of `stale` not changed.
async fn serves_as_fresh(
    app: &TestApp,
    name: &str,
    project: i64,
    rankings: &[Vec<RowPair>],
    stale: (RowPair, Option<bool>),
) -> RowPair {
    let expected = fresh_choice(app, project, rankings, name, &[]).await;
    let before = fresh_choice(app, project, rankings, name, &[stale]).await;
    assert_ne!(expected, before, "the change must matter to the choice");
    let client = app.logged_in(name).await;
    let served = first_pass(app, &queue(app, &client).await).await;
    assert_eq!(served, expected);
    served.unwrap()
}

#[tokio::test]
async fn an_undo_after_a_choice_is_seen_by_the_next_choice() {
    let app = TestApp::spawn().await;
    let (project, r) = setup(
        &app,
        &["ann1", "ann2"],
        &two_systems(),
        Some((Order::Mtf, 0, None)),
    )
    .await;
    let (a, b) = (&r[0], &r[1]);
    let ann1 = app.logged_in("ann1").await;
    let item = queue(&app, &ann1).await.current.unwrap();
    assert_eq!(pair_of(&app, &item).await, a[0]);
    // a1 clearly no evidence (final NEI): the next choice, B's b1.
    let head: app::model::annotate::QueueHead =
        submit(&app, &ann1, item.assignment_id.unwrap(), clearly_nei())
            .await
            .json()
            .await
            .unwrap();
    assert_eq!(first_pass(&app, &head).await, Some(b[0]));
    // Undone: a1 has no label again (ann1 holds it again, and b1).
    let res = ann1
        .post(app.url("/api/work/undo"))
        .form(&[("project", PROJECT)])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    // With a1 still NEI, A at -1: B, b1 held, b2; without: A's a1 held, a2.
    let served = serves_as_fresh(&app, "ann2", project, &r, (a[0], Some(false))).await;
    assert_eq!(served, a[1]);
}

#[tokio::test]
async fn an_adjudication_changing_a_label_is_seen_by_the_next_choice() {
    let app = TestApp::spawn().await;
    let (project, r) = setup(
        &app,
        &["ann1", "ann2"],
        &two_systems(),
        Some((Order::Mtf, 0, None)),
    )
    .await;
    let a = &r[0];
    let ann1 = app.logged_in("ann1").await;
    let ann2 = app.logged_in("ann2").await;
    let lead = app.logged_in("lead").await;
    let item = queue(&app, &ann1).await.current.unwrap();
    assert_eq!(pair_of(&app, &item).await, a[0]);
    let a1_entry = item.pool_entry_id;
    // a1 SUPPORT by ann1 (ann1 takes a2); ann2 takes a3 (a2 held) with a1's second pass, NEI
    // after reading: a1 NEI so far, to adjudication.
    let head: app::model::annotate::QueueHead =
        submit(&app, &ann1, item.assignment_id.unwrap(), support())
            .await
            .json()
            .await
            .unwrap();
    let a2 = [head.current, head.next]
        .into_iter()
        .flatten()
        .find(|item| item.stage == "first")
        .unwrap();
    assert_eq!(pair_of(&app, &a2).await, a[1]);
    let head = queue(&app, &ann2).await;
    let second = head.current.clone().unwrap();
    assert_eq!(
        (second.stage.as_str(), pair_of(&app, &second).await),
        ("second", a[0])
    );
    assert_eq!(first_pass(&app, &head).await, Some(a[2]));
    let res = submit(
        &app,
        &ann2,
        second.assignment_id.unwrap(),
        nei_after_reading(),
    )
    .await;
    assert!(res.status().is_success(), "{}", res.status());
    // The lead adjudicates: a1 final SUPPORT.
    let res = lead
        .post(app.url("/api/lead/annotation/adjudicate"))
        .json(&json!({ "project": PROJECT, "entry_id": a1_entry, "form": support(), "seconds_spent": 1.0 }))
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    // ann1 labels a2 SUPPORT; its answer serves the next choice. A and B tie at 0, A first:
    // a3 held, a4; had a1 stayed NEI, A at -1: B's b1.
    let res = submit(&app, &ann1, a2.assignment_id.unwrap(), support()).await;
    assert!(res.status().is_success(), "{}", res.status());
    let head: app::model::annotate::QueueHead = res.json().await.unwrap();
    // ann1 holds no other first pass: the others' held now are those held at the choice.
    let expected = fresh_choice(&app, project, &r, "ann1", &[]).await;
    let stale = fresh_choice(&app, project, &r, "ann1", &[(a[0], Some(false))]).await;
    assert_ne!(expected, stale, "the adjudication must matter");
    assert_eq!(first_pass(&app, &head).await, expected);
    assert_eq!(expected, Some(a[3]));
}

#[tokio::test]
async fn a_judgments_import_is_seen_by_the_next_choice() {
    let app = TestApp::spawn().await;
    let (project, r) = setup(
        &app,
        &["ann1", "ann2"],
        &two_systems(),
        Some((Order::Mtf, 0, None)),
    )
    .await;
    let (a, b) = (&r[0], &r[1]);
    let ann1 = app.logged_in("ann1").await;
    let item = queue(&app, &ann1).await.current.unwrap();
    assert_eq!(pair_of(&app, &item).await, a[0]);
    let head: app::model::annotate::QueueHead =
        submit(&app, &ann1, item.assignment_id.unwrap(), clearly_nei())
            .await
            .json()
            .await
            .unwrap();
    assert_eq!(first_pass(&app, &head).await, Some(b[0]));
    // The lead imports b2 final NEI.
    let (claim, doc): (String, String) = sqlx::query_as(
        "SELECT c.claim_id, d.doc_id FROM claims c, documents d WHERE c.id = $1 AND d.id = $2",
    )
    .bind(b[1].claim)
    .bind(b[1].doc)
    .fetch_one(&app.db)
    .await
    .unwrap();
    let path = app.dir.path().join("final.qrels");
    std::fs::write(&path, format!("{claim} 0 {doc} NEI\n")).unwrap();
    commands::import::judgments(
        &app.db,
        &crate::common::operator_lead(&app.db, project).await,
        commands::import::JudgmentsImport {
            path,
            format: None,
            annotator: "lead".into(),
            stage: app::domain::annotation::Stage::Final,
        },
    )
    .await
    .unwrap();
    // Without the import: B's b1 held (evidence), b2.
    let served = serves_as_fresh(&app, "ann2", project, &r, (b[1], None)).await;
    assert_eq!(served, a[1]);
}

/// An import in flight when the selector synced: its rows, hidden then, have ids below later
/// judgments'; when it is done they count.
#[tokio::test]
async fn an_import_finishing_after_a_sync_is_seen_by_the_next_choice() {
    let app = TestApp::spawn().await;
    let (project, r) = setup(
        &app,
        &["ann1", "ann2"],
        &two_systems(),
        Some((Order::Mtf, 0, None)),
    )
    .await;
    let (a, b) = (&r[0], &r[1]);
    // An import being written: b2 final NEI, hidden.
    let import: i64 = sqlx::query_scalar(
        "INSERT INTO imports (project_id, kind, file_name, sha256, format, rows, imported_at, state, lock_token)
         VALUES ($1, 'judgments', 'f.qrels', 'x', 'qrels', 1, 0, 'writing', 'token') RETURNING id",
    )
    .bind(project)
    .fetch_one(&app.db)
    .await
    .unwrap();
    let judgment: i64 = sqlx::query_scalar(
        "INSERT INTO judgment_rows (project_id, claim_id, doc_id, stage, label, provenance, import_id, created_at)
         VALUES ($1, $2, $3, 'final', 'NEI', 'import', $4, 0) RETURNING id",
    )
    .bind(project)
    .bind(b[1].claim)
    .bind(b[1].doc)
    .bind(import)
    .fetch_one(&app.db)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO final_label_rows (project_id, claim_id, doc_id, judgment_id, label, provenance, decided_at)
         VALUES ($1, $2, $3, $4, 'NEI', 'import', 0)",
    )
    .bind(project)
    .bind(b[1].claim)
    .bind(b[1].doc)
    .bind(judgment)
    .execute(&app.db)
    .await
    .unwrap();
    let ann1 = app.logged_in("ann1").await;
    // Choices while it is written (synced with the later judgment's id).
    let item = queue(&app, &ann1).await.current.unwrap();
    assert_eq!(pair_of(&app, &item).await, a[0]);
    let head: app::model::annotate::QueueHead =
        submit(&app, &ann1, item.assignment_id.unwrap(), clearly_nei())
            .await
            .json()
            .await
            .unwrap();
    assert_eq!(first_pass(&app, &head).await, Some(b[0]));
    let later: i64 = sqlx::query_scalar("SELECT MAX(id) FROM judgments")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert!(later > judgment);
    // Done: b2 is final NEI.
    sqlx::query("UPDATE imports SET state = 'done', lock_token = NULL WHERE id = $1")
        .bind(import)
        .execute(&app.db)
        .await
        .unwrap();
    let served = serves_as_fresh(&app, "ann2", project, &r, (b[1], None)).await;
    assert_eq!(served, a[1]);
}
