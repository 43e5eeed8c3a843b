//! MCP servers' tools into the registry: each listed tool (raw JSON, so one malformed tool is
//! skipped and reported without hiding the others) becomes `server__tool`, with its input schema
//! checked in the validator sandbox. `readOnlyHint` is kept only for display: the gate never
//! believes it for an MCP tool.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use crate::mcp::McpRunner;
use crate::mcp::McpServers;
use crate::names::{SourceKind, ToolId};
use crate::registry::{RegisteredTool, ToolRegistry};
use crate::sandbox::{McpOutputParser, SchemaValidator};

/// Longest description kept from a server (the rest is cut).
const MAX_DESCRIPTION_CHARS: usize = 2_000;

/// Largest input or output schema accepted for one tool; a model is shown the input schema.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;

/// Registers the current tools of every connected server, and reports every server that is not
/// connected, so the session goes on with the tools it has.
pub fn load_mcp_tools(
    servers: &Arc<McpServers>,
    validator: &SchemaValidator,
    parser: &Arc<McpOutputParser>,
    registry: &mut ToolRegistry,
) {
    for status in servers.statuses() {
        use crate::mcp::ServerState;
        match &status.state {
            ServerState::Connected { .. } | ServerState::Unresponsive(_) => {
                register_server_tools(servers, &status.name, validator, parser, registry)
            }
            ServerState::AwaitingTrust(explanation) => {
                registry.report(SourceKind::Mcp, &status.name, explanation.clone())
            }
            ServerState::Failed(reason)
            | ServerState::Died(reason)
            | ServerState::NeedsLogin(reason) => {
                registry.report(SourceKind::Mcp, &status.name, reason.clone())
            }
            ServerState::Starting => {}
            // A state added to the core later registers nothing until this loader knows it.
            _ => {}
        }
        for warning in &status.warnings {
            registry.report(SourceKind::Mcp, &status.name, warning.clone());
        }
    }
}

/// Replaces `server`'s tools in the registry with what it lists now (after `list_changed`).
pub fn reload_server_tools(
    servers: &Arc<McpServers>,
    server: &str,
    validator: &SchemaValidator,
    parser: &Arc<McpOutputParser>,
    registry: &mut ToolRegistry,
) {
    registry.remove_source(SourceKind::Mcp, server);
    register_server_tools(servers, server, validator, parser, registry);
}

fn register_server_tools(
    servers: &Arc<McpServers>,
    server: &str,
    validator: &SchemaValidator,
    parser: &Arc<McpOutputParser>,
    registry: &mut ToolRegistry,
) {
    let mut seen = BTreeSet::new();
    for raw in servers.tools_of(server) {
        let tool = match read_tool(&raw) {
            Ok(tool) => tool,
            Err(problem) => {
                registry.report(SourceKind::Mcp, server, problem);
                continue;
            }
        };
        let id = match ToolId::mcp(server, &tool.name) {
            Ok(id) => id,
            Err(error) => {
                registry.report(
                    SourceKind::Mcp,
                    server,
                    format!("a tool is skipped: its name is invalid: {error}"),
                );
                continue;
            }
        };
        // `Mcp(server__resources)` is the rule for reading the server's resources: a tool of
        // that name would share it, so an "always" given to a read would run the tool unasked.
        if tool.name == crate::mcp::RESOURCES_RULE_TOOL {
            registry.report(
                SourceKind::Mcp,
                server,
                format!(
                    "tool \"{}\" is skipped: the name is reserved for reading the server's resources (rule Mcp({server}__{}))",
                    tool.name,
                    crate::mcp::RESOURCES_RULE_TOOL
                ),
            );
            continue;
        }
        if !seen.insert(tool.name.clone()) {
            registry.report(
                SourceKind::Mcp,
                server,
                format!(
                    "tool \"{}\" is listed twice; the second is skipped",
                    tool.name
                ),
            );
            continue;
        }
        let compiled = match validator.prepare(&tool.input_schema) {
            Ok(compiled) => compiled,
            Err(error) => {
                registry.report(
                    SourceKind::Mcp,
                    server,
                    format!(
                        "tool \"{}\" skipped: its input schema is rejected: {error}",
                        tool.name
                    ),
                );
                continue;
            }
        };
        registry.register(RegisteredTool {
            model_name: id.model_name(),
            id,
            description: tool.description,
            input_schema: tool.input_schema,
            read_only: tool.read_only_hint,
            compiled_schema: Arc::new(compiled),
            runner: Arc::new(McpRunner {
                servers: servers.clone(),
                parser: parser.clone(),
                output_schema: tool.output_schema,
                title: tool.title,
            }),
        });
    }
}

/// The parts of a listed tool earshot uses.
struct ListedTool {
    name: String,
    title: Option<String>,
    description: String,
    input_schema: String,
    output_schema: Option<String>,
    read_only_hint: bool,
}

fn read_tool(raw: &Value) -> Result<ListedTool, String> {
    let Some(object) = raw.as_object() else {
        return Err("a listed tool is not a JSON object; skipped".into());
    };
    let Some(name) = object.get("name").and_then(Value::as_str) else {
        return Err("a listed tool has no \"name\" string; skipped".into());
    };
    let schema = match object.get("inputSchema") {
        Some(Value::Object(schema)) => Value::Object(schema.clone()).to_string(),
        _ => {
            return Err(format!(
                "tool \"{}\" skipped: its inputSchema is missing or not an object",
                crate::mcp::shown_name(name)
            ));
        }
    };
    let output_schema = match object.get("outputSchema") {
        Some(Value::Object(schema)) => Some(Value::Object(schema.clone()).to_string()),
        _ => None,
    };
    let largest = schema
        .len()
        .max(output_schema.as_ref().map_or(0, String::len));
    if largest > MAX_SCHEMA_BYTES {
        return Err(format!(
            "tool \"{}\" skipped: its schema is {} KiB, over the {} KiB earshot accepts",
            crate::mcp::shown_name(name),
            largest / 1024,
            MAX_SCHEMA_BYTES / 1024
        ));
    }
    let annotations = object.get("annotations").and_then(Value::as_object);
    let title = object
        .get("title")
        .and_then(Value::as_str)
        .or_else(|| {
            annotations
                .and_then(|a| a.get("title"))
                .and_then(Value::as_str)
        })
        .map(|title| {
            earshot_terminal_text::strip_controls(title)
                .chars()
                .take(200)
                .collect()
        });
    let description: String = object
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .chars()
        .take(MAX_DESCRIPTION_CHARS)
        .collect();
    Ok(ListedTool {
        name: name.to_string(),
        title,
        description,
        input_schema: schema,
        output_schema,
        read_only_hint: annotations
            .and_then(|a| a.get("readOnlyHint"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}
