//! How the server serves under load and abuse (issue 35): release downloads stream from the
//! database part by part (F11), connections that send no complete request header in time are
//! closed (F12), and heavy computations run a bounded number at a time with bounded
//! parameters (F10).

use crate::common::TestApp;
use reqwest::StatusCode;
use sha2::{Digest, Sha256};

/// The most bytes one release part holds.
const PART: usize = app::store::release_parts::PART_BYTES;

/// Records release 1 of `project` directly, from `parts` (written as the store writes them, then
/// made visible), with `archive_bytes` and `sha256` as recorded.
async fn record_release(
    app: &TestApp,
    project: i64,
    parts: &[&[u8]],
    archive_bytes: usize,
    sha256: &str,
) {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO release_rows (project_id, number, partial, manifest, sha256, archive_bytes,
                                   created_by, created_at, state, lock_token)
         VALUES ($1, 1, 0, '{}', $2, $3, NULL, 0, 'writing', 'test') RETURNING id",
    )
    .bind(project)
    .bind(sha256)
    .bind(archive_bytes as i64)
    .fetch_one(&app.db)
    .await
    .unwrap();
    for (seq, bytes) in parts.iter().enumerate() {
        sqlx::query("INSERT INTO release_parts (release_id, seq, bytes) VALUES ($1, $2, $3)")
            .bind(id)
            .bind(seq as i64)
            .bind(bytes.to_vec())
            .execute(&app.db)
            .await
            .unwrap();
    }
    sqlx::query("UPDATE release_rows SET state = 'done', lock_token = NULL WHERE id = $1")
        .bind(id)
        .execute(&app.db)
        .await
        .unwrap();
}

/// A project `p` led by `lead`, logged in.
async fn led_project(app: &TestApp) -> (i64, reqwest::Client) {
    let project = app::store::projects::create(&app.db, "p", "", None)
        .await
        .unwrap();
    app.add_lead("lead", "p").await;
    (project, app.logged_in("lead").await)
}

/// Pseudo-random bytes (incompressible, as an archive is).
fn noise(len: usize, seed: u64) -> Vec<u8> {
    use rand::{RngCore, SeedableRng};
    let mut bytes = vec![0u8; len];
    rand_chacha::ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut bytes);
    bytes
}

#[tokio::test]
async fn a_release_download_is_the_stored_archive_sent_part_by_part() {
    let app = TestApp::spawn().await;
    let (project, lead) = led_project(&app).await;
    let archive = noise(2 * PART + 4_321, 35);
    let sha = format!("{:x}", Sha256::digest(&archive));
    let parts: Vec<&[u8]> = archive.chunks(PART).collect();
    record_release(&app, project, &parts, archive.len(), &sha).await;

    for path in [
        "/lead/projects/p/releases/1/download".to_owned(),
        "/api/v1/projects/p/releases/1/archive".to_owned(),
    ] {
        let res = lead.get(app.url(&path)).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{path}");
        assert_eq!(
            res.headers()["content-length"],
            archive.len().to_string().as_str(),
            "{path}"
        );
        let body = res.bytes().await.unwrap();
        assert_eq!(format!("{:x}", Sha256::digest(&body)), sha, "{path}");
    }
}

/// A release whose second part is missing: a download that read the whole archive first
/// answered 500 without a byte; a streamed one has sent the first part, with its status and
/// headers, before it reads the second — so the client gets 200, the first part's bytes, and
/// then a body that ends early.
#[tokio::test]
async fn a_release_download_sends_each_part_before_reading_the_next() {
    let app = TestApp::spawn().await;
    let (project, lead) = led_project(&app).await;
    let archive = noise(3 * PART, 36);
    let sha = format!("{:x}", Sha256::digest(&archive));
    // Part 0 only: parts 1 and 2 are missing.
    let parts = [&archive[..PART]];
    record_release(&app, project, &parts, archive.len(), &sha).await;

    let mut res = lead
        .get(app.url("/lead/projects/p/releases/1/download"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "the response began before the missing part was read"
    );
    let mut received = Vec::new();
    let ended = loop {
        match res.chunk().await {
            Ok(Some(chunk)) => received.extend_from_slice(&chunk),
            Ok(None) => break "the body ended",
            Err(_) => break "the body failed",
        }
    };
    assert_eq!(ended, "the body failed", "fewer bytes than announced");
    assert_eq!(received.len(), PART, "exactly the first part arrived");
    assert_eq!(received, archive[..PART]);
}
