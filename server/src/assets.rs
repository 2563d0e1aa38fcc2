//! The site's package (`pkg/`: the front end's JavaScript and WebAssembly, the stylesheet) as a
//! release build leaves it, held in memory from the server's start and sent with an ETag, as
//! brotli or gzip when the browser takes it (the copies `cargo xtask site --release` compressed,
//! xtask/src/compress.rs).
//!
//! Pages link the files under a path that names their content, `/v/{version}/pkg/…`
//! ([`Assets::pkg_dir`]), with `Cache-Control: immutable`: a browser keeps them until a build
//! with other content, whose pages name another version; a request for another version than
//! the server's is 404 (the server has no other content to give under it). The plain `/pkg/…`
//! stays for what names it (the server's refusal pages) and is revalidated on each use
//! (`no-cache`; 304 when the ETag still matches).
//!
//! A package without the build's manifest (a development build, `cargo leptos watch`) is not
//! loaded: leptos's file handler serves it from disk as before, with the plain paths.

use app::domain::hex::hex;
use axum::body::Body;
use axum::extract::{Path as UrlPath, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// xtask/src/compress.rs's list of compressed files: `<file> <sha256 hex>` per line.
pub const MANIFEST: &str = "precompressed.txt";
/// The directory of the compressed copies (`<file>.br`, `<file>.gz`), in the package's.
const COPIES: &str = "compressed";

/// How a versioned file may be cached: for a year, never revalidated.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// How a plain `/pkg/…` file may be cached: kept, but revalidated before each use.
const REVALIDATE: &str = "no-cache";

/// One file of the package.
#[derive(Debug)]
struct Asset {
    content_type: &'static str,
    /// The SHA-256 of the content in hex; each encoding's ETag adds the encoding to it
    /// ([`Encoding::etag`]): the representations differ, so their strong ETags must too.
    digest: String,
    identity: axum::body::Bytes,
    brotli: Option<axum::body::Bytes>,
    gzip: Option<axum::body::Bytes>,
}

/// The package in memory (see the module's documentation).
#[derive(Debug, Default)]
pub struct Assets {
    /// A hash of every file's name and content (16 hex digits); empty when nothing was loaded.
    version: String,
    files: HashMap<String, Asset>,
}

/// How a response body is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Encoding {
    Brotli,
    Gzip,
    Identity,
}

impl Assets {
    /// Loads the files the manifest in `pkg` lists; none (and no error) when `pkg` has no
    /// manifest. A compressed copy whose file no longer has the content the manifest names
    /// (rewritten by another build since) is left out, and the file is sent uncompressed.
    pub fn load(pkg: &Path) -> anyhow::Result<Assets> {
        use anyhow::Context;
        let manifest = match std::fs::read_to_string(pkg.join(MANIFEST)) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Assets::default()),
            Err(e) => return Err(e).context(format!("reading {}", pkg.join(MANIFEST).display())),
        };
        let read = |name: &str| -> anyhow::Result<axum::body::Bytes> {
            let path = pkg.join(name);
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            Ok(bytes.into())
        };
        let mut files = HashMap::new();
        let mut version = Sha256::new();
        for (n, line) in manifest.lines().enumerate() {
            let (name, hash) = line.split_once(' ').with_context(|| {
                format!(
                    "{}, line {}: not `<file> <sha256>`",
                    pkg.join(MANIFEST).display(),
                    n + 1
                )
            })?;
            if name.contains('/') || name.starts_with('.') {
                anyhow::bail!(
                    "{}, line {}: {name:?} is not a file of the package",
                    pkg.join(MANIFEST).display(),
                    n + 1
                );
            }
            let identity = read(name)?;
            let digest = hex(&Sha256::digest(&identity));
            let (brotli, gzip) = if digest == hash {
                (
                    Some(read(&format!("{COPIES}/{name}.br"))?),
                    Some(read(&format!("{COPIES}/{name}.gz"))?),
                )
            } else {
                tracing::warn!(
                    file = name,
                    "the package's file changed since its build compressed it: sent uncompressed"
                );
                (None, None)
            };
            version.update(name.as_bytes());
            version.update([0]);
            version.update(digest.as_bytes());
            let asset = Asset {
                content_type: content_type(name),
                digest,
                identity,
                brotli,
                gzip,
            };
            files.insert(name.to_owned(), asset);
        }
        let version = if files.is_empty() {
            String::new()
        } else {
            hex(&version.finalize())[..16].to_owned()
        };
        Ok(Assets { version, files })
    }

    /// The package's path as pages name it (leptos's `site_pkg_dir`): `v/{version}/pkg` when
    /// the package is held here, `pkg` (served from disk) otherwise.
    pub fn pkg_dir(&self) -> String {
        if self.version.is_empty() {
            "pkg".to_owned()
        } else {
            format!("v/{}/pkg", self.version)
        }
    }

    /// Whether the package is held here (and its routes are to be added).
    pub fn loaded(&self) -> bool {
        !self.files.is_empty()
    }

    /// The response to a GET of `file` (`immutable`: under its version's path).
    fn respond(&self, file: &str, immutable: bool, request: &HeaderMap) -> Response {
        let Some(asset) = self.files.get(file) else {
            return StatusCode::NOT_FOUND.into_response();
        };
        let cache = HeaderValue::from_static(if immutable { IMMUTABLE } else { REVALIDATE });
        let encoding = negotiate(request, asset.brotli.is_some(), asset.gzip.is_some());
        let etag = encoding.etag(&asset.digest);
        let mut headers = HeaderMap::new();
        if let Ok(value) = HeaderValue::from_str(&etag) {
            headers.insert(header::ETAG, value);
        }
        headers.insert(header::CACHE_CONTROL, cache);
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        if not_modified(request, &etag) {
            return (StatusCode::NOT_MODIFIED, headers).into_response();
        }
        let body = match encoding {
            Encoding::Brotli => asset.brotli.clone(),
            Encoding::Gzip => asset.gzip.clone(),
            Encoding::Identity => None,
        }
        .unwrap_or_else(|| asset.identity.clone());
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.content_type),
        );
        match encoding {
            Encoding::Brotli => {
                headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("br"));
            }
            Encoding::Gzip => {
                headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            }
            Encoding::Identity => {}
        }
        (StatusCode::OK, headers, Body::from(body)).into_response()
    }
}

impl Encoding {
    /// The strong ETag of the representation of content `digest` in this encoding.
    fn etag(self, digest: &str) -> String {
        match self {
            Encoding::Brotli => format!("\"{digest}.br\""),
            Encoding::Gzip => format!("\"{digest}.gz\""),
            Encoding::Identity => format!("\"{digest}\""),
        }
    }
}

/// `GET /v/{version}/pkg/{file}`.
pub async fn versioned(
    State(assets): State<Arc<Assets>>,
    UrlPath((version, file)): UrlPath<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if version != assets.version {
        return StatusCode::NOT_FOUND.into_response();
    }
    assets.respond(&file, true, &headers)
}

/// `GET /pkg/{file}`.
pub async fn plain(
    State(assets): State<Arc<Assets>>,
    UrlPath(file): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    assets.respond(&file, false, &headers)
}

/// Whether the request's `If-None-Match` names `etag` (or is `*`).
fn not_modified(request: &HeaderMap, etag: &str) -> bool {
    let Some(Ok(tags)) = request.get(header::IF_NONE_MATCH).map(|v| v.to_str()) else {
        return false;
    };
    tags.split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag == etag || tag.strip_prefix("W/") == Some(etag))
}

/// The best encoding the request's `Accept-Encoding` allows among those there are: brotli,
/// then gzip, else none. A coding listed with `q=0` is refused.
fn negotiate(request: &HeaderMap, brotli: bool, gzip: bool) -> Encoding {
    let accepted = |coding: &str| {
        request
            .get_all(header::ACCEPT_ENCODING)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|item| {
                let mut parts = item.split(';').map(str::trim);
                let name = parts.next().unwrap_or_default();
                let refused = parts.any(|p| {
                    p.strip_prefix("q=")
                        .and_then(|q| q.parse::<f32>().ok())
                        .is_some_and(|q| q <= 0.0)
                });
                name.eq_ignore_ascii_case(coding) && !refused
            })
    };
    if brotli && accepted("br") {
        Encoding::Brotli
    } else if gzip && accepted("gzip") {
        Encoding::Gzip
    } else {
        Encoding::Identity
    }
}

fn content_type(name: &str) -> &'static str {
    match Path::new(name).extension().and_then(|e| e.to_str()) {
        Some("js") => "text/javascript; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("css") => "text/css; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(name.clone(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn the_best_accepted_encoding_is_chosen_and_q0_refuses_one() {
        let ae = header::ACCEPT_ENCODING;
        let pick = |value: &str| negotiate(&request(&[(ae.clone(), value)]), true, true);
        assert_eq!(pick("gzip, deflate, br, zstd"), Encoding::Brotli);
        assert_eq!(pick("gzip"), Encoding::Gzip);
        assert_eq!(pick("br;q=0, gzip;q=0.5"), Encoding::Gzip);
        assert_eq!(pick("BR"), Encoding::Brotli);
        assert_eq!(pick("identity"), Encoding::Identity);
        assert_eq!(negotiate(&HeaderMap::new(), true, true), Encoding::Identity);
        assert_eq!(
            negotiate(&request(&[(ae.clone(), "br, gzip")]), false, true),
            Encoding::Gzip
        );
    }

    #[test]
    fn if_none_match_matches_the_etag_in_a_list_or_weak_or_star() {
        let etag = "\"abc\"";
        let inm = header::IF_NONE_MATCH;
        let matches = |value: &str| not_modified(&request(&[(inm.clone(), value)]), etag);
        assert!(matches("\"abc\""));
        assert!(matches("\"x\", \"abc\""));
        assert!(matches("W/\"abc\""));
        assert!(matches("*"));
        assert!(!matches("\"abd\""));
        assert!(!not_modified(&HeaderMap::new(), etag));
    }

    /// A package as xtask leaves it: each file, its copies and the manifest.
    fn package(dir: &Path, files: &[(&str, &[u8])]) {
        let mut manifest = String::new();
        std::fs::create_dir_all(dir.join(COPIES)).unwrap();
        for (name, content) in files {
            std::fs::write(dir.join(name), content).unwrap();
            std::fs::write(dir.join(COPIES).join(format!("{name}.br")), b"brotli bytes").unwrap();
            std::fs::write(dir.join(COPIES).join(format!("{name}.gz")), b"gzip bytes").unwrap();
            manifest.push_str(&format!("{name} {}\n", hex(&Sha256::digest(content))));
        }
        std::fs::write(dir.join(MANIFEST), manifest).unwrap();
    }

    async fn get(assets: &Assets, file: &str, pairs: &[(header::HeaderName, &str)]) -> Response {
        assets.respond(file, true, &request(pairs))
    }

    async fn body(response: Response) -> Vec<u8> {
        axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap()
            .to_vec()
    }

    #[tokio::test]
    async fn a_package_is_served_from_its_manifest_and_a_changed_file_uncompressed() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            !Assets::load(dir.path()).unwrap().loaded(),
            "no manifest: from disk"
        );
        assert_eq!(Assets::load(dir.path()).unwrap().pkg_dir(), "pkg");

        package(
            dir.path(),
            &[("claimpool.js", b"js"), ("claimpool.wasm", b"wasm")],
        );
        let assets = Assets::load(dir.path()).unwrap();
        assert!(assets.loaded());
        assert!(assets.pkg_dir().starts_with("v/") && assets.pkg_dir().ends_with("/pkg"));
        let ae = header::ACCEPT_ENCODING;
        let res = get(&assets, "claimpool.wasm", &[(ae.clone(), "gzip, br")]).await;
        assert_eq!(res.headers()[header::CONTENT_ENCODING], "br");
        assert_eq!(res.headers()[header::CONTENT_TYPE], "application/wasm");
        assert_eq!(res.headers()[header::CACHE_CONTROL], IMMUTABLE);
        let etag = res.headers()[header::ETAG].to_str().unwrap().to_owned();
        let wasm_digest = hex(&Sha256::digest(b"wasm"));
        assert_eq!(etag, format!("\"{wasm_digest}.br\""));
        assert_eq!(body(res).await, b"brotli bytes");
        let res = get(&assets, "claimpool.wasm", &[]).await;
        assert_eq!(body(res).await, b"wasm");
        let res = get(
            &assets,
            "claimpool.wasm",
            &[(ae.clone(), "br"), (header::IF_NONE_MATCH, &etag)],
        )
        .await;
        assert_eq!(res.status(), StatusCode::NOT_MODIFIED);
        // The brotli ETag does not validate the gzip representation.
        let res = get(
            &assets,
            "claimpool.wasm",
            &[(ae.clone(), "gzip"), (header::IF_NONE_MATCH, &etag)],
        )
        .await;
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(body(res).await, b"gzip bytes");
        assert_eq!(
            get(&assets, "other.js", &[]).await.status(),
            StatusCode::NOT_FOUND
        );

        // Another build's content is another version; a file rewritten since its copies were
        // made (cargo leptos watch) is sent as it is now, uncompressed.
        std::fs::write(dir.path().join("claimpool.wasm"), b"new wasm").unwrap();
        let changed = Assets::load(dir.path()).unwrap();
        assert_ne!(changed.pkg_dir(), assets.pkg_dir());
        let res = get(&changed, "claimpool.wasm", &[(ae.clone(), "br")]).await;
        assert!(res.headers().get(header::CONTENT_ENCODING).is_none());
        assert_eq!(body(res).await, b"new wasm");
        let res = get(&changed, "claimpool.js", &[(ae, "br")]).await;
        assert_eq!(body(res).await, b"brotli bytes");

        std::fs::write(dir.path().join(MANIFEST), "../secret 00\n").unwrap();
        let refused = Assets::load(dir.path()).unwrap_err().to_string();
        assert!(
            refused.contains("line 1") && refused.contains("not a file of the package"),
            "{refused}"
        );
    }
}
