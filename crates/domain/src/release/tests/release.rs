//! The release writer on the hand-made input: exact bytes, determinism, archive, manifest,
//! directory output and refused inputs.

use super::fixtures::*;
use crate::formats::{
    ClaimsReader, CorpusFormat, CorpusReader, EvidenceProvenance, Judgment, QrelsReader, RunFormat,
    RunReadOptions, RunReader,
};
use crate::label::Label;
use crate::release::*;
use serde_json::Value;
use std::io::Read;

fn build(input: &ReleaseInput) -> ReleaseFiles {
    ReleaseFiles::build(input, &ReleaseOptions::default()).unwrap()
}

fn build_err(input: &ReleaseInput) -> ReleaseError {
    ReleaseFiles::build(input, &ReleaseOptions::default()).unwrap_err()
}

#[test]
fn claims_file_is_scifact_open_in_claim_and_doc_order() {
    let files = build(&small_input());
    let want = concat!(
        r#"{"id":1,"claim":"Aspirin reduces fever.","evidence":{"7":{"provenance":"pooling","label":"CONTRADICT","sentences":[],"model_ranks":{"a":2}},"100":{"provenance":"citation","label":"SUPPORT","sentences":[0,2],"model_ranks":null}}}"#,
        "\n",
        r#"{"id":2,"claim":"Statins cause  muscle pain.","evidence":{"20":{"provenance":"pooling","label":"SUPPORT","sentences":[1],"model_ranks":{"a":7,"b/c":5}}}}"#,
        "\n",
        r#"{"id":3,"claim":"A claim without evidence.","evidence":{}}"#,
        "\n",
        r#"{"id":10,"claim":"Vitamin D \"prevents\" colds.","evidence":{"ABC":{"provenance":"pooling","label":"CONTRADICT","sentences":[0],"model_ranks":null}}}"#,
        "\n",
    );
    assert_eq!(text(&files, "claims.jsonl"), want);
}

#[test]
fn claims_file_reads_back_with_the_claims_reader() {
    let input = small_input();
    let files = build(&input);
    let claims: Vec<_> =
        ClaimsReader::from_input(input_of(files.get("claims.jsonl").unwrap()), "c")
            .map(|c| c.unwrap().record)
            .collect();
    let ids: Vec<&str> = claims.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3", "10"]);
    let e = &claims[1].evidence[0];
    assert_eq!((e.doc_id.as_str(), e.label), ("20", Label::Support));
    assert_eq!(e.provenance, Some(EvidenceProvenance::Pooling));
    assert_eq!(e.model_ranks, ranks_of(&input, "2", "20"));
    assert_eq!(e.sentence_sets, vec![vec![1]]);
    let e = &claims[0].evidence[1];
    assert_eq!(e.provenance, Some(EvidenceProvenance::Citation));
    assert_eq!(e.model_ranks, None, "citation evidence has null ranks");
    // An empty rationale reads back as no set.
    assert!(claims[0].evidence[0].sentence_sets.is_empty());
    assert!(claims[2].evidence.is_empty());
}

#[test]
fn qrels_list_judged_pairs_and_optionally_unjudged_ones() {
    let input = small_input();
    let files = build(&input);
    assert_eq!(
        text(&files, "qrels.txt"),
        "1 0 7 1\n1 0 20 0\n1 0 100 1\n2 0 20 1\n10 0 ABC 1\n"
    );
    assert_eq!(
        text(&files, "qrels-labels.txt"),
        "1 0 7 CONTRADICT\n1 0 20 NEI\n1 0 100 SUPPORT\n2 0 20 SUPPORT\n10 0 ABC CONTRADICT\n"
    );
    let with = ReleaseFiles::build(
        &input,
        &ReleaseOptions {
            qrels_unjudged: true,
            model_qrels: false,
        },
    )
    .unwrap();
    assert_eq!(
        text(&with, "qrels.txt"),
        "1 0 7 1\n1 0 20 0\n1 0 100 1\n2 0 20 1\n2 0 100 -1\n10 0 20 -1\n10 0 ABC 1\n"
    );
    // Both read back with the qrels reader.
    let grades: Vec<i32> = QrelsReader::from_input(input_of(with.get("qrels.txt").unwrap()), "q")
        .map(|q| match q.unwrap().record.judgment {
            Judgment::Relevance(g) => g,
            Judgment::Label(l) => panic!("label {l}"),
        })
        .collect();
    assert_eq!(grades, [1, 0, 1, 1, -1, -1, 1]);
    let labels = QrelsReader::from_input(input_of(files.get("qrels-labels.txt").unwrap()), "q")
        .filter(|q| q.as_ref().unwrap().record.judgment == Judgment::Label(Label::Nei))
        .count();
    assert_eq!(labels, 1);
}

#[test]
fn specificity_and_corpus_files() {
    let input = small_input();
    let files = build(&input);
    assert_eq!(
        text(&files, "specificity.jsonl"),
        concat!(
            r#"{"claim_id":1,"doc_id":100,"relation":"matches","revised_claim":null}"#,
            "\n",
            r#"{"claim_id":2,"doc_id":20,"relation":"evidence_more_specific","revised_claim":"Statins cause muscle pain in mice."}"#,
            "\n"
        )
    );
    let corpus = text(&files, "corpus_candidates.jsonl");
    let last = corpus.lines().last().unwrap();
    assert_eq!(
        last,
        r#"{"doc_id":"ABC","title":"Title ABC","abstract":["Sentence 0."],"structured":false,"metadata":{"year":2001,"a":1}}"#
    );
    let docs: Vec<_> =
        CorpusReader::from_input(input_of(corpus.as_bytes()), "corpus", CorpusFormat::SciFact)
            .map(|d| d.unwrap().record)
            .collect();
    let mut want = input.documents.clone();
    want.sort_by(|a, b| a.doc_id.cmp(&b.doc_id));
    assert_eq!(docs, want);
}

#[test]
fn runs_are_canonical_sorted_and_name_their_system() {
    let input = small_input();
    let files = build(&input);
    let paths: Vec<&str> = files.files().iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "MANIFEST.json",
            "README.md",
            "claims.jsonl",
            "corpus_candidates.jsonl",
            "qrels-labels.txt",
            "qrels.txt",
            "runs/a.jsonl",
            "runs/b_c.jsonl",
            "specificity.jsonl"
        ]
    );
    let read: Vec<_> = RunReader::from_input(
        input_of(files.get("runs/a.jsonl").unwrap()),
        "a",
        RunFormat::Canonical,
        &RunReadOptions::default(),
    )
    .unwrap()
    .map(|r| r.unwrap().record)
    .collect();
    let mut want = input.runs[0].1.clone();
    for r in &mut want {
        r.system = Some("a".to_owned());
    }
    want.sort_by(|a, b| (&a.claim_id, &a.doc_id).cmp(&(&b.claim_id, &b.doc_id)));
    assert_eq!(read, want);
    assert_eq!(
        text(&files, "runs/b_c.jsonl"),
        "{\"system\":\"b/c\",\"claim_id\":\"10\",\"doc_id\":\"ABC\"}\n"
    );
}

#[test]
fn output_does_not_depend_on_input_order_and_is_repeatable() {
    let input = small_input();
    let once = build(&input);
    assert_eq!(once, build(&input));
    assert_eq!(once, build(&reversed(&input)));
    assert_eq!(
        once.to_tar_gz().unwrap(),
        build(&reversed(&input)).to_tar_gz().unwrap()
    );
    // A different date is a different release.
    let mut later = input.clone();
    later.date = ReleaseDate::parse("2026-03-02").unwrap();
    assert_ne!(build(&later).manifest(), once.manifest());
}

/// The lower-case hex of SHA-256, computed without `sha256_hex`.
fn hex_digest(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Checks MANIFEST.json's file list against the files; returns the manifest.
pub fn verify_manifest(files: &ReleaseFiles) -> Value {
    let manifest: Value = serde_json::from_slice(files.manifest()).unwrap();
    let listed: Vec<(String, u64, String)> = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["bytes"].as_u64().unwrap(),
                f["sha256"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let want: Vec<(String, u64, String)> = files
        .files()
        .iter()
        .filter(|f| f.path != MANIFEST)
        .map(|f| (f.path.clone(), f.bytes.len() as u64, hex_digest(&f.bytes)))
        .collect();
    assert_eq!(listed, want);
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(sorted, listed, "files are sorted by path");
    manifest
}

#[test]
fn manifest_describes_the_release_and_hashes_every_other_file() {
    let input = small_input();
    let files = build(&input);
    let m = verify_manifest(&files);
    assert_eq!(m["format"], "claimpool-release");
    assert_eq!(m["format_version"], 1);
    assert_eq!(m["project"], "Demo project");
    assert_eq!(m["release"], 2);
    assert_eq!(m["date"], "2026-03-01");
    assert_eq!(m["partial"], true);
    assert_eq!(
        m["pool"],
        serde_json::json!({"strategy": "confidence", "depth": 50})
    );
    assert_eq!(m["qrels_unjudged"], false);
    assert_eq!(
        m["systems"],
        serde_json::json!([
            {"name": "a", "role": "pooled", "description": "First system,\non two lines",
             "negative_sampling_ratio": 0.25, "run_file": "runs/a.jsonl"},
            {"name": "b/c", "role": "evaluation-only", "description": "",
             "negative_sampling_ratio": null, "run_file": "runs/b_c.jsonl"},
        ])
    );
    // Counts by hand from the fixture.
    assert_eq!(
        m["counts"],
        serde_json::json!({
            "claims": 4, "claims_with_evidence": 3, "evidence_pairs": 4,
            "evidence_by_label": {"SUPPORT": 2, "CONTRADICT": 2},
            "evidence_by_provenance": {"citation": 1, "pooling": 2, "import": 1},
            "judged_pairs": 5, "nei_pairs": 1, "unjudged_pooled_pairs": 2, "documents": 4,
            "specificity_notes": 2, "runs": 2, "run_pairs": 4
        })
    );
    assert_eq!(serde_json::to_value(files.counts()).unwrap(), m["counts"]);
    // A changed byte anywhere changes the manifest.
    let mut other = input.clone();
    other.claims[0].text.push('!');
    assert_ne!(build(&other).manifest(), files.manifest());
}

#[test]
fn readme_is_a_datasheet_with_counts_and_licence_notes() {
    let files = build(&small_input());
    let readme = text(&files, "README.md");
    for needle in [
        "# Demo project: claim verification test collection, release 2",
        "Date of the state released: 2026-03-01.",
        "**Partial release:**",
        "2 pooled pairs had no final label yet",
        "Pooling (strategy `confidence`, depth 50)",
        "  - `a`: First system, on two lines (negative sampling ratio 0.25)",
        "- Evaluation-only systems (never pooled):\n  - `b/c`\n",
        "| Claims | 4 |",
        "| Evidence pairs | 4 |",
        "| Judged NEI pairs | 1 |",
        "Check the licences of your sources",
        "CC BY 4.0",
        "ODC-By 1.0",
        "- `runs/b_c.jsonl`: the predictions of system `b/c`",
        "-1 for pooled pairs",
    ] {
        if needle == "-1 for pooled pairs" {
            assert!(!readme.contains(needle), "unjudged qrels are off");
        } else {
            assert!(readme.contains(needle), "missing {needle:?} in\n{readme}");
        }
    }
    let mut complete = small_input();
    complete.partial = false;
    complete.pool = None;
    let readme = text(&build(&complete), "README.md");
    assert!(!readme.contains("Partial release"));
    assert!(readme.contains("- Pooling: no pool was built."));
}

#[test]
fn archive_is_deterministic_sorted_and_holds_the_files() {
    let files = build(&small_input());
    let bytes = files.to_tar_gz().unwrap();
    assert_eq!(bytes, files.to_tar_gz().unwrap());
    assert_eq!(&bytes[..4], &[0x1f, 0x8b, 8, 0], "gzip, deflate, no name");
    assert_eq!(&bytes[4..8], &[0, 0, 0, 0], "gzip mtime 0");
    assert_eq!(bytes[9], 255, "gzip OS unknown");
    assert_eq!(files.root(), "Demo_project-release-2");
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes.as_slice()));
    let mut seen = Vec::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let h = entry.header();
        let path = entry.path().unwrap().to_string_lossy().into_owned();
        assert_eq!(
            (h.mtime().unwrap(), h.uid().unwrap(), h.gid().unwrap()),
            (0, 0, 0)
        );
        assert_eq!(h.username().unwrap(), Some(""));
        let dir = h.entry_type().is_dir();
        assert_eq!(h.mode().unwrap(), if dir { 0o755 } else { 0o644 });
        let mut content = Vec::new();
        entry.read_to_end(&mut content).unwrap();
        if !dir {
            let rel = path.strip_prefix("Demo_project-release-2/").unwrap();
            assert_eq!(files.get(rel).unwrap(), content.as_slice(), "{rel}");
        }
        seen.push(path);
    }
    let root = "Demo_project-release-2";
    let mut want = vec![format!("{root}/")];
    for f in files.files() {
        if f.path == "runs/a.jsonl" {
            want.push(format!("{root}/runs/"));
        }
        want.push(format!("{root}/{}", f.path));
    }
    assert_eq!(seen, want);
}

#[test]
fn writes_to_a_directory_refusing_a_non_empty_one_unless_forced() {
    let files = build(&small_input());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    files.write_to_dir(&dir, false).unwrap();
    for f in files.files() {
        assert_eq!(
            std::fs::read(dir.join(&f.path)).unwrap(),
            f.bytes,
            "{}",
            f.path
        );
    }
    let err = files.write_to_dir(&dir, false).unwrap_err();
    assert!(matches!(err, WriteError::NotEmpty { .. }), "{err}");
    std::fs::write(dir.join("claims.jsonl"), b"stale").unwrap();
    files.write_to_dir(&dir, true).unwrap();
    assert_eq!(
        std::fs::read(dir.join("claims.jsonl")).unwrap(),
        files.get("claims.jsonl").unwrap()
    );
    // An existing empty directory is fine without force.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    files.write_to_dir(&empty, false).unwrap();
    // A path under a file cannot be written, and the error names it.
    let blocked = tmp.path().join("out/claims.jsonl/x");
    let err = files.write_to_dir(&blocked, true).unwrap_err();
    assert!(err.to_string().contains("claims.jsonl"), "{err}");
}

#[test]
fn a_release_is_written_whole_or_not_at_all_and_a_killed_writers_leftovers_go() {
    let files = build(&small_input());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    // What a writer killed midway left: its staging directory with part of the files.
    let staging = tmp.path().join(".out.partial");
    std::fs::create_dir_all(staging.join("runs")).unwrap();
    std::fs::write(staging.join("claims.jsonl"), b"half").unwrap();
    files.write_to_dir(&dir, false).unwrap();
    assert!(!staging.exists(), "the staging directory is left");
    let mut written: Vec<String> = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let entry = entry.unwrap();
        if entry.path().is_file() {
            written.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    let top: Vec<&str> = files
        .files()
        .iter()
        .filter(|f| !f.path.contains('/'))
        .map(|f| f.path.as_str())
        .collect();
    written.sort();
    assert_eq!(written, top);
    assert_eq!(
        std::fs::read(dir.join("claims.jsonl")).unwrap(),
        files.get("claims.jsonl").unwrap()
    );
    // Nothing but the release sits beside it.
    let beside: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(beside.len(), 1);
}

#[test]
fn inconsistent_inputs_are_refused_with_the_pair_named() {
    type Edit = fn(&mut ReleaseInput);
    let cases: Vec<(Edit, &str)> = vec![
        (
            |i| i.claims.push(i.claims[0].clone()),
            "claim 1 is listed twice",
        ),
        (
            |i| i.documents.push(i.documents[0].clone()),
            "document 100 is listed twice",
        ),
        (
            |i| i.systems.push(i.systems[0].clone()),
            "system \"b/c\" is listed twice",
        ),
        (
            |i| i.systems[1].negative_sampling_ratio = Some(-0.5),
            "negative sampling ratio -0.5",
        ),
        (
            |i| i.systems[1].negative_sampling_ratio = Some(f64::NAN),
            "negative sampling ratio NaN",
        ),
        (
            |i| i.final_labels[0].claim = c("99"),
            "final label for (99, ABC): claim 99 is not a claim of the release",
        ),
        (
            |i| i.final_labels.push(i.final_labels[1].clone()),
            "final label for (1, 100) is given twice",
        ),
        (
            |i| i.final_labels[0].doc = d("404"),
            "judged pair (10, 404): document 404 is not among the documents",
        ),
        (
            |i| i.final_labels[1].sentences = vec![vec![0, 3]],
            "sentence 3 is out of range (the abstract has 3 sentences)",
        ),
        (
            |i| i.unjudged_pooled.push((c("1"), d("7"))),
            "pair (1, 7) is both judged and listed as unjudged",
        ),
        (
            |i| i.unjudged_pooled.push((c("5"), d("7"))),
            "unjudged pair for (5, 7)",
        ),
        (
            |i| i.specificity[0].doc = d("100"),
            "specificity of (2, 100): the pair has no final label",
        ),
        (
            |i| i.specificity.push(i.specificity[1].clone()),
            "specificity of (1, 100) is given twice",
        ),
        (
            |i| {
                i.specificity[1].relation = None;
            },
            "specificity of (1, 100) has neither a relation nor a revised claim",
        ),
        (
            |i| {
                i.documents[0].extra.insert("title".to_owned(), Value::Null);
            },
            "document 100: extra field \"title\"",
        ),
        (
            |i| i.runs[0].0 = "z".to_owned(),
            "run of system \"z\": no such system",
        ),
        (
            |i| i.runs.push(i.runs[1].clone()),
            "run of system \"b/c\" is given twice",
        ),
        (
            |i| {
                i.systems.push(SystemInfo {
                    name: "b:c".to_owned(),
                    ..i.systems[0].clone()
                });
                i.runs.push(("b:c".to_owned(), Vec::new()));
            },
            "runs of systems \"b/c\" and \"b:c\" would both be written to runs/b_c.jsonl",
        ),
        (
            |i| i.runs[0].1.push(record("4", "7", None, None)),
            "run of system \"a\": claim 4 (doc 7) is not a claim of the release",
        ),
        (
            |i| i.runs[0].1.push(record("1", "7", None, None)),
            "run of system \"a\": pair (1, 7) is given twice",
        ),
        (
            |i| i.runs[1].1[0].score = Some(f64::INFINITY),
            "run of system \"b/c\": claim 10 doc ABC: score",
        ),
    ];
    for (edit, want) in cases {
        let mut input = small_input();
        edit(&mut input);
        let err = build_err(&input).to_string();
        assert!(err.contains(want), "{err:?} does not contain {want:?}");
    }
}
