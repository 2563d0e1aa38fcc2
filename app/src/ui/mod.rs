//! Pages and components. No SQL and no domain math here: data comes from server functions.

mod admin;
mod annotate;
mod charts;
mod home;
mod layout;
mod login;
mod pipeline;
mod pool;
mod projects;
mod release;
mod report;
mod widgets;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::components::{ParentRoute, Route, Router, Routes};
use leptos_router::path;

/// The HTML document around the app, rendered on the server.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <link rel="icon" href="data:," />
                <AutoReload options=options.clone() />
                <HydrationScripts options />
                <MetaTags />
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}

#[component]
pub fn App() -> AnyView {
    provide_meta_context();
    // Effects run only in the browser, after hydration: `<body data-hydrated>` tells the browser
    // tests (and anyone debugging a release build) that the wasm loaded and took over the page.
    Effect::new(|_| {
        if let Some(body) = document().body() {
            let _ = body.set_attribute("data-hydrated", "true");
        }
    });
    view! {
        <Stylesheet id="leptos" href="/pkg/claimpool.css" />
        <Title formatter=|text| format!("{text} · claimpool") />
        <Router>
            <Routes fallback=|| view! { <widgets::NotFound /> }>
                <Route path=path!("/login") view=login::LoginPage />
                <ParentRoute path=path!("") view=layout::Layout>
                    <Route path=path!("/") view=home::HomePage />
                    <Route path=path!("/lead") view=projects::ProjectsPage />
                    <Route path=path!("/lead/projects/:name") view=projects::ProjectPage />
                    <Route path=path!("/lead/projects/:name/claims/:claim") view=pool::ClaimPage />
                    <Route path=path!("/lead/projects/:name/releases") view=release::ReleasesPage />
                    <Route path=path!("/lead/projects/:name/report") view=report::ReportPage />
                    <Route path=path!("/admin/users") view=admin::UsersPage />
                    <Route path=path!("/work/:project") view=annotate::WorkPage />
                    <Route path=path!("/lead/projects/:name/annotation") view=annotate::AnnotationPage />
                    <Route path=path!("/lead/projects/:name/adjudicate/:entry") view=annotate::AdjudicatePage />
                </ParentRoute>
            </Routes>
        </Router>
    }.into_any()
}
