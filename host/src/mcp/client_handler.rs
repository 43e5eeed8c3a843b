//! earshot's side of an MCP session: who it says it is, and the one notification it acts on
//! (`notifications/tools/list_changed`). It declares no roots, sampling or elicitation: a server
//! gets nothing from earshot but tool calls.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{NotificationContext, RoleClient};

/// The client handler of one connection.
#[derive(Clone, Default)]
pub struct EarshotClient {
    tools_changed: Arc<AtomicBool>,
}

impl EarshotClient {
    /// A handler with no change pending.
    pub fn new() -> EarshotClient {
        EarshotClient::default()
    }

    /// Sets the flag again (a refresh that failed is retried).
    pub fn mark_tools_changed(&self) {
        self.tools_changed.store(true, Ordering::Release);
    }

    /// Whether the server said its tools changed since the last call; clears the flag.
    pub fn take_tools_changed(&self) -> bool {
        self.tools_changed.swap(false, Ordering::AcqRel)
    }
}

impl ClientHandler for EarshotClient {
    fn get_info(&self) -> ClientConfig {
        // The latest released protocol version with an initialize handshake; rmcp's default
        // (2026-07-28) is a draft that released servers and the conformance suite refuse.
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("earshot", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::Release);
    }
}
