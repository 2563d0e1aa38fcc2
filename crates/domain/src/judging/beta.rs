//! Beta draws for Thompson sampling, from the uniform draws of a seeded generator (so no
//! distribution crate is needed): Beta(a, b) = X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b),
//! each Gamma by Marsaglia & Tsang (2000) from normal draws by Marsaglia's polar method.

use rand::Rng;

/// A standard normal draw (Marsaglia's polar method).
fn standard_normal(rng: &mut impl Rng) -> f64 {
    loop {
        let u = rng.gen::<f64>() * 2.0 - 1.0;
        let v = rng.gen::<f64>() * 2.0 - 1.0;
        let s = u * u + v * v;
        if s > 0.0 && s < 1.0 {
            return u * (-2.0 * s.ln() / s).sqrt();
        }
    }
}

/// A Gamma(shape, 1) draw for `shape >= 1` (Marsaglia & Tsang 2000).
fn gamma(rng: &mut impl Rng, shape: f64) -> f64 {
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = standard_normal(rng);
        let t = 1.0 + c * x;
        if t <= 0.0 {
            continue;
        }
        let v = t * t * t;
        let u: f64 = rng.gen();
        let x2 = x * x;
        if u < 1.0 - 0.0331 * x2 * x2 || u.ln() < 0.5 * x2 + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}

/// A Beta(a, b) draw for `a, b >= 1` (the posteriors of a Beta(1,1) prior always are).
pub(crate) fn beta(rng: &mut impl Rng, a: f64, b: f64) -> f64 {
    let x = gamma(rng, a);
    let y = gamma(rng, b);
    x / (x + y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// Sample mean and variance of 40,000 draws match Beta(a, b)'s within 4 standard errors.
    #[test]
    fn beta_draws_have_the_right_mean_and_variance() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for (a, b) in [(1.0, 1.0), (3.0, 5.0), (1.0, 20.0), (40.0, 2.0)] {
            let n = 40_000;
            let draws: Vec<f64> = (0..n).map(|_| beta(&mut rng, a, b)).collect();
            assert!(draws.iter().all(|&x| (0.0..=1.0).contains(&x)));
            let mean = draws.iter().sum::<f64>() / n as f64;
            let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let true_mean = a / (a + b);
            let true_var = a * b / ((a + b).powi(2) * (a + b + 1.0));
            let se = (true_var / n as f64).sqrt();
            assert!(
                (mean - true_mean).abs() < 4.0 * se,
                "Beta({a},{b}) mean {mean}"
            );
            assert!(
                (var / true_var - 1.0).abs() < 0.05,
                "Beta({a},{b}) var {var}"
            );
        }
    }
}
