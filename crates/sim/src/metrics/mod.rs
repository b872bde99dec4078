//! Measurement: histograms, time series and the fairness and variability figures.

pub mod histogram;
pub mod series;

pub use histogram::Histogram;
pub use series::{coefficient_of_variation, jain_index, Series};
