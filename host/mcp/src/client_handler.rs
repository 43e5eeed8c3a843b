//! earshot's side of an MCP session: who it says it is, the project as its one root (`roots/list`:
//! a server of the user's own starts outside the project and learns where the project is from
//! here), elicitation in form mode (answered by the session's elicitor, checked before it goes
//! back), and the one notification it acts on (`notifications/tools/list_changed`). It declares
//! no sampling.
//!
//! Roots are deprecated by the draft that follows protocol 2025-11-25 (SEP-2577), which is the
//! version earshot negotiates; rmcp marks the types deprecated, hence the `allow` below. Servers of
//! that version still ask for roots to learn the workspace.
#![allow(deprecated)]

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rmcp::ClientHandler;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, ListRootsResult,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    Root, RootsCapabilities,
};

use super::elicitation::{ElicitationAnswer, ElicitationRequest, ElicitorSlot};
use super::notifications::{ProgressSlot, ServerNotices};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};

/// The client handler of one connection.
#[derive(Clone, Default)]
pub struct EarshotClient {
    tools_changed: Arc<AtomicBool>,
    /// The project as a `file://` URI, when there is a project.
    root: Option<Arc<str>>,
    /// The server's name in settings, for whoever answers its elicitations.
    server: Arc<str>,
    /// Who answers its elicitations.
    elicitor: ElicitorSlot,
    /// When its recent elicitations came, to stop a server that asks in a loop.
    elicited: Arc<Mutex<VecDeque<Instant>>>,
    /// Where its progress and log messages go.
    notices: ServerNotices,
    /// The progress tokens of earshot's requests to this server now in flight: a server may
    /// elicit or report progress only while one is (never during a permission prompt, never
    /// for a request that is not its own).
    in_flight: Arc<Mutex<Vec<ProgressToken>>>,
    /// Requests of earshot's to this server from just before they are sent until answered
    /// (counted before rmcp assigns their tokens, so a fast server's form is never refused).
    sending: Arc<AtomicUsize>,
}

/// Counts one request to the server from before it is sent until dropped.
pub struct Sending(Arc<AtomicUsize>);

impl Drop for Sending {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Marks one request to the server as in flight until dropped.
pub struct InFlight {
    tokens: Arc<Mutex<Vec<ProgressToken>>>,
    token: ProgressToken,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut tokens = self.tokens.lock();
        if let Some(at) = tokens.iter().position(|token| *token == self.token) {
            tokens.remove(at);
        }
    }
}

/// The most elicitations one server may put to the user within [`ELICITATION_WINDOW`]; past
/// that its requests are declined without asking, so a server that asks in a loop costs only
/// itself.
pub const MAX_ELICITATIONS: usize = 5;

/// The window [`MAX_ELICITATIONS`] counts in.
pub const ELICITATION_WINDOW: Duration = Duration::from_secs(60);

impl EarshotClient {
    /// A handler for `server` with no change pending, offering `project_root` as the session's
    /// root and `elicitor`'s answers to its elicitations.
    pub fn new(
        project_root: Option<&Path>,
        server: &str,
        elicitor: ElicitorSlot,
        progress: ProgressSlot,
    ) -> EarshotClient {
        EarshotClient {
            tools_changed: Arc::default(),
            root: project_root.map(|root| Arc::from(file_uri(root).as_str())),
            server: Arc::from(server),
            elicitor,
            elicited: Arc::default(),
            notices: ServerNotices::new(server, progress),
            in_flight: Arc::default(),
            sending: Arc::default(),
        }
    }

    /// Counts a request about to be sent until the guard is dropped.
    pub fn sending(&self) -> Sending {
        self.sending.fetch_add(1, Ordering::AcqRel);
        Sending(self.sending.clone())
    }

    /// Marks the request with progress token `token` as in flight until the guard is dropped.
    pub fn request_started(&self, token: &ProgressToken) -> InFlight {
        self.in_flight.lock().push(token.clone());
        InFlight {
            tokens: self.in_flight.clone(),
            token: token.clone(),
        }
    }

    /// Whether a request of earshot's to this server is in flight (with `token`, when given).
    fn requesting(&self, token: Option<&ProgressToken>) -> bool {
        let tokens = self.in_flight.lock();
        match token {
            Some(token) => tokens.contains(token),
            None => !tokens.is_empty() || self.sending.load(Ordering::Acquire) > 0,
        }
    }

    /// Sets the flag again (a refresh that failed is retried).
    pub fn mark_tools_changed(&self) {
        self.tools_changed.store(true, Ordering::Release);
    }

    /// The flag behind [`EarshotClient::take_tools_changed`], for a transport that sees the
    /// announcement before the handler does.
    pub fn tools_changed_flag(&self) -> Arc<AtomicBool> {
        self.tools_changed.clone()
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
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        ClientConfig::new(
            capabilities,
            Implementation::new("earshot", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::Release);
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // Only for a request of ours now in flight: anything else is a server talking out of
        // turn (perhaps over a permission prompt).
        if self.requesting(Some(&params.progress_token)) {
            self.notices.progress(
                &params.progress_token,
                params.progress,
                params.total,
                params.message.as_deref(),
            );
        }
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level).unwrap_or_default();
        self.notices.log(
            level.as_str().unwrap_or("info"),
            params.logger.as_deref(),
            &params.data,
        );
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            // URL mode is not declared; a server that asks anyway is declined.
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
        let request = match ElicitationRequest::from_schema(&self.server, &message, &schema) {
            Ok(request) => request,
            Err(why) => {
                tracing::warn!(server = %self.server, "declined an elicitation: {why}");
                return Ok(ElicitResult::new(ElicitationAction::Decline));
            }
        };
        if !self.requesting(None) {
            tracing::warn!(server = %self.server, "declined an elicitation sent while no request to it was in flight");
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        }
        if !self.may_elicit() {
            tracing::warn!(server = %self.server, "declined an elicitation without asking: more than {MAX_ELICITATIONS} in {}s", ELICITATION_WINDOW.as_secs());
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        }
        let elicitor = self.elicitor.current();
        // The server may cancel its own request (or the call ends): the form is given up.
        let answer = tokio::select! {
            answer = elicitor.elicit(&request) => answer,
            _ = context.ct.cancelled() => ElicitationAnswer::Cancel,
        };
        Ok(match answer {
            ElicitationAnswer::Accept(answer) => match request.check(&answer) {
                Ok(content) => ElicitResult::new(ElicitationAction::Accept)
                    .with_content(serde_json::Value::Object(content)),
                Err(why) => {
                    tracing::warn!(server = %self.server, "declined an elicitation whose answer does not fit its form: {why}");
                    ElicitResult::new(ElicitationAction::Decline)
                }
            },
            ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
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

impl EarshotClient {
    /// Counts one more elicitation; false when the server is over its allowance.
    fn may_elicit(&self) -> bool {
        let mut recent = self.elicited.lock();
        let now = Instant::now();
        while recent
            .front()
            .is_some_and(|at| now.duration_since(*at) > ELICITATION_WINDOW)
        {
            recent.pop_front();
        }
        if recent.len() >= MAX_ELICITATIONS {
            return false;
        }
        recent.push_back(now);
        true
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
