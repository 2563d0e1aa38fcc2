//! Writers take turns, first come first served: one queue per database file in this process,
//! in front of SQLite's write lock.
//!
//! SQLite lets one writer in at a time; a writer that finds the lock taken sleeps and retries
//! with a growing back-off (1, 2, 5, 10, … 100 ms). A run import writes in short transactions,
//! each begun the moment the last commits, so a submission polling on its back-off kept losing
//! the lock to the import's next chunk: p99 936 ms during imports (issue 13's benchmark). Here
//! each writer first waits for its turn in a queue (tokio's mutex serves waiters in arrival
//! order) and only then begins `BEGIN IMMEDIATE`, so a submission waits for at most the chunk
//! being written.
//!
//! Every write transaction of the store begins through [`begin`] (or, on a blocking thread,
//! takes [`Gate::blocking_turn`] first); a turn is never taken while another is held (the
//! mutex is not reentrant), and a turn is taken before a pooled connection is, never after.
//!
//! Another process writing the same file (a lead's `claimpool import run` next to the running
//! server) does not queue here: its run import wrote chunk after chunk while the server's
//! submissions polled SQLite's lock on their back-off and kept missing the gaps (p99 1,454 ms,
//! issue 35). So a writer waiting for SQLite's lock also says so on the file's board
//! ([`board`], `<database>-writers`, shared by every process), and a run import's chunk, in
//! whichever process, first waits until no writer waits ([`Gate::blocking_turn`]): the
//! waiting writer goes first, as in the queue.

mod board;

use super::db::{engine, Engine};
use super::{Db, StoreResult};
use sqlx::{Any, AnyConnection, Connection, Transaction};
use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::OwnedMutexGuard;

/// The queue of writers of one database file, and its board.
#[derive(Clone, Debug)]
pub(crate) struct Gate {
    queue: Arc<tokio::sync::Mutex<()>>,
    /// The SQLite file's board, shared with the other processes writing the file; `None` on
    /// PostgreSQL, or where it could not be opened.
    board: Option<Arc<board::Board>>,
    /// PostgreSQL: when a writer of this process last advanced the sequence `writers_began`
    /// ([`clock_ms`]; 0: never; see [`ANNOUNCE_EVERY`]).
    announced: Arc<AtomicU64>,
    /// When a bulk writer of this process last found a writer waiting on the board
    /// ([`clock_ms`]; 0: never): bulk writers write smaller transactions while people write.
    gave_way: Arc<AtomicU64>,
    /// Who is told how long each writer of [`begin`] waited ([`watch_waits`]).
    watchers: Arc<Watchers>,
}

/// The [`WaitWatcher`]s of a gate.
#[derive(Default)]
struct Watchers(RwLock<Vec<WaitWatcher>>);

impl std::fmt::Debug for Watchers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.read().map_or(0, |w| w.len());
        write!(f, "Watchers({n})")
    }
}

/// What a writer of [`begin`] waits for before its transaction may write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Its turn in this process's queue of writers of the database.
    Turn,
    /// The database's write lock, once its turn came: SQLite's (`BEGIN IMMEDIATE`, taking a
    /// pooled connection included), or, on PostgreSQL, the writers' advisory lock that every
    /// write transaction of every server takes ([`PG_WRITE_LOCK`]).
    Lock,
}

impl Wait {
    pub const ALL: [Wait; 2] = [Wait::Turn, Wait::Lock];

    pub fn name(self) -> &'static str {
        match self {
            Wait::Turn => "turn",
            Wait::Lock => "lock",
        }
    }
}

/// Told each [`Wait`] of each writer of [`begin`] and how long it took (the server's metrics).
pub type WaitWatcher = Arc<dyn Fn(Wait, Duration) + Send + Sync>;

/// Has `watcher` told how long each writer of `db`'s database (in this process) waits, from now
/// on.
pub fn watch_waits(db: &Db, watcher: WaitWatcher) {
    let gate = Gate::of(db);
    let mut watchers = gate.watchers.0.write().unwrap_or_else(|p| p.into_inner());
    watchers.push(watcher);
}

/// PostgreSQL: a writer that begins a write transaction advances the sequence `writers_began`,
/// at most once in this long per process, so that run imports of every process, on this machine
/// or another, see that people write ([`super::import_writer::OtherWriters`]; `nextval` never
/// waits for a lock, and reading `last_value` takes none).
const ANNOUNCE_EVERY: Duration = Duration::from_millis(250);

/// At most this long a bulk writer's chunk waits for a writer waiting on the board: the waiting
/// writer retries the lock on SQLite's back-off, every 100 ms at the longest.
const MAX_GIVE_WAY: Duration = Duration::from_millis(250);

/// How often a bulk writer giving way reads the board.
const GIVE_WAY_POLL: Duration = Duration::from_millis(1);

/// A writer's turn: the others wait until it is dropped.
#[derive(Debug)]
pub(crate) struct Turn {
    _held: OwnedMutexGuard<()>,
}

impl Gate {
    /// The queue of `db`'s file (one per file, whichever pool opened it).
    pub(crate) fn of(db: &Db) -> Gate {
        static GATES: Mutex<Option<HashMap<PathBuf, Gate>>> = Mutex::new(None);
        let file = super::db::identity(db);
        // A panic while the map was locked leaves it whole (insertions only).
        let mut gates = GATES.lock().unwrap_or_else(|p| p.into_inner());
        gates
            .get_or_insert_with(HashMap::new)
            .entry(file)
            .or_insert_with_key(|file| Gate {
                queue: Arc::new(tokio::sync::Mutex::new(())),
                board: (engine(db) == Engine::Sqlite)
                    .then(|| open_board(file))
                    .flatten(),
                announced: Arc::new(AtomicU64::new(0)),
                gave_way: Arc::new(AtomicU64::new(0)),
                watchers: Arc::default(),
            })
            .clone()
    }

    /// Waits for this writer's turn.
    pub(crate) async fn turn(&self) -> Turn {
        Turn {
            _held: Arc::clone(&self.queue).lock_owned().await,
        }
    }

    /// Waits for a bulk writer's turn (a run import's chunk) on a blocking thread (never on a
    /// runtime worker), after [`Gate::give_way`].
    pub(crate) fn blocking_turn(&self) -> Turn {
        self.give_way();
        Turn {
            _held: Arc::clone(&self.queue).blocking_lock_owned(),
        }
    }

    /// Whether a writer, of this process or another on the same file, waits for the write
    /// lock now (on the board).
    pub(crate) fn writer_waiting(&self) -> bool {
        self.board
            .as_ref()
            .is_some_and(|b| b.writer_waiting(board::epoch_ms()))
    }

    /// Waits (on a blocking thread) while a writer waits for the write lock, at most
    /// [`MAX_GIVE_WAY`]: it then takes the lock the moment the bulk writer's last chunk
    /// commits, before the next one begins.
    fn give_way(&self) {
        let started = Instant::now();
        if self.writer_waiting() {
            self.gave_way.store(clock_ms(), Ordering::Relaxed);
        }
        while self.writer_waiting() && started.elapsed() < MAX_GIVE_WAY {
            std::thread::sleep(GIVE_WAY_POLL);
        }
    }

    /// Tells the watchers that a writer waited `took` for `wait`.
    fn waited(&self, wait: Wait, took: Duration) {
        let watchers = self.watchers.0.read().unwrap_or_else(|p| p.into_inner());
        for watcher in watchers.iter() {
            watcher(wait, took);
        }
    }

    /// Whether a bulk writer of this process found a writer waiting within the last `window`.
    pub(crate) fn gave_way_within(&self, window: Duration) -> bool {
        began_within(self.gave_way.load(Ordering::Relaxed), clock_ms(), window)
    }

    /// The file of the board (SQLite only).
    pub(crate) fn board_file(&self) -> Option<PathBuf> {
        self.board.as_ref().map(|b| b.path().to_owned())
    }
}

/// The board of the SQLite file `file` (canonical), if there is a file and the board opens.
fn open_board(file: &std::path::Path) -> Option<Arc<board::Board>> {
    if !file.is_file() {
        return None; // in memory
    }
    match board::Board::open(file) {
        Ok(board) => Some(Arc::new(board)),
        Err(e) => {
            tracing::warn!(
                file = %file.display(),
                error = %e,
                "no writers' board: bulk writers of other processes will not give way to this one's"
            );
            None
        }
    }
}

/// A write transaction begun in its turn; the turn ends with the transaction.
pub(crate) struct WriteTx {
    // Declared first, so dropped first: the transaction rolls back before the turn passes on.
    tx: Transaction<'static, sqlx::Any>,
    _turn: Turn,
}

impl WriteTx {
    /// Commits, then passes the turn on.
    pub(crate) async fn commit(self) -> Result<(), sqlx::Error> {
        self.tx.commit().await
    }
}

impl Deref for WriteTx {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        &self.tx
    }
}

impl DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.tx
    }
}

/// When a writer last began a transaction through [`begin`] in this process (milliseconds
/// since [`clock_ms`] started; 0: never). Bulk writers that take no turn (PostgreSQL's run
/// imports) read it to give way to the writers people wait for.
static LAST_BEGUN: AtomicU64 = AtomicU64::new(0);

/// Milliseconds since this process first asked, plus one (so that 0 means never).
fn clock_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    let elapsed = START.get_or_init(Instant::now).elapsed().as_millis();
    u64::try_from(elapsed).unwrap_or(u64::MAX - 1) + 1
}

/// Whether a writer began a transaction through [`begin`] within the last `window`.
pub(crate) fn writers_began_within(window: Duration) -> bool {
    began_within(LAST_BEGUN.load(Ordering::Relaxed), clock_ms(), window)
}

/// Whether `last` (a [`clock_ms`] reading; 0: never) lies within `window` before `now`.
fn began_within(last: u64, now: u64, window: Duration) -> bool {
    let window = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
    last != 0 && now.saturating_sub(last) <= window
}

/// Waits for a turn, then begins a write transaction (`BEGIN IMMEDIATE`) on a pooled
/// connection.
pub(crate) async fn begin(db: &Db) -> StoreResult<WriteTx> {
    LAST_BEGUN.store(clock_ms(), Ordering::Relaxed);
    let gate = Gate::of(db);
    let asked = Instant::now();
    let turn = gate.turn().await;
    let turned = Instant::now();
    gate.waited(Wait::Turn, turned - asked);
    let tx = match engine(db) {
        Engine::Sqlite => {
            // Bulk writers of every process give way while this mark stands (until the lock
            // is taken, or the attempt fails or is dropped).
            let _waiting = gate.board.as_deref().map(board::Board::wait);
            let tx = db.begin_with("BEGIN IMMEDIATE").await?;
            gate.waited(Wait::Lock, turned.elapsed());
            tx
        }
        Engine::Postgres => {
            let mut tx = db.begin().await?;
            let locking = Instant::now();
            if gate.announce_now() {
                // In the same round trip as the lock.
                sqlx::query("SELECT nextval('writers_began') FROM pg_advisory_xact_lock($1)")
                    .bind(PG_WRITE_LOCK)
                    .execute(&mut *tx)
                    .await?;
            } else {
                lock_writers(&mut tx).await?;
            }
            gate.waited(Wait::Lock, locking.elapsed());
            tx
        }
    };
    Ok(WriteTx { tx, _turn: turn })
}

impl Gate {
    /// Whether this writer advances `writers_began`: none of this process did within
    /// [`ANNOUNCE_EVERY`] (one writer wins the race to do it).
    fn announce_now(&self) -> bool {
        let (now, last) = (clock_ms(), self.announced.load(Ordering::Relaxed));
        let every = u64::try_from(ANNOUNCE_EVERY.as_millis()).unwrap_or(u64::MAX);
        (last == 0 || now.saturating_sub(last) >= every)
            && self
                .announced
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

/// Begins a write transaction on a connection of the caller's own (no turn: see the bulk
/// writers): `BEGIN IMMEDIATE` on SQLite, the writers' advisory lock on PostgreSQL.
pub(crate) async fn begin_on(conn: &mut AnyConnection) -> StoreResult<Transaction<'_, Any>> {
    match super::db::engine_of(conn) {
        Engine::Sqlite => Ok(conn.begin_with("BEGIN IMMEDIATE").await?),
        Engine::Postgres => {
            let mut tx = conn.begin().await?;
            lock_writers(&mut tx).await?;
            Ok(tx)
        }
    }
}

/// The key of PostgreSQL's transaction-level advisory lock every write transaction takes: the
/// store's writers were written for SQLite's one writer at a time, and keep that order there.
const PG_WRITE_LOCK: i64 = 0x636c_6169_6d70; // "claimp"

async fn lock_writers(tx: &mut AnyConnection) -> StoreResult<()> {
    sqlx::query("SELECT 1 FROM pg_advisory_xact_lock($1)")
        .bind(PG_WRITE_LOCK)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_db::TestDb;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn writers_take_turns_in_arrival_order() {
        let test = TestDb::fresh().await;
        let db = test.db.clone();
        let first = begin(&db).await.unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut waiting = Vec::new();
        for i in 0..3 {
            let (db, order) = (db.clone(), Arc::clone(&order));
            waiting.push(tokio::spawn(async move {
                let tx = begin(&db).await.unwrap();
                order.lock().unwrap().push(i);
                tx.commit().await.unwrap();
            }));
            // Each arrives after the one before it.
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        assert!(order.lock().unwrap().is_empty(), "all wait for the first");
        first.commit().await.unwrap();
        for w in waiting {
            w.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), vec![0, 1, 2]);
    }

    /// Each writer's two waits reach every watcher of its database, and none of another's.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn watchers_are_told_each_wait_of_their_databases_writers() {
        let (test, other) = (TestDb::fresh().await, TestDb::fresh().await);
        let seen = Arc::new(Mutex::new(Vec::<(Wait, Duration)>::new()));
        let record = Arc::clone(&seen);
        watch_waits(
            &test.db,
            Arc::new(move |wait: Wait, took: Duration| record.lock().unwrap().push((wait, took))),
        );
        begin(&other.db).await.unwrap().commit().await.unwrap();
        assert!(seen.lock().unwrap().is_empty(), "another database's writer");

        // A second writer waits for the first one's turn: its turn's wait is at least the
        // time the first held it.
        let first = begin(&test.db).await.unwrap();
        let db = test.db.clone();
        let second = tokio::spawn(async move { begin(&db).await.unwrap().commit().await });
        tokio::time::sleep(Duration::from_millis(60)).await;
        first.commit().await.unwrap();
        second.await.unwrap().unwrap();
        let seen = seen.lock().unwrap().clone();
        let kinds: Vec<Wait> = seen.iter().map(|(wait, _)| *wait).collect();
        assert_eq!(kinds, [Wait::Turn, Wait::Lock, Wait::Turn, Wait::Lock]);
        assert!(seen[2].1 >= Duration::from_millis(50), "{seen:?}");
        assert!(seen[0].1 < Duration::from_millis(50), "{seen:?}");
    }

    #[tokio::test]
    async fn beginning_a_write_records_when() {
        let test = TestDb::fresh().await;
        let before = clock_ms();
        begin(&test.db).await.unwrap().commit().await.unwrap();
        // Other tests' writers may have begun since: the record only moves forward.
        assert!(LAST_BEGUN.load(Ordering::Relaxed) >= before);
        assert!(writers_began_within(Duration::from_secs(60)));
    }

    #[test]
    fn a_writer_is_seen_within_the_window_only() {
        let window = Duration::from_millis(5);
        assert!(
            !began_within(0, 100, Duration::from_secs(60)),
            "never began"
        );
        assert!(began_within(95, 100, window));
        assert!(!began_within(94, 100, window));
        assert!(began_within(100, 100, window));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_gate_per_database_and_a_blocking_turn_waits_too() {
        let (test, other) = (TestDb::fresh().await, TestDb::fresh().await);
        let (a, b, other) = (test.db.clone(), test.reopen().await, other.db.clone());
        let held = Gate::of(&a).turn().await;
        // Another file's queue is free.
        drop(Gate::of(&other).turn().await);
        let gate = Gate::of(&b);
        let waiter = tokio::task::spawn_blocking(move || drop(gate.blocking_turn()));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiter.is_finished(), "the same file's queue is shared");
        drop(held);
        waiter.await.unwrap();
    }
}
