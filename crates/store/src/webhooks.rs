//! Webhooks: the URLs a project's lead registers, and their deliveries. A delivery is written by
//! [`enqueue`] in the transaction of the event it reports (an outbox: the event and its delivery
//! commit together, and the request that caused it sends nothing itself); a server's delivery
//! task takes due deliveries under a lease ([`claim_due`]), sends them, and records each attempt
//! ([`delivered`], [`attempt_failed`]).

use super::audit::AuditEvent;
use super::{now_ms, Db, StoreError, StoreResult};
use domain::webhooks::{AfterFailure, DeliveryState, Event, EventSet, RetryPolicy};
use sqlx::Row;

pub use domain::model::webhooks::{DeliveryItem, HookRow};

/// A delivery taken for sending.
#[derive(Clone, Debug)]
pub struct Due {
    pub id: i64,
    pub url: String,
    pub secret: String,
    pub event: String,
    pub body: String,
    /// Attempts made before this one.
    pub attempts: i64,
}

/// Registers a hook of project `project_id` for `events`, signed with `secret`.
pub async fn create(
    db: &Db,
    project_id: i64,
    url: &str,
    events: &EventSet,
    secret: &str,
    actor_id: i64,
) -> StoreResult<HookRow> {
    domain::webhooks::check_url(url)
        .map_err(|e| StoreError::invalid(domain::field::Field::Url, e))?;
    let now = now_ms();
    let mut tx = super::write_gate::begin(db).await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO webhooks (project_id, url, secret, events, created_by, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(project_id)
    .bind(url.trim())
    .bind(secret)
    .bind(events.stored())
    .bind(actor_id)
    .bind(now)
    .fetch_one(&mut *tx)
    .await?;
    let hook = HookRow {
        id,
        url: url.trim().to_owned(),
        events: events.events().to_vec(),
        created_at_ms: now,
    };
    AuditEvent {
        project_id: Some(project_id),
        actor_id: Some(actor_id),
        action: "webhook-create",
        entity: "webhook",
        entity_id: Some(id.to_string()),
        old_value: None,
        new_value: super::audit::json(&hook),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(hook)
}

/// Removes hook `id` of the project: no new deliveries; those pending are not sent.
pub async fn remove(db: &Db, project_id: i64, id: i64, actor_id: i64) -> StoreResult<()> {
    let now = now_ms();
    let mut tx = super::write_gate::begin(db).await?;
    let removed = sqlx::query(
        "UPDATE webhooks SET removed_at = $1 WHERE id = $2 AND project_id = $3 AND removed_at IS NULL",
    )
    .bind(now)
    .bind(id)
    .bind(project_id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if removed == 0 {
        return Err(StoreError::NotFound(format!("webhook #{id}")));
    }
    sqlx::query(
        "UPDATE webhook_deliveries SET state = 'failed', last_error = 'the webhook was removed', \
         ended_at = $1 WHERE webhook_id = $2 AND state = 'pending'",
    )
    .bind(now)
    .bind(id)
    .execute(&mut *tx)
    .await?;
    AuditEvent {
        project_id: Some(project_id),
        actor_id: Some(actor_id),
        action: "webhook-remove",
        entity: "webhook",
        entity_id: Some(id.to_string()),
        old_value: None,
        new_value: None,
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

fn hook_from_row(row: &sqlx::any::AnyRow) -> StoreResult<HookRow> {
    let events: String = row.try_get("events")?;
    Ok(HookRow {
        id: row.try_get("id")?,
        url: row.try_get("url")?,
        events: EventSet::from_stored(&events)
            .map_err(StoreError::unreadable)?
            .events()
            .to_vec(),
        created_at_ms: row.try_get("created_at")?,
    })
}

/// The project's hooks (not removed), oldest first.
pub async fn list(db: &Db, project_id: i64) -> StoreResult<Vec<HookRow>> {
    let rows = sqlx::query(
        "SELECT id, url, events, created_at FROM webhooks \
         WHERE project_id = $1 AND removed_at IS NULL ORDER BY id",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    rows.iter().map(hook_from_row).collect()
}

/// The project's latest `limit` deliveries, newest first.
pub async fn deliveries(db: &Db, project_id: i64, limit: i64) -> StoreResult<Vec<DeliveryItem>> {
    let rows = sqlx::query(
        "SELECT d.id, d.webhook_id, d.event, d.state, d.attempts, d.next_attempt_at, \
                d.last_status, d.last_error, d.created_at, d.ended_at \
         FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id \
         WHERE w.project_id = $1 ORDER BY d.id DESC LIMIT $2",
    )
    .bind(project_id)
    .bind(limit)
    .fetch_all(db)
    .await?;
    rows.iter()
        .map(|row| {
            let state: String = row.try_get("state")?;
            Ok(DeliveryItem {
                id: row.try_get("id")?,
                hook_id: row.try_get("webhook_id")?,
                event: row.try_get("event")?,
                state: DeliveryState::parse(&state).ok_or_else(|| {
                    StoreError::Fault(format!("unknown delivery state {state:?}"))
                })?,
                attempts: row.try_get("attempts")?,
                next_attempt_at_ms: row.try_get("next_attempt_at")?,
                last_status: row.try_get("last_status")?,
                last_error: row.try_get("last_error")?,
                created_at_ms: row.try_get("created_at")?,
                ended_at_ms: row.try_get("ended_at")?,
            })
        })
        .collect()
}

/// Writes a delivery of `event` to each of the project's hooks subscribed to it, inside the
/// caller's transaction (the event's own). `data` is what the event is about; the body adds the
/// event, the project and the time. Nothing is written, beyond one read, when no hook wants it.
pub(crate) async fn enqueue(
    conn: &mut sqlx::AnyConnection,
    project_id: i64,
    event: Event,
    data: serde_json::Value,
) -> StoreResult<()> {
    let hooks: Vec<i64> = sqlx::query_scalar(
        "SELECT id FROM webhooks WHERE project_id = $1 AND removed_at IS NULL AND events LIKE $2",
    )
    .bind(project_id)
    .bind(format!("%,{},%", event.as_str()))
    .fetch_all(&mut *conn)
    .await?;
    if hooks.is_empty() {
        return Ok(());
    }
    let project: String = sqlx::query_scalar("SELECT name FROM projects WHERE id = $1")
        .bind(project_id)
        .fetch_one(&mut *conn)
        .await?;
    let now = now_ms();
    let body = domain::webhooks::envelope(event, &project, now, data).to_string();
    for hook in hooks {
        sqlx::query(
            "INSERT INTO webhook_deliveries (webhook_id, event, body, state, attempts, \
             next_attempt_at, created_at) VALUES ($1, $2, $3, 'pending', 0, $4, $4)",
        )
        .bind(hook)
        .bind(event.as_str())
        .bind(&body)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Takes up to `limit` due deliveries under `owner`'s lease of `ttl_ms` (on PostgreSQL the rows
/// are locked `SKIP LOCKED`, so the servers of one database take different ones).
///
/// Every server's delivery task calls this twice a second; a read that takes no lock answers
/// "nothing due" first, so that an idle task never takes the writers' turn (on SQLite, the
/// database's one write lock).
pub async fn claim_due(db: &Db, owner: &str, ttl_ms: i64, limit: i64) -> StoreResult<Vec<Due>> {
    const DUE: &str = "d.state = 'pending' AND d.next_attempt_at <= $1 \
                       AND (d.lease_expires_at IS NULL OR d.lease_expires_at < $1)";
    let now = now_ms();
    let any_due: Option<i64> = sqlx::query_scalar(&format!(
        "SELECT d.id FROM webhook_deliveries d WHERE {DUE} LIMIT 1"
    ))
    .bind(now)
    .fetch_optional(db)
    .await?;
    if any_due.is_none() {
        return Ok(Vec::new());
    }
    let lock = match super::db::engine(db) {
        super::db::Engine::Postgres => " FOR UPDATE OF d SKIP LOCKED",
        super::db::Engine::Sqlite => "",
    };
    let mut tx = super::write_gate::begin(db).await?;
    // SQLite's RETURNING names only the updated table's columns: the hooks' are read after.
    let claimed = sqlx::query(&format!(
        "UPDATE webhook_deliveries SET lease_owner = $2, lease_expires_at = $3 \
         WHERE id IN (SELECT d.id FROM webhook_deliveries d WHERE {DUE} \
                      ORDER BY d.id LIMIT $4{lock}) \
         RETURNING id, webhook_id, event, body, attempts"
    ))
    .bind(now)
    .bind(owner)
    .bind(now.saturating_add(ttl_ms))
    .bind(limit)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    // Read after the commit (the claimed rows are this owner's now): on SQLite the write lock
    // is held for the claim alone.
    let hooks: std::collections::HashMap<i64, (String, String)> = sqlx::query_as(
        "SELECT w.id, w.url, w.secret FROM webhooks w WHERE w.id IN \
         (SELECT d.webhook_id FROM webhook_deliveries d \
          WHERE d.lease_owner = $1 AND d.lease_expires_at = $2)",
    )
    .bind(owner)
    .bind(now.saturating_add(ttl_ms))
    .fetch_all(db)
    .await?
    .into_iter()
    .map(|(id, url, secret)| (id, (url, secret)))
    .collect();
    let mut due = Vec::with_capacity(claimed.len());
    for row in claimed {
        let hook: i64 = row.try_get("webhook_id")?;
        let (url, secret) = hooks.get(&hook).cloned().ok_or_else(|| {
            StoreError::Fault(format!("delivery of webhook {hook}, which is gone"))
        })?;
        due.push(Due {
            id: row.try_get("id")?,
            url,
            secret,
            event: row.try_get("event")?,
            body: row.try_get("body")?,
            attempts: row.try_get("attempts")?,
        });
    }
    due.sort_by_key(|d| d.id);
    Ok(due)
}

/// Records that delivery `id`, taken by `owner`, was answered 2xx with `status`.
pub async fn delivered(db: &Db, id: i64, owner: &str, status: u16) -> StoreResult<bool> {
    let now = now_ms();
    let mut tx = super::write_gate::begin(db).await?;
    let done = sqlx::query(
        "UPDATE webhook_deliveries SET state = 'delivered', attempts = attempts + 1, \
         last_status = $1, last_error = NULL, ended_at = $2, lease_owner = NULL, \
         lease_expires_at = NULL WHERE id = $3 AND lease_owner = $4 AND state = 'pending'",
    )
    .bind(i64::from(status))
    .bind(now)
    .bind(id)
    .bind(owner)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    tx.commit().await?;
    Ok(done == 1)
}

/// Records a failed attempt of delivery `id` (`status`: the receiver's answer, if it gave one):
/// retried later by `policy`, or failed for good once every attempt was made.
pub async fn attempt_failed(
    db: &Db,
    id: i64,
    owner: &str,
    status: Option<u16>,
    error: &str,
    policy: &RetryPolicy,
) -> StoreResult<DeliveryState> {
    let now = now_ms();
    let mut tx = super::write_gate::begin(db).await?;
    let attempts: Option<i64> = sqlx::query_scalar(
        "SELECT attempts FROM webhook_deliveries WHERE id = $1 AND lease_owner = $2 AND state = 'pending'",
    )
    .bind(id)
    .bind(owner)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(attempts) = attempts else {
        return Ok(DeliveryState::Pending);
    };
    let made = u32::try_from(attempts + 1).unwrap_or(u32::MAX);
    let (state, next, ended) = match policy.after_failure(made, now) {
        AfterFailure::RetryAt(at) => (DeliveryState::Pending, at, None),
        AfterFailure::GiveUp => (DeliveryState::Failed, now, Some(now)),
    };
    let error: String = error.chars().take(500).collect();
    sqlx::query(
        "UPDATE webhook_deliveries SET state = $1, attempts = $2, next_attempt_at = $3, \
         last_status = $4, last_error = $5, ended_at = $6, lease_owner = NULL, \
         lease_expires_at = NULL WHERE id = $7 AND lease_owner = $8",
    )
    .bind(state.as_str())
    .bind(i64::from(made))
    .bind(next)
    .bind(status.map(i64::from))
    .bind(error)
    .bind(ended)
    .bind(id)
    .bind(owner)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(state)
}
