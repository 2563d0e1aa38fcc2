//! Test support, for the workspace's tests and benchmarks only (a dev-dependency, never in the
//! binary): the real SciFact release and runs beside the repository (`../shared/data`, or
//! `CLAIMPOOL_DATA_DIR`), which CI has and users' machines do not: tests skip without it; and
//! the throwaway PostgreSQL cluster of the store's tests, the integration tests and the
//! benchmarks ([`postgres`]).

pub mod postgres;

use std::path::{Path, PathBuf};

/// The shared data folder, or None (after saying so) when it is absent.
pub fn shared_data() -> Option<PathBuf> {
    let dir = std::env::var_os("CLAIMPOOL_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    if dir.join("scifact/corpus.jsonl").is_file() {
        Some(dir)
    } else {
        eprintln!("skipped: no SciFact data at {}", dir.display());
        None
    }
}

/// Every line of a JSONL file as a JSON value (panics on bad data: tests only).
pub fn json_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        })
        .collect()
}

/// Every `.rs` file under `dir`, depth first, sorted (for the source checks of the store's and
/// the server's tests).
pub fn rust_sources(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}
