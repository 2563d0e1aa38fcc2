//! Krippendorff's α for nominal data, in the coincidence-matrix form (Krippendorff 2011,
//! "Computing Krippendorff's Alpha-Reliability", section C: any number of coders, missing
//! values).
//!
//! A unit u with m_u ≥ 2 values contributes to the coincidence of values c and k
//! o_ck += n_uc (n_uk − [c = k]) / (m_u − 1), where n_uc counts the unit's values c; units with
//! fewer than two values are not pairable and left out. With n_c = Σ_k o_ck and n = Σ_c n_c:
//! D_o = (1/n) Σ_{c≠k} o_ck, D_e = (1/(n(n−1))) Σ_{c≠k} n_c n_k and α = 1 − D_o / D_e.
//! Here Σ_{c≠k} o_ck is summed per unit as (m_u² − Σ_c n_uc²) / (m_u − 1), and
//! Σ_{c≠k} n_c n_k = n² − Σ_c n_c² in integers, so D_e = 0 (α undefined) is detected exactly.

use crate::model::agreement::Alpha;

/// Krippendorff's nominal α of `units`, each the values its coders gave (missing values simply
/// absent). Values are compared with `==`; any number of distinct values.
pub fn nominal_alpha<V, U, I>(units: I) -> Alpha
where
    I: IntoIterator<Item = U>,
    U: IntoIterator<Item = V>,
    V: PartialEq,
{
    // The distinct values seen, and per value its pairable count n_c.
    let mut values: Vec<V> = Vec::new();
    let mut totals: Vec<u64> = Vec::new();
    let mut counts: Vec<u64> = Vec::new();
    let mut pairable_units = 0_u64;
    let mut disagreement = 0.0_f64;
    for unit in units {
        counts.iter_mut().for_each(|c| *c = 0);
        let mut m = 0_u64;
        for value in unit {
            let index = match values.iter().position(|v| *v == value) {
                Some(index) => index,
                None => {
                    values.push(value);
                    totals.push(0);
                    counts.push(0);
                    values.len() - 1
                }
            };
            counts[index] += 1;
            m += 1;
        }
        if m < 2 {
            continue;
        }
        pairable_units += 1;
        let same: u64 = counts.iter().map(|&c| c * c).sum();
        disagreement += (m * m - same) as f64 / (m - 1) as f64;
        for (total, &c) in totals.iter_mut().zip(&counts) {
            *total += c;
        }
    }
    let n: u64 = totals.iter().sum();
    if n < 2 {
        return Alpha::default();
    }
    let n_squared = u128::from(n) * u128::from(n);
    let same: u128 = totals.iter().map(|&c| u128::from(c) * u128::from(c)).sum();
    let chance_pairs = n_squared - same;
    let n_f = n as f64;
    Alpha {
        units: pairable_units,
        values: n,
        observed_disagreement: Some(disagreement / n_f),
        expected_disagreement: Some(chance_pairs as f64 / (n_f * (n_f - 1.0))),
        alpha: (chance_pairs != 0).then(|| 1.0 - (n_f - 1.0) * disagreement / chance_pairs as f64),
    }
}
