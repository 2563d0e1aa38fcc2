//! The cache directory: built once per fingerprint, rebuilt on a new one, never half there.

use super::*;
use crate::tests::support::doc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

fn corpus(words: &str, n: usize) -> Vec<IndexDoc> {
    (0..n)
        .map(|i| {
            doc(
                &format!("d{i}"),
                "",
                &[format!("{words} number{i}").as_str()],
            )
        })
        .collect()
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// Documents that fail the test if the index reads them.
fn unread() -> impl Iterator<Item = IndexDoc> {
    std::iter::from_fn(|| panic!("the cached index is rebuilt"))
}

#[test]
fn builds_once_then_opens_what_is_there() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().join("search");
    assert!(SearchIndex::open(&dir, "v1").unwrap().is_none());
    let mut calls = Vec::new();
    let search = SearchIndex::ensure(
        &dir,
        "v1",
        corpus("tau tangles", 2_500).into_iter(),
        |done, total| calls.push((done, total)),
    )
    .unwrap();
    assert_eq!(calls, [(1_000, 2_500), (2_000, 2_500), (2_500, 2_500)]);
    assert_eq!(search.num_docs(), 2_500);
    assert_eq!(search.dir(), dir.join("v1"));
    assert_eq!(search.search("tangles", 0).unwrap().total_hits, 2_500);
    assert_eq!(names(&dir), [".lock", "v1"]);

    // Again: the index is opened, the documents not read, progress not called.
    let again = SearchIndex::ensure(&dir, "v1", unread(), |_, _| panic!("progress")).unwrap();
    assert_eq!(again.num_docs(), 2_500);
    let opened = SearchIndex::open(&dir, "v1").unwrap().unwrap();
    assert_eq!(
        opened.search("number7", 0).unwrap().hits[0].doc_id.as_str(),
        "d7"
    );
    assert_eq!(names(&dir), [".lock", "v1"]);
}

#[test]
fn a_new_fingerprint_rebuilds_and_removes_the_old_index() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    let old = SearchIndex::ensure(dir, "v1", corpus("tau", 10).into_iter(), |_, _| {}).unwrap();
    // A crashed build's leftovers, and files that are not indexes, are left alone or cleared.
    std::fs::create_dir(dir.join(".building-crashed")).unwrap();
    std::fs::write(dir.join(".building-crashed/meta.json"), "{").unwrap();
    std::fs::write(dir.join("notes.txt"), "kept").unwrap();
    let mut built = 0;
    let new = SearchIndex::ensure(
        dir,
        "v2",
        corpus("amyloid", 3).into_iter(),
        |done, total| {
            built += 1;
            assert_eq!((done, total), (3, 3));
        },
    )
    .unwrap();
    assert_eq!(built, 1);
    assert_eq!(new.num_docs(), 3);
    assert_eq!(new.search("tau", 0).unwrap().total_hits, 0);
    assert_eq!(new.search("amyloid", 0).unwrap().total_hits, 3);
    assert_eq!(names(dir), [".lock", "notes.txt", "v2"]);
    // The old index's files are gone, but its open searcher still searches (Unix keeps them).
    if cfg!(unix) {
        assert_eq!(old.search("tau", 0).unwrap().total_hits, 10);
    }
    // Going back builds v1 again.
    let back = SearchIndex::ensure(dir, "v1", corpus("tau", 4).into_iter(), |_, _| {}).unwrap();
    assert_eq!(back.num_docs(), 4);
    assert_eq!(names(dir), [".lock", "notes.txt", "v1"]);
}

#[test]
fn a_failed_build_leaves_nothing_and_a_broken_index_is_rebuilt() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    let docs = corpus("tau", 5)
        .into_iter()
        .map(Ok)
        .chain([Err(std::io::Error::other("the database went away"))]);
    let err = SearchIndex::try_ensure(dir, "v1", docs, |_, _| {})
        .err()
        .unwrap();
    assert!(err.to_string().contains("document 6"), "{err}");
    assert!(err.to_string().contains("the database went away"), "{err}");
    assert_eq!(names(dir), [".lock"]);

    // A directory under the fingerprint that is no index (not one of ours) is built again.
    std::fs::create_dir(dir.join("v1")).unwrap();
    std::fs::write(dir.join("v1/junk"), "x").unwrap();
    let search = SearchIndex::ensure(dir, "v1", corpus("tau", 5).into_iter(), |_, _| {}).unwrap();
    assert_eq!(search.num_docs(), 5);
    assert!(!dir.join("v1/junk").exists());
}

#[test]
fn fingerprints_name_one_plain_directory() {
    let cache = tempfile::tempdir().unwrap();
    for bad in [
        "",
        ".",
        "..",
        "../up",
        "a/b",
        ".hidden",
        "sp ace",
        "é",
        "x".repeat(129).as_str(),
    ] {
        let err = SearchIndex::ensure(cache.path(), bad, unread(), |_, _| {})
            .err()
            .unwrap_or_else(|| panic!("{bad:?} accepted"));
        assert!(
            matches!(err, PipelineError::BadFingerprint { .. }),
            "{bad:?}: {err}"
        );
        assert!(SearchIndex::open(cache.path(), bad).is_err());
    }
    for good in ["v1", "sha256-0a1b.c_d", "x".repeat(128).as_str()] {
        check_fingerprint(good).unwrap();
    }
    assert!(names(cache.path()).is_empty());
}

#[test]
fn concurrent_ensures_both_succeed_and_one_builds() {
    let cache = tempfile::tempdir().unwrap();
    let dir = Arc::new(cache.path().join("cache"));
    let builds = Arc::new(AtomicUsize::new(0));
    let start = Arc::new(Barrier::new(2));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (dir, builds, start) = (dir.clone(), builds.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let search =
                    SearchIndex::ensure(&dir, "v1", corpus("tau", 1_500).into_iter(), |d, t| {
                        if d == t {
                            builds.fetch_add(1, Ordering::SeqCst);
                        }
                    })
                    .unwrap();
                search.search("tau", 1).unwrap()
            })
        })
        .collect();
    let pages: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(pages[0], pages[1]);
    assert_eq!(pages[0].total_hits, 1_500);
    assert_eq!(pages[0].hits[0].rank, 21);
    assert_eq!(builds.load(Ordering::SeqCst), 1);
    assert_eq!(names(&dir), [".lock", "v1"]);
}

#[test]
fn counted_reports_its_length() {
    let docs = counted(std::iter::repeat_n(1, 3), 3);
    assert_eq!(docs.size_hint(), (3, Some(3)));
    let mut docs = docs.skip(1);
    assert_eq!(docs.size_hint(), (2, Some(2)));
    assert_eq!(docs.by_ref().count(), 2);
    let mut totals = Vec::new();
    let docs = (0..1_200).map(|i| doc(&i.to_string(), "", &["x"]));
    let cache = tempfile::tempdir().unwrap();
    SearchIndex::ensure(cache.path(), "v", counted(docs, 1_200), |d, t| {
        totals.push((d, t))
    })
    .unwrap();
    assert_eq!(totals, [(1_000, 1_200), (1_200, 1_200)]);
}
