//! Judgments imports follow the browser's annotation rules (issue 35): a repeat is the same
//! file for the same annotator and stage (R2), and a second-stage import on a disagreement is
//! a re-annotation, which needs the project's re-annotation setting (R3).

use super::{count, setup};
use crate::common::TestApp;
use app::domain::annotation::Stage;
use commands::import::JudgmentsImport;

/// The pooled pairs, shallowest first.
async fn pairs(app: &TestApp) -> Vec<(String, String)> {
    sqlx::query_as(
        "SELECT c.claim_id, d.doc_id FROM pool_entries e JOIN claims c ON c.id = e.claim_id
         JOIN documents d ON d.id = e.doc_id ORDER BY e.entry_depth, e.id",
    )
    .fetch_all(&app.db)
    .await
    .unwrap()
}

/// A qrels-labels file `name` giving every pair `label`.
fn qrels(app: &TestApp, name: &str, pairs: &[(String, String)], label: &str) -> std::path::PathBuf {
    let text: String = pairs
        .iter()
        .map(|(c, d)| format!("{c} 0 {d} {label}\n"))
        .collect();
    let path = app.dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

async fn import(
    app: &TestApp,
    project: i64,
    path: &std::path::Path,
    who: &str,
    stage: Stage,
) -> Result<commands::import::ImportReport, commands::CommandError> {
    commands::import::judgments(
        &app.db,
        &crate::common::operator_lead(&app.db, project).await,
        JudgmentsImport {
            path: path.to_owned(),
            format: None,
            annotator: who.into(),
            stage,
        },
    )
    .await
}

#[tokio::test]
async fn the_same_file_imports_for_two_annotators_and_is_refused_for_the_same_one_twice() {
    let app = TestApp::spawn().await;
    let project = setup(&app, &["a1", "a2"], 4).await;
    let pairs = pairs(&app).await;
    // One file of labels both annotators agreed on.
    let agreed = qrels(&app, "agreed.qrels", &pairs, "SUPPORT");
    import(&app, project, &agreed, "a1", Stage::First)
        .await
        .unwrap();
    let report = import(&app, project, &agreed, "a2", Stage::Second)
        .await
        .unwrap_or_else(|e| panic!("the second annotator's import was refused: {e}"));
    assert_eq!(report.rows, 4);
    assert_eq!(report.judgments, 4, "agreement makes every pair final");
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM final_labels WHERE label = 'SUPPORT'"
        )
        .await,
        4
    );
    // The same file for the same annotator and stage is a repeat.
    let err = import(&app, project, &agreed, "a2", Stage::Second)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("imported into the project already"), "{err}");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM judgments").await, 8);
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM imports WHERE kind = 'judgments'"
        )
        .await,
        2
    );
}

#[tokio::test]
async fn a_second_stage_import_on_a_disagreement_needs_the_reannotation_setting() {
    let app = TestApp::spawn().await;
    let project = setup(&app, &["a1", "a2", "a3"], 4).await;
    let pairs = pairs(&app).await;
    import(
        &app,
        project,
        &qrels(&app, "first.qrels", &pairs, "SUPPORT"),
        "a1",
        Stage::First,
    )
    .await
    .unwrap();
    import(
        &app,
        project,
        &qrels(&app, "second.qrels", &pairs, "NEI"),
        "a2",
        Stage::Second,
    )
    .await
    .unwrap();
    // Every pair disagrees; re-annotation is off (the default): a third annotator's second
    // stage is refused, each line named with its pair and why; nothing is written.
    let third = qrels(&app, "third.qrels", &pairs, "NEI");
    let err = import(&app, project, &third, "a3", Stage::Second)
        .await
        .expect_err("a re-annotation while the setting is off")
        .to_string();
    let (c, d) = &pairs[0];
    assert!(
        err.contains(&format!("third.qrels:1: field \"{c} {d}\"")),
        "names the file, line and pair: {err}"
    );
    assert!(err.contains("re-annotation is off"), "{err}");
    assert!(err.contains("nothing was imported"), "{err}");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM judgments").await, 8);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM final_labels").await, 0);
    // With the setting on, the same file is a re-annotation: the majority decides.
    store::annotate::gold::set_reannotation(&app.db, None, project, true)
        .await
        .unwrap();
    let report = import(&app, project, &third, "a3", Stage::Second)
        .await
        .unwrap();
    assert_eq!(report.judgments, 4);
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM final_labels WHERE label = 'NEI'"
        )
        .await,
        4
    );
}

/// Judgments are a member's (issue 35): an account outside the project, or one removed from it,
/// is refused by name before anything is written.
#[tokio::test]
async fn judgments_of_an_account_outside_the_project_are_refused() {
    let app = TestApp::spawn().await;
    let project = setup(&app, &["a1", "a2"], 4).await;
    app.add_user("outsider", app::domain::account::Role::Annotator)
        .await;
    let pairs = pairs(&app).await;
    let labels = qrels(&app, "labels.qrels", &pairs, "SUPPORT");
    let err = import(&app, project, &labels, "outsider", Stage::First)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("outsider is not a member of the project"),
        "{err}"
    );
    store::projects::remove_member(&app.db, project, "a2", None)
        .await
        .unwrap();
    let err = import(&app, project, &labels, "a2", Stage::First)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("a2 is not a member of the project"), "{err}");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM judgments").await, 0);
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM imports WHERE kind = 'judgments'"
        )
        .await,
        0
    );
    // A member's import of the same file goes in.
    import(&app, project, &labels, "a1", Stage::First)
        .await
        .unwrap();
    assert_eq!(count(&app, "SELECT COUNT(*) FROM judgments").await, 4);
}
