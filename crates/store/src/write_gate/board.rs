//! What the writers of one SQLite file tell each other across processes: `<database>-writers`,
//! a small file beside the database that every process writing it maps into memory, read and
//! written with atomic operations (as SQLite shares its own `-shm` file).
//!
//! [`super::Gate`] orders the writers of one process. A second process on the same file (a lead's
//! `claimpool import run` at the shell next to the running server) is outside that queue: its
//! run import wrote chunk after chunk, each begun the moment the last committed, while the
//! server's submissions polled SQLite's lock on its growing back-off and kept missing the gaps
//! (the annotate benchmark: p99 1,454 ms). On the board a writer says that it is waiting for
//! the write lock; a bulk writer of any process reads it before each chunk and waits its turn
//! after the waiting writer's ([`super::Gate::blocking_turn`]).
//!
//! One slot of 8 bytes is used, written whole (the rest of the 64 are spare):
//!
//! - `waiting`: a writer waiting for SQLite's write lock, `(milliseconds since the Unix epoch
//!   << 20) | process id` (every process's clock is the machine's), or 0. Each process's writers take turns first ([`super::Gate`]), so at most one writer per
//!   process waits for the lock; the writer clears the slot once it has the lock, unless a
//!   writer of another process marked it meanwhile. A mark is believed for [`FRESH`] only: a
//!   process that died while waiting leaves a mark that soon counts for nothing.
//!
//! Where the file cannot be made or mapped (a read-only directory, another operating system),
//! a process writes without it, as before; where it can only be read, the process reads it.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How long a mark counts: a writer waiting longer than this is no longer given way to (it is
/// not stuck behind bulk chunks, whose waits are milliseconds, but something else).
pub(crate) const FRESH: Duration = Duration::from_secs(1);

/// The board's size in bytes: one slot used, the rest spare (one cache line).
const SIZE: u64 = 64;
/// The slot, as the index of an 8-byte word.
const WAITING: usize = 0;
/// Bits of a waiting mark below its milliseconds (the process id's).
const PID_BITS: u32 = 20;

/// A database file's board, mapped into this process.
pub(crate) struct Board {
    map: mapping::Mapping,
    path: PathBuf,
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Board").field("path", &self.path).finish()
    }
}

/// The board's file of the database file `db_file`.
pub(crate) fn path_of(db_file: &Path) -> PathBuf {
    let mut name = db_file.as_os_str().to_owned();
    name.push("-writers");
    PathBuf::from(name)
}

impl Board {
    /// Opens (creating it if missing) the board of the database file `db_file`; read only where
    /// this process may not write it.
    pub(crate) fn open(db_file: &Path) -> std::io::Result<Board> {
        let path = path_of(db_file);
        let (file, writable) = match OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
        {
            Ok(file) => (file, true),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                (File::open(&path)?, false)
            }
            Err(e) => return Err(e),
        };
        // Each process makes sure of the length before it maps the file (a mapping beyond the
        // end of a file faults); the file only ever grows, to the same length.
        if file.metadata()?.len() < SIZE {
            if !writable {
                return Err(std::io::Error::other("the board is shorter than a board"));
            }
            file.set_len(SIZE)?;
        }
        let map = mapping::Mapping::new(&file, SIZE as usize, writable)?;
        Ok(Board { map, path })
    }

    fn slot(&self, i: usize) -> &AtomicU64 {
        self.map.word(i)
    }

    /// The board's file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Marks this process's writer as waiting for the write lock until the mark is dropped.
    pub(crate) fn wait(&self) -> Waiting<'_> {
        let mark = (epoch_ms() << PID_BITS) | u64::from(std::process::id() & ((1 << PID_BITS) - 1));
        if self.map.writable() {
            self.slot(WAITING).store(mark, Ordering::Release);
        }
        Waiting { board: self, mark }
    }

    /// Whether a writer (of any process) is waiting for the write lock at `now` (milliseconds
    /// since the Unix epoch): it marked the board within [`FRESH`] and has not cleared it.
    pub(crate) fn writer_waiting(&self, now: u64) -> bool {
        let mark = self.slot(WAITING).load(Ordering::Acquire);
        mark != 0 && within(mark >> PID_BITS, now, FRESH)
    }
}

/// A writer's mark on the board, cleared when dropped (the writer has the lock, or gave up).
pub(crate) struct Waiting<'b> {
    board: &'b Board,
    mark: u64,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.board.map.writable() {
            // Another process's writer may have marked the slot since: its mark stays.
            let _ = self.board.slot(WAITING).compare_exchange(
                self.mark,
                0,
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
        }
    }
}

/// Milliseconds since the Unix epoch (0 before it).
pub(crate) fn epoch_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX >> PID_BITS))
        .unwrap_or(0)
}

/// Whether `at` (milliseconds since the Unix epoch; 0: never) lies within `window` of `now`.
/// Either way: a mark ahead of this process's clock (another process read the clock a moment
/// later, or the clock was set back) counts only while it is as close.
pub(crate) fn within(at: u64, now: u64, window: Duration) -> bool {
    let window = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
    at != 0 && at.abs_diff(now) <= window
}

#[cfg(unix)]
mod mapping {
    use std::fs::File;
    use std::os::fd::AsRawFd;
    use std::ptr::NonNull;
    use std::sync::atomic::AtomicU64;

    /// A shared mapping of the start of a file, unmapped when dropped.
    pub(super) struct Mapping {
        base: NonNull<AtomicU64>,
        len: usize,
        writable: bool,
    }

    // SAFETY: the mapping is only ever accessed through atomics, which any thread may use.
    unsafe impl Send for Mapping {}
    // SAFETY: as above.
    unsafe impl Sync for Mapping {}

    impl Mapping {
        /// Maps the first `len` bytes of `file` (at least `len` long), shared with every
        /// process mapping it.
        pub(super) fn new(file: &File, len: usize, writable: bool) -> std::io::Result<Mapping> {
            let protection = if writable {
                libc::PROT_READ | libc::PROT_WRITE
            } else {
                libc::PROT_READ
            };
            // SAFETY: a new shared mapping of an open file's first `len` bytes (the caller made
            // the file that long); no existing memory is touched.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    protection,
                    libc::MAP_SHARED,
                    file.as_raw_fd(),
                    0,
                )
            };
            if base == libc::MAP_FAILED {
                return Err(std::io::Error::last_os_error());
            }
            let base = NonNull::new(base.cast::<AtomicU64>())
                .ok_or_else(|| std::io::Error::other("mmap gave a null mapping"))?;
            Ok(Mapping {
                base,
                len,
                writable,
            })
        }

        pub(super) fn writable(&self) -> bool {
            self.writable
        }

        /// The `i`th 8-byte word of the mapping.
        pub(super) fn word(&self, i: usize) -> &AtomicU64 {
            assert!((i + 1) * 8 <= self.len, "a word beyond the board");
            // SAFETY: in bounds (checked above); the mapping is page-aligned, so every word is
            // aligned for an AtomicU64; it lives as long as `self`; every access, in this
            // process or another, is atomic.
            unsafe { &*self.base.as_ptr().add(i) }
        }
    }

    impl Drop for Mapping {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `new`, no longer borrowed (borrows end with `self`).
            unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
        }
    }
}

#[cfg(not(unix))]
mod mapping {
    use std::fs::File;
    use std::sync::atomic::AtomicU64;

    /// No mapping here: the board is not available, and writers of one process order only
    /// themselves, as before.
    pub(super) struct Mapping(std::convert::Infallible);

    impl Mapping {
        pub(super) fn new(_: &File, _: usize, _: bool) -> std::io::Result<Mapping> {
            Err(std::io::Error::other("no shared board on this platform"))
        }
        pub(super) fn writable(&self) -> bool {
            match self.0 {}
        }
        pub(super) fn word(&self, _: usize) -> &AtomicU64 {
            match self.0 {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_mappings_of_one_file_see_each_others_marks() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("a.db");
        let (a, b) = (Board::open(&db).unwrap(), Board::open(&db).unwrap());
        assert!(!b.writer_waiting(epoch_ms()), "a new board: nobody waits");
        let waiting = a.wait();
        assert!(b.writer_waiting(epoch_ms()));
        drop(waiting);
        assert!(
            !b.writer_waiting(epoch_ms()),
            "cleared when the writer has the lock"
        );
        assert_eq!(path_of(&db), dir.path().join("a.db-writers"));
    }

    #[test]
    fn a_writer_keeps_another_processes_later_mark() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("a.db");
        let (a, b) = (Board::open(&db).unwrap(), Board::open(&db).unwrap());
        let first = a.wait();
        // Another process's writer marks the slot after this one (a mark of its own).
        let other = (epoch_ms() << PID_BITS) | 0xFFFFF;
        b.slot(WAITING).store(other, Ordering::Release);
        drop(first);
        assert!(b.writer_waiting(epoch_ms()), "the other writer still waits");
    }

    #[test]
    fn marks_count_within_their_window_only() {
        let window = Duration::from_millis(5);
        assert!(!within(0, 100, Duration::from_secs(60)), "never");
        assert!(within(95, 100, window));
        assert!(!within(94, 100, window));
        assert!(within(105, 100, window), "a moment ahead");
        assert!(!within(106, 100, window), "far ahead: a clock set back");
        let dir = tempfile::tempdir().unwrap();
        let board = Board::open(&dir.path().join("a.db")).unwrap();
        let _waiting = board.wait();
        let fresh = u64::try_from(FRESH.as_millis()).unwrap();
        assert!(
            !board.writer_waiting(epoch_ms() + fresh + 1_000),
            "a stale mark (its writer died) counts for nothing"
        );
    }
}
