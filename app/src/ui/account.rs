//! The caller's own account: change the password (other sessions end, this one stays).

use crate::api::auth::ChangePassword;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn AccountPage() -> AnyView {
    let change = ServerAction::<ChangePassword>::new();
    let outcome = move || match change.value().get() {
        Some(Ok(())) => Some(
            view! {
                <p class="ok" role="status" data-testid="password-changed">
                    "Password changed. Your other sessions have ended."
                </p>
            }
            .into_any(),
        ),
        Some(Err(e)) => Some(
            view! {
                <p class="error" role="alert" data-testid="password-error">{e.to_string()}</p>
            }
            .into_any(),
        ),
        None => None,
    };
    view! {
        <Title text="Account" />
        <main class="page narrow">
            <h1>"Account"</h1>
            <h2>"Change your password"</h2>
            <ActionForm action=change attr:class="stacked">
                <label for="current">"Current password"</label>
                <input id="current" type="password" name="current" autocomplete="current-password" required />
                <label for="new">"New password (at least 8 characters)"</label>
                <input id="new" type="password" name="new" autocomplete="new-password" required minlength="8" />
                <button type="submit" disabled=move || change.pending().get()>"Change password"</button>
            </ActionForm>
            {outcome}
        </main>
    }
    .into_any()
}
