//! Webhooks behind a lead's proof (register, list with their deliveries, remove), the signature
//! of a delivery, and the sending of due deliveries (the server's delivery task calls
//! [`Deliverer::send_due`]).
//!
//! A delivery is a `POST` of the event's JSON body with these headers:
//! - `Claimpool-Event`: the event (`label.final`, ...), `Claimpool-Delivery`: the delivery's id
//!   (the same on every retry of it: receivers drop repeats by it);
//! - `Claimpool-Timestamp`: the attempt's Unix time in seconds;
//! - `Claimpool-Signature`: `v1=` and the lowercase hex HMAC-SHA256, keyed by the hook's secret,
//!   of the timestamp, a `.`, and the body's bytes. A receiver recomputes it, compares in
//!   constant time, and refuses timestamps far from its clock (replays).

use crate::error::{CommandError, CommandResult, Field};
use crate::Lead;
use domain::webhooks::{DeliveryState, EventSet, RetryPolicy};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use store::Db;

pub use domain::model::webhooks::{CreatedHook, DeliveryItem, HookRow, WebhooksView};

/// The deliveries the page lists.
const LISTED_DELIVERIES: i64 = 100;

/// The signature header's value for `body` sent at `timestamp` (Unix seconds).
pub fn signature(secret: &str, timestamp: i64, body: &str) -> String {
    // An HMAC takes a key of any length.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    format!("v1={}", domain::hex::hex(&mac.finalize().into_bytes()))
}

/// A fresh secret: 32 random bytes, hex.
fn new_secret() -> String {
    use argon2::password_hash::rand_core::{OsRng, RngCore};
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    domain::hex::hex(&bytes)
}

/// Registers a hook.
#[derive(Debug)]
pub struct CreateWebhook {
    url: String,
    events: EventSet,
}

impl CreateWebhook {
    pub fn parse<'a>(
        url: &str,
        events: impl IntoIterator<Item = &'a str>,
    ) -> CommandResult<CreateWebhook> {
        domain::webhooks::check_url(url).map_err(|e| CommandError::field(Field::Url, e))?;
        let events = EventSet::parse(events).map_err(|e| CommandError::field(Field::Events, e))?;
        Ok(CreateWebhook {
            url: url.trim().to_owned(),
            events,
        })
    }

    /// Registers the hook; returns it with its secret (shown once).
    pub async fn run(self, db: &Db, lead: &Lead) -> CommandResult<CreatedHook> {
        let actor = lead
            .audit_id()
            .ok_or_else(|| CommandError::Forbidden("webhooks are registered by a user".into()))?;
        let secret = new_secret();
        let hook = store::webhooks::create(
            db,
            lead.project_id(),
            &self.url,
            &self.events,
            &secret,
            actor,
        )
        .await?;
        Ok(CreatedHook { hook, secret })
    }
}

/// The project's hooks and latest deliveries.
pub async fn list(db: &Db, lead: &Lead) -> CommandResult<WebhooksView> {
    Ok(WebhooksView {
        hooks: store::webhooks::list(db, lead.project_id()).await?,
        deliveries: store::webhooks::deliveries(db, lead.project_id(), LISTED_DELIVERIES).await?,
    })
}

/// Removes hook `id` of the lead's project.
pub async fn remove(db: &Db, lead: &Lead, id: i64) -> CommandResult<()> {
    let actor = lead
        .audit_id()
        .ok_or_else(|| CommandError::Forbidden("webhooks are removed by a user".into()))?;
    Ok(store::webhooks::remove(db, lead.project_id(), id, actor).await?)
}

/// How the delivery task sends.
#[derive(Clone, Debug)]
pub struct DeliverySettings {
    pub retry: RetryPolicy,
    /// The longest one attempt waits for the receiver's answer.
    pub timeout: std::time::Duration,
}

impl Default for DeliverySettings {
    fn default() -> Self {
        DeliverySettings {
            retry: RetryPolicy::default(),
            timeout: std::time::Duration::from_secs(10),
        }
    }
}

/// Sends due deliveries under one server's name.
#[derive(Clone, Debug)]
pub struct Deliverer {
    db: Db,
    client: reqwest::Client,
    owner: String,
    settings: DeliverySettings,
}

/// Deliveries taken at once.
const BATCH: i64 = 16;

impl Deliverer {
    pub fn new(db: Db, owner: String, settings: DeliverySettings) -> CommandResult<Deliverer> {
        let client = reqwest::Client::builder()
            // A receiver's redirect is not followed: the hook's URL is where the event goes.
            .redirect(reqwest::redirect::Policy::none())
            .timeout(settings.timeout)
            .user_agent(concat!("claimpool-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| CommandError::Internal(format!("the webhooks' HTTP client: {e}")))?;
        Ok(Deliverer {
            db,
            client,
            owner,
            settings,
        })
    }

    /// Sends the deliveries due now (one batch); returns how many were attempted.
    pub async fn send_due(&self) -> CommandResult<usize> {
        // The lease outlasts an attempt of every delivery in the batch.
        let ttl = i64::try_from(self.settings.timeout.as_millis())
            .unwrap_or(i64::MAX / 4)
            .saturating_mul(BATCH + 1);
        let due = store::webhooks::claim_due(&self.db, &self.owner, ttl, BATCH).await?;
        for delivery in &due {
            self.send(delivery).await?;
        }
        Ok(due.len())
    }

    async fn send(&self, delivery: &store::webhooks::Due) -> CommandResult<()> {
        let timestamp = store::now_ms() / 1000;
        let sent = self
            .client
            .post(&delivery.url)
            .header("content-type", "application/json")
            .header("claimpool-event", &delivery.event)
            .header("claimpool-delivery", delivery.id.to_string())
            .header("claimpool-timestamp", timestamp.to_string())
            .header(
                "claimpool-signature",
                signature(&delivery.secret, timestamp, &delivery.body),
            )
            .body(delivery.body.clone())
            .send()
            .await;
        let (status, error) = match sent {
            Ok(response) if response.status().is_success() => {
                store::webhooks::delivered(
                    &self.db,
                    delivery.id,
                    &self.owner,
                    response.status().as_u16(),
                )
                .await?;
                return Ok(());
            }
            Ok(response) => {
                let status = response.status();
                (
                    Some(status.as_u16()),
                    format!("the receiver answered {status}"),
                )
            }
            Err(e) => (None, describe(&e)),
        };
        let state = store::webhooks::attempt_failed(
            &self.db,
            delivery.id,
            &self.owner,
            status,
            &error,
            &self.settings.retry,
        )
        .await?;
        if state == DeliveryState::Failed {
            tracing::warn!(delivery = delivery.id, url = %delivery.url, %error, "webhook delivery failed: every attempt was made");
        }
        Ok(())
    }
}

/// A failed request in words, with its causes (reqwest's own message names only the URL).
fn describe(e: &reqwest::Error) -> String {
    use std::error::Error as _;
    let head = if e.is_timeout() {
        "no answer in time"
    } else if e.is_connect() {
        "cannot connect"
    } else {
        "the request failed"
    };
    crate::error::with_causes(head.to_owned(), e.source())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_the_hmac_of_timestamp_dot_body() {
        // The crate's HMAC against RFC 4231's test case 2 (key "Jefe").
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"what do ya want for nothing?");
        assert_eq!(
            domain::hex::hex(&mac.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // The signed text is "<timestamp>.<body>"; the value is Python's
        // hmac.new(b"Jefe", b"1700000000.what do ya want for nothing?", "sha256").hexdigest().
        assert_eq!(
            signature("Jefe", 1_700_000_000, "what do ya want for nothing?"),
            "v1=1cdd0650c8be1cb0974b1788d458b1e781206cfef59b85faafc582d2e182c57e"
        );
    }
}
