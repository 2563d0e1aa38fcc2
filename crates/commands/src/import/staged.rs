//! Parsed rows kept in an anonymous temporary file until the whole input is known good, so an
//! import takes SQLite's write lock only after parsing and holds it only for its inserts.

use crate::error::{CommandError, CommandResult};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, Write};
use std::marker::PhantomData;
use tokio::sync::mpsc;

/// Rows staged on disk (one JSON line each), read back in batches.
pub(crate) struct Staged<T> {
    reader: Option<BufReader<File>>,
    rows: u64,
    _rows: PhantomData<fn() -> T>,
}

fn fault(what: &str, e: impl std::fmt::Display) -> CommandError {
    CommandError::Internal(format!("cannot {what} the staging file of an import: {e}"))
}

/// Writes every batch the parser sends to a temporary file, on a blocking thread.
pub(crate) async fn stage<T: Serialize + Send + 'static>(
    mut rx: mpsc::Receiver<Vec<T>>,
) -> CommandResult<Staged<T>> {
    tokio::task::spawn_blocking(move || {
        let mut writer = BufWriter::new(tempfile::tempfile().map_err(|e| fault("create", e))?);
        let mut rows = 0u64;
        while let Some(batch) = rx.blocking_recv() {
            for row in batch {
                serde_json::to_writer(&mut writer, &row).map_err(|e| fault("write", e))?;
                writer.write_all(b"\n").map_err(|e| fault("write", e))?;
                rows += 1;
            }
        }
        let mut file = writer.into_inner().map_err(|e| fault("write", e))?;
        file.rewind().map_err(|e| fault("rewind", e))?;
        Ok(Staged {
            reader: Some(BufReader::new(file)),
            rows,
            _rows: PhantomData,
        })
    })
    .await
    .map_err(|e| CommandError::Internal(format!("the import's staging stopped: {e}")))?
}

impl<T: DeserializeOwned + Send + 'static> Staged<T> {
    /// How many rows were staged.
    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }

    /// The next batch of at most `size` rows; empty when all were read.
    pub(crate) async fn next_batch(&mut self, size: usize) -> CommandResult<Vec<T>> {
        let Some(mut reader) = self.reader.take() else {
            return Ok(Vec::new());
        };
        let (reader, batch) = tokio::task::spawn_blocking(move || {
            let mut batch = Vec::with_capacity(size);
            let mut line = String::new();
            while batch.len() < size {
                line.clear();
                if reader.read_line(&mut line).map_err(|e| fault("read", e))? == 0 {
                    break;
                }
                batch.push(serde_json::from_str(&line).map_err(|e| fault("read", e))?);
            }
            Ok::<_, CommandError>((reader, batch))
        })
        .await
        .map_err(|e| CommandError::Internal(format!("the import's staging stopped: {e}")))??;
        if !batch.is_empty() {
            self.reader = Some(reader);
        }
        Ok(batch)
    }
}
