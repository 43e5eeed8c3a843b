//! The `oauth` block of an HTTP server entry: `{ clientId?, clientSecret? ("${VAR}" only in a
//! checked-in file), scopes?, callbackPort?, clientMetadataUrl? }`, or `false` to turn OAuth off.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::settings::Layer;

use super::super::config::Transport;
use super::super::expand::expand;

/// An entry's `oauth` value as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OAuthBlock {
    /// `"oauth": false`: the server is never authorized by earshot.
    Off,
    /// The settings given.
    Settings(OAuthSettings),
}

impl Serialize for OAuthBlock {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            OAuthBlock::Off => serializer.serialize_bool(false),
            OAuthBlock::Settings(settings) => settings.serialize(serializer),
        }
    }
}

/// How earshot authorizes with one server. Serialised (for `mcp get` and the trust digest) with
/// the client secret as written (`${VAR}`), never its value; its `Debug` shows neither.
#[derive(Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthSettings {
    /// A client id registered with the authorization server beforehand.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The client secret as written: a reference (`${VAR}`) is shown and hashed as it is, a
    /// literal one (allowed in your own files) only as `****`.
    #[serde(
        rename = "clientSecret",
        skip_serializing_if = "Option::is_none",
        serialize_with = "reference_or_mask"
    )]
    pub client_secret_written: Option<String>,
    /// The client secret, expanded. Never serialised.
    #[serde(skip)]
    pub client_secret: Option<String>,
    /// Scopes to ask for instead of the ones the server advertises.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The loopback port of the callback listener (random when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback_port: Option<u16>,
    /// An https URL of a client ID metadata document, used as the client id where the
    /// authorization server supports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
}

impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[REDACTED]"),
            )
            .field("scopes", &self.scopes)
            .field("callback_port", &self.callback_port)
            .field("client_metadata_url", &self.client_metadata_url)
            .finish()
    }
}

fn reference_or_mask<S: serde::Serializer>(
    written: &Option<String>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match written {
        Some(text) if is_reference(text) => serializer.serialize_str(text),
        Some(_) => serializer.serialize_str("****"),
        None => serializer.serialize_none(),
    }
}

/// Exactly `${NAME}` (no default, nothing around it): the secret lives in the environment, not
/// in the file.
fn is_reference(text: &str) -> bool {
    text.strip_prefix("${")
        .and_then(|rest| rest.strip_suffix('}'))
        .is_some_and(|name| {
            name.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// Reads `raw` (the entry's `oauth` value). A literal `clientSecret` in the project's checked-in
/// file is refused: a secret there would be in every clone.
///
/// # Errors
/// One line naming the key that is wrong.
pub fn parse_oauth_block(
    raw: Option<&Value>,
    layer: Layer,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<OAuthBlock>, String> {
    let object = match raw {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Bool(false)) => return Ok(Some(OAuthBlock::Off)),
        Some(Value::Bool(true)) => return Ok(Some(OAuthBlock::Settings(OAuthSettings::default()))),
        Some(Value::Object(object)) => object,
        Some(_) => return Err("oauth must be an object (or false)".into()),
    };
    let text = |key: &str| -> Result<Option<String>, String> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => expand(text, env)
                .map(Some)
                .map_err(|error| format!("oauth.{key}: {error}")),
            Some(_) => Err(format!("oauth.{key} must be a string")),
        }
    };
    for key in object.keys() {
        if ![
            "clientId",
            "clientSecret",
            "scopes",
            "callbackPort",
            "clientMetadataUrl",
        ]
        .contains(&key.as_str())
        {
            let shown: String = key.chars().take(40).collect();
            return Err(format!(
                "oauth.{shown} is not a known key (clientId, clientSecret, scopes, callbackPort, clientMetadataUrl)"
            ));
        }
    }
    let client_secret_written = match object.get("clientSecret") {
        None | Some(Value::Null) => None,
        Some(Value::String(written)) => {
            if layer == Layer::Project && !is_reference(written) {
                return Err("oauth.clientSecret in the project's checked-in settings must be exactly a reference such as \"${LINEAR_CLIENT_SECRET}\", never the secret itself".into());
            }
            Some(written.clone())
        }
        Some(_) => return Err("oauth.clientSecret must be a string".into()),
    };
    let scopes = match object.get("scopes") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(scopes)) => scopes.split_whitespace().map(str::to_string).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(str::to_string)
                    .ok_or("oauth.scopes must be strings".to_string())
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("oauth.scopes must be a list of strings".into()),
    };
    let callback_port = match object.get("callbackPort") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_u64()
                .and_then(|port| u16::try_from(port).ok())
                .filter(|port| *port > 0)
                .ok_or("oauth.callbackPort must be a port number (1-65535)")?,
        ),
    };
    let client_metadata_url = text("clientMetadataUrl")?;
    if let Some(url) = &client_metadata_url
        && !url.starts_with("https://")
    {
        return Err("oauth.clientMetadataUrl must be an https URL".into());
    }
    Ok(Some(OAuthBlock::Settings(OAuthSettings {
        client_id: text("clientId")?,
        client_secret: text("clientSecret")?,
        client_secret_written,
        scopes,
        callback_port,
        client_metadata_url,
    })))
}

/// The OAuth settings that apply to `transport`: none for stdio, for `"oauth": false`, or when
/// the entry sends its own `Authorization` header (a static token turns OAuth off).
pub fn oauth_settings_of(transport: &Transport) -> Option<OAuthSettings> {
    let Transport::Http { headers, oauth, .. } = transport else {
        return None;
    };
    if has_authorization(headers) {
        return None;
    }
    match oauth {
        Some(OAuthBlock::Off) => None,
        Some(OAuthBlock::Settings(settings)) => Some(settings.clone()),
        None => Some(OAuthSettings::default()),
    }
}

fn has_authorization(headers: &BTreeMap<String, String>) -> bool {
    headers
        .keys()
        .any(|name| name.eq_ignore_ascii_case("authorization"))
}
