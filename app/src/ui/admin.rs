//! Administration pages: accounts (create with a one-time password, reset a password, change
//! the role, deactivate and reactivate).

use crate::api::admin::{
    list_users, CreateUser, OneTimePassword, ResetPassword, SetUserActive, SetUserRole,
};
use crate::domain::account::User;
use crate::ui::widgets::ErrorNote;
use leptos::prelude::*;
use leptos_meta::Title;

const ROLES: [&str; 3] = ["annotator", "lead", "admin"];

#[component]
pub fn UsersPage() -> AnyView {
    let create = ServerAction::<CreateUser>::new();
    let reset = ServerAction::<ResetPassword>::new();
    let role = ServerAction::<SetUserRole>::new();
    let active = ServerAction::<SetUserActive>::new();
    // Any change reloads the list.
    let changes = move || {
        (
            create.version().get(),
            reset.version().get(),
            role.version().get(),
            active.version().get(),
        )
    };
    let users = Resource::new(changes, |_| list_users());
    view! {
        <Title text="Users" />
        <main class="page">
            <h1>"Users"</h1>
            <NewUser create=create />
            <Secret result=Signal::derive(move || create.value().get()) what="new account" />
            <Secret result=Signal::derive(move || reset.value().get()) what="password reset" />
            <Outcome errors=Signal::derive(move || {
                role.value().get().and_then(Result::err)
                    .or_else(|| active.value().get().and_then(Result::err))
            }) />
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match users.await {
                        Ok(list) => view! { <UserTable users=list reset=reset role=role active=active /> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </main>
    }
    .into_any()
}

/// The form that creates an account.
#[component]
fn NewUser(create: ServerAction<CreateUser>) -> AnyView {
    view! {
        <ActionForm action=create attr:class="toolbar" attr:data-testid="new-user">
            <label>"New user " <input name="username" required minlength="2" maxlength="64" autocomplete="off" /></label>
            <label>"role "
                <select name="role">
                    {ROLES.iter().map(|r| view! { <option value=*r>{*r}</option> }).collect_view()}
                </select>
            </label>
            <button type="submit" disabled=move || create.pending().get()>"Create"</button>
        </ActionForm>
    }
    .into_any()
}

/// A one-time password, shown once with what it is for; or the error that refused it.
#[component]
fn Secret(
    result: Signal<Option<Result<OneTimePassword, crate::error::ApiError>>>,
    what: &'static str,
) -> AnyView {
    view! {
        {move || match result.get() {
            Some(Ok(secret)) => view! {
                <p class="ok" data-testid="one-time-password">
                    {format!("{what}: {}'s one-time password is ", secret.username)}
                    <code>{secret.password}</code>
                    " — shown only now. Give it to them in person; they change it on their account page."
                </p>
            }.into_any(),
            Some(Err(e)) => view! { <ErrorNote error=e /> }.into_any(),
            None => ().into_any(),
        }}
    }
    .into_any()
}

/// The error of the last role or activity change, if any.
#[component]
fn Outcome(errors: Signal<Option<crate::error::ApiError>>) -> AnyView {
    view! {
        {move || errors.get().map(|e| view! { <ErrorNote error=e /> })}
    }
    .into_any()
}

#[component]
fn UserTable(
    users: Vec<User>,
    reset: ServerAction<ResetPassword>,
    role: ServerAction<SetUserRole>,
    active: ServerAction<SetUserActive>,
) -> AnyView {
    view! {
        <table class="grid" data-testid="users">
            <thead><tr><th>"User"</th><th>"Role"</th><th>"Active"</th><th><span class="sr-only">"Actions"</span></th></tr></thead>
            <tbody>
                {users.into_iter().map(|u| view! { <UserRow user=u reset=reset role=role active=active /> }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

#[component]
fn UserRow(
    user: User,
    reset: ServerAction<ResetPassword>,
    role: ServerAction<SetUserRole>,
    active: ServerAction<SetUserActive>,
) -> AnyView {
    let name = user.username.clone();
    let (for_role, for_reset, for_active) = (name.clone(), name.clone(), name.clone());
    let current = user.role.as_str();
    view! {
        <tr data-user=name.clone()>
            <td>{name.clone()}</td>
            <td>
                <select aria-label=format!("role of {name}") on:change=move |ev| {
                    role.dispatch(SetUserRole { username: for_role.clone(), role: event_target_value(&ev) });
                }>
                    {ROLES.iter().map(|r| view! { <option value=*r selected=*r == current>{*r}</option> }).collect_view()}
                </select>
            </td>
            <td>{if user.active { "yes" } else { "no" }}</td>
            <td class="actions">
                <button class="secondary" on:click=move |_| {
                    reset.dispatch(ResetPassword { username: for_reset.clone() });
                }>"Reset password"</button>
                <button class="secondary" on:click=move |_| {
                    active.dispatch(SetUserActive { username: for_active.clone(), active: !user.active });
                }>{if user.active { "Deactivate" } else { "Reactivate" }}</button>
            </td>
        </tr>
    }
    .into_any()
}
