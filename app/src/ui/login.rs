//! The login page.

use crate::api::auth::{sign_in_options, Login};
use crate::api::report::encode_path_segment;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

#[component]
pub fn LoginPage() -> AnyView {
    let login = ServerAction::<Login>::new();
    let query = use_query_map();
    let next = move || query.read().get("next").unwrap_or_else(|| "/".to_owned());
    let error = move || {
        login
            .value()
            .get()
            .and_then(Result::err)
            .map(|e| e.to_string())
    };
    view! {
        <Title text="Log in" />
        <main class="login">
            <h1>"claimpool"</h1>
            <p class="tagline">"Pooled test collections for scientific claim verification"</p>
            <ActionForm action=login>
                <label for="username">"User name"</label>
                <input id="username" name="username" autocomplete="username" required autofocus />
                <label for="password">"Password"</label>
                <input id="password" type="password" name="password" autocomplete="current-password" required />
                <input type="hidden" name="next" prop:value=next />
                <button type="submit" disabled=move || login.pending().get()>"Log in"</button>
            </ActionForm>
            {move || error().map(|text| view! { <p class="error" role="alert" data-testid="login-error">{text}</p> })}
            <SingleSignOn next=Signal::derive(next) />
        </main>
    }.into_any()
}

/// The single sign-on's button, when the server has an OpenID provider: a plain link to the
/// server's route (not the router's), which sends the browser to the provider.
#[component]
fn SingleSignOn(next: Signal<String>) -> AnyView {
    let options = Resource::new(|| (), |_| sign_in_options());
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                options.await.ok().flatten().map(|label| {
                    let href = move || format!("/auth/sso/start?next={}", encode_path_segment(&next.get()));
                    view! {
                        <p class="sso-divider" aria-hidden="true">"or"</p>
                        <a class="button sso" rel="external" href=href data-testid="sso">{label}</a>
                    }
                })
            })}
        </Suspense>
    }
    .into_any()
}
