//! autoTAR's batch sizes: the first round takes 1 candidate, and each round takes `⌈B/10⌉` more
//! than the one before (1, 2, 3, …, 10, 11, 13, 15, 17, …): the model is retrained after every
//! label while labels are few, then each time the labels have grown by about a tenth (37 rounds
//! reach 2,000 judgments).

/// The batch size after a batch of `b`.
pub fn next_batch(b: usize) -> usize {
    b + b.div_ceil(10)
}

/// The batch sizes of rounds 0, 1, 2, …
pub fn batches() -> impl Iterator<Item = usize> {
    std::iter::successors(Some(1usize), |b| Some(next_batch(*b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_grow_by_a_tenth_rounded_up() {
        let first: Vec<usize> = batches().take(14).collect();
        assert_eq!(first, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17]);
        // Rounds to reach 2,000 judgments: ten rounds of 1 to 10 (55), then batches growing by a
        // tenth, rounded up: about 30 more, so between 35 and 45 in all.
        let rounds = batches()
            .scan(0usize, |total, b| {
                *total += b;
                Some(*total)
            })
            .take_while(|total| *total < 2_000)
            .count();
        assert!((35..=45).contains(&rounds), "{rounds}");
    }
}
