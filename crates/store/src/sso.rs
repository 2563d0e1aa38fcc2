//! Single sign-on: the sign-ins in progress (until the provider sends the browser back, to
//! whichever server), and the provider's identities bound to accounts. Who an identity signs in
//! as is `domain::sso::decide`'s; this runs it in the write transaction that binds or creates.

use super::audit::AuditEvent;
use super::users::user_from_row;
use super::{now_ms, Db, StoreResult};
use domain::account::{Role, User, Username};
use domain::sso::{Decision, NewUsers, Refusal};
use sqlx::Row;

/// How long a sign-in may take at the provider before its state is forgotten.
pub const LOGIN_TTL_MS: i64 = 10 * 60 * 1000;

/// A sign-in sent to the provider: what its return needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingLogin {
    pub pkce_verifier: String,
    pub nonce: String,
    /// The same-site path to go to once signed in.
    pub next: String,
}

/// Records a sign-in sent to the provider under its `state`; forgets expired ones.
pub async fn begin(db: &Db, state: &str, login: &PendingLogin) -> StoreResult<()> {
    let now = now_ms();
    let mut tx = super::write_gate::begin(db).await?;
    sqlx::query("DELETE FROM sso_logins WHERE created_at < $1")
        .bind(now - LOGIN_TTL_MS)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO sso_logins (state, pkce_verifier, nonce, next, created_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(state)
    .bind(&login.pkce_verifier)
    .bind(&login.nonce)
    .bind(&login.next)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Takes the sign-in of `state` (once: a second return with the same state finds nothing), if it
/// has not expired.
pub async fn take(db: &Db, state: &str) -> StoreResult<Option<PendingLogin>> {
    let mut tx = super::write_gate::begin(db).await?;
    let row: Option<(String, String, String, i64)> = sqlx::query_as(
        "DELETE FROM sso_logins WHERE state = $1 RETURNING pkce_verifier, nonce, next, created_at",
    )
    .bind(state)
    .fetch_optional(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(row
        .filter(|(_, _, _, at)| *at >= now_ms() - LOGIN_TTL_MS)
        .map(|(pkce_verifier, nonce, next, _)| PendingLogin {
            pkce_verifier,
            nonce,
            next,
        }))
}

/// An identity at the provider.
#[derive(Clone, Copy, Debug)]
pub struct Identity<'a> {
    pub issuer: &'a str,
    pub subject: &'a str,
}

/// Signs `identity` in (`domain::sso::decide`), binding it or creating an annotator's account
/// named `name` with `new_password_hash` (a hash no password matches) as the decision says; the
/// binding and the account are audited.
pub async fn sign_in(
    db: &Db,
    identity: Identity<'_>,
    name: Username,
    new_users: NewUsers,
    new_password_hash: &str,
) -> StoreResult<Result<User, Refusal>> {
    let mut tx = super::write_gate::begin(db).await?;
    let bound = sqlx::query(
        "SELECT u.id, u.username, u.role, u.active FROM sso_identities i \
         JOIN users u ON u.id = i.user_id WHERE i.issuer = $1 AND i.subject = $2",
    )
    .bind(identity.issuer)
    .bind(identity.subject)
    .fetch_optional(&mut *tx)
    .await?
    .map(|row| user_from_row(&row))
    .transpose()?;
    let named = match bound {
        Some(_) => None,
        None => {
            let row = sqlx::query(
                "SELECT id, username, role, active, EXISTS (SELECT 1 FROM sso_identities i \
                 WHERE i.issuer = $1 AND i.user_id = users.id) AS bound \
                 FROM users WHERE username = $2",
            )
            .bind(identity.issuer)
            .bind(name.as_str())
            .fetch_optional(&mut *tx)
            .await?;
            match row {
                Some(row) => Some(domain::sso::Named {
                    user: user_from_row(&row)?,
                    bound_elsewhere: row.try_get::<super::flag::Flag, _>("bound")?.0,
                }),
                None => None,
            }
        }
    };
    let user = match domain::sso::decide(bound, named, name, new_users) {
        Decision::SignIn(user) => user,
        Decision::Refuse(refusal) => return Ok(Err(refusal)),
        Decision::Bind(user) => {
            bind(&mut tx, identity, &user).await?;
            user
        }
        Decision::Create(name) => {
            let user =
                super::users::create_in(&mut tx, &name, Role::Annotator, new_password_hash, None)
                    .await?;
            bind(&mut tx, identity, &user).await?;
            user
        }
    };
    tx.commit().await?;
    Ok(Ok(user))
}

async fn bind(
    tx: &mut sqlx::AnyConnection,
    identity: Identity<'_>,
    user: &User,
) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO sso_identities (issuer, subject, user_id, created_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(identity.issuer)
    .bind(identity.subject)
    .bind(user.id)
    .bind(now_ms())
    .execute(&mut *tx)
    .await?;
    AuditEvent {
        project_id: None,
        actor_id: Some(user.id),
        action: "sso-bind",
        entity: "user",
        entity_id: Some(user.id.to_string()),
        old_value: None,
        new_value: Some(serde_json::json!({
            "issuer": identity.issuer,
            "subject": identity.subject,
            "username": user.username,
        })),
    }
    .record(tx)
    .await
}

/// The identities bound to `user_id`: (issuer, subject).
pub async fn identities(db: &Db, user_id: i64) -> StoreResult<Vec<(String, String)>> {
    let rows = sqlx::query("SELECT issuer, subject FROM sso_identities WHERE user_id = $1")
        .bind(user_id)
        .fetch_all(db)
        .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("issuer")?, r.try_get("subject")?)))
        .collect()
}
