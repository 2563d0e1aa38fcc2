//! Tests of the pipeline on small hand-made corpora and, when it is present, on SciFact.

mod bm25;
mod build;
mod hybrid;
mod retrieval;
mod scifact;
pub(crate) mod support;
