//! The lead's and the admin's pages as lazily loaded routes: in the browser their code is one
//! module of its own (xtask/src/split.rs), fetched the first time such a page is shown, so that
//! the annotator's first load carries none of it (issue 39). On the server they render as any
//! page does.
//!
//! One split point for them all: a point per page made 97 modules of code shared by some of
//! them, 40 to 50 requests for a lead's first page, each a round trip on a slow connection.

use leptos::prelude::*;
use leptos_router::LazyRoute;

/// A page of [`lead_page`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LeadPage {
    Projects,
    Project,
    Claim,
    Releases,
    ReleaseDiff,
    Report,
    Users,
    Annotation,
    Gold,
    Adjudicate,
    Webhooks,
}

/// The page's view; its code, and what only it uses, is the split module.
#[lazy]
fn lead_page(page: LeadPage) -> AnyView {
    match page {
        LeadPage::Projects => view! { <super::projects::ProjectsPage /> }.into_any(),
        LeadPage::Project => view! { <super::projects::ProjectPage /> }.into_any(),
        LeadPage::Claim => view! { <super::pool::ClaimPage /> }.into_any(),
        LeadPage::Releases => view! { <super::release::ReleasesPage /> }.into_any(),
        LeadPage::ReleaseDiff => view! { <super::release_diff::ReleaseDiffPage /> }.into_any(),
        LeadPage::Report => view! { <super::report::ReportPage /> }.into_any(),
        LeadPage::Users => view! { <super::admin::UsersPage /> }.into_any(),
        LeadPage::Annotation => view! { <super::annotate::AnnotationPage /> }.into_any(),
        LeadPage::Gold => view! { <super::gold::GoldPage /> }.into_any(),
        LeadPage::Adjudicate => view! { <super::annotate::AdjudicatePage /> }.into_any(),
        LeadPage::Webhooks => view! { <super::webhooks::WebhooksPage /> }.into_any(),
    }
}

/// A route `$route` whose view is [`lead_page`]'s `LeadPage::$route`.
macro_rules! lazy_page {
    ($route:ident) => {
        pub struct $route;

        impl LazyRoute for $route {
            fn data() -> Self {
                $route
            }

            fn view(_this: Self) -> impl std::future::Future<Output = AnyView> {
                lead_page(LeadPage::$route)
            }

            // The router loads the module before it hydrates the page (else the page's view is
            // still pending when hydration reaches it, and the server's markup does not match).
            async fn preload() {
                #[cfg(feature = "hydrate")]
                __preload_lead_page().await;
            }
        }
    };
}

lazy_page!(Projects);
lazy_page!(Project);
lazy_page!(Claim);
lazy_page!(Releases);
lazy_page!(ReleaseDiff);
lazy_page!(Report);
lazy_page!(Users);
lazy_page!(Annotation);
lazy_page!(Gold);
lazy_page!(Adjudicate);
lazy_page!(Webhooks);
