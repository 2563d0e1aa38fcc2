//! The live `cal` order (issue 38): the lead sets it, the corpus is searched for each claim's
//! top K, and the first passes served are the domain replay's over the same candidates, step
//! by step; a pair no pool entry holds joins the pool in the `cal` step with each pooled
//! system's rank; annotators asking at once get different pairs.

use super::live_order::{label_for, labels_so_far, pair_of, setup_at, three_systems, RowPair};
use super::{count, queue, submit};
use crate::common::TestApp;
use app::domain::judging::{replay_cal, CalCandidates, JudgingOrder, Retrieved};
use app::domain::pool::{Pair, Strategy};
use std::collections::{HashMap, HashSet};

const K: u32 = 4;
const SEED: u64 = 2022;

/// Sets `cal` with K retrievals per claim as the lead's page does (the command behind it).
async fn set_cal(app: &TestApp, project: i64) -> String {
    let lead = crate::common::operator_lead(&app.db, project).await;
    commands::project::SetJudging::parse_form("cal", &SEED.to_string(), "", &K.to_string(), false)
        .unwrap()
        .run(&app.db, &lead)
        .await
        .unwrap()
        .unwrap()
}

/// The domain replay's judging sequence over the project's candidates (the pooled runs'
/// whole rankings and the stored retrievals, in the loader's keys), judged by
/// [`label_for`]: the pairs, by row ids.
async fn replayed(app: &TestApp, project: i64, budget: usize) -> Vec<RowPair> {
    let loaded = store::pool::load(&app.db, project, Strategy::Confidence)
        .await
        .unwrap();
    let rankings: Vec<Vec<Pair<u32, u32>>> = loaded
        .ranking
        .pooled()
        .map(|(_, run)| run.top(u32::MAX).map(|(_, s)| s.pair).collect())
        .collect();
    let rows: Vec<(i64, i64, i64, f64)> = sqlx::query_as(
        "SELECT claim_id, doc_id, rank, share FROM cal_retrievals WHERE project_id = $1",
    )
    .bind(project)
    .fetch_all(&app.db)
    .await
    .unwrap();
    let retrieved: Vec<Retrieved<u32, u32>> = rows
        .iter()
        .map(|&(claim, doc, rank, share)| Retrieved {
            pair: loaded.pair_key(claim, doc).unwrap(),
            rank: u32::try_from(rank).unwrap(),
            share,
        })
        .collect();
    let candidates = CalCandidates::new(&rankings, &retrieved).unwrap();
    let truth: HashSet<Pair<u32, u32>> = candidates
        .pairs()
        .iter()
        .copied()
        .filter(|pair| {
            let (claim, doc) = loaded.pair_ids(pair).unwrap();
            label_for(Pair::new(claim, doc)).1
        })
        .collect();
    replay_cal(&candidates, &truth, budget, SEED)
        .judged
        .iter()
        .map(|&row| {
            let (claim, doc) = loaded.pair_ids(&candidates.pairs()[row]).unwrap();
            Pair::new(claim, doc)
        })
        .collect()
}

#[tokio::test]
async fn cal_serves_the_replays_sequence_and_pools_what_no_run_ranked() {
    let app = TestApp::spawn().await;
    // The pool holds each system's top 3; the runs rank 24 pairs each.
    let (project, rankings) = setup_at(&app, &["solo"], &three_systems(), None, Some(3)).await;
    let pooled_before = count(&app, "SELECT COUNT(*) FROM pool_entries").await;
    let said = set_cal(&app, project).await;
    assert!(said.contains("Judging order cal"), "{said}");
    assert!(said.contains(&format!("top {K} (bm25)")), "{said}");
    // The retrievals: at most K per claim, ranks 1.. within each claim, every claim searched.
    let claims = count(&app, "SELECT COUNT(*) FROM claims").await;
    let per_claim: Vec<(i64, i64, i64)> = sqlx::query_as(
        "SELECT claim_id, COUNT(*), MAX(rank) FROM cal_retrievals WHERE project_id = $1 GROUP BY claim_id",
    )
    .bind(project)
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(per_claim.len() as i64, claims);
    assert!(per_claim
        .iter()
        .all(|&(_, n, max)| n == i64::from(K) && max == n));

    // Every candidate: the order runs dry when each has a label.
    let expected = replayed(&app, project, usize::MAX).await;
    let budget = expected.len();
    let solo = app.logged_in("solo").await;
    let mut head = queue(&app, &solo).await;
    let mut served = Vec::new();
    while served.len() < budget {
        let item = head.current.clone().expect("cal serves every candidate");
        assert_eq!(item.stage, "first");
        let pair = pair_of(&app, &item).await;
        assert_eq!(pair, expected[served.len()], "step {}", served.len());
        served.push(pair);
        let res = submit(&app, &solo, item.assignment_id.unwrap(), label_for(pair).0).await;
        assert!(res.status().is_success(), "{}", res.status());
        head = res.json().await.unwrap();
    }
    assert!(
        head.current.is_none(),
        "cal served more than its candidates"
    );
    // Every label the order read is the annotator's.
    let labels: HashMap<RowPair, bool> = labels_so_far(&app, project).await;
    assert!(served
        .iter()
        .all(|p| labels.get(p) == Some(&label_for(*p).1)));

    // What cal added to the pool: one `cal` step and one pick per new entry, the served pairs
    // the pool did not hold; `in_runs` says whether any run ranked them.
    let ranked: HashSet<RowPair> = rankings.iter().flatten().copied().collect();
    let picks: Vec<(i64, i64, i64)> = sqlx::query_as(
        "SELECT e.claim_id, e.doc_id, p.in_runs FROM cal_picks p JOIN pool_entries e ON e.id = p.pool_entry_id
         WHERE p.project_id = $1",
    )
    .bind(project)
    .fetch_all(&app.db)
    .await
    .unwrap();
    let added = count(&app, "SELECT COUNT(*) FROM pool_entries").await - pooled_before;
    assert_eq!(picks.len() as i64, added);
    // One `cal` step, its count of pairs added the picks'.
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM pool_build_rows WHERE kind = 'cal'"
        )
        .await,
        1
    );
    assert_eq!(
        count(&app, "SELECT added FROM pool_build_rows WHERE kind = 'cal'").await,
        added
    );
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM pool_builds").await,
        1,
        "cal's steps are no pool builds"
    );
    let outside: Vec<&(i64, i64, i64)> = picks.iter().filter(|p| p.2 == 0).collect();
    assert!(!outside.is_empty(), "cal served no pair outside the runs");
    assert!(
        picks.len() > outside.len(),
        "cal served no run pair beyond the pool"
    );
    for &(claim, doc, in_runs) in &picks {
        assert_eq!(in_runs == 1, ranked.contains(&Pair::new(claim, doc)));
    }
    // A pick some run ranked carries each pooled system's rank of it, as the run files give.
    let ranks: Vec<(i64, i64, String, i64)> = sqlx::query_as(
        "SELECT e.claim_id, e.doc_id, s.name, r.rank FROM cal_picks p
         JOIN pool_entries e ON e.id = p.pool_entry_id
         JOIN pool_ranks r ON r.pool_entry_id = e.id JOIN systems s ON s.id = r.system_id
         WHERE p.project_id = $1",
    )
    .bind(project)
    .fetch_all(&app.db)
    .await
    .unwrap();
    let mut expected_ranks = 0;
    for (s, ranking) in rankings.iter().enumerate() {
        for (i, pair) in ranking.iter().enumerate() {
            if picks.iter().any(|p| Pair::new(p.0, p.1) == *pair) {
                expected_ranks += 1;
                assert!(ranks.contains(&(
                    pair.claim,
                    pair.doc,
                    format!("secret-system-{s}"),
                    i as i64 + 1
                )));
            }
        }
    }
    assert_eq!(ranks.len(), expected_ranks);

    // The lead's panel counts what cal added.
    let view = store::annotate::judging_view(&app.db, project)
        .await
        .unwrap();
    assert_eq!(view.order, JudgingOrder::Cal.as_str());
    let cal = view.cal.expect("the retrievals are made");
    assert_eq!(cal.per_claim, K);
    assert_eq!(cal.picks as usize, picks.len());
    assert_eq!(cal.outside_runs as usize, outside.len());
    // The lead's report counts the pairs only cal's retrievals found as the system `cal`.
    app.add_lead("boss", super::PROJECT).await;
    let boss = app.logged_in("boss").await;
    let res = app
        .post_form(
            &boss,
            "/api/report/view",
            &[
                ("project", super::PROJECT),
                ("step", "1"),
                ("bootstrap", "20"),
                ("seed", "7"),
            ],
        )
        .await;
    assert!(res.status().is_success(), "{}", res.status());
    let report: app::api::report::ReportView = res.json().await.unwrap();
    assert!(
        report.scores.iter().any(|s| s.system == "cal"),
        "the report has the system cal: {:?}",
        report.scores.iter().map(|s| &s.system).collect::<Vec<_>>()
    );
    // Saving the same settings again does not search the corpus again.
    let again = set_cal(&app, project).await;
    assert!(!again.contains("searched"), "{again}");

    // A corpus import after the retrievals: the panel says they may miss it, until they are
    // made again.
    let stale = |app: &TestApp| {
        let db = app.db.clone();
        async move {
            store::annotate::judging_view(&db, project)
                .await
                .unwrap()
                .cal
                .unwrap()
                .stale
        }
    };
    assert!(!stale(&app).await);
    let more = app.dir.path().join("more.jsonl");
    std::fs::write(
        &more,
        "{\"doc_id\": 99999901, \"title\": \"A new abstract\", \"abstract\": [\"One sentence.\"]}\n",
    )
    .unwrap();
    let lead = crate::common::operator_lead(&app.db, project).await;
    commands::import::corpus(&app.db, &lead, &more, None)
        .await
        .unwrap();
    assert!(stale(&app).await);
    let remade = commands::project::SetJudging::parse_form(
        "cal",
        &SEED.to_string(),
        "",
        &K.to_string(),
        true,
    )
    .unwrap()
    .run(&app.db, &lead)
    .await
    .unwrap()
    .unwrap();
    assert!(remade.contains("searched"), "{remade}");
    assert!(!stale(&app).await);
}

#[tokio::test]
async fn annotators_asking_at_once_get_different_pairs_and_the_order_goes_on() {
    let app = TestApp::spawn().await;
    let names = ["a1", "a2", "a3", "a4"];
    let (project, _) = setup_at(&app, &names, &three_systems(), None, Some(2)).await;
    set_cal(&app, project).await;
    let mut clients = Vec::new();
    for name in names {
        clients.push(app.logged_in(name).await);
    }
    for round in 0..5 {
        let (h1, h2, h3, h4) = tokio::join!(
            queue(&app, &clients[0]),
            queue(&app, &clients[1]),
            queue(&app, &clients[2]),
            queue(&app, &clients[3])
        );
        let heads = [h1, h2, h3, h4];
        let mut pairs = HashSet::new();
        for head in &heads {
            let item = head.current.clone().expect("a first pass for everyone");
            assert!(pairs.insert(pair_of(&app, &item).await), "round {round}");
        }
        for (client, head) in clients.iter().zip(&heads) {
            let item = head.current.clone().unwrap();
            let pair = pair_of(&app, &item).await;
            let res = submit(&app, client, item.assignment_id.unwrap(), label_for(pair).0).await;
            assert!(res.status().is_success());
        }
    }
    // Twenty submissions: first passes the order served, none of a pair twice, and the
    // second passes their evidence labels asked for.
    let firsts = count(&app, "SELECT COUNT(*) FROM judgments WHERE stage = 'first'").await;
    let distinct = count(
        &app,
        "SELECT COUNT(DISTINCT claim_id || '-' || doc_id) FROM judgments WHERE stage = 'first'",
    )
    .await;
    assert_eq!(distinct, firsts);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM judgments").await, 20);
    assert!(firsts >= 10, "{firsts} first passes");
}

/// `ln C(n, k)` as a sum of logarithms of exact ratios.
fn ln_choose(n: u64, k: u64) -> f64 {
    (0..k).map(|i| ((n - i) as f64 / (k - i) as f64).ln()).sum()
}

/// `P(X ≤ k)`, `X ~ Hypergeometric(n_pop, succ, draws)`, term by term: the test's reference.
fn tail(k: u64, n_pop: u64, succ: u64, draws: u64) -> f64 {
    (0..=k.min(draws))
        .filter(|&x| x <= succ && draws - x <= n_pop - succ)
        .map(|x| {
            (ln_choose(succ, x) + ln_choose(n_pop - succ, draws - x) - ln_choose(n_pop, draws))
                .exp()
        })
        .sum()
}

/// The stopping sample's pairs, in draw order.
async fn stop_pairs(app: &TestApp) -> Vec<RowPair> {
    sqlx::query_as::<_, (i64, i64)>("SELECT claim_id, doc_id FROM cal_stop_pairs ORDER BY position")
        .fetch_all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|(c, d)| Pair::new(c, d))
        .collect()
}

/// The least total `R` with `τ·R > found`, less `before`: the evidence left under H0.
fn k_tar(recall: f64, found: u64, before: u64) -> u64 {
    (0..).find(|&r| recall * r as f64 > found as f64).unwrap() - before
}

#[tokio::test]
async fn a_stopping_sample_is_drawn_from_the_unjudged_served_first_and_tested() {
    let app = TestApp::spawn().await;
    let (project, rankings) = setup_at(&app, &["solo"], &three_systems(), None, Some(3)).await;
    set_cal(&app, project).await;
    app.add_lead("boss", super::PROJECT).await;
    let boss = app.logged_in("boss").await;
    let solo = app.logged_in("solo").await;
    // The candidates, independently: every pair a run ranked and every retrieval.
    let mut candidates: HashSet<RowPair> = rankings.iter().flatten().copied().collect();
    let retrieved: Vec<(i64, i64)> =
        sqlx::query_as("SELECT claim_id, doc_id FROM cal_retrievals WHERE project_id = $1")
            .bind(project)
            .fetch_all(&app.db)
            .await
            .unwrap();
    candidates.extend(retrieved.into_iter().map(|(c, d)| Pair::new(c, d)));

    // Ten first passes; the eleventh is held when the sample is drawn.
    let mut judged = Vec::new();
    let mut head = queue(&app, &solo).await;
    for _ in 0..10 {
        let item = head.current.clone().unwrap();
        let pair = pair_of(&app, &item).await;
        judged.push(pair);
        head = submit(&app, &solo, item.assignment_id.unwrap(), label_for(pair).0)
            .await
            .json()
            .await
            .unwrap();
    }
    let draw = |recall: &'static str, confidence: &'static str| {
        let (app, boss) = (&app, &boss);
        async move {
            app.post_form(
                boss,
                "/api/lead/annotation/stop-sample",
                &[
                    ("project", super::PROJECT),
                    ("recall", recall),
                    ("confidence", confidence),
                    ("size", ""),
                    ("seed", "3"),
                ],
            )
            .await
        }
    };
    // A target recall out of range is named.
    let res = draw("1.2", "0.8").await;
    assert_eq!(res.status(), reqwest::StatusCode::BAD_REQUEST);
    let e: app::error::ApiError = res.json().await.unwrap();
    assert!(e.to_string().starts_with("target recall: "), "{e}");
    let res = draw("0.5", "0.8").await;
    assert!(res.status().is_success(), "{}", res.status());
    let said: String = res.json().await.unwrap();
    assert!(said.starts_with("Drew "), "{said}");

    let found = judged.iter().filter(|p| label_for(**p).1).count() as u64;
    let unjudged = (candidates.len() - judged.len()) as u64;
    let (k, n, size): (i64, i64, i64) =
        sqlx::query_as("SELECT found, unjudged, size FROM cal_stop_samples WHERE project_id = $1")
            .bind(project)
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!((k as u64, n as u64), (found, unjudged));
    // The size the test needs: the fewest all-negative draws with P < 0.2.
    let remaining = k_tar(0.5, found, found);
    let needed = (1..=unjudged)
        .find(|&d| tail(0, unjudged, remaining, d) < 0.2)
        .unwrap_or(unjudged);
    assert_eq!(size as u64, needed);
    let sample = stop_pairs(&app).await;
    assert_eq!(sample.len() as i64, size);
    assert_eq!(sample.iter().collect::<HashSet<_>>().len(), sample.len());
    assert!(sample
        .iter()
        .all(|p| candidates.contains(p) && !judged.contains(p)));
    let view = store::annotate::judging_view(&app.db, project)
        .await
        .unwrap();
    let stop = view.cal.unwrap().stopping.expect("the sample is shown");
    assert_eq!((stop.judged, stop.size), (0, size as u64));

    // The held pass first, then the sample's pairs in draw order, then cal's proposals.
    let held = pair_of(&app, head.current.as_ref().unwrap()).await;
    let mut served = Vec::new();
    loop {
        let item = head.current.clone().unwrap();
        let pair = pair_of(&app, &item).await;
        if !served.is_empty() && !sample.contains(&pair) {
            break;
        }
        served.push(pair);
        head = submit(&app, &solo, item.assignment_id.unwrap(), label_for(pair).0)
            .await
            .json()
            .await
            .unwrap();
    }
    let expected: Vec<RowPair> = std::iter::once(held)
        .chain(sample.iter().copied().filter(|p| *p != held))
        .collect();
    assert_eq!(served, expected);
    // Each pick of the sample's says so in its audit event (the held pass was cal's own).
    let picks: Vec<String> =
        sqlx::query_scalar("SELECT new_value FROM audit_events WHERE action = 'cal_pick'")
            .fetch_all(&app.db)
            .await
            .unwrap();
    let sampled = picks
        .iter()
        .filter(|text| {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            !value["stopping_sample"].is_null()
        })
        .count();
    assert!(sampled > 0 && sampled <= sample.len(), "{sampled}");
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM audit_events WHERE action = 'cal_stop_sample'"
        )
        .await,
        1
    );

    // The test on the judged sample, against the reference tail.
    let view = store::annotate::judging_view(&app.db, project)
        .await
        .unwrap();
    let stop = view.cal.unwrap().stopping.unwrap();
    assert_eq!(stop.judged, size as u64);
    let app::domain::model::survey::Stopping::Tested {
        sample: counts,
        decision,
        draws_to_stop,
        ..
    } = stop.stopping
    else {
        panic!("tested: {:?}", stop.stopping);
    };
    let drawn_evidence = sample.iter().filter(|p| label_for(**p).1).count() as u64;
    assert_eq!(counts.drawn_evidence, drawn_evidence);
    let p = tail(
        drawn_evidence,
        unjudged,
        k_tar(0.5, found + drawn_evidence, found),
        size as u64,
    );
    assert!(
        (decision.p_value - p).abs() < 1e-9,
        "{} against {p}",
        decision.p_value
    );
    assert_eq!(decision.stop, p < 0.2);
    if !decision.stop {
        assert!(draws_to_stop > 0);
    }
    // Another order: a sample is refused, naming the order.
    let lead = crate::common::operator_lead(&app.db, project).await;
    commands::project::SetJudging::parse_form("mtf", "1", "", "", false)
        .unwrap()
        .run(&app.db, &lead)
        .await
        .unwrap();
    let res = draw("0.5", "0.8").await;
    assert_eq!(res.status(), reqwest::StatusCode::BAD_REQUEST);
    let e: app::error::ApiError = res.json().await.unwrap();
    assert!(e.to_string().starts_with("order: "), "{e}");
}

/// A second `claimpool serve` process on the app's database, killed when dropped.
struct SecondServer {
    child: std::process::Child,
    base: String,
}

impl Drop for SecondServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn second_server(app: &TestApp) -> SecondServer {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = crate::support::cli::command()
        .args(["serve", "--db", &app.db_arg, "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let server = SecondServer {
        child,
        base: format!("http://127.0.0.1:{port}"),
    };
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return server;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the second server did not listen");
}

/// The first pass the server at `base` gives `client` (its queue read), or the next one after
/// submitting `pair`'s label for `assignment`.
async fn next_at(
    client: &reqwest::Client,
    base: &str,
    submit: Option<(i64, RowPair)>,
) -> app::model::annotate::ItemView {
    let request = match submit {
        None => client
            .post(format!("{base}/api/work/queue"))
            .form(&[("project", super::PROJECT)]),
        Some((assignment, pair)) => client.post(format!("{base}/api/work/submit")).json(
            &serde_json::json!({ "project": super::PROJECT, "assignment_id": assignment, "form": label_for(pair).0, "seconds_spent": 3.0 }),
        ),
    };
    let res = request.send().await.unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    let head: app::model::annotate::QueueHead = res.json().await.unwrap();
    head.current.expect("a first pass")
}

#[tokio::test]
async fn two_servers_serve_one_cal_order_and_its_stopping_sample() {
    let app = TestApp::spawn().await;
    let (project, _) = setup_at(&app, &["a1", "a2"], &three_systems(), None, Some(3)).await;
    set_cal(&app, project).await;
    let second = second_server(&app).await;
    // a1 works on this server, a2 on the second process.
    let a1 = app.logged_in("a1").await;
    let a2 = app.client();
    let res = a2
        .post(format!("{}/api/login", second.base))
        .form(&[
            ("username", "a2"),
            ("password", crate::common::PASSWORD),
            ("next", "/"),
        ])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    let here = app.url("");
    let mut h1 = next_at(&a1, &here, None).await;
    let mut h2 = next_at(&a2, &second.base, None).await;
    let mut served = Vec::new();
    // Taking turns, each server choosing from its own memory of the order (second passes of
    // evidence come in between).
    for _ in 0..6 {
        let p1 = pair_of(&app, &h1).await;
        if h1.stage == "first" {
            served.push(p1);
        }
        h1 = next_at(&a1, &here, Some((h1.assignment_id.unwrap(), p1))).await;
        let p2 = pair_of(&app, &h2).await;
        if h2.stage == "first" {
            served.push(p2);
        }
        h2 = next_at(&a2, &second.base, Some((h2.assignment_id.unwrap(), p2))).await;
    }
    assert!(served.len() >= 6, "{served:?}");
    assert_eq!(
        served.iter().collect::<HashSet<_>>().len(),
        served.len(),
        "no pair served twice as a first pass: {served:?}"
    );
    // A sample drawn through this server is served first by the other.
    let lead = crate::common::operator_lead(&app.db, project).await;
    commands::project::DrawStopSample::parse(0.5, 0.8, Some(4), 1)
        .unwrap()
        .run(&app.db, &lead)
        .await
        .unwrap();
    let sample = stop_pairs(&app).await;
    let (held1, held2) = (pair_of(&app, &h1).await, pair_of(&app, &h2).await);
    // a2 goes on on the second server until it has been given two new first passes.
    let mut after = Vec::new();
    while after.len() < 2 {
        let p2 = pair_of(&app, &h2).await;
        h2 = next_at(&a2, &second.base, Some((h2.assignment_id.unwrap(), p2))).await;
        if h2.stage == "first" {
            after.push(pair_of(&app, &h2).await);
        }
    }
    let expected: Vec<RowPair> = sample
        .iter()
        .copied()
        .filter(|p| *p != held1 && *p != held2)
        .take(2)
        .collect();
    assert_eq!(after, expected, "the second server serves the sample first");
}
