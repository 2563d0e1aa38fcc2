//! Continuous active learning (CAL) for claimpool's judging: which candidate pair to judge next
//! when the candidates reach beyond what any pooled system ranked.
//!
//! The method is autoTAR (Cormack & Grossman 2015, "Autonomy and reliability of continuous
//! active learning for technology-assisted review"), with a logistic regression over a few
//! numeric features of each candidate pair instead of its bag of words:
//!
//! 1. A synthetic evidence example (each feature at the best value any candidate has, as
//!    autoTAR uses the topic statement as a relevant document) starts the training set.
//! 2. Each round trains the model ([`logistic`]) on the labelled candidates, plus
//!    [`PRESUMED_NEGATIVES`] unlabelled candidates drawn at random (seeded) and presumed
//!    non-evidence, scores every unlabelled candidate and takes the best `B` of them.
//! 3. The batch size starts at 1 and grows by `⌈B/10⌉` after each round ([`schedule`]).
//!
//! # Replayed from the set of labels
//!
//! [`CalOrder`] makes the proposals a function of the candidates, the seed and the *set* of
//! labels known, not of the order they came in (as claimpool's other judging orders): it replays
//! the rounds from the start, and a candidate a round takes whose label is already known is used
//! at no cost; the first taken candidate without a label is the proposal. A server may therefore
//! rebuild the order from the labels so far on every request, and a simulation feeds it labels
//! one at a time ([`simulate`]).
//!
//! Nothing here knows claims, documents or systems: candidates are rows of a [`Features`]
//! matrix, and the caller says what the columns are (BM25 score, each run's rank or its absence,
//! embedding similarity, a scorer's probability) and maps rows to pairs.

mod features;
pub mod logistic;
mod order;
pub mod schedule;

pub use features::{Features, FeaturesError};
pub use order::{simulate, CalOrder, Step, PRESUMED_NEGATIVES};
