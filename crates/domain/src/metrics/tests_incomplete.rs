//! Incomplete-judgment metrics and significance tests, against naive re-implementations written
//! here from the definitions (no shared code path with `incomplete` or `significance`), on
//! hand-made cases and random ones.

use super::reference::{self, build_run, RawGold, RawPair};
use super::*;
use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;

use Label::{Contradict as C, Nei as N, Support as S};

fn cid(s: &str) -> ClaimId {
    ClaimId::parse(s).unwrap()
}

fn did(s: &str) -> DocId {
    DocId::parse(s).unwrap()
}

/// A test collection: gold evidence plus the judged NEI pairs.
struct Case {
    gold: RawGold,
    /// Judged pairs that are not evidence (NEI).
    judged_nei: Vec<(String, String)>,
}

impl Case {
    fn judgments(&self, gold: &Gold) -> Judgments {
        Judgments::new(gold, self.judged_nei.iter().map(|(c, d)| (cid(c), did(d))))
    }

    fn judged(&self) -> HashSet<(String, String)> {
        self.gold
            .evidence
            .iter()
            .map(|(c, d, _)| (c.clone(), d.clone()))
            .chain(self.judged_nei.iter().cloned())
            .collect()
    }

    fn evidence_label(&self, claim: &str, doc: &str) -> Option<Label> {
        self.gold
            .evidence
            .iter()
            .find(|(c, d, _)| c == claim && d == doc)
            .map(|e| e.2)
    }

    /// Whether a ranked pair is relevant: gold evidence, and the curve's label matches.
    fn relevant(&self, p: &RawPair) -> bool {
        let Some(gold) = self.evidence_label(&p.claim, &p.doc) else {
            return false;
        };
        match (p.probs, p.label) {
            (Some((s, c)), _) => (if c > s { C } else { S }) == gold,
            (None, Some(label)) => label == gold,
            (None, None) => true,
        }
    }
}

/// Naive per-claim figures: (Judged@k for each k, bpref, condensed AP, unjudged predicted
/// evidence).
fn naive_claim(
    case: &Case,
    run: &[RawPair],
    claim: &str,
    ks: &[usize],
) -> (Vec<f64>, f64, f64, u64) {
    let judged = case.judged();
    let is_judged = |p: &RawPair| judged.contains(&(p.claim.clone(), p.doc.clone()));
    let mut ranked: Vec<&RawPair> = run.iter().filter(|p| p.claim == claim).collect();
    ranked.sort_by(|a, b| {
        b.confidence
            .partial_cmp(&a.confidence)
            .unwrap()
            .then(b.doc.cmp(&a.doc))
    });
    let judged_at = ks
        .iter()
        .map(|&k| ranked.iter().take(k).filter(|p| is_judged(p)).count() as f64 / k as f64)
        .collect();
    let r = case.gold.evidence.iter().filter(|e| e.0 == claim).count();
    // Judged non-relevant: judged NEI pairs, plus gold pairs the run ranks with a wrong label.
    let n = case.judged_nei.iter().filter(|p| p.0 == claim).count()
        + ranked
            .iter()
            .filter(|p| case.evidence_label(&p.claim, &p.doc).is_some() && !case.relevant(p))
            .count();
    let mut bpref = 0.0;
    for (i, p) in ranked.iter().enumerate() {
        if !case.relevant(p) {
            continue;
        }
        let above = ranked[..i]
            .iter()
            .filter(|q| is_judged(q) && !case.relevant(q))
            .count();
        bpref += if above == 0 {
            1.0
        } else {
            1.0 - above.min(r) as f64 / n.min(r) as f64
        };
    }
    let condensed: Vec<&&RawPair> = ranked.iter().filter(|p| is_judged(p)).collect();
    let mut ap = 0.0;
    for (i, p) in condensed.iter().enumerate() {
        if case.relevant(p) {
            let hits = condensed[..=i].iter().filter(|q| case.relevant(q)).count();
            ap += hits as f64 / (i + 1) as f64;
        }
    }
    let unjudged_evidence = ranked
        .iter()
        .filter(|p| !is_judged(p) && p.label != Some(N))
        .count() as u64;
    let (bpref, ap) = if r == 0 {
        (0.0, 0.0)
    } else {
        (bpref / r as f64, ap / r as f64)
    };
    (judged_at, bpref, ap, unjudged_evidence)
}

fn check_case(case: &Case, run: &[RawPair]) {
    let gold = case.gold.build();
    let judgments = case.judgments(&gold);
    let built = build_run(run);
    let (overall, claims) = incomplete(&gold, &judgments, &built).unwrap();
    let depth = gold
        .claims()
        .iter()
        .map(|c| run.iter().filter(|p| p.claim == c.as_str()).count())
        .max()
        .unwrap_or(0);
    assert_eq!(overall.depth, depth);
    let mut ks = vec![5, 10, 50];
    if !ks.contains(&depth) {
        ks.push(depth);
    }
    assert_eq!(
        overall.judged_at.iter().map(|j| j.k).collect::<Vec<_>>(),
        ks.clone()
    );
    let mut sums = (vec![0.0; 4], 0.0, 0.0, 0u64, 0usize);
    for (claim, figures) in gold.claims().iter().zip(&claims) {
        assert_eq!(&figures.claim, claim);
        let (judged_at, bpref, ap, unjudged) = naive_claim(case, run, claim.as_str(), &ks);
        for (got, want) in figures.judged_at.iter().zip(&judged_at) {
            assert!(
                (got.value - want).abs() < 1e-12,
                "{claim}: Judged@{}",
                got.k
            );
        }
        // trec_eval's single-precision ratio in bpref.
        assert!(
            (figures.bpref - bpref).abs() < 1e-12,
            "{claim}: bpref {} vs {bpref}",
            figures.bpref
        );
        assert!(
            (figures.condensed.average_precision - ap).abs() < 1e-12,
            "{claim}: condensed AP"
        );
        assert_eq!(figures.unjudged_predicted_evidence, unjudged, "{claim}");
        for (s, v) in sums.0.iter_mut().zip(&judged_at) {
            *s += v;
        }
        if case.gold.evidence.iter().any(|e| e.0 == claim.as_str()) {
            sums.1 += bpref;
            sums.2 += ap;
            sums.4 += 1;
        }
        sums.3 += unjudged;
    }
    let claim_count = gold.claims().len() as f64;
    for (got, sum) in overall.judged_at.iter().zip(&sums.0) {
        assert!((got.value - sum / claim_count).abs() < 1e-12);
    }
    let with_evidence = sums.4.max(1) as f64;
    assert!((overall.bpref - sums.1 / with_evidence).abs() < 1e-12);
    assert!((overall.condensed_map - sums.2 / with_evidence).abs() < 1e-12);
    assert_eq!(overall.unjudged_predicted_evidence, sums.3);
    assert_eq!(overall.claims_with_evidence as usize, sums.4);
    // Condensed headline figures: the naive metrics of the run without its unjudged pairs.
    let judged = case.judged();
    let condensed: Vec<RawPair> = run
        .iter()
        .filter(|p| judged.contains(&(p.claim.clone(), p.doc.clone())))
        .cloned()
        .collect();
    let want = reference::all_four(&case.gold, &condensed);
    let got = overall.condensed;
    for (g, w) in [got.precision, got.recall, got.f1, got.average_precision]
        .iter()
        .zip(want)
    {
        assert!((g - w).abs() < 1e-9, "condensed {got:?} vs {want:?}");
    }
}

fn pair(claim: &str, doc: &str, label: Option<Label>, conf: f64) -> RawPair {
    RawPair {
        claim: claim.into(),
        doc: doc.into(),
        label,
        probs: None,
        confidence: conf,
    }
}

#[test]
fn bpref_and_condensed_ap_by_hand() {
    // Claim 1: evidence d1 (S), d2 (C), d3 (S); judged NEI d4, d5; d6..d8 unjudged.
    let case = Case {
        gold: RawGold {
            claims: vec!["1".into(), "2".into()],
            evidence: vec![
                ("1".into(), "d1".into(), S),
                ("1".into(), "d2".into(), C),
                ("1".into(), "d3".into(), S),
            ],
        },
        judged_nei: vec![("1".into(), "d4".into()), ("1".into(), "d5".into())],
    };
    // Ranking: d6 (unjudged), d4 (nonrel), d1 (rel), d7 (unjudged), d2 predicted S (wrong
    // label: judged non-relevant), d5 (nonrel), d3 (rel).
    let run = vec![
        pair("1", "d6", Some(S), 0.9),
        pair("1", "d4", Some(S), 0.8),
        pair("1", "d1", Some(S), 0.7),
        pair("1", "d7", Some(C), 0.6),
        pair("1", "d2", Some(S), 0.5),
        pair("1", "d5", Some(N), 0.4),
        pair("1", "d3", Some(S), 0.3),
    ];
    let gold = case.gold.build();
    let (overall, claims) = incomplete(&gold, &case.judgments(&gold), &build_run(&run)).unwrap();
    let c = &claims[0];
    // R = 3, N = 2 judged NEI + 1 mislabelled = 3. d1: 1 non-relevant above -> 1 - 1/3;
    // d3: 3 above -> 1 - 3/3 = 0. bpref = (2/3) / 3.
    assert!((c.bpref - 2.0 / 9.0).abs() < 1e-15, "{}", c.bpref);
    // Condensed: d4, d1, d2, d5, d3 -> hits at ranks 2 and 5: (1/2 + 2/5) / 3.
    assert!((c.condensed.average_precision - 0.9 / 3.0).abs() < 1e-12);
    // Judged@5: d6 d4 d1 d7 d2 -> 3 of 5; Judged@10 = 5/10; depth 7 -> 5/7.
    let at: Vec<f64> = c.judged_at.iter().map(|j| j.value).collect();
    assert_eq!(at, vec![0.6, 0.5, 0.1, 5.0 / 7.0]);
    assert_eq!(c.unjudged_predicted_evidence, 2);
    assert_eq!(c.unjudged, 2);
    // Condensed precision: predicted evidence judged d4 d1 d2 d3 -> correct d1 d3: 2/4.
    assert_eq!(c.condensed.precision, 0.5);
    assert!((c.condensed.recall - 2.0 / 3.0).abs() < 1e-12);
    // Claim 2 has no pairs: Judged@k 0, left out of the bpref mean.
    assert_eq!(claims[1].judged_at[0].value, 0.0);
    assert_eq!(overall.claims_with_evidence, 1);
    assert!((overall.bpref - 2.0 / 9.0).abs() < 1e-15);
    assert_eq!(overall.judged_at[0].value, 0.3);
    check_case(&case, &run);
}

#[test]
fn ties_are_broken_by_decreasing_doc_id_as_trec_eval_does() {
    let case = Case {
        gold: RawGold {
            claims: vec!["1".into()],
            evidence: vec![("1".into(), "a".into(), S)],
        },
        judged_nei: vec![("1".into(), "b".into())],
    };
    // Equal confidence: "b" ranks above "a", so the relevant pair is second.
    let run = vec![pair("1", "a", Some(S), 1.0), pair("1", "b", Some(S), 1.0)];
    let gold = case.gold.build();
    let (_, claims) = incomplete(&gold, &case.judgments(&gold), &build_run(&run)).unwrap();
    assert_eq!(claims[0].condensed.average_precision, 0.5);
    assert_eq!(claims[0].bpref, 0.0);
    check_case(&case, &run);
}

#[test]
fn a_run_pair_of_an_unknown_claim_is_refused() {
    let case = Case {
        gold: RawGold {
            claims: vec!["1".into()],
            evidence: vec![],
        },
        judged_nei: vec![],
    };
    let gold = case.gold.build();
    let err = incomplete(
        &gold,
        &case.judgments(&gold),
        &build_run(&[pair("9", "a", Some(S), 1.0)]),
    )
    .unwrap_err();
    assert!(matches!(err, MetricsError::RunClaimNotInGold { .. }));
}

/// A random collection and run: claims 1..=n, docs d0..d19, confidences on a coarse grid
/// (ties), labels and probabilities at random, some claims without evidence or pairs.
fn random_case(rng: &mut ChaCha8Rng) -> (Case, Vec<RawPair>) {
    let claims = rng.gen_range(1..6);
    let mut case = Case {
        gold: RawGold::default(),
        judged_nei: Vec::new(),
    };
    let mut run = Vec::new();
    for c in 1..=claims {
        let claim = c.to_string();
        case.gold.claims.push(claim.clone());
        for d in 0..20 {
            let doc = format!("d{d}");
            match rng.gen_range(0..10) {
                0 => case.gold.evidence.push((
                    claim.clone(),
                    doc.clone(),
                    if rng.gen() { S } else { C },
                )),
                1..=3 => case.judged_nei.push((claim.clone(), doc.clone())),
                _ => {}
            }
            if rng.gen_range(0..3) > 0 {
                let label = match rng.gen_range(0..4) {
                    0 => None,
                    1 => Some(N),
                    2 => Some(S),
                    _ => Some(C),
                };
                let probs = (label.is_some() && rng.gen())
                    .then(|| (rng.gen_range(0.0..0.5), rng.gen_range(0.0..0.5)));
                run.push(RawPair {
                    claim: claim.clone(),
                    doc,
                    label,
                    probs,
                    confidence: f64::from(rng.gen_range(0..8u8)) / 4.0,
                });
            }
        }
    }
    (case, run)
}

#[test]
fn random_cases_match_the_naive_definitions() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    for _ in 0..300 {
        let (case, run) = random_case(&mut rng);
        check_case(&case, &run);
    }
}

#[test]
fn holm_by_hand() {
    // Sorted: 0.005 x4 = 0.02; 0.01 x3 = 0.03; 0.03 x2 = 0.06; 0.04 x1 = 0.04 -> 0.06 (monotone).
    let adjusted = holm(&[0.01, 0.04, 0.03, 0.005]);
    let want = [0.03, 0.06, 0.06, 0.02];
    for (a, w) in adjusted.iter().zip(want) {
        assert!((a - w).abs() < 1e-15, "{adjusted:?}");
    }
    // Capped at 1; a single p-value is unchanged.
    assert_eq!(holm(&[0.6, 0.5]), vec![1.0, 1.0]);
    assert_eq!(holm(&[0.2]), vec![0.2]);
    assert!(holm(&[]).is_empty());
}

/// Two systems on the same claims, different enough to give a small p-value.
fn two_systems(rng: &mut ChaCha8Rng, claims: usize) -> (RawGold, Vec<RawPair>, Vec<RawPair>) {
    let mut gold = RawGold::default();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for c in 0..claims {
        let claim = format!("{c}");
        gold.claims.push(claim.clone());
        for d in 0..6 {
            let doc = format!("d{d}");
            let evidence = d < 2;
            if evidence {
                gold.evidence.push((claim.clone(), doc.clone(), S));
            }
            // a is better: it labels evidence right more often.
            for (run, skill) in [(&mut a, 0.7), (&mut b, 0.55)] {
                let right = rng.gen_bool(skill);
                let label = if right == evidence { S } else { N };
                let confidence = if right {
                    rng.gen_range(0.5..1.0)
                } else {
                    rng.gen_range(0.0..0.6)
                };
                run.push(RawPair {
                    claim: claim.clone(),
                    doc: doc.clone(),
                    label: Some(label),
                    probs: None,
                    confidence: (confidence * 100.0f64).round() / 100.0,
                });
            }
        }
    }
    (gold, a, b)
}

/// The randomization test written out: per permutation, swap the claims' pairs between the two
/// runs and recompute both runs' F1 and AP with the naive reference.
fn naive_randomization(
    gold: &RawGold,
    a: &[RawPair],
    b: &[RawPair],
    permutations: u32,
    seed: u64,
) -> (f64, f64) {
    let mut claims: Vec<ClaimId> = gold.claims.iter().map(|c| cid(c)).collect();
    claims.sort();
    let labels: std::collections::HashMap<(&str, &str), Label> = gold
        .evidence
        .iter()
        .map(|(c, d, l)| ((c.as_str(), d.as_str()), *l))
        .collect();
    let total = gold.evidence.len() as f64;
    // F1 by counting, AP over the ranking sorted once, one point per distinct confidence
    // (the two_systems runs are labelled, without probabilities).
    let f1_ap = |run: &[RawPair]| {
        let right =
            |p: &RawPair| labels.get(&(p.claim.as_str(), p.doc.as_str())) == p.label.as_ref();
        let predicted = run.iter().filter(|p| p.label != Some(N)).count() as f64;
        let correct = run
            .iter()
            .filter(|p| p.label != Some(N) && right(p))
            .count() as f64;
        let (precision, recall) = (correct / predicted.max(1.0), correct / total);
        let f1 = if correct == 0.0 {
            0.0
        } else {
            2.0 * precision * recall / (precision + recall)
        };
        let mut sorted: Vec<&RawPair> = run.iter().collect();
        sorted.sort_by(|x, y| y.confidence.partial_cmp(&x.confidence).unwrap());
        let (mut ap, mut hits, mut previous) = (0.0, 0.0, 0.0);
        for (i, p) in sorted.iter().enumerate() {
            hits += f64::from(u8::from(right(p)));
            if sorted
                .get(i + 1)
                .is_none_or(|next| next.confidence != p.confidence)
            {
                ap += (hits - previous) / total * (hits / (i + 1) as f64);
                previous = hits;
            }
        }
        (f1, ap)
    };
    let diff = |x: &[RawPair], y: &[RawPair]| {
        let (fx, fy) = (f1_ap(x), f1_ap(y));
        (fx.0 - fy.0, fx.1 - fy.1)
    };
    // The fast naive scores are themselves checked against the reference on the real runs.
    for run in [a, b] {
        let (f1, ap) = f1_ap(run);
        let want = reference::all_four(gold, run);
        assert!((f1 - want[2]).abs() < 1e-12 && (ap - want[3]).abs() < 1e-12);
    }
    let observed = diff(a, b);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut f1, mut ap) = (0, 0);
    for _ in 0..permutations {
        let swapped: HashSet<&str> = claims
            .iter()
            .filter(|_| rng.gen::<bool>())
            .map(|c| c.as_str())
            .collect();
        let pick = |mine: &[RawPair], theirs: &[RawPair]| -> Vec<RawPair> {
            mine.iter()
                .filter(|p| !swapped.contains(p.claim.as_str()))
                .chain(theirs.iter().filter(|p| swapped.contains(p.claim.as_str())))
                .cloned()
                .collect()
        };
        let d = diff(&pick(a, b), &pick(b, a));
        f1 += usize::from(d.0.abs() >= observed.0.abs() - 1e-9);
        ap += usize::from(d.1.abs() >= observed.1.abs() - 1e-9);
    }
    (
        f1 as f64 / f64::from(permutations),
        ap as f64 / f64::from(permutations),
    )
}

#[test]
fn randomization_p_values_agree_with_a_naive_implementation() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for (claims, seed) in [(12, 1u64), (40, 3)] {
        let (gold, a, b) = two_systems(&mut rng, claims);
        let built = gold.build();
        let (ja, jb) = (
            JudgedRun::new(&built, &build_run(&a)).unwrap(),
            JudgedRun::new(&built, &build_run(&b)).unwrap(),
        );
        let test = randomization_test(&ja, &jb, 10_000, seed).unwrap();
        assert_eq!((test.permutations, test.seed), (10_000, seed));
        // Same seed, same draws: the same permutations, so the same counts up to ties that
        // rounding could tip (at most a handful of the 10,000).
        let same = naive_randomization(&gold, &a, &b, 10_000, seed);
        assert!((test.f1_p - same.0).abs() <= 0.002, "{test:?} vs {same:?}");
        assert!(
            (test.average_precision_p - same.1).abs() <= 0.002,
            "{test:?} vs {same:?}"
        );
        // Another seed: within Monte Carlo error (4 standard errors of the difference).
        let other = naive_randomization(&gold, &a, &b, 10_000, seed + 1000);
        for (p, q) in [(test.f1_p, other.0), (test.average_precision_p, other.1)] {
            let se = (2.0 * p.max(q).max(1e-3) * (1.0 - p.min(q)) / 10_000.0).sqrt();
            assert!((p - q).abs() <= 4.0 * se + 1e-4, "{p} vs {q} (se {se})");
        }
        // The order of the systems does not matter for a two-sided test.
        let reversed = randomization_test(&jb, &ja, 10_000, seed).unwrap();
        assert!((reversed.f1_p - test.f1_p).abs() <= 0.002);
    }
}

#[test]
fn identical_systems_are_never_significant_and_distinct_ones_are() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let (gold, a, b) = two_systems(&mut rng, 300);
    let built = gold.build();
    let ja = JudgedRun::new(&built, &build_run(&a)).unwrap();
    let jb = JudgedRun::new(&built, &build_run(&b)).unwrap();
    let same = randomization_test(&ja, &ja, 1000, 0).unwrap();
    assert_eq!((same.f1_p, same.average_precision_p), (1.0, 1.0));
    let apart = randomization_test(&ja, &jb, 10_000, 0).unwrap();
    assert!(
        apart.f1_p < 0.01 && apart.average_precision_p < 0.01,
        "{apart:?}"
    );
    let boot = paired_bootstrap(&ja, &jb, 1000, 0).unwrap();
    assert!(boot.f1.low > 0.0 && boot.f1.p < 0.01, "{boot:?}");
}

#[test]
fn paired_bootstrap_matches_materialized_resamples() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let (gold, a, b) = two_systems(&mut rng, 15);
    let built = gold.build();
    let ja = JudgedRun::new(&built, &build_run(&a)).unwrap();
    let jb = JudgedRun::new(&built, &build_run(&b)).unwrap();
    let samples = 200;
    let got = paired_bootstrap(&ja, &jb, samples, 4).unwrap();
    // The same resamples, written out as collections and scored naively.
    let mut resampler = ClaimResampler::new(built.claims().len(), 4);
    let (fa, fb) = (
        reference::all_four(&gold, &a),
        reference::all_four(&gold, &b),
    );
    let observed = (fa[2] - fb[2], fa[3] - fb[3]);
    let (mut f1, mut ap) = (Vec::new(), Vec::new());
    for _ in 0..samples {
        let weights = resampler.next_weights().to_vec();
        let (g, ra) = reference::materialize(&gold, &a, built.claims(), &weights);
        let (_, rb) = reference::materialize(&gold, &b, built.claims(), &weights);
        let (x, y) = (reference::all_four(&g, &ra), reference::all_four(&g, &rb));
        f1.push(x[2] - y[2]);
        ap.push(x[3] - y[3]);
    }
    for (values, observed, interval) in [
        (f1, observed.0, got.f1),
        (ap, observed.1, got.average_precision),
    ] {
        let p = values
            .iter()
            .filter(|d| (*d - observed).abs() >= observed.abs() - 1e-9)
            .count() as f64
            / values.len() as f64;
        let mut sorted = values.clone();
        sorted.sort_by(|x, y| x.partial_cmp(y).unwrap());
        // numpy's default percentile (linear), written out.
        let quantile = |q: f64| {
            let h = (sorted.len() - 1) as f64 * q;
            let lo = h.floor() as usize;
            sorted[lo] + (h - lo as f64) * (sorted[(lo + 1).min(sorted.len() - 1)] - sorted[lo])
        };
        assert!(
            (interval.low - quantile(0.025)).abs() < 1e-9,
            "{interval:?}"
        );
        assert!(
            (interval.high - quantile(0.975)).abs() < 1e-9,
            "{interval:?}"
        );
        assert!((interval.p - p).abs() < 1e-9, "{interval:?} vs {p}");
    }
}
