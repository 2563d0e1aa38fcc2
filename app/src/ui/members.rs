//! A project's members on its page: who leads it, who annotates it; add and remove them.

use crate::api::projects::{project_members, AddProjectMember, RemoveProjectMember};
use crate::model::Member;
use crate::ui::widgets::ErrorNote;
use leptos::prelude::*;

#[component]
pub fn MembersSection(project: Signal<String>) -> AnyView {
    let add = ServerAction::<AddProjectMember>::new();
    let remove = ServerAction::<RemoveProjectMember>::new();
    let members = Resource::new(
        move || (project.get(), add.version().get(), remove.version().get()),
        |(project, _, _)| project_members(project),
    );
    let error = move || {
        add.value()
            .get()
            .and_then(Result::err)
            .or_else(|| remove.value().get().and_then(Result::err))
    };
    view! {
        <section data-testid="members">
            <h2>"Members"</h2>
            <ActionForm action=add attr:class="toolbar">
                <input type="hidden" name="project" prop:value=move || project.get() />
                <label>"User " <input name="username" required autocomplete="off" /></label>
                <label>"as "
                    <select name="role">
                        <option value="annotator">"annotator"</option>
                        <option value="lead">"lead"</option>
                    </select>
                </label>
                <button type="submit" disabled=move || add.pending().get()>"Add"</button>
            </ActionForm>
            {move || error().map(|e| view! { <ErrorNote error=e /> })}
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match members.await {
                        Ok(list) => view! { <MemberTable members=list project=project remove=remove /> }.into_any(),
                        Err(e) => view! { <ErrorNote error=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
    .into_any()
}

#[component]
fn MemberTable(
    members: Vec<Member>,
    project: Signal<String>,
    remove: ServerAction<RemoveProjectMember>,
) -> AnyView {
    if members.is_empty() {
        return view! { <p class="muted">"Nobody yet: add the project's annotators and any other leads."</p> }
            .into_any();
    }
    view! {
        <table class="grid">
            <thead><tr><th>"User"</th><th>"Role"</th><th>"Active"</th><th><span class="sr-only">"Actions"</span></th></tr></thead>
            <tbody>
                {members.into_iter().map(|m| {
                    let name = m.username.clone();
                    view! {
                        <tr data-member=m.username.clone()>
                            <td>{m.username.clone()}</td>
                            <td>{m.role.as_str()}</td>
                            <td>{if m.active { "yes" } else { "no" }}</td>
                            <td class="actions">
                                {m.active.then(|| view! {
                                    <button class="secondary" on:click=move |_| {
                                        remove.dispatch(RemoveProjectMember { project: project.get_untracked(), username: name.clone() });
                                    }>"Remove"</button>
                                })}
                            </td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}
