//! Request and response hardening around the whole router: a cross-site request check on every
//! state-changing request, and the security headers of every response.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::IpAddr;
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

/// The reverse proxies whose `X-Forwarded-For` is believed (`serve --trusted-proxy IP/CIDR`,
/// repeatable). A request from any other peer is keyed on the peer's own address, whatever it
/// forwards.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<(IpAddr, u8)>);

impl TrustedProxies {
    /// Parses addresses (`10.0.0.5`, `::1`) and networks (`10.0.0.0/8`, `fd00::/8`).
    pub fn parse_all(specs: &[String]) -> Result<TrustedProxies, String> {
        specs
            .iter()
            .map(|spec| {
                let spec = spec.trim();
                let (ip, bits) = match spec.split_once('/') {
                    Some((ip, bits)) => (ip, Some(bits)),
                    None => (spec, None),
                };
                let ip: IpAddr = ip
                    .parse()
                    .map_err(|_| format!("{spec:?} is no IP address or network (IP/CIDR)"))?;
                let ip = ip.to_canonical();
                let max = if ip.is_ipv4() { 32 } else { 128 };
                let bits = match bits {
                    None => max,
                    Some(bits) => bits
                        .parse::<u8>()
                        .ok()
                        .filter(|b| *b <= max)
                        .ok_or_else(|| format!("{spec:?}: the prefix length is 0 to {max}"))?,
                };
                Ok((ip, bits))
            })
            .collect::<Result<Vec<_>, String>>()
            .map(TrustedProxies)
    }

    /// Whether `ip` is one of the trusted proxies.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|(net, bits)| match (net, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(*bits)).unwrap_or(0);
                u32::from(*net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(*bits)).unwrap_or(0);
                u128::from(*net) & mask == u128::from(ip) & mask
            }
            _ => false,
        })
    }

    /// The client address of a request from `peer`: the peer itself unless it is a trusted
    /// proxy; then the rightmost `X-Forwarded-For` hop that is no trusted proxy (each proxy
    /// appends the address it was reached from, so hops left of that one are the client's
    /// word). A hop that is no address stops the walk at the proxy that reported it.
    pub fn client_of(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let mut client = peer.to_canonical();
        if !self.contains(client) {
            return client;
        }
        let hops: Vec<&str> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .map(str::trim)
            .collect();
        for hop in hops.into_iter().rev() {
            let Some(ip) = parse_hop(hop) else {
                return client;
            };
            client = ip;
            if !self.contains(ip) {
                return ip;
            }
        }
        client
    }
}

/// An `X-Forwarded-For` hop: an address, or an address with a port (`1.2.3.4:5`, `[::1]:5`).
fn parse_hop(hop: &str) -> Option<IpAddr> {
    hop.parse::<IpAddr>()
        .ok()
        .or_else(|| hop.parse::<std::net::SocketAddr>().ok().map(|s| s.ip()))
        .map(|ip| ip.to_canonical())
}

/// Resolves every request's client address ([`app::auth::ClientAddress`]) from its socket peer
/// and, behind a trusted proxy, `X-Forwarded-For` (see [`TrustedProxies::client_of`]).
pub async fn resolve_client(
    State(proxies): State<Arc<TrustedProxies>>,
    mut req: Request,
    next: Next,
) -> Response {
    let peer = req
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| info.0.ip());
    if let Some(peer) = peer {
        let client = proxies.client_of(peer, req.headers());
        req.extensions_mut()
            .insert(app::auth::ClientAddress(client));
    }
    next.run(req).await
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
    fn forwarded_addresses_are_believed_from_trusted_proxies_only() {
        let proxies = TrustedProxies::parse_all(&[
            "10.0.0.1".into(),
            "192.168.0.0/16".into(),
            "fd00::/8".into(),
        ])
        .unwrap();
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let xff = |v: &str| headers(&[("x-forwarded-for", v)]);
        assert!(proxies.contains(ip("192.168.7.9")) && !proxies.contains(ip("192.169.0.1")));
        assert!(proxies.contains(ip("::ffff:10.0.0.1")) && proxies.contains(ip("fd12::1")));
        // An untrusted peer is itself, whatever it forwards.
        assert_eq!(
            proxies.client_of(ip("203.0.113.9"), &xff("1.2.3.4")),
            ip("203.0.113.9")
        );
        // A trusted one: the rightmost untrusted hop; the client's own claims left of it.
        let proxy = ip("10.0.0.1");
        assert_eq!(proxies.client_of(proxy, &xff("1.2.3.4")), ip("1.2.3.4"));
        assert_eq!(
            proxies.client_of(proxy, &xff("9.9.9.9, 1.2.3.4")),
            ip("1.2.3.4")
        );
        assert_eq!(
            proxies.client_of(proxy, &xff("9.9.9.9, 1.2.3.4, 192.168.1.1")),
            ip("1.2.3.4")
        );
        assert_eq!(
            proxies.client_of(proxy, &xff("1.2.3.4:5678")),
            ip("1.2.3.4")
        );
        assert_eq!(
            proxies.client_of(proxy, &xff("[2001:db8::1]:80")),
            ip("2001:db8::1")
        );
        // Nothing forwarded, garbage, or only proxies: the last trusted hop.
        assert_eq!(proxies.client_of(proxy, &HeaderMap::new()), proxy);
        assert_eq!(proxies.client_of(proxy, &xff("unknown")), proxy);
        assert_eq!(
            proxies.client_of(proxy, &xff("1.2.3.4, nonsense, 192.168.1.1")),
            ip("192.168.1.1")
        );
        assert_eq!(
            proxies.client_of(proxy, &xff("192.168.1.1")),
            ip("192.168.1.1")
        );
        // None trusted: nothing believed.
        assert_eq!(
            TrustedProxies::default().client_of(proxy, &xff("1.2.3.4")),
            proxy
        );
        for bad in ["10.0.0.1/33", "nonsense", "fd00::/129", "10.0.0.0/x"] {
            assert!(TrustedProxies::parse_all(&[bad.into()]).is_err(), "{bad}");
        }
        assert!(TrustedProxies::parse_all(&["0.0.0.0/0".into()])
            .unwrap()
            .contains(ip("8.8.8.8")));
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
