//! Annotation guidelines (issue 14): append-only versions, confirmations of the current one
//! only, their audit rows; and the queue, which gives an annotator no item before they confirmed
//! the current version, and again after a change.

use crate::common;

use app::domain::account::{ProjectRole, Role};
use app::model::annotate::QueueHead;
use app::model::guidelines::{GuidelinesEditor, GuidelinesView};
use common::TestApp;
use reqwest::StatusCode;
use store::{guidelines, Constraint, StoreError};

const PROJECT: &str = "p";

/// An audit row: action, entity id, actor, project.
type AuditRow = (String, Option<String>, Option<i64>, Option<i64>);

/// Project p with the demo sample, claim 3 against ten abstracts pooled, its lead `lead` and
/// its annotator `ann`; returns the project's id and both user ids.
async fn setup(app: &TestApp) -> (i64, i64, i64) {
    let pairs: Vec<(String, String, f64)> = common::demo_lines("corpus.jsonl")
        .iter()
        .take(10)
        .enumerate()
        .map(|(i, d)| {
            (
                "3".to_owned(),
                d["doc_id"].to_string(),
                0.05 + i as f64 / 10.0,
            )
        })
        .collect();
    let project = app.demo_project(PROJECT, true, &pairs).await;
    let lead = app.add_lead("lead", PROJECT).await;
    let ann = app.add_user("ann", Role::Annotator).await;
    store::projects::add_member(&app.db, project, ann, ProjectRole::Annotator, None)
        .await
        .unwrap();
    store::pool::build(
        &app.db,
        project,
        app::domain::pool::Strategy::Confidence,
        10,
        None,
    )
    .await
    .unwrap();
    (project, lead, ann)
}

#[tokio::test]
async fn versions_are_append_only_and_only_the_current_one_is_confirmed() {
    let app = TestApp::spawn().await;
    let project = store::projects::create(&app.db, PROJECT, "", None)
        .await
        .unwrap();
    let lead = app.add_lead("lead", PROJECT).await;
    let ann = app.add_user("ann", Role::Annotator).await;
    let db = &app.db;

    assert_eq!(guidelines::current(db, project).await.unwrap(), None);
    assert!(guidelines::history(db, project).await.unwrap().is_empty());
    assert_eq!(
        guidelines::to_confirm(db, project, ann).await.unwrap(),
        None
    );
    assert!(guidelines::has_confirmed_current(db, project, ann)
        .await
        .unwrap());
    assert!(matches!(
        guidelines::confirm(db, project, ann, 1).await,
        Err(StoreError::NotFound(_))
    ));

    // Refused texts: blank, too large; nothing is saved.
    assert!(matches!(
        guidelines::save(db, project, " \r\n ", Some(lead)).await,
        Err(StoreError::Invalid { .. })
    ));
    let big = "x".repeat(app::domain::guidelines::MAX_GUIDELINES_BYTES + 1);
    match guidelines::save(db, project, &big, Some(lead)).await {
        Err(StoreError::Invalid { message, .. }) => {
            assert!(message.contains("200 KB"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(guidelines::current(db, project).await.unwrap(), None);

    assert_eq!(
        guidelines::save(db, project, "# Labels\r\n\r\nSUPPORT: …\r\n", Some(lead))
            .await
            .unwrap(),
        1
    );
    let v1 = guidelines::current(db, project).await.unwrap().unwrap();
    assert_eq!(v1.version, 1);
    assert_eq!(v1.markdown, "# Labels\n\nSUPPORT: …");
    assert_eq!(v1.author.as_deref(), Some("lead"));
    // The same text again (line ends aside) is no new version.
    match guidelines::save(db, project, "# Labels\n\nSUPPORT: …\n", Some(lead)).await {
        Err(StoreError::Conflict {
            constraint: Constraint::GuidelinesUnchanged,
            message,
        }) => assert!(message.contains("version 1"), "{message}"),
        other => panic!("{other:?}"),
    }

    assert_eq!(
        guidelines::to_confirm(db, project, ann).await.unwrap(),
        Some(1)
    );
    assert!(!guidelines::has_confirmed_current(db, project, ann)
        .await
        .unwrap());
    assert!(matches!(
        guidelines::confirm(db, project, ann, 2).await,
        Err(StoreError::Conflict {
            constraint: Constraint::GuidelinesVersion,
            ..
        })
    ));
    guidelines::confirm(db, project, ann, 1).await.unwrap();
    guidelines::confirm(db, project, ann, 1).await.unwrap(); // twice: no change
    assert_eq!(
        guidelines::to_confirm(db, project, ann).await.unwrap(),
        None
    );
    // Another user's confirmation is their own.
    assert_eq!(
        guidelines::to_confirm(db, project, lead).await.unwrap(),
        Some(1)
    );

    // A change needs a new confirmation; the old version cannot be confirmed any more.
    assert_eq!(
        guidelines::save(
            db,
            project,
            "# Labels\n\nSUPPORT: the abstract says so.",
            Some(lead)
        )
        .await
        .unwrap(),
        2
    );
    assert_eq!(
        guidelines::to_confirm(db, project, ann).await.unwrap(),
        Some(2)
    );
    match guidelines::confirm(db, project, ann, 1).await {
        Err(StoreError::Conflict {
            constraint: Constraint::GuidelinesVersion,
            message,
        }) => {
            assert!(message.contains("read version 2"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    guidelines::confirm(db, project, ann, 2).await.unwrap();
    assert_eq!(
        guidelines::to_confirm(db, project, ann).await.unwrap(),
        None
    );

    let history = guidelines::history(db, project).await.unwrap();
    let summary: Vec<(i64, Option<&str>, i64)> = history
        .iter()
        .map(|v| (v.version, v.author.as_deref(), v.confirmations))
        .collect();
    assert_eq!(summary, vec![(2, Some("lead"), 1), (1, Some("lead"), 1)]);
    assert_eq!(history[1].bytes, "# Labels\n\nSUPPORT: …".len() as i64);

    // Versions are append-only in the database too.
    let update = sqlx::query("UPDATE guideline_versions SET markdown = 'x' WHERE project_id = $1")
        .bind(project)
        .execute(db)
        .await;
    assert!(update.is_err());
    assert_eq!(
        guidelines::current(db, project)
            .await
            .unwrap()
            .unwrap()
            .version,
        2
    );

    // Every write is audited once: saves by the lead, confirmations by the annotator.
    let audit: Vec<AuditRow> = sqlx::query_as(
        "SELECT action, entity_id, actor_id, project_id FROM audit_events
         WHERE entity = 'guidelines' ORDER BY id",
    )
    .fetch_all(db)
    .await
    .unwrap();
    let expected: Vec<AuditRow> = [
        ("save_guidelines", 1, lead),
        ("confirm_guidelines", 1, ann),
        ("save_guidelines", 2, lead),
        ("confirm_guidelines", 2, ann),
    ]
    .into_iter()
    .map(|(a, v, u)| (a.to_owned(), Some(v.to_string()), Some(u), Some(project)))
    .collect();
    assert_eq!(audit, expected);
}

async fn post(
    app: &TestApp,
    client: &reqwest::Client,
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

async fn queue(app: &TestApp, client: &reqwest::Client) -> QueueHead {
    let res = post(app, client, "work/queue", &[("project", PROJECT)]).await;
    assert_eq!(res.status(), StatusCode::OK);
    res.json().await.unwrap()
}

async fn view(app: &TestApp, client: &reqwest::Client) -> Option<GuidelinesView> {
    let res = post(app, client, "guidelines/view", &[("project", PROJECT)]).await;
    assert_eq!(res.status(), StatusCode::OK);
    res.json().await.unwrap()
}

async fn save(app: &TestApp, client: &reqwest::Client, markdown: &str) -> reqwest::Response {
    post(
        app,
        client,
        "lead/guidelines/save",
        &[("project", PROJECT), ("markdown", markdown)],
    )
    .await
}

async fn confirm(app: &TestApp, client: &reqwest::Client, version: i64) -> reqwest::Response {
    post(
        app,
        client,
        "guidelines/confirm",
        &[("project", PROJECT), ("version", &version.to_string())],
    )
    .await
}

#[tokio::test]
async fn the_queue_waits_for_the_current_guidelines_to_be_confirmed() {
    let app = TestApp::spawn().await;
    setup(&app).await;
    let lead = app.logged_in("lead").await;
    let ann = app.logged_in("ann").await;

    // Without guidelines, the queue is as it always was.
    let head = queue(&app, &ann).await;
    assert!(head.current.is_some());
    assert_eq!(head.guidelines_to_confirm, None);
    assert_eq!(view(&app, &ann).await, None);

    // Annotators do not write guidelines.
    let res = save(&app, &ann, "# Mine").await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);

    let res = save(
        &app,
        &lead,
        "# Labels\n\n<script>alert(1)</script>\n\n[here](javascript:alert(2)) and *read*",
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.json::<i64>().await.unwrap(), 1);

    // Now no item until the annotator confirms version 1; the counts stay.
    let head = queue(&app, &ann).await;
    assert_eq!(head.guidelines_to_confirm, Some(1));
    assert!(head.current.is_none() && head.next.is_none());
    assert!(head.open > 0, "{head:?}");
    let shown = view(&app, &ann).await.unwrap();
    assert_eq!((shown.version, shown.confirmed), (1, false));
    assert_eq!(shown.author.as_deref(), Some("lead"));
    assert!(shown.html.contains("<h1>Labels</h1>"), "{}", shown.html);
    assert!(shown.html.contains("<em>read</em>"), "{}", shown.html);
    assert!(shown.html.contains("&lt;script&gt;"), "{}", shown.html);
    assert!(!shown.html.contains("<script") && !shown.html.contains("javascript"));
    assert_eq!(confirm(&app, &ann, 2).await.status(), StatusCode::CONFLICT);
    assert_eq!(confirm(&app, &ann, 1).await.status(), StatusCode::OK);
    let head = queue(&app, &ann).await;
    assert_eq!(head.guidelines_to_confirm, None);
    let first = head.current.expect("an item after confirming");
    assert!(view(&app, &ann).await.unwrap().confirmed);

    // A new version: confirm again (the old one no longer counts).
    let res = save(&app, &lead, "# Labels\n\nSUPPORT needs a rationale.").await;
    assert_eq!(res.json::<i64>().await.unwrap(), 2);
    let head = queue(&app, &ann).await;
    assert_eq!(head.guidelines_to_confirm, Some(2));
    assert!(head.current.is_none());
    assert_eq!(confirm(&app, &ann, 1).await.status(), StatusCode::CONFLICT);
    assert_eq!(confirm(&app, &ann, 2).await.status(), StatusCode::OK);
    let head = queue(&app, &ann).await;
    assert_eq!(head.guidelines_to_confirm, None);
    assert_eq!(
        head.current.map(|c| c.assignment_id),
        Some(first.assignment_id)
    );

    // The lead's editor: the current text and both versions, newest first.
    let res = post(&app, &lead, "lead/guidelines", &[("project", PROJECT)]).await;
    assert_eq!(res.status(), StatusCode::OK);
    let editor: GuidelinesEditor = res.json().await.unwrap();
    assert_eq!(
        editor.current,
        Some((2, "# Labels\n\nSUPPORT needs a rationale.".to_owned()))
    );
    let versions: Vec<(i64, i64)> = editor
        .history
        .iter()
        .map(|v| (v.version, v.confirmations))
        .collect();
    assert_eq!(versions, vec![(2, 1), (1, 1)]);
    // Unchanged text: refused with a conflict that says so.
    let res = save(&app, &lead, "# Labels\n\nSUPPORT needs a rationale.\n").await;
    assert_eq!(res.status(), StatusCode::CONFLICT);
    assert!(common::error_message(res).await.contains("nothing to save"));
    // Not the annotator's editor.
    let res = post(&app, &ann, "lead/guidelines", &[("project", PROJECT)]).await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
}
