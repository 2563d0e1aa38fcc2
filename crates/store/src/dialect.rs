//! The few spellings that differ between the engines, in one place.

use super::db::Engine;

/// The number of elements of the JSON array text `expr`.
pub(crate) fn json_array_length(engine: Engine, expr: &str) -> String {
    match engine {
        Engine::Sqlite => format!("json_array_length({expr})"),
        Engine::Postgres => format!("json_array_length(CAST({expr} AS json))"),
    }
}

/// Numbered parameters `$first, …` for `count` values (an `IN (...)` list).
pub(crate) fn params(first: usize, count: usize) -> String {
    (first..first + count)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_number_their_parameters() {
        assert_eq!(params(2, 3), "$2, $3, $4");
        assert_eq!(params(1, 1), "$1");
        assert_eq!(
            json_array_length(Engine::Postgres, "c.x"),
            "json_array_length(CAST(c.x AS json))"
        );
    }
}
