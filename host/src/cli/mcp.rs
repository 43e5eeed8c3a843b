//! `earshot mcp list|get|trust|untrust`.

use clap::Subcommand;
use serde_json::json;

use earshot_host::gate::sanitise_for_terminal;
use earshot_host::mcp::{
    McpOptions, McpServers, ServerEntry, ServerState, Transport, read_servers, seconds, shown_name,
};
use earshot_host::names::SourceKind;
use earshot_host::settings::Layer;
use earshot_host::trust::{digest_of, record_trust, remove_trust};

use super::progress::ProgressLine;
use super::{CommandResult, Context, Failure, exit, output};

#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
    /// Every configured server: scope, transport and state. Starts nothing untrusted.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// One server's definition after expansion (secrets masked) and state.
    Get {
        /// The server's name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Trust a server the project's checked-in settings define, as it is defined now.
    Trust {
        /// The server's name.
        name: String,
    },
    /// Remove a server's trust record.
    Untrust {
        /// The server's name.
        name: String,
    },
}

pub(crate) fn run(context: &Context, command: McpCommand) -> CommandResult {
    match command {
        McpCommand::List { json } => list(context, json),
        McpCommand::Get { name, json } => get(context, &name, json),
        McpCommand::Trust { name } => trust(context, &name),
        McpCommand::Untrust { name } => untrust(context, &name),
    }
}

fn servers(context: &Context) -> Vec<ServerEntry> {
    read_servers(&context.settings, &Context::env)
}

/// Connects to every admitted server (or just `only`), with a progress line on a terminal.
fn connect(context: &Context, only: Option<&str>) -> McpServers {
    let total = servers(context)
        .iter()
        .filter(|entry| only.is_none_or(|name| entry.name == name))
        .count();
    let mut progress = ProgressLine::start(total);
    let servers = McpServers::start(
        &context.settings,
        &Context::env,
        McpOptions {
            end_servers_on_signals: true,
            ..McpOptions::from_settings(&context.settings)
        },
        only,
        &mut |step| progress.update(step),
    );
    progress.finish();
    servers
}

/// The state as `list` shows it.
fn state_text(state: &ServerState) -> String {
    match state {
        ServerState::Connected { tools, took } => {
            format!("connected: {tools} tool(s) in {}", seconds(*took))
        }
        ServerState::AwaitingTrust(explanation) => explanation.clone(),
        ServerState::Failed(reason) => format!("failed: {reason}"),
        ServerState::Died(reason) => format!("died: {reason}"),
        ServerState::Starting => "starting".into(),
    }
}

fn state_json(state: &ServerState) -> serde_json::Value {
    match state {
        ServerState::Connected { tools, took } => {
            json!({"state": "connected", "tools": tools, "took_ms": took.as_millis() as u64})
        }
        ServerState::AwaitingTrust(explanation) => {
            json!({"state": "awaiting-trust", "reason": explanation})
        }
        ServerState::Failed(reason) => json!({"state": "failed", "reason": reason}),
        ServerState::Died(reason) => json!({"state": "died", "reason": reason}),
        ServerState::Starting => json!({"state": "starting"}),
    }
}

fn scope_text(layer: Layer, shadows: &[Layer]) -> String {
    let mut text = layer.as_str().to_string();
    if !shadows.is_empty() {
        let shadowed: Vec<&str> = shadows.iter().map(|layer| layer.as_str()).collect();
        text.push_str(&format!(" (overrides {})", shadowed.join(", ")));
    }
    text
}

fn list(context: &Context, as_json: bool) -> CommandResult {
    let servers = connect(context, None);
    let statuses = servers.statuses();
    if as_json {
        let items: Vec<_> = statuses
            .iter()
            .map(|status| {
                let mut item = json!({
                    "name": status.name,
                    "scope": status.layer,
                    "overrides": status.shadows,
                    "transport": status.transport,
                    "warnings": status.warnings,
                });
                if let (Some(item), serde_json::Value::Object(state)) =
                    (item.as_object_mut(), state_json(&status.state))
                {
                    item.extend(state);
                }
                item
            })
            .collect();
        output::json(&json!({ "servers": items }));
        return Ok(exit::OK);
    }
    if statuses.is_empty() {
        println!("no MCP servers configured (add them under mcpServers in a settings file)");
        return Ok(exit::OK);
    }
    let rows: Vec<Vec<String>> = statuses
        .iter()
        .map(|status| {
            vec![
                status.name.clone(),
                scope_text(status.layer, &status.shadows),
                status.transport.to_string(),
                state_text(&status.state),
            ]
        })
        .collect();
    output::table(&["NAME", "SCOPE", "TRANSPORT", "STATE"], &rows);
    for status in &statuses {
        for warning in &status.warnings {
            output::warning_line(&format!("server \"{}\" {warning}", status.name));
        }
    }
    Ok(exit::OK)
}

fn find(entries: Vec<ServerEntry>, name: &str) -> Result<ServerEntry, Failure> {
    entries
        .into_iter()
        .find(|entry| entry.name == name)
        .ok_or_else(|| {
            Failure::new(format!(
                "no MCP server named \"{name}\" in any settings file"
            ))
            .hint("`earshot mcp list` shows what is configured")
        })
}

/// Masks everything after the first 4 characters of a value that may hold a secret.
fn mask(value: &str) -> String {
    if value.chars().count() <= 4 {
        "****".into()
    } else {
        format!("{}****", value.chars().take(4).collect::<String>())
    }
}

fn get(context: &Context, name: &str, as_json: bool) -> CommandResult {
    // Expanded with every variable's value masked: what came from a variable never shows,
    // wherever it was used (args, url, headers); env and header values are masked whole.
    let masked_variables = |variable: &str| Context::env(variable).map(|value| mask(&value));
    let entry = find(read_servers(&context.settings, &masked_variables), name)?;
    let definition = match &entry.definition {
        Ok(definition) => {
            let mut masked = definition.clone();
            match &mut masked.transport {
                Transport::Stdio { env, .. } => {
                    env.values_mut().for_each(|value| *value = mask(value))
                }
                Transport::Http { headers, .. } => {
                    headers.values_mut().for_each(|value| *value = mask(value))
                }
            }
            serde_json::to_value(masked).expect("definitions serialise")
        }
        Err(reason) => json!({ "error": reason }),
    };
    let servers = connect(context, Some(name));
    let status = servers
        .statuses()
        .into_iter()
        .next()
        .expect("the server was found above");
    let tools: Vec<serde_json::Value> = servers
        .tools_of(name)
        .iter()
        .map(|tool| {
            json!({
                "name": tool.get("name").and_then(|n| n.as_str()).map(shown_name),
                "description": tool.get("description").and_then(|d| d.as_str()).unwrap_or(""),
                "readOnlyHint": tool.pointer("/annotations/readOnlyHint").and_then(|h| h.as_bool()),
            })
        })
        .collect();
    if as_json {
        let mut item = json!({"name": entry.name, "scope": entry.layer, "overrides": entry.shadows, "definition": definition, "warnings": status.warnings});
        if let (Some(item), serde_json::Value::Object(state)) =
            (item.as_object_mut(), state_json(&status.state))
        {
            item.extend(state);
            // Here `tools` is the list itself, not its count.
            item.insert("tools".into(), tools.into());
        }
        output::json(&item);
        return Ok(exit::OK);
    }
    println!("{name}");
    println!("  scope:      {}", scope_text(entry.layer, &entry.shadows));
    println!("  transport:  {}", status.transport);
    println!(
        "  state:      {}",
        sanitise_for_terminal(&state_text(&status.state), 2_000)
    );
    println!(
        "  definition: {}",
        sanitise_for_terminal(&serde_json::to_string(&definition).expect("JSON"), 4_000)
    );
    for warning in &status.warnings {
        output::warning_line(&format!("server \"{name}\" {warning}"));
    }
    if !tools.is_empty() {
        println!("  tools:");
        let rows: Vec<Vec<String>> = tools
            .iter()
            .map(|tool| {
                vec![
                    format!("    {}", tool["name"].as_str().unwrap_or("")),
                    match tool["readOnlyHint"].as_bool() {
                        Some(true) => "claims read-only (not believed)".into(),
                        _ => "-".into(),
                    },
                    tool["description"].as_str().unwrap_or("").to_string(),
                ]
            })
            .collect();
        output::table(&["", "", ""], &rows);
    }
    Ok(exit::OK)
}

fn trust(context: &Context, name: &str) -> CommandResult {
    let entry = find(servers(context), name)?;
    if entry.layer != Layer::Project {
        return Err(Failure::new(format!(
            "server \"{name}\" is defined in your {} settings, which start without trust",
            entry.layer.as_str()
        )));
    }
    let definition = entry.definition.as_ref().map_err(|reason| {
        Failure::new(format!("server \"{name}\" cannot start: {reason}"))
            .hint("fix its entry in .earshot/settings.json first")
    })?;
    let digest = digest_of(definition.canonical_json().as_bytes());
    record_trust(&context.settings, SourceKind::Mcp, name, &digest)
        .map_err(|error| Failure::new(error.to_string()))?;
    println!(
        "trusted server \"{name}\" as defined now; a change to its definition lapses the trust"
    );
    Ok(exit::OK)
}

fn untrust(context: &Context, name: &str) -> CommandResult {
    let removed = remove_trust(&context.settings, SourceKind::Mcp, name)
        .map_err(|error| Failure::new(error.to_string()))?;
    if removed {
        println!("server \"{name}\" is no longer trusted in this project");
        Ok(exit::OK)
    } else {
        Err(Failure::new(format!(
            "server \"{name}\" has no trust record in this project"
        )))
    }
}
