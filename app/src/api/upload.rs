//! Reading an upload form (server side): the project first (the caller must lead it before
//! anything else is read, and a place in the job queue is held before the file is), a bounded
//! number of text fields, and the file streamed to a directory of its own under the server's
//! upload limits.

use crate::auth::ProjectCaller;
use crate::domain::account::ProjectRole;
use crate::domain::formats::size_text;
use crate::error::ApiError;
use crate::state::UploadLimits;
use commands::import::{ImportJob, ImportKind, ImportWhat, ReadLimits};
use leptos::server_fn::codec::MultipartData;
use std::collections::HashMap;
use std::path::PathBuf;
use tokio::io::AsyncWriteExt;

/// The name every upload's directory starts with; `serve` removes those a crashed server left
/// behind ([`crate::api::runs::remove_stale_upload_dirs`]).
pub use commands::import::UPLOAD_DIR_PREFIX;

/// An upload form, read and saved.
pub(crate) struct SavedUpload {
    /// Who sent it: a lead of the project the form names.
    pub caller: ProjectCaller,
    /// The text fields, trimmed.
    pub fields: HashMap<String, String>,
    /// The file as uploaded (its name) and as saved.
    pub file: (String, PathBuf),
    /// The file's directory (removed when dropped, unless kept).
    pub dir: tempfile::TempDir,
    /// The place in the job queue held for its import (released when dropped).
    pub slot: commands::jobs::Slot,
}

impl SavedUpload {
    /// A text field, empty when absent.
    pub fn field(&self, name: &str) -> String {
        self.fields.get(name).cloned().unwrap_or_default()
    }

    /// What the form imports, by its `kind` field (`corpus`, `claims`, `run`, `judgments`), or
    /// by `kind` when given.
    pub fn what(&self, kind: Option<&str>) -> Result<ImportKind, ApiError> {
        let kind = kind.map_or_else(|| self.field("kind"), str::to_owned);
        what_of(&kind, &self.fields)
    }

    /// The import of the saved file as `what`, read under `limits`.
    pub fn job(&self, what: ImportKind, limits: &UploadLimits) -> Result<ImportJob, ApiError> {
        let (file, path) = self.file.clone();
        let bytes = std::fs::metadata(&path)
            .map_err(|e| ApiError::Internal(format!("the saved upload: {e}")))?
            .len();
        Ok(ImportJob {
            file,
            path,
            bytes,
            limits: ReadLimits {
                max_decompressed_bytes: limits.max_decompressed_bytes,
                max_line_bytes: limits.max_line_bytes,
                max_sentences: limits.max_sentences,
            },
            what,
            upload: None,
        })
    }
}

/// What a file of `kind` (`corpus`, `claims`, `run`, `judgments`) imports, with the options in
/// `fields` (as the command line's: `format`; runs: `system`, `role`, `label_order`,
/// `description`; judgments: `annotator`, `stage`), checked.
pub fn what_of(kind: &str, fields: &HashMap<String, String>) -> Result<ImportKind, ApiError> {
    let field = |name: &str| {
        fields
            .get(name)
            .map(|v| v.trim().to_owned())
            .unwrap_or_default()
    };
    let optional = |name: &str| Some(field(name)).filter(|v| !v.is_empty());
    let what = match kind {
        "corpus" => ImportWhat::Corpus {
            format: optional("format"),
        },
        "claims" => ImportWhat::Claims,
        "run" => ImportWhat::Run {
            system: optional("system"),
            role: optional("role").unwrap_or_else(|| "pooled".into()),
            format: optional("format"),
            label_order: optional("label_order"),
            description: field("description"),
            negative_sampling_ratio: None,
            allow_missing_docs: false,
        },
        "judgments" => ImportWhat::Judgments {
            annotator: field("annotator"),
            stage: optional("stage").unwrap_or_else(|| "final".into()),
            format: optional("format"),
        },
        other => {
            return Err(ApiError::Invalid(format!(
                "kind: {other:?} is not corpus, claims, run or judgments"
            )))
        }
    };
    Ok(ImportKind::try_from(what)?)
}

/// A file being saved to an upload's directory, refused once larger than the server's limit.
struct FileSink {
    original: String,
    path: PathBuf,
    out: tokio::fs::File,
    written: u64,
    max_bytes: u64,
}

impl FileSink {
    /// A new file in `dir` for the upload named `original` (`default` when it names nothing
    /// safe).
    async fn create(
        dir: &std::path::Path,
        original: &str,
        default: &str,
        max_bytes: u64,
    ) -> Result<FileSink, ApiError> {
        let path = dir.join(safe_name(original, default));
        let out = tokio::fs::File::create(&path)
            .await
            .map_err(|e| ApiError::Internal(format!("saving the upload: {e}")))?;
        Ok(FileSink {
            original: original.to_owned(),
            path,
            out,
            written: 0,
            max_bytes,
        })
    }

    async fn write(&mut self, chunk: &[u8]) -> Result<(), ApiError> {
        self.written += chunk.len() as u64;
        if self.written > self.max_bytes {
            return Err(ApiError::Invalid(format!(
                "{}: larger than this server's upload limit of {} (claimpool serve --max-upload-mb); import it with `claimpool import` instead",
                self.original,
                size_text(self.max_bytes)
            )));
        }
        self.out
            .write_all(chunk)
            .await
            .map_err(|e| ApiError::Internal(format!("saving the upload: {e}")))
    }

    /// The file as uploaded (its name) and as saved.
    async fn finish(mut self) -> Result<(String, PathBuf), ApiError> {
        self.out
            .flush()
            .await
            .map_err(|e| ApiError::Internal(format!("saving the upload: {e}")))?;
        Ok((self.original, self.path))
    }
}

/// A file name safe to create: letters, digits, `.`, `-` and `_` kept, the rest `_`.
fn safe_name(original: &str, default: &str) -> String {
    let safe: String = original
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.trim_matches('.').is_empty() {
        default.to_owned()
    } else {
        safe
    }
}

fn new_dir() -> Result<tempfile::TempDir, ApiError> {
    tempfile::Builder::new()
        .prefix(UPLOAD_DIR_PREFIX)
        .tempdir()
        .map_err(|e| ApiError::Internal(format!("a temporary directory: {e}")))
}

/// The most text fields an upload form may have besides its file (it knows nine: `project`,
/// `kind` and the options): each is kept in memory until the form is read, so their number is
/// bounded as their size is (`max_field_bytes`).
pub const MAX_FORM_FIELDS: usize = 16;

/// A text field's value (the field's stream of chunks), refused once longer than `max_bytes`.
async fn text_field<B: AsRef<[u8]>, E: std::fmt::Display>(
    field: impl futures::Stream<Item = Result<B, E>>,
    name: &str,
    max_bytes: usize,
) -> Result<String, ApiError> {
    use futures::StreamExt;
    let mut field = std::pin::pin!(field);
    let mut value = Vec::new();
    while let Some(chunk) = field.next().await {
        let chunk = chunk.map_err(|e| ApiError::Invalid(format!("reading field {name}: {e}")))?;
        let chunk = chunk.as_ref();
        if value.len() + chunk.len() > max_bytes {
            return Err(ApiError::Invalid(format!(
                "field {name}: longer than {}",
                size_text(max_bytes as u64)
            )));
        }
        value.extend_from_slice(chunk);
    }
    String::from_utf8(value).map_err(|_| ApiError::Invalid(format!("field {name}: not UTF-8 text")))
}

/// What reading the next part of a form failed with.
fn unreadable(e: impl std::fmt::Display) -> ApiError {
    ApiError::Invalid(format!("reading the upload: {e}"))
}

/// Reads an upload form. Its first field is `project`: the caller must lead that project before
/// anything else of the form is read, and a place in the server's job queue is held
/// (`commands::jobs::reserve`: a full queue refuses the form at once) before the file is
/// received. At most [`MAX_FORM_FIELDS`] text fields follow, each at most the server's
/// `max_field_bytes`; the file (named `default` when the browser gives no name) is streamed to
/// disk under the server's limits.
pub(crate) async fn save(data: MultipartData, default: &str) -> Result<SavedUpload, ApiError> {
    let limits = crate::state::limits()?;
    let db = crate::state::db()?;
    let mut form = data
        .into_inner()
        .ok_or_else(|| ApiError::Invalid("expected a multipart form".into()))?;
    let first = form
        .next_field()
        .await
        .map_err(unreadable)?
        .ok_or_else(|| ApiError::Invalid("the form names no project".into()))?;
    if first.name() != Some("project") {
        return Err(ApiError::Invalid(
            "the form names its project first (field project), before its other fields and the file"
                .into(),
        ));
    }
    let project = text_field(first, "project", limits.max_field_bytes).await?;
    let caller = crate::auth::require_project(project.trim(), ProjectRole::Lead).await?;
    let slot = commands::jobs::reserve(&db, &caller).await?;
    let mut fields = HashMap::from([("project".to_owned(), project.trim().to_owned())]);
    let mut file = None;
    while let Some(mut field) = form.next_field().await.map_err(unreadable)? {
        let name = field.name().unwrap_or_default().to_owned();
        if name == "file" {
            if file.is_some() {
                return Err(ApiError::Invalid(
                    "the form holds more than one file".into(),
                ));
            }
            let dir = new_dir()?;
            let original = field.file_name().unwrap_or(default).to_owned();
            let mut sink =
                FileSink::create(dir.path(), &original, default, limits.max_file_bytes).await?;
            while let Some(chunk) = field.chunk().await.map_err(unreadable)? {
                sink.write(&chunk).await?;
            }
            file = Some((sink.finish().await?, dir));
        } else {
            if fields.contains_key(&name) {
                return Err(ApiError::Invalid(format!("field {name}: given twice")));
            }
            if fields.len() >= MAX_FORM_FIELDS {
                return Err(ApiError::Invalid(format!(
                    "the form has more than {MAX_FORM_FIELDS} fields besides its file"
                )));
            }
            let value = text_field(field, &name, limits.max_field_bytes).await?;
            fields.insert(name, value.trim().to_owned());
        }
    }
    let (file, dir) = file.ok_or_else(|| ApiError::Invalid("choose a file to upload".into()))?;
    Ok(SavedUpload {
        caller,
        fields,
        file,
        dir,
        slot,
    })
}

/// Saves a request body that is the file itself (the HTTP API's imports): the caller already
/// leads the project and holds a place in the job queue (`slot`), `fields` are the import's
/// options, `file_name` names the file in messages. Streamed to disk under the server's limits,
/// as a form's file is.
pub(crate) async fn save_body(
    caller: ProjectCaller,
    slot: commands::jobs::Slot,
    fields: HashMap<String, String>,
    file_name: &str,
    body: axum::body::Body,
    limits: &UploadLimits,
) -> Result<SavedUpload, ApiError> {
    use futures::StreamExt;
    let dir = new_dir()?;
    let mut sink =
        FileSink::create(dir.path(), file_name, "upload.jsonl", limits.max_file_bytes).await?;
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| ApiError::Invalid(format!("reading the body: {e}")))?;
        sink.write(&chunk).await?;
    }
    let file = sink.finish().await?;
    Ok(SavedUpload {
        caller,
        fields,
        file,
        dir,
        slot,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_made_safe() {
        assert_eq!(safe_name("my run (1).jsonl", "x"), "my_run__1_.jsonl");
        assert_eq!(safe_name("../../etc/passwd", "x"), ".._.._etc_passwd");
        assert_eq!(safe_name("..", "run.jsonl"), "run.jsonl");
        assert_eq!(safe_name("", "run.jsonl"), "run.jsonl");
    }
}
