//! Search benchmark (issue 38, "Search and judge"): a generated corpus of 500,000 abstracts is
//! indexed once through `SearchIndex::ensure` into a temporary cache directory, then 200
//! claim-like queries are searched for their first page (`CorpusSearch::search(query, 0)`:
//! count, top 20, titles, snippets, matched words). Target: search p95 under 50 ms. Exits
//! non-zero when the p95 of the timed searches is 50 ms or more.
//!
//! `cargo bench -p server --bench search [-- --docs N] [--queries Q] [--passes P] [--seed S]`
//!
//! The corpus: words drawn from a Zipf distribution (exponent 1) over a vocabulary of 200,000
//! ranks whose 33 most frequent are the English stop words the analyser removes (as in real
//! text, where they are the most frequent words) and the rest generated pseudo-words; each
//! abstract also has a topic (one of 2,000, each of 40 mid-frequency words) from which a fifth
//! of its words come, so that some abstracts are about a claim's words and others only share
//! a few. An abstract is 150 to 250 words in sentences of 12 to 30, under a title of 6 to 14.
//! A query is 8 to 20 consecutive words of a random abstract's text, as a claim restates
//! what an abstract says. Everything is drawn from one seed: the same seed, the same figures
//! of the corpus.

use app::pipeline::search::{counted, SearchIndex};
use app::pipeline::{IndexDoc, Retriever};
use benchdata::index::{cpu_time, dir_size, peak_rss_bytes, percentile};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

/// The target of the issue.
const P95_TARGET: Duration = Duration::from_millis(50);

/// Lucene's English stop words (the analyser's list), the most frequent ranks of the corpus.
const STOP_WORDS: [&str; 33] = [
    "the", "of", "and", "a", "to", "in", "is", "that", "for", "with", "as", "by", "on", "are",
    "was", "be", "this", "at", "it", "or", "an", "not", "these", "such", "into", "their", "but",
    "there", "will", "then", "if", "no", "they",
];

const VOCABULARY: usize = 200_000;
const TOPICS: usize = 2_000;
const TOPIC_WORDS: usize = 40;
/// Topic words are drawn from these ranks: frequent enough to recur, rare enough to
/// distinguish.
const TOPIC_RANKS: std::ops::Range<usize> = 300..50_000;
/// Share of an abstract's words drawn from its topic.
const TOPIC_SHARE: f64 = 0.2;

struct Corpus {
    seed: u64,
    words: Vec<String>,
    /// Cumulative Zipf weights of the ranks.
    cumulative: Vec<f64>,
    topics: Vec<[u32; TOPIC_WORDS]>,
}

impl Corpus {
    fn new(seed: u64) -> Corpus {
        const CONSONANTS: &[u8] = b"bcdfghklmnprstvz";
        const VOWELS: &[u8] = b"aeiou";
        let syllables: Vec<String> = CONSONANTS
            .iter()
            .flat_map(|&c| {
                VOWELS
                    .iter()
                    .map(move |&v| format!("{}{}", c as char, v as char))
            })
            .collect();
        let n = syllables.len();
        let mut words: Vec<String> = STOP_WORDS.iter().map(|w| (*w).to_owned()).collect();
        let mut i = 0usize;
        while words.len() < VOCABULARY {
            // Two syllables for the first n², three after: every pseudo-word distinct.
            let word = if i < n * n {
                format!("{}{}", syllables[i / n], syllables[i % n])
            } else {
                let j = i - n * n;
                format!(
                    "{}{}{}",
                    syllables[j / (n * n) % n],
                    syllables[j / n % n],
                    syllables[j % n]
                )
            };
            words.push(word);
            i += 1;
        }
        let mut total = 0.0;
        let cumulative = (1..=VOCABULARY)
            .map(|rank| {
                total += 1.0 / rank as f64;
                total
            })
            .collect();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let topics = (0..TOPICS)
            .map(|_| std::array::from_fn(|_| rng.gen_range(TOPIC_RANKS) as u32))
            .collect();
        Corpus {
            seed,
            words,
            cumulative,
            topics,
        }
    }

    fn zipf(&self, rng: &mut ChaCha8Rng) -> usize {
        let total = self.cumulative[VOCABULARY - 1];
        let u = rng.gen::<f64>() * total;
        self.cumulative
            .partition_point(|&c| c < u)
            .min(VOCABULARY - 1)
    }

    /// The words of abstract `i`: title, then the abstract's sentences.
    fn doc_words(&self, i: u64) -> (Vec<usize>, Vec<Vec<usize>>) {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(i + 1);
        let topic = &self.topics[rng.gen_range(0..TOPICS)];
        let word = |rng: &mut ChaCha8Rng| {
            if rng.gen_bool(TOPIC_SHARE) {
                topic[rng.gen_range(0..TOPIC_WORDS)] as usize
            } else {
                self.zipf(rng)
            }
        };
        let title_len = rng.gen_range(6..=14);
        let title = (0..title_len).map(|_| word(&mut rng)).collect();
        let mut left: usize = rng.gen_range(150..=250);
        let mut sentences = Vec::new();
        while left > 0 {
            let len = rng.gen_range(12..=30usize).min(left);
            sentences.push((0..len).map(|_| word(&mut rng)).collect());
            left -= len;
        }
        (title, sentences)
    }

    fn text(&self, words: &[usize], sentence: bool) -> String {
        let mut text = String::with_capacity(words.len() * 8);
        for (k, &w) in words.iter().enumerate() {
            if k > 0 {
                text.push(' ');
            }
            let word = &self.words[w];
            if k == 0 {
                let mut chars = word.chars();
                if let Some(first) = chars.next() {
                    text.extend(first.to_uppercase());
                    text.push_str(chars.as_str());
                }
            } else {
                text.push_str(word);
            }
        }
        if sentence {
            text.push('.');
        }
        text
    }

    fn doc(&self, i: u64) -> IndexDoc {
        let (title, sentences) = self.doc_words(i);
        IndexDoc {
            doc_id: app::domain::ids::DocId::parse(i.to_string())
                .unwrap_or_else(|e| panic!("doc id {i}: {e}")),
            title: self.text(&title, false),
            sentences: sentences.iter().map(|s| self.text(s, true)).collect(),
        }
    }

    /// 8 to 20 consecutive words of a random abstract's text.
    fn claim(&self, rng: &mut ChaCha8Rng, docs: u64) -> String {
        let (_, sentences) = self.doc_words(rng.gen_range(0..docs));
        let words: Vec<usize> = sentences.concat();
        let len = rng.gen_range(8..=20usize).min(words.len());
        let start = rng.gen_range(0..=words.len() - len);
        self.text(&words[start..start + len], false)
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn summary(label: &str, mut times: Vec<Duration>) -> Duration {
    times.sort();
    let p95 = percentile(&times, 95);
    println!(
        "{label}: {} searches, p50 {}, p95 {}, p99 {}, max {}",
        times.len(),
        ms(percentile(&times, 50)),
        ms(p95),
        ms(percentile(&times, 99)),
        ms(times.last().copied().unwrap_or_default()),
    );
    p95
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut docs = 500_000u64;
    let mut queries = 200usize;
    let mut passes = 3usize;
    let mut seed = 38u64;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || -> Result<u64, String> {
            args.next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{arg} needs a number"))
        };
        match arg.as_str() {
            "--docs" => docs = value()?,
            "--queries" => queries = value()? as usize,
            "--passes" => passes = (value()? as usize).max(1),
            "--seed" => seed = value()?,
            "--bench" => {}
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let corpus = Corpus::new(seed);
    let cache = tempfile::tempdir()?;
    let fingerprint = format!("bench-{seed}-{docs}");
    println!(
        "corpus: {docs} generated abstracts (seed {seed}); cache {}",
        cache.path().display()
    );

    let cpu_before = cpu_time();
    let started = Instant::now();
    let mut last_report = Instant::now();
    let mut printed = 0;
    let search = SearchIndex::ensure(
        cache.path(),
        &fingerprint,
        counted((0..docs).map(|i| corpus.doc(i)), docs),
        |done, total| {
            if last_report.elapsed() >= Duration::from_secs(15) || (done == total && done > printed)
            {
                printed = done;
                println!(
                    "  indexed {done}/{total} after {:.0} s",
                    started.elapsed().as_secs_f64()
                );
                last_report = Instant::now();
            }
        },
    )?;
    let build = started.elapsed();
    let build_cpu = cpu_time()
        .zip(cpu_before)
        .and_then(|(after, before)| after.checked_sub(before));
    let index_dir = cache.path().join(&fingerprint);
    println!(
        "index: {} abstracts built in {:.1} s (generation included; CPU {}), {:.0} MiB",
        search.num_docs(),
        build.as_secs_f64(),
        build_cpu.map_or("unknown".into(), |t| format!("{:.1} s", t.as_secs_f64())),
        dir_size(&index_dir)? as f64 / (1024.0 * 1024.0),
    );
    let started = Instant::now();
    let search = SearchIndex::ensure(cache.path(), &fingerprint, std::iter::empty(), |_, _| {})?;
    println!(
        "index: opened again (present, not rebuilt) in {}",
        ms(started.elapsed())
    );

    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let claims: Vec<String> = (0..queries).map(|_| corpus.claim(&mut rng, docs)).collect();
    println!(
        "queries: {} claims of 8-20 words, e.g. {:?}",
        claims.len(),
        claims.first()
    );

    // Warm-up: every query once, untimed (the server's steady state has the index's hot pages
    // in memory).
    let mut hits = 0u64;
    let mut matched = 0usize;
    for claim in &claims {
        let page = search.search(claim, 0)?;
        hits += page.total_hits;
        matched += page.hits.first().map_or(0, |hit| hit.matched_terms.len());
    }
    println!(
        "queries: {:.0} results each on average; the top result contains {:.1} of the query's words on average",
        hits as f64 / claims.len().max(1) as f64,
        matched as f64 / claims.len().max(1) as f64
    );

    let mut first_pages = Vec::new();
    let mut second_pages = Vec::new();
    let mut retrieval = Vec::new();
    let retriever = Retriever::open(&index_dir)?;
    for _ in 0..passes {
        for claim in &claims {
            let t = Instant::now();
            std::hint::black_box(search.search(claim, 0)?);
            first_pages.push(t.elapsed());
        }
        for claim in &claims {
            let t = Instant::now();
            std::hint::black_box(search.search(claim, 1)?);
            second_pages.push(t.elapsed());
            let t = Instant::now();
            std::hint::black_box(retriever.retrieve(claim, 20)?);
            retrieval.push(t.elapsed());
        }
    }
    let p95 = summary("search(query, 0)", first_pages);
    summary("search(query, 1)", second_pages);
    summary(
        "top 20 alone (Retriever::retrieve, no count or snippets)",
        retrieval,
    );
    println!(
        "peak RSS {}; load average {}",
        peak_rss_bytes().map_or("unknown".into(), |b| format!(
            "{:.0} MiB",
            b as f64 / 1048576.0
        )),
        std::fs::read_to_string("/proc/loadavg")
            .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|_| "unknown".into())
    );
    if p95 >= P95_TARGET {
        eprintln!(
            "FAIL: search p95 {} is not under {}",
            ms(p95),
            ms(P95_TARGET)
        );
        std::process::exit(1);
    }
    println!("ok: search p95 {} < {}", ms(p95), ms(P95_TARGET));
    Ok(())
}
