//! Uploads kept in the database, in parts, so that the import job may run on any server of the
//! database, on any machine (PostgreSQL; on SQLite every server is on the database's machine and
//! reads the upload where it was saved). The files are read and written by the commands
//! (`commands::uploads`); this module stores their parts. Each part is written in its own write transaction of at
//! most [`PART_BYTES`], as release archives are, so annotators' submissions wait milliseconds
//! while a large file is kept. The upload is removed with its job's end ([`super::jobs`]); one
//! whose job was never recorded (its server died in between) is removed by [`remove_stale`].

use super::{now_ms, write_gate, Db, StoreError, StoreResult};

/// The most bytes one part (one write transaction) holds.
pub const PART_BYTES: usize = 1 << 20;

/// An upload not named by a job is removed this long after it was kept (ms).
pub const STALE_MS: i64 = 24 * 3600 * 1000;

/// Starts an upload of `bytes` bytes; returns its id. Its parts follow ([`write_part`]).
pub async fn start(db: &Db, bytes: u64) -> StoreResult<i64> {
    let bytes =
        i64::try_from(bytes).map_err(|_| StoreError::Fault("the upload is too large".into()))?;
    let mut tx = write_gate::begin(db).await?;
    let id: i64 =
        sqlx::query_scalar("INSERT INTO uploads (bytes, created_at) VALUES ($1, $2) RETURNING id")
            .bind(bytes)
            .bind(now_ms())
            .fetch_one(&mut *tx)
            .await?;
    tx.commit().await?;
    Ok(id)
}

/// Writes part `seq` (from 0) of upload `id`, at most [`PART_BYTES`], in its own transaction.
pub async fn write_part(db: &Db, id: i64, seq: i64, part: &[u8]) -> StoreResult<()> {
    if part.len() > PART_BYTES {
        return Err(StoreError::Fault(format!(
            "an upload part of {} bytes (at most {PART_BYTES})",
            part.len()
        )));
    }
    let mut tx = write_gate::begin(db).await?;
    sqlx::query("INSERT INTO upload_parts (upload_id, seq, data) VALUES ($1, $2, $3)")
        .bind(id)
        .bind(seq)
        .bind(part)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// The size upload `id` was started with; not found when it is gone.
pub async fn size(db: &Db, id: i64) -> StoreResult<u64> {
    let bytes: Option<i64> = sqlx::query_scalar("SELECT bytes FROM uploads WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?;
    let bytes = bytes.ok_or_else(|| StoreError::NotFound(format!("upload {id}")))?;
    u64::try_from(bytes).map_err(|_| StoreError::Corrupt(format!("upload {id}: size {bytes}")))
}

/// Part `seq` of upload `id`; None past its last part.
pub async fn read_part(db: &Db, id: i64, seq: i64) -> StoreResult<Option<Vec<u8>>> {
    Ok(
        sqlx::query_scalar("SELECT data FROM upload_parts WHERE upload_id = $1 AND seq = $2")
            .bind(id)
            .bind(seq)
            .fetch_optional(db)
            .await?,
    )
}

/// Removes upload `id` and its parts (nothing when it is gone).
pub async fn remove(db: &Db, id: i64) -> StoreResult<()> {
    let mut tx = write_gate::begin(db).await?;
    remove_in(&mut tx, id).await?;
    tx.commit().await?;
    Ok(())
}

/// [`remove`] inside the caller's write transaction.
pub(crate) async fn remove_in(conn: &mut sqlx::AnyConnection, id: i64) -> StoreResult<()> {
    sqlx::query("UPDATE jobs SET upload_id = NULL WHERE upload_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM upload_parts WHERE upload_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM uploads WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Removes the uploads kept more than [`STALE_MS`] ago that no queued or running job names
/// (their server died before it recorded the job); returns how many.
pub async fn remove_stale(db: &Db) -> StoreResult<u64> {
    let stale: Vec<i64> = sqlx::query_scalar(
        "SELECT id FROM uploads u WHERE created_at < $1 AND NOT EXISTS \
         (SELECT 1 FROM jobs j WHERE j.upload_id = u.id AND j.status IN ('queued', 'running'))",
    )
    .bind(now_ms() - STALE_MS)
    .fetch_all(db)
    .await?;
    for &id in &stale {
        remove(db, id).await?;
    }
    Ok(stale.len() as u64)
}
