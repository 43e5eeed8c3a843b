//! MCP resources for the user and the model: what servers list (`resources/list` and
//! `resources/templates/list`), the two host tools a model gets for them (`list_mcp_resources`,
//! `read_mcp_resource`, as Codex offers them), and what `resources/read` returns, normalised in
//! the mcp-output sandbox like a tool's result.
//!
//! Reading is gated under one rule per server, `Mcp(server__resources)` (so `Mcp(server__*)`
//! covers it, and a deny rule over the server refuses it); listing only shows names and URIs,
//! so only a deny rule stops it.

use serde_json::{Value, json};

use crate::runner::{CallError, FailureCause};
use crate::sandbox::{Attachment, McpOutputParser};

/// The host tool that lists resources.
pub const LIST_RESOURCES_TOOL: &str = "list_mcp_resources";

/// The host tool that reads one resource.
pub const READ_RESOURCE_TOOL: &str = "read_mcp_resource";

/// The tool part of the rule that gates reading a server's resources: `Mcp(server__resources)`.
pub const RESOURCES_RULE_TOOL: &str = "resources";

/// The most contents kept from one `resources/read` answer.
const MAX_CONTENTS: usize = 256;

/// One resource (or resource template) a server lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpResource {
    /// The server's name in settings.
    pub server: String,
    /// The resource's URI, or the template's URI template (RFC 6570) when `template` is true.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Its title, when the server gives one.
    pub title: Option<String>,
    /// Its description, when the server gives one.
    pub description: Option<String>,
    /// Its MIME type, when the server says.
    pub mime_type: Option<String>,
    /// Whether `uri` is a template to fill in rather than a resource to read.
    pub template: bool,
}

/// What `resources/read` returned, ready for the model: text, with binary parts kept aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpResourceContents {
    /// The text for the model (normalised, capped, binary parts summarised).
    pub text: String,
    /// Binary parts (blobs), kept aside.
    pub attachments: Vec<Attachment>,
}

/// The resources and templates in `listed` (raw items of `server`) that have a usable URI; a
/// malformed item is skipped, never fatal for the others.
pub fn resources_of(server: &str, resources: &[Value], templates: &[Value]) -> Vec<McpResource> {
    let one = |item: &Value, key: &str, template: bool| {
        let uri = item.get(key)?.as_str()?;
        if uri.is_empty() || uri.chars().any(char::is_control) {
            return None;
        }
        let text = |key: &str| item.get(key).and_then(Value::as_str).map(str::to_string);
        Some(McpResource {
            server: server.to_string(),
            uri: uri.to_string(),
            name: text("name").unwrap_or_else(|| uri.to_string()),
            title: text("title"),
            description: text("description"),
            mime_type: text("mimeType"),
            template,
        })
    };
    resources
        .iter()
        .filter_map(|item| one(item, "uri", false))
        .chain(
            templates
                .iter()
                .filter_map(|item| one(item, "uriTemplate", true)),
        )
        .collect()
}

/// The contents of a `resources/read` answer from `server`, normalised in the mcp-output sandbox
/// (as the embedded resources of a tool result).
pub fn contents_of(
    server: &str,
    uri: &str,
    answer: &Value,
    parser: &McpOutputParser,
) -> Result<McpResourceContents, CallError> {
    let unusable = |why: String| {
        CallError::failed(
            format!(
                "server \"{server}\" answered resource {uri} with a result earshot cannot use: {why}"
            ),
            FailureCause::UnusableResult {
                server: server.to_string(),
            },
        )
    };
    let contents = answer
        .get("contents")
        .and_then(Value::as_array)
        .ok_or_else(|| unusable("it has no \"contents\" list".into()))?;
    if contents.len() > MAX_CONTENTS {
        return Err(unusable(format!(
            "it has {} contents, more than the {MAX_CONTENTS} earshot accepts",
            contents.len()
        )));
    }
    let as_result = json!({
        "content": contents
            .iter()
            .map(|resource| json!({"type": "resource", "resource": resource}))
            .collect::<Vec<_>>()
    });
    let normalised = parser
        .normalise(&as_result.to_string(), None)
        .map_err(|error| unusable(error.to_string()))?;
    Ok(McpResourceContents {
        text: normalised.output,
        attachments: normalised.attachments,
    })
}

/// The most characters of the listing a model is given (as a tool result's cap).
const MAX_LISTING_CHARS: usize = 25_000;

/// The text `list_mcp_resources` gives the model: one line per resource or template, every
/// server-written part stripped of control characters, the whole cut at 25,000 characters.
pub fn listing_for_model(resources: &[McpResource], failures: &[CallError]) -> String {
    let listing = listing_lines(resources, failures);
    let total = listing.chars().count();
    if total <= MAX_LISTING_CHARS {
        return listing;
    }
    let mut cut: String = listing.chars().take(MAX_LISTING_CHARS).collect();
    cut.push_str(&format!(
        "\n[{} more characters cut: ask for one server's resources]",
        total - MAX_LISTING_CHARS
    ));
    cut
}

fn listing_lines(resources: &[McpResource], failures: &[CallError]) -> String {
    let clean = |text: &str| -> String {
        earshot_terminal_text::strip_controls(text)
            .replace(['\n', '\t'], " ")
            .chars()
            .take(500)
            .collect()
    };
    let mut lines: Vec<String> = resources
        .iter()
        .map(|resource| {
            let what = if resource.template {
                "template"
            } else {
                "resource"
            };
            let mut line = format!(
                "{} {what} {} ({})",
                resource.server,
                clean(&resource.uri),
                clean(&resource.name)
            );
            if let Some(mime) = &resource.mime_type {
                line.push_str(&format!(" [{}]", clean(mime)));
            }
            if let Some(description) = &resource.description {
                line.push_str(&format!(": {}", clean(description)));
            }
            line
        })
        .collect();
    if lines.is_empty() {
        lines.push("no resources".into());
    }
    lines.extend(
        failures
            .iter()
            .map(|failure| format!("unavailable: {failure}")),
    );
    lines.join("\n")
}

/// The input schema of `list_mcp_resources`.
pub fn resources_list_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "Only this server's resources (all servers when left out)."}
        },
        "additionalProperties": false
    })
}

/// The input schema of `read_mcp_resource`.
pub fn resources_read_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "The server, as list_mcp_resources names it."},
            "uri": {"type": "string", "description": "The resource's URI (a template filled in)."}
        },
        "required": ["server", "uri"],
        "additionalProperties": false
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_items_are_skipped_and_templates_are_marked() {
        let resources = vec![
            json!({"uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"}),
            json!({"name": "no uri"}),
            json!({"uri": "evil\u{1b}[2J"}),
        ];
        let templates = vec![json!({"uriTemplate": "demo://{id}", "name": "by id"})];
        let found = resources_of("docs", &resources, &templates);
        assert_eq!(found.len(), 2);
        assert!(!found[0].template && found[1].template);
        assert_eq!(
            listing_for_model(&found, &[]),
            "docs resource file:///a.txt (a) [text/plain]\ndocs template demo://{id} (by id)"
        );
    }
}
