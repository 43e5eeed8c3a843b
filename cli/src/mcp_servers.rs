//! What the `earshot mcp` commands share: the configured servers found by name, connected with a
//! progress line, or chosen for a command about one server; and the scope and transport
//! arguments. Its own module so that each command's module uses it without reaching back into
//! the `mcp` dispatcher.

use earshot_host::host::McpStart;
#[cfg(feature = "mcp")]
use earshot_host::mcp::{McpOptions, McpServers, ONE_SHOT_EXIT_GRACE};
use earshot_host::mcp::{ServerEntry, read_servers, shown_name};
use earshot_host::settings::Layer;

#[cfg(feature = "mcp")]
use super::progress::ProgressLine;
use super::{Context, Failure};

/// A settings file named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ScopeArg {
    /// `.earshot/settings.local.json`: yours, this project only.
    Local,
    /// `settings.json` in your config dir: every project.
    User,
    /// `.earshot/settings.json`: checked in, shared with the repository.
    Project,
}

impl ScopeArg {
    /// The settings layer this names.
    pub(crate) fn layer(self) -> Layer {
        match self {
            ScopeArg::Local => Layer::Local,
            ScopeArg::User => Layer::User,
            ScopeArg::Project => Layer::Project,
        }
    }
}

/// A server's transport, as `mcp add` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TransportArg {
    /// A command speaking MCP on stdin/stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
}

/// Every configured server entry, `${VAR}` expanded from the environment.
pub(crate) fn servers(context: &Context) -> Vec<ServerEntry> {
    read_servers(&context.settings, &Context::env)
}

/// Connects to every admitted server (or just `only`), with a progress line on a terminal.
#[cfg(feature = "mcp")]
pub(crate) async fn connect(context: &Context, only: Option<&str>) -> McpServers {
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
            exit_grace: ONE_SHOT_EXIT_GRACE,
            ..McpOptions::from_settings(&context.settings)
        },
        only,
        &mut |step| progress.update(step),
    )
    .await;
    progress.finish();
    servers
}

/// In a build without the MCP client: every configured server (or just `only`), each reported as
/// one this build cannot start.
#[cfg(not(feature = "mcp"))]
pub(crate) async fn connect(context: &Context, only: Option<&str>) -> Unstarted {
    let statuses = servers(context)
        .into_iter()
        .filter(|entry| only.is_none_or(|name| entry.name == name))
        .map(|entry| earshot_host::ServerStatus {
            transport: earshot_host::mcp::transport_name(&entry),
            name: entry.name,
            layer: entry.layer,
            shadows: entry.shadows,
            state: earshot_host::ServerState::Failed(
                earshot_host::loaders::no_mcp::NO_MCP_CLIENT.into(),
            ),
            warnings: Vec::new(),
        })
        .collect();
    Unstarted { statuses }
}

/// The configured servers of a build without the MCP client, none of them started.
#[cfg(not(feature = "mcp"))]
pub(crate) struct Unstarted {
    statuses: Vec<earshot_host::ServerStatus>,
}

#[cfg(not(feature = "mcp"))]
impl Unstarted {
    /// Each server, with the state that says why it did not start.
    pub(crate) fn statuses(&self) -> Vec<earshot_host::ServerStatus> {
        self.statuses.clone()
    }

    /// No tools: nothing started.
    pub(crate) fn tools_of(&self, _server: &str) -> Vec<serde_json::Value> {
        Vec::new()
    }

    /// Nothing to shut down.
    pub(crate) async fn shut_down(&self) {}
}

/// The entry named `name`, or the one-line error that says so.
pub(crate) fn find(entries: Vec<ServerEntry>, name: &str) -> Result<ServerEntry, Failure> {
    entries
        .into_iter()
        .find(|entry| entry.name == name)
        .ok_or_else(|| no_such_server(name))
}

/// The one line for a server name no settings file configures.
pub(crate) fn no_such_server(name: &str) -> Failure {
    Failure::new(format!(
        "no MCP server named \"{}\" in any settings file; `earshot mcp list` shows what is configured",
        shown_name(name)
    ))
}

/// What to start for a command about `server` alone: that server, or (for none) every one. A
/// server no settings file configures is reported at once, before anything starts.
pub(crate) fn start_for(
    settings: &earshot_host::Settings,
    server: Option<&str>,
) -> Result<McpStart, Failure> {
    let Some(server) = server else {
        return Ok(McpStart::All);
    };
    if read_servers(settings, &Context::env)
        .iter()
        .any(|entry| entry.name == server)
    {
        return Ok(McpStart::server(server));
    }
    Err(no_such_server(server))
}
