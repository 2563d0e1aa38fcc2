//! A project's annotation guidelines: the text rules a new version must meet, and Markdown
//! rendered to HTML that is safe to put in a page as is. Raw HTML in the Markdown is escaped
//! (shown as text, never passed through), and links and images keep only http(s), mailto and
//! relative addresses; any other (`javascript:`, `data:`, …) is dropped, its text kept.

use pulldown_cmark::{html, Event, Options, Parser, Tag, TagEnd};

/// The largest guidelines text, in bytes of UTF-8.
pub const MAX_GUIDELINES_BYTES: usize = 200 * 1024;

/// Why a guidelines text is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GuidelinesError {
    #[error("the guidelines are empty: write them before saving")]
    Empty,
    #[error(
        "the guidelines are {bytes} bytes; at most {max} bytes (200 KB) are kept: shorten them or link to a longer document",
        max = MAX_GUIDELINES_BYTES
    )]
    TooLarge { bytes: usize },
    #[error("the text is the same as the current version {0}: nothing to save")]
    Unchanged(i64),
}

/// The text as stored: line ends as `\n`, no trailing white space.
pub fn normalize(markdown: &str) -> String {
    markdown.replace("\r\n", "\n").trim_end().to_owned()
}

/// The text to store as a new version after `current` (version, text), or why not.
pub fn check_new_version(
    markdown: &str,
    current: Option<(i64, &str)>,
) -> Result<String, GuidelinesError> {
    let text = normalize(markdown);
    if text.trim().is_empty() {
        return Err(GuidelinesError::Empty);
    }
    if text.len() > MAX_GUIDELINES_BYTES {
        return Err(GuidelinesError::TooLarge { bytes: text.len() });
    }
    match current {
        Some((version, old)) if normalize(old) == text => Err(GuidelinesError::Unchanged(version)),
        _ => Ok(text),
    }
}

/// Whether a link or image address may stay: http(s), mailto, or relative (no scheme) to this
/// site. A protocol-relative address (`//evil.example`, also spelled with backslashes, which
/// browsers read as slashes) names another site and is dropped. Browsers ignore ASCII white
/// space and control characters inside an address's start, so those are dropped before it is
/// read.
pub fn safe_url(url: &str) -> bool {
    let cleaned: String = url
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_control())
        .collect::<String>()
        .to_ascii_lowercase();
    if cleaned
        .chars()
        .take(2)
        .filter(|c| matches!(c, '/' | '\\'))
        .count()
        == 2
    {
        return false;
    }
    let scheme_end = cleaned.find(':');
    let path_start = cleaned.find(['/', '?', '#']);
    match (scheme_end, path_start) {
        (None, _) => true,
        (Some(colon), Some(path)) if path < colon => true,
        (Some(colon), _) => matches!(&cleaned[..colon], "http" | "https" | "mailto"),
    }
}

/// The guidelines as HTML: CommonMark with tables, strikethrough and task lists; raw HTML
/// escaped; links and images to unsafe addresses reduced to their text.
pub fn render_html(markdown: &str) -> String {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    options.insert(Options::ENABLE_TASKLISTS);
    // Raw HTML becomes text (push_html escapes text), a block of it a paragraph. An unsafe link or image loses its start
    // and end tags, its text stays; links and images are counted apart (an image may sit in a
    // link).
    let mut dropped_links = 0usize;
    let mut dropped_images = 0usize;
    let events = Parser::new_ext(markdown, options).filter_map(move |event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
        Event::Start(Tag::HtmlBlock) => Some(Event::Start(Tag::Paragraph)),
        Event::End(TagEnd::HtmlBlock) => Some(Event::End(TagEnd::Paragraph)),
        Event::Start(Tag::Link { ref dest_url, .. }) if !safe_url(dest_url) => {
            dropped_links += 1;
            None
        }
        Event::End(TagEnd::Link) if dropped_links > 0 => {
            dropped_links -= 1;
            None
        }
        Event::Start(Tag::Image { ref dest_url, .. }) if !safe_url(dest_url) => {
            dropped_images += 1;
            None
        }
        Event::End(TagEnd::Image) if dropped_images > 0 => {
            dropped_images -= 1;
            None
        }
        other => Some(other),
    });
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, events);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_comes_out_escaped() {
        let html = render_html("Hello <script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(
            html.contains("&lt;img src=x onerror=alert(2)&gt;"),
            "{html}"
        );
        let block = render_html("<div onclick=\"x()\">\n*hi*\n</div>\n");
        assert!(!block.contains("<div"), "{block}");
        assert!(
            block.starts_with("<p>&lt;div onclick=\"x()\"&gt;"),
            "{block}"
        );
    }

    #[test]
    fn unsafe_links_are_dropped_and_their_text_kept() {
        for md in [
            "[click](javascript:alert(1))",
            "[click](JavaScript:alert(1))",
            "[click](java\tscript:alert(1))",
            "[click](javascript&#58;alert(1))",
            "[click](data:text/html;base64,PHNjcmlwdD4=)",
            "[click](<javascript:alert(1)>)",
            "[click][ref]\n\n[ref]: javascript:alert(1)",
        ] {
            let html = render_html(md);
            assert!(
                !html.to_ascii_lowercase().contains("javascript"),
                "{md}: {html}"
            );
            assert!(!html.contains("<a"), "{md}: {html}");
            assert!(html.contains("click"), "{md}: {html}");
        }
        // Protocol-relative addresses lead to another site.
        for md in [
            "[click](//evil.example)",
            "[click](//evil.example/path?x=1)",
            r"[click](\\\\evil.example)",
            r"[click](/\evil.example)",
            "[click][ref]\n\n[ref]: //evil.example",
        ] {
            let html = render_html(md);
            assert!(!html.contains("evil.example"), "{md}: {html}");
            assert!(!html.contains("<a"), "{md}: {html}");
            assert!(html.contains("click"), "{md}: {html}");
        }
        for url in [
            "//evil.example",
            r"\\evil.example",
            r"/\evil",
            r"\/evil",
            " //evil",
            "/\t/evil",
        ] {
            assert!(!safe_url(url), "{url:?}");
        }
        let image = render_html("![alt text](//evil.example/x.png)");
        assert!(!image.contains("<img"), "{image}");
        assert!(image.contains("alt text"), "{image}");
        let auto = render_html("<javascript:alert(1)>");
        assert!(!auto.contains("<a"), "{auto}");
        let image = render_html("![alt text](javascript:alert(1))");
        assert!(!image.contains("<img"), "{image}");
        assert!(image.contains("alt text"), "{image}");
    }

    #[test]
    fn safe_links_stay() {
        let html = render_html(
            "[a](https://example.org/x?y=1) [b](mailto:lead@example.org) [c](/lead/projects) [d](#labels) [e](notes/a:b)",
        );
        assert!(
            html.contains(r#"<a href="https://example.org/x?y=1">a</a>"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<a href="mailto:lead@example.org">b</a>"#),
            "{html}"
        );
        assert!(html.contains(r#"<a href="/lead/projects">c</a>"#), "{html}");
        assert!(html.contains(r##"<a href="#labels">d</a>"##), "{html}");
        assert!(html.contains(r#"<a href="notes/a:b">e</a>"#), "{html}");
        let image = render_html("![figure](https://example.org/f.png)");
        assert!(
            image.contains(r#"<img src="https://example.org/f.png" alt="figure""#),
            "{image}"
        );
    }

    #[test]
    fn headings_lists_emphasis_and_code_render() {
        let html = render_html(
            "# Labels\n\n## SUPPORT\n\n- one\n- two\n\n1. first\n2. second\n\n*em* **strong** `a < b`\n\n```\nfn x() {}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        );
        for part in [
            "<h1>Labels</h1>",
            "<h2>SUPPORT</h2>",
            "<ul>\n<li>one</li>\n<li>two</li>\n</ul>",
            "<ol>\n<li>first</li>\n<li>second</li>\n</ol>",
            "<em>em</em>",
            "<strong>strong</strong>",
            "<code>a &lt; b</code>",
            "<pre><code>fn x() {}\n</code></pre>",
            "<table>",
        ] {
            assert!(html.contains(part), "{part} not in {html}");
        }
    }

    #[test]
    fn url_schemes() {
        assert!(safe_url("https://x.org"));
        assert!(safe_url("HTTP://x.org"));
        assert!(safe_url("mailto:a@b"));
        assert!(safe_url("relative/path"));
        assert!(safe_url("/a:b"));
        assert!(safe_url("?q=a:b"));
        assert!(!safe_url("javascript:x"));
        assert!(!safe_url(" javascript:x"));
        assert!(!safe_url("vbscript:x"));
        assert!(!safe_url("data:text/html,x"));
        assert!(!safe_url("file:///etc/passwd"));
    }

    #[test]
    fn new_versions_are_checked() {
        assert_eq!(check_new_version("  \n", None), Err(GuidelinesError::Empty));
        assert_eq!(check_new_version("a\r\nb\n\n", None), Ok("a\nb".to_owned()));
        assert_eq!(
            check_new_version("a\r\nb", Some((3, "a\nb\n"))),
            Err(GuidelinesError::Unchanged(3))
        );
        assert_eq!(
            check_new_version("a b", Some((3, "a"))),
            Ok("a b".to_owned())
        );
        let big = "x".repeat(MAX_GUIDELINES_BYTES + 1);
        let err = check_new_version(&big, None).unwrap_err();
        assert_eq!(
            err,
            GuidelinesError::TooLarge {
                bytes: MAX_GUIDELINES_BYTES + 1
            }
        );
        assert!(err.to_string().contains("200 KB"), "{err}");
        assert!(check_new_version(&"x".repeat(MAX_GUIDELINES_BYTES), None).is_ok());
    }
}
