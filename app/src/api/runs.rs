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
    use crate::domain::formats::{LabelOrder, RunFormat, RunReadOptions};
    use crate::store::import::{RunImport, SystemRole, SystemSpec};
    use tokio::io::AsyncWriteExt;

    let user = crate::auth::require(crate::domain::account::Role::Lead).await?;
    let db = crate::state::db()?;
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
            while let Some(chunk) = field
                .chunk()
                .await
                .map_err(|e| ApiError::Invalid(format!("reading the upload: {e}")))?
            {
                out.write_all(&chunk)
                    .await
                    .map_err(|e| ApiError::Internal(format!("saving the upload: {e}")))?;
            }
            out.flush()
                .await
                .map_err(|e| ApiError::Internal(format!("saving the upload: {e}")))?;
            file = Some(path);
        } else {
            let value = field
                .text()
                .await
                .map_err(|e| ApiError::Invalid(format!("reading field {name}: {e}")))?;
            fields.insert(name, value.trim().to_owned());
        }
    }
    let field = |name: &str| fields.get(name).cloned().unwrap_or_default();
    let path = file.ok_or_else(|| ApiError::Invalid("choose a run file to upload".into()))?;
    let project = crate::store::projects::id_by_name(&db, &field("project")).await?;
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

#[cfg(feature = "ssr")]
fn tempfile_dir() -> Result<tempfile::TempDir, ApiError> {
    tempfile::tempdir().map_err(|e| ApiError::Internal(format!("a temporary directory: {e}")))
}
