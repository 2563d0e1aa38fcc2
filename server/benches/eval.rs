//! `claimpool eval` end to end from the files, beside pytrec_eval on the same data (issue 17):
//! a TREC run of 10,000 claims x 250 pairs (2.5 million lines) and a SciFact claims file of
//! 10,000 claims (evidence and cited documents: the judged pairs). Target: a median below
//! pytrec_eval's in-process parse + evaluate (below 2.5 s without pytrec_eval). On 2 cores (load
//! about 2 from other builds): claimpool 0.53 / 0.62 / 0.71 s (min / median / max), pytrec_eval
//! 2.32 s in-process and 2.72 s as a process (median), 3.7x; before the bulk TREC reader,
//! claimpool took 2.9 s.
//!
//! `cargo bench -p server --bench eval [-- --repeats N] [-- --claims N --depth D]`
//!
//! The files are generated first (seeded, not timed) into a temporary directory; pytrec_eval's
//! qrels (evidence 1, other cited documents 0) hold the same judgments as the claims file. Each
//! repeat times:
//! - `claimpool eval --claims claims.jsonl --run run.trec --format trec --json` (the release
//!   binary this bench is built with), wall clock, process start to exit: reading both files,
//!   P/R/F1/AP, Judged@k, bpref and the condensed figures;
//! - pytrec_eval in a python3 subprocess: `parse_qrel` + `parse_run` + `RelevanceEvaluator`
//!   with five measures (map, bpref, P, recall, ndcg) + `evaluate`, timed inside python
//!   (interpreter start and import excluded, which favours pytrec_eval), and the process's
//!   wall clock.
//!
//! It prints min / median / max of each, and the ratio of the medians. pytrec_eval is
//! pip-installed (pytrec-eval-terrier) when missing; without it only claimpool is timed.
//! Both programs' mean bpref over the claims with evidence are printed and must agree.

#[path = "support/machine.rs"]
mod machine;

use anyhow::{bail, Context};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const PYTREC: &str = r#"
import json, sys, time
t0 = time.perf_counter()
import pytrec_eval
t1 = time.perf_counter()
with open(sys.argv[1]) as f:
    qrel = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
t2 = time.perf_counter()
evaluator = pytrec_eval.RelevanceEvaluator(qrel, {"map", "bpref", "P", "recall", "ndcg"})
result = evaluator.evaluate(run)
t3 = time.perf_counter()
rel = [q for q, docs in qrel.items() if any(v > 0 for v in docs.values())]
bpref = sum(result[q]["bpref"] for q in rel if q in result) / max(len(rel), 1)
print(json.dumps({"parse": t2 - t1, "evaluate": t3 - t2, "bpref": bpref, "queries": len(result)}))
"#;

struct Shape {
    claims: usize,
    depth: usize,
}

/// Writes claims.jsonl, run.trec and qrels.txt; returns (lines of the run, evidence pairs).
fn generate(dir: &Path, shape: &Shape) -> anyhow::Result<(usize, usize)> {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let mut claims = String::new();
    let mut qrels = String::new();
    let mut run = std::io::BufWriter::new(std::fs::File::create(dir.join("run.trec"))?);
    let (mut lines, mut evidence_pairs) = (0, 0);
    for claim in 1..=shape.claims {
        // Docs of this claim: distinct ids from a 5-million-document corpus.
        let mut docs: Vec<u32> = Vec::with_capacity(shape.depth + 8);
        while docs.len() < shape.depth + 8 {
            let doc = rng.gen_range(1..5_000_000u32);
            if !docs.contains(&doc) {
                docs.push(doc);
            }
        }
        let evidence_count = rng.gen_range(0..5usize);
        let cited_count = evidence_count + rng.gen_range(0..4usize);
        let evidence = &docs[..evidence_count];
        let cited = &docs[..cited_count];
        let mut line =
            format!("{{\"id\": {claim}, \"claim\": \"Claim {claim}.\", \"evidence\": {{");
        for (i, doc) in evidence.iter().enumerate() {
            let label = if rng.gen_bool(0.7) {
                "SUPPORT"
            } else {
                "CONTRADICT"
            };
            if i > 0 {
                line.push_str(", ");
            }
            write!(
                line,
                "\"{doc}\": [{{\"sentences\": [0], \"label\": \"{label}\"}}]"
            )?;
            writeln!(qrels, "{claim} 0 {doc} 1")?;
        }
        line.push_str("}, \"cited_doc_ids\": [");
        for (i, doc) in cited.iter().enumerate() {
            if i > 0 {
                line.push_str(", ");
            }
            write!(line, "{doc}")?;
            if i >= evidence_count {
                writeln!(qrels, "{claim} 0 {doc} 0")?;
            }
        }
        line.push_str("]}\n");
        claims.push_str(&line);
        evidence_pairs += evidence_count;
        // The run: most evidence and cited docs, and others, with decreasing scores.
        let mut ranked: Vec<u32> = docs[..cited_count]
            .iter()
            .copied()
            .filter(|_| rng.gen_bool(0.7))
            .collect();
        ranked.extend(docs[cited_count..].iter().copied());
        ranked.truncate(shape.depth);
        let positions: Vec<usize> = (0..ranked.len()).collect();
        let mut order = positions.clone();
        for i in 0..order.len() {
            let j = rng.gen_range(i..order.len().min(i + 40));
            order.swap(i, j);
        }
        let mut score: f64 = 30.0;
        for (rank, &i) in order.iter().enumerate() {
            score -= rng.gen_range(0.0..0.1);
            writeln!(
                run,
                "{claim} Q0 {} {} {score:.4} bench",
                ranked[i],
                rank + 1
            )?;
            lines += 1;
        }
    }
    run.flush()?;
    std::fs::write(dir.join("claims.jsonl"), claims)?;
    std::fs::write(dir.join("qrels.txt"), qrels)?;
    Ok((lines, evidence_pairs))
}

fn pytrec_available() -> bool {
    let ok = || {
        Command::new("python3")
            .args(["-c", "import pytrec_eval"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    ok() || {
        println!("pytrec_eval missing: pip install pytrec-eval-terrier");
        let _ = Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "pytrec-eval-terrier"])
            .status();
        ok()
    }
}

fn summary(times: &[Duration]) -> String {
    let mut sorted = times.to_vec();
    sorted.sort();
    format!(
        "min {:>8.3?}  median {:>8.3?}  max {:>8.3?}",
        sorted[0],
        sorted[sorted.len() / 2],
        sorted[sorted.len() - 1]
    )
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

fn main() -> anyhow::Result<()> {
    let (mut repeats, mut shape) = (
        3usize,
        Shape {
            claims: 10_000,
            depth: 250,
        },
    );
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| -> anyhow::Result<usize> {
            args.next()
                .with_context(|| format!("{name} needs a number"))?
                .parse()
                .with_context(|| name.to_owned())
        };
        match arg.as_str() {
            "--repeats" => repeats = value("--repeats")?.max(1),
            "--claims" => shape.claims = value("--claims")?,
            "--depth" => shape.depth = value("--depth")?,
            _ => {}
        }
    }
    let dir = tempfile::tempdir()?;
    let started = Instant::now();
    let (lines, evidence) = generate(dir.path(), &shape)?;
    let run_path = dir.path().join("run.trec");
    println!(
        "generated {} claims ({evidence} evidence pairs) and a {lines}-line run ({:.1} MB) in {:.1?}; load average {}",
        shape.claims,
        std::fs::metadata(&run_path)?.len() as f64 / 1e6,
        started.elapsed(),
        machine::load_average()
    );
    let claimpool = env!("CARGO_BIN_EXE_claimpool");
    let with_pytrec = pytrec_available();
    let (mut ours, mut theirs_inside, mut theirs_wall) = (Vec::new(), Vec::new(), Vec::new());
    let (mut our_bpref, mut their_bpref) = (0.0, 0.0);
    for _ in 0..repeats {
        let start = Instant::now();
        let out = Command::new(claimpool)
            .arg("eval")
            .arg("--claims")
            .arg(dir.path().join("claims.jsonl"))
            .arg("--run")
            .arg(&run_path)
            .args(["--format", "trec", "--json"])
            .output()?;
        ours.push(start.elapsed());
        if !out.status.success() {
            bail!("claimpool eval: {}", String::from_utf8_lossy(&out.stderr));
        }
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)?;
        our_bpref = report["incomplete"]["bpref"].as_f64().context("bpref")?;
        if with_pytrec {
            let start = Instant::now();
            let out = Command::new("python3")
                .args(["-c", PYTREC])
                .arg(dir.path().join("qrels.txt"))
                .arg(&run_path)
                .output()?;
            theirs_wall.push(start.elapsed());
            if !out.status.success() {
                bail!("pytrec_eval: {}", String::from_utf8_lossy(&out.stderr));
            }
            let times: serde_json::Value = serde_json::from_slice(&out.stdout)?;
            let seconds = |key: &str| times[key].as_f64().unwrap_or(f64::NAN);
            theirs_inside.push(Duration::from_secs_f64(
                seconds("parse") + seconds("evaluate"),
            ));
            their_bpref = seconds("bpref");
            println!(
                "  pytrec_eval: parse {:.3} s, evaluate {:.3} s",
                seconds("parse"),
                seconds("evaluate")
            );
        }
    }
    println!(
        "claimpool eval (end to end, wall)         {}",
        summary(&ours)
    );
    if with_pytrec {
        println!(
            "pytrec_eval parse + evaluate (in python)  {}",
            summary(&theirs_inside)
        );
        println!(
            "pytrec_eval process (wall)                {}",
            summary(&theirs_wall)
        );
        println!(
            "ratio pytrec_eval (parse + evaluate) / claimpool eval: {:.2}x; process walls: {:.2}x",
            median(&theirs_inside).as_secs_f64() / median(&ours).as_secs_f64(),
            median(&theirs_wall).as_secs_f64() / median(&ours).as_secs_f64()
        );
        println!("mean bpref over claims with evidence: claimpool {our_bpref:.6}, pytrec_eval {their_bpref:.6}");
        if (our_bpref - their_bpref).abs() > 1e-9 {
            bail!("the two programs' bpref differ");
        }
    }
    let (target, what) = if theirs_inside.is_empty() {
        (Duration::from_millis(2500), "2.5 s")
    } else {
        (
            median(&theirs_inside),
            "pytrec_eval's parse + evaluate (median)",
        )
    };
    let verdict = if median(&ours) < target {
        "met"
    } else {
        "MISSED"
    };
    println!("target: claimpool eval under {what}, {target:.3?}: {verdict}");
    Ok(())
}
