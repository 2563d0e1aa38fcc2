//! `runs/<system>.jsonl`: each published run in claimpool's canonical run format (see
//! [`RunWriter`]), pairs in claim then doc order, every record naming its system. File names are
//! the system names made safe ([`super::names::file_stem`]); two systems whose names give the
//! same file are refused.

use super::checked::CheckedRun;
use super::error::ReleaseError;
use crate::formats::RunWriter;

/// Writes one system's run.
pub(crate) fn write(name: &str, run: &CheckedRun<'_>) -> Result<Vec<u8>, ReleaseError> {
    let error = |source| ReleaseError::RunWrite {
        name: name.to_owned(),
        source,
    };
    let mut writer = RunWriter::new(Vec::new());
    for &record in &run.records {
        let mut record = record.clone();
        record.system = Some(name.to_owned());
        writer.write(&record).map_err(error)?;
    }
    writer.finish().map_err(error)
}
