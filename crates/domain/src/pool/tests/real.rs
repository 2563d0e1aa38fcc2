//! Real SciFact dev runs (from `shared/data`, skipped when absent): the pool and Table 2c
//! equal the naive computation on label-only runs (score 1/0, ties broken by retrieval rank),
//! a sentence-score run and an evaluation-only MultiVerS run with label probabilities.

use super::naive::{self, NaiveSystem};
use super::{as_naive, to_ranking, STRATEGIES};
use crate::pool::{Pair, Strategy};
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Claims kept: the first 60 dev claims (the naive ranks are quadratic).
const CLAIMS: usize = 60;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data")
}

fn lines(path: &Path) -> Vec<serde_json::Value> {
    testdata::json_lines(path)
}

fn as_u32(v: &Value) -> u32 {
    u32::try_from(v.as_u64().unwrap()).unwrap()
}

fn doc_key(text: &str) -> u32 {
    text.parse().unwrap()
}

/// Where one run is and how to read it.
struct RunFile<'a> {
    path: PathBuf,
    name: &'a str,
    pooled: bool,
    claim_field: &'a str,
    docs_field: &'a str,
    /// Whether a doc's position in the file's dict is its retrieval rank.
    ranked: bool,
}

/// Reads the pairs of `claims` from a run; `score` maps a doc's record to its score.
fn read_run(
    file: RunFile<'_>,
    score: impl Fn(&Value) -> f64,
    claims: &HashSet<u32>,
) -> NaiveSystem {
    let mut pairs = Vec::new();
    for record in lines(&file.path) {
        let claim = as_u32(&record[file.claim_field]);
        if !claims.contains(&claim) {
            continue;
        }
        let docs = record[file.docs_field].as_object().unwrap();
        for (position, (doc, value)) in docs.iter().enumerate() {
            let rank = file.ranked.then(|| u32::try_from(position).unwrap() + 1);
            pairs.push((claim, doc_key(doc), score(value), rank));
        }
    }
    assert!(!pairs.is_empty(), "{}", file.path.display());
    NaiveSystem {
        name: file.name.into(),
        pooled: file.pooled,
        pairs,
    }
}

#[test]
fn real_runs_pool_as_the_naive_implementation_does() {
    let data = data_dir();
    let runs = data.join("scifact-runs");
    if !runs.join("arsjoint").is_dir() || !data.join("scifact/claims_dev.jsonl").is_file() {
        eprintln!("skipped: no real data at {}", data.display());
        return;
    }
    let dev = lines(&data.join("scifact/claims_dev.jsonl"));
    let claims: HashSet<u32> = dev.iter().take(CLAIMS).map(|c| as_u32(&c["id"])).collect();
    let prior: HashSet<Pair<u32, u32>> = dev
        .iter()
        .take(CLAIMS)
        .flat_map(|c| {
            let claim = as_u32(&c["id"]);
            let docs = c["evidence"].as_object().unwrap().keys();
            docs.map(move |d| Pair::new(claim, doc_key(d)))
        })
        .collect();

    let label_only = |v: &Value| f64::from(u8::from(v["label"] != "NOT_ENOUGH_INFO"));
    let mut systems: Vec<NaiveSystem> = [
        "2021-03-27_21c6c29",
        "2021-04-11_6683be0",
        "2021-04-20_1e22954",
    ]
    .iter()
    .map(|commit| {
        let file = RunFile {
            path: runs
                .join("arsjoint")
                .join(commit)
                .join("label_predictions.jsonl"),
            name: commit,
            pooled: true,
            claim_field: "claim_id",
            docs_field: "labels",
            ranked: true,
        };
        read_run(file, label_only, &claims)
    })
    .collect();
    let max_sentence = |v: &Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_f64().unwrap())
            .fold(f64::NEG_INFINITY, f64::max)
    };
    let rationale = RunFile {
        path: runs.join(
            "rationale_scores_neverneverendup/k30_scores_baseline_predicted_rationale_selection.jsonl",
        ),
        name: "rationale",
        pooled: true,
        claim_field: "claim_id",
        docs_field: "evidence",
        ranked: true,
    };
    systems.push(read_run(rationale, max_sentence, &claims));
    // label_probs = [p_REFUTE, p_NEI, p_SUPPORT]
    let max_evidence = |v: &Value| {
        let p = v["label_probs"].as_array().unwrap();
        p[0].as_f64().unwrap().max(p[2].as_f64().unwrap())
    };
    let multivers = RunFile {
        path: runs.join("multivers_jedick/dev/scifact_scifact_dev.jsonl"),
        name: "multivers",
        pooled: false,
        claim_field: "id",
        docs_field: "evidence",
        ranked: false,
    };
    systems.push(read_run(multivers, max_evidence, &claims));

    for (strategy, per_claim) in STRATEGIES {
        let ranking = to_ranking(&systems, strategy);
        let all_ranks: Vec<Vec<u32>> = systems.iter().map(|s| naive::ranks(s, per_claim)).collect();
        let depths = match strategy {
            Strategy::Confidence => [25, 100, 400],
            Strategy::PerClaim => [1, 3, 10],
        };
        for depth in depths {
            let pool = ranking.pool(depth);
            assert!(!pool.is_empty());
            assert_eq!(
                as_naive(&pool),
                naive::pool_with_ranks(&systems, &all_ranks, depth),
                "{strategy:?} {depth}"
            );

            let table_c = ranking.prior_evidence_stats(&prior, depth, 3);
            assert_eq!(table_c.total, prior.len());
            let in_pool = prior.iter().filter(|p| pool.get(p).is_some()).count();
            assert_eq!(table_c.in_pool, in_pool);
            for ((row, system), ranks) in table_c.per_system.iter().zip(&systems).zip(&all_ranks) {
                let hits: Vec<_> = system
                    .pairs
                    .iter()
                    .zip(ranks)
                    .filter(|(p, _)| prior.contains(&Pair::new(p.0, p.1)))
                    .collect();
                let in_top_k = hits
                    .iter()
                    .filter(|(p, _)| p.3.is_some_and(|r| r <= 3))
                    .count();
                let in_top_depth = hits.iter().filter(|(_, &r)| r <= depth).count();
                assert_eq!(
                    (row.retrieved, row.in_top_k, row.in_top_depth),
                    (hits.len(), in_top_k, in_top_depth)
                );
            }
        }
    }
}
