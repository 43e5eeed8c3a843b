//! `earshot tools list` (what a model would be shown, and the MCP tools behind `tool_search`)
//! and `earshot tools call NAME JSON|-|@FILE` (the user's own call by exact name, through the
//! gate, starting only the server the tool needs).

use parking_lot::Mutex;
use std::io::IsTerminal;
use std::sync::Arc;

use clap::Subcommand;
use serde_json::json;

use earshot_host::gate::{NonInteractivePrompter, Prompter, TerminalPrompter, strip_for_terminal};
use earshot_host::host::{Host, HostBuilder, McpStart, ModelTool};
use earshot_host::mcp::{
    CallProgress, MAX_SEARCH_RESULTS, McpOptions, ONE_SHOT_EXIT_GRACE, TOOL_SEARCH_NAME,
    TerminalElicitor, read_servers, shown_name,
};
use earshot_host::names::SourceKind;
use earshot_host::sandbox::ComponentCache;
use earshot_host::{CallError, FailureCause};

use super::progress::ProgressLine;
use super::tool_input::read_tool_input;
use super::{CommandResult, Context, Failure, exit, output};

#[derive(Debug, Subcommand)]
pub(crate) enum ToolsCommand {
    /// What a model would be shown: each tool's name, source, access as the gate sees it
    /// (read-only runs without asking) and description; `--json` adds each input schema. Past
    /// 25 MCP tools, also the MCP tools behind `tool_search`, marked so (callable by name).
    List {
        /// Print JSON, with each tool's input schema. `read_only` is what the gate believes (never
        /// true for an MCP tool); an MCP server's readOnlyHint is `claims_read_only`.
        #[arg(long)]
        json: bool,
    },
    /// Call a tool by its exact name through the permission gate (also one behind
    /// `tool_search`). Asks on a terminal; denies otherwise unless a rule allows it. Starts only
    /// the named tool's MCP server (none for an extension's or a component's tool).
    Call {
        /// The tool's name as `tools list` shows it (`source__tool`).
        name: String,
        /// The input: JSON, `-` to read it from standard input, or `@FILE` to read it from a
        /// file (at most 16 MiB).
        #[arg(default_value = "{}", value_name = "JSON|-|@FILE")]
        input: String,
        /// Run `tool_search` with this query first in the same session, as a model would, and
        /// say what it surfaced (starts every server).
        #[arg(long, value_name = "QUERY")]
        search: Option<String>,
    },
}

pub(crate) async fn run(context: Context, command: ToolsCommand) -> CommandResult {
    let (host, result) = match command {
        ToolsCommand::List { json } => {
            let host = load_host(context.settings, McpStart::All).await?;
            let result = list(&host, json).await;
            (host, result)
        }
        ToolsCommand::Call {
            name,
            input,
            search,
        } => {
            // Read and checked before anything starts.
            let input = read_tool_input(&input)?;
            let start = match search {
                Some(_) => McpStart::All,
                None => {
                    let value = serde_json::from_str(&input).unwrap_or_default();
                    McpStart::for_call(&context.settings, &Context::env, &name, &value)
                }
            };
            let host = load_host(context.settings, start).await?;
            let result = match search {
                Some(query) => match surface(&host, &query).await {
                    Ok(()) => call(&host, &name, &input).await,
                    Err(failure) => Err(failure),
                },
                None => call(&host, &name, &input).await,
            };
            (host, result)
        }
    };
    // The work is done: the servers hear EOF and get the one-shot grace, no more.
    host.shutdown().await;
    result
}

/// The session's host for a one-shot command: every source loaded, the MCP servers `start`
/// names started with the progress line on stderr, problems listed, servers ended on Ctrl-C,
/// elicitations and scope step-ups asked on the terminal when there is one (declined
/// otherwise).
pub(crate) async fn load_host(
    settings: earshot_host::settings::Settings,
    start: McpStart,
) -> Result<Host, Failure> {
    // A build without the MCP client starts none (each is reported as a problem below).
    let servers = if cfg!(feature = "mcp") {
        read_servers(&settings, &Context::env)
            .iter()
            .filter(|entry| start.includes(&entry.name))
            .count()
    } else {
        0
    };
    let progress = Arc::new(Mutex::new(ProgressLine::start(servers)));
    let options = McpOptions {
        end_servers_on_signals: true,
        exit_grace: ONE_SHOT_EXIT_GRACE,
        ..McpOptions::from_settings(&settings)
    };
    let reporting = progress.clone();
    #[cfg(feature = "mcp")]
    let browser = super::mcp_login::browser(&settings);
    let mut builder = HostBuilder::new(settings);
    let on_terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if on_terminal {
        builder = builder.elicitor(Arc::new(TerminalElicitor::stdio()));
    }
    if std::io::stderr().is_terminal() {
        builder = builder.call_progress(Arc::new(show_call_progress));
    }
    let host = builder
        .mcp_start(start)
        .hooks(super::hooks_enabled())
        .cache(ComponentCache::user())
        .mcp_options(options)
        .progress(move |step| reporting.lock().update(step))
        .build()
        .await
        .map_err(|error| Failure::new(error.to_string()))?;
    progress.lock().finish();
    // Someone is there to log in again when a server asks for more scopes; otherwise such a
    // call fails with the command that grants them.
    #[cfg(feature = "mcp")]
    if on_terminal && let Some(servers) = host.mcp() {
        servers.allow_step_up(browser);
    }
    for problem in host.registry().problems() {
        output::warning_line(&problem);
    }
    for notice in host.hook_notices() {
        output::warning_line(notice);
    }
    for line in host.session_start_report().lines_for_user() {
        output::warning_line(&line);
    }
    Ok(host)
}

/// A server's progress on the call in flight, as one line on the terminal, rewritten in place
/// (cleared when the call ends).
fn show_call_progress(progress: &CallProgress) {
    // Never drawn over a question someone is answering.
    if earshot_host::gate::terminal_busy() {
        return;
    }
    let amount = match progress.total {
        Some(total) if total > 0.0 => format!("{:.0}%", progress.progress / total * 100.0),
        _ => format!("{}", progress.progress),
    };
    let message = progress.message.as_deref().unwrap_or("");
    eprint!(
        "\r\x1b[2K{}: {amount} {}",
        shown_name(&progress.server),
        shown_name(message)
    );
}

/// Runs `tool_search` first, as a model would, and says what it surfaced.
async fn surface(host: &Host, query: &str) -> Result<(), Failure> {
    if !host.tool_search_active().await {
        return Err(Failure::new(
            "--search applies only when tool_search is offered (more than 25 MCP tools)",
        )
        .code(exit::USAGE));
    }
    let input = json!({ "query": query, "limit": MAX_SEARCH_RESULTS }).to_string();
    let found = host
        .call(TOOL_SEARCH_NAME, &input, &NonInteractivePrompter)
        .await
        .map_err(|error| Failure::new(error.to_string()))?;
    let names: Vec<String> = serde_json::from_str::<serde_json::Value>(&found.output)
        .ok()
        .and_then(|value| value.get("tools").cloned())
        .and_then(|tools| tools.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|tool| {
            tool.get("name")
                .and_then(|name| name.as_str())
                .map(str::to_string)
        })
        .collect();
    if names.is_empty() {
        output::note(
            "tool_search surfaced nothing for those words (a tool named exactly is called without a search)",
        );
    } else {
        output::note(&format!("tool_search surfaced: {}", names.join(", ")));
    }
    Ok(())
}

async fn list(host: &Host, as_json: bool) -> CommandResult {
    let tools = host.model_tools().await;
    let behind = host.tools_behind_search().await;
    if as_json {
        let tools: Vec<serde_json::Value> = tools.iter().map(ModelTool::to_shown_json).collect();
        let behind: Vec<serde_json::Value> = behind.iter().map(ModelTool::to_shown_json).collect();
        output::json(&json!({ "tools": tools, "behind_tool_search": behind }));
        return Ok(exit::OK);
    }
    if tools.is_empty() {
        output::out(
            "no tools: nothing is loaded (see `earshot mcp list`, `earshot extensions list`, `earshot plugins list`)",
        );
        return Ok(exit::OK);
    }
    let row = |tool: &earshot_host::host::ModelTool, hidden: bool| {
        let access = match (tool.kind, tool.read_only) {
            (Some(SourceKind::Mcp), true) => "claims read-only (not believed)",
            (_, true) => "read-only",
            _ => "-",
        };
        let source = tool.kind.map_or("earshot", |kind| kind.noun());
        vec![
            tool.name.clone(),
            if hidden {
                format!("{source}, behind tool_search")
            } else {
                source.to_string()
            },
            access.to_string(),
            tool.description.clone(),
        ]
    };
    let rows: Vec<Vec<String>> = tools
        .iter()
        .map(|tool| row(tool, false))
        .chain(behind.iter().map(|tool| row(tool, true)))
        .collect();
    output::table(&["NAME", "SOURCE", "ACCESS", "DESCRIPTION"], &rows);
    if !behind.is_empty() {
        output::note(&format!(
            "{} MCP tools are behind tool_search: a model finds them by searching; `earshot tools call NAME` calls one by its name",
            behind.len()
        ));
    }
    Ok(exit::OK)
}

async fn call(host: &Host, name: &str, input: &str) -> CommandResult {
    let prompter: Box<dyn Prompter> =
        if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            Box::new(TerminalPrompter::stdio())
        } else {
            Box::new(NonInteractivePrompter)
        };
    // The user typed this name: it is called even behind tool_search, and gated as always.
    let answer = host.call_by_user(name, input, prompter.as_ref()).await;
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2K");
    }
    match answer {
        Ok(result) => {
            if let Some(notice) = &result.notice {
                output::warning_line(notice);
            }
            if let Some(title) = &result.title {
                output::note(&format!("title: {}", strip_for_terminal(title)));
            }
            output::out(&strip_for_terminal(&result.output));
            if result.is_error {
                Err(Failure::new(format!("{name} reported an error")).code(exit::TOOL_ERROR))
            } else {
                Ok(exit::OK)
            }
        }
        Err(error @ CallError::Denied(_)) => {
            Err(Failure::new(error.to_string()).code(exit::DENIED))
        }
        Err(error @ CallError::UnknownTool(_)) => {
            Err(Failure::new(error.to_string()).code(exit::NO_TOOL))
        }
        Err(error @ CallError::InvalidInput { .. }) => {
            Err(Failure::new(error.to_string()).code(exit::TOOL_ERROR))
        }
        // What a model is shown of a throw: the error, located, as the tool's output.
        Err(CallError::Failed {
            message,
            cause: FailureCause::ExtensionThrew { .. },
        }) => {
            output::out(&strip_for_terminal(&message));
            Err(Failure::new(format!("{name} reported an error")).code(exit::TOOL_ERROR))
        }
        Err(error) => Err(Failure::new(error.to_string())),
    }
}
