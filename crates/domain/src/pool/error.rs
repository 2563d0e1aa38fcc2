//! Why a run, a ranking or a growth step is refused.

/// Why pooling input is refused. Each variant names the system (and pair) at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PoolError {
    /// A score is NaN or infinite.
    #[error("score {0} is not a finite number")]
    NonFiniteScore(f64),
    /// A system has an empty (or all white space) name.
    #[error("a system has an empty name")]
    EmptySystemName,
    /// A system scores the same pair twice.
    #[error("system {system:?} scores the pair (claim {claim}, doc {doc}) more than once")]
    DuplicatePair {
        system: String,
        claim: String,
        doc: String,
    },
    /// A system has more pairs than ranks can count.
    #[error("system {system:?} has {pairs} pairs, more than the {max} a ranking can hold")]
    TooManyPairs {
        system: String,
        pairs: usize,
        max: u32,
    },
    /// Two systems of one ranking share a name.
    #[error("a system named {0:?} is already in the ranking")]
    DuplicateSystem(String),
    /// The new pool lacks pairs of the existing one: pools only grow.
    #[error("the pool at depth {depth} lacks {missing} pair(s) of the existing pool, e.g. (claim {claim}, doc {doc}); pools only grow")]
    Shrinks {
        depth: u32,
        missing: usize,
        claim: String,
        doc: String,
    },
}
