//! Suggestions (issue 16): annotators see a model assessor's label for the pair they label only
//! when the lead turns suggestions on (off by default), at the first and second pass, gold
//! items included, and never the assessor's or the system's name; annotators cannot turn them
//! on; only an assessor of the same project can be chosen.

use super::{queue, setup, submit, support, PROJECT};
use crate::common::{error_message, TestApp};
use app::domain::account::{ProjectRole, Role};
use app::domain::label::Label;
use app::model::annotate::{ItemView, SuggestionsView};
use reqwest::StatusCode;
use std::collections::BTreeMap;
use std::process::Output;
use store::assessors::{self, NewLabel, NewSource};

/// The assessor's name and the pooled system's (setup's run): neither may reach an annotator.
const ASSESSOR: &str = "oracle-model";
const SYSTEM: &str = "secret-system";

/// Registers [`ASSESSOR`] over the pool of `project` from [`SYSTEM`], labelling the pooled
/// pairs CONTRADICT, NEI, SUPPORT in turn (claim, doc order) and leaving the last `unlabelled`
/// pairs without a label; the labels by (claim id, doc id).
async fn register(
    app: &TestApp,
    project: i64,
    unlabelled: usize,
) -> BTreeMap<(String, String), String> {
    let system = assessors::system_id(&app.db, project, SYSTEM)
        .await
        .unwrap();
    let pooled = assessors::pooled_predictions(&app.db, project, system)
        .await
        .unwrap();
    assert!(pooled.len() > 3, "a pool to label");
    let turn = [Label::Contradict, Label::Nei, Label::Support];
    let mut expected = BTreeMap::new();
    let mut labels = Vec::new();
    for (i, pair) in pooled.iter().take(pooled.len() - unlabelled).enumerate() {
        let label = turn[i % 3];
        expected.insert(
            (pair.claim.clone(), pair.doc.clone()),
            label.as_str().to_owned(),
        );
        labels.push(NewLabel {
            key: pair.key,
            label,
            predicted: true,
            sentences: None,
        });
    }
    assessors::create(
        &app.db,
        project,
        ASSESSOR,
        NewSource::System(system),
        &labels,
        None,
    )
    .await
    .unwrap();
    expected
}

/// The annotator's queue as raw JSON text (to search for names) and parsed.
async fn queue_text(app: &TestApp, client: &reqwest::Client) -> String {
    let res = app
        .post_form(client, "/api/work/queue", &[("project", PROJECT)])
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    res.text().await.unwrap()
}

/// What the lead's page shows of the suggestions.
async fn shown(app: &TestApp, lead: &reqwest::Client) -> SuggestionsView {
    let res = app
        .post_form(lead, "/api/lead/suggestions", &[("project", PROJECT)])
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    res.json().await.unwrap()
}

async fn set(app: &TestApp, client: &reqwest::Client, assessor: &str) -> reqwest::Response {
    app.post_form(
        client,
        "/api/lead/suggestions/set",
        &[("project", PROJECT), ("assessor", assessor)],
    )
    .await
}

fn claimpool(app: &TestApp, args: &[&str]) -> Output {
    crate::support::cli::command()
        .arg("--db")
        .arg(&app.db_arg)
        .args(args)
        .output()
        .unwrap()
}

/// The item's pair.
fn pair(item: &ItemView) -> (String, String) {
    (item.claim_id.clone(), item.doc_id.clone())
}

/// Neither the assessor's nor the system's name in what an annotator receives.
fn assert_anonymous(text: &str) {
    for secret in [ASSESSOR, SYSTEM] {
        assert!(
            !text.contains(secret),
            "the annotator's queue holds {secret:?}: {text}"
        );
    }
}

#[tokio::test]
async fn annotators_see_the_chosen_models_label_only_while_suggestions_are_on() {
    let app = TestApp::spawn().await;
    let project = setup(&app, &["ann1", "ann2"], 12).await;
    let expected = register(&app, project, 1).await;
    let lead = app.logged_in("lead").await;
    let ann1 = app.logged_in("ann1").await;
    let ann2 = app.logged_in("ann2").await;

    // Off by default: no suggestion, and the lead's page says so.
    assert_eq!(
        shown(&app, &lead).await,
        SuggestionsView {
            current: None,
            assessors: vec![ASSESSOR.to_owned()],
        }
    );
    let head = queue(&app, &ann1).await;
    let current = head.current.expect("a first pass");
    assert_eq!(current.stage, "first");
    assert_eq!(current.suggestion, None);
    assert_eq!(head.next.and_then(|n| n.suggestion), None);

    // Annotators can neither turn it on nor read the setting.
    let res = set(&app, &ann1, ASSESSOR).await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    let res = app
        .post_form(&ann1, "/api/lead/suggestions", &[("project", PROJECT)])
        .await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    assert_eq!(shown(&app, &lead).await.current, None);

    // On: the first pass carries the assessor's label for its pair, and nothing names it.
    let res = set(&app, &lead, ASSESSOR).await;
    assert_eq!(res.status(), StatusCode::OK);
    let now: SuggestionsView = res.json().await.unwrap();
    assert_eq!(now.current.as_deref(), Some(ASSESSOR));
    let text = queue_text(&app, &ann1).await;
    assert_anonymous(&text);
    let head: app::model::annotate::QueueHead = serde_json::from_str(&text).unwrap();
    let current = head.current.expect("a first pass");
    assert_eq!(current.stage, "first");
    assert_eq!(
        current.suggestion.as_ref(),
        expected.get(&pair(&current)),
        "the suggestion is the assessor's label for {:?}",
        pair(&current)
    );

    // Off from the command line: gone; on again from the command line.
    let out = claimpool(
        &app,
        &["assessor", "suggest", "--project", PROJECT, "--off"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(queue(&app, &ann1).await.current.unwrap().suggestion, None);
    assert_eq!(shown(&app, &lead).await.current, None);
    let out = claimpool(
        &app,
        &[
            "assessor",
            "suggest",
            "--project",
            PROJECT,
            "--assessor",
            ASSESSOR,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(shown(&app, &lead).await.current.as_deref(), Some(ASSESSOR));

    // Every first and second pass until the pool is done: the assessor's label where it has
    // one (the left-out pair: none), never a name.
    let mut seen = BTreeMap::new();
    loop {
        let mut worked = false;
        for client in [&ann1, &ann2] {
            let text = queue_text(&app, client).await;
            assert_anonymous(&text);
            let head: app::model::annotate::QueueHead = serde_json::from_str(&text).unwrap();
            let Some(item) = head.current else { continue };
            assert!(matches!(item.stage.as_str(), "first" | "second"));
            assert_eq!(item.suggestion.as_ref(), expected.get(&pair(&item)));
            seen.insert((pair(&item), item.stage.clone()), item.suggestion.clone());
            let res = submit(&app, client, item.assignment_id.unwrap(), support()).await;
            assert!(res.status().is_success(), "{}", res.status());
            worked = true;
        }
        if !worked {
            break;
        }
    }
    assert_eq!(
        seen.len(),
        24,
        "12 pairs, each at the first and second pass"
    );
    assert_eq!(
        seen.values().filter(|s| s.is_none()).count(),
        2,
        "the pair the assessor did not label, at both passes"
    );

    // A gold item (a qualification's, drawn from the final labels) is treated like any pair.
    let res = app
        .post_form(
            &lead,
            "/api/lead/gold/add",
            &[
                ("project", PROJECT),
                ("source", "final"),
                ("count", ""),
                ("seed", "1"),
            ],
        )
        .await;
    assert!(res.status().is_success(), "{}", res.status());
    let res = app
        .post_form(
            &lead,
            "/api/lead/gold/settings",
            &[
                ("project", PROJECT),
                ("every", ""),
                ("training", "0"),
                ("graded", "3"),
                ("pass", "0.5"),
            ],
        )
        .await;
    assert!(res.status().is_success(), "{}", res.status());
    let id = app.add_user("ann3", Role::Annotator).await;
    store::projects::add_member(&app.db, project, id, ProjectRole::Annotator, None)
        .await
        .unwrap();
    let ann3 = app.logged_in("ann3").await;
    let text = queue_text(&app, &ann3).await;
    assert_anonymous(&text);
    let head: app::model::annotate::QueueHead = serde_json::from_str(&text).unwrap();
    let gold = head.current.expect("a qualification item");
    assert_eq!(gold.stage, "first");
    assert_eq!(gold.suggestion.as_ref(), expected.get(&pair(&gold)));

    // Each change audited, with the lead or the shell as its actor.
    let audited: Vec<(Option<String>,)> = sqlx::query_as(
        "SELECT new_value FROM audit_events WHERE action = 'suggestions' ORDER BY id",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    let audited: Vec<Option<String>> = audited
        .into_iter()
        .map(|(a,)| {
            let value: serde_json::Value = serde_json::from_str(&a.unwrap_or_default()).unwrap();
            value["suggest_from"].as_str().map(str::to_owned)
        })
        .collect();
    assert_eq!(
        audited,
        vec![Some(ASSESSOR.to_owned()), None, Some(ASSESSOR.to_owned())]
    );
}

#[tokio::test]
async fn only_an_assessor_of_the_same_project_can_be_chosen() {
    let app = TestApp::spawn().await;
    let project = setup(&app, &["ann1"], 4).await;
    register(&app, project, 0).await;
    let other = store::projects::create(&app.db, "other", "", None)
        .await
        .unwrap();
    let elsewhere = assessors::create(
        &app.db,
        other,
        "elsewhere",
        NewSource::Command {
            line: "judge --fast",
            ran_at: 1,
        },
        &[],
        None,
    )
    .await
    .unwrap();
    let lead = app.logged_in("lead").await;

    // The project has no such assessor: 400, naming the field.
    let res = set(&app, &lead, "elsewhere").await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let message = error_message(res).await;
    assert!(
        message.starts_with("assessor: ") && message.contains("\"elsewhere\""),
        "{message}"
    );
    let res = set(&app, &lead, "no such name!").await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let message = error_message(res).await;
    assert!(message.starts_with("assessor: "), "{message}");

    // The command line names its option; it wants exactly one of --assessor and --off.
    let out = claimpool(
        &app,
        &[
            "assessor",
            "suggest",
            "--project",
            PROJECT,
            "--assessor",
            "elsewhere",
        ],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--assessor: "), "{stderr}");
    for args in [
        &["assessor", "suggest", "--project", PROJECT][..],
        &[
            "assessor",
            "suggest",
            "--project",
            PROJECT,
            "--off",
            "--assessor",
            "x",
        ][..],
    ] {
        let out = claimpool(&app, args);
        assert!(!out.status.success(), "{args:?} succeeded");
    }

    // The database refuses another project's assessor too.
    let refused = sqlx::query("UPDATE projects SET suggest_from = $1 WHERE id = $2")
        .bind(elsewhere)
        .bind(project)
        .execute(&app.db)
        .await;
    assert!(refused.is_err(), "another project's assessor was accepted");

    assert_eq!(shown(&app, &lead).await.current, None);
    let head = queue(&app, &app.logged_in("ann1").await).await;
    assert_eq!(head.current.unwrap().suggestion, None);
}

/// `client`'s view of their open assignment `id`, skipping what comes before it.
async fn item_of(app: &TestApp, client: &reqwest::Client, id: i64) -> ItemView {
    for _ in 0..40 {
        let text = queue_text(app, client).await;
        assert_anonymous(&text);
        let head: app::model::annotate::QueueHead = serde_json::from_str(&text).unwrap();
        let item = head.current.expect("an item");
        if item.assignment_id == Some(id) {
            return item;
        }
        let skip = item.assignment_id.unwrap().to_string();
        let res = app
            .post_form(
                client,
                "/api/work/skip",
                &[("project", PROJECT), ("assignment_id", &skip)],
            )
            .await;
        assert!(res.status().is_success(), "{}", res.status());
    }
    panic!("assignment {id} never came up");
}

/// Who holds the open assignment of pool entry `entry`: their name and the assignment.
async fn holder(app: &TestApp, entry: i64) -> (String, i64) {
    sqlx::query_as(
        "SELECT u.username, a.id FROM assignments a JOIN users u ON u.id = a.annotator_id
         WHERE a.pool_entry_id = $1 AND a.status = 'open'",
    )
    .bind(entry)
    .fetch_one(&app.db)
    .await
    .unwrap()
}

#[tokio::test]
async fn a_reannotation_of_a_disagreement_gets_no_suggestion() {
    let app = TestApp::spawn().await;
    let project = setup(&app, &["ann1", "ann2", "ann3"], 6).await;
    let expected = register(&app, project, 0).await;
    let lead = app.logged_in("lead").await;
    let res = app
        .post_form(
            &lead,
            "/api/lead/gold/reannotation",
            &[("project", PROJECT), ("reannotate", "on")],
        )
        .await;
    assert!(res.status().is_success(), "{}", res.status());
    assert_eq!(set(&app, &lead, ASSESSOR).await.status(), StatusCode::OK);
    let mut clients = BTreeMap::new();
    for name in ["ann1", "ann2", "ann3"] {
        clients.insert(name.to_owned(), app.logged_in(name).await);
    }

    // The first and second pass carry the suggestion; they disagree.
    let first = queue(&app, &clients["ann1"]).await.current.unwrap();
    assert_eq!(first.stage, "first");
    assert_eq!(first.suggestion.as_ref(), expected.get(&pair(&first)));
    assert!(first.suggestion.is_some());
    let entry = first.pool_entry_id;
    let res = submit(
        &app,
        &clients["ann1"],
        first.assignment_id.unwrap(),
        support(),
    )
    .await;
    assert!(res.status().is_success(), "{}", res.status());
    let (name, id) = holder(&app, entry).await;
    let second = item_of(&app, &clients[&name], id).await;
    assert_eq!(second.stage, "second");
    assert_eq!(second.suggestion, first.suggestion);
    let res = submit(&app, &clients[&name], id, super::contradict()).await;
    assert!(res.status().is_success(), "{}", res.status());

    // The fresh annotator's re-annotation is blind to the model too.
    let (fresh, id) = holder(&app, entry).await;
    assert!(fresh != "ann1" && fresh != name, "{fresh} is fresh");
    let third = item_of(&app, &clients[&fresh], id).await;
    assert_eq!(third.stage, "second");
    assert_eq!(third.suggestion, None);
}
