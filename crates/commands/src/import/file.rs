//! An import's file: its name as messages show it, and its SHA-256, by which a second import
//! of it is refused.

use crate::error::{CommandError, CommandResult};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

/// The file's name as messages show it.
pub(crate) fn display_name(path: &Path) -> String {
    path.display().to_string()
}

/// SHA-256 of a file's bytes, streamed.
fn sha256_file(path: &Path) -> CommandResult<String> {
    let unreadable =
        |e: std::io::Error| CommandError::Invalid(format!("cannot read {}: {e}", path.display()));
    let mut file = std::fs::File::open(path).map_err(unreadable)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(unreadable)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

/// Runs `f` on a blocking thread (reading a file takes seconds; the runtime's threads serve
/// requests meanwhile).
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> CommandResult<T> + Send + 'static,
) -> CommandResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| CommandError::Internal(format!("the import stopped: {e}")))?
}

/// SHA-256 of an import's file, read on a blocking thread (before any transaction: hashing a
/// large file takes seconds).
pub(crate) async fn file_sha(path: &Path) -> CommandResult<String> {
    let owned = path.to_owned();
    blocking(move || sha256_file(&owned)).await
}
