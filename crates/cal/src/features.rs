//! The candidates' features: one row per candidate pair, one column per feature, every value
//! finite; columns are standardised before training.

use std::fmt;

/// A dense `rows × columns` matrix of finite features, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Features {
    columns: usize,
    values: Vec<f64>,
}

/// Why a feature matrix was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum FeaturesError {
    /// No columns, or the values are not a whole number of rows.
    Shape { columns: usize, values: usize },
    /// A value is NaN or infinite.
    NotFinite { row: usize, column: usize },
}

impl fmt::Display for FeaturesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeaturesError::Shape { columns, values } => write!(
                f,
                "{values} feature values do not fill rows of {columns} columns"
            ),
            FeaturesError::NotFinite { row, column } => {
                write!(
                    f,
                    "feature {column} of candidate {row} is not a finite number"
                )
            }
        }
    }
}

impl std::error::Error for FeaturesError {}

impl Features {
    /// `values` row by row, `columns` per row.
    pub fn new(columns: usize, values: Vec<f64>) -> Result<Features, FeaturesError> {
        if columns == 0 || !values.len().is_multiple_of(columns) {
            return Err(FeaturesError::Shape {
                columns,
                values: values.len(),
            });
        }
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(FeaturesError::NotFinite {
                row: i / columns,
                column: i % columns,
            });
        }
        Ok(Features { columns, values })
    }

    pub fn rows(&self) -> usize {
        self.values.len() / self.columns
    }

    pub fn columns(&self) -> usize {
        self.columns
    }

    pub fn row(&self, row: usize) -> &[f64] {
        &self.values[row * self.columns..(row + 1) * self.columns]
    }

    /// The matrix with each column shifted to mean 0 and scaled to standard deviation 1 (a
    /// constant column becomes 0), so one regularisation weight suits every feature.
    pub fn standardised(&self) -> Features {
        let rows = self.rows().max(1) as f64;
        let mut mean = vec![0.0; self.columns];
        for row in self.values.chunks(self.columns) {
            for (m, v) in mean.iter_mut().zip(row) {
                *m += v / rows;
            }
        }
        let mut var = vec![0.0; self.columns];
        for row in self.values.chunks(self.columns) {
            for ((s, v), m) in var.iter_mut().zip(row).zip(&mean) {
                *s += (v - m) * (v - m) / rows;
            }
        }
        let scale: Vec<f64> = var
            .iter()
            .map(|v| if *v > 1e-24 { 1.0 / v.sqrt() } else { 0.0 })
            .collect();
        let values = self
            .values
            .chunks(self.columns)
            .flat_map(|row| {
                row.iter()
                    .zip(&mean)
                    .zip(&scale)
                    .map(|((v, m), s)| (v - m) * s)
            })
            .collect();
        Features {
            columns: self.columns,
            values,
        }
    }

    /// The best value of each column over all rows (its maximum: callers orient every feature so
    /// that larger means more likely evidence).
    pub fn best(&self) -> Vec<f64> {
        let mut best = vec![f64::NEG_INFINITY; self.columns];
        for row in self.values.chunks(self.columns) {
            for (b, v) in best.iter_mut().zip(row) {
                *b = b.max(*v);
            }
        }
        best.iter_mut().for_each(|b| {
            if !b.is_finite() {
                *b = 0.0
            }
        });
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_shapes_and_values_are_refused_with_their_place() {
        assert_eq!(
            Features::new(3, vec![0.0; 4]),
            Err(FeaturesError::Shape {
                columns: 3,
                values: 4
            })
        );
        assert!(Features::new(0, vec![]).is_err());
        let error = Features::new(2, vec![0.0, 1.0, f64::NAN, 2.0]).unwrap_err();
        assert_eq!(error, FeaturesError::NotFinite { row: 1, column: 0 });
        assert_eq!(
            error.to_string(),
            "feature 0 of candidate 1 is not a finite number"
        );
    }

    #[test]
    fn standardised_columns_have_mean_zero_and_unit_spread_constants_become_zero() {
        let f = Features::new(2, vec![1.0, 5.0, 3.0, 5.0, 5.0, 5.0]).unwrap();
        let s = f.standardised();
        let col0: Vec<f64> = (0..3).map(|r| s.row(r)[0]).collect();
        let mean: f64 = col0.iter().sum::<f64>() / 3.0;
        let var: f64 = col0.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 3.0;
        assert!(mean.abs() < 1e-12 && (var - 1.0).abs() < 1e-12, "{col0:?}");
        assert!((0..3).all(|r| s.row(r)[1] == 0.0));
        assert_eq!(f.best(), vec![5.0, 5.0]);
    }
}
