//! Tests of releases and evaluation: hand-made cases with exact expected bytes, and checks on the
//! real SciFact data (skipped when it is absent).

mod diff;
mod evaluation;
mod fixtures;
mod real_data;
mod reference;
mod release;
