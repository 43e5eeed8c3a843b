//! `mcpServers` entries from every settings layer: stdio (`command`, `args`, `env`, `cwd`) and
//! streamable HTTP (`type: "http"`, `url`, `headers`). `sse` and unknown types are reported.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::names::{NameError, check_source_name};
use crate::settings::{Layer, Settings};

use super::expand::{ExpandError, expand};
use super::oauth::{OAuthBlock, parse_oauth_block};

/// How earshot talks to a server.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Transport {
    /// A child process speaking MCP on stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its minimal environment.
        env: BTreeMap<String, String>,
        /// Its working directory, when set.
        #[serde(skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
        /// The `oauth` block as written (`false` turns OAuth off); absent, OAuth still applies
        /// with discovered settings unless an `Authorization` header is given.
        #[serde(skip_serializing_if = "Option::is_none")]
        oauth: Option<OAuthBlock>,
    },
}

/// A server definition after `${VAR}` expansion.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ServerDefinition {
    /// The transport and its settings.
    #[serde(flatten)]
    pub transport: Transport,
    /// Start-up timeout in milliseconds, when the entry sets one (`timeout`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Per-call timeout in milliseconds, when the entry sets one (`callTimeout`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_timeout_ms: Option<u64>,
}

impl ServerDefinition {
    /// The definition as canonical JSON (sorted keys), the input to its trust digest.
    pub fn canonical_json(&self) -> String {
        fn sort(value: Value) -> Value {
            match value {
                Value::Object(map) => {
                    let mut entries: Vec<(String, Value)> =
                        map.into_iter().map(|(k, v)| (k, sort(v))).collect();
                    entries.sort_by(|a, b| a.0.cmp(&b.0));
                    Value::Object(entries.into_iter().collect())
                }
                Value::Array(items) => Value::Array(items.into_iter().map(sort).collect()),
                other => other,
            }
        }
        sort(serde_json::to_value(self).expect("definitions serialise")).to_string()
    }
}

/// One `mcpServers` entry, from the narrowest layer that defines the name.
#[derive(Debug, Clone)]
pub struct ServerEntry {
    /// The server's name.
    pub name: String,
    /// The layer whose definition is used.
    pub layer: Layer,
    /// Wider layers that also define this name (shadowed by `layer`).
    pub shadows: Vec<Layer>,
    /// The definition, or why this entry cannot be used.
    pub definition: Result<ServerDefinition, String>,
    /// Definitions of the same name that were refused, each with why (a project server may not
    /// take the name of the user's own server: trusted, it would inherit the user's allow rules).
    pub refused: Vec<String>,
    /// The user's own entry this one (from the local file) replaces: used instead while the
    /// local one is not trusted, so a shipped local file cannot take over the user's server.
    pub replaces_user_entry: Option<Box<ServerEntry>>,
    /// Given by this session's client (an editor over ACP) for this session only, not read from
    /// any settings file: streamable HTTP, started without a trust record (it runs no process
    /// here), gated like every server.
    pub session_only: bool,
}

/// A streamable HTTP server a session's client (an editor over ACP) adds for that session
/// only. Its URL and headers are used as given: `${VAR}` is not expanded (the client's text must
/// not be able to read earshot's environment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionServer {
    /// The name its tools are namespaced under.
    pub name: String,
    /// The endpoint.
    pub url: String,
    /// Headers sent with every request.
    pub headers: BTreeMap<String, String>,
}

impl SessionServer {
    /// The entry it starts as: the user's scope (no trust record), marked session-only.
    pub fn entry(&self) -> ServerEntry {
        ServerEntry {
            name: self.name.clone(),
            layer: Layer::User,
            shadows: Vec::new(),
            definition: Ok(ServerDefinition {
                transport: Transport::Http {
                    url: self.url.clone(),
                    headers: self.headers.clone(),
                    // A client's session server brings its own headers; earshot keeps no
                    // tokens for it.
                    oauth: Some(OAuthBlock::Off),
                },
                timeout_ms: None,
                call_timeout_ms: None,
            }),
            refused: Vec::new(),
            replaces_user_entry: None,
            session_only: true,
        }
    }
}

/// The variable `${EARSHOT_PROJECT_DIR}` expands to in a server's definition: the project root, for
/// servers of the user's own that need it (they start outside the project).
pub const PROJECT_DIR_VARIABLE: &str = "EARSHOT_PROJECT_DIR";

/// Reads `mcpServers` from every layer. The same name in two layers: the narrower layer wins
/// (local > project > user), and the entry records which layers it shadows; except that a project
/// server never replaces the user's own server of that name (it is refused and recorded in
/// [`ServerEntry::refused`]). `${EARSHOT_PROJECT_DIR}` expands to the project root.
pub fn read_servers(settings: &Settings, env: &dyn Fn(&str) -> Option<String>) -> Vec<ServerEntry> {
    let project_dir = settings
        .project
        .as_ref()
        .map(|project| project.root.to_string_lossy().into_owned());
    let env = |name: &str| {
        if name == PROJECT_DIR_VARIABLE {
            project_dir.clone()
        } else {
            env(name)
        }
    };
    let env: &dyn Fn(&str) -> Option<String> = &env;
    let mut entries: Vec<ServerEntry> = Vec::new();
    for file in &settings.files {
        let Some(servers) = file.get("mcpServers") else {
            continue;
        };
        let Some(servers) = servers.as_object() else {
            entries.push(ServerEntry {
                name: "mcpServers".into(),
                layer: file.layer,
                shadows: Vec::new(),
                definition: Err(format!(
                    "{}: mcpServers must be an object",
                    file.path.display()
                )),
                refused: Vec::new(),
                replaces_user_entry: None,
                session_only: false,
            });
            continue;
        };
        for (name, raw) in servers {
            let definition = parse_entry(name, raw, file.layer, env);
            if let Some(existing) = entries.iter_mut().find(|entry| entry.name == *name) {
                if file.layer == Layer::Project && existing.layer.owned_by_user() {
                    existing.refused.push(format!(
                        "{} also defines a server \"{name}\"; a project server may not take the name of your own (once trusted it would inherit your allow rules), so yours is used and the project's is ignored",
                        file.path.display()
                    ));
                    continue;
                }
                if file.layer == Layer::Local && existing.layer == Layer::User {
                    existing.replaces_user_entry = Some(Box::new(existing.clone()));
                }
                existing.shadows.push(existing.layer);
                existing.layer = file.layer;
                existing.definition = definition;
            } else {
                entries.push(ServerEntry {
                    name: name.clone(),
                    layer: file.layer,
                    shadows: Vec::new(),
                    definition,
                    refused: Vec::new(),
                    replaces_user_entry: None,
                    session_only: false,
                });
            }
        }
    }
    entries
}

/// One `mcpServers` entry as every command reads it: the name checked, then the definition
/// parsed and `${VAR}` expanded through `env` (`mcp add` checks an entry this way before it
/// writes it, so it never writes one the loader would refuse).
///
/// # Errors
/// One line saying why the entry cannot be used.
pub fn parse_entry(
    name: &str,
    raw: &Value,
    layer: Layer,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ServerDefinition, String> {
    check_source_name(name)
        .map_err(|error: NameError| format!("invalid server name: {error}"))
        .and_then(|()| parse_definition(raw, layer, env))
}

fn parse_definition(
    raw: &Value,
    layer: Layer,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ServerDefinition, String> {
    let Some(object) = raw.as_object() else {
        return Err("a server definition must be an object".into());
    };
    // Nothing hidden in what is reviewed: `mcp get` would show a different server than runs.
    crate::hooks::definition_text::refuse_hidden(raw, &[])?;
    let expanded = |text: &str| expand(text, env).map_err(|error: ExpandError| error.to_string());
    let string_map = |key: &str| -> Result<BTreeMap<String, String>, String> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(name, value)| match value.as_str() {
                    Some(text) => Ok((name.clone(), expanded(text)?)),
                    None => Err(format!("{key}.{name} must be a string")),
                })
                .collect(),
            Some(_) => Err(format!("{key} must be an object of strings")),
        }
    };
    let milliseconds = |key: &str| -> Result<Option<u64>, String> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            // At most a day: a cloned repository's settings must not be able to overflow a clock.
            Some(value) => value
                .as_u64()
                .filter(|ms| *ms > 0)
                .map(|ms| Some(ms.min(86_400_000)))
                .ok_or_else(|| format!("{key} must be a positive whole number of milliseconds")),
        }
    };
    let timeout_ms = milliseconds("timeout")?;
    let call_timeout_ms = milliseconds("callTimeout")?;
    let kind = object.get("type").and_then(Value::as_str);
    let transport = match kind {
        Some("http") | Some("streamable-http") => {
            let url = object
                .get("url")
                .and_then(Value::as_str)
                .ok_or("an http server needs a \"url\" string")?;
            let written = url;
            let url = expanded(url)?;
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                // What was written, never the expansion: a variable may hold a secret.
                let shown: String = written.chars().take(60).collect();
                return Err(format!(
                    "url \"{shown}\" must start with http:// or https://"
                ));
            }
            Transport::Http {
                url,
                headers: string_map("headers")?,
                oauth: parse_oauth_block(object.get("oauth"), layer, env)?,
            }
        }
        Some("sse") => {
            return Err("the sse transport is not supported (it was replaced by streamable HTTP in 2025); use \"type\": \"http\" if the server offers it".into());
        }
        None | Some("stdio") => {
            let command = object
                .get("command")
                .and_then(Value::as_str)
                .ok_or("a stdio server needs a \"command\" string")?;
            let args = match object.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| {
                        item.as_str()
                            .ok_or("args must be strings".to_string())
                            .and_then(expanded)
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("args must be a list of strings".into()),
            };
            let cwd = match object.get("cwd") {
                None | Some(Value::Null) => None,
                Some(Value::String(cwd)) => Some(expanded(cwd)?),
                Some(_) => return Err("cwd must be a string".into()),
            };
            Transport::Stdio {
                command: expanded(command)?,
                args,
                env: string_map("env")?,
                cwd,
            }
        }
        Some(other) => {
            let shown: String = other.chars().take(40).collect();
            return Err(format!(
                "the transport type \"{shown}\" is not supported (use stdio or \"http\")"
            ));
        }
    };
    Ok(ServerDefinition {
        transport,
        timeout_ms,
        call_timeout_ms,
    })
}
