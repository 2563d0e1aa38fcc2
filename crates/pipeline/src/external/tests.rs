//! The external scorer against a stand-in model (testdata/standin_model.py, run by python3;
//! skipped where python3 is missing): its predictions are checked against the same formula
//! computed here, and each misbehaviour is reported with its output line and field while the
//! run file is left unwritten.

use super::*;
use crate::generate::{generate_external_run, write_run_file, GenerateError};
use crate::{build_index, IndexDoc, Retriever};
use domain::formats::{ClaimsReader, Located, RunFormat, RunReadOptions, RunReader, RunRecord};
use domain::ids::DocId;
use domain::label::Label;
use std::collections::{BTreeSet, HashMap};
use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

const VOCABULARY: [&str; 16] = [
    "vitamin",
    "bone",
    "density",
    "statin",
    "cholesterol",
    "sleep",
    "memory",
    "insulin",
    "glucose",
    "tumor",
    "growth",
    "cancer",
    "immune",
    "response",
    "virus",
    "infection",
];

/// A small linear congruential generator: the fixture is the same on every machine.
struct Lcg(u64);

impl Lcg {
    fn word(&mut self) -> &'static str {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        VOCABULARY[(self.0 >> 33) as usize % VOCABULARY.len()]
    }

    fn words(&mut self, n: usize) -> String {
        (0..n).map(|_| self.word()).collect::<Vec<_>>().join(" ")
    }
}

pub(crate) fn script() -> Option<PathBuf> {
    let ok = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: python3 is not available");
        return None;
    }
    Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/external/testdata/standin_model.py"))
}

struct Fixture {
    dir: tempfile::TempDir,
    retriever: Retriever,
    claims: Vec<Claim>,
    docs: HashMap<DocId, IndexDoc>,
}

/// 60 abstracts of 8 sentences of 12 words, and `claims` claims of 5 words.
fn fixture(claims: usize) -> Fixture {
    let mut lcg = Lcg(7);
    let docs: Vec<IndexDoc> = (0..60)
        .map(|i| IndexDoc {
            doc_id: DocId::parse(format!("{}", 1000 + i)).unwrap(),
            title: lcg.words(4),
            sentences: (0..8).map(|_| format!("{}.", lcg.words(12))).collect(),
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    build_index(
        &index,
        docs.iter().cloned().map(Ok::<_, Infallible>),
        &|_| {},
    )
    .unwrap();
    let claims_file = dir.path().join("claims.jsonl");
    let lines: String = (0..claims)
        .map(|i| format!("{{\"id\": {}, \"claim\": \"{}.\"}}\n", i + 1, lcg.words(5)))
        .collect();
    std::fs::write(&claims_file, lines).unwrap();
    let claims = ClaimsReader::open(&claims_file)
        .unwrap()
        .map(|c| c.unwrap().record)
        .collect();
    Fixture {
        retriever: Retriever::open(&index).unwrap(),
        claims,
        docs: docs.into_iter().map(|d| (d.doc_id.clone(), d)).collect(),
        dir,
    }
}

impl Fixture {
    /// Runs the stand-in in `mode` over the top `k`, writing to `run.jsonl` through
    /// [`write_run_file`]; returns the result and the path.
    fn run(
        &self,
        script: &Path,
        mode: &str,
        k: usize,
    ) -> (Result<ExternalSummary, GenerateError>, PathBuf) {
        let command = ExternalCommand::new(
            "python3",
            vec![script.display().to_string(), mode.to_owned()],
        );
        let out = self.dir.path().join("run.jsonl");
        let retriever = CandidateRetriever::bm25(&self.retriever);
        let result = write_run_file(&out, |w| {
            generate_external_run(
                &retriever,
                &self.claims,
                k,
                &command,
                w,
                &|_| {},
                &AtomicBool::new(false),
            )
        });
        (result, out)
    }
}

fn words(text: &str) -> BTreeSet<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

#[test]
fn the_standin_models_predictions_are_written_with_the_retrieval_rank() {
    let Some(script) = script() else { return };
    let fx = fixture(6);
    let progress = AtomicU64::new(0);
    let command = ExternalCommand::new("python3", vec![script.display().to_string()]);
    let out = fx.dir.path().join("good.jsonl");
    let retriever = CandidateRetriever::bm25(&fx.retriever);
    let summary = write_run_file(&out, |w| {
        generate_external_run(
            &retriever,
            &fx.claims,
            5,
            &command,
            w,
            &|n| {
                progress.fetch_max(n, Ordering::Relaxed);
            },
            &AtomicBool::new(false),
        )
    })
    .unwrap();
    assert_eq!(
        summary,
        ExternalSummary {
            claims: 6,
            pairs: 30
        }
    );
    assert_eq!(progress.load(Ordering::Relaxed), 6);

    let records: Vec<Located<RunRecord>> =
        RunReader::open(&out, RunFormat::Canonical, &RunReadOptions::default())
            .unwrap()
            .map(Result::unwrap)
            .collect();
    assert_eq!(records.len(), 30);
    for claim in &fx.claims {
        let hits = fx.retriever.retrieve(&claim.text, 5).unwrap();
        let claim_words = words(&claim.text);
        for hit in hits {
            let r = &records
                .iter()
                .find(|r| r.record.claim_id == claim.id && r.record.doc_id == hit.doc_id)
                .expect("every candidate answered")
                .record;
            let doc = &fx.docs[&hit.doc_id];
            let text = format!("{} {}", doc.title, doc.sentences.join(" "));
            let m =
                claim_words.intersection(&words(&text)).count() as f64 / claim_words.len() as f64;
            let p_support = round6(0.9 * m);
            assert_eq!(r.rank, Some(hit.rank));
            assert!((r.p_support.unwrap().get() - p_support).abs() < 1e-12);
            assert!((r.p_contradict.unwrap().get() - round6(0.05 * m)).abs() < 1e-12);
            let label = if p_support > 0.5 {
                Label::Support
            } else {
                Label::Nei
            };
            assert_eq!(r.label, Some(label));
            let rationale: Vec<u32> = (0..doc.sentences.len() as u32)
                .filter(|&i| {
                    claim_words
                        .intersection(&words(&doc.sentences[i as usize]))
                        .count()
                        >= 2
                })
                .collect();
            assert_eq!(r.sentences.as_deref(), Some(&rationale[..]));
        }
    }
}

/// Runs a misbehaving mode: the error, and whether anything was left at the run's path.
fn failure(mode: &str) -> Option<(String, bool)> {
    let script = script()?;
    let fx = fixture(6);
    let (result, out) = fx.run(&script, mode, 5);
    let err = result.expect_err(mode).to_string();
    let leftovers = std::fs::read_dir(fx.dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".claimpool-run-")
        });
    Some((err, out.exists() || leftovers))
}

#[test]
fn bad_json_on_line_3_is_reported_with_its_line() {
    let Some((err, written)) = failure("bad-json-line-3") else {
        return;
    };
    assert!(err.starts_with("stdout of `python3 "), "{err}");
    assert!(err.contains("bad-json-line-3`:3: "), "{err}");
    assert!(!written, "nothing is written");
}

#[test]
fn a_probability_of_1_5_is_reported_with_line_and_field() {
    let Some((err, written)) = failure("prob-1.5") else {
        return;
    };
    assert!(err.contains("prob-1.5`:2: field \"p_support\": "), "{err}");
    assert!(err.contains("1.5"), "{err}");
    assert!(!written);
}

#[test]
fn an_unknown_doc_is_reported_with_line_and_field() {
    let Some((err, written)) = failure("unknown-doc") else {
        return;
    };
    assert!(err.contains("unknown-doc`:1: field \"doc_id\": doc no-such-doc was not a candidate sent for claim 1"), "{err}");
    assert!(!written);
}

#[test]
fn a_missing_label_is_reported_with_line_and_field() {
    let Some((err, written)) = failure("no-label") else {
        return;
    };
    assert!(
        err.contains("no-label`:1: field \"predicted_label\": missing"),
        "{err}"
    );
    assert!(!written);
}

#[test]
fn exit_code_1_is_an_error_with_the_stderr_tail() {
    let Some((err, written)) = failure("exit-1") else {
        return;
    };
    assert!(err.contains("failed (exit status: 1)"), "{err}");
    assert!(
        err.ends_with("stderr ended with:\n    model exploded: CUDA out of memory"),
        "{err}"
    );
    assert!(!written);
}

#[test]
fn a_crash_is_an_error() {
    let Some((err, written)) = failure("crash") else {
        return;
    };
    assert!(err.contains("failed (signal: 11"), "{err}");
    assert!(!written);
}

#[test]
fn unanswered_pairs_are_an_error_naming_them() {
    let Some(script) = script() else { return };
    let fx = fixture(6);
    let second = fx.retriever.retrieve(&fx.claims[0].text, 5).unwrap()[1]
        .doc_id
        .clone();
    let (result, out) = fx.run(&script, "skip-second", 5);
    let err = result.unwrap_err().to_string();
    assert!(
        err.contains(&format!(
            "answered 29 of 30 pairs: no prediction for claim 1 / doc {second} (1 in all)"
        )),
        "{err}"
    );
    assert!(!out.exists());
    let (result, out) = fx.run(&script, "no-read", 5);
    let err = result.unwrap_err().to_string();
    assert!(err.contains("answered 0 of"), "{err}");
    assert!(!out.exists());
}

#[test]
fn big_inputs_and_outputs_and_chatty_stderr_do_not_deadlock() {
    let Some(script) = script() else { return };
    // 40 claims x 20 abstracts of ~600 bytes: ~500 KB in, ~100 KB out, both past a pipe's
    // 64 KB; "read-all-first" answers only after reading everything.
    let fx = fixture(40);
    for mode in ["read-all-first", "noisy-stderr"] {
        let (result, out) = fx.run(&script, mode, 20);
        assert_eq!(result.unwrap().pairs, 800, "{mode}");
        assert!(out.exists());
    }
}

#[test]
fn a_missing_program_is_an_error_naming_it() {
    let fx = fixture(1);
    let command = ExternalCommand::new("/nonexistent/model", vec![]);
    let retriever = CandidateRetriever::bm25(&fx.retriever);
    let out = fx.dir.path().join("run.jsonl");
    let err = write_run_file(&out, |w| {
        generate_external_run(
            &retriever,
            &fx.claims,
            5,
            &command,
            w,
            &|_| {},
            &AtomicBool::new(false),
        )
    })
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot start `/nonexistent/model`: "),
        "{err}"
    );
    assert!(!out.exists());
}
