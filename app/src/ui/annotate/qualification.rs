//! What a qualification candidate sees (issue 16): where they stand (training with feedback,
//! graded, or waiting for the lead), and after a training item the reference annotation.

use crate::model::gold::{GoldFeedback, QualificationStatus};
use leptos::prelude::*;

/// The candidate's standing, above the item.
#[component]
pub fn QualificationBanner(status: QualificationStatus) -> AnyView {
    let pass = format!("{:.0} %", status.pass * 100.0);
    let text = match status.phase.as_str() {
        "training" => format!(
            "Qualification, training: item {} of {}. After each answer the reference annotation is shown. Then {} graded items follow; you pass at {pass}.",
            status.training_done + 1,
            status.training,
            status.graded
        ),
        "graded" => format!(
            "Qualification, graded: item {} of {}. No reference is shown; you pass at {pass}.",
            status.graded_done + 1,
            status.graded
        ),
        _ => format!(
            "Qualification not passed: {} of {} graded items right (pass at {pass}). A lead of the project can admit you.",
            status.correct.unwrap_or(0),
            status.graded
        ),
    };
    view! {
        <section class="card qualification" data-testid="qualification" data-phase=status.phase.clone()>
            <h2>"Qualification"</h2>
            <p>{text}</p>
        </section>
    }
    .into_any()
}

/// The reference annotation after a training item.
#[component]
pub fn Feedback(feedback: GoldFeedback) -> AnyView {
    let sentences = if feedback.sentences.is_empty() {
        "none".to_owned()
    } else {
        feedback
            .sentences
            .iter()
            .map(|s| (s + 1).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let verdict = if feedback.agrees {
        "Your label agrees with the reference."
    } else {
        "Your label differs from the reference."
    };
    view! {
        <p class="feedback" data-testid="feedback" data-agrees=feedback.agrees.to_string()>
            "Reference: " <strong data-testid="feedback-label">{feedback.label.clone()}</strong>
            " · rationale sentences " {sentences} ". " {verdict}
        </p>
    }
    .into_any()
}
