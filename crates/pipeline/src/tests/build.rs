//! Building and opening indexes: progress, errors, clean-up.

use super::support::doc;
use crate::index::PROGRESS_EVERY;
use crate::{build_index, IndexDoc, PipelineError, Retriever};
use std::cell::RefCell;
use std::convert::Infallible;

#[test]
fn reports_progress_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let docs = (1..=2500u32).map(|i| Ok::<_, Infallible>(doc(&i.to_string(), "t", &["s"])));
    let calls = RefCell::new(Vec::new());
    let summary = build_index(dir.path(), docs, &|n| calls.borrow_mut().push(n)).unwrap();
    assert_eq!(summary.documents, 2500);
    assert_eq!(summary.segments, 1);
    assert_eq!(PROGRESS_EVERY, 1000);
    assert_eq!(calls.into_inner(), [1000, 2000, 2500]);
    assert_eq!(Retriever::open(dir.path()).unwrap().num_docs(), 2500);
}

#[test]
fn rejects_a_repeated_doc_id_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let docs = vec![doc("1", "a", &[]), doc("2", "b", &[]), doc("1", "c", &[])];
    let err = build_index(
        dir.path(),
        docs.into_iter().map(Ok::<_, Infallible>),
        &|_| {},
    )
    .unwrap_err();
    assert!(
        matches!(&err, PipelineError::DuplicateDocId { position: 3, doc_id }
            if doc_id.as_str() == "1"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // The directory can be used again.
    build_index(
        dir.path(),
        std::iter::once(Ok::<_, Infallible>(doc("1", "a", &[]))),
        &|_| {},
    )
    .unwrap();
}

#[test]
fn passes_on_a_source_error_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let docs: Vec<Result<IndexDoc, std::io::Error>> = vec![
        Ok(doc("1", "a", &[])),
        Err(std::io::Error::other("line 2: bad JSON")),
    ];
    let err = build_index(dir.path(), docs.into_iter(), &|_| {}).unwrap_err();
    assert!(matches!(err, PipelineError::Source { position: 2, .. }));
    assert!(err.to_string().contains("document 2"), "{err}");
    assert!(std::error::Error::source(&err)
        .is_some_and(|source| source.to_string() == "line 2: bad JSON"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn refuses_a_non_empty_directory_and_creates_a_missing_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let empty = std::iter::empty::<Result<IndexDoc, Infallible>>();
    let err = build_index(dir.path(), empty, &|_| {}).unwrap_err();
    assert!(matches!(err, PipelineError::IndexExists { .. }), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "mine"
    );

    let nested = dir.path().join("a/b");
    let empty = std::iter::empty::<Result<IndexDoc, Infallible>>();
    let summary = build_index(&nested, empty, &|_| {}).unwrap();
    assert_eq!((summary.documents, summary.segments), (0, 0));
    let retriever = Retriever::open(&nested).unwrap();
    assert!(retriever.retrieve("anything", 5).unwrap().is_empty());
}

#[test]
fn opening_fails_on_a_missing_or_foreign_index() {
    let dir = tempfile::tempdir().unwrap();
    let err = Retriever::open(dir.path()).err().unwrap();
    assert!(matches!(err, PipelineError::Tantivy { .. }), "{err}");

    let mut schema = tantivy::schema::Schema::builder();
    schema.add_text_field("body", tantivy::schema::TEXT);
    tantivy::Index::create_in_dir(dir.path(), schema.build()).unwrap();
    let err = Retriever::open(dir.path()).err().unwrap();
    assert!(matches!(err, PipelineError::NotOurIndex { .. }), "{err}");
}
