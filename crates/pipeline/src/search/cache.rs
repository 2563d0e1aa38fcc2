//! The search index as derived data: a cache directory holds the index of the corpus under the
//! corpus's fingerprint, built from the caller's documents when it is missing.
//!
//! Layout of a cache directory:
//!
//! - `<fingerprint>/`: a complete index (only ever renamed into place once built);
//! - `.building-<random>/`: an index being built (a crashed build's is removed by the next);
//! - `.lock`: the file builders lock, so that one builds while the others wait.
//!
//! The fingerprint is the caller's: any text that changes whenever the indexed documents do
//! (a server hashes the ids and checksums of the project's corpus imports, say), of ASCII
//! letters, digits, `-`, `_` and `.`, not starting with `.`, at most 128 bytes. Each server
//! keeps its own cache directory (the index is one copy per server, built from the shared
//! database), so several servers on one database each build their own.

use super::CorpusSearch;
use crate::error::PipelineError;
use crate::index::{build_index, IndexDoc};
use std::cell::RefCell;
use std::convert::Infallible;
use std::fs::File;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// Name of the file builders lock.
const LOCK_FILE: &str = ".lock";

/// Prefix of the directories indexes are built in.
const BUILDING_PREFIX: &str = ".building-";

/// Longest fingerprint, in bytes.
const MAX_FINGERPRINT_BYTES: usize = 128;

/// The search index of a corpus in a cache directory.
pub struct SearchIndex;

impl SearchIndex {
    /// The index of the corpus `fingerprint` in `cache_dir`, built from `docs` if it is not
    /// there yet; see [`SearchIndex::try_ensure`], of which this is the infallible-source case.
    pub fn ensure(
        cache_dir: &Path,
        fingerprint: &str,
        docs: impl Iterator<Item = IndexDoc>,
        progress: impl FnMut(u64, u64),
    ) -> Result<CorpusSearch, PipelineError> {
        Self::try_ensure(
            cache_dir,
            fingerprint,
            docs.map(Ok::<_, Infallible>),
            progress,
        )
    }

    /// The index of the corpus `fingerprint` in `cache_dir`, opened.
    ///
    /// When `cache_dir/<fingerprint>/` is missing (or does not open), the index is built from
    /// `docs` (read only then) into a temporary directory of `cache_dir`, which is renamed to
    /// `<fingerprint>` once complete: a process never sees half an index, and a build that
    /// fails (a document the source could not read, say) leaves nothing behind. Builders of one
    /// cache directory take turns (a lock on `cache_dir/.lock`, where the file system has
    /// locks), so of two processes or threads asking at once one builds and the other opens
    /// its index. `progress(done, total)` is called every 1,000 documents and at the end of the
    /// build; `total` is what `docs` says of its length ([`Iterator::size_hint`]: exact for a
    /// `Vec`'s, see [`counted`] for a stream), at least `done`.
    ///
    /// The other fingerprints' indexes in `cache_dir` are removed: the cache keeps the corpus
    /// last ensured. A process still searching one of them keeps its open files (on Unix); a
    /// removal that fails is left to the next call.
    pub fn try_ensure<E>(
        cache_dir: &Path,
        fingerprint: &str,
        docs: impl Iterator<Item = Result<IndexDoc, E>>,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<CorpusSearch, PipelineError>
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        check_fingerprint(fingerprint)?;
        std::fs::create_dir_all(cache_dir).map_err(|source| PipelineError::CreateDir {
            dir: cache_dir.to_path_buf(),
            source,
        })?;
        let target = cache_dir.join(fingerprint);
        let lock = BuildLock::take(cache_dir)?;
        if target.is_dir() {
            match CorpusSearch::open(&target) {
                Ok(search) => {
                    remove_others(cache_dir, fingerprint, lock.held());
                    return Ok(search);
                }
                // Not a complete index (one renamed into place always is): built again.
                Err(_) => remove_dir(&target)?,
            }
        }
        remove_others(cache_dir, fingerprint, lock.held());

        let building = tempfile::Builder::new()
            .prefix(BUILDING_PREFIX)
            .tempdir_in(cache_dir)
            .map_err(|source| PipelineError::CreateDir {
                dir: cache_dir.to_path_buf(),
                source,
            })?;
        let (lower, upper) = docs.size_hint();
        let total = upper.unwrap_or(lower) as u64;
        let progress = RefCell::new(&mut progress);
        build_index(building.path(), docs, &|done| {
            let mut progress = progress.borrow_mut();
            (*progress)(done, total.max(done))
        })?;
        match std::fs::rename(building.path(), &target) {
            Ok(()) => {
                // Renamed away: nothing left for the guard to remove.
                let _ = building.keep();
            }
            // Another builder got there first (only without a lock): its index serves.
            Err(_) if target.is_dir() => {}
            Err(source) => {
                return Err(PipelineError::Cache {
                    context: "moving the built index into place as",
                    path: target,
                    source,
                })
            }
        }
        CorpusSearch::open(&target)
    }

    /// The index of the corpus `fingerprint` in `cache_dir` if it is there, without building.
    pub fn open(
        cache_dir: &Path,
        fingerprint: &str,
    ) -> Result<Option<CorpusSearch>, PipelineError> {
        check_fingerprint(fingerprint)?;
        let target = cache_dir.join(fingerprint);
        if !target.is_dir() {
            return Ok(None);
        }
        CorpusSearch::open(&target).map(Some)
    }
}

/// An iterator that knows its length: `docs`, of which there are `total` (a stream of the
/// corpus's rows whose count the caller asked for), so that [`SearchIndex::ensure`]'s
/// progress has a total.
pub fn counted<I: Iterator>(docs: I, total: u64) -> Counted<I> {
    Counted {
        docs,
        left: usize::try_from(total).unwrap_or(usize::MAX),
    }
}

/// See [`counted`].
pub struct Counted<I> {
    docs: I,
    left: usize,
}

impl<I: Iterator> Iterator for Counted<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        let item = self.docs.next();
        self.left = self.left.saturating_sub(1);
        item
    }

    /// The count given, less what was read: a hint, exact only if the count was.
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// A fingerprint must name one directory of the cache, not a hidden one.
fn check_fingerprint(fingerprint: &str) -> Result<(), PipelineError> {
    let problem = if fingerprint.is_empty() {
        Some("it is empty")
    } else if fingerprint.len() > MAX_FINGERPRINT_BYTES {
        Some("it is longer than 128 bytes")
    } else if fingerprint.starts_with('.') {
        Some("it starts with '.'")
    } else if !fingerprint
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        Some("only ASCII letters, digits, '-', '_' and '.' are allowed")
    } else {
        None
    };
    match problem {
        None => Ok(()),
        Some(problem) => Err(PipelineError::BadFingerprint {
            fingerprint: fingerprint.to_owned(),
            problem,
        }),
    }
}

/// The builders' lock on a cache directory, released when dropped.
struct BuildLock(Option<File>);

impl BuildLock {
    /// Waits for the lock; without one where the file system has no locks.
    fn take(cache_dir: &Path) -> Result<BuildLock, PipelineError> {
        let path = cache_dir.join(LOCK_FILE);
        let cache = |context: &'static str| {
            let path = path.clone();
            move |source| PipelineError::Cache {
                context,
                path,
                source,
            }
        };
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(cache("opening the lock file"))?;
        match file.lock() {
            Ok(()) => Ok(BuildLock(Some(file))),
            Err(e) if e.kind() == ErrorKind::Unsupported => Ok(BuildLock(None)),
            Err(e) => Err(cache("locking")(e)),
        }
    }

    /// Whether the lock is held (so no other builder is at work).
    fn held(&self) -> bool {
        self.0.is_some()
    }
}

/// Removes the other fingerprints' indexes and, when `locked` (no build under way), the
/// leftovers of builds that crashed. Best effort: what stays is removed by a later call.
fn remove_others(cache_dir: &Path, fingerprint: &str, locked: bool) {
    let Ok(entries) = std::fs::read_dir(cache_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        let stale = if name.starts_with(BUILDING_PREFIX) {
            locked
        } else {
            !name.starts_with('.') && name != fingerprint
        };
        if is_dir && stale {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Removes an index directory that does not open.
fn remove_dir(dir: &Path) -> Result<(), PipelineError> {
    std::fs::remove_dir_all(dir).map_err(|source| PipelineError::Cache {
        context: "removing the incomplete index",
        path: PathBuf::from(dir),
        source,
    })
}

#[cfg(test)]
mod tests;
