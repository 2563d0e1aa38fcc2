//! Annotation benchmark through the server (issue: annotate in the browser).
//!
//! `cargo bench -p server --bench annotate [-- --sessions 50 --pairs 10000 --submits 40 --think-ms 1000]`
//! A fresh database with a generated corpus, claims and one run of `--pairs` pairs, pooled whole;
//! `--sessions` annotators log in over HTTP and each submits `--submits` items as fast as it can,
//! all at once. Each request is a submission whose answer carries the next item (the page shows
//! the preloaded one at once and this answer confirms it). Prints the request times, p50 and p99
//! (target p99 < 50 ms), measured at the client on the same machine.

use app::domain::account::{NewPassword, Role, Username};
use app::store::{self, import};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{BufWriter, Write};
use std::time::{Duration, Instant};

const SAMPLE: &str = include_str!("../demo/corpus.jsonl");

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let sessions = arg(&args, "--sessions", 50);
    let pairs = arg(&args, "--pairs", 10_000);
    let submits = arg(&args, "--submits", 40);
    // Pause between one session's submissions (a real annotator reads for 10-60 s); 0 saturates
    // the server, so that latency is mostly queueing.
    let think_ms = arg(&args, "--think-ms", 1000) as u64;
    let per_claim = 50;
    let claims = pairs.div_ceil(per_claim);
    let dir = tempfile::tempdir()?;
    let mut rng = ChaCha8Rng::seed_from_u64(11);

    // Corpus: the demo sample's abstracts, repeated under new ids; claims; one run.
    let docs: Vec<serde_json::Value> = SAMPLE
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let n_docs = 2_000;
    let corpus = dir.path().join("corpus.jsonl");
    let mut out = BufWriter::new(std::fs::File::create(&corpus)?);
    for id in 0..n_docs {
        let mut d = docs[id % docs.len()].clone();
        d["doc_id"] = serde_json::json!(id);
        writeln!(out, "{d}")?;
    }
    out.flush()?;
    let claims_path = dir.path().join("claims.jsonl");
    let mut out = BufWriter::new(std::fs::File::create(&claims_path)?);
    for id in 0..claims {
        writeln!(
            out,
            "{}",
            serde_json::json!({ "id": id, "claim": format!("Generated claim {id} about aspirin and risk."), "evidence": {} })
        )?;
    }
    out.flush()?;
    let run = dir.path().join("run.jsonl");
    let mut out = BufWriter::new(std::fs::File::create(&run)?);
    for claim in 0..claims {
        let start = rng.gen_range(0..n_docs);
        for rank in 1..=per_claim {
            let doc = (start + rank * 37) % n_docs;
            let p: f64 = rng.gen();
            writeln!(
                out,
                "{}",
                serde_json::json!({ "claim_id": claim, "doc_id": doc, "predicted_label": "SUPPORT", "p_support": p, "p_contradict": 0.0, "rank": rank })
            )?;
        }
    }
    out.flush()?;

    let db = store::open(&dir.path().join("bench.db")).await?;
    let project = store::projects::create(&db, "bench", "", None).await?;
    import::corpus(&db, project, &corpus, None, None).await?;
    import::claims(&db, project, &claims_path, None).await?;
    let spec = import::RunImport {
        path: run,
        format: Some(app::domain::formats::RunFormat::Canonical),
        options: Default::default(),
        system: import::SystemSpec {
            name: Some("sys".into()),
            role: import::SystemRole::Pooled,
            description: String::new(),
            negative_sampling_ratio: None,
        },
        allow_missing_docs: false,
    };
    import::run(&db, project, spec, None).await?;
    let password = "bench password";
    let hash = app::auth::hash_password(&NewPassword::parse(password)?)?;
    for i in 0..sessions {
        let user = store::users::create(
            &db,
            &Username::parse(&format!("ann{i}"))?,
            Role::Annotator,
            &hash,
            None,
        )
        .await?;
        store::projects::add_member(&db, project, user.id, None).await?;
    }
    let t = Instant::now();
    let built = store::pool::build(
        &db,
        project,
        app::domain::pool::Strategy::Confidence,
        u32::try_from(pairs)?,
        None,
    )
    .await?;
    println!(
        "pool: {} pairs assigned to {sessions} annotators in {:.2} s",
        built.pool_size,
        t.elapsed().as_secs_f64()
    );

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let router = server::http::router(db.clone(), addr).await?;
    tokio::spawn(async move { axum::serve(listener, router).await });
    let base = format!("http://{addr}");

    let mut clients = Vec::new();
    for i in 0..sessions {
        let client = reqwest::Client::builder().cookie_store(true).build()?;
        let res = client
            .post(format!("{base}/api/login"))
            .form(&[
                ("username", format!("ann{i}")),
                ("password", password.into()),
                ("next", "/".into()),
            ])
            .send()
            .await?;
        anyhow::ensure!(res.status().is_success(), "login ann{i}: {}", res.status());
        clients.push(client);
    }

    let start = Instant::now();
    let mut tasks = Vec::new();
    for (i, client) in clients.into_iter().enumerate() {
        let base = base.clone();
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::with_capacity(submits);
            let head: serde_json::Value = client
                .post(format!("{base}/api/work/queue"))
                .form(&[("project", "bench")])
                .send()
                .await?
                .json()
                .await?;
            let mut current = head["current"]["assignment_id"].as_i64();
            let mut stage = head["current"]["stage"].as_str().map(str::to_owned);
            for k in 0..submits {
                let Some(id) = current else { break };
                if think_ms > 0 {
                    // Sessions start spread out, then pause between items.
                    let jitter = (i as u64 * 37 + k as u64 * 11) % think_ms.max(1);
                    tokio::time::sleep(Duration::from_millis(think_ms / 2 + jitter)).await;
                }
                // First passes: mostly "clearly no evidence", every fifth a label that needs a
                // second pass; second passes and adjudications: a label.
                let form = if (i + k) % 5 == 0 || stage.as_deref() != Some("first") {
                    serde_json::json!({ "label": "SUPPORT", "sentences": [0], "specificity": "matches" })
                } else {
                    serde_json::json!({ "no_evidence": true })
                };
                let t = Instant::now();
                let res = client
                    .post(format!("{base}/api/work/submit"))
                    .json(&serde_json::json!({ "project": "bench", "assignment_id": id, "form": form, "seconds_spent": 3.0 }))
                    .send()
                    .await?;
                let status = res.status();
                let head: serde_json::Value = res.json().await?;
                times.push(t.elapsed());
                anyhow::ensure!(status.is_success(), "submit: {status} {head}");
                current = head["current"]["assignment_id"].as_i64();
                stage = head["current"]["stage"].as_str().map(str::to_owned);
            }
            anyhow::Ok(times)
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await??);
    }
    let wall = start.elapsed().as_secs_f64();
    all.sort_unstable();
    let judgments: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM judgments")
        .fetch_one(&db)
        .await?;
    println!(
        "annotate: {sessions} sessions (think time ~{think_ms} ms), {} submissions in {wall:.1} s ({:.0}/s); submit → next item p50 {:.1} ms, p99 {:.1} ms (target p99 < 50 ms), max {:.1} ms",
        all.len(),
        all.len() as f64 / wall,
        percentile(&all, 0.5),
        percentile(&all, 0.99),
        percentile(&all, 1.0)
    );
    anyhow::ensure!(
        judgments == all.len() as i64,
        "{judgments} judgments for {} submissions",
        all.len()
    );
    Ok(())
}
