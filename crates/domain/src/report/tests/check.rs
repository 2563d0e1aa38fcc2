//! Checks every number of a report against the naive computation.

use super::naive::{mean_sd, permutations, Naive};
use crate::label::Label;
use crate::metrics::{JudgedRun, Metrics};
use crate::report::{PairId, Report, ReportOptions, SecondPassMode, Snapshot, Specificity, Stage};
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-12 * (1.0 + a.abs().max(b.abs())),
        "{what}: {a} != {b}"
    );
}

fn same_metrics(got: (f64, f64, f64, f64), want: &Metrics, what: &str) {
    // The engine follows the metrics operation for operation: bit-identical.
    assert_eq!(got.0, want.precision, "{what}: precision");
    assert_eq!(got.1, want.recall, "{what}: recall");
    assert_eq!(got.2, want.f1, "{what}: f1");
    assert_eq!(got.3, want.average_precision, "{what}: average precision");
}

fn change(prev: f64, cur: f64) -> Option<f64> {
    if prev == 0.0 {
        if cur == 0.0 {
            Some(0.0)
        } else {
            None
        }
    } else {
        Some(((cur - prev) / prev * 100.0).abs())
    }
}

fn close_opt(a: Option<f64>, b: Option<f64>, what: &str) {
    match (a, b) {
        (Some(a), Some(b)) => close(a, b, what),
        (None, None) => {}
        _ => panic!("{what}: {a:?} != {b:?}"),
    }
}

pub fn check_depth_curve(n: &Naive<'_>, report: &Report, step: u32) {
    let depth = n.depth();
    let mut depths: Vec<u32> = Vec::new();
    let mut d = step;
    while d <= depth {
        depths.push(d);
        d += step;
    }
    if depth > 0 && !depth.is_multiple_of(step) {
        depths.push(depth);
    }
    let got: Vec<u32> = report.depth_curve.0.iter().map(|p| p.depth).collect();
    assert_eq!(got, depths);
    let all = n.pooled();
    let mut previous: Option<Vec<Metrics>> = None;
    for point in &report.depth_curve.0 {
        let pool = n.pool(&all, point.depth);
        assert_eq!(point.pool_size, pool.len(), "pool size at {}", point.depth);
        let judged = pool
            .iter()
            .filter(|p| n.citation.contains_key(p) || n.finals.contains_key(p))
            .count();
        assert_eq!(point.judged, judged, "judged at {}", point.depth);
        assert_eq!(point.evidence, n.discovered(&pool).len() as u64);
        let gold = n.gold(&pool);
        let metrics: Vec<Metrics> = (0..n.snap.systems.len())
            .map(|s| n.metrics(s, &gold))
            .collect();
        assert_eq!(point.systems.len(), n.snap.systems.len());
        for (s, system) in n.snap.systems.iter().enumerate() {
            let got = point.systems.get(&system.name).unwrap();
            let what = format!("depth {} system {}", point.depth, system.name);
            same_metrics(
                (got.precision, got.recall, got.f1, got.average_precision),
                &metrics[s],
                &what,
            );
            let prev = previous.as_ref().map(|p| p[s]);
            close_opt(
                got.f1_change_pct,
                prev.and_then(|p| change(p.f1, metrics[s].f1)),
                &what,
            );
            close_opt(
                got.average_precision_change_pct,
                prev.and_then(|p| change(p.average_precision, metrics[s].average_precision)),
                &what,
            );
        }
        previous = Some(metrics);
    }
}

/// The system-count curve against the average over `orderings` (every permutation when
/// `None`), each prefix's pool rebuilt from scratch.
pub fn check_count_curve(n: &Naive<'_>, report: &Report, orderings: Option<Vec<Vec<usize>>>) {
    let pooled = n.pooled();
    let exact = orderings.is_none();
    let orderings = orderings.unwrap_or_else(|| permutations(&pooled));
    let mut memo: HashMap<Vec<usize>, (f64, Vec<f64>)> = HashMap::new();
    let curve = &report.system_count_curve.0;
    assert_eq!(curve.len(), pooled.len());
    for (k, point) in (1..=pooled.len()).zip(curve) {
        assert_eq!(point.count, k);
        assert_eq!(point.exact, exact);
        assert_eq!(point.orderings, orderings.len() as u64);
        let outcomes: Vec<(f64, Vec<f64>)> = orderings
            .iter()
            .map(|order| {
                let mut prefix = order[..k].to_vec();
                prefix.sort_unstable();
                memo.entry(prefix.clone())
                    .or_insert_with(|| n.outcome(&prefix))
                    .clone()
            })
            .collect();
        let evidence: Vec<f64> = outcomes.iter().map(|o| o.0).collect();
        let (mean, sd) = mean_sd(&evidence);
        close(point.evidence_mean, mean, "evidence mean");
        close(point.evidence_sd, sd, "evidence sd");
        for (s, system) in n.snap.systems.iter().enumerate() {
            let f1: Vec<f64> = outcomes.iter().map(|o| o.1[s]).collect();
            let (mean, sd) = mean_sd(&f1);
            let got = point.f1.get(&system.name).unwrap();
            close(got.mean, mean, &format!("k={k} {} f1 mean", system.name));
            close(got.sd, sd, &format!("k={k} {} f1 sd", system.name));
        }
    }
}

pub fn check_inclusion(n: &Naive<'_>, report: &Report) {
    let pooled = n.pooled();
    assert_eq!(report.inclusion.0.len(), pooled.len());
    let full = n.pool(&pooled, n.depth());
    let full_gold = n.gold(&full);
    for (row, &s) in report.inclusion.0.iter().zip(&pooled) {
        assert_eq!(row.system, n.snap.systems[s].name);
        let others: Vec<usize> = pooled.iter().copied().filter(|&o| o != s).collect();
        let pool = n.pool(&others, n.depth());
        let included = n.metrics(s, &full_gold).f1;
        let excluded = n.metrics(s, &n.gold(&pool)).f1;
        assert_eq!(row.included_f1, included);
        assert_eq!(row.excluded_f1, excluded);
        close_opt(
            row.change_pct,
            (included > 0.0).then(|| (excluded / included - 1.0) * 100.0),
            "change pct",
        );
        let unique = n.discovered(&full).len() - n.discovered(&pool).len();
        assert_eq!(row.unique_evidence, unique as u64);
    }
}

pub fn check_systems(n: &Naive<'_>, report: &Report, options: &ReportOptions) {
    let pool = n.pool(&n.pooled(), n.depth());
    let gold_labels = n.gold_labels(&pool);
    let gold = n.gold(&pool);
    let systems = &report.systems;
    assert_eq!(systems.depth, n.depth());
    assert_eq!(systems.by_system.len(), n.snap.systems.len());
    let judged: BTreeSet<&PairId> = n.citation.keys().chain(n.finals.keys()).collect();
    for (s, system) in n.snap.systems.iter().enumerate() {
        let got = systems.by_system.get(&system.name).unwrap();
        assert_eq!(got.role, system.role);
        let want =
            JudgedRun::bootstrap(&n.judged(s, &gold), options.bootstrap_samples, options.seed);
        assert_eq!(got.scores, want, "{}", system.name);
        let labelled = system
            .predictions
            .iter()
            .any(|p| p.prediction.label().is_some());
        match &got.confusion {
            None => assert!(!labelled),
            Some(matrix) => {
                assert!(labelled);
                let mut cells: BTreeMap<(Label, Label), u64> = BTreeMap::new();
                for p in &system.predictions {
                    if let (true, Some(stated)) = (judged.contains(&p.pair), p.prediction.label()) {
                        let gold = gold_labels.get(&p.pair).copied().unwrap_or(Label::Nei);
                        *cells.entry((gold, stated)).or_default() += 1;
                    }
                }
                for g in Label::ALL {
                    for l in Label::ALL {
                        assert_eq!(
                            matrix.count(g, l),
                            cells.get(&(g, l)).copied().unwrap_or(0),
                            "{} confusion {g} {l}",
                            system.name
                        );
                    }
                }
            }
        }
    }
    // Overlap by hand: |A ∩ B| / |A ∪ B|, 1 for two empty sets.
    let sets: Vec<(BTreeSet<&PairId>, BTreeSet<&PairId>)> = n
        .snap
        .systems
        .iter()
        .map(|s| {
            let evidence: Vec<&PairId> = s
                .predictions
                .iter()
                .filter(|p| p.prediction.label().is_none_or(|l| l != Label::Nei))
                .map(|p| &p.pair)
                .collect();
            (
                evidence
                    .iter()
                    .copied()
                    .filter(|p| n.citation.contains_key(p))
                    .collect(),
                evidence
                    .iter()
                    .copied()
                    .filter(|p| !n.citation.contains_key(p))
                    .collect(),
            )
        })
        .collect();
    let index = |a: &BTreeSet<&PairId>, b: &BTreeSet<&PairId>| {
        let union = a.union(b).count();
        if union == 0 {
            1.0
        } else {
            a.intersection(b).count() as f64 / union as f64
        }
    };
    let mut expected = Vec::new();
    for a in 0..sets.len() {
        for b in a + 1..sets.len() {
            expected.push((
                n.snap.systems[a].name.clone(),
                n.snap.systems[b].name.clone(),
                index(&sets[a].0, &sets[b].0),
                index(&sets[a].1, &sets[b].1),
            ));
        }
    }
    super::significance::check_significance(
        n,
        &systems.significance,
        options.permutations,
        options.seed,
    );
    assert_eq!(systems.overlap.len(), expected.len());
    for (o, (a, b, c, nc)) in systems.overlap.iter().zip(expected) {
        assert_eq!((&o.system_a, &o.system_b), (&a, &b));
        close(o.citation, c, "citation overlap");
        close(o.non_citation, nc, "non-citation overlap");
    }
}

pub fn check_evidence(n: &Naive<'_>, report: &Report) {
    let pool = n.pool(&n.pooled(), n.depth());
    let gold = n.gold_labels(&pool);
    let e = &report.evidence;
    assert_eq!(e.citation, n.citation.len() as u64);
    assert_eq!(e.discovered, n.discovered(&pool).len() as u64);
    assert_eq!(e.total, gold.len() as u64);
    let mut per_claim: BTreeMap<_, Vec<Label>> = n
        .snap
        .claims
        .iter()
        .map(|c| (c.clone(), Vec::new()))
        .collect();
    for (pair, label) in &gold {
        per_claim.get_mut(&pair.claim).unwrap().push(*label);
    }
    let max = per_claim.values().map(Vec::len).max().unwrap_or(0);
    if n.snap.claims.is_empty() {
        assert!(e.claims_by_evidence_count.is_empty());
    } else {
        assert_eq!(e.claims_by_evidence_count.len(), max + 1);
        for (k, row) in e.claims_by_evidence_count.iter().enumerate() {
            assert_eq!(row.evidence_pairs, k as u64);
            let exactly = per_claim.values().filter(|v| v.len() == k).count();
            let at_most = per_claim.values().filter(|v| v.len() <= k).count();
            assert_eq!(row.claims, exactly as u64);
            close(
                row.cumulative_share,
                at_most as f64 / per_claim.len() as f64,
                "share",
            );
        }
    }
    let conflicting: Vec<_> = per_claim
        .iter()
        .filter(|(_, v)| v.contains(&Label::Support) && v.contains(&Label::Contradict))
        .map(|(c, _)| c.clone())
        .collect();
    assert_eq!(e.conflicting_claims, conflicting);
    for &relation in Specificity::ALL {
        let count = n
            .snap
            .specificity
            .iter()
            .filter(|s| s.relation == relation)
            .count();
        assert_eq!(e.specificity.get(relation), count as u64, "{relation:?}");
    }
}

pub fn check_annotation(n: &Naive<'_>, report: &Report) {
    let snap = n.snap;
    let pool = n.pool(&n.pooled(), n.depth());
    let prior = n.prior();
    let p = &report.annotation.progress;
    assert_eq!(p.pool_pairs, pool.len());
    assert_eq!(
        p.prior_judged,
        pool.iter().filter(|x| prior.contains(x)).count()
    );
    assert_eq!(
        p.to_annotate,
        pool.iter().filter(|x| !prior.contains(x)).count()
    );
    assert_eq!(
        p.finalized,
        pool.iter()
            .filter(|x| !prior.contains(x) && n.finals.contains_key(x))
            .count()
    );
    assert_eq!(p.stages.len(), 3);
    for (row, stage) in p.stages.iter().zip(Stage::ALL) {
        assert_eq!(row.stage, stage);
        let records: Vec<_> = snap
            .annotations
            .iter()
            .filter(|r| r.stage == stage)
            .collect();
        let pairs: BTreeSet<_> = records.iter().map(|r| &r.pair).collect();
        assert_eq!(row.records, records.len());
        assert_eq!(row.pairs, pairs.len());
    }
    // Throughput: group records by annotator and item by sorting.
    let mut records: Vec<_> = snap.annotations.iter().collect();
    records.sort_by(|a, b| (&a.annotator, &a.pair, a.stage).cmp(&(&b.annotator, &b.pair, b.stage)));
    let mut rows: BTreeMap<&str, Vec<Option<f64>>> = BTreeMap::new();
    let mut last: Option<(&str, &PairId, Stage)> = None;
    for r in records {
        let item = (r.annotator.as_str(), &r.pair, r.stage);
        let times = rows.entry(&r.annotator).or_default();
        if last != Some(item) {
            times.push(None);
            last = Some(item);
        }
        if let Some(s) = r.seconds {
            let slot = times.last_mut().unwrap();
            *slot = Some(slot.unwrap_or(0.0) + s.get());
        }
    }
    assert_eq!(report.annotation.annotators.len(), rows.len());
    for (row, (name, items)) in report.annotation.annotators.iter().zip(&rows) {
        assert_eq!(row.annotator, *name);
        assert_eq!(row.items, items.len());
        let mut timed: Vec<f64> = items.iter().flatten().copied().collect();
        timed.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(row.timed_items, timed.len());
        let median = match timed.len() {
            0 => None,
            k if k % 2 == 1 => Some(timed[k / 2]),
            k => Some((timed[k / 2 - 1] + timed[k / 2]) / 2.0),
        };
        close_opt(row.median_seconds, median, "median");
        let total: f64 = timed.iter().sum();
        close_opt(
            row.items_per_hour,
            (total > 0.0).then(|| timed.len() as f64 / (total / 3600.0)),
            "items per hour",
        );
    }
    check_agreement(n, report);
}

fn check_agreement(n: &Naive<'_>, report: &Report) {
    let snap = n.snap;
    let a = &report.agreement;
    assert_eq!(a.second_pass_mode, snap.second_pass_mode);
    assert_eq!(
        a.confirm_mode,
        snap.second_pass_mode == SecondPassMode::Confirm
    );
    // Latest label per pair and stage: replay the records in time order.
    let mut order: Vec<usize> = (0..snap.annotations.len()).collect();
    order.sort_by_key(|&i| (snap.annotations[i].at_ms, i));
    let mut latest: BTreeMap<(&PairId, Stage), Label> = BTreeMap::new();
    for i in order {
        let r = &snap.annotations[i];
        latest.insert((&r.pair, r.stage), r.label);
    }
    let both: Vec<(&PairId, Label, Label)> = latest
        .iter()
        .filter(|((_, s), _)| *s == Stage::First)
        .filter_map(|((p, _), &f)| latest.get(&(*p, Stage::Second)).map(|&s| (*p, f, s)))
        .collect();
    match &a.first_vs_second {
        None => assert!(both.is_empty()),
        Some(got) => {
            let total = both.len() as f64;
            let agree = both.iter().filter(|(_, f, s)| f == s).count() as f64;
            let chance: f64 = Label::ALL
                .iter()
                .map(|l| {
                    let r = both.iter().filter(|(_, f, _)| f == l).count() as f64;
                    let c = both.iter().filter(|(_, _, s)| s == l).count() as f64;
                    (r / total) * (c / total)
                })
                .sum();
            assert_eq!(got.agreement.pairs, both.len() as u64);
            close(
                got.percent_agreement,
                100.0 * agree / total,
                "percent agreement",
            );
            close(got.agreement.expected_agreement, chance, "chance agreement");
            let kappa =
                ((chance - 1.0).abs() > 1e-15).then(|| (agree / total - chance) / (1.0 - chance));
            close_opt(got.agreement.kappa, kappa, "kappa");
            for f in Label::ALL {
                for s in Label::ALL {
                    let count = both.iter().filter(|(_, x, y)| *x == f && *y == s).count();
                    assert_eq!(got.agreement.confusion.count(f, s), count as u64);
                }
            }
        }
    }
    let waiting: Vec<(PairId, Label, Label)> = both
        .iter()
        .filter(|(p, f, s)| {
            f != s && !latest.contains_key(&(*p, Stage::Adjudication)) && !n.finals.contains_key(*p)
        })
        .map(|(p, f, s)| ((*p).clone(), *f, *s))
        .collect();
    assert_eq!(a.awaiting_adjudication.count, waiting.len());
    let got: Vec<(PairId, Label, Label)> = a
        .awaiting_adjudication
        .pairs
        .iter()
        .map(|d| (d.pair.clone(), d.first, d.second))
        .collect();
    assert_eq!(got, waiting);
}

/// Every section of `report` against the naive computation (all orderings).
pub fn check_all(snap: &Snapshot, options: &ReportOptions, report: &Report) {
    let n = Naive::new(snap);
    check_depth_curve(&n, report, options.step.get());
    check_count_curve(&n, report, None);
    check_inclusion(&n, report);
    check_systems(&n, report, options);
    check_evidence(&n, report);
    check_annotation(&n, report);
}
