//! `earshot mcp prompts [SERVER]` (every prompt as the slash command an agent offers) and
//! `earshot mcp prompt SERVER NAME key=value...` (the messages `prompts/get` returns, normalised).

use std::collections::BTreeMap;

use serde_json::json;

use earshot_host::CallError;
use earshot_host::gate::strip_for_terminal;
use earshot_host::mcp::shown_name;
use earshot_host::settings::Settings;

use super::tools::load_host;
use super::{CommandResult, Failure, exit, output};

/// Lists the prompts of every running server, or of `server`.
pub(crate) async fn list(settings: Settings, server: Option<&str>, as_json: bool) -> CommandResult {
    let start = super::mcp_servers::start_for(&settings, server)?;
    let host = load_host(settings, start).await?;
    let (prompts, failures) = host.mcp_prompts(server).await;
    host.shutdown().await;
    for failure in &failures {
        output::warning_line(&failure.to_string());
    }
    if as_json {
        output::json(&json!(
            prompts
                .iter()
                .map(|prompt| json!({
                    "command": prompt.command,
                    "server": prompt.server,
                    "name": prompt.name,
                    "title": prompt.title,
                    "description": prompt.description,
                    "arguments": prompt.arguments.iter().map(|argument| json!({
                        "name": argument.name,
                        "description": argument.description,
                        "required": argument.required,
                    })).collect::<Vec<_>>(),
                }))
                .collect::<Vec<_>>()
        ));
    } else if prompts.is_empty() {
        output::say("no prompts: no running server offers any");
    } else {
        let rows: Vec<Vec<String>> = prompts
            .iter()
            .map(|prompt| {
                let arguments = prompt
                    .arguments
                    .iter()
                    .map(|argument| {
                        let name = shown_name(&argument.name);
                        if argument.required {
                            name
                        } else {
                            format!("[{name}]")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                vec![
                    shown_name(&prompt.command),
                    arguments,
                    shown_name(
                        prompt
                            .description
                            .as_deref()
                            .or(prompt.title.as_deref())
                            .unwrap_or(""),
                    ),
                ]
            })
            .collect();
        output::table(&["COMMAND", "ARGUMENTS", "DESCRIPTION"], &rows);
    }
    match (server, failures.is_empty()) {
        (Some(_), false) => Err(Failure::new(format!(
            "could not list the prompts of {}",
            server.unwrap_or_default()
        ))),
        _ => Ok(exit::OK),
    }
}

/// Prints the messages of prompt `name` of `server`, with `pairs` (`key=value`) as arguments.
pub(crate) async fn get(
    settings: Settings,
    server: &str,
    name: &str,
    pairs: &[String],
) -> CommandResult {
    let mut arguments = BTreeMap::new();
    for pair in pairs {
        let (key, value) = pair.split_once('=').ok_or_else(|| {
            Failure::new(format!("\"{pair}\" is not KEY=VALUE"))
                .hint("give each argument as key=value, e.g. city=Paris")
                .code(exit::USAGE)
        })?;
        arguments.insert(key.to_string(), value.to_string());
    }
    let start = super::mcp_servers::start_for(&settings, Some(server))?;
    let host = load_host(settings, start).await?;
    let answer = host.get_mcp_prompt(server, name, &arguments).await;
    host.shutdown().await;
    match answer {
        Ok(messages) => {
            for message in messages {
                output::out(&format!("[{}]", message.role));
                output::out(&strip_for_terminal(&message.text));
            }
            Ok(exit::OK)
        }
        Err(error @ CallError::Denied(_)) => {
            Err(Failure::new(error.to_string()).code(exit::DENIED))
        }
        Err(error @ CallError::MissingPromptArguments { .. }) => {
            Err(Failure::new(error.to_string()).code(exit::USAGE))
        }
        Err(CallError::UnknownTool(command)) => Err(Failure::new(format!(
            "no prompt {command}; `earshot mcp prompts {server}` lists what it offers"
        ))),
        Err(error) => Err(Failure::new(error.to_string())),
    }
}
