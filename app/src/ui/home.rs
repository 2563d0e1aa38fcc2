//! The home page: where each role starts.

use crate::api::annotate::my_projects;
use crate::api::work::my_open_items;
use crate::domain::account::{Role, User};
use crate::error::ApiError;
use crate::ui::widgets::{format_count, ErrorNote};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::A;

#[component]
pub fn HomePage() -> AnyView {
    let me = expect_context::<Resource<Result<Option<User>, ApiError>>>();
    let open = Resource::new(|| (), |_| my_open_items());
    let projects = Resource::new(|| (), |_| my_projects());
    view! {
        <Title text="Home" />
        <main class="page">
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    let user = match me.await {
                        Ok(Some(user)) => user,
                        Ok(None) => return view! { <p><a href="/login">"Log in"</a></p> }.into_any(),
                        Err(e) => return view! { <ErrorNote error=e /> }.into_any(),
                    };
                    let queue = match open.await {
                        Ok(0) => "No items wait in your queue.".to_owned(),
                        Ok(1) => "1 item waits in your queue.".to_owned(),
                        Ok(n) => format!("{} items wait in your queue.", format_count(n)),
                        Err(e) => e.to_string(),
                    };
                    view! {
                        <h1 data-testid="welcome">"Welcome, " {user.username.clone()}</h1>
                        <section class="card">
                            <h2>"Your work"</h2>
                            <p data-testid="queue-count">{queue}</p>
                            <Suspense fallback=|| ()>
                                {move || Suspend::new(async move {
                                    projects.await.map(|list| view! {
                                        <ul class="work-list" data-testid="work-projects">
                                            {list.into_iter().map(|(name, open)| view! {
                                                <li><A href=format!("/work/{name}")>{format!("Annotate {name}")}</A>
                                                    <span class="muted">{format!(" · {} open", format_count(open))}</span></li>
                                            }).collect_view()}
                                        </ul>
                                    }).ok()
                                })}
                            </Suspense>
                        </section>
                        <Show when=move || user.role.satisfies(Role::Lead)>
                            <section class="card">
                                <h2>"Projects"</h2>
                                <p><A href="/lead">"Open the projects"</A>" to import runs, build the pool and follow annotation."</p>
                            </section>
                        </Show>
                    }
                    .into_any()
                })}
            </Suspense>
        </main>
    }.into_any()
}
