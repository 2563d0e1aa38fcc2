//! Search on small hand-made corpora: BM25 order, highlights, paging, what a person types.

use super::*;
use crate::analyzer::analyse;
use crate::tests::support::{doc, BruteBm25};
use crate::{build_index, IndexDoc};
use std::convert::Infallible;
use tempfile::TempDir;

fn search_of(docs: Vec<IndexDoc>) -> (TempDir, CorpusSearch) {
    let dir = tempfile::tempdir().unwrap();
    build_index(
        dir.path(),
        docs.into_iter().map(Ok::<_, Infallible>),
        &|_| {},
    )
    .unwrap();
    let search = CorpusSearch::open(dir.path()).unwrap();
    (dir, search)
}

fn brain() -> Vec<IndexDoc> {
    vec![
        doc(
            "1",
            "Tau tangles in Alzheimer disease",
            &[
                "Tau protein forms tangles.",
                "Tangles kill neurons in the cortex.",
            ],
        ),
        doc(
            "2",
            "Statins and cholesterol",
            &[
                "Statins lower LDL cholesterol.",
                "Muscle pain is a side effect.",
            ],
        ),
        doc(
            "3",
            "Sleep clears amyloid",
            &[
                "During sleep the brain clears amyloid beta.",
                "Tau drains too.",
            ],
        ),
        doc("4", "Neurons", &["Neurons fire."]),
        doc(
            "5",
            "",
            &["Amyloid plaques and tau tangles mark Alzheimer's disease."],
        ),
    ]
}

/// Each document's analysed tokens, title then sentences, the way the index counts them.
fn tokens(docs: &[IndexDoc]) -> Vec<(DocId, Vec<String>)> {
    let mut analyzer = english_analyzer();
    docs.iter()
        .map(|doc| {
            let mut tokens = analyse(&mut analyzer, &doc.title);
            for sentence in &doc.sentences {
                tokens.extend(analyse(&mut analyzer, sentence));
            }
            (doc.doc_id.clone(), tokens)
        })
        .collect()
}

fn ids(page: &SearchPage) -> Vec<&str> {
    page.hits.iter().map(|hit| hit.doc_id.as_str()).collect()
}

#[test]
fn hits_are_ranked_by_bm25() {
    let (_dir, search) = search_of(brain());
    let page = search.search("Tau tangles and amyloid", 0).unwrap();
    let query = [("tau", 1), ("tangl", 1), ("amyloid", 1)].map(|(t, c)| (t.to_owned(), c));
    let expected = BruteBm25::new(tokens(&brain())).rank(&query);
    assert_eq!(ids(&page), ["5", "1", "3"]);
    assert_eq!(page.total_hits, 3);
    assert_eq!(page.page, 0);
    assert_eq!(page.hits.len(), expected.len());
    for ((hit, (id, score)), rank) in page.hits.iter().zip(&expected).zip(1..) {
        assert_eq!(&hit.doc_id, id);
        assert!(
            (f64::from(hit.score) - score).abs() < 1e-4,
            "{hit:?} vs {score}"
        );
        assert_eq!(hit.rank, rank);
    }
    assert_eq!(search.num_docs(), 5);
}

#[test]
fn highlights_mark_the_matched_words() {
    let (_dir, search) = search_of(brain());
    let page = search.search("tangle: TAU (neurons)", 0).unwrap();
    let first = page
        .hits
        .iter()
        .find(|hit| hit.doc_id.as_str() == "1")
        .unwrap();
    assert_eq!(first.title.text, "Tau tangles in Alzheimer disease");
    assert_eq!(first.title.marks, [(0, 3), (4, 11)]);
    assert_eq!(first.title.marked().collect::<Vec<_>>(), ["Tau", "tangles"]);
    // The abstract is short: the snippet is all of it, every query word marked.
    assert_eq!(
        first.snippet.text,
        "Tau protein forms tangles. Tangles kill neurons in the cortex."
    );
    assert_eq!(
        first.snippet.marked().collect::<Vec<_>>(),
        ["Tau", "tangles", "Tangles", "neurons"]
    );
    // The query's words, in its order, as typed but lower-cased.
    assert_eq!(first.matched_terms, ["tangle", "tau", "neurons"]);

    let third = page
        .hits
        .iter()
        .find(|hit| hit.doc_id.as_str() == "3")
        .unwrap();
    assert!(third.title.marks.is_empty());
    assert_eq!(third.snippet.marked().collect::<Vec<_>>(), ["Tau"]);
    assert_eq!(third.matched_terms, ["tau"]);
    let fourth = page
        .hits
        .iter()
        .find(|hit| hit.doc_id.as_str() == "4")
        .unwrap();
    assert_eq!(fourth.title.marked().collect::<Vec<_>>(), ["Neurons"]);
    assert_eq!(fourth.matched_terms, ["neurons"]);

    // Every mark of every hit is a word whose stem is one of the query's.
    let mut analyzer = english_analyzer();
    for hit in &page.hits {
        for text in [&hit.title, &hit.snippet] {
            for word in text.marked() {
                let stems = analyse(&mut analyzer, word);
                assert_eq!(stems.len(), 1, "{word:?}");
                assert!(["tangl", "tau", "neuron"].contains(&stems[0].as_str()));
            }
        }
    }
}

#[test]
fn a_long_abstract_gets_a_cut_snippet_around_its_matches() {
    let filler = |n: usize| vec!["lorem ipsum dolor"; n].join(" ");
    let abstract_text = format!("{} the amyloid cascade {}", filler(30), filler(30));
    let (_dir, search) = search_of(vec![
        doc("1", "Plaques", &[abstract_text.as_str()]),
        doc("2", "Amyloid in the title only", &[filler(30).as_str()]),
        doc("3", "Ünïcode amyloid", &["é ".repeat(200).as_str()]),
    ]);
    let page = search.search("amyloid", 0).unwrap();
    let one = page.hits.iter().find(|h| h.doc_id.as_str() == "1").unwrap();
    let snippet = &one.snippet;
    assert!(snippet.text.starts_with("… "), "{snippet:?}");
    assert!(snippet.text.ends_with(" …"), "{snippet:?}");
    assert!(snippet.text.len() <= SNIPPET_BYTES + 2 * (ELLIPSIS.len() + 1));
    assert_eq!(snippet.marked().collect::<Vec<_>>(), ["amyloid"]);
    assert!(abstract_text.contains(snippet.text.trim_matches(|c| c == '…' || c == ' ')));

    // Only the title matches: the snippet is the abstract's opening, cut after a word.
    let two = page.hits.iter().find(|h| h.doc_id.as_str() == "2").unwrap();
    assert_eq!(two.title.marked().collect::<Vec<_>>(), ["Amyloid"]);
    assert!(two.snippet.marks.is_empty());
    assert!(two.snippet.text.starts_with("lorem ipsum dolor lorem"));
    assert!(two.snippet.text.ends_with(" …"));
    let opening = two.snippet.text.trim_end_matches(" …");
    assert!(opening.len() <= SNIPPET_BYTES);
    assert!(filler(30).starts_with(opening));
    assert!(filler(30)[opening.len()..].starts_with(' '));
    assert_eq!(two.matched_terms, ["amyloid"]);

    // Two-byte characters: the cut lands on a character boundary.
    let three = page.hits.iter().find(|h| h.doc_id.as_str() == "3").unwrap();
    assert_eq!(three.title.marked().collect::<Vec<_>>(), ["amyloid"]);
    assert!(three.snippet.text.starts_with("é é"));
    assert!(three.snippet.text.len() <= SNIPPET_BYTES + ELLIPSIS.len() + 1);
}

#[test]
fn pages_continue_the_ranking() {
    // 45 abstracts with "cell" 1 to 3 times, in abstracts of different lengths.
    let docs: Vec<IndexDoc> = (0..45)
        .map(|i| {
            let cells = vec!["cell"; 1 + i % 3].join(" ");
            let other = vec!["growth"; i % 7].join(" ");
            doc(
                &format!("d{i:02}"),
                "",
                &[format!("{cells} {other}").as_str()],
            )
        })
        .collect();
    let (dir, search) = search_of(docs);
    let whole = Retriever::open(dir.path())
        .unwrap()
        .retrieve("cell", 100)
        .unwrap();
    assert_eq!(whole.len(), 45);
    let mut seen = Vec::new();
    for page_number in 0..3 {
        let page = search.search("cell", page_number).unwrap();
        assert_eq!(page.total_hits, 45);
        assert_eq!(page.page, page_number);
        assert_eq!(page.page_count(), 3);
        assert_eq!(page.hits.len(), if page_number < 2 { 20 } else { 5 });
        for hit in &page.hits {
            assert_eq!(hit.rank as usize, seen.len() + 1);
            seen.push((hit.doc_id.clone(), hit.score));
        }
    }
    let expected: Vec<(DocId, f32)> = whole.into_iter().map(|h| (h.doc_id, h.score)).collect();
    assert_eq!(seen, expected);
    let past = search.search("cell", 3).unwrap();
    assert_eq!((past.total_hits, past.hits.len()), (45, 0));
}

#[test]
fn what_a_person_types_never_errors() {
    let (_dir, search) = search_of(brain());
    let plain = search.search("tau tangles amyloid neurons", 0).unwrap();
    assert_eq!(plain.total_hits, 4);
    for query in [
        "\"tau\" AND tangles: (amyloid) OR -neurons",
        "tau:tangles:amyloid:neurons",
        "+tau^3 tangles~2 [amyloid TO neurons] {*} \\ / ! ? ' ` NOT",
        "tau AND AND ( ( ( tangles \" amyloid neurons )))",
        "title:tau text:tangles doc_id:amyloid neurons*",
    ] {
        let page = search.search(query, 0).unwrap();
        assert_eq!(ids(&page), ids(&plain), "{query}");
    }
    for query in [
        "",
        "   \t\n ",
        "the and of AND OR NOT",
        "\"\" () : * ~ ^",
        "ünïcode ∑ 日本語",
    ] {
        let page = search.search(query, 0).unwrap();
        assert_eq!(page.total_hits, 0, "{query:?}");
        assert!(page.hits.is_empty());
        assert_eq!(page.page_count(), 0);
    }
    // A blank query is an empty page on any page number.
    assert!(search.search(" ", MAX_PAGE + 7).unwrap().hits.is_empty());
}

#[test]
fn over_long_queries_and_deep_pages_are_refused() {
    let (_dir, search) = search_of(brain());
    let longest = format!("tau {}", "é".repeat(MAX_QUERY_CHARS - 4));
    assert_eq!(longest.chars().count(), MAX_QUERY_CHARS);
    assert_eq!(search.search(&longest, 0).unwrap().total_hits, 3);
    let err = search.search(&format!("{longest}x"), 0).unwrap_err();
    assert!(
        matches!(
            err,
            PipelineError::QueryTooLong {
                chars: 1_001,
                max: 1_000
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("1001 characters"), "{err}");
    assert!(search.search("tau", MAX_PAGE).unwrap().hits.is_empty());
    let err = search.search("tau", MAX_PAGE + 1).unwrap_err();
    assert!(
        matches!(err, PipelineError::PageTooDeep { page: 500, .. }),
        "{err}"
    );
    assert!(search.search("tau", usize::MAX).is_err());
}

#[test]
fn opening_cuts_after_a_word_on_a_character_boundary() {
    let short = opening("Short abstract.");
    assert_eq!(short.text, "Short abstract.");
    let words = "word ".repeat(100);
    let cut = opening(&words);
    assert!(cut.text.ends_with("word …"), "{cut:?}");
    assert!(cut.text.len() <= SNIPPET_BYTES + 1 + ELLIPSIS.len());
    // One long run of two-byte characters without a space: cut inside, on a boundary.
    let run = "é".repeat(300);
    let cut = opening(&run);
    assert_eq!(cut.text, format!("{} …", "é".repeat(SNIPPET_BYTES / 2)));
}

#[test]
fn one_search_serves_every_thread() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<CorpusSearch>();
    let (_dir, search) = search_of(brain());
    let search = &search;
    std::thread::scope(|scope| {
        let pages: Vec<_> = (0..4)
            .map(|_| scope.spawn(move || search.search("tau amyloid", 0).unwrap()))
            .collect();
        let pages: Vec<SearchPage> = pages.into_iter().map(|p| p.join().unwrap()).collect();
        assert!(pages.windows(2).all(|w| w[0] == w[1]));
        assert_eq!(pages[0].total_hits, 3);
    });
}
