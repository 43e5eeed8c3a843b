//! earshot-mcp: the MCP client of earshot-host. Connections to MCP servers with rmcp, over a
//! child's stdio (through a byte-capped reader, in its own process group) or streamable HTTP
//! (with OAuth logins, refresh and step-up), one session's servers started concurrently with
//! serialised calls and restarts, and an MCP tool behind the dispatch seam ([`McpRunner`]).
//!
//! What needs no protocol (configuration, admission and trust digests, a server's state,
//! elicitation forms, prompts and resources as the host shows them, `tool_search`) is
//! earshot-core's `mcp`; the facade (earshot-host) re-exports both as one `mcp` module, and
//! leaves this crate out when its `mcp` feature is off.
//!
//! * `servers` — one session's servers: concurrent start-up, serialised calls, restarts.
//! * `connection` — one rmcp session: initialize, tools/list, tools/call, close.
//! * `client_handler` — what the client answers a server: elicitation, roots, progress, logs.
//! * `stdio` / `process_group` / `spawner` — the child process, its pipes, its group, and the one
//!   thread that forks every stdio server.
//! * `in_flight` — requests still waiting on a server, cancelled when the process ends.
//! * `tool_runner` — an MCP tool behind the dispatch seam; its result normalised in the
//!   mcp-output sandbox.
//! * `http` — the streamable HTTP transport.
//! * [`oauth`] — logins, tokens and refresh for HTTP servers that require OAuth.

mod client_handler;
mod connection;
mod http;
mod in_flight;
pub mod oauth;
mod process_group;
mod servers;
mod spawner;
mod stdio;
mod tool_runner;

// The core's modules, under the names this crate's code has always used.
use earshot_core::mcp::{
    admission, child_env, config, elicitation, exit, notifications, shown_name, start_hints,
    status, stderr_tail,
};
use earshot_core::{names, runner, sandbox, settings, tls};

pub use connection::{CallFailure, ConnectError};
pub use in_flight::cancel_in_flight;
pub use process_group::{end_all_groups, ending_on_signal};
pub use servers::McpServers;
pub use stdio::MAX_MESSAGE_BYTES;
pub use tool_runner::McpRunner;
