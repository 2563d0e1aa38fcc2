//! The append-only audit trail: who changed what, when, from which value to which.

use super::StoreResult;
use serde::Serialize;
use sqlx::AnyConnection;

/// One change to record.
pub struct AuditEvent<'a> {
    pub project_id: Option<i64>,
    pub actor_id: Option<i64>,
    pub action: &'a str,
    pub entity: &'a str,
    pub entity_id: Option<String>,
    pub old_value: Option<serde_json::Value>,
    pub new_value: Option<serde_json::Value>,
}

impl AuditEvent<'_> {
    /// Writes the event inside the caller's transaction, so the change and its record land together.
    pub async fn record(self, conn: &mut AnyConnection) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO audit_events (project_id, actor_id, action, entity, entity_id, old_value, new_value, at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(self.project_id)
        .bind(self.actor_id)
        .bind(self.action)
        .bind(self.entity)
        .bind(self.entity_id)
        .bind(self.old_value.map(|v| v.to_string()))
        .bind(self.new_value.map(|v| v.to_string()))
        .bind(super::now_ms())
        .execute(conn)
        .await?;
        Ok(())
    }
}

/// JSON of a value for the audit trail.
pub fn json<T: Serialize>(value: &T) -> Option<serde_json::Value> {
    serde_json::to_value(value).ok()
}
