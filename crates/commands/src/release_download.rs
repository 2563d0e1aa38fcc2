//! A release's `.tar.gz` for a download (the releases page's link and the HTTP API's route),
//! streamed from the database one part at a time, for the project's lead.

use crate::error::{CommandError, CommandResult};
use crate::Lead;
use store::Db;

/// A release archive ready to send: its file name, size and parts.
pub use store::release::ArchiveDownload;

/// The archive of release `number` (as the request's path gives it) of the lead's project: 404
/// when `number` is no release number or the project has no such release.
pub async fn archive(db: &Db, lead: &Lead, number: &str) -> CommandResult<ArchiveDownload> {
    let Some(number) = number.parse::<u32>().ok().filter(|n| *n > 0) else {
        return Err(CommandError::NotFound(format!(
            "{number:?} is not a release number"
        )));
    };
    Ok(store::release::archive_download(db, lead.project_id(), number).await?)
}
