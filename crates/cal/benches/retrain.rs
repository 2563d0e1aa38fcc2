//! `cargo bench -p cal --bench retrain [-- --candidates N --judgments J]`: the CAL order over N
//! generated candidates (8 features, about 1 in 50 evidence) judged J times; prints the time of
//! each round (a retrain on the labels so far and a rescoring of every candidate not yet taken)
//! and of the other steps. Issue target: a retrain and rescoring of 50,000 candidates under 1 s.

use cal::{CalOrder, Features, Step};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

const COLUMNS: usize = 8;

fn main() {
    let mut candidates = 50_000usize;
    let mut judgments = 2_000usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || -> usize {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{arg} needs a number"))
        };
        match arg.as_str() {
            "--candidates" => candidates = value(),
            "--judgments" => judgments = value(),
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut values = Vec::with_capacity(candidates * COLUMNS);
    let mut truth = Vec::with_capacity(candidates);
    for _ in 0..candidates {
        let evidence = rng.gen_ratio(1, 50);
        for c in 0..COLUMNS {
            let signal = if evidence { 1.0 / (c + 1) as f64 } else { 0.0 };
            values.push(rng.gen_range(-1.0..1.0) + signal);
        }
        truth.push(evidence);
    }
    let features = Features::new(COLUMNS, values).expect("generated features are finite");
    let mut labels: Vec<Option<bool>> = vec![None; candidates];
    let mut order = CalOrder::new(&features, 7);
    let mut rounds: Vec<Duration> = Vec::new();
    let mut others: Vec<Duration> = Vec::new();
    let mut found = 0usize;
    let started = Instant::now();
    for _ in 0..judgments {
        let before = order.rounds();
        let t = Instant::now();
        let step = order.next(|i| labels[i]);
        let took = t.elapsed();
        if order.rounds() > before {
            rounds.push(took);
        } else {
            others.push(took);
        }
        match step {
            Step::Proposal(i) => {
                labels[i] = Some(truth[i]);
                found += usize::from(truth[i]);
            }
            Step::Exhausted => break,
        }
    }
    let total = started.elapsed();
    rounds.sort();
    others.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let pick = |v: &[Duration], q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    println!(
        "cal: {candidates} candidates × {COLUMNS} features, {judgments} judgments, evidence found {found} of {}",
        truth.iter().filter(|t| **t).count()
    );
    println!(
        "cal: {} rounds (retrain + rescoring): median {:.1} ms, max {:.1} ms (target < 1,000 ms)",
        rounds.len(),
        ms(pick(&rounds, 0.5)),
        ms(pick(&rounds, 1.0))
    );
    if !others.is_empty() {
        println!(
            "cal: other steps: median {:.4} ms, max {:.3} ms; all {judgments} judgments {:.2} s",
            ms(pick(&others, 0.5)),
            ms(pick(&others, 1.0)),
            total.as_secs_f64()
        );
    }
}
