//! One live MCP session over either transport: connect (start-up timeout included), list tools as
//! raw JSON (so one malformed tool cannot hide the others), call a tool with a timeout, and close
//! (stdin, then the process group).

use parking_lot::Mutex;
use std::path::Path;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, GetPromptRequest,
    GetPromptRequestParams, ListPromptsRequest, ListResourceTemplatesRequest, ListResourcesRequest,
    ListToolsRequest, PaginatedRequestParams, PingRequest, ReadResourceRequest,
    ReadResourceRequestParams,
};
use rmcp::service::{PeerRequestOptions, RoleClient, RunningService, ServiceError};
use serde_json::Value;

use super::client_handler::EarshotClient;
use super::config::{ServerDefinition, Transport};
use super::exit::SHUTDOWN_GRACE;
use super::http::{http_client, http_config};
use super::in_flight::CancelIfAbandoned;
use super::oauth::{Challenge, OAuthTarget, authorized_client};
use super::status::seconds;
use super::stderr_tail::shorten;
use super::stdio::{Ending, GroupShutdown, PipeReport, spawn_stdio};
use rmcp::service::ClientInitializeError;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClient;

/// The most tools one server may list.
pub const MAX_TOOLS_PER_SERVER: usize = 1000;

/// The most `tools/list` pages followed.
const MAX_PAGES: usize = 50;

/// The most bytes of tool definitions kept from one server (all pages together).
pub const MAX_TOOL_LIST_BYTES: usize = 8 << 20;

/// What a paged listing lists.
#[derive(Clone, Copy)]
enum Listing {
    Tools,
    Prompts,
    Resources,
    ResourceTemplates,
}

impl Listing {
    /// The method and the key of the list in each page.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Listing::Tools => ("tools/list", "tools"),
            Listing::Prompts => ("prompts/list", "prompts"),
            Listing::Resources => ("resources/list", "resources"),
            Listing::ResourceTemplates => ("resources/templates/list", "resourceTemplates"),
        }
    }
}

/// How a call failed, for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallFailure {
    /// No answer within the call timeout; the server is still connected.
    #[error("did not answer within {0}")]
    TimedOut(String),
    /// The connection ended (the process died, flooded, or the HTTP session broke).
    #[error("{}", .0.sentence(""))]
    Ended(Ending),
    /// The server answered with a JSON-RPC error.
    #[error("answered with an error: {0}")]
    Refused(String),
    /// The server answered 401 or 403 with this challenge: it needs a login, or (a 403
    /// `insufficient_scope`) more scopes than the login granted.
    #[error("asked for authorization")]
    NeedsAuthorization(Challenge),
}

/// Why a connection could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectError {
    /// One line saying what happened (without the server's name).
    Failed(String),
    /// The server asked for authorization (at initialize or its first listing).
    NeedsLogin(Challenge),
}

impl From<String> for ConnectError {
    fn from(reason: String) -> ConnectError {
        ConnectError::Failed(reason)
    }
}

/// A connected server.
pub struct Connection {
    service: RunningService<RoleClient, EarshotClient>,
    handler: EarshotClient,
    child: Option<(PipeReport, GroupShutdown)>,
    ended: Mutex<Option<Ending>>,
    /// The HTTP server's URL (challenges are read relative to it).
    url: Option<String>,
    /// The last authorization challenge a request met.
    challenged: Mutex<Option<Challenge>>,
    /// The stdio server's process id.
    pub pid: Option<u32>,
}

/// A connection with its first tool list and how long both took.
pub struct Connected {
    /// The session.
    pub connection: Connection,
    /// Its tools, as raw JSON objects.
    pub tools: Vec<Value>,
    /// Time from start to tools listed.
    pub took: Duration,
}

/// Starts (or connects to) the server in `cwd` and lists its tools, all within `timeout`. The
/// project (when there is one) is the server's one MCP root.
///
/// An HTTP server is authorized through `oauth` when given (its stored token, refreshed as
/// needed); a server that answers with a challenge is [`ConnectError::NeedsLogin`].
///
/// # Errors
/// One line (without the server's name) saying what happened, with how its stderr ended.
pub async fn connect(
    definition: &ServerDefinition,
    cwd: &Path,
    handler: EarshotClient,
    timeout: Duration,
    oauth: Option<&OAuthTarget>,
) -> Result<Connected, ConnectError> {
    let started = Instant::now();
    let (service, child, pid) = match &definition.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd: own_cwd,
        } => {
            let dir = own_cwd
                .as_deref()
                .map(|own| cwd.join(own))
                .unwrap_or_else(|| cwd.to_path_buf());
            let child = spawn_stdio(command, args, env, &dir)
                .await
                .map_err(ConnectError::Failed)?;
            let report = child.report.clone();
            let transport = child
                .transport
                .marking_tools_changed(handler.tools_changed_flag());
            match tokio::time::timeout(timeout, handler.clone().serve(transport)).await {
                Ok(Ok(service)) => (service, Some((report, child.shutdown)), child.pid),
                Ok(Err(error)) => {
                    let ending = settled_ending(&report).await;
                    child.shutdown.shut_down(SHUTDOWN_GRACE).await;
                    return Err(ConnectError::Failed(match ending {
                        Some(ending) => ending.sentence(" before answering initialize"),
                        None => format!(
                            "failed during initialize: {}{}",
                            one_line(&error.to_string()),
                            report.stderr.report_suffix()
                        ),
                    }));
                }
                Err(_) => {
                    child.shutdown.shut_down(SHUTDOWN_GRACE).await;
                    return Err(ConnectError::Failed(format!(
                        "did not answer initialize within {}{}",
                        seconds(timeout),
                        report.stderr.report_suffix()
                    )));
                }
            }
        }
        Transport::Http { url, headers, .. } => {
            let config = http_config(url, headers)?;
            let service = match oauth {
                Some(target) => {
                    let client = authorized_client(url, target, http_client()?).await?;
                    let transport = StreamableHttpClientTransport::with_client(client, config);
                    serve_http(&handler, transport, url, timeout).await?
                }
                None => {
                    let transport =
                        StreamableHttpClientTransport::with_client(http_client()?, config);
                    serve_http(&handler, transport, url, timeout).await?
                }
            };
            (service, None, None)
        }
    };
    let url = match &definition.transport {
        Transport::Http { url, .. } => Some(url.clone()),
        Transport::Stdio { .. } => None,
    };
    let connection = Connection {
        service,
        handler,
        child,
        ended: Mutex::new(None),
        url,
        challenged: Mutex::new(None),
        pid,
    };
    // The server may announce a change right after initialize; the list below is current.
    connection.handler.take_tools_changed();
    let remaining = timeout.saturating_sub(started.elapsed());
    match tokio::time::timeout(remaining, connection.list_tools()).await {
        Ok(Ok(tools)) => Ok(Connected {
            connection,
            tools,
            took: started.elapsed(),
        }),
        Ok(Err(error)) => {
            let challenge = connection.take_challenge();
            connection.close(SHUTDOWN_GRACE).await;
            Err(match challenge {
                Some(challenge) => ConnectError::NeedsLogin(challenge),
                None => ConnectError::Failed(error),
            })
        }
        Err(_) => {
            let suffix = connection.stderr_suffix();
            connection.close(SHUTDOWN_GRACE).await;
            Err(ConnectError::Failed(format!(
                "did not list its tools within {}{suffix}",
                seconds(timeout)
            )))
        }
    }
}

/// Initializes a session over an HTTP transport, within `timeout`; a challenge at initialize is
/// [`ConnectError::NeedsLogin`].
async fn serve_http<C>(
    handler: &EarshotClient,
    transport: StreamableHttpClientTransport<C>,
    url: &str,
    timeout: Duration,
) -> Result<RunningService<RoleClient, EarshotClient>, ConnectError>
where
    C: StreamableHttpClient + Send + Sync + 'static,
{
    match tokio::time::timeout(timeout, handler.clone().serve(transport)).await {
        Ok(Ok(service)) => Ok(service),
        Ok(Err(error)) => Err(initialize_failure(&error, url)),
        Err(_) => Err(ConnectError::Failed(format!(
            "did not answer initialize at {url} within {}",
            seconds(timeout)
        ))),
    }
}

fn initialize_failure(error: &ClientInitializeError, url: &str) -> ConnectError {
    if let Some(header) = error.auth_challenge() {
        return ConnectError::NeedsLogin(Challenge::parse(header, url));
    }
    if error.is_authorization_required() {
        return ConnectError::NeedsLogin(Challenge::parse("Bearer", url));
    }
    ConnectError::Failed(format!(
        "failed during initialize at {url}: {}",
        http_failure(&error.to_string())
    ))
}

/// Waits briefly for a child's exit or flood to be recorded, so a report can say which.
async fn settled_ending(report: &PipeReport) -> Option<Ending> {
    for _ in 0..50 {
        if let Some(ending) = report.ending() {
            return Some(ending);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}

/// rmcp's description of an HTTP failure without its type names: `Send message error Transport
/// [rmcp::…] error: HTTP 500, when send initialize request` becomes `HTTP 500`.
fn http_failure(text: &str) -> String {
    let mut core = text;
    if let Some(at) = core.find("] error: ") {
        core = &core[at + "] error: ".len()..];
    }
    if let Some(at) = core.rfind(", when ") {
        core = &core[..at];
    }
    if let Some(refused) = refused_redirect(core) {
        return refused;
    }
    if core.contains("error sending request") {
        return format!("{} (is it running and listening there?)", one_line(core));
    }
    if core.contains("Auth required") {
        return "it answered 401: it needs authorization (its Authorization header was refused)"
            .into();
    }
    one_line(core)
}

/// The line for a request that met a redirect (see `http::http_client`), when `text` is one.
fn refused_redirect(text: &str) -> Option<String> {
    text.contains("error following redirect").then(|| {
        "it answered with a redirect, which earshot does not follow for MCP servers (the server's headers would go to another address); set its url to the address it redirects to".to_string()
    })
}

/// `text` on one line, without control characters, shortened: for text a server wrote.
pub fn one_line(text: &str) -> String {
    let flat: String = earshot_terminal_text::strip_controls(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    shorten(&flat, 300)
}

impl Connection {
    /// Why this connection ended, once it has.
    pub fn ended(&self) -> Option<Ending> {
        if let Some(ending) = self.ended.lock().clone() {
            return Some(ending);
        }
        self.child.as_ref()?.0.ending()
    }

    /// Marks the tools as changed again (a refresh that failed is retried on the next look).
    pub fn mark_tools_changed(&self) {
        self.handler.mark_tools_changed();
    }

    /// Whether the server announced a change to its tools since the last look.
    pub fn take_tools_changed(&self) -> bool {
        self.handler.take_tools_changed()
    }

    /// Warnings about what the server wrote besides messages (non-JSON lines and the like).
    pub fn noise(&self) -> Option<String> {
        self.child.as_ref().and_then(|(report, _)| report.noise())
    }

    /// How many lines that are not JSON the server has written to stdout so far.
    pub fn noise_lines(&self) -> u64 {
        self.child
            .as_ref()
            .map_or(0, |(report, _)| report.read(|events| events.noise_lines))
    }

    /// `; its stderr ended: …` for reports (empty for HTTP servers).
    pub fn stderr_suffix(&self) -> String {
        self.child
            .as_ref()
            .map(|(report, _)| report.stderr.report_suffix())
            .unwrap_or_default()
    }

    /// Every tool the server lists, following pages, as raw JSON objects.
    ///
    /// # Errors
    /// One line saying what went wrong.
    pub async fn list_tools(&self) -> Result<Vec<Value>, String> {
        self.list_paged(Listing::Tools).await
    }

    /// Every prompt the server lists (`prompts/list`, all pages, capped like tools), as raw JSON;
    /// none when the server does not declare prompts.
    ///
    /// # Errors
    /// One line saying what went wrong.
    pub async fn list_prompts(&self) -> Result<Vec<Value>, String> {
        let declared = self
            .service
            .peer_info()
            .is_some_and(|info| info.capabilities.prompts.is_some());
        if !declared {
            return Ok(Vec::new());
        }
        self.list_paged(Listing::Prompts).await
    }

    /// Whether the server declared resources at initialize.
    pub fn offers_resources(&self) -> bool {
        self.service
            .peer_info()
            .is_some_and(|info| info.capabilities.resources.is_some())
    }

    /// Every resource and every resource template the server lists (each paged and capped like
    /// tools), as raw JSON; none when the server does not declare resources.
    ///
    /// # Errors
    /// One line saying what went wrong.
    pub async fn list_resources(&self) -> Result<(Vec<Value>, Vec<Value>), String> {
        if !self.offers_resources() {
            return Ok((Vec::new(), Vec::new()));
        }
        let resources = self.list_paged(Listing::Resources).await?;
        // A server without templates may not know the method at all: its resources still count.
        let templates = match self.list_paged(Listing::ResourceTemplates).await {
            Ok(templates) => templates,
            Err(why) => {
                tracing::debug!("resources/templates/list failed, taken as none: {why}");
                Vec::new()
            }
        };
        Ok((resources, templates))
    }

    /// Reads resource `uri` and returns the raw result JSON (normalised later, in the mcp-output
    /// sandbox).
    ///
    /// # Errors
    /// A [`CallFailure`].
    pub async fn read_resource(&self, uri: &str, timeout: Duration) -> Result<Value, CallFailure> {
        let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(
            ReadResourceRequestParams::new(uri),
        ));
        self.request(request, timeout, "resources/read").await
    }

    /// Every item of one kind, following `nextCursor`, within the page, count and size caps.
    async fn list_paged(&self, listing: Listing) -> Result<Vec<Value>, String> {
        let (method, key) = listing.names();
        let mut items: Vec<Value> = Vec::new();
        let mut bytes = 0usize;
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor.take());
            let request = match listing {
                Listing::Tools => {
                    ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params))
                }
                Listing::Prompts => {
                    ClientRequest::ListPromptsRequest(ListPromptsRequest::with_param(params))
                }
                Listing::Resources => {
                    ClientRequest::ListResourcesRequest(ListResourcesRequest::with_param(params))
                }
                Listing::ResourceTemplates => ClientRequest::ListResourceTemplatesRequest(
                    ListResourceTemplatesRequest::with_param(params),
                ),
            };
            let result = match self.service.send_request(request).await {
                Ok(result) => result,
                Err(error) => {
                    return Err(self.describe_failure(error, method).await.to_string());
                }
            };
            let page = serde_json::to_value(&result).map_err(|error| error.to_string())?;
            let Some(listed) = page.get(key).and_then(Value::as_array) else {
                return Err(format!("answered {method} without a \"{key}\" list"));
            };
            bytes += listed
                .iter()
                .map(|item| item.to_string().len())
                .sum::<usize>();
            if bytes > MAX_TOOL_LIST_BYTES {
                return Err(format!(
                    "lists more than {} MiB of {key} definitions, the most earshot keeps from one server",
                    MAX_TOOL_LIST_BYTES >> 20
                ));
            }
            items.extend(listed.iter().cloned());
            if items.len() > MAX_TOOLS_PER_SERVER {
                return Err(format!(
                    "lists more than {MAX_TOOLS_PER_SERVER} {key}, the most earshot accepts from one server"
                ));
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => cursor = Some(next.to_string()),
                _ => return Ok(items),
            }
        }
        Err(format!(
            "kept paging {method} past {MAX_PAGES} pages, so earshot stopped"
        ))
    }

    /// Calls `tool` with `arguments` and returns the raw result JSON (normalised later, in the
    /// mcp-output sandbox).
    ///
    /// # Errors
    /// A [`CallFailure`].
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
        timeout: Duration,
    ) -> Result<Value, CallFailure> {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(tool.to_string()).with_arguments(arguments),
        ));
        self.request(request, timeout, "tools/call").await
    }

    /// Gets prompt `name` with `arguments` and returns the raw result JSON (its messages are
    /// normalised later, in the mcp-output sandbox).
    ///
    /// # Errors
    /// A [`CallFailure`].
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: serde_json::Map<String, Value>,
        timeout: Duration,
    ) -> Result<Value, CallFailure> {
        let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(
            GetPromptRequestParams::new(name).with_arguments(arguments),
        ));
        self.request(request, timeout, "prompts/get").await
    }

    /// Whether the server answers a `ping` within `timeout` (sent beside any request in flight).
    pub async fn ping(&self, timeout: Duration) -> bool {
        let request = ClientRequest::PingRequest(PingRequest::default());
        tokio::time::timeout(
            timeout + Duration::from_millis(500),
            self.request(request, timeout, "ping"),
        )
        .await
        .is_ok_and(|answer| answer.is_ok())
    }

    /// Sends `request`, waits at most `timeout` for its answer, and returns the answer as JSON.
    /// A caller that stops waiting cancels it on the server.
    async fn request(
        &self,
        request: ClientRequest,
        timeout: Duration,
        method: &str,
    ) -> Result<Value, CallFailure> {
        if let Some(reason) = self.ended() {
            return Err(CallFailure::Ended(reason));
        }
        let mut options = PeerRequestOptions::no_options();
        options.timeout = Some(timeout);
        let _sending = self.handler.sending();
        let sent = self
            .service
            .send_request_with_option(request, options)
            .await;
        let answer = match sent {
            Ok(handle) => {
                // While it is in flight (and only then) the server may ask the user for data and
                // report progress on it.
                let _in_flight = self.handler.request_started(&handle.progress_token);
                // rmcp tells the server when its own timeout fires; this tells it when the caller
                // stops waiting (an embedder's timeout or cancel, the host's outer timeout).
                let abandoned = CancelIfAbandoned::new(&handle.peer, &handle.id);
                let answer = handle.await_response().await;
                abandoned.disarm();
                answer
            }
            Err(error) => Err(error),
        };
        match answer {
            Ok(result) => serde_json::to_value(&result)
                .map_err(|error| CallFailure::Refused(format!("an unreadable result: {error}"))),
            Err(error) => Err(self.describe_failure(error, method).await),
        }
    }

    /// The challenge the last failed request met, if any (taken: each is reported once).
    pub fn take_challenge(&self) -> Option<Challenge> {
        self.challenged.lock().take()
    }

    async fn describe_failure(&self, error: ServiceError, what: &str) -> CallFailure {
        let challenge = error.auth_challenge().map(str::to_string).or_else(|| {
            error
                .is_authorization_required()
                .then(|| "Bearer".to_string())
        });
        if let Some(header) = challenge {
            let challenge = Challenge::parse(&header, self.url.as_deref().unwrap_or(""));
            *self.challenged.lock() = Some(challenge.clone());
            return CallFailure::NeedsAuthorization(challenge);
        }
        match error {
            ServiceError::Timeout { timeout } => CallFailure::TimedOut(seconds(timeout)),
            ServiceError::McpError(error) => CallFailure::Refused(one_line(&error.message)),
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                let reason = match &self.child {
                    // The exit status lands a moment after the pipes close.
                    Some((report, _)) => settled_ending(report).await.unwrap_or_else(|| Ending {
                        what: "closed its stdout".into(),
                        stderr: report.stderr.report_suffix(),
                    }),
                    None => Ending {
                        what: format!("closed the connection ({what})"),
                        stderr: String::new(),
                    },
                };
                *self.ended.lock() = Some(reason.clone());
                CallFailure::Ended(reason)
            }
            other => {
                let text = other.to_string();
                CallFailure::Refused(refused_redirect(&text).unwrap_or_else(|| one_line(&text)))
            }
        }
    }

    /// Ends the session: closes stdin (a polite server exits), then ends the process group,
    /// giving the server `grace` to exit before each signal.
    pub async fn close(self, grace: Duration) {
        let Connection { service, child, .. } = self;
        let _ = tokio::time::timeout(Duration::from_secs(2), service.cancel()).await;
        if let Some((_, shutdown)) = child {
            shutdown.shut_down(grace).await;
        }
    }
}
