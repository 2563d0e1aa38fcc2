//! Search and judge (issue 38) through the server functions: an annotator searches the corpus
//! for a claim, judges a result no run ranked, which joins the pool as their find and is their
//! next first pass; a second annotator's pass makes it final; the lead's report counts it under
//! the system `search`; and a pool build afterwards keeps the find.

use super::{queue, setup, submit, support, PROJECT};
use crate::common::{self, TestApp};
use app::model::annotate::QueueHead;
use app::model::search::{SearchAnswer, SearchResults};
use reqwest::StatusCode;
use serde_json::json;

const CLAIM: &str = "51";
const QUERY: &str = "ALDH1 expression breast cancer outcomes";
/// The demo corpus's abstract on ALDH1 in breast cancer: the claim's evidence, which the run
/// of `setup` does not rank.
const DOC: &str = "45638119";

/// `res` when it is 200 OK; otherwise fails with the server's message.
async fn ok(res: reqwest::Response) -> reqwest::Response {
    if res.status() != StatusCode::OK {
        panic!("{}: {}", res.status(), common::error_message(res).await);
    }
    res
}

/// Searches until the index is built (each server builds it on the first search).
pub(super) async fn search(
    app: &TestApp,
    client: &reqwest::Client,
    query: &str,
    page: usize,
) -> SearchResults {
    let page = page.to_string();
    for _ in 0..600 {
        let res = app
            .post_form(
                client,
                "/api/work/search",
                &[
                    ("project", PROJECT),
                    ("claim_id", CLAIM),
                    ("query", query),
                    ("page", &page),
                ],
            )
            .await;
        let res = ok(res).await;
        match res.json::<SearchAnswer>().await.unwrap() {
            SearchAnswer::Results(results) => return results,
            SearchAnswer::Indexing { done, total } => {
                assert!(done <= total && total == 443, "{done} of {total}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
    panic!("the search index was not built in a minute");
}

async fn judge(app: &TestApp, client: &reqwest::Client, rank: u32) -> reqwest::Response {
    client
        .post(app.url("/api/work/search/judge"))
        .json(&json!({ "project": PROJECT, "found": {
            "claim_id": CLAIM, "doc_id": DOC, "query": QUERY, "rank": rank, "seconds_searching": 12.5
        }}))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_pair_found_by_search_is_judged_twice_and_reported_under_search() {
    let app = TestApp::spawn().await;
    let project = setup(&app, &["a1", "a2"], 4).await;
    app.add_lead("boss", PROJECT).await;
    let a1 = app.logged_in("a1").await;

    let results = search(&app, &a1, QUERY, 0).await;
    assert_eq!(results.claim_id, CLAIM);
    assert!(results.total_hits > 0 && results.results.len() <= 20);
    let hit = results
        .results
        .iter()
        .find(|r| r.doc_id == DOC)
        .expect("the ALDH1 abstract is found");
    assert_eq!(hit.rank, 1, "the abstract sharing every word ranks first");
    assert!(!hit.in_pool && !hit.judged_by_you);
    // The marked words are the query's, by stem.
    let marked: Vec<String> = hit
        .title
        .runs()
        .into_iter()
        .filter(|(_, m)| *m)
        .map(|(w, _)| w.to_lowercase())
        .collect();
    assert!(marked.contains(&"aldh1".to_owned()), "{marked:?}");
    assert!(
        hit.matched_terms.contains(&"breast".to_owned()),
        "{:?}",
        hit.matched_terms
    );
    // The answer names no system and no score.
    let raw = serde_json::to_string(&results).unwrap();
    assert!(!raw.contains("\"s\"") && !raw.contains("score"), "{raw}");

    // Judging it makes it a1's current item, a first pass.
    let res = judge(&app, &a1, hit.rank).await;
    let res = ok(res).await;
    let head: QueueHead = res.json().await.unwrap();
    let item = head.current.expect("the find is served");
    assert_eq!(
        (
            item.claim_id.as_str(),
            item.doc_id.as_str(),
            item.stage.as_str()
        ),
        (CLAIM, DOC, "first")
    );
    let find: (i64, String, i64, f64, String) = sqlx::query_as(
        "SELECT f.found_by, f.query, f.result_rank, f.seconds_searching, u.username
         FROM search_finds f JOIN users u ON u.id = f.found_by",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(
        (find.1.as_str(), find.2, find.3, find.4.as_str()),
        (QUERY, 1, 12.5, "a1")
    );
    // Once: a second judge of the same pair is refused, and the result shows it pooled.
    let again = judge(&app, &a1, 1).await;
    assert_eq!(again.status(), StatusCode::CONFLICT);
    let after = search(&app, &a1, QUERY, 0).await;
    assert!(after.results.iter().any(|r| r.doc_id == DOC && r.in_pool));

    // The pool's history lists no build for the find, and a build now keeps it.
    let builds: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pool_builds")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(builds, 1);
    store::pool::build(
        &app.db,
        project,
        app::domain::pool::Strategy::Confidence,
        4,
        None,
    )
    .await
    .expect("a build after a find keeps it");

    // a1's first pass, then a2's second pass: final.
    ok(submit(&app, &a1, item.assignment_id.unwrap(), support()).await).await;
    let second: i64 = sqlx::query_scalar(
        "SELECT a.id FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id
         JOIN users u ON u.id = a.annotator_id JOIN documents d ON d.id = e.doc_id
         WHERE a.status = 'open' AND a.stage = 'second' AND u.username = 'a2' AND d.doc_id = $1",
    )
    .bind(DOC)
    .fetch_one(&app.db)
    .await
    .expect("a2 has the find's second pass");
    let a2 = app.logged_in("a2").await;
    let _ = queue(&app, &a2).await;
    ok(submit(&app, &a2, second, support()).await).await;
    let label: String = sqlx::query_scalar(
        "SELECT f.label FROM final_labels f JOIN documents d ON d.id = f.doc_id WHERE d.doc_id = $1",
    )
    .bind(DOC)
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(label, "SUPPORT");
    let seen_by_a2 = search(&app, &a2, QUERY, 0).await;
    assert!(seen_by_a2
        .results
        .iter()
        .any(|r| r.doc_id == DOC && r.judged_by_you));

    // The lead's report has the system `search`, whose one pair is the found evidence.
    let lead = app.logged_in("boss").await;
    let res = app
        .post_form(
            &lead,
            "/api/report/view",
            &[
                ("project", PROJECT),
                ("step", "1"),
                ("bootstrap", "20"),
                ("seed", "7"),
            ],
        )
        .await;
    let res = ok(res).await;
    let view: app::api::report::ReportView = res.json().await.unwrap();
    let search_scores = view
        .scores
        .iter()
        .find(|s| s.system == "search")
        .expect("the report has the system search");
    assert!(search_scores.f1 > 0.0, "{search_scores:?}");

    // The planner's seconds per judgment count the search in the finder's first pass.
    let res = app
        .post_form(&lead, "/api/report/survey", &[("project", PROJECT)])
        .await;
    let res = ok(res).await;
    let view: app::api::sample::SurveyView = res.json().await.unwrap();
    let rows: Vec<(f64, String, String, String)> = sqlx::query_as(
        "SELECT j.seconds_spent, u.username, j.stage, d.doc_id FROM judgments j
         JOIN users u ON u.id = j.annotator_id JOIN documents d ON d.id = j.doc_id
         WHERE j.seconds_spent IS NOT NULL",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    let mut seconds: Vec<f64> = rows
        .iter()
        .map(|(s, who, stage, doc)| {
            if who == "a1" && stage == "first" && doc == DOC {
                s + 12.5
            } else {
                *s
            }
        })
        .collect();
    seconds.sort_by(f64::total_cmp);
    let n = seconds.len();
    let median = if n % 2 == 1 {
        seconds[n / 2]
    } else {
        (seconds[n / 2 - 1] + seconds[n / 2]) / 2.0
    };
    let survey = view.survey.expect("the survey is made without a sample");
    assert_eq!(survey.plan.median_seconds, Some(median), "{seconds:?}");
}

#[tokio::test]
async fn search_refuses_other_projects_claims_and_a_run_cannot_be_named_search() {
    let app = TestApp::spawn().await;
    setup(&app, &["a1"], 4).await;
    let a1 = app.logged_in("a1").await;
    let res = app
        .post_form(
            &a1,
            "/api/work/search",
            &[
                ("project", PROJECT),
                ("claim_id", "999999"),
                ("query", "x"),
                ("page", "0"),
            ],
        )
        .await;
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    let long = "a".repeat(1001);
    let res = app
        .post_form(
            &a1,
            "/api/work/search",
            &[
                ("project", PROJECT),
                ("claim_id", CLAIM),
                ("query", &long),
                ("page", "0"),
            ],
        )
        .await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);

    let project = store::projects::id_by_name(&app.db, PROJECT).await.unwrap();
    let run = app.dir.path().join("search-run.jsonl");
    std::fs::write(
        &run,
        "{\"claim_id\": 1, \"doc_id\": 106301, \"p_support\": 0.5, \"p_contradict\": 0.1}\n",
    )
    .unwrap();
    let err = commands::import::run(
        &app.db,
        &common::operator_lead(&app.db, project).await,
        commands::import::RunImport {
            path: run,
            format: Some(app::domain::formats::RunFormat::Canonical),
            options: Default::default(),
            system: commands::import::SystemSpec {
                name: Some("search".into()),
                role: app::domain::pool::Role::Pooled,
                description: String::new(),
                negative_sampling_ratio: None,
            },
            allow_missing_docs: false,
        },
    )
    .await
    .expect_err("the name search is taken by the finds");
    assert!(
        err.to_string()
            .contains("pairs found beyond the runs (by search or by cal)"),
        "{err}"
    );
}
