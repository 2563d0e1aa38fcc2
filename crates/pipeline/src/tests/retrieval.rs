//! Retrieval on small corpora: BM25 scores, query syntax, ties, threads.

use super::support::{doc, ids, index_of, BruteBm25};
use crate::Retriever;
use domain::ids::DocId;

fn animals() -> Vec<crate::IndexDoc> {
    vec![
        doc("1", "cat", &["cat dog"]),
        doc("2", "dog", &["fish bird frog"]),
        doc("3", "bird", &["bird bird fish"]),
        doc("4", "frog", &[]),
        doc("5", "", &["cat fish"]),
    ]
}

/// The tokens of `animals()`, written out by hand (these words are their own stems).
fn animal_tokens() -> Vec<(DocId, Vec<String>)> {
    [
        ("1", "cat cat dog"),
        ("2", "dog fish bird frog"),
        ("3", "bird bird bird fish"),
        ("4", "frog"),
        ("5", "cat fish"),
    ]
    .iter()
    .map(|(id, text)| {
        let tokens = text.split(' ').map(str::to_owned).collect();
        (DocId::parse(*id).unwrap(), tokens)
    })
    .collect()
}

#[test]
fn scores_are_bm25_with_repeated_terms_counted() {
    let (_dir, retriever) = index_of(animals());
    let claim = retriever.claim_terms("Cats, CAT & the dog!");
    let query = vec![("cat".to_owned(), 2), ("dog".to_owned(), 1)];
    assert_eq!(claim.terms(), query.as_slice());

    let ranking = retriever.search(&claim, 10).unwrap();
    let brute = BruteBm25::new(animal_tokens());
    let expected = brute.rank(&query);
    assert_eq!(ids(&ranking.hits), ["1", "5", "2"]);
    assert_eq!(ranking.hits.len(), expected.len());
    for (hit, (id, score)) in ranking.hits.iter().zip(&expected) {
        assert_eq!(&hit.doc_id, id);
        assert!(
            (f64::from(hit.score) - score).abs() < 1e-4,
            "{hit:?} vs {score}"
        );
    }
    assert_eq!(
        ranking.hits.iter().map(|hit| hit.rank).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    let ceiling = brute.ceiling(&query);
    assert!((f64::from(ranking.ceiling) - ceiling).abs() < 1e-4);
    assert!(ranking.hits.iter().all(|hit| hit.score < ranking.ceiling));
}

#[test]
fn k_cuts_the_ranking() {
    let (_dir, retriever) = index_of(animals());
    assert_eq!(
        ids(&retriever.retrieve("bird fish", 2).unwrap()),
        ["3", "2"]
    );
    assert!(retriever.retrieve("bird fish", 0).unwrap().is_empty());
    assert_eq!(retriever.num_docs(), 5);
}

#[test]
fn query_syntax_is_plain_text() {
    let (_dir, retriever) = index_of(animals());
    let plain = retriever.retrieve("cat dog bird fish frog", 10).unwrap();
    for claim in [
        "+cat: (dog) \"bird\" -fish AND frog*",
        "cat^3 dog~2 [bird TO fish] {frog} \\ OR NOT / ! ? ' `",
        "cat:dog:bird:fish:frog",
    ] {
        assert_eq!(retriever.retrieve(claim, 10).unwrap(), plain, "{claim}");
    }
}

#[test]
fn a_claim_without_terms_gets_no_hit() {
    let (_dir, retriever) = index_of(animals());
    for claim in ["", "the and of (+:) \"-\"", "  !!  "] {
        let ranking = retriever.search(&retriever.claim_terms(claim), 10).unwrap();
        assert!(ranking.hits.is_empty(), "{claim:?}");
        assert_eq!(ranking.ceiling, 0.0);
    }
    // A term absent from the index matches nothing either.
    assert!(retriever.retrieve("zebra", 10).unwrap().is_empty());
}

#[test]
fn ties_are_broken_by_doc_id_whatever_the_index_order() {
    // 40 identical abstracts, added in a scrambled order, and one better match.
    let mut docs: Vec<_> = (0..40u32)
        .map(|i| (i * 17) % 40 + 1)
        .map(|id| doc(&id.to_string(), "kinase", &["inhibition"]))
        .collect();
    docs.push(doc("100", "kinase kinase", &["inhibition"]));
    let (_dir, retriever) = index_of(docs);
    let hits = retriever.retrieve("kinase inhibition", 4).unwrap();
    assert_eq!(ids(&hits), ["100", "1", "2", "3"]);
    assert_eq!(hits[1].score, hits[3].score);
    let all = retriever.retrieve("kinase inhibition", 100).unwrap();
    assert_eq!(all.len(), 41);
    let expected: Vec<String> = (1..=40).map(|i: u32| i.to_string()).collect();
    assert_eq!(ids(&all[1..]), expected);
}

#[test]
fn retrieves_in_parallel_as_sequentially() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Retriever>();

    let (_dir, retriever) = index_of(animals());
    let claims = ["cat", "dog fish", "bird", "frog cat", "fish fish bird"];
    let sequential: Vec<_> = claims
        .iter()
        .map(|claim| retriever.retrieve(claim, 3).unwrap())
        .collect();
    let parallel: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = claims
            .iter()
            .map(|claim| scope.spawn(|| retriever.retrieve(claim, 3).unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(parallel, sequential);
}
