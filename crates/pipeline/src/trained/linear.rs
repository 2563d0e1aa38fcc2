//! Linear models over sparse features: multinomial logistic regression with the first class as
//! the reference (its logit is 0), so two classes make ordinary logistic regression with one
//! weight vector. Fitted by AdaGrad on the L2-penalised log-loss, examples in a seeded random
//! order each epoch.

use super::features::Features;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// How to fit a model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FitSettings {
    pub(crate) epochs: u32,
    /// AdaGrad's base step.
    pub(crate) learning_rate: f64,
    /// L2 penalty per example on the weights of the features the example uses.
    pub(crate) l2: f64,
    pub(crate) seed: u64,
}

/// AdaGrad's guard against dividing by zero.
const ADAGRAD_EPSILON: f64 = 1e-8;

/// A fitted linear model: `classes - 1` weight vectors of `dims` weights.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LinearModel {
    dims: usize,
    classes: usize,
    /// Row-major: the weights of class `k` (k ≥ 1) start at `(k - 1) * dims`.
    weights: Vec<f64>,
}

/// One training example: its features and its class (< the model's classes).
pub(crate) type Example = (Features, usize);

/// Why weights read back from a file do not make a model.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum LinearError {
    #[error("needs at least 2 classes, has {0}")]
    TooFewClasses(usize),
    #[error("weight {index} is out of range (the model has {dims} features per class)")]
    IndexOutOfRange { index: u64, dims: usize },
    #[error("weight {index} is not a finite number")]
    NotFinite { index: u64 },
    #[error("weight {index} is given twice")]
    Repeated { index: u64 },
}

/// A model as saved: only the non-zero weights, by flat index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SavedLinear {
    dims: usize,
    classes: usize,
    /// (flat index, weight) for every non-zero weight, by index.
    nonzero: Vec<(u64, f32)>,
}

impl LinearModel {
    /// A model of all-zero weights (every class equally likely).
    pub(crate) fn zeros(dims: usize, classes: usize) -> Result<LinearModel, LinearError> {
        if classes < 2 {
            return Err(LinearError::TooFewClasses(classes));
        }
        Ok(LinearModel {
            dims,
            classes,
            weights: vec![0.0; dims * (classes - 1)],
        })
    }

    pub(crate) fn dims(&self) -> usize {
        self.dims
    }

    pub(crate) fn classes(&self) -> usize {
        self.classes
    }

    /// The weight of feature `feature` for class `class` (0 for the reference class and for
    /// features past the model's dimensions).
    #[cfg(test)]
    pub(crate) fn weight(&self, class: usize, feature: usize) -> f64 {
        if class == 0 || feature >= self.dims {
            return 0.0;
        }
        self.weights
            .get((class - 1) * self.dims + feature)
            .copied()
            .unwrap_or(0.0)
    }

    /// The logit of `class` (0 for the reference class). Features past the model's dimensions
    /// are ignored.
    fn logit(&self, class: usize, x: &Features) -> f64 {
        let start = class.saturating_sub(1) * self.dims;
        let row = match self.weights.get(start..start + self.dims) {
            Some(row) if class > 0 => row,
            _ => return 0.0,
        };
        let mut sum = 0.0;
        for &(i, v) in x.entries() {
            if let Some(w) = row.get(i as usize) {
                sum += w * f64::from(v);
            }
        }
        sum
    }

    /// The logits of each class; the reference class's is 0.
    pub(crate) fn logits(&self, x: &Features) -> Vec<f64> {
        (0..self.classes).map(|k| self.logit(k, x)).collect()
    }

    /// The probability of each class (they sum to 1).
    pub(crate) fn probabilities(&self, x: &Features) -> Vec<f64> {
        softmax(&self.logits(x))
    }

    /// The probability of class 1 (for a two-class model, the positive class).
    pub(crate) fn positive(&self, x: &Features) -> f64 {
        if self.classes == 2 {
            1.0 / (1.0 + (-self.logit(1, x)).exp())
        } else {
            self.probabilities(x).get(1).copied().unwrap_or(0.0)
        }
    }

    /// The mean log-loss of `examples` plus `l2 / 2` times the squared norm of the weights.
    #[cfg(test)]
    pub(crate) fn objective(&self, examples: &[Example], l2: f64) -> f64 {
        let loss: f64 = examples
            .iter()
            .map(|(x, class)| {
                let logits = self.logits(x);
                log_sum_exp(&logits) - logits.get(*class).copied().unwrap_or(0.0)
            })
            .sum();
        let norm: f64 = self.weights.iter().map(|w| w * w).sum();
        loss / examples.len().max(1) as f64 + 0.5 * l2 * norm
    }

    /// Fits a model of `classes` classes and `dims` features to `examples` by AdaGrad.
    /// Examples whose class is out of range are skipped; so are features past `dims`.
    pub(crate) fn fit(
        examples: &[&Example],
        dims: usize,
        classes: usize,
        settings: FitSettings,
    ) -> Result<LinearModel, LinearError> {
        let mut model = LinearModel::zeros(dims, classes)?;
        let mut squares = vec![0.0f64; model.weights.len()];
        let mut order: Vec<usize> = (0..examples.len()).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(settings.seed);
        let mut residuals = vec![0.0f64; classes];
        for _ in 0..settings.epochs {
            order.shuffle(&mut rng);
            for &e in &order {
                let (x, class) = examples[e];
                if *class >= classes {
                    continue;
                }
                let p = model.probabilities(x);
                for (k, r) in residuals.iter_mut().enumerate() {
                    *r = p[k] - if k == *class { 1.0 } else { 0.0 };
                }
                for (k, residual) in residuals.iter().enumerate().skip(1) {
                    let offset = (k - 1) * dims;
                    for &(i, v) in x.entries() {
                        let i = i as usize;
                        if i >= dims {
                            continue;
                        }
                        let j = offset + i;
                        let g = residual * f64::from(v) + settings.l2 * model.weights[j];
                        squares[j] += g * g;
                        model.weights[j] -=
                            settings.learning_rate * g / (squares[j].sqrt() + ADAGRAD_EPSILON);
                    }
                }
            }
        }
        // Rounded to what a saved model keeps, so a model scores the same before and after a
        // save and load.
        for w in &mut model.weights {
            *w = f64::from(*w as f32);
        }
        Ok(model)
    }

    /// The model as saved: its non-zero weights (fitted weights are already `f32` values).
    pub(crate) fn to_saved(&self) -> SavedLinear {
        SavedLinear {
            dims: self.dims,
            classes: self.classes,
            nonzero: (0u64..)
                .zip(&self.weights)
                .filter(|(_, w)| **w as f32 != 0.0)
                .map(|(i, w)| (i, *w as f32))
                .collect(),
        }
    }

    /// Rebuilds a saved model, checking every index and weight.
    pub(crate) fn from_saved(saved: &SavedLinear) -> Result<LinearModel, LinearError> {
        let mut model = LinearModel::zeros(saved.dims, saved.classes)?;
        let mut set = vec![false; model.weights.len()];
        for &(index, weight) in &saved.nonzero {
            let slot = usize::try_from(index)
                .ok()
                .filter(|i| *i < model.weights.len())
                .ok_or(LinearError::IndexOutOfRange {
                    index,
                    dims: saved.dims,
                })?;
            if !weight.is_finite() {
                return Err(LinearError::NotFinite { index });
            }
            if std::mem::replace(&mut set[slot], true) {
                return Err(LinearError::Repeated { index });
            }
            model.weights[slot] = f64::from(weight);
        }
        Ok(model)
    }
}

/// ln Σ e^x, without overflow.
#[cfg(test)]
fn log_sum_exp(logits: &[f64]) -> f64 {
    let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !max.is_finite() {
        return max;
    }
    max + logits.iter().map(|l| (l - max).exp()).sum::<f64>().ln()
}

/// e^x / Σ e^x, without overflow.
pub(crate) fn softmax(logits: &[f64]) -> Vec<f64> {
    let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let exps: Vec<f64> = logits.iter().map(|l| (l - max).exp()).collect();
    let sum: f64 = exps.iter().sum();
    exps.iter().map(|e| e / sum).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Calibration, ScoreFeatures};
    use rand::Rng;

    fn dense(values: &[f32]) -> Features {
        Features::new((0u32..).zip(values.iter().copied()).collect())
    }

    #[test]
    fn softmax_sums_to_one_and_survives_large_logits() {
        let p = softmax(&[0.0, 1000.0, 999.0]);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((p[1] - 1.0 / (1.0 + (-1.0f64).exp())).abs() < 1e-12);
        assert_eq!(p[0], 0.0);
        let lse = log_sum_exp(&[0.0, 1000.0]);
        assert!((lse - 1000.0).abs() < 1e-12);
    }

    /// The binary fit reaches the optimum that Newton's method (the BM25 calibration's fit,
    /// an independent implementation) finds on the same data.
    #[test]
    fn binary_fit_matches_newtons_maximum_likelihood() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut calibration_examples = Vec::new();
        let mut examples = Vec::new();
        for _ in 0..2000 {
            let share: f64 = rng.gen();
            let relative: f64 = rng.gen();
            let p = 1.0 / (1.0 + (-(-3.0 + 2.0 * share + 3.0 * relative)).exp());
            let positive = rng.gen::<f64>() < p;
            calibration_examples.push((ScoreFeatures { share, relative }, positive));
            examples.push((
                dense(&[1.0, share as f32, relative as f32]),
                usize::from(positive),
            ));
        }
        let newton = Calibration::fit(&calibration_examples).unwrap().weights();
        let settings = FitSettings {
            epochs: 300,
            learning_rate: 0.2,
            l2: 0.0,
            seed: 1,
        };
        let model = LinearModel::fit(&examples.iter().collect::<Vec<_>>(), 3, 2, settings).unwrap();
        let mut optimum = LinearModel::zeros(3, 2).unwrap();
        optimum.weights = newton.to_vec();
        let ours = model.objective(&examples, 0.0);
        let best = optimum.objective(&examples, 0.0);
        assert!(ours >= best - 1e-9, "{ours} < optimum {best}");
        assert!(ours - best < 1e-4, "{ours} vs {best}");
        for (k, expected) in newton.iter().enumerate() {
            assert!(
                (model.weight(1, k) - expected).abs() < 0.1,
                "{:?} vs {newton:?}",
                model.weights
            );
        }
    }

    /// The multinomial fit's gradient at its solution is near zero: checked by finite
    /// differences of the objective, which does not share code with the AdaGrad updates.
    #[test]
    fn multinomial_fit_is_a_stationary_point_of_the_objective() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let examples: Vec<Example> = (0..600)
            .map(|_| {
                let a: f32 = rng.gen_range(-1.0..1.0);
                let b: f32 = rng.gen_range(-1.0..1.0);
                let noisy = rng.gen_range(-0.7..0.7);
                let class = if a + noisy > 0.3 {
                    1
                } else if b + noisy > 0.3 {
                    2
                } else {
                    0
                };
                (dense(&[1.0, a, b]), class)
            })
            .collect();
        let l2 = 1e-3;
        let settings = FitSettings {
            epochs: 400,
            learning_rate: 0.1,
            l2: l2 / examples.len() as f64,
            seed: 2,
        };
        let model = LinearModel::fit(&examples.iter().collect::<Vec<_>>(), 3, 3, settings).unwrap();
        let objective = |m: &LinearModel| m.objective(&examples, l2 / examples.len() as f64);
        let h = 1e-5;
        for j in 0..model.weights.len() {
            let mut up = model.clone();
            up.weights[j] += h;
            let mut down = model.clone();
            down.weights[j] -= h;
            let gradient = (objective(&up) - objective(&down)) / (2.0 * h);
            assert!(gradient.abs() < 2e-3, "weight {j}: gradient {gradient}");
        }
        // And it learned the classes: each is most probable where it was generated.
        let p = model.probabilities(&dense(&[1.0, 0.9, -0.9]));
        assert!(p[1] > p[0] && p[1] > p[2], "{p:?}");
        let p = model.probabilities(&dense(&[1.0, -0.9, 0.9]));
        assert!(p[2] > p[0] && p[2] > p[1], "{p:?}");
    }

    #[test]
    fn saved_weights_round_trip_and_are_checked() {
        let mut model = LinearModel::zeros(4, 3).unwrap();
        model.weights = vec![0.5, 0.0, -1.25, 0.0, 0.0, 2.0, 0.0, 0.0];
        let saved = model.to_saved();
        assert_eq!(saved.nonzero, vec![(0, 0.5), (2, -1.25), (5, 2.0)]);
        assert_eq!(LinearModel::from_saved(&saved).unwrap(), model);
        assert_eq!(model.weight(0, 0), 0.0);
        assert_eq!(model.weight(2, 1), 2.0);
        let bad = |nonzero: Vec<(u64, f32)>| SavedLinear {
            dims: 4,
            classes: 3,
            nonzero,
        };
        assert_eq!(
            LinearModel::from_saved(&bad(vec![(8, 1.0)])),
            Err(LinearError::IndexOutOfRange { index: 8, dims: 4 })
        );
        assert_eq!(
            LinearModel::from_saved(&bad(vec![(1, f32::NAN)])),
            Err(LinearError::NotFinite { index: 1 })
        );
        assert_eq!(
            LinearModel::from_saved(&bad(vec![(1, 1.0), (1, 2.0)])),
            Err(LinearError::Repeated { index: 1 })
        );
        assert_eq!(LinearModel::zeros(4, 1), Err(LinearError::TooFewClasses(1)));
    }
}
