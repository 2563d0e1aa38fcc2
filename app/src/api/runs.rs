//! Uploading a system run from the lead's project page.

use crate::error::ApiError;
use crate::model::ImportSummary;
use leptos::prelude::*;
use leptos::server_fn::codec::{MultipartData, MultipartFormData};

/// Imports an uploaded run. Form fields: `project`, `system`, `role`, `format` (empty: detect),
/// `label_order`, `description`, `file`. The same checks as the command line; a rejected file
/// writes nothing and the error lists each problem with its line and field.
#[server(endpoint = "lead/runs/upload", input = MultipartFormData)]
pub async fn upload_run(data: MultipartData) -> Result<ImportSummary, ApiError> {
    crate::api::respond(upload(data).await)
}

#[cfg(feature = "ssr")]
async fn upload(data: MultipartData) -> Result<ImportSummary, ApiError> {
    use crate::domain::formats::{size_text, LabelOrder, RunFormat, RunReadOptions};
    use crate::store::import::{RunImport, SystemRole, SystemSpec};
    use tokio::io::AsyncWriteExt;

    // The project comes first in the form: the caller must lead it before any file is read.
    let mut caller: Option<crate::auth::ProjectCaller> = None;
    let db = crate::state::db()?;
    let limits = crate::state::limits()?;
    let mut form = data
        .into_inner()
        .ok_or_else(|| ApiError::Invalid("expected a multipart form".into()))?;
    let dir = tempfile_dir()?;
    let mut fields = std::collections::HashMap::new();
    let mut file = None;
    while let Some(mut field) = form
        .next_field()
        .await
        .map_err(|e| ApiError::Invalid(format!("reading the upload: {e}")))?
    {
        let name = field.name().unwrap_or_default().to_owned();
        if name == "file" && caller.is_none() {
            return Err(ApiError::Invalid(
                "the form names its project before the file".into(),
            ));
        }
        if name == "file" {
            let original = field.file_name().unwrap_or("run.jsonl").to_owned();
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
            let path = dir.path().join(if safe.is_empty() {
                "run.jsonl".to_owned()
            } else {
                safe
            });
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
                        "{original}: larger than this server's upload limit of {} (claimpool serve --max-upload-mb); import it with `claimpool import run` instead",
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
            file = Some(path);
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
                caller = Some(
                    crate::auth::require_project(
                        value.trim(),
                        crate::domain::account::ProjectRole::Lead,
                    )
                    .await?,
                );
            }
            fields.insert(name, value.trim().to_owned());
        }
    }
    let field = |name: &str| fields.get(name).cloned().unwrap_or_default();
    let path = file.ok_or_else(|| ApiError::Invalid("choose a run file to upload".into()))?;
    let caller = caller.ok_or_else(|| ApiError::Invalid("the form names no project".into()))?;
    let (project, user) = (caller.project_id(), caller.user());
    let system = field("system");
    let format = match field("format").as_str() {
        "" => None,
        other => Some(
            other
                .parse::<RunFormat>()
                .map_err(|e| ApiError::Invalid(format!("format: {e}")))?,
        ),
    };
    let label_order = match field("label_order").as_str() {
        "" => LabelOrder::default(),
        other => other
            .parse::<LabelOrder>()
            .map_err(|e| ApiError::Invalid(format!("label order: {e}")))?,
    };
    let run = RunImport {
        path: path.clone(),
        format,
        options: RunReadOptions {
            label_order,
            max_decompressed_bytes: Some(limits.max_decompressed_bytes),
            max_line_bytes: limits.max_line_bytes,
            max_sentences: limits.max_sentences,
            ..RunReadOptions::default()
        },
        system: SystemSpec {
            name: (!system.is_empty()).then_some(system),
            role: SystemRole::parse(&field("role"))?,
            description: field("description"),
            negative_sampling_ratio: None,
        },
        allow_missing_docs: false,
    };
    // Messages name the uploaded file, not the server's temporary directory.
    let prefix = format!("{}/", dir.path().display());
    let report = crate::store::import::run(&db, project, run, Some(user.id))
        .await
        .map_err(|e| ApiError::from(e).map_message(|m| m.replace(&prefix, "")))?;
    Ok(ImportSummary {
        file: report.file.replace(&prefix, ""),
        format: report.format,
        rows: report.rows,
        systems: report.systems,
        missing_docs: report.missing_docs,
    })
}

/// The name every upload's temporary directory starts with; `serve` removes those a crashed
/// server left behind ([`remove_stale_upload_dirs`]).
#[cfg(feature = "ssr")]
pub const UPLOAD_DIR_PREFIX: &str = "claimpool-upload-";

#[cfg(feature = "ssr")]
fn tempfile_dir() -> Result<tempfile::TempDir, ApiError> {
    tempfile::Builder::new()
        .prefix(UPLOAD_DIR_PREFIX)
        .tempdir()
        .map_err(|e| ApiError::Internal(format!("a temporary directory: {e}")))
}

/// Removes upload directories under `tmp` older than `age` (a running server's uploads are
/// younger; a crashed one's are left behind). Returns how many were removed.
#[cfg(feature = "ssr")]
pub fn remove_stale_upload_dirs(tmp: &std::path::Path, age: std::time::Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return 0;
    };
    let now = std::time::SystemTime::now();
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(UPLOAD_DIR_PREFIX)
        })
        .filter(|e| {
            e.metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|elapsed| elapsed >= age)
        })
        .filter(|e| std::fs::remove_dir_all(e.path()).is_ok())
        .count()
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;

    #[test]
    fn stale_upload_dirs_go_fresh_ones_and_others_stay() {
        let tmp = tempfile::tempdir().unwrap();
        let stale = tmp.path().join(format!("{UPLOAD_DIR_PREFIX}old"));
        let fresh = tmp.path().join(format!("{UPLOAD_DIR_PREFIX}new"));
        let other = tmp.path().join("someone-else");
        for dir in [&stale, &fresh, &other] {
            std::fs::create_dir(dir).unwrap();
            std::fs::write(dir.join("run.jsonl"), "{}").unwrap();
        }
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
        std::fs::File::open(&stale)
            .unwrap()
            .set_modified(old)
            .unwrap();
        std::fs::File::open(&other)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let removed = remove_stale_upload_dirs(tmp.path(), std::time::Duration::from_secs(3600));
        assert_eq!(removed, 1);
        assert!(!stale.exists() && fresh.exists() && other.exists());
    }
}
