//! The Content-Security-Policy of a rendered page: scripts only from the site or with the
//! render's nonce (leptos_axum makes one per response and puts it on the hydration script), the
//! wasm compiled, nothing framed. Inline `style` attributes (bar widths) need `'unsafe-inline'`
//! for styles. Responses that are not pages get a stricter policy from the server's middleware.

use leptos::prelude::use_context;

/// The policy for a page whose inline scripts carry `nonce`.
pub fn page_policy(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
         form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
    )
}

/// Sets the page's policy on the response being rendered (a no-op outside a render).
pub fn set_page_policy() {
    let (Some(nonce), Some(response)) = (
        leptos::nonce::use_nonce(),
        use_context::<leptos_axum::ResponseOptions>(),
    ) else {
        return;
    };
    if let Ok(value) = axum::http::HeaderValue::from_str(&page_policy(&nonce.to_string())) {
        response.insert_header(axum::http::header::CONTENT_SECURITY_POLICY, value);
    }
}

#[cfg(test)]
mod tests {
    use super::page_policy;

    #[test]
    fn the_policy_names_the_nonce_and_forbids_framing_and_inline_scripts() {
        let p = page_policy("abc123");
        assert!(p.contains("script-src 'self' 'nonce-abc123' 'wasm-unsafe-eval';"));
        assert!(p.contains("frame-ancestors 'none'"));
        let scripts = p
            .split(';')
            .find(|d| d.trim().starts_with("script-src"))
            .unwrap();
        assert!(!scripts.contains("unsafe-inline"), "{scripts}");
    }
}
