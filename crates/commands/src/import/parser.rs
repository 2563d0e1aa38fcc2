//! An import's parser: it runs on a thread of its own at a lower CPU priority than requests
//! ([`crate::background`]), reads the file line by line (streaming, bounded memory), resolves
//! and checks each line, and sends batches of rows to the store's writer; once it is done, its
//! problems say whether the file is rejected. A bad line rejects the whole file.

use super::problems::Problems;
use super::staged::{stage, Staged};
use crate::background::{self, Background};
use crate::error::CommandResult;
use serde::Serialize;
use tokio::sync::mpsc;

/// A parser's batches of rows, and the problems it found once it is done.
pub(crate) type Parser<T> = (mpsc::Receiver<Vec<T>>, Background<Problems>);

/// Runs `parse` on a thread of its own, at a lower CPU priority than requests, sending batches
/// of rows, and collects its problems.
pub(crate) fn spawn_parser<T: Send + 'static>(
    parse: impl FnOnce(&mpsc::Sender<Vec<T>>, &mut Problems) + Send + 'static,
    file: String,
) -> CommandResult<Parser<T>> {
    let (tx, rx) = mpsc::channel(4);
    let handle = background::spawn("import parser", move || {
        let mut problems = Problems::new(&file);
        parse(&tx, &mut problems);
        problems
    })?;
    Ok((rx, handle))
}

/// Sends a batch of `size` rows once full (unless problems were found: then rows are only
/// checked, not sent).
pub(crate) fn push_row<T>(
    batch: &mut Vec<T>,
    size: usize,
    row: T,
    tx: &mpsc::Sender<Vec<T>>,
    problems: &Problems,
) {
    if !problems.is_empty() {
        batch.clear();
        return;
    }
    batch.push(row);
    if batch.len() >= size {
        // A closed channel means the writer failed; its error is reported instead.
        let _ = tx.blocking_send(std::mem::take(batch));
    }
}

/// Sends the last, partly filled batch.
pub(crate) fn flush<T>(batch: Vec<T>, tx: &mpsc::Sender<Vec<T>>, problems: &Problems) {
    if problems.is_empty() && !batch.is_empty() {
        let _ = tx.blocking_send(batch);
    }
}

/// The parser's rows staged on disk, once it is done and found no problem.
pub(crate) async fn stage_checked<T: Serialize + Send + 'static>(
    (rx, parser): Parser<T>,
) -> CommandResult<Staged<T>> {
    let staged = stage(rx).await?;
    let problems = parser.join().await?;
    if !problems.is_empty() {
        return Err(problems.into_error());
    }
    Ok(staged)
}
