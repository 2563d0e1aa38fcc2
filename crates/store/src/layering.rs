//! The source check of what the store may do (issue 37: the store only stores). A store function
//! runs queries inside a transaction or connection and returns rows or domain values; it does
//! not take a path (files are the commands' to open, hash and parse), spawn a thread (CPU work
//! and its priority are the commands' to schedule), or compute a report or a release archive
//! (the commands compute from what the store read), or decide who may act (the commands decide
//! from their proof, and call the store with plain ids).
//!
//! The one exception is the database's own machinery, listed in [`ENGINE`] file by file with
//! why: SQLite is a file the store opens, locks, maps and copies, and its C API is driven on a
//! blocking thread of the store's own connection. The check fails on a break that is not
//! listed, and on a listed one that is gone (so the list only shrinks).

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
        "opens a file",
        &[
            "File::open",
            "File::create",
            "OpenOptions",
            "fs::read",
            "fs::write",
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

/// The database's own machinery, the only store code that takes a path or starts a thread:
/// (file, rule, why). Nothing that parses, hashes or schedules an import's work is here: the
/// import command does that.
const ENGINE: &[(&str, &str, &str)] = &[
    (
        "snapshot.rs",
        "spawns a thread",
        "the pool's rankings are read on SQLite's own blocking connection",
    ),
    (
        "raw_rows.rs",
        "spawns a thread",
        "SQLite's own blocking connection for bulk reads and a run's inserts",
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
        "backup.rs",
        PATH_RULE,
        "`claimpool backup` is SQLite's VACUUM INTO, which writes the copy to a file",
    ),
    (
        "write_gate/board.rs",
        "opens a file",
        "the writers' board is a file beside the SQLite database",
    ),
    ("db.rs", PATH_RULE, "opening a SQLite database file"),
    (
        "writer_lock.rs",
        "opens a file",
        "a live writer's lock file beside the SQLite database",
    ),
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
    let listed: BTreeSet<(String, &str)> = ENGINE
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
        "no longer in the store, take them off ENGINE: {gone:?}"
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
    let fragments = |rule: &str| {
        RULES
            .iter()
            .find(|(name, _)| *name == rule)
            .map(|(_, fragments)| *fragments)
            .expect("a rule of that name")
    };
    let report_fragments = fragments("computes a report or an archive");
    assert!(report_fragments
        .iter()
        .any(|f| "let r = Report::compute(&s, &o);".contains(f)));
    assert!(fragments("opens a file")
        .iter()
        .any(|f| "let f = std::fs::File::open(path)?;".contains(f)));
    let role_fragments = fragments("decides who may act");
    assert!(role_fragments
        .iter()
        .any(|f| "if !actor.is_lead { return Err(forbidden()) }".contains(f)));
}
