//! The database keys the protocol and the assignment talk about.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A person who annotates, adjudicates or leads: `users.id`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AnnotatorId(pub i64);

/// A claim/abstract pair of the annotation pool: `pool_entries.id`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PoolEntryId(pub i64);

impl fmt::Display for AnnotatorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "user {}", self.0)
    }
}

impl fmt::Display for PoolEntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pool entry {}", self.0)
    }
}
