//! The report's significance marks against a direct call of the metrics' significance module
//! (`randomization_test`, `holm`) on the same systems judged against the naively computed gold.

use super::generated::{generate, GenShape};
use super::naive::Naive;
use super::options;
use crate::metrics::{holm, randomization_test};
use crate::pool::Strategy;
use crate::report::{Report, Significance, SIGNIFICANCE_ALPHA};

/// The report's marks equal the module's, called pair by pair with the report's seeds.
pub fn check_significance(
    n: &Naive<'_>,
    significance: &Significance,
    permutations: u32,
    seed: u64,
) {
    let pool = n.pool(&n.pooled(), n.depth());
    let gold = n.gold(&pool);
    let systems = &n.snap.systems;
    let judged: Vec<_> = (0..systems.len()).map(|s| n.judged(s, &gold)).collect();
    let mut tests = Vec::new();
    for a in 0..systems.len() {
        for b in a + 1..systems.len() {
            let k = tests.len() as u64;
            let t = randomization_test(&judged[a], &judged[b], permutations, seed + k).unwrap();
            tests.push((a, b, t));
        }
    }
    let f1 = holm(&tests.iter().map(|t| t.2.f1_p).collect::<Vec<_>>());
    let ap = holm(
        &tests
            .iter()
            .map(|t| t.2.average_precision_p)
            .collect::<Vec<_>>(),
    );
    assert_eq!(significance.pairs.len(), tests.len());
    assert_eq!(
        (
            significance.permutations,
            significance.seed,
            significance.alpha
        ),
        (permutations, seed, SIGNIFICANCE_ALPHA)
    );
    for (k, (got, (a, b, t))) in significance.pairs.iter().zip(&tests).enumerate() {
        assert_eq!((&got.a, &got.b), (&systems[*a].name, &systems[*b].name));
        let (ma, mb) = (judged[*a].metrics(), judged[*b].metrics());
        assert_eq!(got.f1_difference, ma.f1 - mb.f1);
        assert_eq!(
            got.average_precision_difference,
            ma.average_precision - mb.average_precision
        );
        assert_eq!(
            (got.f1_p, got.average_precision_p),
            (t.f1_p, t.average_precision_p)
        );
        assert_eq!(
            (got.f1_p_holm, got.average_precision_p_holm),
            (f1[k], ap[k])
        );
        assert_eq!(got.f1_significant, f1[k] < 0.05, "{} / {}", got.a, got.b);
        assert_eq!(
            got.average_precision_significant,
            ap[k] < 0.05,
            "{} / {}",
            got.a,
            got.b
        );
    }
}

#[test]
fn marks_equal_the_significance_module_on_the_same_systems() {
    let shape = GenShape {
        claims: 120,
        candidates_per_claim: 20,
        evidence_share: 0.1,
        predictions_per_claim: 10,
        pooled: 4,
        evaluation_only: 1,
        label_less: false,
        strategy: Strategy::Confidence,
        depth: 60,
        score_steps: 100,
        annotated_share: 1.0,
        imports: 0,
        second_pass_mode: crate::report::SecondPassMode::Confirm,
        seed: 17,
    };
    let snap = generate(&shape).unwrap();
    let mut options = options(10, 20, 5);
    options.permutations = 2_000;
    let report = Report::compute(&snap, &options).unwrap();
    let s = &report.systems.significance;
    check_significance(&Naive::new(&snap), s, 2_000, 5);
    // The case marks some differences and not others, on both measures.
    let marks: Vec<bool> = s
        .pairs
        .iter()
        .flat_map(|p| [p.f1_significant, p.average_precision_significant])
        .collect();
    assert!(marks.contains(&true) && marks.contains(&false), "{s:#?}");
    // The legend says what a mark means.
    let legend = s.legend();
    assert!(
        legend.contains("Holm") && legend.contains("α = 0.05") && legend.contains("10 pairs"),
        "{legend}"
    );
    // Without permutations nothing is significant (every p-value is 1).
    options.permutations = 0;
    let none = Report::compute(&snap, &options)
        .unwrap()
        .systems
        .significance;
    assert!(none
        .pairs
        .iter()
        .all(|p| !p.f1_significant && !p.average_precision_significant && p.f1_p == 1.0));
}
