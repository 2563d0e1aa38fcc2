//! The report's agreement section (issue 16) from the database and the CLI: a generated project
//! with three annotators and a lead (first passes, second passes, adjudications, edits,
//! rationales), plus a fourth annotator's extra first-pass labels (units with three coders) and
//! annotated pairs beyond the pool's depth, written to the database; `claimpool report --json`
//! must give the figures computed here independently: labels read off the records, Cohen's κ by
//! counting, Krippendorff's α by enumerating every ordered pair of values into a coincidence
//! matrix, entry depths and each system's contribution from the pool table as
//! `store::pool::build` wrote it.

use crate::{common, support::snapshot_db};
use app::domain::label::Label;
use app::domain::report::{AnnotationRecord, PairId, Rationale, Stage};
use benchdata::report::{generate, GenShape};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};

const DEPTH: u32 = 40;
const STEP: u32 = 15;

fn close(got: &Value, expected: Option<f64>, what: &str) {
    match expected {
        Some(e) => {
            let g = got
                .as_f64()
                .unwrap_or_else(|| panic!("{what}: {got} is not a number"));
            assert!((g - e).abs() <= 1e-12, "{what}: report {g} vs expected {e}");
        }
        None => assert!(got.is_null(), "{what}: report {got}, expected undefined"),
    }
}

/// κ by counting: (n, p_o, κ).
fn kappa(pairs: &[(Label, Label)]) -> (u64, Option<f64>, Option<f64>) {
    let n = pairs.len();
    if n == 0 {
        return (0, None, None);
    }
    let share = |f: &dyn Fn(&(Label, Label)) -> bool| {
        pairs.iter().filter(|p| f(p)).count() as f64 / n as f64
    };
    let p_o = share(&|(a, b)| a == b);
    let mut p_e = 0.0;
    for label in Label::ALL {
        p_e += share(&|(a, _)| *a == label) * share(&|(_, b)| *b == label);
    }
    let used: BTreeSet<Label> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    (
        n as u64,
        Some(p_o),
        (used.len() > 1).then(|| (p_o - p_e) / (1.0 - p_e)),
    )
}

/// α by the coincidence matrix, every ordered pair of values enumerated: (pairable units,
/// pairable values, α).
fn alpha<V: Ord + Clone>(units: &[Vec<V>]) -> (u64, u64, Option<f64>) {
    let mut o: BTreeMap<(V, V), f64> = BTreeMap::new();
    let mut pairable = 0;
    for unit in units.iter().filter(|u| u.len() > 1) {
        pairable += 1;
        for (i, c) in unit.iter().enumerate() {
            for (j, k) in unit.iter().enumerate() {
                if i != j {
                    *o.entry((c.clone(), k.clone())).or_default() += 1.0 / (unit.len() - 1) as f64;
                }
            }
        }
    }
    let values = units
        .iter()
        .filter(|u| u.len() > 1)
        .map(Vec::len)
        .sum::<usize>() as u64;
    let mut n_c: BTreeMap<V, f64> = BTreeMap::new();
    for ((c, _), v) in &o {
        *n_c.entry(c.clone()).or_default() += v;
    }
    let n: f64 = n_c.values().sum();
    let observed: f64 = o.iter().filter(|((c, k), _)| c != k).map(|(_, v)| v).sum();
    let mut expected = 0.0;
    for (c, a) in &n_c {
        for (k, b) in &n_c {
            if c != k {
                expected += a * b;
            }
        }
    }
    let alpha = (values > 1 && expected > 0.0).then(|| 1.0 - (n - 1.0) * observed / expected);
    (pairable, values, alpha)
}

fn check_kappa(got: &Value, pairs: &[(Label, Label)], what: &str) {
    let (n, p_o, k) = kappa(pairs);
    assert_eq!(got["n"], n, "{what}: n");
    close(&got["observed_agreement"], p_o, &format!("{what}: p_o"));
    close(&got["kappa"], k, &format!("{what}: kappa"));
}

fn check_alpha<V: Ord + Clone>(got: &Value, units: &[Vec<V>], what: &str) {
    let (pairable, values, a) = alpha(units);
    assert_eq!(got["units"], pairable, "{what}: units");
    assert_eq!(got["values"], values, "{what}: values");
    close(&got["alpha"], a, &format!("{what}: alpha"));
}

/// The records as the report reads them: the latest per key, by time then position.
fn latest<'a, K: Ord>(
    records: impl Iterator<Item = (K, usize, &'a AnnotationRecord)>,
) -> BTreeMap<K, &'a AnnotationRecord> {
    let mut out: BTreeMap<K, (i64, usize, &AnnotationRecord)> = BTreeMap::new();
    for (key, i, r) in records {
        let candidate = (r.at_ms, i, r);
        let slot = out.entry(key).or_insert(candidate);
        if (candidate.0, candidate.1) > (slot.0, slot.1) {
            *slot = candidate;
        }
    }
    out.into_iter().map(|(k, (_, _, r))| (k, r)).collect()
}

fn doc_length(pair: &PairId) -> u32 {
    3 + pair.doc.as_str().parse::<u32>().unwrap_or(u32::MAX) % 7
}

#[tokio::test]
async fn the_cli_agreement_figures_equal_an_independent_computation() {
    let app = common::TestApp::spawn().await;
    let shape = GenShape {
        claims: 50,
        depth: DEPTH,
        seed: 16,
        second_pass_mode: app::domain::report::SecondPassMode::Blind,
        ..GenShape::SCIFACT_OPEN
    };
    let mut snapshot = generate(&shape).unwrap();
    for (i, system) in snapshot.systems.iter_mut().enumerate() {
        system.name = format!("{i:02}-{}", system.name);
    }
    let annotated: BTreeSet<PairId> = snapshot
        .annotations
        .iter()
        .map(|r| r.pair.clone())
        .collect();
    let clock = snapshot.annotations.iter().map(|r| r.at_ms).max().unwrap() + 1;
    let labels = Label::ALL;
    let mut extra = Vec::new();
    // ann4 gives a later first-pass label to every 7th annotated pair: three coders there.
    for (i, pair) in annotated.iter().enumerate().filter(|(i, _)| i % 7 == 0) {
        let label = labels[i % 3];
        extra.push(AnnotationRecord {
            pair: pair.clone(),
            stage: Stage::First,
            annotator: "ann4".into(),
            label,
            seconds: None,
            at_ms: clock + i as i64,
            rationale: Rationale {
                sentences: if label.is_evidence() {
                    vec![(i % 3) as u32]
                } else {
                    vec![]
                },
                abstract_sentences: doc_length(pair),
            },
        });
    }
    // Pairs beyond the pool: the least confident predictions of the first system, unannotated,
    // labelled in both passes by ann1 and ann4.
    let mut far: Vec<&app::domain::report::SystemPrediction> =
        snapshot.systems[0].predictions.iter().collect();
    far.sort_by(|a, b| a.confidence.get().total_cmp(&b.confidence.get()));
    let far: Vec<PairId> = far
        .into_iter()
        .map(|p| p.pair.clone())
        .filter(|p| !annotated.contains(p))
        .take(24)
        .collect();
    for (i, pair) in far.iter().enumerate() {
        for (stage, annotator, label) in [
            (Stage::First, "ann1", labels[i % 3]),
            (Stage::Second, "ann4", labels[(i + i / 3) % 3]),
        ] {
            extra.push(AnnotationRecord {
                pair: pair.clone(),
                stage,
                annotator: annotator.into(),
                label,
                seconds: None,
                at_ms: clock + 1_000 + 2 * i as i64 + i64::from(stage == Stage::Second),
                rationale: Rationale {
                    sentences: if label.is_evidence() {
                        vec![0, 1]
                    } else {
                        vec![]
                    },
                    abstract_sentences: doc_length(pair),
                },
            });
        }
    }
    snapshot.annotations.extend(extra);
    let project = snapshot_db::write(&app.db, "agreement", &snapshot).await;

    let out = crate::support::cli::command()
        .args(["--db", app.db_arg.as_str(), "report"])
        .args(["--project", "agreement", "--step", &STEP.to_string()])
        .args(["--bootstrap", "2", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let got = &json["agreement"];

    // The independent computation.
    let records: Vec<(usize, &AnnotationRecord)> =
        snapshot.annotations.iter().enumerate().collect();
    let stages = latest(
        records
            .iter()
            .map(|&(i, r)| ((r.pair.clone(), r.stage), i, r)),
    );
    let by_annotator = latest(
        records
            .iter()
            .filter(|(_, r)| r.stage != Stage::Adjudication)
            .map(|&(i, r)| ((r.pair.clone(), r.annotator.clone()), i, r)),
    );
    let mut units: BTreeMap<PairId, Vec<(String, Label)>> = BTreeMap::new();
    for ((pair, annotator), r) in &by_annotator {
        units
            .entry(pair.clone())
            .or_default()
            .push((annotator.clone(), r.label));
    }
    let three = units.values().filter(|u| u.len() == 3).count();
    assert!(three >= 5, "units with three annotators: {three}");
    let passes: BTreeMap<PairId, (Label, Label)> = stages
        .iter()
        .filter(|((_, stage), _)| *stage == Stage::First)
        .filter_map(|((pair, _), first)| {
            stages
                .get(&(pair.clone(), Stage::Second))
                .map(|second| (pair.clone(), (first.label, second.label)))
        })
        .collect();

    // Pairwise κ, by name.
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for unit in units.values() {
        names.extend(unit.iter().map(|(a, _)| a.as_str()));
    }
    let names: Vec<&str> = names.into_iter().collect();
    let mut expected_pairs = Vec::new();
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            let labels: Vec<(Label, Label)> = units
                .values()
                .filter_map(|u| {
                    let x = u.iter().find(|(n, _)| n == a)?.1;
                    let y = u.iter().find(|(n, _)| n == b)?.1;
                    Some((x, y))
                })
                .collect();
            if !labels.is_empty() {
                expected_pairs.push((a.to_string(), b.to_string(), labels));
            }
        }
    }
    let got_pairs = got["annotator_pairs"].as_array().unwrap();
    assert_eq!(got_pairs.len(), expected_pairs.len());
    assert!(expected_pairs.len() >= 4, "ann1..ann4 pairs");
    for (g, (a, b, labels)) in got_pairs.iter().zip(&expected_pairs) {
        assert_eq!((g["a"].as_str(), g["b"].as_str()), (Some(&**a), Some(&**b)));
        check_kappa(g, labels, &format!("{a}/{b}"));
    }

    // α over all annotators.
    let label_units = |keep: &dyn Fn(&PairId) -> bool| -> Vec<Vec<Label>> {
        units
            .iter()
            .filter(|(p, _)| keep(p))
            .map(|(_, u)| u.iter().map(|&(_, l)| l).collect())
            .collect()
    };
    check_alpha(&got["alpha"], &label_units(&|_| true), "alpha");
    let pass_pairs = |keep: &dyn Fn(&PairId) -> bool| -> Vec<(Label, Label)> {
        passes
            .iter()
            .filter(|(p, _)| keep(p))
            .map(|(_, &l)| l)
            .collect()
    };

    // Entry depths and contributions from the pool table.
    let pool = store::pool::list(&app.db, project).await.unwrap();
    let entry: HashMap<(String, String), u32> = pool
        .iter()
        .map(|r| ((r.claim_id.clone(), r.doc_id.clone()), r.entry_depth))
        .collect();
    let key = |p: &PairId| (p.claim.as_str().to_owned(), p.doc.as_str().to_owned());
    let mut bands: Vec<(u32, Option<u32>)> = Vec::new();
    let mut from = 1;
    while from <= DEPTH {
        let to = (from + STEP - 1).min(DEPTH);
        bands.push((from, Some(to)));
        from = to + 1;
    }
    let outside = |p: &PairId| !entry.contains_key(&key(p));
    assert!(
        far.iter().all(outside),
        "the far pairs are outside the pool"
    );
    bands.push((DEPTH + 1, None));
    let got_bands = got["by_depth"].as_array().unwrap();
    assert_eq!(got_bands.len(), bands.len());
    for (g, &(from, to)) in got_bands.iter().zip(&bands) {
        assert_eq!(g["from"], from);
        assert_eq!(g["to"].as_u64(), to.map(u64::from));
        let keep = |p: &PairId| match (entry.get(&key(p)), to) {
            (Some(&e), Some(to)) => from <= e && e <= to,
            (None, None) => true,
            _ => false,
        };
        let what = format!("band {from}..{to:?}");
        check_kappa(&g["first_vs_second"], &pass_pairs(&keep), &what);
        check_alpha(&g["alpha"], &label_units(&keep), &what);
        if to.is_none() {
            assert_eq!(g["first_vs_second"]["n"], far.len() as u64);
        }
    }
    let pooled: Vec<&str> = snapshot
        .systems
        .iter()
        .filter(|s| s.role == app::domain::pool::Role::Pooled)
        .map(|s| s.name.as_str())
        .collect();
    let ranks: HashMap<(String, String), &BTreeMap<String, u32>> = pool
        .iter()
        .map(|r| ((r.claim_id.clone(), r.doc_id.clone()), &r.model_ranks))
        .collect();
    let got_systems = got["by_system"].as_array().unwrap();
    assert_eq!(got_systems.len(), pooled.len());
    for (g, system) in got_systems.iter().zip(&pooled) {
        assert_eq!(g["system"], *system);
        let keep = |p: &PairId| {
            ranks
                .get(&key(p))
                .and_then(|r| r.get(*system))
                .is_some_and(|&rank| rank <= DEPTH)
        };
        check_kappa(&g["first_vs_second"], &pass_pairs(&keep), system);
        check_alpha(&g["alpha"], &label_units(&keep), system);
        assert!(g["first_vs_second"]["n"].as_u64().unwrap() > 0);
    }

    // Stage pairs, with rationales.
    let got_stages = got["by_stage"].as_array().unwrap();
    let stage_pairs = [
        (Stage::First, Stage::Second),
        (Stage::First, Stage::Adjudication),
        (Stage::Second, Stage::Adjudication),
    ];
    assert_eq!(got_stages.len(), 3);
    for (g, &(a, b)) in got_stages.iter().zip(&stage_pairs) {
        let what = format!("{} - {}", a.as_str(), b.as_str());
        assert_eq!(
            (g["a"].as_str(), g["b"].as_str()),
            (Some(a.as_str()), Some(b.as_str()))
        );
        let both: Vec<(&AnnotationRecord, &AnnotationRecord)> = stages
            .iter()
            .filter(|((_, s), _)| *s == a)
            .filter_map(|((p, _), x)| stages.get(&(p.clone(), b)).map(|y| (*x, *y)))
            .collect();
        let labels: Vec<(Label, Label)> = both.iter().map(|(x, y)| (x.label, y.label)).collect();
        check_kappa(&g["kappa"], &labels, &what);
        let two: Vec<Vec<Label>> = labels.iter().map(|&(x, y)| vec![x, y]).collect();
        check_alpha(&g["alpha"], &two, &what);
        let same: Vec<_> = both
            .iter()
            .filter(|(x, y)| x.label == y.label && x.label.is_evidence())
            .collect();
        let mut f1 = Vec::new();
        let mut decisions: Vec<Vec<bool>> = Vec::new();
        for (x, y) in &same {
            let (sx, sy): (BTreeSet<u32>, BTreeSet<u32>) = (
                x.rationale.sentences.iter().copied().collect(),
                y.rationale.sentences.iter().copied().collect(),
            );
            if !(sx.is_empty() && sy.is_empty()) {
                let common = sx.intersection(&sy).count();
                f1.push(2.0 * common as f64 / (sx.len() + sy.len()) as f64);
            }
            let length = x
                .rationale
                .abstract_sentences
                .max(y.rationale.abstract_sentences);
            for s in 0..length {
                decisions.push(vec![sx.contains(&s), sy.contains(&s)]);
            }
        }
        let r = &g["rationale"];
        assert_eq!(r["pairs"], same.len() as u64, "{what}");
        assert_eq!(r["f1_pairs"], f1.len() as u64, "{what}");
        let mean = (!f1.is_empty()).then(|| f1.iter().sum::<f64>() / f1.len() as f64);
        close(&r["mean_f1"], mean, &format!("{what}: rationale F1"));
        check_alpha(
            &r["sentence_alpha"],
            &decisions,
            &format!("{what}: sentences"),
        );
        if a == Stage::First && b == Stage::Second {
            assert!(f1.len() > 20, "rationale pairs: {}", f1.len());
            assert!(mean.is_some_and(|m| m < 1.0));
        }
    }

    // The text output names the section and the annotators.
    let out = crate::support::cli::command()
        .args(["--db", app.db_arg.as_str(), "report"])
        .args(["--project", "agreement", "--step", &STEP.to_string()])
        .args(["--bootstrap", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Cohen's kappa by pair of annotators"),
        "{text}"
    );
    assert!(text.contains("ann1 - ann4"), "{text}");
    assert!(
        text.contains(&format!("{}+ (outside the pool)", DEPTH + 1)),
        "{text}"
    );

    // The dashboard shows the section, and its tables download as CSV.
    app.add_lead("lead-agreement", "agreement").await;
    let lead = app.logged_in("lead-agreement").await;
    let query = format!("step={STEP}&bootstrap=2&seed=0");
    let html = lead
        .get(app.url(&format!("/lead/projects/agreement/report?{query}")))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for testid in [
        "agreement-annotators",
        "agreement-by-depth",
        "agreement-by-system",
        "agreement-by-stage",
        "agreement-legend",
    ] {
        assert!(
            html.contains(&format!("data-testid=\"{testid}\"")),
            "{testid}"
        );
    }
    assert!(html.contains("ann1 – ann4"), "annotators by name");
    assert!(html.contains("Krippendorff"), "alpha line");
    let csv = lead
        .get(app.url(&format!(
            "/lead/projects/agreement/report/csv/agreement_by_stage?{query}"
        )))
        .send()
        .await
        .unwrap();
    assert!(csv.status().is_success(), "{}", csv.status());
    let csv = csv.text().await.unwrap();
    assert!(
        csv.starts_with("a,b,pairs,observed_agreement,kappa,alpha,"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 4, "{csv}");
}
