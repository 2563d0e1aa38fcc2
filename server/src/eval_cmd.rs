//! `claimpool eval` against a claims file: one run (today's figures, the figures for incomplete
//! judgments, optionally per claim), or several runs (each system, then every pair of systems
//! with the paired randomization test, the paired bootstrap and Holm's correction). The figures
//! come from the domain (`app::domain::release`, `app::domain::metrics`); this module reads
//! the files and prints.

use anyhow::Context;
use app::domain::formats::run::TrecText;
use app::domain::formats::{RunFormat, RunReadOptions};
use app::domain::metrics::{
    incomplete_indexed, repeats_outside_gold, Confidence, Gold, IndexedPair, IndexedRun, JudgedRun,
    Judgments, Prediction, Run,
};
use app::domain::release::{
    compare, evaluate_judged, judged_report, read_gold_judged, read_qrels_judgments, read_run,
    restrict_to_gold, BootstrapRequest, CompareRequest, EvalCounts, EvalReport, IncompleteReport,
    JudgedFrom, JudgedPairs, PairComparison,
};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What `eval` was asked, its files read or not yet.
pub struct EvalRequest<'a> {
    pub claims: &'a Path,
    pub qrels: Option<&'a Path>,
    pub runs: &'a [PathBuf],
    pub format: Option<&'a str>,
    pub label_order: &'a str,
    pub system: Option<&'a str>,
    pub bootstrap: Option<BootstrapRequest>,
    pub by_claim: bool,
    pub json: bool,
    /// Randomization-test permutations and paired-bootstrap resamples, for several runs.
    pub permutations: u32,
    pub comparison_bootstrap: u32,
    pub seed: u64,
}

/// One evaluated system.
#[derive(Serialize)]
struct System {
    name: String,
    file: String,
    format: String,
    #[serde(flatten)]
    report: EvalReport,
}

#[derive(Serialize)]
struct Comparison {
    systems: Vec<System>,
    comparisons: Vec<PairComparison>,
    tests: CompareRequest,
}

/// Reads the files, evaluates and prints (blocking: CPU work).
pub fn eval(request: EvalRequest<'_>) -> anyhow::Result<()> {
    // One TREC run is read while the claims file is parsed.
    let (gold_read, mut prefetched) = std::thread::scope(|scope| {
        let prefetch = scope.spawn(|| prefetch_trec(&request));
        let gold = read_gold_judged(request.claims);
        (gold, prefetch.join().ok().flatten())
    });
    let (gold, claims_judgments) = gold_read?;
    let (judgments, from): (Judgments, JudgedFrom) = match request.qrels {
        Some(path) => (
            read_qrels_judgments(path, &gold)?,
            JudgedFrom::Qrels {
                file: path.display().to_string(),
            },
        ),
        None => (claims_judgments, JudgedFrom::Claims),
    };
    let judged = JudgedPairs {
        judgments: &judgments,
        from: &from,
    };
    let mut systems = Vec::new();
    let mut runs: Vec<(String, Run)> = Vec::new();
    for path in request.runs {
        let (format, options) =
            crate::release_cmd::run_options(request.format, request.label_order, path)?;
        let bulk = if request.runs.len() == 1 && format == RunFormat::Trec {
            eval_trec_bulk(&gold, judged, (path, prefetched.take()), &options, &request)?
        } else {
            None
        };
        let name = system_name(path, request.system, request.runs);
        if let Some(report) = bulk {
            systems.push(System {
                name,
                file: path.display().to_string(),
                format: format.to_string(),
                report,
            });
            continue;
        }
        let run = read_run(path, format, &options, request.system)?;
        let report = evaluate_judged(
            &gold,
            Some(judged),
            &run,
            request.bootstrap,
            request.by_claim,
        )?;
        systems.push(System {
            name: name.clone(),
            file: path.display().to_string(),
            format: format.to_string(),
            report,
        });
        if request.runs.len() > 1 {
            let run = restrict_to_gold(&gold, &run)?.unwrap_or(run);
            runs.push((name, run));
        }
    }
    if request.runs.len() == 1 {
        let system = systems.pop().context("no run")?;
        return if request.json {
            say(&serde_json::to_string(&system.report)?)
        } else {
            print_one(&system)
        };
    }
    let tests = CompareRequest {
        permutations: request.permutations,
        bootstrap_samples: request.comparison_bootstrap,
        seed: request.seed,
    };
    let named: Vec<(String, &Run)> = runs.iter().map(|(n, r)| (n.clone(), r)).collect();
    let comparisons = compare(&gold, &named, tests)?;
    let comparison = Comparison {
        systems,
        comparisons,
        tests,
    };
    if request.json {
        say(&serde_json::to_string(&comparison)?)
    } else {
        print_comparison(&comparison)
    }
}

/// The bytes of the one run when it is a TREC run (`--format trec`, or a file detected as one),
/// read for [`eval_trec_bulk`] while the claims file is parsed; `None` otherwise, and when it
/// cannot be read (the run is then read as usual, and its errors reported in their turn).
fn prefetch_trec(request: &EvalRequest<'_>) -> Option<Vec<u8>> {
    let [path] = request.runs else {
        return None;
    };
    let format = match request.format {
        Some(name) => name.parse::<RunFormat>().ok()?,
        None => RunFormat::detect_file(path).ok()?,
    };
    match format {
        RunFormat::Trec => std::fs::read(path).ok(),
        _ => None,
    }
}

/// `eval` of one TREC run (its bytes, when read already): read whole and parsed on every core
/// straight into gold claim indices ([`TrecText`]), then judged as [`evaluate_judged`] judges
/// the run [`read_run`] reads. The same report, without an owned claim id, doc id and tag per
/// line (issue 17: 2.5 million lines faster than pytrec_eval). `None` when the bulk reader gives
/// up on the file (gzip, several run tags or another `--system`, a line the TREC reader
/// refuses, a pair given twice): `eval` then reads it with [`read_run`], which gives the report
/// or the error naming file, line and field.
fn eval_trec_bulk(
    gold: &Gold,
    judged: JudgedPairs<'_>,
    (path, bytes): (&Path, Option<Vec<u8>>),
    options: &RunReadOptions,
    request: &EvalRequest<'_>,
) -> anyhow::Result<Option<EvalReport>> {
    let text = match bytes {
        Some(bytes) => TrecText::from_bytes(bytes, options),
        None => TrecText::read(path, options),
    };
    let Some(text) = text else {
        return Ok(None);
    };
    let claim_count = gold.claims().len();
    let gold_index: HashMap<&str, u32> = gold
        .claims()
        .iter()
        .zip(0u32..)
        .map(|(claim, index)| (claim.as_str(), index))
        .collect();
    // Claims outside the gold get the numbers after the gold's: their pairs are left out and
    // counted, as evaluate_judged does.
    let others: Mutex<HashMap<&str, u32>> = Mutex::default();
    let claim = |qid| match gold_index.get(qid) {
        Some(&index) => index,
        None => {
            let mut others = others.lock().unwrap_or_else(|p| p.into_inner());
            let next = u32::try_from(claim_count + others.len()).unwrap_or(u32::MAX);
            *others.entry(qid).or_insert(next)
        }
    };
    let pair = |claim, doc, score| {
        let confidence = Confidence::new(score).ok()?;
        Some(IndexedPair::new(
            claim,
            doc,
            Prediction::Unlabelled,
            confidence,
        ))
    };
    let Some(parsed) = text.parse(claim, pair) else {
        return Ok(None);
    };
    let skipped_claims = others.into_inner().unwrap_or_else(|p| p.into_inner()).len();
    let wanted = |tag| request.system.is_none_or(|system| system == tag);
    if !parsed.tag.map_or(request.system.is_none(), wanted)
        || claim_count + skipped_claims >= u32::MAX as usize
    {
        return Ok(None);
    }
    let mut pairs = parsed.pairs;
    let total = pairs.len();
    if skipped_claims > 0 {
        if repeats_outside_gold(&pairs, claim_count) {
            return Ok(None);
        }
        pairs.retain(|p| (p.claim as usize) < claim_count);
    }
    // A pair given twice: read_run's error names both lines.
    let Ok(run) = IndexedRun::new(gold, pairs) else {
        return Ok(None);
    };
    let counts = EvalCounts {
        claims: claim_count as u64,
        gold_evidence: gold.evidence_count() as u64,
        predicted_pairs: run.len() as u64,
        predicted_evidence: run.pairs().iter().filter(|p| p.claims_evidence()).count() as u64,
        skipped_pairs: (total - run.len()) as u64,
        skipped_claims: skipped_claims as u64,
    };
    // What evaluate_judged reports of a run, from the indexed run.
    let judged_run = JudgedRun::from_indexed(gold, &run)?;
    let (metrics, claims) = incomplete_indexed(gold, judged.judgments, &run)?;
    let incomplete = IncompleteReport {
        judged_from: judged.from.clone(),
        judged_pairs: judged.judgments.len() as u64,
        metrics,
    };
    Ok(Some(judged_report(
        &judged_run,
        Some((incomplete, claims)),
        request.bootstrap,
        request.by_claim,
        counts,
    )))
}

/// `--system` when given with one run; otherwise the file's name, or its parent directory and
/// name (or its whole path) when another run has the same file name.
fn system_name(path: &Path, system: Option<&str>, all: &[PathBuf]) -> String {
    let file_name = |p: &Path| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    match system {
        Some(name) if all.len() == 1 => name.to_owned(),
        _ => {
            let mine = file_name(path);
            if all.iter().filter(|p| file_name(p) == mine).count() > 1 {
                // The parent directory tells them apart (a commit, a checkpoint), else the path.
                let with_parent = |p: &Path| {
                    p.parent()
                        .and_then(Path::file_name)
                        .map(|d| format!("{}/{}", d.to_string_lossy(), file_name(p)))
                };
                match with_parent(path) {
                    Some(name)
                        if all
                            .iter()
                            .filter(|p| with_parent(p).as_ref() == Some(&name))
                            .count()
                            == 1 =>
                    {
                        name
                    }
                    _ => path.display().to_string(),
                }
            } else {
                mine
            }
        }
    }
}

fn say(line: &str) -> anyhow::Result<()> {
    crate::release_cmd::say(line)
}

fn judged_from(report: &EvalReport) -> String {
    match &report.incomplete {
        Some(i) => match &i.judged_from {
            JudgedFrom::Claims => format!(
                "{} judged pairs: the claims file's evidence and cited documents (pass --qrels \
                 with a release's qrels.txt for its judged NEI pairs)",
                i.judged_pairs
            ),
            JudgedFrom::Qrels { file } => {
                format!("{} judged pairs, from {file}", i.judged_pairs)
            }
        },
        None => String::new(),
    }
}

fn print_one(system: &System) -> anyhow::Result<()> {
    let report = &system.report;
    let c = &report.counts;
    say(&format!(
        "gold: {} claims, {} evidence pairs; run ({}): {} pairs evaluated, {} predicted as evidence",
        c.claims, c.gold_evidence, system.format, c.predicted_pairs, c.predicted_evidence
    ))?;
    if c.skipped_pairs > 0 {
        say(&format!(
            "left out: {} pairs of {} claims that are not in the claims file",
            c.skipped_pairs, c.skipped_claims
        ))?;
    }
    say(&judged_from(report))?;
    let sd = |value: Option<f64>| value.map(|v| format!("{v:.4}")).unwrap_or_default();
    say("")?;
    match report.bootstrap {
        Some(b) => say(&format!(
            "metric\tvalue\tsd ({} resamples, seed {})",
            b.samples.get(),
            b.seed
        ))?,
        None => say("metric\tvalue")?,
    }
    let rows = [
        ("precision", report.precision, report.precision_sd),
        ("recall", report.recall, report.recall_sd),
        ("f1", report.f1, report.f1_sd),
        (
            "average_precision",
            report.average_precision,
            report.average_precision_sd,
        ),
    ];
    for (name, value, value_sd) in rows {
        let line = format!("{name}\t{value:.4}\t{}", sd(value_sd));
        say(line.trim_end())?;
    }
    if let Some(i) = &report.incomplete {
        let m = &i.metrics;
        for j in &m.judged_at {
            let note = if j.k == m.depth {
                " (the run's depth)"
            } else {
                ""
            };
            say(&format!("judged@{}\t{:.4}{note}", j.k, j.value))?;
        }
        say(&format!("unjudged_pairs\t{}", m.unjudged_pairs))?;
        say(&format!(
            "unjudged_predicted_evidence\t{}",
            m.unjudged_predicted_evidence
        ))?;
        say(&format!(
            "bpref\t{:.4}\t(mean over {} claims with evidence)",
            m.bpref, m.claims_with_evidence
        ))?;
        say(&format!(
            "condensed_precision\t{:.4}",
            m.condensed.precision
        ))?;
        say(&format!("condensed_recall\t{:.4}", m.condensed.recall))?;
        say(&format!("condensed_f1\t{:.4}", m.condensed.f1))?;
        say(&format!(
            "condensed_average_precision\t{:.4}",
            m.condensed.average_precision
        ))?;
        say(&format!(
            "condensed_map\t{:.4}\t(mean per-claim AP of the condensed run)",
            m.condensed_map
        ))?;
    }
    if let Some(claims) = &report.by_claim {
        let extra = report.incomplete_by_claim.as_deref();
        let mut header = "\nclaim\tgold\tpredicted\tcorrect\tprecision\trecall\tf1".to_owned();
        if let Some(first) = extra.and_then(|e| e.first()) {
            for j in &first.judged_at {
                header.push_str(&format!("\tjudged@{}", j.k));
            }
            header.push_str(
                "\tunjudged_evidence\tbpref\tcondensed_precision\tcondensed_f1\tcondensed_ap",
            );
        }
        say(&header)?;
        for (n, m) in claims.iter().enumerate() {
            let mut line = format!(
                "{}\t{}\t{}\t{}\t{:.4}\t{:.4}\t{:.4}",
                m.claim, m.gold_evidence, m.predicted, m.correct, m.precision, m.recall, m.f1
            );
            if let Some(i) = extra.and_then(|e| e.get(n)) {
                for j in &i.judged_at {
                    line.push_str(&format!("\t{:.4}", j.value));
                }
                line.push_str(&format!(
                    "\t{}\t{:.4}\t{:.4}\t{:.4}\t{:.4}",
                    i.unjudged_predicted_evidence,
                    i.bpref,
                    i.condensed.precision,
                    i.condensed.f1,
                    i.condensed.average_precision
                ));
            }
            say(&line)?;
        }
    }
    Ok(())
}

fn print_comparison(comparison: &Comparison) -> anyhow::Result<()> {
    if let Some(first) = comparison.systems.first() {
        let c = &first.report.counts;
        say(&format!(
            "gold: {} claims, {} evidence pairs; {}",
            c.claims,
            c.gold_evidence,
            judged_from(&first.report)
        ))?;
    }
    say("")?;
    say("system\tpairs\tprecision\trecall\tf1\tap\tjudged@10\tbpref\tcondensed_f1\tcondensed_ap")?;
    for s in &comparison.systems {
        let r = &s.report;
        let (judged10, bpref, cf1, cap) = r.incomplete.as_ref().map_or((0.0, 0.0, 0.0, 0.0), |i| {
            let m = &i.metrics;
            let judged10 = m
                .judged_at
                .iter()
                .find(|j| j.k == 10)
                .map_or(0.0, |j| j.value);
            (
                judged10,
                m.bpref,
                m.condensed.f1,
                m.condensed.average_precision,
            )
        });
        say(&format!(
            "{}\t{}\t{:.4}\t{:.4}\t{:.4}\t{:.4}\t{:.4}\t{:.4}\t{:.4}\t{:.4}",
            s.name,
            r.counts.predicted_pairs,
            r.precision,
            r.recall,
            r.f1,
            r.average_precision,
            judged10,
            bpref,
            cf1,
            cap
        ))?;
    }
    let t = &comparison.tests;
    say(&format!(
        "\npairs (a - b): randomization test ({} permutations), paired bootstrap ({} resamples), \
         seed {}; Holm over {} pairs; * significant at 0.05 after Holm",
        t.permutations,
        t.bootstrap_samples,
        t.seed,
        comparison.comparisons.len()
    ))?;
    say("a\tb\tmeasure\tdifference\tp\tp_holm\tbootstrap_95%\tbootstrap_p")?;
    for p in &comparison.comparisons {
        let rows = [
            (
                "f1",
                p.f1_difference,
                p.randomization.f1_p,
                p.f1_p_holm,
                p.bootstrap.f1,
            ),
            (
                "ap",
                p.average_precision_difference,
                p.randomization.average_precision_p,
                p.average_precision_p_holm,
                p.bootstrap.average_precision,
            ),
        ];
        for (measure, diff, p_value, holm, boot) in rows {
            let star = if holm < 0.05 { " *" } else { "" };
            say(&format!(
                "{}\t{}\t{measure}\t{diff:+.4}\t{p_value:.4}\t{holm:.4}{star}\t[{:+.4}, {:+.4}]\t{:.4}",
                p.a, p.b, boot.low, boot.high, boot.p
            ))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::domain::metrics::BootstrapSamples;
    use std::io::Write;

    const CLAIMS: &str = "\
{\"id\": 1, \"claim\": \"A.\", \"evidence\": {\"11\": [{\"sentences\": [0], \"label\": \"SUPPORT\"}], \"12\": [{\"sentences\": [0], \"label\": \"CONTRADICT\"}]}, \"cited_doc_ids\": [11, 12, 14]}
{\"id\": 2, \"claim\": \"B.\", \"evidence\": {}, \"cited_doc_ids\": [21]}
{\"id\": 3, \"claim\": \"C.\", \"evidence\": {\"31\": [{\"sentences\": [0], \"label\": \"SUPPORT\"}]}}
{\"id\": 10, \"claim\": \"D.\", \"evidence\": {}}
";
    const QRELS: &str = "1 0 11 1\n1 0 12 1\n1 0 15 0\n1 0 16 -1\n3 0 31 1\n3 0 33 0\n";
    /// Ties in score, a claim outside the gold (9), claim 10 after claim 2.
    const RUN: &str = "\
1 Q0 14 1 3.5 sys
1 Q0 11 2 3.5 sys
1 Q0 16 3 2 sys
1 Q0 12 4 1 sys
9 Q0 11 1 9 sys
9 Q0 12 2 8 sys
2 Q0 21 1 0.5 sys
2 Q0 22 2 0.5 sys
10 Q0 11 1 -1 sys
3 Q0 33 1 4 sys
3 Q0 31 2 -0 sys
";

    struct Case<'a> {
        qrels: bool,
        run: &'a [u8],
        system: Option<&'a str>,
        by_claim: bool,
        bootstrap: bool,
    }

    impl Default for Case<'_> {
        fn default() -> Self {
            Case {
                qrels: false,
                run: RUN.as_bytes(),
                system: None,
                by_claim: false,
                bootstrap: false,
            }
        }
    }

    /// The bulk reader's report and read_run + evaluate_judged's (or its error).
    fn both(case: Case<'_>) -> (Option<EvalReport>, Result<EvalReport, String>) {
        let dir = tempfile::tempdir().unwrap();
        let (claims, qrels, run) = (
            dir.path().join("claims.jsonl"),
            dir.path().join("qrels.txt"),
            dir.path().join("run.trec"),
        );
        std::fs::write(&claims, CLAIMS).unwrap();
        std::fs::write(&qrels, QRELS).unwrap();
        std::fs::write(&run, case.run).unwrap();
        let (gold, from_claims) = read_gold_judged(&claims).unwrap();
        let (judgments, from) = match case.qrels {
            true => (
                read_qrels_judgments(&qrels, &gold).unwrap(),
                JudgedFrom::Qrels {
                    file: qrels.display().to_string(),
                },
            ),
            false => (from_claims, JudgedFrom::Claims),
        };
        let judged = JudgedPairs {
            judgments: &judgments,
            from: &from,
        };
        let bootstrap = case.bootstrap.then(|| BootstrapRequest {
            samples: BootstrapSamples::new(30).unwrap(),
            seed: 5,
        });
        let runs = [run.clone()];
        let request = EvalRequest {
            claims: &claims,
            qrels: None,
            runs: &runs,
            format: Some("trec"),
            label_order: "",
            system: case.system,
            bootstrap,
            by_claim: case.by_claim,
            json: true,
            permutations: 10,
            comparison_bootstrap: 10,
            seed: 0,
        };
        let options = RunReadOptions::default();
        let bulk = eval_trec_bulk(&gold, judged, (&run, None), &options, &request).unwrap();
        let prefetched = prefetch_trec(&request).map(|bytes| {
            eval_trec_bulk(&gold, judged, (&run, Some(bytes)), &options, &request).unwrap()
        });
        assert_eq!(prefetched.unwrap_or(None), bulk);
        let generic = read_run(&run, RunFormat::Trec, &options, case.system)
            .and_then(|r| evaluate_judged(&gold, Some(judged), &r, bootstrap, case.by_claim))
            .map_err(|e| e.to_string());
        (bulk, generic)
    }

    #[test]
    fn the_bulk_reader_reports_what_read_run_and_evaluate_judged_report() {
        let interleaved: String = {
            let mut lines: Vec<&str> = RUN.lines().collect();
            lines.sort_by_key(|l| l.split(' ').nth(3).map(str::to_owned));
            lines.iter().map(|l| format!("{l}\n")).collect()
        };
        let cases = [
            Case::default(),
            Case {
                qrels: true,
                by_claim: true,
                bootstrap: true,
                ..Case::default()
            },
            Case {
                run: interleaved.as_bytes(),
                by_claim: true,
                ..Case::default()
            },
            Case {
                system: Some("sys"),
                ..Case::default()
            },
            Case {
                run: b"\n",
                ..Case::default()
            },
        ];
        for case in cases {
            let (bulk, generic) = both(case);
            let generic = generic.unwrap();
            assert_eq!(bulk.as_ref(), Some(&generic));
        }
        let (bulk, _) = both(Case::default());
        let counts = bulk.unwrap().counts;
        assert_eq!((counts.skipped_pairs, counts.skipped_claims), (2, 1));
    }

    #[test]
    fn the_bulk_reader_leaves_errors_and_other_files_to_read_run() {
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gzip.write_all(RUN.as_bytes()).unwrap();
        let gzip = gzip.finish().unwrap();
        let repeated_gold = format!("{RUN}1 Q0 11 9 0 sys\n");
        let repeated_other = format!("{RUN}9 Q0 11 9 0 sys\n");
        let other_tag = format!("{RUN}3 Q0 34 3 -1 other\n");
        let bad_score = format!("{RUN}3 Q0 34 3 high sys\n");
        let refused = [
            (repeated_gold.as_bytes(), None),
            (repeated_other.as_bytes(), None),
            (other_tag.as_bytes(), None),
            (bad_score.as_bytes(), None),
            (RUN.as_bytes(), Some("other")),
            (b"".as_slice(), Some("sys")),
        ];
        for (run, system) in refused {
            let (bulk, generic) = both(Case {
                run,
                system,
                ..Case::default()
            });
            assert_eq!(bulk, None);
            assert!(generic.is_err(), "{generic:?}");
        }
        // Read by read_run, with the same figures: a gzip file, one system of two.
        for (run, system) in [(gzip.as_slice(), None), (other_tag.as_bytes(), Some("sys"))] {
            let (bulk, generic) = both(Case {
                run,
                system,
                ..Case::default()
            });
            assert_eq!(bulk, None);
            assert!(generic.is_ok(), "{generic:?}");
        }
    }
}
