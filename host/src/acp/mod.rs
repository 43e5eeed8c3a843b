//! `earshot acp`: the host as an ACP (Agent Client Protocol) agent, so an editor such as Zed can
//! drive plugins. Another consumer of the host's boundaries, not a bypass around them: it owns no
//! permission logic. Every call goes through [`Host::call`](crate::Host::call) (the gate first);
//! the editor answers only the asks (through `session/request_permission`) and can never turn a
//! deny into an allow; MCP servers come from the project's settings under its trust rules, and
//! the editor's own server definitions are screened (stdio never spawned).
//!
//! * `agent` — [`AcpAgent`]: initialize, sessions (one [`Host`](crate::Host) per session cwd),
//!   the commands offered after `/`, prompts (a `/name` of a command or skill expanded through
//!   the gate first), cancel.
//! * `prompter` — [`AcpPrompter`]: an ask as three freshly-named options; anything else denies.
//! * `session_mcp` — [`screen_session_mcp`]: which of the editor's MCP servers may join.
//! * `turn` — [`TurnDriver`] (the model loop) and [`SessionTools`] (calls with notifications).
//! * `console` — [`ConsoleDriver`], the driver `earshot acp` ships: `/tools`, `/call NAME JSON`.

mod agent;

use agent_client_protocol::ConnectTo;
mod console;
mod prompter;
mod session_mcp;
mod turn;

pub use agent::{AcpAgent, AcpConfig};
pub use console::ConsoleDriver;
pub use prompter::AcpPrompter;
pub use session_mcp::{Rejection, RejectionKind, SessionMcpPlan, screen_session_mcp};
pub use turn::{SessionTools, TurnCall, TurnDriver};

/// Why `earshot acp` stopped other than by the editor closing the connection.
#[derive(Debug, thiserror::Error)]
#[error("the ACP connection failed: {0}")]
pub struct AcpError(String);

/// Serves `agent` over this process's stdin and stdout until the editor closes stdin, then ends
/// every session's MCP servers. Every line written is redacted first ([`crate::redact`]).
///
/// # Errors
/// An [`AcpError`] when the connection fails; the servers are ended either way.
pub async fn serve_stdio(agent: AcpAgent) -> Result<(), AcpError> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let incoming = futures::stream::unfold(
        tokio::io::BufReader::new(tokio::io::stdin()).lines(),
        |mut lines| async move {
            match lines.next_line().await {
                Ok(Some(line)) => Some((Ok(line), lines)),
                Ok(None) => None,
                Err(error) => Some((Err(error), lines)),
            }
        },
    );
    let outgoing =
        futures::sink::unfold(tokio::io::stdout(), |mut stdout, line: String| async move {
            let mut bytes = crate::redact::redact(&line).into_owned().into_bytes();
            bytes.push(b'\n');
            stdout.write_all(&bytes).await?;
            stdout.flush().await?;
            Ok::<_, std::io::Error>(stdout)
        });
    let served = agent
        .connection()
        .connect_to(agent_client_protocol::Lines::new(
            Box::pin(outgoing),
            Box::pin(incoming),
        ))
        .await;
    agent.shutdown().await;
    served.map_err(|error| AcpError(error.to_string()))
}
