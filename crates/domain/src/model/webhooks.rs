//! A project's webhooks as its lead's page shows them (the store reads them, the page renders
//! them).

use crate::webhooks::{DeliveryState, Event};
use serde::{Deserialize, Serialize};

/// A registered hook (its secret is shown once, when it is made: [`CreatedHook`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookRow {
    pub id: i64,
    pub url: String,
    pub events: Vec<Event>,
    pub created_at_ms: i64,
}

/// A delivery: its state, attempts and the receiver's last answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryItem {
    pub id: i64,
    pub hook_id: i64,
    pub event: String,
    pub state: DeliveryState,
    pub attempts: i64,
    pub next_attempt_at_ms: i64,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub created_at_ms: i64,
    pub ended_at_ms: Option<i64>,
}

/// The page's data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhooksView {
    pub hooks: Vec<HookRow>,
    /// The latest deliveries, newest first.
    pub deliveries: Vec<DeliveryItem>,
}

/// A hook just registered, with its secret (shown this once).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedHook {
    pub hook: HookRow,
    pub secret: String,
}
