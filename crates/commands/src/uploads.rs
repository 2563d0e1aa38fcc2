//! Uploads kept in the database (`store::uploads`), from a saved file and back into one: what
//! lets an import job run on any server of a PostgreSQL database, on any machine. Each part is
//! written in its own short write transaction, so annotators' submissions wait milliseconds
//! while a large file is kept.

use crate::error::{CommandError, CommandResult};
use std::path::Path;
use store::uploads::PART_BYTES;
use store::Db;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn io_error(what: &'static str) -> impl Fn(std::io::Error) -> CommandError {
    move |e| CommandError::Internal(format!("{what}: {e}"))
}

/// Keeps the file at `path` in the database; returns the upload's id. On an error nothing of
/// it stays.
pub async fn keep(db: &Db, path: &Path) -> CommandResult<i64> {
    let mut file = tokio::fs::File::open(path)
        .await
        .map_err(io_error("reading the saved upload"))?;
    let bytes = file
        .metadata()
        .await
        .map_err(io_error("reading the saved upload"))?
        .len();
    let id = store::uploads::start(db, bytes).await?;
    match write_parts(db, id, &mut file).await {
        Ok(total) if total == bytes => Ok(id),
        outcome => {
            store::uploads::remove(db, id).await?;
            match outcome {
                Ok(total) => Err(CommandError::Internal(format!(
                    "the saved upload changed while it was kept ({total} bytes read, {bytes} expected)"
                ))),
                Err(e) => Err(e),
            }
        }
    }
}

/// Writes `file` into upload `id`'s parts; returns the bytes written.
async fn write_parts(db: &Db, id: i64, file: &mut tokio::fs::File) -> CommandResult<u64> {
    let mut part = vec![0u8; PART_BYTES];
    let (mut total, mut seq) = (0u64, 0i64);
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
        store::uploads::write_part(db, id, seq, &part[..filled]).await?;
        total += filled as u64;
        seq += 1;
    }
}

/// Writes upload `id` to a new file at `out`, part by part; returns its size. An upload that
/// is gone, or whose parts do not add up to its size, is an error.
pub async fn write_to(db: &Db, id: i64, out: &Path) -> CommandResult<u64> {
    let bytes = store::uploads::size(db, id).await?;
    let mut file = tokio::fs::File::create(out)
        .await
        .map_err(io_error("writing the upload"))?;
    let (mut total, mut seq) = (0u64, 0i64);
    while let Some(part) = store::uploads::read_part(db, id, seq).await? {
        file.write_all(&part)
            .await
            .map_err(io_error("writing the upload"))?;
        total += part.len() as u64;
        seq += 1;
    }
    file.flush().await.map_err(io_error("writing the upload"))?;
    if total != bytes {
        return Err(CommandError::Internal(format!(
            "upload {id} has {total} bytes in its parts, {bytes} expected"
        )));
    }
    Ok(total)
}
