use super::super::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn skip_positions() {
    assert_eq!(skip_position([]), Ok(1));
    assert_eq!(skip_position([FRESH_POSITION; 3]), Ok(1));
    assert_eq!(skip_position([0, 3, 1]), Ok(4));
    assert_eq!(skip_position([-5]), Ok(1));
    assert_eq!(skip_position([i64::MAX]), Err(QueueFull));
}

#[derive(Clone, Copy, Debug)]
struct Item {
    entry: PoolEntryId,
    depth: u32,
    pos: i64,
}

fn key(item: &Item) -> QueueKey {
    QueueKey {
        queue_pos: item.pos,
        entry_depth: item.depth,
        entry: item.entry,
    }
}

/// Random additions, skips and completions: the queue sorted by `QueueKey` always equals a
/// model kept as two lists: never-skipped items by (depth, entry), then skipped items in the
/// order of their last skip.
#[test]
fn queue_order_matches_a_two_list_model() {
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    for _ in 0..300 {
        let mut items: Vec<Item> = Vec::new();
        let mut fresh: Vec<(u32, PoolEntryId)> = Vec::new();
        let mut skipped: Vec<PoolEntryId> = Vec::new();
        let mut next = 0;
        for _ in 0..40 {
            match rng.gen_range(0..4) {
                0 | 1 => {
                    let item = Item {
                        entry: PoolEntryId(next),
                        depth: rng.gen_range(1..10),
                        pos: FRESH_POSITION,
                    };
                    next += 1;
                    fresh.push((item.depth, item.entry));
                    fresh.sort();
                    items.push(item);
                }
                2 if !items.is_empty() => {
                    let i = rng.gen_range(0..items.len());
                    let pos = skip_position(items.iter().map(|it| it.pos)).unwrap();
                    items[i].pos = pos;
                    let e = items[i].entry;
                    fresh.retain(|&(_, f)| f != e);
                    skipped.retain(|&s| s != e);
                    skipped.push(e);
                }
                3 if !items.is_empty() => {
                    let e = items.swap_remove(rng.gen_range(0..items.len())).entry;
                    fresh.retain(|&(_, f)| f != e);
                    skipped.retain(|&s| s != e);
                }
                _ => {}
            }
            let mut sorted = items.clone();
            sorted.sort_by_key(key);
            let got: Vec<PoolEntryId> = sorted.iter().map(|i| i.entry).collect();
            let model: Vec<PoolEntryId> = fresh
                .iter()
                .map(|&(_, e)| e)
                .chain(skipped.iter().copied())
                .collect();
            assert_eq!(got, model);
        }
    }
}
