//! The frame of every logged-in page: the top bar with the user's links, and the page below.

use crate::api::auth::{whoami, Logout};
use crate::domain::account::{Role, User};
use leptos::prelude::*;
use leptos_router::components::{Outlet, A};

#[component]
pub fn Layout() -> AnyView {
    let me = Resource::new(|| (), |_| whoami());
    provide_context(me);
    let logout = ServerAction::<Logout>::new();
    view! {
        <header class="topbar">
            <A href="/" attr:class="brand">"claimpool"</A>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    match me.await {
                        Ok(Some(user)) => view! { <Nav user=user logout=logout /> }.into_any(),
                        _ => view! { <a href="/login">"Log in"</a> }.into_any(),
                    }
                })}
            </Suspense>
        </header>
        <Outlet />
    }
    .into_any()
}

#[component]
fn Nav(user: User, logout: ServerAction<Logout>) -> AnyView {
    let role = user.role;
    view! {
        <nav class="nav" aria-label="Main">
            <A href="/">"Home"</A>
            <Show when=move || role.satisfies(Role::Lead)>
                <A href="/lead">"Projects"</A>
            </Show>
            <Show when=move || role.satisfies(Role::Admin)>
                <A href="/admin/users">"Users"</A>
            </Show>
        </nav>
        <div class="who">
            <A href="/account" attr:class="user" attr:data-testid="current-user">{user.username.clone()}</A>
            <span class="role">{role.as_str()}</span>
            <ActionForm action=logout>
                <button type="submit" class="link">"Log out"</button>
            </ActionForm>
        </div>
    }
    .into_any()
}
