//! The authorized HTTP client a session connects with: rmcp's `AuthClient` over the session's
//! reqwest client, reading its token from the store on every request (so a login in another
//! process takes effect without a restart), refreshing before expiry under the store's
//! cross-process lock, and sending no token at all when none was issued for exactly this
//! definition.

use rmcp::transport::auth::{
    AuthClient, AuthorizationManager, OAuthClientConfig, WWWAuthenticateParams,
};
use sha2::{Digest, Sha256};

use super::settings::OAuthSettings;
use super::store::{TokenKey, TokenRecord, TokenStore, canonical_url};

/// A server's answer that it needs (more) authorization: its `WWW-Authenticate` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// The header as sent.
    pub header: String,
    /// A 403 `insufficient_scope`: the token is valid but lacks `scope`.
    pub insufficient_scope: bool,
    /// The scopes the server asks for, when it says.
    pub scope: Option<String>,
}

impl Challenge {
    /// Reads `header`, a challenge from the server at `url`.
    pub fn parse(header: &str, url: &str) -> Challenge {
        let base = url::Url::parse(url)
            .unwrap_or_else(|_| url::Url::parse("http://invalid/").expect("a URL"));
        let params = WWWAuthenticateParams::parse(header, &base);
        Challenge {
            header: header.to_string(),
            insufficient_scope: params.is_insufficient_scope(),
            scope: params.scope.clone(),
        }
    }
}

/// What the tokens of a definition are bound to: its canonical URL and its `oauth` block.
pub fn definition_digest(url: &str, settings: &OAuthSettings) -> String {
    let material = serde_json::json!({ "url": canonical_url(url), "oauth": settings });
    hex::encode(Sha256::digest(material.to_string().as_bytes()))
}

/// The client a session sends its requests through to `url`: with `target`'s stored token when
/// one was issued for this very definition, else unauthenticated (a 401 then makes the server
/// `needs login`).
///
/// # Errors
/// One line: the URL is unusable, or the store cannot be read.
pub async fn authorized_client(
    url: &str,
    target: &OAuthTarget,
    http: reqwest::Client,
) -> Result<AuthClient<reqwest::Client>, String> {
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|error| format!("cannot authorize at {url}: {error}"))?;
    if let Some(record) = target.record_for_this_definition().await? {
        manager.set_credential_store(target.store.credentials_for(&target.key));
        if let (Some(metadata), Some(credentials)) = (record.metadata.clone(), &record.credentials)
        {
            manager.set_metadata(metadata);
            let initialized = manager.initialize_from_store().await.unwrap_or(false);
            if initialized {
                // rmcp configures the stored client without its secret (rust-sdk#784).
                let mut config = OAuthClientConfig::new(
                    credentials.client_id.clone(),
                    record.redirect_uri.clone(),
                );
                if let Some(secret) = &record.client_secret {
                    config = config.with_client_secret(secret.clone());
                }
                manager
                    .configure_client(config)
                    .map_err(|error| format!("cannot use the stored login: {error}"))?;
            }
        }
    }
    Ok(AuthClient::new(http, manager))
}

/// What a session needs to authorize with one server: where its tokens are, under which key,
/// and its `oauth` settings.
#[derive(Debug, Clone)]
pub struct OAuthTarget {
    /// The token store.
    pub store: TokenStore,
    /// The server's key in it.
    pub key: TokenKey,
    /// The entry's `oauth` settings.
    pub settings: OAuthSettings,
}

impl OAuthTarget {
    /// Notes `scopes` (from a 403 `insufficient_scope` no step-up answered) in the record, so
    /// that the next `earshot mcp login` asks for them with the ones granted.
    pub async fn want_scopes(&self, scopes: Vec<String>) {
        let noted = self
            .store
            .locked(&self.key, move |store, key| match store.read(key)? {
                Some(mut record) => {
                    for scope in scopes {
                        if !record.wanted_scopes.contains(&scope) {
                            record.wanted_scopes.push(scope);
                        }
                    }
                    store.write(&record)
                }
                None => Ok(()),
            })
            .await;
        if let Err(error) = noted {
            tracing::warn!("could not note the scopes a server asked for: {error}");
        }
    }

    /// The stored record, if its tokens were issued for this very definition (URL and `oauth`
    /// block): a record of an edited definition is never used.
    ///
    /// # Errors
    /// The store cannot be read.
    pub async fn record_for_this_definition(&self) -> Result<Option<TokenRecord>, String> {
        let digest = definition_digest(&self.key.url, &self.settings);
        Ok(self
            .store
            .read_async(&self.key)
            .await?
            .filter(|record| record.definition_digest == digest))
    }

    /// A short fingerprint of the access token stored for this definition, if any: tells a
    /// token from another login apart without keeping the token.
    pub async fn stored_token_fingerprint(&self) -> Option<String> {
        use oauth2::TokenResponse;
        let record = self.record_for_this_definition().await.ok()??;
        let token = record.credentials?.token_response?;
        Some(hex::encode(
            &Sha256::digest(token.access_token().secret().as_bytes())[..8],
        ))
    }

    /// The target of an HTTP server `name` at `url` defined in `layer`, when OAuth applies to it
    /// (see [`oauth_settings_of`](super::oauth_settings_of)) and there is a config dir for its
    /// tokens.
    pub fn of(
        settings: &crate::settings::Settings,
        name: &str,
        layer: crate::settings::Layer,
        transport: &super::super::config::Transport,
    ) -> Option<OAuthTarget> {
        let super::super::config::Transport::Http { url, .. } = transport else {
            return None;
        };
        let oauth = super::oauth_settings_of(transport)?;
        let config_dir = settings.user_config_dir.as_deref()?;
        let project_root = settings
            .project
            .as_ref()
            .map(|project| project.root.as_path());
        Some(OAuthTarget {
            store: TokenStore::in_config_dir(config_dir),
            key: TokenKey::new(layer, project_root, name, url),
            settings: oauth,
        })
    }
}
