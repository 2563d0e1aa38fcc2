//! Reading an upload form (server side): the project first (the caller must lead it before any
//! file is read), the text fields, and the file streamed to a directory of its own under the
//! server's upload limits.

use crate::auth::ProjectCaller;
use crate::domain::account::ProjectRole;
use crate::domain::formats::size_text;
use crate::error::ApiError;
use crate::state::UploadLimits;
use crate::store::import_job::{ImportJob, ImportWhat, ReadLimits};
use leptos::server_fn::codec::MultipartData;
use std::collections::HashMap;
use std::path::PathBuf;
use tokio::io::AsyncWriteExt;

/// The name every upload's directory starts with; `serve` removes those a crashed server left
/// behind ([`crate::api::runs::remove_stale_upload_dirs`]).
pub use crate::store::import_job::UPLOAD_DIR_PREFIX;

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
}

impl SavedUpload {
    /// A text field, empty when absent.
    pub fn field(&self, name: &str) -> String {
        self.fields.get(name).cloned().unwrap_or_default()
    }

    /// A text field, None when absent or blank.
    pub fn optional(&self, name: &str) -> Option<String> {
        Some(self.field(name)).filter(|v| !v.is_empty())
    }

    /// What the form imports, by its `kind` field (`corpus`, `claims`, `run`, `judgments`), or
    /// by `kind` when given.
    pub fn what(&self, kind: Option<&str>) -> Result<ImportWhat, ApiError> {
        let kind = kind.map_or_else(|| self.field("kind"), str::to_owned);
        let what = match kind.as_str() {
            "corpus" => ImportWhat::Corpus {
                format: self.optional("format"),
            },
            "claims" => ImportWhat::Claims,
            "run" => ImportWhat::Run {
                system: self.optional("system"),
                role: self.optional("role").unwrap_or_else(|| "pooled".into()),
                format: self.optional("format"),
                label_order: self.optional("label_order"),
                description: self.field("description"),
            },
            "judgments" => ImportWhat::Judgments {
                annotator: self.field("annotator"),
                stage: self.optional("stage").unwrap_or_else(|| "final".into()),
                format: self.optional("format"),
            },
            other => {
                return Err(ApiError::Invalid(format!(
                    "kind: {other:?} is not corpus, claims, run or judgments"
                )))
            }
        };
        what.check()?;
        Ok(what)
    }

    /// The import of the saved file as `what`, read under `limits`.
    pub fn job(&self, what: ImportWhat, limits: &UploadLimits) -> Result<ImportJob, ApiError> {
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
        })
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

/// Reads an upload form: `project` must come before `file`; the file (named `default` when the
/// browser gives no name) is streamed to disk under the server's limits.
pub(crate) async fn save(data: MultipartData, default: &str) -> Result<SavedUpload, ApiError> {
    let limits = crate::state::limits()?;
    let mut caller: Option<ProjectCaller> = None;
    let mut form = data
        .into_inner()
        .ok_or_else(|| ApiError::Invalid("expected a multipart form".into()))?;
    let dir = new_dir()?;
    let mut fields = HashMap::new();
    let mut file = None;
    while let Some(mut field) = form
        .next_field()
        .await
        .map_err(|e| ApiError::Invalid(format!("reading the upload: {e}")))?
    {
        let name = field.name().unwrap_or_default().to_owned();
        if name == "file" {
            if caller.is_none() {
                return Err(ApiError::Invalid(
                    "the form names its project before the file".into(),
                ));
            }
            let original = field.file_name().unwrap_or(default).to_owned();
            let path = dir.path().join(safe_name(&original, default));
            let mut out = tokio::fs::File::create(&path)
                .await
                .map_err(|e| ApiError::Internal(format!("saving the upload: {e}")))?;
            let mut written = 0u64;
            while let Some(chunk) = field
                .chunk()
                .await
                .map_err(|e| ApiError::Invalid(format!("reading the upload: {e}")))?
            {
                written += chunk.len() as u64;
                if written > limits.max_file_bytes {
                    return Err(ApiError::Invalid(format!(
                        "{original}: larger than this server's upload limit of {} (claimpool serve --max-upload-mb); import it with `claimpool import` instead",
                        size_text(limits.max_file_bytes)
                    )));
                }
                out.write_all(&chunk)
                    .await
                    .map_err(|e| ApiError::Internal(format!("saving the upload: {e}")))?;
            }
            out.flush()
                .await
                .map_err(|e| ApiError::Internal(format!("saving the upload: {e}")))?;
            file = Some((original, path));
        } else {
            let mut value = Vec::new();
            while let Some(chunk) = field
                .chunk()
                .await
                .map_err(|e| ApiError::Invalid(format!("reading field {name}: {e}")))?
            {
                if value.len() + chunk.len() > limits.max_field_bytes {
                    return Err(ApiError::Invalid(format!(
                        "field {name}: longer than {}",
                        size_text(limits.max_field_bytes as u64)
                    )));
                }
                value.extend_from_slice(&chunk);
            }
            let value = String::from_utf8(value)
                .map_err(|_| ApiError::Invalid(format!("field {name}: not UTF-8 text")))?;
            if name == "project" {
                caller = Some(crate::auth::require_project(value.trim(), ProjectRole::Lead).await?);
            }
            fields.insert(name, value.trim().to_owned());
        }
    }
    let caller = caller.ok_or_else(|| ApiError::Invalid("the form names no project".into()))?;
    let file = file.ok_or_else(|| ApiError::Invalid("choose a file to upload".into()))?;
    Ok(SavedUpload {
        caller,
        fields,
        file,
        dir,
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
