//! The MCP servers an editor sends with `session/new`: which may join the session, and why the
//! others may not. A pure function, so every rule is tested without a connection.
//!
//! * stdio (with or without `"type": "stdio"`, and anything else that decodes as stdio) is
//!   rejected and never spawned: a command from the editor would run outside earshot's trust
//!   records, and Zed sends its own stdio servers with every session.
//! * SSE is reported as unsupported (deprecated by MCP; earshot speaks streamable HTTP).
//! * HTTP joins this session only, unless its name is a configured server's (no shadowing), or
//!   its name or URL is unusable. `${VAR}` is not expanded in its URL or headers.

use std::collections::{BTreeMap, BTreeSet};

use agent_client_protocol::v1::schema::{HttpHeader, McpServer};

use crate::mcp::SessionServer;
use crate::names::check_source_name;

/// Why one client-provided server does not join the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum RejectionKind {
    /// A process definition: never spawned.
    Stdio,
    /// SSE, which earshot does not speak.
    Sse,
    /// A transport this version of ACP added after earshot was built.
    Unknown,
    /// The name of a server the user or project configured.
    NameCollision,
    /// The same name twice in one `session/new`.
    Duplicate,
    /// Not a usable source name (it would not namespace cleanly).
    InvalidName,
    /// Not an `http://` or `https://` URL.
    InvalidUrl,
}

/// One client-provided server that was turned away, with the line the editor is shown.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rejection {
    /// The name the editor gave it.
    pub name: String,
    /// Why, typed.
    pub kind: RejectionKind,
    /// Why, in one line.
    pub reason: String,
}

/// What becomes of the editor's `mcpServers`: those that join the session, and the rest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionMcpPlan {
    /// HTTP servers that join this session only (gated like any server).
    pub accepted: Vec<SessionServer>,
    /// Every other entry, one report each.
    pub rejected: Vec<Rejection>,
}

/// Screens the `mcpServers` of `session/new` against the names of the servers the settings
/// configure. Never fails: a bad entry is one rejection, and the session still starts.
pub fn screen_session_mcp(servers: &[McpServer], configured: &[String]) -> SessionMcpPlan {
    let mut plan = SessionMcpPlan::default();
    let mut seen = BTreeSet::new();
    for server in servers {
        let (name, verdict) = match server {
            McpServer::Stdio(stdio) => (
                stdio.name.clone(),
                Err((
                    RejectionKind::Stdio,
                    format!(
                        "a process definition ({}) from the editor is never started: earshot starts only servers in your settings, under their trust rules; add it with `earshot mcp add` to use it",
                        stdio.command.display()
                    ),
                )),
            ),
            McpServer::Sse(sse) => (
                sse.name.clone(),
                Err((
                    RejectionKind::Sse,
                    "SSE is not supported (MCP deprecated it); give earshot the server's streamable HTTP endpoint".to_string(),
                )),
            ),
            McpServer::Http(http) => (
                http.name.clone(),
                http_server(&http.name, &http.url, &http.headers, configured),
            ),
            _ => (
                String::new(),
                Err((
                    RejectionKind::Unknown,
                    "a transport earshot does not know".to_string(),
                )),
            ),
        };
        let verdict = verdict.and_then(|server| {
            if seen.insert(server.name.clone()) {
                Ok(server)
            } else {
                Err((
                    RejectionKind::Duplicate,
                    "the editor sent this name twice; the first is used".to_string(),
                ))
            }
        });
        match verdict {
            Ok(server) => plan.accepted.push(server),
            Err((kind, reason)) => plan.rejected.push(Rejection { name, kind, reason }),
        }
    }
    plan
}

fn http_server(
    name: &str,
    url: &str,
    headers: &[HttpHeader],
    configured: &[String],
) -> Result<SessionServer, (RejectionKind, String)> {
    if let Err(error) = check_source_name(name) {
        return Err((
            RejectionKind::InvalidName,
            format!("not a usable server name: {error}"),
        ));
    }
    if configured.iter().any(|configured| configured == name) {
        return Err((
            RejectionKind::NameCollision,
            format!(
                "your settings already define a server \"{name}\"; a server from the editor may not take its name (it would take over its allow rules)"
            ),
        ));
    }
    let parsed = reqwest::Url::parse(url).map_err(|error| {
        (
            RejectionKind::InvalidUrl,
            format!("its url is not a URL: {error}"),
        )
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err((
            RejectionKind::InvalidUrl,
            "its url must be http:// or https:// with a host".to_string(),
        ));
    }
    Ok(SessionServer {
        name: name.to_string(),
        url: url.to_string(),
        headers: headers
            .iter()
            .map(|header| (header.name.clone(), header.value.clone()))
            .collect::<BTreeMap<_, _>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn servers(value: serde_json::Value) -> Vec<McpServer> {
        serde_json::from_value(value).expect("decodes as ACP mcpServers")
    }

    #[test]
    fn every_stdio_form_is_rejected_one_report_each() {
        let plan = screen_session_mcp(
            &servers(json!([
                {"name": "plain", "command": "/bin/sh", "args": ["-c", "touch x"], "env": []},
                {"type": "stdio", "name": "typed", "command": "/bin/sh", "args": [], "env": []},
                {"type": "ws", "name": "odd", "command": "/bin/sh", "args": [], "env": []},
            ])),
            &[],
        );
        assert!(plan.accepted.is_empty());
        let kinds: Vec<_> = plan
            .rejected
            .iter()
            .map(|r| (r.name.as_str(), r.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("plain", RejectionKind::Stdio),
                ("typed", RejectionKind::Stdio),
                ("odd", RejectionKind::Stdio)
            ]
        );
    }

    #[test]
    fn http_joins_unless_it_shadows_a_configured_server_or_is_unusable() {
        let plan = screen_session_mcp(
            &servers(json!([
                {"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": [{"name": "X-Key", "value": "${SECRET}"}]},
                {"type": "http", "name": "github", "url": "https://example.invalid/mcp", "headers": []},
                {"type": "http", "name": "web", "url": "http://127.0.0.1:10/mcp", "headers": []},
                {"type": "http", "name": "files", "url": "file:///etc/passwd", "headers": []},
                {"type": "http", "name": "a__b", "url": "http://127.0.0.1:9/mcp", "headers": []},
                {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []},
            ])),
            &["github".to_string()],
        );
        assert_eq!(plan.accepted.len(), 1);
        assert_eq!(plan.accepted[0].name, "web");
        // Not expanded: the editor's text is sent as it is.
        assert_eq!(plan.accepted[0].headers["X-Key"], "${SECRET}");
        let kinds: Vec<_> = plan
            .rejected
            .iter()
            .map(|r| (r.name.as_str(), r.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("github", RejectionKind::NameCollision),
                ("web", RejectionKind::Duplicate),
                ("files", RejectionKind::InvalidUrl),
                ("a__b", RejectionKind::InvalidName),
                ("old", RejectionKind::Sse)
            ]
        );
    }
}
