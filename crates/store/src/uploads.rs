//! Uploads kept in the database, in parts, so that the import job may run on any server of the
//! database, on any machine (PostgreSQL; on SQLite every server is on the database's machine and
//! reads the upload where it was saved). Each part is written in its own write transaction of at
//! most [`PART_BYTES`], as release archives are, so annotators' submissions wait milliseconds
//! while a large file is kept. The upload is removed with its job's end ([`super::jobs`]); one
//! whose job was never recorded (its server died in between) is removed by [`remove_stale`].

use super::{now_ms, write_gate, Db, StoreError, StoreResult};
use std::path::Path;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The most bytes one part (one write transaction) holds.
pub const PART_BYTES: usize = 1 << 20;

/// An upload not named by a job is removed this long after it was kept (ms).
pub const STALE_MS: i64 = 24 * 3600 * 1000;

fn io_error(what: &'static str) -> impl Fn(std::io::Error) -> StoreError {
    move |e| StoreError::Fault(format!("{what}: {e}"))
}

/// Keeps the file at `path` in the database; returns the upload's id. On an error nothing of
/// it stays.
pub async fn keep(db: &Db, path: &Path) -> StoreResult<i64> {
    let mut file = tokio::fs::File::open(path)
        .await
        .map_err(io_error("reading the saved upload"))?;
    let bytes = file
        .metadata()
        .await
        .map_err(io_error("reading the saved upload"))?
        .len();
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
    let written = write_parts(db, id, &mut file).await;
    match written {
        Ok(total) if total == bytes => Ok(id),
        Ok(total) => {
            remove(db, id).await?;
            Err(StoreError::Fault(format!(
                "the saved upload changed while it was kept ({total} bytes read, {bytes} expected)"
            )))
        }
        Err(e) => {
            remove(db, id).await?;
            Err(e)
        }
    }
}

/// Writes `file` into upload `id`'s parts; returns the bytes written.
async fn write_parts(db: &Db, id: i64, file: &mut tokio::fs::File) -> StoreResult<i64> {
    let mut part = vec![0u8; PART_BYTES];
    let mut total = 0i64;
    let mut seq = 0i64;
    loop {
        // A part is filled before it is written (a read may return less than asked).
        let mut filled = 0;
        while filled < PART_BYTES {
            let n = file
                .read(&mut part[filled..])
                .await
                .map_err(io_error("reading the saved upload"))?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        if filled == 0 {
            return Ok(total);
        }
        let mut tx = write_gate::begin(db).await?;
        sqlx::query("INSERT INTO upload_parts (upload_id, seq, data) VALUES ($1, $2, $3)")
            .bind(id)
            .bind(seq)
            .bind(&part[..filled])
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        total += filled as i64;
        seq += 1;
    }
}

/// Writes upload `id` to a new file at `out`, part by part; returns its size. An upload that
/// is gone, or whose parts do not add up to its size, is an error.
pub async fn write_to(db: &Db, id: i64, out: &Path) -> StoreResult<u64> {
    let bytes: Option<i64> = sqlx::query_scalar("SELECT bytes FROM uploads WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?;
    let bytes = bytes.ok_or_else(|| StoreError::NotFound(format!("upload {id}")))?;
    let mut file = tokio::fs::File::create(out)
        .await
        .map_err(io_error("writing the upload"))?;
    let mut total = 0i64;
    let mut seq = 0i64;
    loop {
        let part: Option<Vec<u8>> =
            sqlx::query_scalar("SELECT data FROM upload_parts WHERE upload_id = $1 AND seq = $2")
                .bind(id)
                .bind(seq)
                .fetch_optional(db)
                .await?;
        let Some(part) = part else { break };
        file.write_all(&part)
            .await
            .map_err(io_error("writing the upload"))?;
        total += part.len() as i64;
        seq += 1;
    }
    file.flush().await.map_err(io_error("writing the upload"))?;
    if total != bytes {
        return Err(StoreError::Corrupt(format!(
            "upload {id} has {total} bytes in its parts, {bytes} expected"
        )));
    }
    Ok(total as u64)
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
