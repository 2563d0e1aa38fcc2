//! The release as a list of files, and writing it to a directory.

use super::checked::Checked;
use super::counts::ReleaseCounts;
use super::error::{ReleaseError, WriteError};
use super::input::{ReleaseInput, ReleaseOptions};
use super::manifest::{self, MANIFEST};
use super::names::file_stem;
use super::readme::{self, README};
use super::{claims_file, corpus_file, qrels_files, run_files, specificity_file};
use std::fs;
use std::io::Write;
use std::path::Path;

/// The model assessors' labels, written with [`ReleaseOptions::model_qrels`].
pub const MODEL_QRELS: &str = "qrels-model.txt";

/// One file of a release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseFile {
    /// Relative path, `/`-separated (`claims.jsonl`, `runs/<system>.jsonl`).
    pub path: String,
    pub bytes: Vec<u8>,
}

/// A release, written: every file in path order (byte order of the paths), `MANIFEST.json`
/// among them. The same input gives the same bytes, whatever the order of its lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseFiles {
    root: String,
    files: Vec<ReleaseFile>,
    counts: ReleaseCounts,
}

impl ReleaseFiles {
    /// Checks `input` and writes every file of the release.
    pub fn build(
        input: &ReleaseInput,
        options: &ReleaseOptions,
    ) -> Result<ReleaseFiles, ReleaseError> {
        let release = Checked::new(input)?;
        let counts = ReleaseCounts::of(&release);
        let file = |path: &str, bytes| ReleaseFile {
            path: path.to_owned(),
            bytes,
        };
        let mut files = vec![
            file("claims.jsonl", claims_file::write(&release)?),
            file("corpus_candidates.jsonl", corpus_file::write(&release)?),
            file("qrels.txt", qrels_files::relevance(&release, options)),
            file("qrels-labels.txt", qrels_files::labels(&release)),
            file("specificity.jsonl", specificity_file::write(&release)?),
        ];
        if options.model_qrels {
            files.push(file(MODEL_QRELS, qrels_files::model(input)));
        }
        for (name, run) in &release.runs {
            files.push(file(&run.path, run_files::write(name, run)?));
        }
        let mut paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        paths.push(README);
        paths.sort_unstable();
        let readme = readme::write(&release, options, &counts, &paths);
        files.push(file(README, readme));
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let manifest = manifest::write(&release, options, &counts, &files)?;
        files.push(file(MANIFEST, manifest));
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(ReleaseFiles {
            root: format!("{}-release-{}", file_stem(&input.project), input.number),
            files,
            counts,
        })
    }

    /// Every file, in path order.
    pub fn files(&self) -> &[ReleaseFile] {
        &self.files
    }

    /// The bytes of the file at `path`, if the release has it.
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.bytes.as_slice())
    }

    /// `MANIFEST.json`, as written (for storing next to the archive).
    pub fn manifest(&self) -> &[u8] {
        self.get(MANIFEST).unwrap_or_default()
    }

    /// The release's counts, as the manifest gives them.
    pub fn counts(&self) -> &ReleaseCounts {
        &self.counts
    }

    /// The directory the archive unpacks into: `<project>-release-<number>`, the project name
    /// made safe for file systems.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// Writes the files under `dir`, creating it (and `runs/`) when needed.
    ///
    /// An existing directory that is not empty is refused unless `force`; with `force` the
    /// release's files are written over, and other files already there are left alone (the
    /// manifest lists what belongs to the release).
    ///
    /// The files are written into a staging directory beside `dir` first and moved into place
    /// once all are on disk: a writer killed midway leaves `dir` absent (or as it was) and the
    /// staging directory, which the next write to `dir` removes; never half a release.
    pub fn write_to_dir(&self, dir: &Path, force: bool) -> Result<(), WriteError> {
        check_target_dir(dir, force)?;
        let staging = staging_dir(dir);
        if staging.exists() {
            fs::remove_dir_all(&staging).map_err(io(&staging))?;
        }
        for file in &self.files {
            let path = staging.join(&file.path);
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(io(parent))?;
            }
            let mut out = fs::File::create(&path).map_err(io(&path))?;
            out.write_all(&file.bytes).map_err(io(&path))?;
            out.sync_all().map_err(io(&path))?;
        }
        let empty = match fs::read_dir(dir) {
            Ok(mut entries) => entries.next().is_none(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                    fs::create_dir_all(parent).map_err(io(parent))?;
                }
                true
            }
            Err(e) => return Err(io(dir)(e)),
        };
        if empty && dir.file_name().is_some() {
            if dir.exists() {
                fs::remove_dir(dir).map_err(io(dir))?;
            }
            fs::rename(&staging, dir).map_err(io(dir))?;
        } else {
            // `force` over an existing directory: each file replaces its namesake at once.
            for file in &self.files {
                let (from, to) = (staging.join(&file.path), dir.join(&file.path));
                if let Some(parent) = to.parent() {
                    fs::create_dir_all(parent).map_err(io(parent))?;
                }
                fs::rename(&from, &to).map_err(io(&to))?;
            }
            fs::remove_dir_all(&staging).map_err(io(&staging))?;
        }
        Ok(())
    }
}

/// Where [`ReleaseFiles::write_to_dir`] stages the files: `.<name>.partial` beside `dir` (in
/// `dir` itself when it has no name, as `.`).
fn staging_dir(dir: &Path) -> std::path::PathBuf {
    match dir.file_name() {
        Some(name) => {
            let mut staged = std::ffi::OsString::from(".");
            staged.push(name);
            staged.push(".partial");
            dir.with_file_name(staged)
        }
        None => dir.join(".release.partial"),
    }
}

/// The error for an I/O failure on `path`.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> WriteError {
    let path = path.to_path_buf();
    move |source| WriteError::Io { path, source }
}

/// Whether a release may be written to `dir`: it does not exist, or is an empty directory, or
/// `force` is given. [`ReleaseFiles::write_to_dir`] checks this first; callers that record a
/// release before writing it check it before recording, so a refusal changes nothing.
pub fn check_target_dir(dir: &Path, force: bool) -> Result<(), WriteError> {
    if force || !dir.exists() {
        return Ok(());
    }
    let mut entries = fs::read_dir(dir).map_err(io(dir))?;
    if entries.next().is_some() {
        return Err(WriteError::NotEmpty {
            dir: dir.to_path_buf(),
        });
    }
    Ok(())
}
