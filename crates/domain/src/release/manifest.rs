//! `MANIFEST.json`: what the release is (project, number, date, pool, systems), its counts,
//! and the size and SHA-256 of every other file, sorted by path.

use super::checked::Checked;
use super::counts::ReleaseCounts;
use super::error::ReleaseError;
use super::input::ReleaseOptions;
use super::json::pretty;
use super::ReleaseFile;
use crate::assessor::AssessorSource;
use serde::Serialize;
use sha2::{Digest, Sha256};

/// The manifest's file name.
pub const MANIFEST: &str = "MANIFEST.json";
/// The name of the layout written, in `MANIFEST.json`.
pub const FORMAT: &str = "claimpool-release";
/// The version of the layout; raised when a file changes meaning.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Serialize)]
struct Manifest<'a> {
    format: &'static str,
    format_version: u32,
    project: &'a str,
    release: u32,
    date: &'a str,
    partial: bool,
    pool: Option<Pool>,
    qrels_unjudged: bool,
    /// With `qrels-model.txt` only (absent otherwise, so earlier manifests are unchanged).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    model_assessors: Vec<ModelAssessor<'a>>,
    systems: Vec<System<'a>>,
    counts: &'a ReleaseCounts,
    files: Vec<FileEntry<'a>>,
}

#[derive(Serialize)]
struct Pool {
    strategy: &'static str,
    depth: u32,
}

#[derive(Serialize)]
struct System<'a> {
    name: &'a str,
    role: &'static str,
    description: &'a str,
    negative_sampling_ratio: Option<f64>,
    /// The run's file, when it is published.
    run_file: Option<&'a str>,
}

#[derive(Serialize)]
struct ModelAssessor<'a> {
    name: &'a str,
    /// A system's predictions: the system; else a command: its line and when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ran_at: Option<i64>,
    labels: u64,
}

#[derive(Serialize)]
struct FileEntry<'a> {
    path: &'a str,
    bytes: u64,
    sha256: String,
}

/// The lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// Writes `MANIFEST.json` for `files` (every other file of the release, sorted by path).
pub(crate) fn write(
    release: &Checked<'_>,
    options: &ReleaseOptions,
    counts: &ReleaseCounts,
    files: &[ReleaseFile],
) -> Result<Vec<u8>, ReleaseError> {
    let input = release.input;
    let manifest = Manifest {
        format: FORMAT,
        format_version: FORMAT_VERSION,
        project: &input.project,
        release: input.number.get(),
        date: input.date.as_str(),
        partial: input.partial,
        pool: input.pool.map(|p| Pool {
            strategy: p.strategy.as_str(),
            depth: p.depth.get(),
        }),
        qrels_unjudged: options.qrels_unjudged,
        model_assessors: if options.model_qrels {
            let mut assessors: Vec<ModelAssessor<'_>> = input
                .model_labels
                .iter()
                .map(|a| ModelAssessor {
                    name: &a.name,
                    system: a.source.system(),
                    command: a.source.command(),
                    ran_at: match a.source {
                        AssessorSource::Command { ran_at, .. } => Some(ran_at),
                        AssessorSource::System { .. } => None,
                    },
                    labels: a.labels.len() as u64,
                })
                .collect();
            assessors.sort_by_key(|a| a.name);
            assessors
        } else {
            Vec::new()
        },
        systems: release
            .systems
            .values()
            .map(|s| System {
                name: &s.name,
                role: s.role.as_str(),
                description: &s.description,
                negative_sampling_ratio: s.negative_sampling_ratio,
                run_file: release.runs.get(s.name.as_str()).map(|r| r.path.as_str()),
            })
            .collect(),
        counts,
        files: files
            .iter()
            .map(|f| FileEntry {
                path: &f.path,
                bytes: f.bytes.len() as u64,
                sha256: sha256_hex(&f.bytes),
            })
            .collect(),
    };
    pretty(MANIFEST, &manifest)
}
