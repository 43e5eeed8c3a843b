//! MCP prompts as slash commands: what a server lists (`prompts/list`), checked and shaped for a
//! user to pick (`/mcp__server__prompt`), and what `prompts/get` returns, each message's content
//! normalised in the mcp-output sandbox like a tool's result.
//!
//! A prompt is fetched because the user asked for it, so the gate's deny rules apply to it
//! (`Mcp(server__prompt)` and globs over it, the same names as tools) but nothing asks: the
//! user's own command is the answer.

use serde_json::{Value, json};

use crate::runner::{CallError, FailureCause};
use crate::sandbox::{Attachment, McpOutputParser};

/// The most arguments kept from one prompt definition.
const MAX_ARGUMENTS: usize = 64;

/// The most messages kept from one `prompts/get` answer.
const MAX_MESSAGES: usize = 256;

/// One prompt a server offers, as a command an agent can show (`/mcp__github__review`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPrompt {
    /// The slash command: `/mcp__{server}__{prompt}`.
    pub command: String,
    /// The server's name in settings.
    pub server: String,
    /// The prompt's name on that server.
    pub name: String,
    /// Its title, when the server gives one.
    pub title: Option<String>,
    /// Its description, when the server gives one.
    pub description: Option<String>,
    /// The arguments it takes, in the server's order.
    pub arguments: Vec<McpPromptArgument>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPromptArgument {
    /// Its name (the `key` of `key=value`).
    pub name: String,
    /// What it is for, when the server says.
    pub description: Option<String>,
    /// Whether `prompts/get` needs it.
    pub required: bool,
}

/// One message of a prompt, ready for the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPromptMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// The content as text for the model (normalised, capped, binary parts summarised).
    pub text: String,
    /// Binary parts (images, audio, blobs), kept aside.
    pub attachments: Vec<Attachment>,
}

/// The prompts in `listed` (raw `prompts/list` items of `server`) that have a usable name; a
/// malformed item is skipped, never fatal for the others.
pub fn prompts_of(server: &str, listed: &[Value]) -> Vec<McpPrompt> {
    listed
        .iter()
        .filter_map(|item| {
            let name = item.get("name")?.as_str()?;
            // Only names a rule can name (`Mcp(server__prompt)`, as for tools).
            crate::names::ToolId::mcp(server, name).ok()?;
            let text = |key: &str| item.get(key).and_then(Value::as_str).map(str::to_string);
            let arguments = item
                .get("arguments")
                .and_then(Value::as_array)
                .map(|arguments| {
                    arguments
                        .iter()
                        .take(MAX_ARGUMENTS)
                        .filter_map(|argument| {
                            Some(McpPromptArgument {
                                name: argument.get("name")?.as_str()?.to_string(),
                                description: argument
                                    .get("description")
                                    .and_then(Value::as_str)
                                    .map(str::to_string),
                                required: argument
                                    .get("required")
                                    .and_then(Value::as_bool)
                                    .unwrap_or(false),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            Some(McpPrompt {
                command: format!("/mcp__{server}__{name}"),
                server: server.to_string(),
                name: name.to_string(),
                title: text("title"),
                description: text("description"),
                arguments,
            })
        })
        .collect()
}

/// The required arguments of `prompt` missing from `given`, as the one-line error a user sees.
pub fn missing_arguments(
    prompt: &McpPrompt,
    given: &serde_json::Map<String, Value>,
) -> Option<CallError> {
    let missing: Vec<String> = prompt
        .arguments
        .iter()
        .filter(|argument| argument.required && !given.contains_key(&argument.name))
        .map(|argument| argument.name.clone())
        .collect();
    (!missing.is_empty()).then(|| CallError::MissingPromptArguments {
        prompt: prompt.command.clone(),
        missing,
    })
}

/// The messages of a `prompts/get` answer from `server`, each content block normalised in the
/// mcp-output sandbox (as the single content of a tool result).
pub fn messages_of(
    server: &str,
    prompt: &str,
    answer: &Value,
    parser: &McpOutputParser,
) -> Result<Vec<McpPromptMessage>, CallError> {
    let unusable = |why: String| {
        CallError::failed(
            format!(
                "server \"{server}\" answered prompt {prompt} with a result earshot cannot use: {why}"
            ),
            FailureCause::UnusableResult {
                server: server.to_string(),
            },
        )
    };
    let messages = answer
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| unusable("it has no \"messages\" list".into()))?;
    if messages.len() > MAX_MESSAGES {
        return Err(unusable(format!(
            "it has {} messages, more than the {MAX_MESSAGES} earshot accepts",
            messages.len()
        )));
    }
    messages
        .iter()
        .map(|message| {
            let role = match message.get("role").and_then(Value::as_str) {
                Some(role @ ("user" | "assistant")) => role.to_string(),
                _ => {
                    return Err(unusable(
                        "a message's role is neither user nor assistant".into(),
                    ));
                }
            };
            let content = message
                .get("content")
                .ok_or_else(|| unusable("a message has no content".into()))?;
            let normalised = parser
                .normalise(&json!({ "content": [content] }).to_string(), None)
                .map_err(|error| unusable(error.to_string()))?;
            Ok(McpPromptMessage {
                role,
                text: normalised.output,
                attachments: normalised.attachments,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_items_are_skipped_and_required_arguments_are_named() {
        let listed = vec![
            json!({"name": "review", "title": "Review", "arguments": [
                {"name": "pr", "required": true}, {"name": "style"}, {"nope": 1}]}),
            json!({"title": "no name"}),
            json!({"name": "bad\u{1b}[2J"}),
        ];
        let prompts = prompts_of("github", &listed);
        assert_eq!(prompts.len(), 1);
        assert_eq!(prompts[0].command, "/mcp__github__review");
        assert_eq!(prompts[0].arguments.len(), 2);
        let error = missing_arguments(&prompts[0], &serde_json::Map::new()).expect("pr missing");
        assert_eq!(
            error.to_string(),
            "/mcp__github__review needs \"pr\"; give pr=VALUE"
        );
        let mut given = serde_json::Map::new();
        given.insert("pr".into(), json!("7"));
        assert!(missing_arguments(&prompts[0], &given).is_none());
    }
}
