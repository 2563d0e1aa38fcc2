//! A project's webhooks (`lead/webhooks`, `lead/webhook/...`): its leads register URLs for
//! events, see each delivery's state, and remove hooks. Sending is the server's delivery task's.

use crate::domain::webhooks::{DeliveryState, Event};
use crate::error::ApiError;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// A registered hook.
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

#[cfg(feature = "ssr")]
fn hook_row(hook: commands::webhooks::Hook) -> HookRow {
    HookRow {
        id: hook.id,
        url: hook.url,
        events: hook.events,
        created_at_ms: hook.created_at,
    }
}

#[server(endpoint = "lead/webhooks")]
pub async fn lead_webhooks(project: String) -> Result<WebhooksView, ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            let (hooks, deliveries) = commands::webhooks::list(&db, &lead).await?;
            Ok(WebhooksView {
                hooks: hooks.into_iter().map(hook_row).collect(),
                deliveries: deliveries
                    .into_iter()
                    .map(|d| DeliveryItem {
                        id: d.id,
                        hook_id: d.hook_id,
                        event: d.event,
                        state: d.state,
                        attempts: d.attempts,
                        next_attempt_at_ms: d.next_attempt_at,
                        last_status: d.last_status,
                        last_error: d.last_error,
                        created_at_ms: d.created_at,
                        ended_at_ms: d.ended_at,
                    })
                    .collect(),
            })
        }
        .await,
    )
}

#[server(endpoint = "lead/webhook/create", input = leptos::server_fn::codec::Json)]
pub async fn create_webhook(
    project: String,
    url: String,
    events: Vec<String>,
) -> Result<CreatedHook, ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            let create =
                commands::webhooks::CreateWebhook::parse(&url, events.iter().map(String::as_str))?;
            let (hook, secret) = create.run(&db, &lead).await?;
            Ok(CreatedHook {
                hook: hook_row(hook),
                secret,
            })
        }
        .await,
    )
}

#[server(endpoint = "lead/webhook/remove")]
pub async fn remove_webhook(project: String, id: i64) -> Result<(), ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            Ok(commands::webhooks::remove(&db, &lead, id).await?)
        }
        .await,
    )
}
