//! What a session's MCP servers report (their state, a call's outcome, start-up progress) and
//! the timeouts they start with: plain data, shared by the MCP client (earshot-mcp), the facade
//! and the command, and present in a build without the client.

use std::time::Duration;

use serde_json::Value;

use crate::settings::{Layer, Settings};

use super::config::{ServerEntry, Transport};
use super::exit::SHUTDOWN_GRACE;

/// Timeouts and back-off for a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpOptions {
    /// Start-up (spawn, initialize, tools/list) unless the entry sets `timeout`.
    pub startup_timeout: Duration,
    /// One call unless the entry sets `callTimeout`.
    pub call_timeout: Duration,
    /// The least time between a server's death and its restart.
    pub restart_backoff: Duration,
    /// End every server process group when this process gets SIGINT, SIGTERM or SIGHUP, then
    /// exit (the `earshot` binary sets it; an embedder handles its own signals).
    pub end_servers_on_signals: bool,
    /// At shutdown, how long a stdio server gets to exit after its stdin closes, and again
    /// after SIGTERM, before SIGKILL ([`SHUTDOWN_GRACE`]). One-shot commands, whose servers were
    /// only listed or have finished their calls, use [`ONE_SHOT_EXIT_GRACE`] so that the user
    /// never waits on a server's exit.
    pub exit_grace: Duration,
}

/// The exit grace of one-shot commands (`mcp list`, `tools call`, ...): the server still hears
/// EOF before any signal, but the command does not wait on a slow exit.
pub const ONE_SHOT_EXIT_GRACE: Duration = Duration::from_millis(5);

impl Default for McpOptions {
    /// 30 s start-up, 120 s per call, 1 s back-off.
    fn default() -> Self {
        McpOptions {
            startup_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(120),
            restart_backoff: Duration::from_secs(1),
            end_servers_on_signals: false,
            exit_grace: SHUTDOWN_GRACE,
        }
    }
}

impl McpOptions {
    /// The defaults, changed by `mcp.startupTimeoutSeconds` and `mcp.callTimeoutSeconds`
    /// (each at most a day).
    pub fn from_settings(settings: &Settings) -> McpOptions {
        let mut options = McpOptions::default();
        let seconds = |key: &str| {
            settings
                .tunable("mcp", key)
                .and_then(Value::as_f64)
                .filter(|value| *value > 0.0 && value.is_finite())
                .map(|value| Duration::from_secs_f64(value.min(86_400.0)))
        };
        if let Some(timeout) = seconds("startupTimeoutSeconds") {
            options.startup_timeout = timeout;
        }
        if let Some(timeout) = seconds("callTimeoutSeconds") {
            options.call_timeout = timeout;
        }
        options
    }
}

/// Where a server stands, for `mcp list` and reports.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerState {
    /// Connected, with its tools (raw JSON) and how long start-up took.
    Connected {
        /// Tools as listed.
        tools: usize,
        /// Spawn to tools listed.
        took: Duration,
    },
    /// A project server waiting for `earshot mcp trust NAME`; the text explains.
    AwaitingTrust(String),
    /// Not started (definition problem) or failed to start; the text says why.
    Failed(String),
    /// Died during the session; the text says how.
    Died(String),
    /// Admitted and connecting.
    Starting,
    /// An HTTP server that answered with an authorization challenge; the text says which
    /// command logs in.
    NeedsLogin(String),
    /// Connected, but its last call timed out and it has not answered a ping since: its calls
    /// fail at once (without holding the other servers' calls) until it does. The text says so.
    Unresponsive(String),
}

/// The longest a ping to an unresponsive server may take (at most its call timeout).
pub const UNRESPONSIVE_PING_TIMEOUT: Duration = Duration::from_secs(2);

/// The most scope step-ups (re-authorizations for a 403 `insufficient_scope`) per server in one
/// session; a call gets at most one.
pub const MAX_STEP_UPS_PER_SERVER: u32 = 3;

/// One server as `mcp list` shows it.
#[derive(Debug, Clone)]
pub struct ServerStatus {
    /// Its name.
    pub name: String,
    /// The layer whose definition is used.
    pub layer: Layer,
    /// Wider layers whose definition of the same name it replaces.
    pub shadows: Vec<Layer>,
    /// `stdio`, `http` or `-` when the definition is unusable.
    pub transport: &'static str,
    /// Its state.
    pub state: ServerState,
    /// Warnings (non-JSON output and the like).
    pub warnings: Vec<String>,
}

/// The result of a call, with a notice when the server had to be restarted first.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// The raw `CallToolResult` JSON.
    pub result: Value,
    /// `server "x" had died (…); restarted it`, when that happened.
    pub notice: Option<String>,
}

/// Progress of start-up, for a progress line.
#[derive(Debug, Clone, Copy)]
pub struct StartProgress<'a> {
    /// The server that just finished (connected or failed).
    pub finished: &'a str,
    /// How many have finished.
    pub done: usize,
    /// How many are starting.
    pub total: usize,
}

/// `stdio`, `http`, or `-` for an unusable definition.
pub fn transport_name(entry: &ServerEntry) -> &'static str {
    match &entry.definition {
        Ok(definition) => match definition.transport {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        },
        Err(_) => "-",
    }
}

/// `30s`, `1.5s` or `250ms`.
pub fn seconds(duration: Duration) -> String {
    if duration.as_millis() < 1000 {
        format!("{}ms", duration.as_millis())
    } else if duration.as_millis().is_multiple_of(1000) {
        format!("{}s", duration.as_secs())
    } else {
        format!("{:.1}s", duration.as_secs_f64())
    }
}
