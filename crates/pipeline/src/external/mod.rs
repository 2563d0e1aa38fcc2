//! The external scorer: a user's command (MultiVerS, VerT5erini, an LLM on their own GPU
//! machine, ...) reads claims with their candidate abstracts as JSONL on stdin
//! ([`protocol`]) and writes per-pair predictions as canonical run JSONL on stdout:
//!
//! `{"claim_id", "doc_id", "predicted_label", "p_support", "p_contradict", "p_nei"?, "sentences"?}`
//!
//! Every output line is read by the canonical run reader (so JSON, ids, labels, probabilities
//! and repeated pairs are checked exactly as a run import checks them) and must answer a pair
//! that was sent ([`expected`]). The first bad line, a non-zero exit, a crash, or pairs left
//! unanswered stop the run with an error naming the output line and field, with the end of the
//! command's stderr; the caller writes its output to a temporary file and keeps it only on
//! success.
//!
//! The command runs without a shell ([`ExternalCommand::parse`]). Claims are written on their own
//! thread while predictions are read, and stderr is drained on a third, so neither side can
//! block the other however the command buffers; only the open pairs are held in memory.
//!
//! [`run_external`] sends each claim with its retrieved candidates and writes a run file;
//! [`exchange`] is the same conversation over any candidates (a model assessor sends the pooled
//! pairs) and hands each checked prediction to its caller.

mod command;
mod expected;
mod protocol;
mod stderr;

pub use command::{CommandLineError, ExternalCommand};

use super::candidates::CandidateRetriever;
use super::{Passage, PipelineError, Ranking};
use domain::formats::{
    Claim, ParseError, RunFormat, RunReadOptions, RunReader, RunRecord, RunWriter,
};
use domain::ids::{ClaimId, DocId};
use expected::{Answered, Expected};
use std::io::{BufReader, BufWriter, Write};
use std::process::{ChildStdin, ChildStdout, ExitStatus};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// A failed external run. Nothing it produced should be kept.
#[derive(Debug, thiserror::Error)]
pub enum ExternalError {
    #[error("cannot start `{command}`: {error}")]
    Spawn {
        command: String,
        error: std::io::Error,
    },
    #[error("{error}{stderr}")]
    Output {
        error: ParseError,
        /// The end of the command's stderr, formatted for appending (empty when it was silent).
        stderr: StderrTail,
    },
    #[error("`{command}` failed ({status}){stderr}")]
    Exit {
        command: String,
        status: ExitStatus,
        stderr: StderrTail,
    },
    #[error(
        "`{command}` answered {answered} of {sent} pairs: no prediction for {} ({missing} in all){}{stderr}",
        .examples.join(", "),
        .stopped.map(|n| format!("; it stopped reading its input after {n} of {} claims", .claims)).unwrap_or_default()
    )]
    Missing {
        command: String,
        sent: usize,
        answered: usize,
        missing: usize,
        /// A few of the unanswered pairs, as "claim C / doc D".
        examples: Vec<String>,
        claims: usize,
        /// Claims written before the command closed its input, when it did so early.
        stopped: Option<usize>,
        stderr: StderrTail,
    },
    #[error("claim {0} is given twice: each claim is sent once")]
    RepeatedClaim(domain::ids::ClaimId),
    #[error(transparent)]
    Retrieval(#[from] PipelineError),
    /// The claims to send could not be read (the caller's own source of candidates).
    #[error("reading the claims to send: {0}")]
    Input(String),
    #[error("writing the run: {0}")]
    Write(std::io::Error),
    #[error("reading the output of `{command}`: {error}")]
    Read {
        command: String,
        error: std::io::Error,
    },
    #[error("the external scorer's {0} thread panicked")]
    Panicked(&'static str),
}

pub use stderr::StderrTail;

/// What a successful run wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExternalSummary {
    /// Claims sent.
    pub claims: usize,
    /// Pairs sent, all answered and written.
    pub pairs: usize,
}

/// How many unanswered pairs an error lists.
const MISSING_EXAMPLES: usize = 3;

/// One claim as the command reads it ([`protocol`]): the claim and its candidate abstracts, in
/// the order they are sent.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimRequest {
    pub claim_id: ClaimId,
    pub claim: String,
    pub candidates: Vec<Candidate>,
}

/// A candidate abstract of a claim.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub doc_id: DocId,
    pub title: String,
    pub sentences: Vec<String>,
    /// 1-based place in the claim's candidates.
    pub rank: u32,
    /// The abstract's BM25 score for the claim; `None` (the field left out) for candidates that
    /// BM25 did not rank.
    pub bm25_score: Option<f32>,
}

impl ClaimRequest {
    /// A claim with a retriever's ranking and the passages of its hits (in the same order).
    pub fn retrieved(
        claim_id: ClaimId,
        claim: impl Into<String>,
        ranking: Ranking,
        passages: Vec<Passage>,
    ) -> ClaimRequest {
        let candidates = ranking
            .hits
            .into_iter()
            .zip(passages)
            .map(|(hit, passage)| Candidate {
                doc_id: hit.doc_id,
                title: passage.title,
                sentences: passage.sentences,
                rank: hit.rank,
                bm25_score: Some(hit.score),
            })
            .collect();
        ClaimRequest {
            claim_id,
            claim: claim.into(),
            candidates,
        }
    }
}

/// Runs `command` over the top `k` candidates of every claim and writes its validated
/// predictions to `out` as canonical run JSONL (the retrieval rank added), in the order the
/// command gives them. `progress` gets the number of claims fully answered. Setting `stop`
/// kills the command (its process group) within a tenth of a second: a cancelled or timed-out
/// job, whatever the command is doing.
pub fn run_external(
    retriever: &CandidateRetriever<'_>,
    claims: &[Claim],
    k: usize,
    command: &ExternalCommand,
    out: &mut dyn Write,
    progress: &(dyn Fn(u64) + Sync),
    stop: &AtomicBool,
) -> Result<ExternalSummary, ExternalError> {
    let requests = claims.iter().map(|claim| {
        let (ranking, passages) = retriever.with_passages(&claim.text, k)?;
        Ok(ClaimRequest::retrieved(
            claim.id.clone(),
            claim.text.as_str(),
            ranking,
            passages,
        ))
    });
    let mut writer = RunWriter::new(out);
    let summary = exchange(
        command,
        requests,
        claims.len(),
        &mut |record| writer.write(&record),
        progress,
        stop,
    )?;
    writer.finish().map_err(ExternalError::Write)?;
    Ok(summary)
}

/// Runs `command` once over `requests` (`claims` of them, for messages), made lazily on the
/// thread that writes them, and hands each checked prediction to `answer` in the order the
/// command gives them, with the rank that was sent (score and system cleared). Every output
/// line is checked as [`run_external`] checks it, and every sent pair must be answered; on any
/// error the caller keeps nothing `answer` was given. `progress` and `stop` as for
/// [`run_external`]; an error of `answer` stops the run as [`ExternalError::Write`].
pub fn exchange<I>(
    command: &ExternalCommand,
    requests: I,
    claims: usize,
    answer: &mut dyn FnMut(RunRecord) -> std::io::Result<()>,
    progress: &(dyn Fn(u64) + Sync),
    stop: &AtomicBool,
) -> Result<ExternalSummary, ExternalError>
where
    I: Iterator<Item = Result<ClaimRequest, ExternalError>> + Send,
{
    let shown = command.to_string();
    let spawn_error = |error| ExternalError::Spawn {
        command: shown.clone(),
        error,
    };
    let mut running = command.spawn().map_err(spawn_error)?;
    let pipes = (
        running.child.stdin.take(),
        running.child.stdout.take(),
        running.child.stderr.take(),
    );
    let (Some(stdin), Some(stdout), Some(stderr)) = pipes else {
        running.kill();
        let _ = running.child.wait();
        return Err(spawn_error(std::io::Error::other(
            "its pipes were not opened",
        )));
    };
    let pid = running.child.id();
    let expected = Mutex::new(Expected::default());
    let done = AtomicU64::new(0);
    let output_name = format!("stdout of `{shown}`");

    let ended = AtomicBool::new(false);
    let (fed, read, status, stderr) = std::thread::scope(|scope| {
        let tail = scope.spawn(move || StderrTail::collect(stderr));
        scope.spawn(|| {
            while !ended.load(Ordering::Relaxed) {
                if stop.load(Ordering::Relaxed) {
                    command::kill_group(pid);
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        });
        let feeder = scope.spawn(|| {
            let fed = feed(stdin, requests, &expected, &done, progress);
            if fed.is_err() {
                command::kill_group(pid);
            }
            fed
        });
        let read = read_answers(stdout, &output_name, &expected, &done, progress, answer);
        if read.is_err() {
            running.kill();
        }
        let fed = feeder
            .join()
            .unwrap_or(Err(ExternalError::Panicked("input")));
        if fed.is_err() {
            running.kill();
        }
        let status = running.child.wait();
        ended.store(true, Ordering::Relaxed);
        let stderr = tail.join().unwrap_or_default();
        (fed, read, status, stderr)
    });

    let fed = fed?;
    let answered = match read {
        Ok(answered) => answered,
        Err(ReadFailure::Line(error)) => return Err(ExternalError::Output { error, stderr }),
        Err(ReadFailure::Write(e)) => return Err(ExternalError::Write(e)),
        Err(ReadFailure::Read(error)) => {
            return Err(ExternalError::Read {
                command: shown,
                error,
            })
        }
    };
    let status = status.map_err(|error| ExternalError::Read {
        command: shown.clone(),
        error,
    })?;
    if !status.success() {
        return Err(ExternalError::Exit {
            command: shown,
            status,
            stderr,
        });
    }
    let expected = expected.into_inner().unwrap_or_else(|e| e.into_inner());
    let (missing, examples) = expected.missing(MISSING_EXAMPLES);
    if missing > 0 || fed.stopped {
        return Err(ExternalError::Missing {
            command: shown,
            sent: fed.pairs,
            answered,
            missing,
            examples: examples
                .iter()
                .map(|(c, d)| format!("claim {c} / doc {d}"))
                .collect(),
            claims,
            stopped: fed.stopped.then_some(fed.claims),
            stderr,
        });
    }
    Ok(ExternalSummary {
        claims: fed.claims,
        pairs: fed.pairs,
    })
}

/// What the input thread wrote.
struct Fed {
    claims: usize,
    pairs: usize,
    /// The command closed its input before every claim was written.
    stopped: bool,
}

/// Writes one line per claim to the command's stdin, registering its pairs first; closes stdin
/// at the end. A write error means the command stopped reading: not an error of its own here
/// (the exit status or the unanswered pairs tell what happened).
fn feed(
    stdin: ChildStdin,
    requests: impl Iterator<Item = Result<ClaimRequest, ExternalError>>,
    expected: &Mutex<Expected>,
    done: &AtomicU64,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Fed, ExternalError> {
    let mut input = BufWriter::new(stdin);
    let mut fed = Fed {
        claims: 0,
        pairs: 0,
        stopped: false,
    };
    for request in requests {
        let request = request?;
        let line = protocol::claim_line(&request).map_err(|e| ExternalError::Write(e.into()))?;
        let candidates = request
            .candidates
            .iter()
            .map(|c| (c.doc_id.clone(), c.rank, c.sentences.len()));
        let fresh = expected
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(&request.claim_id, candidates);
        if !fresh {
            return Err(ExternalError::RepeatedClaim(request.claim_id));
        }
        if request.candidates.is_empty() {
            progress(done.fetch_add(1, Ordering::Relaxed) + 1);
        }
        let written = input
            .write_all(line.as_bytes())
            .and_then(|()| input.write_all(b"\n"))
            .and_then(|()| input.flush());
        if written.is_err() {
            fed.stopped = true;
            return Ok(fed);
        }
        fed.claims += 1;
        fed.pairs += request.candidates.len();
    }
    fed.stopped = input.flush().is_err();
    Ok(fed)
}

enum ReadFailure {
    Line(ParseError),
    Read(std::io::Error),
    Write(std::io::Error),
}

/// Reads and checks every answer and hands it on; returns how many there were.
fn read_answers(
    stdout: ChildStdout,
    name: &str,
    expected: &Mutex<Expected>,
    done: &AtomicU64,
    progress: &(dyn Fn(u64) + Sync),
    answer: &mut dyn FnMut(RunRecord) -> std::io::Result<()>,
) -> Result<usize, ReadFailure> {
    let input: domain::formats::Input = Box::new(BufReader::new(stdout));
    let options = RunReadOptions::default();
    let reader = RunReader::from_input(input, name, RunFormat::Canonical, &options)
        .map_err(|e| ReadFailure::Read(std::io::Error::other(e.to_string())))?;
    let mut answered = 0;
    for item in reader {
        let at = item.map_err(ReadFailure::Line)?;
        let (record, completed) = expected
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .answer(name, at)
            .map_err(ReadFailure::Line)?;
        answer(record).map_err(ReadFailure::Write)?;
        answered += 1;
        if completed == Answered::Claim {
            progress(done.fetch_add(1, Ordering::Relaxed) + 1);
        }
    }
    Ok(answered)
}

#[cfg(test)]
mod tests;
