//! Benchmark of indexing and retrieval on a generated corpus resampled from real abstracts.

use domain::ids::{DocId, IdError};
use pipeline::{build_index_with, IndexDoc, IndexOptions, IndexSummary, PipelineError, Retriever};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::time::{Duration, Instant};

/// What to generate and measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchConfig {
    /// Abstracts in the generated corpus.
    pub docs: u64,
    /// Seed of the generator (the same seed and source give the same corpus).
    pub seed: u64,
    /// Depth of each timed retrieval.
    pub k: usize,
    /// Timed runs of each claim (after one untimed warm-up pass); the fastest counts.
    pub passes: usize,
    /// Index writer settings.
    pub index: IndexOptions,
}

impl Default for BenchConfig {
    /// 500,000 abstracts, top 50, best of 3 passes, seed 2022.
    fn default() -> Self {
        BenchConfig {
            docs: 500_000,
            seed: 2022,
            k: 50,
            passes: 3,
            index: IndexOptions::default(),
        }
    }
}

/// The figures measured.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchReport {
    pub summary: IndexSummary,
    /// Wall time of [`build_index_with`], generation of the documents included.
    pub index_time: Duration,
    /// CPU time (user + system, all threads) the process spent in that build, where the OS
    /// reports it: on a shared machine this is steadier than the wall time.
    pub index_cpu_time: Option<Duration>,
    /// Bytes of all files in the index directory.
    pub index_bytes: u64,
    /// Claims timed.
    pub queries: usize,
    /// Percentiles over the claims of each claim's retrieval time (the fastest of
    /// [`BenchConfig::passes`] timed runs, which filters out waits for a core on a shared
    /// machine).
    pub latency_p50: Duration,
    pub latency_p99: Duration,
    /// Peak resident memory of the process (VmHWM), where the OS reports it.
    pub peak_rss_bytes: Option<u64>,
}

/// Why the benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("the source corpus has no sentence to resample")]
    EmptySource,
    #[error("no claim to time")]
    NoClaims,
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    #[error("measuring the index size of {dir}: {source}")]
    Size {
        dir: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A corpus of `docs` abstracts resampled from `source`: abstract `i` has id `i`, the title of a
/// random source abstract, and as many sentences as another random source abstract, each drawn
/// at random from all source sentences. Lengths thus follow the source's distribution
/// (SciFact: 3 to 367 sentences, mean 8.9).
pub fn synthetic_corpus<'a>(
    source: &'a [IndexDoc],
    docs: u64,
    seed: u64,
) -> Result<impl Iterator<Item = Result<IndexDoc, IdError>> + 'a, BenchError> {
    let sentences: Vec<&str> = source
        .iter()
        .flat_map(|doc| doc.sentences.iter().map(String::as_str))
        .collect();
    if sentences.is_empty() {
        return Err(BenchError::EmptySource);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Ok((0..docs).map(move |i| {
        let title = source[rng.gen_range(0..source.len())].title.clone();
        let length = source[rng.gen_range(0..source.len())].sentences.len();
        let sentences = (0..length)
            .map(|_| sentences[rng.gen_range(0..sentences.len())].to_owned())
            .collect();
        Ok(IndexDoc {
            doc_id: DocId::parse(i.to_string())?,
            title,
            sentences,
        })
    }))
}

/// Builds an index of a [`synthetic_corpus`] in `dir` (missing or empty) and times top-`k`
/// retrieval of each claim.
pub fn run(
    dir: &Path,
    source: &[IndexDoc],
    claims: &[String],
    config: BenchConfig,
    progress: &dyn Fn(u64),
) -> Result<BenchReport, BenchError> {
    if claims.is_empty() {
        return Err(BenchError::NoClaims);
    }
    let corpus = synthetic_corpus(source, config.docs, config.seed)?;
    let cpu_before = cpu_time();
    let started = Instant::now();
    let summary = build_index_with(dir, corpus, progress, config.index)?;
    let index_time = started.elapsed();
    let index_cpu_time = cpu_time()
        .zip(cpu_before)
        .and_then(|(after, before)| after.checked_sub(before));
    let index_bytes = dir_size(dir).map_err(|source| BenchError::Size {
        dir: dir.to_path_buf(),
        source,
    })?;

    let retriever = Retriever::open(dir)?;
    for claim in claims {
        retriever.retrieve(claim, config.k)?;
    }
    let mut latencies = vec![Duration::MAX; claims.len()];
    for _ in 0..config.passes.max(1) {
        for (claim, fastest) in claims.iter().zip(latencies.iter_mut()) {
            let started = Instant::now();
            retriever.retrieve(claim, config.k)?;
            *fastest = (*fastest).min(started.elapsed());
        }
    }
    latencies.sort();
    Ok(BenchReport {
        summary,
        index_time,
        index_cpu_time,
        index_bytes,
        queries: latencies.len(),
        latency_p50: percentile(&latencies, 50),
        latency_p99: percentile(&latencies, 99),
        peak_rss_bytes: peak_rss_bytes(),
    })
}

/// Nearest-rank percentile of sorted values (the smallest value with at least `pct`% of the
/// values at or below it); zero for no values.
pub fn percentile(sorted: &[Duration], pct: usize) -> Duration {
    let rank = (sorted.len() * pct).div_ceil(100).max(1);
    sorted.get(rank - 1).copied().unwrap_or_default()
}

/// Total bytes of the files under `dir`.
pub fn dir_size(dir: &Path) -> std::io::Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        total += if meta.is_dir() {
            dir_size(&entry.path())?
        } else {
            meta.len()
        };
    }
    Ok(total)
}

/// The process's peak resident set size (VmHWM in /proc/self/status), on Linux.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

/// Clock ticks per second in /proc (USER_HZ, 100 on every Linux architecture).
const USER_HZ: u64 = 100;

/// CPU time the process has used so far (utime + stime in /proc/self/stat), on Linux.
pub fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) may hold spaces; the fields after its closing ')' are plain.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = utime.checked_add(stime)?;
    Some(Duration::from_millis(ticks.checked_mul(1000 / USER_HZ)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn source() -> Vec<IndexDoc> {
        let doc = |id: &str, title: &str, sentences: &[&str]| IndexDoc {
            doc_id: DocId::parse(id).unwrap(),
            title: title.to_owned(),
            sentences: sentences.iter().map(|s| (*s).to_owned()).collect(),
        };
        vec![
            doc("1", "Tau", &["Tau forms tangles.", "Tangles kill neurons."]),
            doc("2", "Statins", &["Statins lower LDL."]),
            doc(
                "3",
                "Sleep",
                &["Sleep clears amyloid.", "Mice slept.", "Rats too."],
            ),
        ]
    }

    #[test]
    fn synthetic_corpus_resamples_the_source_reproducibly() {
        let source = source();
        let titles: HashSet<&str> = source.iter().map(|d| d.title.as_str()).collect();
        let sentences: HashSet<&str> = source
            .iter()
            .flat_map(|d| d.sentences.iter().map(String::as_str))
            .collect();
        let docs: Vec<IndexDoc> = synthetic_corpus(&source, 300, 5)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(docs.len(), 300);
        for (i, doc) in docs.iter().enumerate() {
            assert_eq!(doc.doc_id.as_str(), i.to_string());
            assert!(titles.contains(doc.title.as_str()));
            assert!([1, 2, 3].contains(&doc.sentences.len()));
            assert!(doc.sentences.iter().all(|s| sentences.contains(s.as_str())));
        }
        // Every length and title of the source turns up; same seed, same corpus.
        let lengths: HashSet<usize> = docs.iter().map(|d| d.sentences.len()).collect();
        assert_eq!(lengths.len(), 3);
        assert_eq!(
            docs.iter().map(|d| &d.title).collect::<HashSet<_>>().len(),
            3
        );
        let again: Vec<IndexDoc> = synthetic_corpus(&source, 300, 5)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(again, docs);
        let other: Vec<IndexDoc> = synthetic_corpus(&source, 300, 6)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_ne!(other, docs);
        assert!(matches!(
            synthetic_corpus(&[], 1, 0).err(),
            Some(BenchError::EmptySource)
        ));
    }

    #[test]
    fn percentile_is_nearest_rank() {
        let values: Vec<Duration> = (1..=200).map(Duration::from_millis).collect();
        assert_eq!(percentile(&values, 50), Duration::from_millis(100));
        assert_eq!(percentile(&values, 99), Duration::from_millis(198));
        assert_eq!(percentile(&values, 100), Duration::from_millis(200));
        assert_eq!(percentile(&values[..1], 99), Duration::from_millis(1));
        assert_eq!(percentile(&[], 50), Duration::ZERO);
    }

    #[test]
    fn runs_on_a_small_corpus() {
        let dir = tempfile::tempdir().unwrap();
        let claims = vec!["tau tangles".to_owned(), "statins".to_owned()];
        let config = BenchConfig {
            docs: 2_000,
            passes: 1,
            ..BenchConfig::default()
        };
        let report = run(dir.path(), &source(), &claims, config, &|_| {}).unwrap();
        assert_eq!(report.summary.documents, 2_000);
        assert_eq!(report.queries, 2);
        assert!(report.index_bytes > 0);
        assert!(report.latency_p50 <= report.latency_p99);
        assert!(report.peak_rss_bytes.is_none_or(|bytes| bytes > 1 << 20));
        let err = run(dir.path(), &source(), &[], config, &|_| {}).unwrap_err();
        assert!(matches!(err, BenchError::NoClaims));
    }
}
