//! A project's webhooks (`lead/webhooks`, `lead/webhook/...`): its leads register URLs for
//! events, see each delivery's state, and remove hooks. Sending is the server's delivery task's.

use crate::error::ApiError;
pub use crate::model::webhooks::{CreatedHook, DeliveryItem, HookRow, WebhooksView};
use leptos::prelude::*;

#[server(endpoint = "lead/webhooks")]
pub async fn lead_webhooks(project: String) -> Result<WebhooksView, ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            Ok(commands::webhooks::list(&db, &lead).await?)
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
            Ok(create.run(&db, &lead).await?)
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
