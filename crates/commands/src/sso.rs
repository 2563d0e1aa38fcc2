//! Single sign-on through an OpenID provider (OpenID Connect's authorization code flow with
//! PKCE, by the `openidconnect` crate): [`Sso::start`] sends the browser to the provider,
//! [`Sso::finish`] takes it back, checks the ID token (signature by the provider's keys, issuer,
//! audience, expiry, nonce, access token hash) and signs the identity in by
//! `domain::sso::decide`. The sign-in in progress is kept in the database, so the browser may
//! come back to another server of the same database.

use crate::error::CommandError;
use domain::account::User;
use domain::sso::{NewUsers, Refusal};
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreGenderClaim, CoreProviderMetadata,
};
use openidconnect::{
    AccessTokenHash, AdditionalClaims, AuthorizationCode, ClientId, ClientSecret, CsrfToken,
    EndpointMaybeSet, EndpointNotSet, EndpointSet, IssuerUrl, Nonce, OAuth2TokenResponse,
    PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope, TokenResponse, UserInfoClaims,
};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use store::Db;

/// The path the provider sends the browser back to, on the server's public origin.
pub const CALLBACK_PATH: &str = "/auth/sso/callback";
/// The path that starts a sign-in (`?next=` a same-site path).
pub const START_PATH: &str = "/auth/sso/start";

/// How long the provider's discovery document and keys are used before they are read again.
const DISCOVERY_TTL: Duration = Duration::from_secs(300);

/// What the administrator configured (`serve --oidc-*`).
#[derive(Clone, Debug)]
pub struct SsoConfig {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    /// The server's public origin (`--public-url`): the callback is `<origin>/auth/sso/callback`.
    pub public_origin: String,
    /// The claim that carries the user name.
    pub username_claim: String,
    pub new_users: NewUsers,
    /// The scopes asked for besides `openid`.
    pub scopes: Vec<String>,
    /// The sign-in button's words ("Sign in with …").
    pub label: String,
}

/// Why a sign-in through the provider did not end signed in.
#[derive(Debug, thiserror::Error)]
pub enum SsoError {
    /// The identity maps to no usable account (words for the person).
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The sign-in's state is unknown: it expired, was used already, or was started in another
    /// browser.
    #[error("this sign-in expired or was started in another browser; start again")]
    Expired,
    /// The provider refused or failed (its words, for the log and the person).
    #[error("the identity provider: {0}")]
    Provider(String),
    #[error(transparent)]
    Command(#[from] CommandError),
}

impl From<store::StoreError> for SsoError {
    fn from(e: store::StoreError) -> SsoError {
        SsoError::Command(e.into())
    }
}

type Client = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// Every claim besides the standard ones (the user name may be any claim the provider sends).
#[derive(Clone, Debug, Default, serde::Deserialize, serde::Serialize)]
struct OtherClaims {
    #[serde(flatten)]
    claims: HashMap<String, serde_json::Value>,
}

impl AdditionalClaims for OtherClaims {}

/// The configured provider, with its discovery cached.
pub struct Sso {
    config: SsoConfig,
    issuer: IssuerUrl,
    redirect: RedirectUrl,
    http: reqwest::Client,
    discovered: tokio::sync::Mutex<Option<(Instant, Client)>>,
}

impl std::fmt::Debug for Sso {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sso")
            .field("issuer", &self.config.issuer)
            .field("client_id", &self.config.client_id)
            .finish_non_exhaustive()
    }
}

/// A sign-in sent to the provider: where the browser goes, and the state its cookie binds.
#[derive(Clone, Debug)]
pub struct Started {
    pub url: String,
    pub state: String,
}

/// A finished sign-in: the account, and the same-site path to go to.
#[derive(Clone, Debug)]
pub struct SignedIn {
    pub user: User,
    pub next: String,
}

fn provider(e: impl std::fmt::Display) -> SsoError {
    SsoError::Provider(e.to_string())
}

impl Sso {
    pub fn new(config: SsoConfig) -> Result<Sso, String> {
        let issuer = IssuerUrl::new(config.issuer.trim().to_owned())
            .map_err(|e| format!("--oidc-issuer {:?}: {e}", config.issuer))?;
        let redirect = RedirectUrl::new(format!(
            "{}{CALLBACK_PATH}",
            config.public_origin.trim_end_matches('/')
        ))
        .map_err(|e| format!("--public-url: {e}"))?;
        let http = reqwest::Client::builder()
            // The provider's redirects are not followed (openidconnect's advice: SSRF).
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(15))
            .build()
            .map_err(|e| format!("the sign-on's HTTP client: {e}"))?;
        Ok(Sso {
            config,
            issuer,
            redirect,
            http,
            discovered: tokio::sync::Mutex::new(None),
        })
    }

    pub fn config(&self) -> &SsoConfig {
        &self.config
    }

    /// The redirect URI to register at the provider.
    pub fn redirect_uri(&self) -> &str {
        self.redirect.as_str()
    }

    /// The client of the provider's current discovery document (read again after
    /// [`DISCOVERY_TTL`], so rotated keys are picked up).
    async fn client(&self) -> Result<Client, SsoError> {
        let mut cached = self.discovered.lock().await;
        if let Some((at, client)) = cached.as_ref() {
            if at.elapsed() < DISCOVERY_TTL {
                return Ok(client.clone());
            }
        }
        let metadata = CoreProviderMetadata::discover_async(self.issuer.clone(), &self.http)
            .await
            .map_err(|e| SsoError::Provider(format!("discovery of {}: {e}", self.issuer)))?;
        let client = CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(self.config.client_id.clone()),
            self.config.client_secret.clone().map(ClientSecret::new),
        )
        .set_redirect_uri(self.redirect.clone());
        *cached = Some((Instant::now(), client.clone()));
        Ok(client)
    }

    /// Checks that the provider can be reached (at start-up: a warning, not a refusal).
    pub async fn check(&self) -> Result<(), SsoError> {
        self.client().await.map(|_| ())
    }

    /// Starts a sign-in that ends at the same-site path `next`.
    pub async fn start(&self, db: &Db, next: &str) -> Result<Started, SsoError> {
        let client = self.client().await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client.authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        );
        for scope in &self.config.scopes {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.set_pkce_challenge(challenge).url();
        let pending = store::sso::PendingLogin {
            pkce_verifier: verifier.secret().clone(),
            nonce: nonce.secret().clone(),
            next: next.to_owned(),
        };
        store::sso::begin(db, state.secret(), &pending).await?;
        Ok(Started {
            url: url.to_string(),
            state: state.secret().clone(),
        })
    }

    /// Finishes the sign-in of `state` (from the provider's redirect), which the browser's own
    /// cookie must name (`bound`: a sign-in started in another browser is refused, so nobody can
    /// sign a victim into the attacker's account), with the provider's `code`.
    pub async fn finish(
        &self,
        db: &Db,
        state: &str,
        bound: Option<&str>,
        code: &str,
    ) -> Result<SignedIn, SsoError> {
        if bound.is_none_or(|b| !constant_time_eq(b.as_bytes(), state.as_bytes())) {
            return Err(SsoError::Expired);
        }
        let pending = store::sso::take(db, state)
            .await?
            .ok_or(SsoError::Expired)?;
        let client = self.client().await?;
        let token = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(provider)?
            .set_pkce_verifier(PkceCodeVerifier::new(pending.pkce_verifier))
            .request_async(&self.http)
            .await
            .map_err(|e| SsoError::Provider(format!("the token request: {}", describe(&e))))?;
        let id_token = token
            .id_token()
            .ok_or_else(|| SsoError::Provider("no ID token in the token response".into()))?;
        let verifier = client.id_token_verifier();
        let claims = id_token
            .claims(&verifier, &Nonce::new(pending.nonce))
            .map_err(|e| SsoError::Provider(format!("the ID token: {e}")))?;
        if let Some(expected) = claims.access_token_hash() {
            let actual = AccessTokenHash::from_token(
                token.access_token(),
                id_token.signing_alg().map_err(provider)?,
                id_token.signing_key(&verifier).map_err(provider)?,
            )
            .map_err(provider)?;
            if actual != *expected {
                return Err(SsoError::Provider(
                    "the access token does not match the ID token".into(),
                ));
            }
        }
        let subject = claims.subject().as_str().to_owned();
        let claim = self.config.username_claim.as_str();
        let mut value = standard_claim(claim, &subject, claims);
        if value.is_none() {
            if let Ok(request) = client.user_info(token.access_token().clone(), None) {
                let info: UserInfoClaims<OtherClaims, CoreGenderClaim> = request
                    .request_async(&self.http)
                    .await
                    .map_err(|e| SsoError::Provider(format!("the user info: {e}")))?;
                if info.standard_claims().subject().as_str() != subject {
                    return Err(SsoError::Provider(
                        "the user info is of another subject than the ID token".into(),
                    ));
                }
                value = standard_claim(claim, &subject, info.standard_claims()).or_else(|| {
                    info.additional_claims()
                        .claims
                        .get(claim)
                        .and_then(|v| v.as_str().map(str::to_owned))
                });
            }
        }
        let name = domain::sso::username(claim, value.as_deref())?;
        let identity = store::sso::Identity {
            issuer: self.issuer.as_str(),
            subject: &subject,
        };
        let user = store::sso::sign_in(
            db,
            identity,
            name,
            self.config.new_users,
            domain::sso::NO_PASSWORD_HASH,
        )
        .await??;
        Ok(SignedIn {
            user,
            next: pending.next,
        })
    }
}

/// The standard claims that can name an account: `sub`, `preferred_username`, `nickname`, and
/// `email` only when the provider says it is verified.
fn standard_claim<C>(claim: &str, subject: &str, claims: &C) -> Option<String>
where
    C: StandardView,
{
    match claim {
        "sub" => Some(subject.to_owned()),
        "preferred_username" => claims.preferred_username(),
        "nickname" => claims.nickname(),
        "email" => claims.verified_email(),
        _ => None,
    }
}

/// The ID token's and the user info's standard claims, read alike.
trait StandardView {
    fn preferred_username(&self) -> Option<String>;
    fn nickname(&self) -> Option<String>;
    fn verified_email(&self) -> Option<String>;
}

macro_rules! standard_view {
    ($ty:ty) => {
        impl StandardView for $ty {
            fn preferred_username(&self) -> Option<String> {
                self.preferred_username().map(|v| v.as_str().to_owned())
            }
            fn nickname(&self) -> Option<String> {
                self.nickname()
                    .and_then(|v| v.get(None))
                    .map(|v| v.as_str().to_owned())
            }
            fn verified_email(&self) -> Option<String> {
                (self.email_verified() == Some(true))
                    .then(|| self.email().map(|v| v.as_str().to_owned()))
                    .flatten()
            }
        }
    };
}

standard_view!(openidconnect::IdTokenClaims<openidconnect::EmptyAdditionalClaims, CoreGenderClaim>);
standard_view!(openidconnect::StandardClaims<CoreGenderClaim>);

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A token request's error with the provider's own words when it sent some.
fn describe<E: std::error::Error + 'static>(
    e: &openidconnect::RequestTokenError<
        E,
        openidconnect::StandardErrorResponse<openidconnect::core::CoreErrorResponseType>,
    >,
) -> String {
    match e {
        openidconnect::RequestTokenError::ServerResponse(response) => response.to_string(),
        other => {
            use std::error::Error as _;
            crate::error::with_causes(other.to_string(), other.source())
        }
    }
}
