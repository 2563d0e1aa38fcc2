//! The webhook delivery task: every server that runs jobs sends the due deliveries of the
//! database (`commands::webhooks::Deliverer`), each taken under its lease, so two servers never
//! send one attempt twice. It stops when the server drains; a delivery it held is taken by
//! another server once its lease expires.

use commands::webhooks::{Deliverer, DeliverySettings};
use commands::Db;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How often the task looks for due deliveries when it found none.
const POLL: Duration = Duration::from_millis(500);

/// Starts the task; it ends once `draining` is set.
pub fn spawn(
    db: Db,
    settings: DeliverySettings,
    draining: Arc<AtomicBool>,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let deliverer = Deliverer::new(db, crate::jobs::lease_owner(), settings)?;
    Ok(tokio::spawn(async move {
        while !draining.load(Ordering::SeqCst) {
            match deliverer.send_due().await {
                Ok(0) => tokio::time::sleep(POLL).await,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "webhook deliveries: cannot read or record them");
                    tokio::time::sleep(POLL * 10).await;
                }
            }
        }
    }))
}
