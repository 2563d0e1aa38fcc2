//! Pages and components. No SQL and no domain math here: data comes from server functions.

mod account;
mod admin;
mod annotate;
mod charts;
mod gold;
mod guidelines;
mod history;
mod home;
mod imports;
mod job_poll;
mod layout;
mod lazy_pages;
mod login;
mod members;
mod pipeline;
mod pool;
mod projects;
mod release;
mod release_diff;
mod report;
mod report_agreement;
mod report_judging;
mod report_significance;
mod sample;
mod webhooks;
mod widgets;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};
use leptos_router::components::{ParentRoute, Route, Router, Routes};
use leptos_router::path;
use leptos_router::Lazy;

/// Keys pressed on a page before it has hydrated (the annotation page's shortcuts, on a slow
/// connection): kept in order, outside text fields, and handed to the page's own key handling by
/// [`replay_early_keys`] once it listens. Nothing is prevented or changed meanwhile.
const EARLY_KEYS: &str = r#"(function(){var kept=[];function early(e){var b=document.body;if(b&&b.getAttribute("data-hydrated")==="true")return;if(e.ctrlKey||e.metaKey||e.altKey||e.key==="Tab")return;var t=e.target&&e.target.tagName;if(t==="INPUT"||t==="TEXTAREA"||t==="SELECT")return;kept.push({key:e.key,shiftKey:e.shiftKey});}addEventListener("keydown",early);window.claimpoolEarlyKeys=function(){removeEventListener("keydown",early);window.claimpoolEarlyKeys=function(){};var all=kept;kept=[];for(var i=0;i<all.length;i++){dispatchEvent(new KeyboardEvent("keydown",{key:all[i].key,shiftKey:all[i].shiftKey,bubbles:true,cancelable:true}));}};})();"#;

/// Hands the keys pressed before hydration ([`EARLY_KEYS`]) to the page's key listeners, once;
/// later calls do nothing.
pub(crate) fn replay_early_keys() {
    #[cfg(feature = "hydrate")]
    {
        use web_sys::js_sys::{Function, Reflect};
        use web_sys::wasm_bindgen::{JsCast, JsValue};
        if let Ok(replay) = Reflect::get(&window(), &JsValue::from_str("claimpoolEarlyKeys")) {
            if let Some(replay) = replay.dyn_ref::<Function>() {
                let _ = replay.call0(&JsValue::NULL);
            }
        }
    }
}

/// The HTML document around the app, rendered on the server.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    #[cfg(feature = "ssr")]
    crate::csp::set_page_policy();
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <link rel="icon" href="data:," />
                <AutoReload options=options.clone() />
                // The package's path names its content's version under a release build
                // (server/src/assets.rs), so the stylesheet is linked here, beside the scripts.
                <link
                    rel="stylesheet"
                    id="leptos"
                    href=format!("/{}/claimpool.css", options.site_pkg_dir)
                />
                <HydrationScripts options />
                <script nonce=leptos::nonce::use_nonce() inner_html=EARLY_KEYS></script>
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
    // `<body data-hydrated>` is set by the entry point once the whole page is hydrated (lib.rs).
    view! {
        <Title formatter=page_title />
        <Router>
            <Routes fallback=|| view! { <widgets::NotFound /> }>
                <Route path=path!("/login") view=login::LoginPage />
                <ParentRoute path=path!("") view=layout::Layout>
                    <Route path=path!("/") view=home::HomePage />
                    <Route path=path!("/lead") view={Lazy::<lazy_pages::Projects>::new()} />
                    <Route path=path!("/lead/projects/:name") view={Lazy::<lazy_pages::Project>::new()} />
                    <Route path=path!("/lead/projects/:name/claims/:claim") view={Lazy::<lazy_pages::Claim>::new()} />
                    <Route path=path!("/lead/projects/:name/releases") view={Lazy::<lazy_pages::Releases>::new()} />
                    <Route path=path!("/lead/projects/:name/releases/diff") view={Lazy::<lazy_pages::ReleaseDiff>::new()} />
                    <Route path=path!("/lead/projects/:name/report") view={Lazy::<lazy_pages::Report>::new()} />
                    <Route path=path!("/admin/users") view={Lazy::<lazy_pages::Users>::new()} />
                    <Route path=path!("/account") view=account::AccountPage />
                    <Route path=path!("/work/:project") view=annotate::WorkPage />
                    <Route path=path!("/work/:project/history") view=history::HistoryPage />
                    <Route path=path!("/lead/projects/:name/annotation") view={Lazy::<lazy_pages::Annotation>::new()} />
                    <Route path=path!("/lead/projects/:name/gold") view={Lazy::<lazy_pages::Gold>::new()} />
                    <Route path=path!("/lead/projects/:name/adjudicate/:entry") view={Lazy::<lazy_pages::Adjudicate>::new()} />
                    <Route path=path!("/lead/projects/:name/webhooks") view={Lazy::<lazy_pages::Webhooks>::new()} />
                </ParentRoute>
            </Routes>
        </Router>
    }.into_any()
}

/// Every page's `<title>`: the page's text, then `· claimpool`.
///
/// On the server leptos_meta writes the formatted title into the HTML as it is, unescaped (0.8:
/// `ServerMetaContextOutput::inject_meta_context` pushes it between `<title>` and `</title>`), and
/// titles carry project names and path segments: `</title><meta http-equiv=refresh …>` in either
/// would end the title and send the reader elsewhere. So the server escapes the text. In the
/// browser the formatted title becomes `document.title`, plain text, where escaping would show.
/// Every page's `<Title>` goes through this formatter: `titles::no_page_sets_its_own_formatter`.
pub fn page_title(text: String) -> String {
    let title = format!("{text} · claimpool");
    #[cfg(feature = "ssr")]
    let title = html_escape::encode_text(&title).into_owned();
    title
}

/// The wasm release build computes the layout of each page's hydration future; a view type nested
/// too deeply overflows the compiler's query depth there (and only there: debug builds pass). Every
/// component therefore erases its type at its boundary: this test fails on a `#[component]` in
/// `ui/` that returns `impl IntoView` instead of `AnyView`.
#[cfg(test)]
mod erased_components {
    use std::path::Path;

    pub(super) fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("ui/ is readable") {
            let path = entry.expect("ui/ entry").path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// Each component's signature: the lines after `#[component]` up to the body's `{`.
    fn component_signatures(source: &str) -> Vec<String> {
        let mut found = Vec::new();
        let mut lines = source.lines();
        while let Some(line) = lines.next() {
            if line.trim() != "#[component]" {
                continue;
            }
            let mut signature = String::new();
            for l in lines.by_ref() {
                signature.push_str(l.trim());
                signature.push(' ');
                if l.trim_end().ends_with('{') {
                    break;
                }
            }
            found.push(signature);
        }
        found
    }

    #[test]
    fn the_scan_sees_both_kinds() {
        let source = "#[component]\nfn A(x: u32) -> AnyView {\n}\n#[component]\npub fn B(\n    y: u32,\n) -> impl IntoView {\n}\n";
        let found = component_signatures(source);
        assert_eq!(found.len(), 2);
        assert!(found[0].contains("-> AnyView"));
        assert!(found[1].contains("-> impl IntoView") && found[1].contains("y: u32"));
    }

    #[test]
    fn every_component_returns_any_view() {
        let ui = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ui");
        let mut files = Vec::new();
        rust_files(&ui, &mut files);
        let mut components = 0;
        let mut offenders = Vec::new();
        for file in &files {
            let source = std::fs::read_to_string(file).expect("ui file is readable");
            for signature in component_signatures(&source) {
                components += 1;
                if !signature.contains("-> AnyView") {
                    offenders.push(format!("{}: {signature}", file.display()));
                }
            }
        }
        assert!(
            components > 40,
            "found only {components} components under {}",
            ui.display()
        );
        assert!(
            offenders.is_empty(),
            "components that do not erase their view type:\n{}",
            offenders.join("\n")
        );
    }
}

#[cfg(all(test, feature = "ssr"))]
mod titles {
    use super::page_title;

    #[test]
    fn page_title_escapes_markup_on_the_server() {
        let crafted = r#"p</title><meta http-equiv=refresh content="0;url=//evil.example">"#;
        let title = page_title(crafted.to_owned());
        assert!(!title.contains('<') && !title.contains('>'), "{title}");
        assert_eq!(
            title,
            "p&lt;/title&gt;&lt;meta http-equiv=refresh content=\"0;url=//evil.example\"&gt; · claimpool"
        );
        assert_eq!(page_title("A & B".into()), "A &amp; B · claimpool");
        assert_eq!(page_title("Claim 12".into()), "Claim 12 · claimpool");
    }

    /// Only the root sets the formatter: a page's own `formatter=` would replace the escaping one.
    #[test]
    fn no_page_sets_its_own_formatter() {
        let mut files = Vec::new();
        super::erased_components::rust_files(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ui"),
            &mut files,
        );
        assert!(files.len() > 10, "{files:?}");
        let mut formatters = Vec::new();
        let mut titles = 0;
        for file in &files {
            let source = std::fs::read_to_string(file).expect("a ui file");
            for (i, line) in source.lines().enumerate() {
                let line = line.trim_start();
                if !line.starts_with("<Title ") {
                    continue;
                }
                titles += 1;
                if line.contains("formatter") {
                    formatters.push(format!("{}:{}: {}", file.display(), i + 1, line));
                }
            }
        }
        assert!(titles >= 15, "{titles} <Title> uses found");
        assert_eq!(formatters.len(), 1, "{formatters:#?}");
        assert!(
            formatters[0].contains("formatter=page_title"),
            "{formatters:#?}"
        );
    }
}
