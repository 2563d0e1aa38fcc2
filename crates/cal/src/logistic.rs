//! Logistic regression with an L2 penalty on the weights (not the intercept), fitted by Newton's
//! method with a backtracking line search on the penalised log-likelihood
//!
//! `ℓ(w, b) = Σᵢ [yᵢ log σ(zᵢ) + (1 − yᵢ) log(1 − σ(zᵢ))] − λ/2 ‖w‖²`, `zᵢ = w·xᵢ + b`.
//!
//! The penalty keeps the weights finite when the labels are separable, as they are in the first
//! rounds of active learning (one synthetic evidence example against a few presumed negatives).
//! Each Newton step solves the `(d + 1)`-square system by Cholesky: features are few (a handful
//! of scores and ranks), so a fit costs `O(n·d²)` per iteration.

/// The penalty weight λ the CAL order uses (on standardised features).
pub const L2: f64 = 1.0;
const MAX_ITERATIONS: usize = 100;
/// Stop when no parameter moves by more than this.
const TOLERANCE: f64 = 1e-9;

/// A fitted model: `score(x) = w·x + b`, the log-odds of evidence.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub weights: Vec<f64>,
    pub bias: f64,
}

impl Model {
    /// The log-odds `w·x + b` (ranking by it is ranking by probability).
    pub fn score(&self, x: &[f64]) -> f64 {
        self.weights.iter().zip(x).map(|(w, v)| w * v).sum::<f64>() + self.bias
    }
}

/// `ln(1 + eᶻ)` without overflow.
fn softplus(z: f64) -> f64 {
    if z > 0.0 {
        z + (-z).exp().ln_1p()
    } else {
        z.exp().ln_1p()
    }
}

fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// The penalised log-likelihood `ℓ` of the module documentation.
pub fn objective(examples: &[(&[f64], bool)], model: &Model, l2: f64) -> f64 {
    let fit: f64 = examples
        .iter()
        .map(|(x, y)| {
            let z = model.score(x);
            // log σ(z) = −softplus(−z), log(1 − σ(z)) = −softplus(z).
            if *y {
                -softplus(-z)
            } else {
                -softplus(z)
            }
        })
        .sum();
    fit - l2 / 2.0 * model.weights.iter().map(|w| w * w).sum::<f64>()
}

/// Fits the model to `examples` (features of `columns` values each, label) with penalty `l2 > 0`.
/// No examples give the zero model.
pub fn fit(examples: &[(&[f64], bool)], columns: usize, l2: f64) -> Model {
    let d = columns + 1; // the intercept is the last parameter
    let mut model = Model {
        weights: vec![0.0; columns],
        bias: 0.0,
    };
    if examples.is_empty() {
        return model;
    }
    let mut current = objective(examples, &model, l2);
    for _ in 0..MAX_ITERATIONS {
        // Gradient and negated Hessian of ℓ.
        let mut gradient = vec![0.0; d];
        let mut hessian = vec![0.0; d * d];
        for (x, y) in examples {
            let p = sigmoid(model.score(x));
            let residual = if *y { 1.0 - p } else { -p };
            let weight = p * (1.0 - p);
            for i in 0..d {
                let xi = if i < columns { x[i] } else { 1.0 };
                gradient[i] += residual * xi;
                for j in 0..=i {
                    let xj = if j < columns { x[j] } else { 1.0 };
                    hessian[i * d + j] += weight * xi * xj;
                }
            }
        }
        for i in 0..columns {
            gradient[i] -= l2 * model.weights[i];
            hessian[i * d + i] += l2;
        }
        // A tiny ridge on the intercept keeps the system positive definite when every
        // probability has saturated.
        hessian[d * d - 1] += 1e-9;
        for i in 0..d {
            for j in i + 1..d {
                hessian[i * d + j] = hessian[j * d + i];
            }
        }
        let Some(step) = cholesky_solve(&hessian, &gradient, d) else {
            break;
        };
        // Backtracking: halve the step until the objective does not fall.
        let mut scale = 1.0;
        let mut moved = false;
        for _ in 0..30 {
            let candidate = Model {
                weights: (0..columns)
                    .map(|i| model.weights[i] + scale * step[i])
                    .collect(),
                bias: model.bias + scale * step[columns],
            };
            let value = objective(examples, &candidate, l2);
            if value >= current - 1e-12 {
                model = candidate;
                current = value;
                moved = true;
                break;
            }
            scale /= 2.0;
        }
        let largest = step.iter().fold(0.0f64, |m, s| m.max((s * scale).abs()));
        if !moved || largest < TOLERANCE {
            break;
        }
    }
    model
}

/// Solves `A x = b` for a symmetric positive definite `A` (`n × n`, row-major); `None` if the
/// factorisation meets a non-positive pivot.
fn cholesky_solve(a: &[f64], b: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let sum: f64 = (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum();
            if i == j {
                let pivot = a[i * n + i] - sum;
                if pivot <= 0.0 || !pivot.is_finite() {
                    return None;
                }
                l[i * n + i] = pivot.sqrt();
            } else {
                l[i * n + j] = (a[i * n + j] - sum) / l[j * n + j];
            }
        }
    }
    // L y = b, then Lᵀ x = y.
    let mut y = vec![0.0; n];
    for i in 0..n {
        let sum: f64 = (0..i).map(|k| l[i * n + k] * y[k]).sum();
        y[i] = (b[i] - sum) / l[i * n + i];
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let sum: f64 = (i + 1..n).map(|k| l[k * n + i] * x[k]).sum();
        x[i] = (y[i] - sum) / l[i * n + i];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// `n` examples drawn from a logistic model with the given weights and bias.
    fn generated(n: usize, weights: &[f64], bias: f64, seed: u64) -> Vec<(Vec<f64>, bool)> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let x: Vec<f64> = weights.iter().map(|_| rng.gen_range(-2.0..2.0)).collect();
                let z: f64 = weights.iter().zip(&x).map(|(w, v)| w * v).sum::<f64>() + bias;
                let y = rng.gen::<f64>() < sigmoid(z);
                (x, y)
            })
            .collect()
    }

    fn borrowed(data: &[(Vec<f64>, bool)]) -> Vec<(&[f64], bool)> {
        data.iter().map(|(x, y)| (x.as_slice(), *y)).collect()
    }

    #[test]
    fn recovers_the_coefficients_of_the_model_that_generated_the_data() {
        let data = generated(40_000, &[1.5, -0.8, 0.0], -0.5, 7);
        let model = fit(&borrowed(&data), 3, 1e-6);
        for (got, want) in model.weights.iter().zip([1.5, -0.8, 0.0]) {
            assert!((got - want).abs() < 0.06, "{model:?}");
        }
        assert!((model.bias + 0.5).abs() < 0.06, "{model:?}");
    }

    #[test]
    fn the_fit_is_the_maximum_gradient_ascent_finds_independently() {
        // An independent computation: plain gradient ascent on the same objective, many small
        // steps, reaches the same parameters as Newton's method.
        let data = generated(300, &[0.7, 1.2], 0.3, 11);
        let examples = borrowed(&data);
        let newton = fit(&examples, 2, L2);
        let mut w = [0.0f64; 2];
        let mut b = 0.0f64;
        for _ in 0..20_000 {
            let mut g = [0.0f64; 3];
            for (x, y) in &examples {
                let p = sigmoid(w[0] * x[0] + w[1] * x[1] + b);
                let r = if *y { 1.0 } else { 0.0 } - p;
                g[0] += r * x[0];
                g[1] += r * x[1];
                g[2] += r;
            }
            g[0] -= L2 * w[0];
            g[1] -= L2 * w[1];
            w[0] += 0.004 * g[0];
            w[1] += 0.004 * g[1];
            b += 0.004 * g[2];
        }
        assert!((newton.weights[0] - w[0]).abs() < 1e-4, "{newton:?} {w:?}");
        assert!((newton.weights[1] - w[1]).abs() < 1e-4, "{newton:?} {w:?}");
        assert!((newton.bias - b).abs() < 1e-4, "{newton:?} {b}");
        let ascent = Model {
            weights: w.to_vec(),
            bias: b,
        };
        assert!(objective(&examples, &newton, L2) >= objective(&examples, &ascent, L2) - 1e-9);
    }

    #[test]
    fn separable_labels_give_finite_weights_that_rank_evidence_first() {
        let xs = [
            [3.0, 1.0],
            [2.5, 0.0],
            [-1.0, 0.5],
            [-2.0, -1.0],
            [-0.5, 0.0],
        ];
        let ys = [true, true, false, false, false];
        let examples: Vec<(&[f64], bool)> =
            xs.iter().zip(ys).map(|(x, y)| (x.as_slice(), y)).collect();
        let model = fit(&examples, 2, L2);
        assert!(model.weights.iter().all(|w| w.is_finite()) && model.bias.is_finite());
        let worst_evidence = xs[..2]
            .iter()
            .map(|x| model.score(x))
            .fold(f64::MAX, f64::min);
        let best_other = xs[2..]
            .iter()
            .map(|x| model.score(x))
            .fold(f64::MIN, f64::max);
        assert!(worst_evidence > best_other, "{model:?}");
    }

    #[test]
    fn no_examples_or_one_class_only_still_give_a_model() {
        assert_eq!(
            fit(&[], 2, L2),
            Model {
                weights: vec![0.0, 0.0],
                bias: 0.0
            }
        );
        let x = [1.0, 2.0];
        let model = fit(&[(&x, false), (&x, false)], 2, L2);
        assert!(model.bias < 0.0 && model.bias.is_finite(), "{model:?}");
    }

    #[test]
    fn cholesky_solves_a_known_system_and_refuses_an_indefinite_one() {
        let a = [4.0, 2.0, 2.0, 3.0];
        let x = cholesky_solve(&a, &[2.0, 1.0], 2).unwrap();
        assert!((4.0 * x[0] + 2.0 * x[1] - 2.0).abs() < 1e-12);
        assert!((2.0 * x[0] + 3.0 * x[1] - 1.0).abs() < 1e-12);
        assert!(cholesky_solve(&[1.0, 2.0, 2.0, 1.0], &[1.0, 1.0], 2).is_none());
    }
}
