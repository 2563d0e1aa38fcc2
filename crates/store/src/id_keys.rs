//! External id → database key, for resolving the ids of a run: one lookup per prediction,
//! millions per file, in a map as large as the corpus.
//!
//! Ids written as canonical decimals (SciFact's and PubMed's; no sign, no leading zero) are
//! kept by value, so a lookup hashes a number and reads no string; any other id is kept as
//! text. A decimal text and its value determine each other, so the two maps never disagree.
//! Both keep std's keyed hash: the ids come from uploads.

use super::snapshot::Reader;
use super::StoreResult;
use domain::ids::decimal_value;
use std::collections::HashMap;

/// The database keys of a project's claims or documents, by external id.
#[derive(Debug, Default)]
pub(crate) struct IdKeys {
    by_value: HashMap<u64, i64>,
    by_text: HashMap<String, i64>,
}

impl IdKeys {
    /// Reads (external id, key) rows of `sql`, which selects them for the project given as its
    /// one parameter.
    pub(crate) fn read(conn: &Reader<'_>, sql: &str, project_id: i64) -> StoreResult<IdKeys> {
        let mut keys = IdKeys::default();
        conn.for_each_row(sql, &[project_id], |row| {
            keys.insert(row.text(0)?, row.integer(1)?);
            Ok(())
        })?;
        Ok(keys)
    }

    fn insert(&mut self, id: &str, key: i64) {
        match decimal_value(id) {
            Some(value) => self.by_value.insert(value, key),
            None => self.by_text.insert(id.to_owned(), key),
        };
    }

    /// The key of `id`, if the project has it.
    pub(crate) fn get(&self, id: &str) -> Option<i64> {
        match decimal_value(id) {
            Some(value) => self.by_value.get(&value),
            None => self.by_text.get(id),
        }
        .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_exactly_the_ids_a_plain_map_finds() {
        let stored = [
            "0",
            "7",
            "31715818",
            "010",
            "MED-10",
            "18446744073709551616",
            "x y",
        ];
        let mut keys = IdKeys::default();
        let mut plain = HashMap::new();
        for (key, id) in stored.iter().enumerate() {
            keys.insert(id, key as i64);
            plain.insert(id.to_string(), key as i64);
        }
        for probe in stored.iter().chain(&[
            "00",
            "10",
            "07",
            "+7",
            "-7",
            "7 ",
            "",
            "med-10",
            "31715819",
            "1844674407370955161",
        ]) {
            assert_eq!(keys.get(probe), plain.get(*probe).copied(), "{probe:?}");
        }
        assert_eq!(
            keys.by_value.len(),
            3,
            "0, 7 and 31715818 are kept by value"
        );
    }
}
