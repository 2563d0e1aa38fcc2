//! κ and α against second, naive implementations written from the textbook definitions (every
//! ordered pair of values enumerated into a coincidence matrix; label shares counted one by
//! one), on seeded random data, and on published and hand-worked examples.

use super::{kappa, nominal_alpha, sentence_decisions, sentence_f1};
use crate::label::Label::{self, Contradict as C, Nei as N, Support as S};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const TOLERANCE: f64 = 1e-12;

fn close(a: Option<f64>, b: Option<f64>, what: &str) {
    match (a, b) {
        (Some(a), Some(b)) => assert!((a - b).abs() <= TOLERANCE, "{what}: {a} vs {b}"),
        (a, b) => assert_eq!(a, b, "{what}"),
    }
}

/// α as Krippendorff (2011) writes it: the coincidence matrix o_ck = Σ_u Σ_{i≠j} [v_ui = c]
/// [v_uj = k] / (m_u − 1) over the pairable units, n_c its row sums, and
/// α = 1 − (n − 1) Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k. Returns (units, n, D_o, D_e, α).
fn naive_alpha(units: &[Vec<u8>]) -> (u64, u64, Option<f64>, Option<f64>, Option<f64>) {
    let mut o = [[0.0_f64; 8]; 8];
    let mut pairable = 0;
    for unit in units.iter().filter(|u| u.len() >= 2) {
        pairable += 1;
        let m = unit.len() as f64;
        for (i, &c) in unit.iter().enumerate() {
            for (j, &k) in unit.iter().enumerate() {
                if i != j {
                    o[c as usize][k as usize] += 1.0 / (m - 1.0);
                }
            }
        }
    }
    let n_c: Vec<f64> = (0..8).map(|c| o[c].iter().sum()).collect();
    let n: f64 = n_c.iter().sum();
    let values = units
        .iter()
        .filter(|u| u.len() >= 2)
        .map(Vec::len)
        .sum::<usize>() as u64;
    assert!((n - values as f64).abs() < 1e-9);
    if values < 2 {
        return (pairable, values, None, None, None);
    }
    let mut observed = 0.0;
    let mut expected = 0.0;
    for c in 0..8 {
        for k in 0..8 {
            if c != k {
                observed += o[c][k];
                expected += n_c[c] * n_c[k];
            }
        }
    }
    let alpha = (expected != 0.0).then(|| 1.0 - (n - 1.0) * observed / expected);
    (
        pairable,
        values,
        Some(observed / n),
        Some(expected / (n * (n - 1.0))),
        alpha,
    )
}

/// κ by counting: p_o the share of equal pairs, p_e = Σ_label share_a(label) share_b(label).
fn naive_kappa(pairs: &[(Label, Label)]) -> Option<(f64, f64, Option<f64>)> {
    if pairs.is_empty() {
        return None;
    }
    let n = pairs.len() as f64;
    let p_o = pairs.iter().filter(|(a, b)| a == b).count() as f64 / n;
    let mut p_e = 0.0;
    for label in [S, C, N] {
        let a = pairs.iter().filter(|(a, _)| *a == label).count() as f64 / n;
        let b = pairs.iter().filter(|(_, b)| *b == label).count() as f64 / n;
        p_e += a * b;
    }
    let degenerate = pairs.iter().all(|&(a, b)| a == b && a == pairs[0].0);
    Some((p_o, p_e, (!degenerate).then(|| (p_o - p_e) / (1.0 - p_e))))
}

fn check_alpha(units: &[Vec<u8>], what: &str) {
    let got = nominal_alpha(units.iter().map(|u| u.iter().copied()));
    let (pairable, values, d_o, d_e, alpha) = naive_alpha(units);
    assert_eq!(got.units, pairable, "{what}: units");
    assert_eq!(got.values, values, "{what}: values");
    close(got.observed_disagreement, d_o, what);
    close(got.expected_disagreement, d_e, what);
    close(got.alpha, alpha, what);
}

#[test]
fn alpha_equals_the_naive_coincidence_matrix_on_random_data() {
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    for case in 0..3_000 {
        let coders = rng.gen_range(1..=6);
        let categories = rng.gen_range(1..=5_u8);
        let missing = rng.gen_range(0.0..0.7);
        let units: Vec<Vec<u8>> = (0..rng.gen_range(0..40))
            .map(|_| {
                (0..coders)
                    .filter_map(|_| {
                        let present = !rng.gen_bool(missing);
                        let value = rng.gen_range(0..categories);
                        present.then_some(value)
                    })
                    .collect()
            })
            .collect();
        check_alpha(&units, &format!("case {case}"));
    }
}

#[test]
fn kappa_equals_the_naive_count_on_random_data() {
    let mut rng = ChaCha8Rng::seed_from_u64(61);
    for case in 0..3_000 {
        let labels = &[S, C, N][..rng.gen_range(1..=3)];
        let agree = rng.gen_range(0.0..1.0);
        let pairs: Vec<(Label, Label)> = (0..rng.gen_range(0..60))
            .map(|_| {
                let a = labels[rng.gen_range(0..labels.len())];
                let b = if rng.gen_bool(agree) {
                    a
                } else {
                    labels[rng.gen_range(0..labels.len())]
                };
                (a, b)
            })
            .collect();
        let got = kappa(pairs.iter().copied());
        assert_eq!(got.n, pairs.len() as u64, "case {case}");
        match naive_kappa(&pairs) {
            None => assert_eq!(got, Default::default(), "case {case}"),
            Some((p_o, p_e, k)) => {
                close(got.observed_agreement, Some(p_o), "p_o");
                close(got.expected_agreement, Some(p_e), "p_e");
                close(got.kappa, k, &format!("case {case}: kappa"));
            }
        }
        // Two coders with no missing value: α agrees with the naive α on the same data.
        let units: Vec<Vec<u8>> = pairs.iter().map(|&(a, b)| vec![a as u8, b as u8]).collect();
        check_alpha(&units, &format!("case {case}: two coders"));
    }
}

/// Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability" (Departmental Papers
/// (ASC) 43, University of Pennsylvania), section C, "Nominal data, any number of observers,
/// missing data": 4 observers, 12 units, `None` where an observer did not code the unit. The
/// paper finds n = 40 pairable values (n_1..n_5 = 9, 13, 10, 5, 3) and α = 0.743; exactly,
/// α = 1 − 39 · 8 / 1216 = 113/152. (Data and figure as the Python package `krippendorff`'s
/// doctest quotes them from the paper's page 8.)
#[test]
fn krippendorffs_own_example_gives_0_743() {
    const X: Option<u8> = None;
    let observers: [[Option<u8>; 12]; 4] = [
        [
            Some(1),
            Some(2),
            Some(3),
            Some(3),
            Some(2),
            Some(1),
            Some(4),
            Some(1),
            Some(2),
            X,
            X,
            X,
        ],
        [
            Some(1),
            Some(2),
            Some(3),
            Some(3),
            Some(2),
            Some(2),
            Some(4),
            Some(1),
            Some(2),
            Some(5),
            X,
            Some(3),
        ],
        [
            X,
            Some(3),
            Some(3),
            Some(3),
            Some(2),
            Some(3),
            Some(4),
            Some(2),
            Some(2),
            Some(5),
            Some(1),
            X,
        ],
        [
            Some(1),
            Some(2),
            Some(3),
            Some(3),
            Some(2),
            Some(4),
            Some(4),
            Some(1),
            Some(2),
            Some(5),
            Some(1),
            X,
        ],
    ];
    let units: Vec<Vec<u8>> = (0..12)
        .map(|u| observers.iter().filter_map(|o| o[u]).collect())
        .collect();
    let alpha = nominal_alpha(units.iter().map(|u| u.iter().copied()));
    assert_eq!(alpha.units, 11, "unit 12 has one value only");
    assert_eq!(alpha.values, 40);
    close(alpha.observed_disagreement, Some(8.0 / 40.0), "D_o");
    close(
        alpha.expected_disagreement,
        Some(1216.0 / (40.0 * 39.0)),
        "D_e",
    );
    close(alpha.alpha, Some(113.0 / 152.0), "alpha");
    assert_eq!(format!("{:.3}", alpha.alpha.unwrap()), "0.743");
    check_alpha(&units, "Krippendorff 2011");
}

/// The computational example of Wikipedia's "Krippendorff's alpha" article: 3 coders, 15 units,
/// nominal α = 0.691 (exactly 1 − 25 · 6 / 486 = 56/81).
#[test]
fn the_wikipedia_example_gives_0_691() {
    let rows = [
        "* * * * * 3 4 1 2 1 1 3 3 * 3",
        "1 * 2 1 3 3 4 3 * * * * * * *",
        "* * 2 1 3 4 4 * 2 1 1 3 3 * 4",
    ];
    let coders: Vec<Vec<Option<u8>>> = rows
        .iter()
        .map(|r| r.split(' ').map(|v| v.parse().ok()).collect())
        .collect();
    let units: Vec<Vec<u8>> = (0..15)
        .map(|u| coders.iter().filter_map(|c| c[u]).collect())
        .collect();
    let alpha = nominal_alpha(units.iter().map(|u| u.iter().copied()));
    assert_eq!((alpha.units, alpha.values), (12, 26));
    close(alpha.alpha, Some(56.0 / 81.0), "alpha");
    assert_eq!(format!("{:.3}", alpha.alpha.unwrap()), "0.691");
}

#[test]
fn alpha_is_undefined_without_pairs_or_without_variation() {
    let none: Vec<Vec<u8>> = vec![];
    assert_eq!(
        nominal_alpha(none.iter().map(|u| u.iter().copied())),
        Default::default()
    );
    // Only single values: nothing pairable.
    let single = nominal_alpha([[1_u8], [2]]);
    assert_eq!((single.units, single.values, single.alpha), (0, 0, None));
    // Everyone says the same everywhere: D_o = D_e = 0, α undefined (not 1, not NaN).
    let same = nominal_alpha([vec![S, S], vec![S, S, S]]);
    assert_eq!((same.units, same.values), (2, 5));
    assert_eq!(same.observed_disagreement, Some(0.0));
    assert_eq!(same.expected_disagreement, Some(0.0));
    assert_eq!(same.alpha, None);
}

/// Cohen's κ worked by hand. First pass in rows, second in columns (S, C, N):
/// S: 6 1 1 | C: 0 4 2 | N: 1 0 5. n = 20, p_o = 15/20 = 0.75; row shares 8, 6, 6 and column
/// shares 7, 5, 8 (of 20): p_e = (8·7 + 6·5 + 6·8) / 400 = 134/400 = 0.335;
/// κ = (0.75 − 0.335) / (1 − 0.335) = 0.415 / 0.665 = 83/133.
#[test]
fn cohens_kappa_by_hand() {
    let cells = [
        (S, S, 6),
        (S, C, 1),
        (S, N, 1),
        (C, C, 4),
        (C, N, 2),
        (N, S, 1),
        (N, N, 5),
    ];
    let pairs: Vec<(Label, Label)> = cells
        .iter()
        .flat_map(|&(a, b, count)| std::iter::repeat_n((a, b), count))
        .collect();
    let k = kappa(pairs.iter().copied());
    assert_eq!(k.n, 20);
    close(k.observed_agreement, Some(0.75), "p_o");
    close(k.expected_agreement, Some(0.335), "p_e");
    close(k.kappa, Some(83.0 / 133.0), "kappa");
    // The same data the other way round: κ is symmetric.
    let swapped = kappa(pairs.iter().map(|&(a, b)| (b, a)));
    close(swapped.kappa, k.kappa, "swapped");
    // No pair: n 0, nothing else defined.
    assert_eq!(kappa([]), Default::default());
    // One label everywhere: p_e = 1, κ undefined.
    let flat = kappa([(N, N), (N, N)]);
    assert_eq!(
        (flat.n, flat.observed_agreement, flat.kappa),
        (2, Some(1.0), None)
    );
}

#[test]
fn rationale_f1_and_sentence_decisions() {
    // A = {0, 2, 3}, B = {2, 3, 5, 6}: 2 · 2 / (3 + 4) = 4/7.
    close(
        sentence_f1(&[0, 2, 3], &[6, 5, 3, 2]),
        Some(4.0 / 7.0),
        "f1",
    );
    close(sentence_f1(&[1, 1], &[1]), Some(1.0), "duplicates");
    close(sentence_f1(&[], &[4]), Some(0.0), "one empty");
    assert_eq!(sentence_f1(&[], &[]), None);
    assert_eq!(
        sentence_decisions(&[0, 2], &[2], 4),
        vec![[true, false], [false, false], [true, true], [false, false]]
    );
    // A sentence past the abstract's count still counts.
    assert_eq!(sentence_decisions(&[], &[2], 1).len(), 3);
    // Binary α over the decisions, by hand: units (1,0) (0,0) (1,1) (0,0): n = 8, n_0 = 5,
    // n_1 = 3, one disagreeing unit: o_01 = o_10 = 1; α = 1 − 7 · 2 / (2 · 5 · 3) = 8/15.
    let alpha = nominal_alpha(sentence_decisions(&[0, 2], &[2], 4));
    close(alpha.alpha, Some(8.0 / 15.0), "sentence alpha");
}
