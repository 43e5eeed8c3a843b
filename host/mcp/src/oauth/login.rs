//! `earshot mcp login NAME` (and a step-up during a session): discovery from the server's
//! challenge (RFC 9728, then RFC 8414 / OIDC, then the 2025-03-26 fallback), the client id (the
//! configured one, else a client ID metadata document, else a stored registration with the same
//! issuer, else dynamic registration), PKCE S256 with the `resource` parameter, the browser, the
//! loopback callback (or a pasted URL), the code exchange, then one atomic write of the record.
//! All of it through rmcp's `auth`; nothing is stored until the exchange succeeded.

use std::time::Duration;

use rmcp::transport::auth::{
    AuthorizationCallback, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
    CredentialStore, InMemoryCredentialStore,
};
use tokio::io::AsyncBufReadExt;

use super::super::connection::one_line;
use super::super::http::http_client;
use super::browser::Browser;
use super::callback::CallbackListener;
use super::session::{Challenge, definition_digest};
use super::settings::OAuthSettings;
use super::store::{Registration, TokenKey, TokenRecord, TokenStore, canonical_url};

/// The client name earshot registers under.
const CLIENT_NAME: &str = "earshot";

/// Everything one login needs.
pub struct LoginRequest<'a> {
    /// The server's name (for messages).
    pub server: &'a str,
    /// Its URL.
    pub url: &'a str,
    /// Headers the entry sends with every request (used for the probe).
    pub headers: &'a std::collections::BTreeMap<String, String>,
    /// Its `oauth` settings.
    pub settings: &'a OAuthSettings,
    /// Where the tokens go.
    pub store: &'a TokenStore,
    /// Under which key.
    pub key: &'a TokenKey,
    /// The challenge that asked for it, when known (else the server is probed for one).
    pub challenge: Option<Challenge>,
    /// How the URL is opened.
    pub browser: &'a Browser,
    /// How long to wait for the browser.
    pub timeout: Duration,
}

/// Why a login did not finish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoginError {
    /// Discovery, registration, the authorization URL or the exchange failed.
    #[error("{0}")]
    Failed(String),
    /// Nobody completed the login in the browser in time.
    #[error("no answer from the browser within {}; run the login again", crate::status::seconds(*.0))]
    TimedOut(Duration),
}

fn failed(what: &str) -> impl Fn(rmcp::transport::auth::AuthError) -> LoginError + '_ {
    move |error| LoginError::Failed(format!("{what}: {}", one_line(&error.to_string())))
}

/// Runs the login and stores its tokens. Returns the scopes granted.
///
/// # Errors
/// A [`LoginError`]; the stored record is untouched then.
pub async fn login(request: LoginRequest<'_>) -> Result<Vec<String>, LoginError> {
    crate::tls::install_crypto_provider();
    let previous = request
        .store
        .read_async(request.key)
        .await
        .map_err(LoginError::Failed)?;
    let challenge = match request.challenge.clone() {
        Some(challenge) => Some(challenge),
        None => probe(request.url, request.headers).await,
    };
    let mut manager = AuthorizationManager::new(request.url)
        .await
        .map_err(failed("the server's URL cannot be used"))?;
    let memory = InMemoryCredentialStore::new();
    manager.set_credential_store(memory.clone());
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_ref().map(|c| c.header.as_str()))
        .await
        .map_err(failed("could not discover how to authorize"))?;
    if challenge.is_none() && !resolution.source.is_discovered() {
        return Err(LoginError::Failed(format!(
            "{} answered without asking for authorization and publishes no OAuth metadata: it needs no login",
            request.url
        )));
    }
    let metadata = resolution.metadata;
    check_endpoints(&metadata)?;
    manager.set_metadata(metadata.clone());
    let issuer = metadata.issuer.clone();
    let scopes = scopes_to_ask(&request, previous.as_ref(), challenge.as_ref());

    // A registration is reused only on the redirect URI it was registered with: its port again.
    let stored_registration = previous
        .as_ref()
        .and_then(|record| record.registration.clone())
        .filter(|registration| registration.issuer == issuer);
    let port = request.settings.callback_port.or_else(|| {
        stored_registration
            .as_ref()
            .and_then(|registration| url::Url::parse(&registration.redirect_uri).ok())
            .and_then(|url| url.port())
    });
    let listener = match CallbackListener::bind(port.unwrap_or(0)).await {
        Ok(listener) => listener,
        // The registration's port is taken now: a new port (and a new registration).
        Err(_) if request.settings.callback_port.is_none() => CallbackListener::bind(0)
            .await
            .map_err(LoginError::Failed)?,
        Err(error) => return Err(LoginError::Failed(error)),
    };
    let redirect_uri = listener.redirect_uri();
    let stored_registration =
        stored_registration.filter(|registration| registration.redirect_uri == redirect_uri);
    let mut authorization = AuthorizationRequest::new(redirect_uri.clone())
        .with_client_name(CLIENT_NAME)
        .with_scopes(scopes.clone());
    let supports_metadata_documents = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let mut registration = None;
    let mut client_secret = None;
    if let Some(client_id) = &request.settings.client_id {
        authorization = authorization.with_preregistered_client(client_id.clone());
        if let Some(secret) = &request.settings.client_secret {
            authorization = authorization.with_client_secret(secret.clone());
            client_secret = Some(secret.clone());
        }
    } else if let (Some(document), true) = (
        &request.settings.client_metadata_url,
        supports_metadata_documents,
    ) {
        authorization = authorization.with_client_metadata_url(document.clone());
    } else {
        let chosen = match stored_registration {
            Some(stored) => stored,
            None => {
                let selected = if scopes.is_empty() {
                    manager.select_scopes(None, &[])
                } else {
                    scopes.clone()
                };
                let refs: Vec<&str> = selected.iter().map(String::as_str).collect();
                let config = manager
                    .register_client(CLIENT_NAME, &redirect_uri, &refs)
                    .await
                    .map_err(failed(
                        "the authorization server refused to register earshot",
                    ))?;
                Registration {
                    issuer: issuer.clone(),
                    client_id: config.client_id,
                    client_secret: config.client_secret,
                    redirect_uri: redirect_uri.clone(),
                }
            }
        };
        authorization = authorization.with_preregistered_client(chosen.client_id.clone());
        if let Some(secret) = &chosen.client_secret {
            authorization = authorization.with_client_secret(secret.clone());
            client_secret = Some(secret.clone());
        }
        registration = Some(chosen);
    }
    let session = AuthorizationSession::new(manager, authorization)
        .await
        .map_err(|(_, error)| failed("could not start the authorization")(error))?;
    let auth_url = session.get_authorization_url().to_string();
    check_endpoint("authorization URL", &auth_url)?;
    let state = url::Url::parse(&auth_url)
        .ok()
        .and_then(|parsed| {
            parsed
                .query_pairs()
                .find(|(name, _)| name == "state")
                .map(|(_, value)| value.into_owned())
        })
        .ok_or_else(|| LoginError::Failed("the authorization URL has no state".into()))?;
    request.browser.open(request.server, &auth_url);
    let callback_url = tokio::time::timeout(request.timeout, async {
        let from_listener = listener.wait(&state);
        if request.browser.reads_paste() {
            tokio::select! {
                url = from_listener => url,
                url = pasted_url(&state) => url,
            }
        } else {
            from_listener.await
        }
    })
    .await
    .map_err(|_| LoginError::TimedOut(request.timeout))?;
    if let Some(refusal) = refusal_in(&callback_url) {
        return Err(LoginError::Failed(format!(
            "the authorization server refused the login: {refusal}"
        )));
    }
    let callback = AuthorizationCallback::from_redirect_url(&callback_url)
        .map_err(failed("the redirect cannot be read"))?;
    session
        .handle_callback_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await
        .map_err(failed("the authorization server did not issue a token"))?;
    let credentials = memory
        .load()
        .await
        .ok()
        .flatten()
        .ok_or_else(|| LoginError::Failed("no token was stored by the exchange".into()))?;
    let granted = credentials.granted_scopes.clone();
    let record = TokenRecord {
        key: request.key.clone(),
        credentials: Some(credentials),
        client_secret,
        redirect_uri,
        resource: canonical_url(request.url),
        metadata: Some(metadata),
        registration: registration.or_else(|| previous.and_then(|record| record.registration)),
        definition_digest: definition_digest(request.url, request.settings),
        wanted_scopes: Vec::new(),
    };
    // Under the lock: a refresh in another process never writes its record over this one.
    request
        .store
        .locked(request.key, move |store, _| store.write(&record))
        .await
        .map_err(LoginError::Failed)?;
    Ok(granted)
}

/// The scopes to ask for: the configured ones; for a step-up (or a login after a call was
/// refused for lack of scopes), what was granted plus what the server asked for; else none, and
/// rmcp selects (challenge, resource metadata, authorization server).
fn scopes_to_ask(
    request: &LoginRequest<'_>,
    previous: Option<&TokenRecord>,
    challenge: Option<&Challenge>,
) -> Vec<String> {
    let mut scopes: Vec<String> = request.settings.scopes.clone();
    let asked: Vec<String> = match challenge.filter(|c| c.insufficient_scope) {
        Some(challenge) => challenge
            .scope
            .iter()
            .flat_map(|s| s.split_whitespace().map(str::to_string))
            .collect(),
        None => previous
            .map(|record| record.wanted_scopes.clone())
            .unwrap_or_default(),
    };
    if asked.is_empty() {
        return scopes;
    }
    let granted = previous
        .and_then(|record| record.credentials.as_ref())
        .map(|credentials| credentials.granted_scopes.clone())
        .unwrap_or_default();
    for scope in granted.into_iter().chain(asked) {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    scopes
}

/// Every endpoint the metadata names must be https, or http on a loopback address, with no
/// user name or password in it: the authorization URL is handed to a program on this machine
/// (`file:`, `smb:` or a custom scheme from a hostile server would open something else), and the
/// token and registration endpoints receive the code and the client secret.
fn check_endpoints(
    metadata: &rmcp::transport::auth::AuthorizationMetadata,
) -> Result<(), LoginError> {
    check_endpoint("authorization endpoint", &metadata.authorization_endpoint)?;
    check_endpoint("token endpoint", &metadata.token_endpoint)?;
    if let Some(registration) = &metadata.registration_endpoint {
        check_endpoint("registration endpoint", registration)?;
    }
    Ok(())
}

fn check_endpoint(what: &str, text: &str) -> Result<(), LoginError> {
    let shown = crate::shown_name(text);
    let refused = |why: &str| {
        Err(LoginError::Failed(format!(
            "the server's {what} \"{shown}\" {why}; earshot does not use it"
        )))
    };
    let Ok(url) = url::Url::parse(text) else {
        return refused("is not a URL");
    };
    if !url.username().is_empty() || url.password().is_some() {
        return refused("carries a user name or password");
    }
    let loopback = match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(address)) => address.is_loopback(),
        Some(url::Host::Ipv6(address)) => address.is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        "http" => refused("is plain http to another machine"),
        _ => refused("is not an https URL"),
    }
}

/// The authorization server's `error` (and its description) in the redirect, made safe to show.
fn refusal_in(callback_url: &str) -> Option<String> {
    let url = url::Url::parse(callback_url).ok()?;
    let value = |key: &str| {
        url.query_pairs()
            .find(|(name, _)| name == key)
            .map(|(_, value)| crate::shown_name(&value))
    };
    let error = value("error")?;
    Some(match value("error_description") {
        Some(description) => format!("{error} ({description})"),
        None => error,
    })
}

/// A URL the user pasted on stdin that carries `state` (other lines are ignored).
async fn pasted_url(state: &str) -> String {
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    loop {
        match lines.next_line().await {
            Ok(Some(line)) => {
                let line = line.trim();
                let carries_state = url::Url::parse(line).is_ok_and(|parsed| {
                    parsed
                        .query_pairs()
                        .any(|(name, value)| name == "state" && value == state)
                });
                if carries_state {
                    return line.to_string();
                }
                if !line.is_empty() {
                    eprintln!(
                        "that is not the address of this login (it must carry its state); paste the whole address the browser was sent to"
                    );
                }
            }
            // No more input: only the listener can finish the login.
            _ => std::future::pending::<()>().await,
        }
    }
}

/// The server's challenge to an unauthenticated `initialize`, if it answers with one.
async fn probe(
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Option<Challenge> {
    let mut post = http_client()
        .ok()?
        .post(url)
        .timeout(Duration::from_secs(30))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    for (name, value) in headers {
        post = post.header(name.as_str(), value.as_str());
    }
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION") }
        }
    });
    let response = post.body(body.to_string()).send().await.ok()?;
    if response.status() != 401 && response.status() != 403 {
        return None;
    }
    let header = response
        .headers()
        .get("www-authenticate")?
        .to_str()
        .ok()?
        .to_string();
    Some(Challenge::parse(&header, url))
}
