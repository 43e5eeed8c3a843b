//! `earshot mcp list|get|trust|untrust`.

use clap::Subcommand;
use serde_json::json;

use earshot_host::mcp::{ServerEntry, Transport, read_servers};
use earshot_host::names::SourceKind;
use earshot_host::settings::Layer;
use earshot_host::sources::{Scope, admission};
use earshot_host::trust::{digest_of, record_trust, remove_trust};

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

/// The server's state as `list` shows it.
fn state(context: &Context, entry: &ServerEntry) -> String {
    match &entry.definition {
        Err(reason) => format!("failed: {reason}"),
        Ok(definition) => {
            let scope = Scope::of_layer(entry.layer);
            let digest = digest_of(definition.canonical_json().as_bytes());
            let admitted = admission(
                &context.settings,
                SourceKind::Mcp,
                &entry.name,
                scope,
                &digest,
            );
            if admitted.is_trusted() {
                if scope.needs_trust() {
                    "trusted".into()
                } else {
                    "starts (your own settings)".into()
                }
            } else {
                admitted.explain(SourceKind::Mcp, &entry.name)
            }
        }
    }
}

fn transport_name(entry: &ServerEntry) -> &'static str {
    match &entry.definition {
        Ok(definition) => match definition.transport {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        },
        Err(_) => "-",
    }
}

fn scope_text(entry: &ServerEntry) -> String {
    let mut text = entry.layer.as_str().to_string();
    if !entry.shadows.is_empty() {
        let shadowed: Vec<&str> = entry.shadows.iter().map(|layer| layer.as_str()).collect();
        text.push_str(&format!(" (overrides {})", shadowed.join(", ")));
    }
    text
}

fn list(context: &Context, as_json: bool) -> CommandResult {
    let entries = servers(context);
    if as_json {
        let items: Vec<_> = entries
            .iter()
            .map(|entry| {
                json!({
                    "name": entry.name,
                    "scope": entry.layer,
                    "overrides": entry.shadows,
                    "transport": transport_name(entry),
                    "state": state(context, entry),
                })
            })
            .collect();
        output::json(&json!({ "servers": items }));
        return Ok(exit::OK);
    }
    if entries.is_empty() {
        println!("no MCP servers configured (add them under mcpServers in a settings file)");
        return Ok(exit::OK);
    }
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|entry| {
            vec![
                entry.name.clone(),
                scope_text(entry),
                transport_name(entry).to_string(),
                state(context, entry),
            ]
        })
        .collect();
    output::table(&["NAME", "SCOPE", "TRANSPORT", "STATE"], &rows);
    Ok(exit::OK)
}

fn find(context: &Context, name: &str) -> Result<ServerEntry, Failure> {
    servers(context)
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
    let entry = find(context, name)?;
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
    let state = state(context, &entry);
    if as_json {
        output::json(
            &json!({"name": entry.name, "scope": entry.layer, "overrides": entry.shadows, "definition": definition, "state": state}),
        );
    } else {
        println!("{name}");
        println!("  scope:      {}", scope_text(&entry));
        println!("  state:      {state}");
        println!(
            "  definition: {}",
            serde_json::to_string(&definition).expect("JSON")
        );
    }
    Ok(exit::OK)
}

fn trust(context: &Context, name: &str) -> CommandResult {
    let entry = find(context, name)?;
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
