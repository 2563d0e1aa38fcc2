//! Uploading a system run from the lead's project page.

use crate::api::imports::JobRow;
use crate::error::ApiError;
use leptos::prelude::*;
use leptos::server_fn::codec::{MultipartData, MultipartFormData};

/// Uploads a run and queues its import, as `lead/import/upload` with `kind` `run` does: the
/// import runs in the job queue, one at a time, under the queue's bound (a full queue refuses
/// the upload before its file is received). Form fields: `project` (first), `system`, `role`,
/// `format` (empty: detect), `label_order`, `description`, `file`. The same checks as the
/// command line; a rejected file fails its job with each problem, its line and field, and
/// writes nothing.
#[server(endpoint = "lead/runs/upload", input = MultipartFormData)]
pub async fn upload_run(data: MultipartData) -> Result<JobRow, ApiError> {
    crate::api::respond(upload(data).await)
}

#[cfg(feature = "ssr")]
async fn upload(data: MultipartData) -> Result<JobRow, ApiError> {
    let limits = crate::state::limits()?;
    let db = crate::state::db()?;
    let saved = crate::api::upload::save(data, "run.jsonl").await?;
    let what = saved.what(Some("run"))?;
    crate::api::imports::queue_saved(&db, saved, what, &limits).await
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
                .starts_with(crate::api::upload::UPLOAD_DIR_PREFIX)
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
    use crate::api::upload::UPLOAD_DIR_PREFIX;

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
