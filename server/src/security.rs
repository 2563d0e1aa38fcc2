//! Request and response hardening around the whole router: a cross-site request check on every
//! state-changing request, and the security headers of every response.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Where the server is reached from, when it is not the request's own `Host` (behind a proxy):
/// `serve --public-url https://claimpool.example.org`.
#[derive(Clone, Debug, Default)]
pub struct PublicOrigin(pub Option<String>);

impl PublicOrigin {
    /// Parses `scheme://host[:port]` (a trailing `/` is dropped; a path is refused).
    pub fn parse(url: &str) -> Result<PublicOrigin, String> {
        let url = url.trim().trim_end_matches('/');
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(format!(
                "{url:?} is not an absolute URL (scheme://host[:port])"
            ));
        };
        let scheme = scheme.to_ascii_lowercase();
        if !matches!(scheme.as_str(), "http" | "https") || rest.is_empty() || rest.contains('/') {
            return Err(format!(
                "{url:?}: give the scheme and host only, e.g. https://claimpool.example.org"
            ));
        }
        Ok(PublicOrigin(Some(format!(
            "{scheme}://{}",
            rest.to_ascii_lowercase()
        ))))
    }

    /// Whether cookies must be `Secure` (the public URL is https).
    pub fn is_https(&self) -> bool {
        self.0.as_deref().is_some_and(|o| o.starts_with("https://"))
    }
}

/// Whether a request may change state: `GET`, `HEAD` and `OPTIONS` never do here.
fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Why a request is refused as cross-site, or None when it may pass. A browser sends `Origin`
/// with every POST and `Sec-Fetch-Site` with every request; either one naming another site
/// refuses the request. A request with neither is not a browser's (scripts, the CLI's tests) and
/// cannot carry a victim's cookie by itself, so it passes.
///
/// A request with an API token (`Authorization`) and no cookie carries no ambient credential: a
/// page of another site cannot make a browser add the token, so it passes whatever its headers
/// say. A request with a cookie is checked, token or not.
pub fn cross_site(method: &Method, headers: &HeaderMap, public: &PublicOrigin) -> Option<String> {
    if is_safe(method) {
        return None;
    }
    if headers.contains_key(header::AUTHORIZATION) && !headers.contains_key(header::COOKIE) {
        return None;
    }
    if let Some(site) = headers.get("sec-fetch-site") {
        let site = site.to_str().unwrap_or("");
        if !matches!(site, "same-origin" | "none") {
            return Some(format!("Sec-Fetch-Site: {site}"));
        }
    }
    let origin = headers.get(header::ORIGIN)?;
    let origin = origin.to_str().unwrap_or("").to_ascii_lowercase();
    let expected = match &public.0 {
        Some(public) => vec![public.clone()],
        None => {
            let host = headers
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .unwrap_or("")
                .to_ascii_lowercase();
            vec![format!("http://{host}"), format!("https://{host}")]
        }
    };
    (!expected.contains(&origin)).then(|| format!("Origin: {origin}"))
}

/// Refuses cross-site state-changing requests with 403 (see [`cross_site`]).
pub async fn refuse_cross_site(
    State(public): State<Arc<PublicOrigin>>,
    req: Request,
    next: Next,
) -> Response {
    match cross_site(req.method(), req.headers(), &public) {
        None => next.run(req).await,
        Some(why) => {
            tracing::warn!(path = %req.uri().path(), %why, "cross-site request refused");
            (
                StatusCode::FORBIDDEN,
                "cross-site request refused: this action must come from claimpool's own pages",
            )
                .into_response()
        }
    }
}

/// The policy of responses that are not pages (files, server functions, downloads).
const DEFAULT_POLICY: &str =
    "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// Adds the security headers to every response; a page keeps the policy its render set
/// (`app::csp`, with the nonce of its hydration script).
pub async fn headers(req: Request, next: Next) -> Response {
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(DEFAULT_POLICY),
        );
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn cross_site_posts_are_refused_same_site_ones_pass() {
        let none = PublicOrigin::default();
        let post = Method::POST;
        let host = ("host", "127.0.0.1:3000");
        assert!(cross_site(
            &post,
            &headers(&[host, ("origin", "http://evil.example")]),
            &none
        )
        .is_some());
        assert!(cross_site(&post, &headers(&[host, ("origin", "null")]), &none).is_some());
        assert!(cross_site(
            &post,
            &headers(&[host, ("sec-fetch-site", "cross-site")]),
            &none
        )
        .is_some());
        assert!(cross_site(
            &post,
            &headers(&[host, ("sec-fetch-site", "same-site")]),
            &none
        )
        .is_some());
        assert!(cross_site(
            &post,
            &headers(&[
                host,
                ("origin", "http://127.0.0.1:3000"),
                ("sec-fetch-site", "same-origin")
            ]),
            &none
        )
        .is_none());
        // Scripts send neither header.
        assert!(cross_site(&post, &headers(&[host]), &none).is_none());
        // A token without a cookie carries no ambient credential; with a cookie it is checked.
        let bearer = ("authorization", "Bearer cp_x");
        let evil = ("origin", "http://evil.example");
        assert!(cross_site(&post, &headers(&[host, bearer, evil]), &none).is_none());
        assert!(cross_site(
            &post,
            &headers(&[host, bearer, evil, ("cookie", "claimpool_session=x")]),
            &none
        )
        .is_some());
        assert!(cross_site(
            &post,
            &headers(&[host, evil, ("cookie", "claimpool_session=x")]),
            &none
        )
        .is_some());
        // Reads never change state.
        assert!(cross_site(
            &Method::GET,
            &headers(&[host, ("origin", "http://evil.example")]),
            &none
        )
        .is_none());
        // Behind a proxy the public URL is the origin, whatever Host says.
        let public = PublicOrigin::parse("https://claimpool.example.org/").unwrap();
        assert!(public.is_https());
        let inner = ("host", "10.0.0.5:3000");
        assert!(cross_site(
            &post,
            &headers(&[inner, ("origin", "https://claimpool.example.org")]),
            &public
        )
        .is_none());
        assert!(cross_site(
            &post,
            &headers(&[inner, ("origin", "http://10.0.0.5:3000")]),
            &public
        )
        .is_some());
    }

    #[test]
    fn public_urls_parse() {
        assert_eq!(
            PublicOrigin::parse("HTTPS://Claimpool.Example.org")
                .unwrap()
                .0
                .as_deref(),
            Some("https://claimpool.example.org")
        );
        assert!(!PublicOrigin::parse("http://localhost:3000")
            .unwrap()
            .is_https());
        assert!(PublicOrigin::parse("claimpool.example.org").is_err());
        assert!(PublicOrigin::parse("https://x.org/claimpool").is_err());
        assert!(PublicOrigin::parse("ftp://x.org").is_err());
    }
}
