//! An answer the server has not confirmed yet, kept in the browser's local storage (one per
//! project) from the moment it is submitted until the server confirms it: a failed request, a
//! lost network or a reload loses nothing the annotator typed.
//!
//! Each submission carries a key of its own; the server stores a submission once per key, so an
//! answer sent again after a request whose reply was lost is not stored twice.

use crate::model::annotate::DraftForm;
use serde::{Deserialize, Serialize};

/// A submitted answer awaiting the server's confirmation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Unsent {
    /// The submission's key: the same for every try of this answer.
    pub key: String,
    pub assignment_id: i64,
    pub form: DraftForm,
    pub seconds: f64,
}

impl Unsent {
    /// A new submission of `form` for the item `assignment_id`, with a fresh key.
    pub fn new(assignment_id: i64, form: DraftForm, seconds: f64) -> Unsent {
        Unsent {
            key: fresh_key(),
            assignment_id,
            form,
            seconds,
        }
    }
}

#[cfg(feature = "hydrate")]
fn storage_key(project: &str) -> String {
    format!("claimpool.unsent.{project}")
}

/// A key no other submission of this browser has: the time and 64 random bits.
fn fresh_key() -> String {
    #[cfg(feature = "hydrate")]
    {
        use web_sys::js_sys::Math;
        let random = |bits: f64| (Math::random() * bits) as u64;
        format!(
            "{:x}-{:08x}{:08x}",
            super::now_ms() as u64,
            random(4_294_967_296.0),
            random(4_294_967_296.0)
        )
    }
    #[cfg(not(feature = "hydrate"))]
    {
        String::new()
    }
}

#[cfg(feature = "hydrate")]
fn storage() -> Option<web_sys::Storage> {
    leptos::prelude::window().local_storage().ok().flatten()
}

/// Keeps `unsent` as the project's answer awaiting confirmation (replacing any other).
pub fn keep(project: &str, unsent: &Unsent) {
    #[cfg(feature = "hydrate")]
    if let (Some(storage), Ok(json)) = (storage(), serde_json::to_string(unsent)) {
        let _ = storage.set_item(&storage_key(project), &json);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (project, unsent);
}

/// The project's answer awaiting confirmation, if one is kept.
pub fn kept(project: &str) -> Option<Unsent> {
    #[cfg(feature = "hydrate")]
    {
        let json = storage()?.get_item(&storage_key(project)).ok()??;
        serde_json::from_str(&json).ok()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = project;
        None
    }
}

/// Forgets the kept answer whose key is `key` (confirmed, or refused by the server); a newer
/// answer kept since stays.
pub fn forget(project: &str, key: &str) {
    #[cfg(feature = "hydrate")]
    if kept(project).is_some_and(|u| u.key == key) {
        if let Some(storage) = storage() {
            let _ = storage.remove_item(&storage_key(project));
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (project, key);
}
