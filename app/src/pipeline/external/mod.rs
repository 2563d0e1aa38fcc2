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

mod command;
mod expected;
mod protocol;
mod stderr;

pub use command::{CommandLineError, ExternalCommand};

use super::candidates::CandidateRetriever;
use super::PipelineError;
use crate::domain::formats::{Claim, ParseError, RunFormat, RunReadOptions, RunReader, RunWriter};
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
    RepeatedClaim(crate::domain::ids::ClaimId),
    #[error(transparent)]
    Retrieval(#[from] PipelineError),
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
            let fed = feed(stdin, retriever, claims, k, &expected, &done, progress);
            if fed.is_err() {
                command::kill_group(pid);
            }
            fed
        });
        let read = read_answers(stdout, &output_name, &expected, &done, progress, out);
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
            claims: claims.len(),
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
    retriever: &CandidateRetriever<'_>,
    claims: &[Claim],
    k: usize,
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
    for claim in claims {
        let (ranking, passages) = retriever.with_passages(&claim.text, k)?;
        let line = protocol::claim_line(&claim.id, &claim.text, &ranking, &passages)
            .map_err(|e| ExternalError::Write(e.into()))?;
        let candidates = ranking
            .hits
            .iter()
            .zip(&passages)
            .map(|(hit, p)| (hit.doc_id.clone(), hit.rank, p.sentences.len()));
        let fresh = expected
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(&claim.id, candidates);
        if !fresh {
            return Err(ExternalError::RepeatedClaim(claim.id.clone()));
        }
        if ranking.hits.is_empty() {
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
        fed.pairs += ranking.hits.len();
    }
    fed.stopped = input.flush().is_err();
    Ok(fed)
}

enum ReadFailure {
    Line(ParseError),
    Read(std::io::Error),
    Write(std::io::Error),
}

/// Reads, checks and writes every answer; returns how many there were.
fn read_answers(
    stdout: ChildStdout,
    name: &str,
    expected: &Mutex<Expected>,
    done: &AtomicU64,
    progress: &(dyn Fn(u64) + Sync),
    out: &mut dyn Write,
) -> Result<usize, ReadFailure> {
    let input: crate::domain::formats::Input = Box::new(BufReader::new(stdout));
    let options = RunReadOptions::default();
    let reader = RunReader::from_input(input, name, RunFormat::Canonical, &options)
        .map_err(|e| ReadFailure::Read(std::io::Error::other(e.to_string())))?;
    let mut writer = RunWriter::new(out);
    let mut answered = 0;
    for item in reader {
        let at = item.map_err(ReadFailure::Line)?;
        let (record, completed) = expected
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .answer(name, at)
            .map_err(ReadFailure::Line)?;
        writer.write(&record).map_err(ReadFailure::Write)?;
        answered += 1;
        if completed == Answered::Claim {
            progress(done.fetch_add(1, Ordering::Relaxed) + 1);
        }
    }
    writer.finish().map_err(ReadFailure::Write)?;
    Ok(answered)
}

#[cfg(test)]
mod tests;
