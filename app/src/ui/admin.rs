//! Administration pages.

use crate::api::admin::list_users;
use crate::ui::widgets::ErrorNote;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn UsersPage() -> AnyView {
    let users = Resource::new(|| (), |_| list_users());
    view! {
        <Title text="Users" />
        <main class="page">
            <h1>"Users"</h1>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match users.await {
                        Ok(list) => view! {
                            <table class="grid">
                                <thead><tr><th>"User"</th><th>"Role"</th><th>"Active"</th></tr></thead>
                                <tbody>
                                    {list.into_iter().map(|u| view! {
                                        <tr>
                                            <td>{u.username}</td>
                                            <td>{u.role.as_str()}</td>
                                            <td>{if u.active { "yes" } else { "no" }}</td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </main>
    }.into_any()
}
