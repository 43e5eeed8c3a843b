//! earshot's side of an MCP session: who it says it is, the project as its one root (`roots/list`:
//! a server of the user's own starts outside the project and learns where the project is from
//! here), and the one notification it acts on (`notifications/tools/list_changed`). It declares
//! no sampling or elicitation.
//!
//! Roots are deprecated by the draft that follows protocol 2025-11-25 (SEP-2577), which is the
//! version earshot negotiates; rmcp marks the types deprecated, hence the `allow` below. Servers of
//! that version still ask for roots to learn the workspace.
#![allow(deprecated)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::ClientHandler;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ListRootsResult, ProtocolVersion, Root,
    RootsCapabilities,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};

/// The client handler of one connection.
#[derive(Clone, Default)]
pub struct EarshotClient {
    tools_changed: Arc<AtomicBool>,
    /// The project as a `file://` URI, when there is a project.
    root: Option<Arc<str>>,
}

impl EarshotClient {
    /// A handler with no change pending, offering `project_root` as the session's root.
    pub fn new(project_root: Option<&Path>) -> EarshotClient {
        EarshotClient {
            tools_changed: Arc::default(),
            root: project_root.map(|root| Arc::from(file_uri(root).as_str())),
        }
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
        let mut capabilities = ClientCapabilities::default();
        if self.root.is_some() {
            capabilities.roots = Some(RootsCapabilities::default());
        }
        ClientConfig::new(
            capabilities,
            Implementation::new("earshot", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::Release);
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, McpError> {
        Ok(ListRootsResult::new(
            self.root
                .iter()
                .map(|uri| Root::new(uri.to_string()).with_name("project"))
                .collect(),
        ))
    }
}

/// `file://` URI of an absolute path, percent-encoding what a URI path may not hold.
fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}
