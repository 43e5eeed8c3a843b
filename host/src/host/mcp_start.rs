//! Which MCP servers a session starts: every configured one (a session a model works in), or
//! only those one call needs (a call by name starts the named tool's server, or none at all).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::mcp::{LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL, TOOL_SEARCH_NAME, read_servers};
use crate::names::MODEL_NAME_LIMIT;
use crate::settings::Settings;

/// Which configured MCP servers a [`HostBuilder`](super::HostBuilder) starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpStart {
    /// Every configured server (the default): what a model is shown needs them all.
    #[default]
    All,
    /// Only the servers named here (none when empty); the others are neither started nor
    /// reported. `tool_search` then counts only these servers' tools, so a session that shows
    /// tools to a model should start them all.
    Only(BTreeSet<String>),
}

impl McpStart {
    /// No server at all.
    pub fn none() -> McpStart {
        McpStart::Only(BTreeSet::new())
    }

    /// Only the server `name`.
    pub fn server(name: impl Into<String>) -> McpStart {
        McpStart::Only(BTreeSet::from([name.into()]))
    }

    /// Whether the server `name` is started.
    pub fn includes(&self, name: &str) -> bool {
        match self {
            McpStart::All => true,
            McpStart::Only(names) => names.contains(name),
        }
    }

    /// What a call of the tool `name` with `input` needs: `tool_search` and
    /// `list_mcp_resources` every server, `read_mcp_resource` the server its input names, an
    /// MCP tool (`server__tool`, or its model-facing alias) its own server, and anything else
    /// (an extension's, a component's, the `skill` tool, an unknown name) none. A server is
    /// named only when `settings` configure it (`${VAR}` looked up with `env`).
    pub fn for_call(
        settings: &Settings,
        env: &dyn Fn(&str) -> Option<String>,
        name: &str,
        input: &Value,
    ) -> McpStart {
        if name == TOOL_SEARCH_NAME || name == LIST_RESOURCES_TOOL {
            return McpStart::All;
        }
        let configured = read_servers(settings, env);
        if name == READ_RESOURCE_TOOL {
            return match input.get("server").and_then(Value::as_str) {
                Some(server) if configured.iter().any(|entry| entry.name == server) => {
                    McpStart::server(server)
                }
                // Let the tool's own check say what is wrong.
                _ => McpStart::All,
            };
        }
        McpStart::Only(
            configured
                .into_iter()
                .map(|entry| entry.name)
                .filter(|server| names_server(name, server))
                .collect(),
        )
    }
}

/// Whether the tool name `name` can belong to `server`: `server__…`, or the model-facing alias
/// of such a name (its first 51 characters, `_`, and a hash), which may cut a long server name.
fn names_server(name: &str, server: &str) -> bool {
    let namespace = format!("{server}__");
    if name.starts_with(&namespace) {
        return true;
    }
    let kept = MODEL_NAME_LIMIT - 13;
    name.len() == MODEL_NAME_LIMIT
        && name.is_char_boundary(kept)
        && namespace.starts_with(&name[..kept])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_name_names_its_own_server_only() {
        assert!(names_server("everything__echo", "everything"));
        assert!(!names_server("everything__echo", "every"));
        assert!(!names_server("everything_echo", "everything"));
        assert!(!names_server("demo__greet", "everything"));
    }

    #[test]
    fn an_alias_that_cuts_a_long_server_name_still_names_it() {
        let server = "s".repeat(60);
        let full = format!("{server}__tool");
        let alias = crate::names::model_facing_name(&full);
        assert!(names_server(&alias, &server));
        assert!(!names_server(&alias, "s"));
    }

    #[test]
    fn what_is_started_is_what_was_named() {
        let only = McpStart::server("memory");
        assert!(only.includes("memory") && !only.includes("everything"));
        assert!(!McpStart::none().includes("memory"));
        assert!(McpStart::All.includes("anything"));
    }
}
