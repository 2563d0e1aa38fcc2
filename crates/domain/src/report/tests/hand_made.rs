//! A small project whose every figure was worked out by hand (the arithmetic is in the
//! comments), plus edge cases and refusals.

use super::check::{check_all, close};
use super::{labelled, options, pair, scored};
use crate::ids::ClaimId;
use crate::label::Label::{Contradict as C, Nei as N, Support as S};
use crate::metrics::Prediction;
use crate::pool::{PoolError, Role, Strategy};
use crate::report::{
    AnnotationRecord, FinalLabel, LabelledPair, PoolSetting, Provenance, Report, ReportError,
    SecondPassMode, Seconds, Snapshot, Specificity, SpecificityNote, Stage, SystemSnapshot,
};
use std::num::NonZeroU32;

fn claims(ids: &[&str]) -> Vec<ClaimId> {
    ids.iter().map(|c| ClaimId::parse(*c).unwrap()).collect()
}

fn record(
    claim: &str,
    doc: &str,
    stage: Stage,
    annotator: &str,
    label: crate::label::Label,
    seconds: Option<f64>,
    at_ms: i64,
) -> AnnotationRecord {
    AnnotationRecord {
        pair: pair(claim, doc),
        stage,
        annotator: annotator.into(),
        label,
        seconds: seconds.map(|s| Seconds::new(s).unwrap()),
        at_ms,
        rationale: Default::default(),
    }
}

fn final_label(claim: &str, doc: &str, label: crate::label::Label, p: Provenance) -> FinalLabel {
    FinalLabel {
        pair: pair(claim, doc),
        label,
        provenance: p,
    }
}

/// Claims 1-3; citation evidence (1, d10) SUPPORT. Pooled A (ranks d10 1, d11 2, d20 3,
/// d30 4) and B (d20 1, d21 2, d11 3), evaluation-only E. Depth 2, step 1.
pub(super) fn project() -> Snapshot {
    Snapshot {
        claims: claims(&["1", "2", "3"]),
        citation_evidence: vec![LabelledPair {
            pair: pair("1", "d10"),
            label: S,
        }],
        systems: vec![
            SystemSnapshot {
                name: "A".into(),
                role: Role::Pooled,
                predictions: vec![
                    scored("1", "d10", S, 0.9, 0.05, 0.9),
                    scored("1", "d11", S, 0.8, 0.1, 0.8),
                    scored("2", "d20", C, 0.2, 0.7, 0.7),
                    scored("3", "d30", N, 0.1, 0.1, 0.2),
                ],
            },
            SystemSnapshot {
                name: "B".into(),
                role: Role::Pooled,
                predictions: vec![
                    labelled("2", "d20", C, 0.95),
                    labelled("2", "d21", S, 0.6),
                    labelled("1", "d11", N, 0.5),
                ],
            },
            SystemSnapshot {
                name: "E".into(),
                role: Role::EvaluationOnly,
                predictions: vec![
                    labelled("1", "d10", S, 0.9),
                    labelled("2", "d21", S, 0.4),
                    labelled("3", "d31", C, 0.3),
                ],
            },
        ],
        pool: Some(PoolSetting {
            strategy: Strategy::Confidence,
            depth: NonZeroU32::new(2).unwrap(),
        }),
        final_labels: vec![
            final_label("1", "d10", S, Provenance::Citation),
            final_label("1", "d11", S, Provenance::Pooling),
            final_label("2", "d20", C, Provenance::Pooling),
            final_label("2", "d21", N, Provenance::Pooling),
            final_label("3", "d31", C, Provenance::Pooling),
        ],
        specificity: vec![
            SpecificityNote {
                pair: pair("1", "d11"),
                relation: Specificity::Matches,
            },
            SpecificityNote {
                pair: pair("2", "d20"),
                relation: Specificity::EvidenceMoreSpecific,
            },
        ],
        annotations: vec![
            record("1", "d11", Stage::First, "ann1", S, Some(30.0), 1),
            record("1", "d11", Stage::Second, "ann2", S, Some(20.0), 2),
            record("2", "d20", Stage::First, "ann1", C, Some(40.0), 3),
            record("2", "d20", Stage::Second, "ann2", C, None, 4),
            record("2", "d21", Stage::First, "ann2", S, Some(60.0), 5),
            record("2", "d21", Stage::Second, "ann1", N, Some(10.0), 6),
            record("2", "d21", Stage::Adjudication, "lead", N, Some(15.0), 7),
            // ann1 edits the first label of (3, d31): S, then C; 50 + 10 seconds.
            record("3", "d31", Stage::First, "ann1", C, Some(10.0), 9),
            record("3", "d31", Stage::First, "ann1", S, Some(50.0), 8),
            record("3", "d31", Stage::Second, "ann2", N, Some(30.0), 10),
            record("3", "d30", Stage::First, "ann2", S, Some(25.0), 11),
            record("3", "d30", Stage::Second, "ann1", C, Some(35.0), 12),
        ],
        second_pass_mode: SecondPassMode::Confirm,
    }
}

fn scores(report: &Report, depth: u32, system: &str) -> [f64; 4] {
    let point = report
        .depth_curve
        .0
        .iter()
        .find(|p| p.depth == depth)
        .unwrap();
    let s = point.systems.get(system).unwrap();
    [s.precision, s.recall, s.f1, s.average_precision]
}

fn near(got: [f64; 4], want: [f64; 4]) {
    for (g, w) in got.iter().zip(want) {
        close(*g, w, &format!("{got:?} vs {want:?}"));
    }
}

#[test]
fn depth_curve_by_hand() {
    let snap = project();
    let report = Report::compute(&snap, &options(1, 50, 7)).unwrap();
    let curve = &report.depth_curve.0;
    assert_eq!(curve.iter().map(|p| p.depth).collect::<Vec<_>>(), [1, 2]);
    // Depth 1 pools (1,d10) and (2,d20); (2,d20) C is discovered. Gold: d10 S, d20 C.
    assert_eq!(
        (curve[0].pool_size, curve[0].judged, curve[0].evidence),
        (2, 2, 1)
    );
    // A predicts d10 S, d11 S, d20 C: 2 of 3 right, both gold found; AP = 1/2·1 + 1/2·2/3.
    near(
        scores(&report, 1, "A"),
        [2.0 / 3.0, 1.0, 0.8, 0.5 + 1.0 / 3.0],
    );
    // B predicts d20 C, d21 S: 1 of 2, 1 of 2 gold; AP = 1/2·1.
    near(scores(&report, 1, "B"), [0.5, 0.5, 0.5, 0.5]);
    // E predicts d10 S, d21 S, d31 C: 1 of 3, 1 of 2; AP = 1/2·1.
    near(scores(&report, 1, "E"), [1.0 / 3.0, 0.5, 0.4, 0.5]);
    // Depth 2 pools d10, d11 (A) and d20, d21 (B): d11 S and d20 C discovered, gold 3.
    assert_eq!(
        (curve[1].pool_size, curve[1].judged, curve[1].evidence),
        (4, 4, 2)
    );
    near(scores(&report, 2, "A"), [1.0, 1.0, 1.0, 1.0]);
    near(scores(&report, 2, "B"), [0.5, 1.0 / 3.0, 0.4, 1.0 / 3.0]);
    near(
        scores(&report, 2, "E"),
        [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0],
    );
    let changes = |system: &str| {
        let s = curve[1].systems.get(system).unwrap();
        [
            s.f1_change_pct.unwrap(),
            s.average_precision_change_pct.unwrap(),
        ]
    };
    // A: F1 0.8 -> 1 (+25%), AP 5/6 -> 1 (+20%); B: 0.5 -> 0.4, 0.5 -> 1/3; E: 0.4 -> 1/3.
    let [f1, ap] = changes("A");
    close(f1, 25.0, "A f1 change");
    close(ap, 20.0, "A ap change");
    let [f1, ap] = changes("B");
    close(f1, 20.0, "B f1 change");
    close(ap, 100.0 / 3.0, "B ap change");
    let [f1, ap] = changes("E");
    close(f1, 100.0 / 6.0, "E f1 change");
    close(ap, 100.0 / 3.0, "E ap change");
    assert!(curve[0].systems.get("A").unwrap().f1_change_pct.is_none());
}

#[test]
fn system_count_curve_and_inclusion_by_hand() {
    let report = Report::compute(&project(), &options(1, 50, 7)).unwrap();
    let curve = &report.system_count_curve.0;
    assert_eq!(curve.len(), 2);
    // k = 1: {A} discovers d11 (gold d10, d11): A 0.8, B 0, E 0.4;
    //        {B} discovers d20 (gold d10, d20): A 0.8, B 0.5, E 0.4.
    assert_eq!(
        (curve[0].count, curve[0].orderings, curve[0].exact),
        (1, 2, true)
    );
    close(curve[0].evidence_mean, 1.0, "evidence mean");
    close(curve[0].evidence_sd, 0.0, "evidence sd");
    let f1 = |k: usize, s: &str| {
        let m = curve[k].f1.get(s).unwrap();
        (m.mean, m.sd)
    };
    close(f1(0, "A").0, 0.8, "A");
    close(f1(0, "A").1, 0.0, "A sd");
    close(f1(0, "B").0, 0.25, "B");
    close(f1(0, "B").1, 0.25, "B sd");
    close(f1(0, "E").0, 0.4, "E");
    // k = 2: the full pool.
    close(curve[1].evidence_mean, 2.0, "evidence");
    close(f1(1, "A").0, 1.0, "A");
    close(f1(1, "B").0, 0.4, "B");
    close(f1(1, "E").0, 1.0 / 3.0, "E");
    close(f1(1, "B").1, 0.0, "B sd");
    // Leaving A out leaves {B}'s pool: A's F1 1 -> 0.8 (-20%); leaving B out: B 0.4 -> 0.
    let rows = &report.inclusion.0;
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].system, "A");
    close(rows[0].included_f1, 1.0, "A in");
    close(rows[0].excluded_f1, 0.8, "A out");
    close(rows[0].change_pct.unwrap(), -20.0, "A change");
    assert_eq!(rows[0].unique_evidence, 1);
    close(rows[1].included_f1, 0.4, "B in");
    close(rows[1].excluded_f1, 0.0, "B out");
    close(rows[1].change_pct.unwrap(), -100.0, "B change");
    assert_eq!(rows[1].unique_evidence, 1);
}

#[test]
fn systems_section_by_hand() {
    let report = Report::compute(&project(), &options(1, 50, 7)).unwrap();
    let systems = &report.systems;
    let a = systems.by_system.get("A").unwrap();
    assert_eq!(a.role, Role::Pooled);
    assert_eq!(
        [
            a.scores.precision,
            a.scores.recall,
            a.scores.f1,
            a.scores.average_precision
        ],
        [1.0, 1.0, 1.0, 1.0]
    );
    assert_eq!((a.scores.samples, a.scores.seed), (50, 7));
    // A system right on every resampled claim has no spread.
    assert_eq!(a.scores.f1_sd, 0.0);
    // Gold at depth 2: d10 S, d11 S, d20 C; d21 and d31 (never pooled) NEI.
    let m = a.confusion.unwrap();
    assert_eq!((m.count(S, S), m.count(C, C), m.total()), (2, 1, 3));
    let m = systems.by_system.get("B").unwrap().confusion.unwrap();
    assert_eq!(
        (m.count(C, C), m.count(N, S), m.count(S, N), m.total()),
        (1, 1, 1, 3)
    );
    let m = systems.by_system.get("E").unwrap().confusion.unwrap();
    assert_eq!(
        (m.count(S, S), m.count(N, S), m.count(N, C), m.total()),
        (1, 1, 1, 3)
    );
    // Citation sets: A {d10}, B {}, E {d10}; others: A {d11, d20}, B {d20, d21}, E {d21, d31}.
    let o: Vec<_> = systems
        .overlap
        .iter()
        .map(|o| {
            (
                o.system_a.as_str(),
                o.system_b.as_str(),
                o.citation,
                o.non_citation,
            )
        })
        .collect();
    assert_eq!(
        o,
        [
            ("A", "B", 0.0, 1.0 / 3.0),
            ("A", "E", 1.0, 0.0),
            ("B", "E", 0.0, 1.0 / 3.0)
        ]
    );
}

#[test]
fn evidence_and_annotation_by_hand() {
    let report = Report::compute(&project(), &options(1, 50, 7)).unwrap();
    let e = &report.evidence;
    assert_eq!((e.citation, e.discovered, e.total), (1, 2, 3));
    // Claim 1: d10, d11; claim 2: d20; claim 3: none.
    let rows: Vec<_> = e
        .claims_by_evidence_count
        .iter()
        .map(|r| (r.evidence_pairs, r.claims, r.cumulative_share))
        .collect();
    assert_eq!(rows, [(0, 1, 1.0 / 3.0), (1, 1, 2.0 / 3.0), (2, 1, 1.0)]);
    assert!(e.conflicting_claims.is_empty());
    assert_eq!(
        (
            e.specificity.matches,
            e.specificity.evidence_more_specific,
            e.specificity.closely_related
        ),
        (1, 1, 0)
    );

    let p = &report.annotation.progress;
    // Pool d10 (citation), d11, d20, d21: all three to annotate have final labels.
    assert_eq!(
        (p.pool_pairs, p.prior_judged, p.to_annotate, p.finalized),
        (4, 1, 3, 3)
    );
    let stages: Vec<_> = p
        .stages
        .iter()
        .map(|s| (s.stage, s.pairs, s.records))
        .collect();
    assert_eq!(
        stages,
        [
            (Stage::First, 5, 6),
            (Stage::Second, 5, 5),
            (Stage::Adjudication, 1, 1)
        ]
    );
    let a = &report.annotation.annotators;
    assert_eq!(
        a.iter().map(|r| r.annotator.as_str()).collect::<Vec<_>>(),
        ["ann1", "ann2", "lead"]
    );
    // ann1: 30, 40, 10, 50+10, 35 -> median 35, 5 items in 175 s.
    assert_eq!(
        (a[0].items, a[0].timed_items, a[0].median_seconds),
        (5, 5, Some(35.0))
    );
    close(
        a[0].items_per_hour.unwrap(),
        3600.0 * 5.0 / 175.0,
        "ann1 rate",
    );
    // ann2: 20, (no time), 60, 30, 25 -> median 27.5, 4 timed items in 135 s.
    assert_eq!(
        (a[1].items, a[1].timed_items, a[1].median_seconds),
        (5, 4, Some(27.5))
    );
    close(
        a[1].items_per_hour.unwrap(),
        3600.0 * 4.0 / 135.0,
        "ann2 rate",
    );
    assert_eq!(
        (a[2].items, a[2].median_seconds, a[2].items_per_hour),
        (1, Some(15.0), Some(240.0))
    );

    // First vs second (latest first label of (3, d31) is C): (S,S) (C,C) (S,N) (C,N) (S,C).
    let g = &report.agreement;
    assert!(g.confirm_mode);
    let k = g.first_vs_second.unwrap();
    assert_eq!(k.agreement.pairs, 5);
    close(k.percent_agreement, 40.0, "agreement");
    // p_e = (3·1 + 2·2 + 0·2) / 25 = 0.28; kappa = (0.4 - 0.28) / 0.72 = 1/6.
    close(k.agreement.expected_agreement, 0.28, "chance");
    close(k.agreement.kappa.unwrap(), 1.0 / 6.0, "kappa");
    // (2,d21) is adjudicated and (3,d31) has a final label: only (3,d30) waits.
    assert_eq!(g.awaiting_adjudication.count, 1);
    let d = &g.awaiting_adjudication.pairs[0];
    assert_eq!((&d.pair, d.first, d.second), (&pair("3", "d30"), S, C));
}

#[test]
fn hand_made_project_matches_the_naive_computation() {
    let snap = project();
    let options = options(1, 50, 7);
    check_all(&snap, &options, &Report::compute(&snap, &options).unwrap());
}

#[test]
fn json_has_exactly_the_report_keys_and_round_trips() {
    let report = Report::compute(&project(), &options(1, 50, 7)).unwrap();
    let json = serde_json::to_value(&report).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "depth_curve",
            "system_count_curve",
            "inclusion",
            "systems",
            "agreement",
            "evidence",
            "annotation"
        ]
    );
    // Systems keyed by name, in snapshot order.
    let names: Vec<&str> = json["depth_curve"][0]["systems"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names, ["A", "B", "E"]);
    assert_eq!(json["system_count_curve"][0]["f1"]["B"]["sd"], 0.25);
    assert_eq!(json["systems"]["by_system"]["A"]["f1"], 1.0);
    assert_eq!(json["agreement"]["confirm_mode"], true);
    let back: Report = serde_json::from_value(json).unwrap();
    assert_eq!(back, report);
}

#[test]
fn csv_tables_render_every_series() {
    let report = Report::compute(&project(), &options(1, 50, 7)).unwrap();
    let names: Vec<&str> = report.csv_tables().iter().map(|t| t.name).collect();
    assert_eq!(
        names,
        [
            "depth_curve",
            "system_count_curve",
            "inclusion",
            "system_scores",
            "system_confusion",
            "system_overlap",
            "system_significance",
            "agreement",
            "agreement_confusion",
            "awaiting_adjudication",
            "agreement_annotators",
            "agreement_alpha",
            "agreement_by_depth",
            "agreement_by_system",
            "agreement_by_stage",
            "evidence_per_claim",
            "conflicting_claims",
            "specificity",
            "annotation_progress",
            "annotators",
        ]
    );
    assert_eq!(names, crate::report::CSV_TABLES);
    let depth = report.to_csv("depth_curve").unwrap();
    let lines: Vec<&str> = depth.lines().collect();
    assert_eq!(lines[0], "depth,pool_size,judged,evidence,system,precision,recall,f1,average_precision,f1_change_pct,average_precision_change_pct");
    assert_eq!(lines.len(), 1 + 2 * 3);
    assert_eq!(
        lines[1],
        format!("1,2,2,1,A,{},1,0.8,{},,", 2.0 / 3.0, 0.5 + 1.0 / 3.0)
    );
    let fields: Vec<&str> = lines[4].split(',').collect();
    assert_eq!(fields[..9], ["2", "4", "4", "2", "A", "1", "1", "1", "1"]);
    close(fields[9].parse().unwrap(), 25.0, "f1 change");
    close(fields[10].parse().unwrap(), 20.0, "ap change");
    let inclusion = report.inclusion.to_csv();
    let rows: Vec<Vec<&str>> = inclusion.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(
        rows[0],
        [
            "system",
            "included_f1",
            "excluded_f1",
            "change_pct",
            "unique_evidence"
        ]
    );
    assert_eq!(rows[1][..3], ["A", "1", "0.8"]);
    close(rows[1][3].parse().unwrap(), -20.0, "change");
    assert_eq!(rows[2][..3], ["B", "0.4", "0"]);
    assert_eq!(rows[2][3..], ["-100", "1"]);
    let awaiting = report.to_csv("awaiting_adjudication").unwrap();
    assert_eq!(
        awaiting,
        "claim,doc,first,second\n3,d30,SUPPORT,CONTRADICT\n"
    );
    let specificity = report.to_csv("specificity").unwrap();
    assert_eq!(
        specificity,
        "relation,count\nmatches,1\nevidence_more_specific,1\nevidence_more_general,0\nclosely_related,0\n"
    );
    // 9 cells per labelled system.
    assert_eq!(
        report.to_csv("system_confusion").unwrap().lines().count(),
        1 + 27
    );
    assert!(report.to_csv("nonexistent").is_none());
}

#[test]
fn conflicting_evidence_is_listed_by_claim() {
    let snap = Snapshot {
        claims: claims(&["10", "9", "x"]),
        citation_evidence: vec![
            LabelledPair {
                pair: pair("10", "a"),
                label: S,
            },
            LabelledPair {
                pair: pair("10", "b"),
                label: C,
            },
            LabelledPair {
                pair: pair("x", "a"),
                label: S,
            },
        ],
        systems: vec![SystemSnapshot {
            name: "P".into(),
            role: Role::Pooled,
            predictions: vec![labelled("9", "c", S, 0.5), labelled("9", "d", C, 0.4)],
        }],
        pool: Some(PoolSetting {
            strategy: Strategy::PerClaim,
            depth: NonZeroU32::new(3).unwrap(),
        }),
        final_labels: vec![
            final_label("9", "c", S, Provenance::Pooling),
            final_label("9", "d", C, Provenance::Import),
        ],
        specificity: vec![],
        annotations: vec![],
        second_pass_mode: SecondPassMode::Blind,
    };
    let options = options(2, 10, 1);
    let report = Report::compute(&snap, &options).unwrap();
    // Claim 9 gets S and C from the pool, claim 10 from citations; in id order 9 < 10 < x.
    assert_eq!(report.evidence.conflicting_claims, claims(&["9", "10"]));
    assert!(!report.agreement.confirm_mode);
    assert!(report.agreement.first_vs_second.is_none());
    assert_eq!(
        report
            .depth_curve
            .0
            .iter()
            .map(|p| p.depth)
            .collect::<Vec<_>>(),
        [2, 3]
    );
    check_all(&snap, &options, &report);
}

#[test]
fn no_pool_yet_and_no_pooled_system() {
    let mut snap = project();
    snap.pool = None;
    let options = options(1, 10, 3);
    let report = Report::compute(&snap, &options).unwrap();
    assert!(report.depth_curve.0.is_empty());
    assert_eq!(report.evidence.discovered, 0);
    assert_eq!(report.annotation.progress.pool_pairs, 0);
    // Every count still averages (to nothing discovered).
    assert!(report
        .system_count_curve
        .0
        .iter()
        .all(|p| p.evidence_mean == 0.0));
    check_all(&snap, &options, &report);

    let mut snap = project();
    for s in &mut snap.systems {
        s.role = Role::EvaluationOnly;
    }
    let report = Report::compute(&snap, &options).unwrap();
    assert!(report.system_count_curve.0.is_empty());
    assert!(report.inclusion.0.is_empty());
    assert_eq!(report.depth_curve.0.len(), 2);
    check_all(&snap, &options, &report);
}

#[test]
fn label_less_runs_have_no_confusion_and_count_every_pair_as_evidence() {
    let mut snap = project();
    for p in &mut snap.systems[2].predictions {
        p.prediction = Prediction::Unlabelled;
    }
    let options = options(1, 10, 3);
    let report = Report::compute(&snap, &options).unwrap();
    assert!(report
        .systems
        .by_system
        .get("E")
        .unwrap()
        .confusion
        .is_none());
    // E retrieves d10, d21, d31: d10 is gold whatever the label: P 1/3, R 1/3.
    let e = report.depth_curve.0[1].systems.get("E").unwrap();
    close(e.precision, 1.0 / 3.0, "precision");
    check_all(&snap, &options, &report);
}

#[test]
fn refuses_inconsistent_snapshots() {
    let options = options(1, 10, 3);
    let refuse = |edit: &dyn Fn(&mut Snapshot)| {
        let mut snap = project();
        edit(&mut snap);
        Report::compute(&snap, &options).unwrap_err()
    };
    assert!(matches!(
        refuse(&|s| s.claims.push(ClaimId::parse("2").unwrap())),
        ReportError::DuplicateClaim { .. }
    ));
    let err = refuse(&|s| s.systems[1].predictions.push(labelled("7", "d1", S, 0.1)));
    assert!(matches!(err, ReportError::UnknownClaim { ref list, .. } if list.contains("\"B\"")));
    assert!(matches!(
        refuse(&|s| s
            .final_labels
            .push(final_label("1", "d11", C, Provenance::Import))),
        ReportError::DuplicatePair { .. }
    ));
    assert!(matches!(
        refuse(&|s| s.citation_evidence[0].label = N),
        ReportError::NeiCitation { .. }
    ));
    assert!(matches!(
        refuse(&|s| s.systems[2].name = "A".into()),
        ReportError::Pool(PoolError::DuplicateSystem(_))
    ));
    assert!(matches!(
        refuse(&|s| s.systems[0].name = " ".into()),
        ReportError::Pool(PoolError::EmptySystemName)
    ));
    // Evaluation-only runs are checked too.
    let err = refuse(&|s| s.systems[2].predictions.push(labelled("3", "d31", S, 0.1)));
    assert!(matches!(err, ReportError::DuplicatePair { ref list, .. } if list.contains("\"E\"")));
    assert!(matches!(
        refuse(&|s| s
            .annotations
            .push(record("9", "d1", Stage::First, "a", S, None, 0))),
        ReportError::UnknownClaim { .. }
    ));
    let message = refuse(&|s| {
        s.specificity.push(SpecificityNote {
            pair: pair("4", "q"),
            relation: Specificity::Matches,
        })
    })
    .to_string();
    assert_eq!(
        message,
        "specificity relations: pair (4, q) has a claim that is not in the project's claim list"
    );
    assert!(Seconds::new(-1.0).is_err());
    assert!(Seconds::new(f64::NAN).is_err());
}
