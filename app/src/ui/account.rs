//! The caller's own account: change the password (other sessions end, this one stays), and
//! personal API tokens for scripts (created with a name and shown once; listed; revoked).

use crate::api::auth::ChangePassword;
use crate::api::tokens::{list_api_tokens, ApiTokenRow, CreateApiToken, RevokeApiToken};
use crate::ui::guidelines::utc_minute;
use crate::ui::widgets::ErrorNote;
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
            <ApiTokens />
        </main>
    }
    .into_any()
}

/// The caller's API tokens: a form that creates one (shown once), the list, revoke buttons.
#[component]
fn ApiTokens() -> AnyView {
    let create = ServerAction::<CreateApiToken>::new();
    let revoke = ServerAction::<RevokeApiToken>::new();
    let tokens = Resource::new(
        move || (create.version().get(), revoke.version().get()),
        |_| list_api_tokens(String::new()),
    );
    view! {
        <h2>"API tokens"</h2>
        <p class="muted">
            "A token lets a script call the HTTP API (" <a href="/api/openapi.json">"/api/openapi.json"</a>
            ") as you, with your roles: send it as " <code>"Authorization: Bearer cp_…"</code> "."
        </p>
        <ActionForm action=create attr:class="toolbar" attr:data-testid="new-token">
            <label>"Name " <input name="name" required maxlength="64" autocomplete="off" /></label>
            <button type="submit" disabled=move || create.pending().get()>"Create token"</button>
        </ActionForm>
        <IssuedToken create=create />
        {move || revoke.value().get().and_then(Result::err).map(|e| view! { <ErrorNote error=e /> })}
        <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match tokens.await {
                    Ok(list) => view! { <TokenTable tokens=list revoke=revoke /> }.into_any(),
                    Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                }
            })}
        </Suspense>
    }
    .into_any()
}

/// The token just created, shown this once; or why it was refused.
#[component]
fn IssuedToken(create: ServerAction<CreateApiToken>) -> AnyView {
    view! {
        {move || match create.value().get() {
            Some(Ok(issued)) => view! {
                <p class="ok" role="status">
                    {format!("Token {:?}: ", issued.name)}
                    <code data-testid="new-token-secret">{issued.token}</code>
                    " — copy it now: it is shown only once."
                </p>
            }
            .into_any(),
            Some(Err(e)) => view! { <ErrorNote error=e /> }.into_any(),
            None => ().into_any(),
        }}
    }
    .into_any()
}

#[component]
fn TokenTable(tokens: Vec<ApiTokenRow>, revoke: ServerAction<RevokeApiToken>) -> AnyView {
    if tokens.is_empty() {
        return view! { <p class="muted" data-testid="tokens">"No tokens."</p> }.into_any();
    }
    view! {
        <table class="grid" data-testid="tokens">
            <thead><tr><th>"Name"</th><th>"Created"</th><th>"Last used"</th><th><span class="sr-only">"Actions"</span></th></tr></thead>
            <tbody>
                {tokens.into_iter().map(|t| view! { <TokenRow token=t revoke=revoke /> }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

#[component]
fn TokenRow(token: ApiTokenRow, revoke: ServerAction<RevokeApiToken>) -> AnyView {
    let used = token
        .last_used_at
        .map_or_else(|| "never".to_owned(), utc_minute);
    view! {
        <tr>
            <td>{token.name.clone()}</td>
            <td>{utc_minute(token.created_at)}</td>
            <td>{used}</td>
            <td>
                <ActionForm action=revoke>
                    <input type="hidden" name="name" value=token.name />
                    <input type="hidden" name="user" value="" />
                    <button type="submit" class="danger">"Revoke"</button>
                </ActionForm>
            </td>
        </tr>
    }
    .into_any()
}
