//! Personal API tokens (issue 14): a user's scripts send `Authorization: Bearer cp_...` and act
//! with the user's account role and project roles, as the user's session would.
//!
//! A token is `cp_` followed by 32 bytes from the operating system's random source, in hex. Only
//! its SHA-256 is stored, and a request's token is looked up by its SHA-256. A slow password hash
//! (argon2id, as for passwords) would add nothing here: a 256-bit random secret cannot be guessed
//! or brute-forced from its digest, whereas a password can. And argon2id costs ~19 MiB of memory
//! and a core's tens of milliseconds for *every API request*, which scripts make by the thousand.
//!
//! Invariants: the token itself is returned once, by [`create`], and never stored or logged; a
//! token works only while it is not revoked and its user is active (checked at every request);
//! deactivating a user or setting their password revokes their tokens for good; names are unique among a user's live
//! tokens; creation and revocation are audited; a revoked token keeps its row.

use super::audit::{json, AuditEvent};
use super::users::user_from_row;
use super::{now_ms, Constraint, Db, Field, OnConstraint, StoreError, StoreResult};
use domain::account::User;
use domain::hex::hex;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sqlx::Row;

/// What every token starts with (and what a request's `Bearer` value must start with).
pub const TOKEN_PREFIX: &str = "cp_";

/// Random bytes per token.
const SECRET_BYTES: usize = 32;

/// The longest token name, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// How stale `last_used_at` may get before a use records itself again (a request's use is a
/// write: at most one per token and minute).
const LAST_USED_RESOLUTION_MS: i64 = 60_000;

/// A token as its owner sees it listed (never the secret).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApiToken {
    pub id: i64,
    pub name: String,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// When a request last used it (to the minute), if ever.
    pub last_used_at: Option<i64>,
}

/// A token just created: its listing and the token itself, shown once.
#[derive(Clone, Debug)]
pub struct IssuedToken {
    pub token: ApiToken,
    pub secret: String,
}

/// A fresh token: [`TOKEN_PREFIX`] and 64 hex digits.
fn generate() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; SECRET_BYTES];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{TOKEN_PREFIX}{}", hex(&bytes))
}

/// The stored form of a token: its SHA-256 in hex.
fn digest(secret: &str) -> String {
    hex(&Sha256::digest(secret.as_bytes()))
}

/// Whether `secret` has the shape of a token (so that garbage costs no query).
fn well_formed(secret: &str) -> bool {
    secret.strip_prefix(TOKEN_PREFIX).is_some_and(|rest| {
        rest.len() == 2 * SECRET_BYTES && rest.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// A token name: 1 to [`MAX_NAME_CHARS`] printable characters, trimmed.
pub fn check_name(name: &str) -> StoreResult<&str> {
    let name = name.trim();
    if name.is_empty()
        || name.chars().count() > MAX_NAME_CHARS
        || name.chars().any(char::is_control)
    {
        return Err(StoreError::invalid(
            Field::Name,
            format!("a token name has 1 to {MAX_NAME_CHARS} printable characters (got {name:?})"),
        ));
    }
    Ok(name)
}

fn token_from_row(row: &sqlx::any::AnyRow) -> StoreResult<ApiToken> {
    Ok(ApiToken {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        created_at: row.try_get("created_at")?,
        last_used_at: row.try_get("last_used_at")?,
    })
}

/// Creates a token named `name` for the user `user_id`; audited as done by `actor_id`.
pub async fn create(
    db: &Db,
    user_id: i64,
    name: &str,
    actor_id: Option<i64>,
) -> StoreResult<IssuedToken> {
    let name = check_name(name)?;
    let secret = generate();
    let created_at = now_ms();
    let mut tx = super::write_gate::begin(db).await?;
    let id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO api_tokens (user_id, name, token_sha256, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(user_id)
    .bind(name)
    .bind(digest(&secret))
    .bind(created_at)
    .fetch_one(&mut *tx)
    .await
    .on_unique(Constraint::TokenName, || {
        format!("name: a token named {name:?} exists already; revoke it or choose another name")
    })?;
    AuditEvent {
        project_id: None,
        actor_id,
        action: "create",
        entity: "api_token",
        entity_id: Some(id.to_string()),
        old_value: None,
        new_value: json(&serde_json::json!({ "user_id": user_id, "name": name })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(IssuedToken {
        token: ApiToken {
            id,
            name: name.to_owned(),
            created_at,
            last_used_at: None,
        },
        secret,
    })
}

/// The user's live tokens, newest first.
pub async fn list(db: &Db, user_id: i64) -> StoreResult<Vec<ApiToken>> {
    sqlx::query(
        "SELECT id, name, created_at, last_used_at FROM api_tokens
         WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC, id DESC",
    )
    .bind(user_id)
    .fetch_all(db)
    .await?
    .iter()
    .map(token_from_row)
    .collect()
}

/// Revokes the user's live token named `name` (it stops working at once); audited.
pub async fn revoke(
    db: &Db,
    user_id: i64,
    name: &str,
    actor_id: Option<i64>,
) -> StoreResult<ApiToken> {
    let name = name.trim();
    let mut tx = super::write_gate::begin(db).await?;
    let row = sqlx::query(
        "UPDATE api_tokens SET revoked_at = $1 WHERE user_id = $2 AND name = $3 AND revoked_at IS NULL
         RETURNING id, name, created_at, last_used_at",
    )
    .bind(now_ms())
    .bind(user_id)
    .bind(name)
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("a live token named {name:?}")))?;
    let token = token_from_row(&row)?;
    AuditEvent {
        project_id: None,
        actor_id,
        action: "revoke",
        entity: "api_token",
        entity_id: Some(token.id.to_string()),
        old_value: None,
        new_value: json(&serde_json::json!({ "user_id": user_id, "name": token.name })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(token)
}

/// Revokes every live token of the user `user_id` in the caller's write transaction, each
/// audited as done by `actor_id` for `reason` (issue 35: a password set, a deactivation);
/// returns how many.
pub(super) async fn revoke_all(
    tx: &mut super::write_gate::WriteTx,
    user_id: i64,
    actor_id: Option<i64>,
    reason: &str,
) -> StoreResult<usize> {
    let revoked: Vec<(i64, String)> = sqlx::query_as(
        "UPDATE api_tokens SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL
         RETURNING id, name",
    )
    .bind(now_ms())
    .bind(user_id)
    .fetch_all(&mut **tx)
    .await?;
    for (id, name) in &revoked {
        AuditEvent {
            project_id: None,
            actor_id,
            action: "revoke",
            entity: "api_token",
            entity_id: Some(id.to_string()),
            old_value: None,
            new_value: json(
                &serde_json::json!({ "user_id": user_id, "name": name, "reason": reason }),
            ),
        }
        .record(tx)
        .await?;
    }
    Ok(revoked.len())
}

/// The user a request's token acts for: None unless the token is live and its user active.
/// Records the use (at most once a minute per token).
pub async fn user_for(db: &Db, secret: &str) -> StoreResult<Option<User>> {
    if !well_formed(secret) {
        return Ok(None);
    }
    let row = sqlx::query(
        "SELECT t.id AS token_id, t.last_used_at, u.id, u.username, u.role, u.active
         FROM api_tokens t JOIN users u ON u.id = t.user_id
         WHERE t.token_sha256 = $1 AND t.revoked_at IS NULL AND u.active = 1",
    )
    .bind(digest(secret))
    .fetch_optional(db)
    .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let user = user_from_row(&row)?;
    let now = now_ms();
    let last_used: Option<i64> = row.try_get("last_used_at")?;
    if last_used.is_none_or(|at| now - at >= LAST_USED_RESOLUTION_MS) {
        let mut tx = super::write_gate::begin(db).await?;
        sqlx::query("UPDATE api_tokens SET last_used_at = $1 WHERE id = $2")
            .bind(now)
            .bind(row.try_get::<i64, _>("token_id")?)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
    }
    Ok(Some(user))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_prefixed_random_hex_and_stored_as_their_digest() {
        let (a, b) = (generate(), generate());
        assert_ne!(a, b);
        assert!(well_formed(&a) && well_formed(&b), "{a}");
        assert_eq!(a.len(), TOKEN_PREFIX.len() + 64);
        assert_eq!(
            digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(!well_formed("cp_short"));
        assert!(!well_formed(&a.replacen("cp_", "xx_", 1)));
        assert!(!well_formed(&format!("{}g", &a[..a.len() - 1])));
    }

    #[test]
    fn names_are_checked() {
        assert_eq!(check_name("  ci script ").unwrap(), "ci script");
        assert!(check_name("  ").is_err());
        assert!(check_name(&"x".repeat(65)).is_err());
        assert!(check_name("a\nb").is_err());
    }

    #[tokio::test]
    async fn a_token_works_until_revoked_or_its_user_is_deactivated() {
        let test = crate::test_db::TestDb::fresh().await;
        let db = test.db.clone();
        let name = domain::account::Username::parse("alice").unwrap();
        let hash = "$argon2id$v=19$m=19456,t=2,p=1$bm8tbG9naW4$bm8tbG9naW4";
        let role = domain::account::Role::Lead;
        let alice = crate::users::create(&db, &name, role, hash, None)
            .await
            .unwrap();
        let issued = create(&db, alice.id, "ci", Some(alice.id)).await.unwrap();
        assert!(matches!(
            create(&db, alice.id, "ci", None).await,
            Err(StoreError::Conflict {
                constraint: Constraint::TokenName,
                ..
            })
        ));
        let user = user_for(&db, &issued.secret).await.unwrap().unwrap();
        assert_eq!(user.username, "alice");
        assert!(user_for(&db, &generate()).await.unwrap().is_none());
        let listed = list(&db, alice.id).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert!(listed[0].last_used_at.is_some());
        let stored: String = sqlx::query_scalar("SELECT token_sha256 FROM api_tokens")
            .fetch_one(&db)
            .await
            .unwrap();
        assert_eq!(stored, digest(&issued.secret));
        assert_ne!(stored, issued.secret);

        revoke(&db, alice.id, "ci", Some(alice.id)).await.unwrap();
        assert!(user_for(&db, &issued.secret).await.unwrap().is_none());
        assert!(list(&db, alice.id).await.unwrap().is_empty());
        assert!(matches!(
            revoke(&db, alice.id, "ci", None).await,
            Err(StoreError::NotFound(_))
        ));
        // The name is free again once revoked.
        create(&db, alice.id, "ci", None).await.unwrap();
        let audited: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM audit_events WHERE entity = 'api_token'")
                .fetch_one(&db)
                .await
                .unwrap();
        assert_eq!(audited, 3);

        // Deactivation revokes the user's tokens for good (issue 35): reactivated, they make
        // new ones.
        let live = create(&db, alice.id, "nightly", None).await.unwrap();
        crate::accounts::set_active(&db, "alice", false, None)
            .await
            .unwrap();
        assert!(user_for(&db, &live.secret).await.unwrap().is_none());
        crate::accounts::set_active(&db, "alice", true, None)
            .await
            .unwrap();
        assert!(user_for(&db, &live.secret).await.unwrap().is_none());
        assert!(list(&db, alice.id).await.unwrap().is_empty());
        // So does a new password.
        let live = create(&db, alice.id, "nightly", None).await.unwrap();
        crate::accounts::set_password(&db, "alice", hash, None)
            .await
            .unwrap();
        assert!(user_for(&db, &live.secret).await.unwrap().is_none());
    }
}
