//! `earshot mcp serve`: every tool a session loaded (extensions, components, and the MCP servers
//! behind it), namespaced and gated, as one MCP server. Another consumer of the host's
//! boundaries, not a bypass: the client is shown exactly what a model is shown, every call goes
//! through the gate, and the client may answer an ask (through elicitation) but never turn a deny
//! into an allow.
//!
//! * [`EarshotServer`] — the rmcp `ServerHandler` over a [`Host`], for any transport; its
//!   prompts are the session's commands and skills, expanded through the gate.
//! * `elicit_prompter` — asks the client through `elicitation/create`; anything but an explicit
//!   allow is a deny.
//! * `elicit_forward` — passes the servers' own data elicitations on to the client, introduced as
//!   the server speaking; never a permission answer.

mod elicit_forward;
mod elicit_prompter;
mod handler;

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::transport::async_rw::AsyncRwTransport;

use crate::host::Host;

pub use handler::EarshotServer;

/// Why serving ended other than by the client closing the connection.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The client did not complete the MCP handshake.
    #[error("the MCP client did not complete initialize: {0}")]
    Handshake(String),
    /// The connection failed while serving.
    #[error("serving MCP over stdio failed: {0}")]
    Transport(String),
}

/// The longest request line accepted (a longer one is dropped with a log line; the server goes on).
pub const MAX_REQUEST_BYTES: usize = 16 << 20;

/// Serves `host` over this process's stdin and stdout until the client closes stdin, then ends
/// every MCP server behind it with the grace sequence (stdin closed, SIGTERM, SIGKILL).
///
/// # Errors
/// A [`ServeError`] when the handshake or the connection fails; the servers behind are ended
/// either way.
pub async fn serve_stdio(host: Arc<Host>) -> Result<(), ServeError> {
    let transport = AsyncRwTransport::new_server(
        tokio::io::stdin(),
        crate::redact::RedactingAsyncWriter::new(tokio::io::stdout()),
    )
    .with_max_line_length(MAX_REQUEST_BYTES);
    let served = EarshotServer::new(host.clone()).serve(transport).await;
    let result = match served {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|error| ServeError::Transport(error.to_string())),
        Err(error) => Err(ServeError::Handshake(error.to_string())),
    };
    host.shutdown().await;
    result
}
