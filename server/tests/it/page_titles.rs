//! Finding F1 of the 2026-11 audit: page titles carry project names and path segments, and
//! leptos_meta writes the server's `<title>` unescaped. Every page route, its parameters filled
//! with markup that would end the title and add a redirect, must keep that markup as text.

use crate::common::TestApp;
use app::domain::account::{ProjectRole, Role};
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};

/// A stored (project name) and reflected (claim id, entry id) attempt to leave the title.
const CRAFTED: &str = r#"p</title><meta http-equiv=refresh content="0;url=//evil.example">"#;

/// Each `<title>…</title>` of a page, its text as sent.
fn titles(body: &str) -> Vec<&str> {
    body.match_indices("<title>")
        .map(|(at, _)| {
            let rest = &body[at + "<title>".len()..];
            &rest[..rest.find("</title>").unwrap_or(rest.len())]
        })
        .collect()
}

#[tokio::test]
async fn no_page_title_lets_a_name_or_a_path_add_markup() {
    let app = TestApp::spawn().await;
    let project = store::projects::create(&app.db, CRAFTED, "", None)
        .await
        .expect("a project with a crafted name");
    let annotator = app.add_user("ann", Role::Annotator).await;
    store::projects::add_member(&app.db, project, annotator, ProjectRole::Annotator, None)
        .await
        .expect("member");
    app.add_lead("lead", CRAFTED).await;
    app.add_user("admin", Role::Admin).await;
    let clients = [
        app.logged_in("lead").await,
        app.logged_in("ann").await,
        app.logged_in("admin").await,
    ];

    let encoded = utf8_percent_encode(CRAFTED, NON_ALPHANUMERIC).to_string();
    let routes = leptos_axum::generate_route_list(app::App);
    assert!(routes.len() >= 13, "{} routes", routes.len());
    let (mut pages, mut with_title) = (0, 0);
    let mut wrong = Vec::new();
    for route in &routes {
        let path: String = route
            .path()
            .split('/')
            .map(|segment| {
                if segment.starts_with(':') || segment.starts_with('{') {
                    encoded.as_str()
                } else {
                    segment
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        for client in &clients {
            let res = client.get(app.url(&path)).send().await.expect("page");
            let status = res.status();
            let body = res.text().await.expect("body");
            pages += 1;
            if body.contains("<meta http-equiv") {
                wrong.push(format!("{path} ({status}): a meta refresh in the page"));
            }
            let found = titles(&body);
            if !found.is_empty() {
                with_title += 1;
            }
            for title in found {
                // `<!>` is Leptos's own marker (a comment, with erased components) inside an SVG
                // <title>; anything else is markup that ended the title.
                let title = title.replace("<!>", "");
                if title.contains('<') || title.contains('>') {
                    wrong.push(format!("{path} ({status}): title {title:?}"));
                }
            }
            if status.is_success()
                && path.contains("/projects/")
                && !body.contains("&lt;/title&gt;")
            {
                // The project's pages name the project in their title, escaped.
                if ["report", "releases", "gold"]
                    .iter()
                    .any(|p| path.ends_with(p))
                {
                    wrong.push(format!(
                        "{path} ({status}): the title does not show the name"
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        pages >= 39 && with_title >= 13,
        "{pages} pages, {with_title} with a title"
    );
}
