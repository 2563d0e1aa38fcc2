//! A release's archive written in parts, hidden until its last transaction (issue 13): no write
//! transaction of a release writes more than [`PART_BYTES`], so annotators' submissions wait
//! milliseconds while a release of hundreds of MB is recorded.
//!
//! While a release is written its `release_rows` row says `writing` and names the token of a
//! lock file its writer holds ([`WriterLock`], in `<database>.releases/`); the view `releases`
//! hides it. The last transaction ([`Writing::finish`]) marks it `done` together with its audit
//! event. A writer that fails removes its rows itself; one that died leaves its lock file
//! unlocked, and [`reclaim_abandoned`] removes its rows: every release calls it first, and
//! `serve` at start. Release numbers are unique per project among writing and done rows alike, so
//! two releases written at once cannot take the same number.

use super::audit::AuditEvent;
use super::write_gate;
use super::writer_lock::{writer_is_gone, LockKind, WriterLock};
use super::{is_unique_violation, now_ms, Constraint, Db, StoreError, StoreResult};
use futures::TryStreamExt;

/// The most archive bytes one write transaction writes (one part): about a millisecond of
/// SQLite's write lock.
pub const PART_BYTES: usize = 1 << 20;

/// What a new release row holds.
pub(super) struct NewRelease<'a> {
    pub project_id: i64,
    pub number: u32,
    pub partial: bool,
    pub manifest: &'a str,
    pub sha256: &'a str,
    pub archive_bytes: usize,
    pub actor_id: Option<i64>,
}

/// A release being written: its row id and its writer's lock.
#[derive(Debug)]
pub(super) struct Writing {
    id: i64,
    lock: WriterLock,
}

/// Starts a release: its row, `writing`, hidden. A release number another live writer is
/// writing, or that was recorded meanwhile, is a conflict.
pub(super) async fn start(db: &Db, release: &NewRelease<'_>) -> StoreResult<Writing> {
    reclaim_abandoned(db).await?;
    let lock = WriterLock::take(db, LockKind::Release).await?;
    let archive_bytes = i64::try_from(release.archive_bytes)
        .map_err(|_| StoreError::invalid(None, "the release archive is too large"))?;
    let mut tx = write_gate::begin(db).await?;
    let inserted = sqlx::query_scalar::<_, i64>(
        "INSERT INTO release_rows (project_id, number, partial, manifest, sha256, archive_bytes,
                                   created_by, created_at, state, lock_token)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'writing', $9) RETURNING id",
    )
    .bind(release.project_id)
    .bind(i64::from(release.number))
    .bind(i64::from(release.partial))
    .bind(release.manifest)
    .bind(release.sha256)
    .bind(archive_bytes)
    .bind(release.actor_id)
    .bind(now_ms())
    .bind(lock.token())
    .fetch_one(&mut *tx)
    .await;
    let id = match inserted {
        Ok(done) => done,
        Err(e) if is_unique_violation(&e) => {
            drop(tx);
            lock.release();
            return Err(StoreError::conflict(
                Constraint::ReleaseNumber,
                format!(
                    "release {} of this project is being recorded or was recorded meanwhile; try again",
                    release.number
                ),
            ));
        }
        Err(e) => return Err(e.into()),
    };
    tx.commit().await?;
    Ok(Writing { id, lock })
}

impl Writing {
    /// Writes the archive in parts of at most [`PART_BYTES`], each in its own transaction.
    pub(super) async fn write(&self, db: &Db, archive: &[u8]) -> StoreResult<()> {
        for (seq, part) in archive.chunks(PART_BYTES).enumerate() {
            let seq = i64::try_from(seq).map_err(|_| StoreError::Fault("too many parts".into()))?;
            let mut tx = write_gate::begin(db).await?;
            sqlx::query("INSERT INTO release_parts (release_id, seq, bytes) VALUES ($1, $2, $3)")
                .bind(self.id)
                .bind(seq)
                .bind(part)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
        }
        Ok(())
    }

    /// Makes the release visible, with its audit event, in one transaction.
    /// `notice`: the project and the data of its `release.made` webhook event.
    pub(super) async fn finish(
        self,
        db: &Db,
        event: AuditEvent<'_>,
        notice: Option<(i64, serde_json::Value)>,
    ) -> StoreResult<()> {
        let mut tx = write_gate::begin(db).await?;
        let updated = sqlx::query(
            "UPDATE release_rows SET state = 'done', lock_token = NULL
             WHERE id = $1 AND state = 'writing'",
        )
        .bind(self.id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if updated != 1 {
            return Err(StoreError::Fault(format!(
                "release row {} vanished while it was written",
                self.id
            )));
        }
        event.record(&mut tx).await?;
        if let Some((project, data)) = notice {
            super::webhooks::enqueue(&mut tx, project, domain::webhooks::Event::ReleaseMade, data)
                .await?;
        }
        tx.commit().await?;
        self.lock.release();
        Ok(())
    }

    /// Removes what this writer wrote (after a failure), then unlocks.
    pub(super) async fn abandon(self, db: &Db) -> StoreResult<()> {
        let removed = discard(db, self.id).await;
        self.lock.release();
        removed
    }
}

/// Removes the rows of every release whose writer died; returns how many it removed.
pub async fn reclaim_abandoned(db: &Db) -> StoreResult<usize> {
    let writing: Vec<(i64, Option<String>)> =
        sqlx::query_as("SELECT id, lock_token FROM release_rows WHERE state = 'writing'")
            .fetch_all(db)
            .await?;
    let mut removed = 0;
    for (id, token) in writing {
        if writer_is_gone(db, LockKind::Release, token.as_deref()).await? {
            discard(db, id).await?;
            tracing::warn!(
                release = id,
                "removed the rows of a release whose writer died"
            );
            removed += 1;
        }
    }
    Ok(removed)
}

/// Removes a `writing` release: its parts one by one (each its own short transaction), then its
/// row. A `done` release is never touched.
async fn discard(db: &Db, id: i64) -> StoreResult<()> {
    loop {
        let mut tx = write_gate::begin(db).await?;
        let deleted = sqlx::query(
            "DELETE FROM release_parts WHERE release_id = $1
               AND seq = (SELECT MIN(seq) FROM release_parts WHERE release_id = $1)
               AND EXISTS (SELECT 1 FROM release_rows WHERE id = $1 AND state = 'writing')",
        )
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if deleted == 0 {
            sqlx::query("DELETE FROM release_rows WHERE id = $1 AND state = 'writing'")
                .bind(id)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            return Ok(());
        }
        tx.commit().await?;
    }
}

/// The archive of a recorded release (`releases.id`) part by part, in order, for a download:
/// each part is one short query of its own (no connection or snapshot is held between parts,
/// however slowly the client reads), so only the part being sent is in memory. Done releases
/// never change, so the parts read one by one are the archive. A missing part, or parts that
/// do not add up to `archive_bytes`, end the stream with an error.
pub(super) fn stream(
    db: Db,
    release_id: i64,
    archive_bytes: i64,
) -> impl futures::Stream<Item = StoreResult<Vec<u8>>> + Send + 'static {
    futures::stream::try_unfold((db, 0i64, 0i64), move |(db, seq, sent)| async move {
        let part: Option<Vec<u8>> = sqlx::query_scalar(
            "SELECT p.bytes FROM release_parts p JOIN releases r ON r.id = p.release_id
             WHERE p.release_id = $1 AND p.seq = $2",
        )
        .bind(release_id)
        .bind(seq)
        .fetch_optional(&db)
        .await?;
        match part {
            Some(bytes) => {
                let sent = sent + bytes.len() as i64;
                if sent > archive_bytes {
                    return Err(StoreError::Fault(format!(
                        "release row {release_id}: the archive has more than the {archive_bytes} bytes recorded"
                    )));
                }
                Ok(Some((bytes, (db, seq + 1, sent))))
            }
            None if sent == archive_bytes => Ok(None),
            None => Err(StoreError::Fault(format!(
                "release row {release_id}: part {seq} is missing ({sent} of {archive_bytes} bytes read)"
            ))),
        }
    })
}

/// The archive of a recorded release (`releases.id`): its parts concatenated.
pub(super) async fn read(db: &Db, release_id: i64, archive_bytes: i64) -> StoreResult<Vec<u8>> {
    let capacity = usize::try_from(archive_bytes).unwrap_or(0);
    let mut archive = Vec::with_capacity(capacity);
    // Part by part: only the archive and one part are in memory at once.
    let mut parts = sqlx::query_scalar::<_, Vec<u8>>(
        "SELECT p.bytes FROM release_parts p JOIN releases r ON r.id = p.release_id
         WHERE p.release_id = $1 ORDER BY p.seq",
    )
    .bind(release_id)
    .fetch(db);
    while let Some(part) = parts.try_next().await? {
        archive.extend_from_slice(&part);
    }
    if archive.len() as i64 != archive_bytes {
        return Err(StoreError::Fault(format!(
            "release row {release_id}: the archive has {} bytes, {archive_bytes} recorded",
            archive.len()
        )));
    }
    Ok(archive)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::projects;
    use crate::test_db::TestDb;
    use rand::{RngCore, SeedableRng};

    async fn count(db: &Db, sql: &str) -> i64 {
        sqlx::query_scalar(sql).fetch_one(db).await.unwrap()
    }

    fn event() -> AuditEvent<'static> {
        AuditEvent {
            project_id: None,
            actor_id: None,
            action: "release",
            entity: "release",
            entity_id: Some("1".into()),
            old_value: None,
            new_value: None,
        }
    }

    fn new_release(project_id: i64, archive: &[u8]) -> NewRelease<'static> {
        NewRelease {
            project_id,
            number: 1,
            partial: false,
            manifest: "{}",
            sha256: "x",
            archive_bytes: archive.len(),
            actor_id: None,
        }
    }

    #[tokio::test]
    async fn an_archive_is_written_in_parts_hidden_until_done_and_read_back_whole() {
        let test = TestDb::fresh().await;
        let db = test.db.clone();
        let project = projects::create(&db, "p", "", None).await.unwrap();
        let mut archive = vec![0u8; 2 * PART_BYTES + 12_345];
        rand_chacha::ChaCha8Rng::seed_from_u64(7).fill_bytes(&mut archive);

        let writing = start(&db, &new_release(project, &archive)).await.unwrap();
        writing.write(&db, &archive).await.unwrap();
        assert_eq!(count(&db, "SELECT COUNT(*) FROM releases").await, 0);
        assert_eq!(count(&db, "SELECT COUNT(*) FROM release_parts").await, 3);
        assert_eq!(
            count(&db, "SELECT MAX(length(bytes)) FROM release_parts").await,
            PART_BYTES as i64
        );
        // A second writer of the same number is refused while the first lives.
        let second = start(&db, &new_release(project, &archive)).await;
        assert!(
            matches!(
                second,
                Err(StoreError::Conflict {
                    constraint: Constraint::ReleaseNumber,
                    ..
                })
            ),
            "{second:?}"
        );
        writing.finish(&db, event(), None).await.unwrap();

        let id: i64 = sqlx::query_scalar("SELECT id FROM releases")
            .fetch_one(&db)
            .await
            .unwrap();
        assert_eq!(read(&db, id, archive.len() as i64).await.unwrap(), archive);
        assert_eq!(
            count(
                &db,
                "SELECT COUNT(*) FROM audit_events WHERE action = 'release'"
            )
            .await,
            1
        );
        // Done releases never change.
        for sql in [
            "UPDATE release_rows SET sha256 = 'y'",
            "DELETE FROM release_rows",
            "UPDATE release_parts SET bytes = bytes",
            "DELETE FROM release_parts",
        ] {
            let refused = sqlx::query(sql).execute(&db).await;
            assert!(refused.is_err(), "{sql} was allowed");
        }
        assert_eq!(read(&db, id, archive.len() as i64).await.unwrap(), archive);
    }

    /// Issue 35 F11: a download reads the archive one part at a time, and the parts are the
    /// archive; a part missing ends the stream with an error after the parts before it.
    #[tokio::test]
    async fn an_archive_streams_part_by_part() {
        let test = TestDb::fresh().await;
        let db = test.db.clone();
        let project = projects::create(&db, "p", "", None).await.unwrap();
        let mut archive = vec![0u8; 2 * PART_BYTES + 777];
        rand_chacha::ChaCha8Rng::seed_from_u64(9).fill_bytes(&mut archive);
        let writing = start(&db, &new_release(project, &archive)).await.unwrap();
        writing.write(&db, &archive).await.unwrap();
        let id = writing.id;
        writing.finish(&db, event(), None).await.unwrap();

        let parts: Vec<Vec<u8>> = stream(db.clone(), id, archive.len() as i64)
            .try_collect()
            .await
            .unwrap();
        assert_eq!(
            parts.iter().map(Vec::len).collect::<Vec<_>>(),
            [PART_BYTES, PART_BYTES, 777]
        );
        assert_eq!(parts.concat(), archive);
        // Recorded larger than its parts: the parts are sent, then the error.
        let mut short = Box::pin(stream(db.clone(), id, archive.len() as i64 + 1));
        for _ in 0..3 {
            short.try_next().await.unwrap().unwrap();
        }
        let err = short.try_next().await.unwrap_err().to_string();
        assert!(err.contains("part 3 is missing"), "{err}");
        // Recorded smaller: an error rather than more bytes than the header announced.
        let long: Result<Vec<Vec<u8>>, _> = stream(db.clone(), id, PART_BYTES as i64)
            .try_collect()
            .await;
        assert!(long.is_err());
    }

    #[tokio::test]
    async fn a_dead_writers_release_is_removed_and_its_number_freed() {
        let test = TestDb::fresh().await;
        let db = test.db.clone();
        let project = projects::create(&db, "p", "", None).await.unwrap();
        let archive = vec![1u8; PART_BYTES + 1];
        let writing = start(&db, &new_release(project, &archive)).await.unwrap();
        writing.write(&db, &archive).await.unwrap();
        // The writer dies: its lock is unlocked, its rows stay behind, hidden.
        drop(writing);
        crate::test_db::until_writer_locks_are_freed(&db).await;
        assert_eq!(count(&db, "SELECT COUNT(*) FROM release_rows").await, 1);
        assert_eq!(count(&db, "SELECT COUNT(*) FROM releases").await, 0);
        assert_eq!(reclaim_abandoned(&db).await.unwrap(), 1);
        assert_eq!(count(&db, "SELECT COUNT(*) FROM release_rows").await, 0);
        assert_eq!(count(&db, "SELECT COUNT(*) FROM release_parts").await, 0);

        // A failed writer removes its own rows; the number is free again.
        let writing = start(&db, &new_release(project, &archive)).await.unwrap();
        writing.write(&db, &archive[..10]).await.unwrap();
        writing.abandon(&db).await.unwrap();
        assert_eq!(count(&db, "SELECT COUNT(*) FROM release_rows").await, 0);
        let writing = start(&db, &new_release(project, &archive)).await.unwrap();
        writing.write(&db, &archive).await.unwrap();
        writing.finish(&db, event(), None).await.unwrap();
        assert_eq!(count(&db, "SELECT COUNT(*) FROM releases").await, 1);
    }
}
