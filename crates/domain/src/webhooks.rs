//! Webhooks: the events a project's lead may subscribe a URL to, the set a hook subscribes to,
//! the retry schedule of a delivery, and the envelope every delivery's body has. Signing is the
//! commands crate's (`commands::webhooks`), which holds the HMAC dependency.

use crate::annotation::vocab::{vocabulary, UnknownValue};

vocabulary!(
    /// An event a webhook can be subscribed to, as `webhooks.events` and the `Claimpool-Event`
    /// header spell it.
    Event, "webhook event" {
        /// A pair's label became final (a submission that settled it: an agreeing second pass or
        /// an adjudication). Imported final labels are counted in `import.finished` instead.
        LabelFinal => "label.final", "A pair's label became final";
        /// An undo withdrew a pair's final label.
        LabelWithdrawn => "label.withdrawn", "A final label was withdrawn (undo)";
        /// The two passes over a pair disagree: the pair needs adjudication.
        Disagreement => "disagreement", "The two passes over a pair disagree";
        /// An import (a corpus, claims, a run, judgments; from the page, the API or the shell)
        /// finished.
        ImportFinished => "import.finished", "An import finished";
        /// An import job (an upload of the page or the API) failed.
        ImportFailed => "import.failed", "An import job failed";
        /// Any job failed (imports, pipeline runs).
        JobFailed => "job.failed", "A job failed";
        /// A release was made.
        ReleaseMade => "release.made", "A release was made";
    }
);

/// The events a hook is subscribed to: at least one, each once.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EventSet(Vec<Event>);

/// Why a list of events is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EventSetError {
    #[error("choose at least one event")]
    Empty,
    #[error(transparent)]
    Unknown(#[from] UnknownValue),
}

impl EventSet {
    /// The events named in `names` (duplicates dropped), in the vocabulary's order.
    pub fn parse<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<EventSet, EventSetError> {
        let mut events = names
            .into_iter()
            .filter(|n| !n.trim().is_empty())
            .map(Event::parse)
            .collect::<Result<Vec<_>, _>>()?;
        events.sort();
        events.dedup();
        if events.is_empty() {
            return Err(EventSetError::Empty);
        }
        Ok(EventSet(events))
    }

    /// The stored form: the events with a comma at each end (`,label.final,release.made,`), so
    /// that a stored set holds an event exactly when it contains `,<event>,`.
    pub fn stored(&self) -> String {
        let mut text = String::from(",");
        for e in &self.0 {
            text.push_str(e.as_str());
            text.push(',');
        }
        text
    }

    /// Reads the stored form back.
    pub fn from_stored(text: &str) -> Result<EventSet, EventSetError> {
        EventSet::parse(text.split(','))
    }

    pub fn contains(&self, event: Event) -> bool {
        self.0.contains(&event)
    }

    pub fn events(&self) -> &[Event] {
        &self.0
    }
}

/// When a failed delivery is tried again: the first retry `base` after the first attempt, each
/// next one twice as long after the one before, never more than `max_delay`; `attempts` in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    pub attempts: u32,
    pub base_ms: i64,
    pub max_delay_ms: i64,
}

impl Default for RetryPolicy {
    /// Eight attempts over about 21 minutes: 10 s, 20 s, 40 s, ... 640 s apart.
    fn default() -> Self {
        RetryPolicy {
            attempts: 8,
            base_ms: 10_000,
            max_delay_ms: 3_600_000,
        }
    }
}

/// What becomes of a delivery after an attempt that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterFailure {
    /// Tried again at this time (ms).
    RetryAt(i64),
    /// Every attempt was made: the delivery failed.
    GiveUp,
}

impl RetryPolicy {
    /// After the `attempts_made`-th attempt (1 for the first) failed at `now` (ms).
    pub fn after_failure(&self, attempts_made: u32, now: i64) -> AfterFailure {
        if attempts_made >= self.attempts {
            return AfterFailure::GiveUp;
        }
        let doublings = attempts_made.saturating_sub(1).min(40);
        let delay = self
            .base_ms
            .saturating_mul(1i64 << doublings)
            .min(self.max_delay_ms);
        AfterFailure::RetryAt(now.saturating_add(delay))
    }
}

/// The state of a delivery, as `webhook_deliveries.state` spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryState {
    /// Not yet delivered: waiting for its first attempt or a retry.
    Pending,
    /// A receiver answered 2xx.
    Delivered,
    /// Every attempt failed.
    Failed,
}

impl DeliveryState {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<DeliveryState> {
        match text {
            "pending" => Some(DeliveryState::Pending),
            "delivered" => Some(DeliveryState::Delivered),
            "failed" => Some(DeliveryState::Failed),
            _ => None,
        }
    }
}

/// A delivery's body: the event, the project, when it happened and what it is about. The body is
/// made once, when the event happens, and every attempt sends the same bytes.
pub fn envelope(
    event: Event,
    project: &str,
    occurred_at_ms: i64,
    data: serde_json::Value,
) -> serde_json::Value {
    serde_json::json!({
        "event": event.as_str(),
        "project": project,
        "occurred_at_ms": occurred_at_ms,
        "data": data,
    })
}

/// Whether `url` may be a hook's target: http or https, with a host, at most 2,000 characters.
pub fn check_url(url: &str) -> Result<(), String> {
    let url = url.trim();
    if url.len() > 2000 {
        return Err("a webhook URL has at most 2,000 characters".into());
    }
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or_else(|| format!("{url:?} is not an http:// or https:// URL"))?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty() || host.contains(char::is_whitespace) || url.contains(char::is_control) {
        return Err(format!("{url:?} names no host"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_sets_round_trip_and_refuse_unknown_or_empty() {
        let set = EventSet::parse(["release.made", "label.final", "label.final"]).unwrap();
        assert_eq!(set.events(), &[Event::LabelFinal, Event::ReleaseMade]);
        assert_eq!(set.stored(), ",label.final,release.made,");
        assert_eq!(EventSet::from_stored(&set.stored()).unwrap(), set);
        assert!(set.stored().contains(&format!(",{},", Event::ReleaseMade)));
        assert!(!set.stored().contains(&format!(",{},", Event::JobFailed)));
        assert_eq!(EventSet::parse([""]), Err(EventSetError::Empty));
        assert!(matches!(
            EventSet::parse(["label.finale"]),
            Err(EventSetError::Unknown(_))
        ));
    }

    #[test]
    fn retries_double_up_to_the_cap_then_give_up() {
        let policy = RetryPolicy {
            attempts: 5,
            base_ms: 1_000,
            max_delay_ms: 5_000,
        };
        let delays: Vec<_> = (1..=5)
            .map(|n| match policy.after_failure(n, 100) {
                AfterFailure::RetryAt(at) => Some(at - 100),
                AfterFailure::GiveUp => None,
            })
            .collect();
        assert_eq!(
            delays,
            [Some(1_000), Some(2_000), Some(4_000), Some(5_000), None]
        );
        // The default spans about 21 minutes over its eight attempts.
        let d = RetryPolicy::default();
        let total: i64 = (1..d.attempts)
            .map(|n| match d.after_failure(n, 0) {
                AfterFailure::RetryAt(at) => at,
                AfterFailure::GiveUp => unreachable!(),
            })
            .sum();
        assert_eq!(total, 10_000 * (1 + 2 + 4 + 8 + 16 + 32 + 64));
        assert_eq!(d.after_failure(d.attempts, 0), AfterFailure::GiveUp);
    }

    #[test]
    fn urls_must_be_http_with_a_host() {
        assert!(check_url("https://hooks.example.org/claimpool").is_ok());
        assert!(check_url("http://127.0.0.1:9000").is_ok());
        assert!(check_url("ftp://example.org").is_err());
        assert!(check_url("https:///path").is_err());
        assert!(check_url("javascript:alert(1)").is_err());
        assert!(check_url(&format!("https://e.org/{}", "a".repeat(2000))).is_err());
    }
}
