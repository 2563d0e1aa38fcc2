//! Benchmark of the run reader: writes a large canonical run (by default 4 systems x 10,000
//! claims x 250 docs = 10 million lines) with [`RunWriter`], then times parsing it alone, first
//! without and then with the repeated-pair check, and reads the peak resident memory.

use crate::machine::peak_rss_kib;
use domain::formats::{FormatError, ParseError};
use domain::formats::{RunFormat, RunReadOptions, RunReader, RunRecord, RunWriter};
use domain::ids::{ClaimId, DocId, IdError};
use domain::label::{Label, Probability, ProbabilityError};
use std::io::BufWriter;
use std::path::Path;
use std::time::Instant;

/// How big a run to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchShape {
    pub systems: u32,
    pub claims: u32,
    /// At most [`CORPUS_SIZE`].
    pub docs_per_claim: u32,
}

impl BenchShape {
    /// 4 systems x 10,000 claims x 250 docs: 10 million lines.
    pub const TEN_MILLION: BenchShape = BenchShape {
        systems: 4,
        claims: 10_000,
        docs_per_claim: 250,
    };

    /// Lines the run will have.
    pub fn lines(self) -> u64 {
        u64::from(self.systems) * u64::from(self.claims) * u64::from(self.docs_per_claim)
    }
}

/// Doc ids are drawn from a corpus this big (SciFact-Open's is 500K abstracts).
pub const CORPUS_SIZE: u32 = 500_000;

/// What the benchmark measured.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchReport {
    pub lines: u64,
    pub file_bytes: u64,
    pub write_seconds: f64,
    /// Parse time (wall clock) without the repeated-pair check.
    pub parse_unchecked_seconds: f64,
    /// Parse time (wall clock) with the repeated-pair check (the default).
    pub parse_seconds: f64,
    /// CPU time of the unchecked parse, where /proc has it: fairer than wall time on a busy
    /// machine.
    pub parse_unchecked_cpu_seconds: Option<f64>,
    /// CPU time of the checked parse.
    pub parse_cpu_seconds: Option<f64>,
    /// Peak resident memory (VmHWM) after the unchecked parse, in KiB, where /proc has it.
    pub peak_rss_unchecked_kib: Option<u64>,
    /// Peak resident memory (VmHWM) after the checked parse, in KiB.
    pub peak_rss_kib: Option<u64>,
    /// Sum of all confidences, identical for both parses (keeps the work from being optimized out).
    pub confidence_sum: f64,
}

impl BenchReport {
    /// Lines parsed per second with the repeated-pair check.
    pub fn lines_per_second(&self) -> f64 {
        self.lines as f64 / self.parse_seconds
    }

    /// Lines parsed per second without the repeated-pair check.
    pub fn lines_per_second_unchecked(&self) -> f64 {
        self.lines as f64 / self.parse_unchecked_seconds
    }
}

/// Why the benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("cannot write the run: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error("the generated run does not parse: {0}")]
    Parse(#[from] ParseError),
    #[error("generated a bad id: {0}")]
    Id(#[from] IdError),
    #[error("generated a bad probability: {0}")]
    Probability(#[from] ProbabilityError),
    #[error("{docs} docs per claim is more than the corpus of {CORPUS_SIZE}")]
    TooManyDocs { docs: u32 },
    #[error("parsed {got} records, wrote {expected}")]
    Count { expected: u64, got: u64 },
}

/// A small deterministic generator (xorshift64*).
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }
}

/// The `d`-th doc of claim `c` for system `s`: distinct for distinct `d` < [`CORPUS_SIZE`]
/// (104729 is prime to 500000).
fn doc_number(s: u32, c: u32, d: u32) -> u64 {
    (u64::from(c) * 7919 + u64::from(d) * 104_729 + u64::from(s) * 31) % u64::from(CORPUS_SIZE)
}

/// Writes the benchmark run to `path`.
pub fn write_run(path: &Path, shape: BenchShape) -> Result<(), BenchError> {
    if shape.docs_per_claim > CORPUS_SIZE {
        return Err(BenchError::TooManyDocs {
            docs: shape.docs_per_claim,
        });
    }
    let file = std::fs::File::create(path)?;
    let mut writer = RunWriter::new(BufWriter::with_capacity(1 << 20, file));
    let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
    for s in 0..shape.systems {
        let system = format!("system-{s}");
        for c in 1..=shape.claims {
            let claim_id = ClaimId::parse(c.to_string())?;
            for d in 0..shape.docs_per_claim {
                let doc_id = DocId::parse((doc_number(s, c, d) + 1).to_string())?;
                let raw = [noise.unit(), noise.unit(), noise.unit() * 3.0];
                let total: f64 = raw.iter().sum();
                let [ps, pc, pn] = raw.map(|x| x / total);
                let label = if ps >= pc && ps >= pn {
                    Label::Support
                } else if pc >= pn {
                    Label::Contradict
                } else {
                    Label::Nei
                };
                let record = RunRecord {
                    system: Some(system.clone()),
                    claim_id: claim_id.clone(),
                    doc_id,
                    label: Some(label),
                    p_support: Some(Probability::new(ps.min(1.0))?),
                    p_contradict: Some(Probability::new(pc.min(1.0))?),
                    p_nei: Some(Probability::new(pn.min(1.0))?),
                    score: None,
                    rank: Some(d + 1),
                    sentences: Some(vec![d % 7, d % 7 + 2]),
                };
                writer.write(&record)?;
            }
        }
    }
    writer
        .finish()?
        .into_inner()
        .map_err(|e| e.into_error())?
        .sync_all()?;
    Ok(())
}

/// Parses the run at `path`, returning the record count and the sum of confidences.
pub fn parse_run(path: &Path, check_duplicates: bool) -> Result<(u64, f64), BenchError> {
    let options = RunReadOptions {
        check_duplicates,
        ..RunReadOptions::default()
    };
    let mut count = 0u64;
    let mut sum = 0.0;
    for record in RunReader::open(path, RunFormat::Canonical, &options)? {
        let record = record?;
        count += 1;
        sum += record.record.confidence();
    }
    Ok((count, sum))
}

/// CPU time this thread has run, in seconds (first field of /proc/thread-self/schedstat, in ns).
/// The kernel adds to it at scheduler ticks and switches, so work shorter than a tick (a few
/// ms) may read as 0.
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(nanos as f64 / 1e9)
}

/// Generates a run of `shape` in `dir`, times parsing it, then deletes it.
pub fn canonical_run_benchmark(dir: &Path, shape: BenchShape) -> Result<BenchReport, BenchError> {
    let path = dir.join("claimpool-bench-run.jsonl");
    let started = Instant::now();
    write_run(&path, shape)?;
    let write_seconds = started.elapsed().as_secs_f64();
    let file_bytes = std::fs::metadata(&path)?.len();
    let unchecked = timed_parse(&path, shape, false);
    let checked = timed_parse(&path, shape, true);
    std::fs::remove_file(&path)?;
    let (unchecked, checked) = (unchecked?, checked?);
    Ok(BenchReport {
        lines: shape.lines(),
        file_bytes,
        write_seconds,
        parse_unchecked_seconds: unchecked.seconds,
        parse_seconds: checked.seconds,
        parse_unchecked_cpu_seconds: unchecked.cpu_seconds,
        parse_cpu_seconds: checked.cpu_seconds,
        peak_rss_unchecked_kib: unchecked.peak_rss_kib,
        peak_rss_kib: checked.peak_rss_kib,
        confidence_sum: checked.confidence_sum,
    })
}

/// One timed parse.
struct Timing {
    seconds: f64,
    cpu_seconds: Option<f64>,
    peak_rss_kib: Option<u64>,
    confidence_sum: f64,
}

fn timed_parse(path: &Path, shape: BenchShape, check: bool) -> Result<Timing, BenchError> {
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let (got, confidence_sum) = parse_run(path, check)?;
    let seconds = started.elapsed().as_secs_f64();
    let cpu_seconds = cpu_seconds()
        .zip(cpu_before)
        .map(|(after, before)| after - before);
    let expected = shape.lines();
    if got != expected {
        return Err(BenchError::Count { expected, got });
    }
    Ok(Timing {
        seconds,
        cpu_seconds,
        peak_rss_kib: peak_rss_kib(),
        confidence_sum,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_benchmark_writes_and_parses_every_line() {
        let dir = tempfile::tempdir().unwrap();
        let shape = BenchShape {
            systems: 2,
            claims: 30,
            docs_per_claim: 40,
        };
        let report = canonical_run_benchmark(dir.path(), shape).unwrap();
        assert_eq!(report.lines, 2400);
        assert!(report.file_bytes > 2400 * 100);
        // Independent sum of confidences: max(p_support, p_contradict) from the raw JSON.
        let path = dir.path().join("again.jsonl");
        write_run(&path, shape).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut sum = 0.0;
        let mut docs = std::collections::HashSet::new();
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let (s, c) = (
                v["p_support"].as_f64().unwrap(),
                v["p_contradict"].as_f64().unwrap(),
            );
            sum += s.max(c);
            docs.insert((
                v["system"].to_string(),
                v["claim_id"].to_string(),
                v["doc_id"].to_string(),
            ));
        }
        assert_eq!(docs.len(), 2400, "no pair repeats");
        assert_eq!(report.confidence_sum, sum);
        assert!(peak_rss_kib().is_some_and(|kib| kib > 0));
        // A parse this small may take less than one scheduler tick: its CPU time reads as 0
        // on a fast machine (the CI of 2026-11-29 read 0), never below.
        assert!(report.parse_cpu_seconds.is_some_and(|s| s >= 0.0));
    }
}
