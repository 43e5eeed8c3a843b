//! `earshot mcp list|get|trust|untrust`.

use clap::Subcommand;
use serde_json::json;

use earshot_host::gate::sanitise_for_terminal;
#[cfg(feature = "mcp")]
use earshot_host::host::HostBuilder;
#[cfg(feature = "mcp")]
use earshot_host::mcp::McpOptions;
use earshot_host::mcp::{
    ServerState, Transport, digest_for_trust, effective_entry, read_servers, seconds, shown_name,
};
use earshot_host::names::SourceKind;
#[cfg(feature = "mcp")]
use earshot_host::sandbox::ComponentCache;
use earshot_host::settings::Layer;
use earshot_host::skills::catalogue::visible;
use earshot_host::trust::{record_trust_parts, remove_trust};

use super::mcp_servers::{ScopeArg, TransportArg, connect, find, servers};
use super::{CommandResult, Context, Failure, exit, output};

#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
    /// Every configured server: scope, transport and state. Starts nothing untrusted.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// One server's definition after expansion (secrets masked), state and tools.
    Get {
        /// The server's name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add a server: `earshot mcp add NAME -- COMMAND [ARGS...]`, or `-t http NAME URL`. In the
    /// local file (the default) it is signed and starts at once; in the project file it starts
    /// once trusted (`mcp trust`), for you and everyone who checks it out. Your own servers start
    /// in your config dir: to run a file of the project, pass `--cwd '${EARSHOT_PROJECT_DIR}'`.
    Add {
        /// Which file: local (.earshot/settings.local.json, this project), user (every
        /// project) or project (.earshot/settings.json, checked in).
        #[arg(short, long, value_enum, default_value = "local")]
        scope: ScopeArg,
        /// Replace a server of this name already in that file.
        #[arg(long)]
        force: bool,
        /// stdio (a command) or http (a URL).
        #[arg(short, long, value_enum, default_value = "stdio")]
        transport: TransportArg,
        /// An environment variable for a stdio server, KEY=VALUE (repeatable).
        #[arg(short, long = "env", value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// A header for an http server, "Name: value" (repeatable).
        #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
        headers: Vec<String>,
        /// The working directory of a stdio server (default: the project for project scope,
        /// else your config dir; `${EARSHOT_PROJECT_DIR}` is the project).
        #[arg(long)]
        cwd: Option<String>,
        /// The server's name.
        name: String,
        /// The command (stdio) or URL (http).
        command_or_url: String,
        /// Arguments of the command.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Add a server from its JSON definition, as it would appear under `mcpServers`:
    /// `earshot mcp add-json NAME '{"command": "npx", "args": ["-y", "pkg"]}'`.
    AddJson {
        /// Which file: local (default), user or project.
        #[arg(short, long, value_enum, default_value = "local")]
        scope: ScopeArg,
        /// Replace a server of this name already in that file.
        #[arg(long)]
        force: bool,
        /// The server's name.
        name: String,
        /// Its definition: a JSON object with `command` (stdio) or `type` and `url` (http).
        json: String,
    },
    /// Remove a server's entry (and its trust record) from one settings file.
    Remove {
        /// Which file (default: the one whose definition is used).
        #[arg(short, long, value_enum)]
        scope: Option<ScopeArg>,
        /// The server's name.
        name: String,
    },
    /// Trust servers the project's checked-in settings define (or ones in the local file that
    /// earshot did not write), as they are defined now.
    Trust {
        /// The servers' names.
        #[arg(required = true)]
        names: Vec<String>,
        /// Trust it even when what it names is past the digest's budget (5,000 files, 64 MiB),
        /// so that the files past it count by their size only.
        #[arg(long)]
        partial: bool,
    },
    /// Remove servers' trust records.
    Untrust {
        /// The servers' names.
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Log in to an HTTP server that requires OAuth: opens the browser (EARSHOT_BROWSER or
    /// mcp.oauth.browser; `none` prints the URL and accepts the redirected address on stdin)
    /// and stores the tokens under your config dir.
    Login {
        /// The server's name.
        name: String,
    },
    /// Delete a server's stored OAuth tokens.
    Logout {
        /// The server's name.
        name: String,
    },
    /// The prompts of every running server (or of SERVER), as the slash commands an agent
    /// offers (`/mcp__server__prompt`), with their arguments ([optional] in brackets).
    Prompts {
        /// Only this server's.
        server: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the messages of one prompt: `earshot mcp prompt SERVER NAME key=value...`.
    Prompt {
        /// The server's name.
        server: String,
        /// The prompt's name, as `mcp prompts` lists it (without `/mcp__server__`).
        name: String,
        /// Its arguments, each `key=value`.
        #[arg(value_name = "KEY=VALUE")]
        arguments: Vec<String>,
    },
    /// The resources and resource templates of every running server (or of SERVER).
    Resources {
        /// Only this server's.
        server: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print one resource's contents: `earshot mcp read SERVER URI`.
    Read {
        /// The server's name.
        server: String,
        /// The resource's URI, as `mcp resources` lists it (a template filled in).
        uri: String,
    },
    /// Serve every loaded tool (extensions, components, the servers behind), namespaced and
    /// gated, as one MCP server over stdio. Asks go to the client through elicitation; a client
    /// without it gets the ask denied with the rule to add.
    Serve,
}

pub(crate) async fn run(context: &Context, command: McpCommand) -> CommandResult {
    match command {
        #[cfg(feature = "mcp")]
        McpCommand::Serve => serve(context).await,
        McpCommand::List { json } => list(context, json).await,
        McpCommand::Get { name, json } => get(context, &name, json).await,
        McpCommand::Trust { names, partial } => {
            super::each_name(&names, |name| trust(context, name, partial))
        }
        McpCommand::Untrust { names } => super::each_name(&names, |name| untrust(context, name)),
        #[cfg(feature = "mcp")]
        McpCommand::Login { name } => super::mcp_login::login_command(context, &name).await,
        #[cfg(feature = "mcp")]
        McpCommand::Logout { name } => super::mcp_login::logout_command(context, &name).await,
        #[cfg(not(feature = "mcp"))]
        McpCommand::Serve | McpCommand::Login { .. } | McpCommand::Logout { .. } => {
            Err(Failure::new(
                "this build of earshot has no MCP client or server (built without its `mcp` feature); rebuild with the default features to use MCP",
            ))
        }
        McpCommand::AddJson {
            scope,
            force,
            name,
            json,
        } => {
            let definition = super::mcp_add::definition_from_json(&name, &json)?;
            super::mcp_add::add(context, scope.layer(), &name, definition, force)
        }
        McpCommand::Resources { server, json } => {
            super::mcp_resources::list(context.settings.clone(), server.as_deref(), json).await
        }
        McpCommand::Read { server, uri } => {
            super::mcp_resources::read(context.settings.clone(), &server, &uri).await
        }
        McpCommand::Prompts { server, json } => {
            super::mcp_prompts::list(context.settings.clone(), server.as_deref(), json).await
        }
        McpCommand::Prompt {
            server,
            name,
            arguments,
        } => super::mcp_prompts::get(context.settings.clone(), &server, &name, &arguments).await,
        McpCommand::Add {
            scope,
            force,
            transport,
            env,
            headers,
            cwd,
            name,
            command_or_url,
            args,
        } => {
            let definition = super::mcp_add::definition_of(super::mcp_add::AddArguments {
                transport,
                env,
                headers,
                cwd,
                command_or_url,
                args,
            })?;
            super::mcp_add::add(context, scope.layer(), &name, definition, force)
        }
        McpCommand::Remove { scope, name } => super::mcp_add::remove(context, scope, &name),
    }
}

#[cfg(feature = "mcp")]
/// `earshot mcp serve`: the session on the project's settings (the same trust rules as any
/// session), served on stdin/stdout until the client closes stdin. What did not load goes to
/// stderr and the client's log; stdout carries only the protocol.
async fn serve(context: &Context) -> CommandResult {
    let options = McpOptions {
        end_servers_on_signals: true,
        ..McpOptions::from_settings(&context.settings)
    };
    let host = HostBuilder::new(context.settings.clone())
        .hooks(super::hooks_enabled())
        .cache(ComponentCache::user())
        .mcp_options(options)
        .build()
        .await
        .map_err(|error| Failure::new(error.to_string()))?;
    for problem in host.registry().problems() {
        output::warning_line(&problem);
    }
    for notice in host.hook_notices() {
        output::warning_line(notice);
    }
    for line in host.session_start_report().lines_for_user() {
        output::warning_line(&line);
    }
    earshot_host::serve::serve_stdio(std::sync::Arc::new(host))
        .await
        .map_err(|error| Failure::new(error.to_string()))?;
    Ok(exit::OK)
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
        ServerState::NeedsLogin(reason) => reason.clone(),
        ServerState::Unresponsive(reason) => format!("unresponsive: {reason}"),
        other => format!("{other:?}"),
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
        ServerState::NeedsLogin(reason) => json!({"state": "needs-login", "reason": reason}),
        ServerState::Unresponsive(reason) => json!({"state": "unresponsive", "reason": reason}),
        other => json!({"state": format!("{other:?}")}),
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

async fn list(context: &Context, as_json: bool) -> CommandResult {
    let servers = connect(context, None).await;
    let statuses = servers.statuses();
    // Only listed: they hear EOF and get the one-shot grace, no more.
    servers.shut_down().await;
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
        output::out("no MCP servers configured (add them under mcpServers in a settings file)");
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

/// Masks everything after the first 4 characters of a value that may hold a secret.
fn mask(value: &str) -> String {
    if value.chars().count() <= 4 {
        "****".into()
    } else {
        format!("{}****", value.chars().take(4).collect::<String>())
    }
}

async fn get(context: &Context, name: &str, as_json: bool) -> CommandResult {
    // Expanded with every variable's value masked: what came from a variable never shows,
    // wherever it was used (args, url, headers); env and header values are masked whole.
    let masked_variables = |variable: &str| Context::env(variable).map(|value| mask(&value));
    // The definition that starts under this name (an untrusted local one never replaces yours),
    // decided with the real values, shown with the masked ones.
    let (used, _) = effective_entry(&context.settings, find(servers(context), name)?);
    let mut entry = find(read_servers(&context.settings, &masked_variables), name)?;
    if used.layer != entry.layer
        && let Some(user) = entry.replaces_user_entry.take()
    {
        entry = *user;
        entry.refused = used.refused;
    }
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
    let servers = connect(context, Some(name)).await;
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
    servers.shut_down().await;
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
    output::out(name);
    output::out(&format!(
        "  scope:      {}",
        scope_text(entry.layer, &entry.shadows)
    ));
    output::out(&format!("  transport:  {}", status.transport));
    output::out(&format!(
        "  state:      {}",
        sanitise_for_terminal(&state_text(&status.state), 2_000)
    ));
    output::out(&format!(
        "  definition: {}",
        // Every character shown: an invisible or control one as `⟦U+XXXX⟧`, never dropped.
        sanitise_for_terminal(
            &visible(&serde_json::to_string(&definition).expect("JSON")),
            4_000
        )
    ));
    for warning in &status.warnings {
        output::warning_line(&format!("server \"{name}\" {warning}"));
    }
    if !tools.is_empty() {
        output::out("  tools:");
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

fn trust(context: &Context, name: &str, partial: bool) -> CommandResult {
    let entry = find(servers(context), name)?;
    if entry.layer == Layer::User {
        return Err(Failure::new(format!(
            "server \"{name}\" is defined in your user settings, which start without trust"
        )));
    }
    if let Err(reason) = &entry.definition {
        return Err(
            Failure::new(format!("server \"{name}\" cannot start: {reason}"))
                .hint("fix its entry in the settings file first"),
        );
    }
    let digest = digest_for_trust(&context.settings, &entry, partial).map_err(Failure::new)?;
    record_trust_parts(
        &context.settings,
        SourceKind::Mcp,
        name,
        &digest.value,
        Some(&digest.manifest),
    )
    .map_err(|error| Failure::new(error.to_string()))?;
    output::out(&format!(
        "trusted server \"{name}\" as defined now; a change to its definition or to a project file it names lapses the trust"
    ));
    super::hooks::print_bound(&digest);
    Ok(exit::OK)
}

fn untrust(context: &Context, name: &str) -> CommandResult {
    let removed = remove_trust(&context.settings, SourceKind::Mcp, name)
        .map_err(|error| Failure::new(error.to_string()))?;
    if removed {
        output::out(&format!(
            "server \"{name}\" is no longer trusted in this project"
        ));
        Ok(exit::OK)
    } else {
        Err(Failure::new(format!(
            "server \"{name}\" has no trust record in this project"
        )))
    }
}
