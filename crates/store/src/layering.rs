//! The source check of what the store may do (issue 37: the store only stores). A store function
//! runs queries inside a transaction or connection and returns rows or domain values; it does
//! not take a path (files are the commands' to open, hash and parse), spawn a thread (CPU work
//! and its priority are the commands' to schedule), or compute a report or a release archive
//! (the commands compute from what the store read), or decide who may act (the commands decide
//! from their proof, and call the store with plain ids).
//!
//! What still breaks a rule is listed in [`NOT_YET`], file by file, with why it is still here:
//! the check fails on a break that is not listed, and on a listed one that is gone (so the list
//! only shrinks).

use std::collections::BTreeSet;
use std::path::Path;

/// The rules, each with the source fragments that break it.
const RULES: &[(&str, &[&str])] = &[
    (
        "spawns a thread",
        &[
            "thread::spawn",
            "thread::Builder",
            "thread::scope",
            "spawn_blocking",
            "tokio::spawn",
        ],
    ),
    (
        "computes a report or an archive",
        &[
            "Report::compute",
            "ReleaseFiles::build",
            "to_tar_gz",
            "tar::Builder",
        ],
    ),
    (
        "decides who may act",
        &["is_lead", "Forbidden", "struct Actor"],
    ),
];

/// The rule of a function that takes a path (checked on signatures, see [`takes_a_path`]).
const PATH_RULE: &str = "takes a path";

/// Breaks still in the store: (file under `crates/store/src`, rule, why it is still here).
const NOT_YET: &[(&str, &str, &str)] = &[
    (
        "background.rs",
        "spawns a thread",
        "the import's parser and COPY threads at a lower priority; moves with the import",
    ),
    (
        "import.rs",
        "spawns a thread",
        "the run, corpus and claims imports parse files; moving to the import command",
    ),
    (
        "import.rs",
        PATH_RULE,
        "the run, corpus and claims imports open and hash files; moving to the import command",
    ),
    (
        "annotate/import.rs",
        "spawns a thread",
        "the judgments import parses its file; moving to the import command",
    ),
    (
        "staged.rs",
        "spawns a thread",
        "imports' staged rows are parsed from files; moves with the import",
    ),
    (
        "snapshot.rs",
        "spawns a thread",
        "the pool's rankings are read on SQLite's own blocking connection",
    ),
    (
        "raw_rows.rs",
        "spawns a thread",
        "SQLite's own blocking connection for bulk reads",
    ),
    (
        "raw_rows.rs",
        PATH_RULE,
        "SQLite's own blocking connection opens the database file",
    ),
    (
        "write_gate/board.rs",
        PATH_RULE,
        "the writers' board is a file beside the SQLite database",
    ),
    (
        "jobs.rs",
        PATH_RULE,
        "the pipeline job exports the corpus and claims to files",
    ),
    (
        "backup.rs",
        PATH_RULE,
        "`claimpool backup` writes the database's copy to a file",
    ),
    ("db.rs", PATH_RULE, "opening a SQLite database file"),
    (
        "writer_lock.rs",
        PATH_RULE,
        "a live writer's lock file beside the SQLite database",
    ),
];

/// The file's text up to its test module (tests may do anything).
fn product_text(text: &str) -> &str {
    let end = ["#[cfg(test)]\nmod tests", "#[cfg(test)]\nmod test"]
        .iter()
        .filter_map(|marker| text.find(marker))
        .min()
        .unwrap_or(text.len());
    &text[..end]
}

/// Whether a function of `text` takes a path: a `fn` whose parameter list names `Path`.
fn takes_a_path(text: &str) -> bool {
    let mut rest = text;
    while let Some(at) = rest.find("fn ") {
        let after = &rest[at + 3..];
        let is_fn = at == 0
            || rest[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_whitespace());
        if let (true, Some(open)) = (is_fn, after.find('(')) {
            let params = &after[open..];
            let mut depth = 0usize;
            let mut end = params.len();
            for (i, c) in params.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = i;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let params = &params[..end];
            if params.contains("&Path") || params.contains("PathBuf") || params.contains("<Path>") {
                return true;
            }
        }
        rest = after;
    }
    false
}

/// Every (file, rule) the store's product code breaks.
fn breaks() -> BTreeSet<(String, &'static str)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = testdata::rust_sources(&root);
    assert!(files.len() > 40, "{} store sources", files.len());
    let mut found = BTreeSet::new();
    for path in files {
        let relative = path
            .strip_prefix(&root)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        if relative == "layering.rs" || relative == "test_db.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a source file");
        let text = product_text(&text);
        for (rule, fragments) in RULES {
            if fragments.iter().any(|f| text.contains(f)) {
                found.insert((relative.clone(), *rule));
            }
        }
        if takes_a_path(text) {
            found.insert((relative, PATH_RULE));
        }
    }
    found
}

#[test]
fn the_store_only_stores() {
    let found = breaks();
    let listed: BTreeSet<(String, &str)> = NOT_YET
        .iter()
        .map(|(file, rule, _)| (file.to_string(), *rule))
        .collect();
    let new: Vec<_> = found.difference(&listed).collect();
    assert!(
        new.is_empty(),
        "store code that {}: the store only stores; do this in a command (crates/commands/)",
        new.iter()
            .map(|(file, rule)| format!("{rule} ({file})"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let gone: Vec<_> = listed.difference(&found).collect();
    assert!(
        gone.is_empty(),
        "no longer in the store, take them off NOT_YET: {gone:?}"
    );
}

#[test]
fn the_check_sees_each_kind_of_break() {
    assert!(takes_a_path(
        "pub async fn corpus(\n    db: &Db,\n    path: &Path,\n) -> StoreResult<()> {"
    ));
    assert!(takes_a_path("fn open(file: impl AsRef<Path>) {}"));
    assert!(takes_a_path("pub fn out(dir: PathBuf) {}"));
    assert!(!takes_a_path("pub fn name(path: &str) -> PathBuf {"));
    assert!(!takes_a_path("let f = |x: u32| x; // fn-like (Path)"));
    assert_eq!(
        product_text("fn a() {}\n#[cfg(test)]\nmod tests {\n fn b(p: &Path) {}\n}"),
        "fn a() {}\n"
    );
    let (_, report_fragments) = RULES[1];
    assert!(report_fragments
        .iter()
        .any(|f| "let r = Report::compute(&s, &o);".contains(f)));
    let (_, role_fragments) = RULES[2];
    assert!(role_fragments
        .iter()
        .any(|f| "if !actor.is_lead { return Err(forbidden()) }".contains(f)));
}
