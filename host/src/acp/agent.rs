//! The ACP agent itself: `initialize`, `session/new`, `session/prompt`, `session/cancel`. Each
//! session is a [`Host`] on the project its `cwd` names (that project's trust, rules and
//! settings), plus the editor's HTTP servers that passed [`screen_session_mcp`]. Once a session
//! exists the editor is sent `available_commands_update`: its commands, skills and MCP prompts.
//! Long work (loading a session, a turn) runs in tasks of the connection, never in a handler: a
//! handler that awaited a permission answer would stop the connection reading it.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate,
    CancelNotification, ContentBlock, ContentChunk, Implementation, InitializeRequest,
    InitializeResponse, McpCapabilities, NewSessionRequest, NewSessionResponse, Notice,
    NoticeSeverity, PromptRequest, PromptResponse, SessionId, SessionNotification, SessionUpdate,
    StopReason, UnstructuredCommandInput,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ConnectTo, Error};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::gate::sanitise_for_terminal;
use crate::host::{Host, HostBuilder};
use crate::mcp::{McpOptions, read_servers};
use crate::sandbox::ComponentCache;
use crate::settings::{ProjectPaths, Settings, find_project_root};
use crate::skills::ExpandError;

use super::session_mcp::{Rejection, screen_session_mcp};
use super::turn::{SessionTools, TurnDriver};

/// How long a cancelled turn may take to wind down (report its call `failed`) before it is
/// dropped.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// What every session of one `earshot acp` shares.
pub struct AcpConfig {
    /// The user's config dir (settings, trust key, caches); `None` for none.
    pub user_config_dir: Option<PathBuf>,
    /// The compiled-component cache.
    pub cache: ComponentCache,
    /// The model loop that runs each prompt.
    pub driver: Arc<dyn TurnDriver>,
    /// End MCP servers' process groups when earshot gets a signal (the `earshot acp` process
    /// does; an embedder with its own signal handling may not want it).
    pub end_servers_on_signals: bool,
    /// Whether the hooks in the settings run (`earshot acp --no-hooks` turns them off).
    pub hooks: bool,
}

/// One session: its host and the turn in progress.
struct Session {
    host: Arc<Host>,
    /// Cancelled by `session/cancel`; replaced at each prompt.
    turn: Mutex<Option<CancellationToken>>,
    calls: Arc<AtomicU64>,
}

/// An ACP agent over earshot's host: build one, serve [`AcpAgent::connection`] on a transport,
/// then [`AcpAgent::shutdown`] to end every session's servers.
pub struct AcpAgent {
    state: Arc<State>,
}

struct State {
    config: AcpConfig,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    next_session: AtomicU64,
    /// The client declared `session.notices`: rejections go as notices, else as messages.
    notices: AtomicBool,
}

impl AcpAgent {
    /// An agent with no sessions yet.
    pub fn new(config: AcpConfig) -> AcpAgent {
        AcpAgent {
            state: Arc::new(State {
                config,
                sessions: Mutex::new(HashMap::new()),
                next_session: AtomicU64::new(0),
                notices: AtomicBool::new(false),
            }),
        }
    }

    /// The agent side of one connection, for `connect_to` on any ACP transport (stdio for
    /// `earshot acp`, in-process for tests). Advertises HTTP (not SSE) MCP servers, no
    /// `loadSession`, no modes and no config options: nothing a client sets changes permissions.
    pub fn connection(&self) -> impl ConnectTo<Client> + 'static {
        let on_initialize = self.state.clone();
        let on_new = self.state.clone();
        let on_prompt = self.state.clone();
        let on_cancel = self.state.clone();
        Agent
            .v1()
            .name("earshot")
            .on_receive_request(
                async move |request: InitializeRequest,
                            responder: Responder<InitializeResponse>,
                            _connection| {
                    let notices = request
                        .client_capabilities
                        .session
                        .as_ref()
                        .is_some_and(|session| session.notices.is_some());
                    on_initialize.notices.store(notices, Ordering::SeqCst);
                    responder.respond(
                        InitializeResponse::new(ProtocolVersion::V1)
                            .agent_capabilities(
                                AgentCapabilities::new()
                                    .mcp_capabilities(McpCapabilities::new().http(true).sse(false)),
                            )
                            .agent_info(Implementation::new("earshot", env!("CARGO_PKG_VERSION"))),
                    )
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: NewSessionRequest,
                            responder: Responder<NewSessionResponse>,
                            connection: ConnectionTo<Client>| {
                    let state = on_new.clone();
                    let sender = connection.clone();
                    connection.spawn(async move {
                        state.new_session(request, responder, sender).await;
                        Ok(())
                    })
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: PromptRequest,
                            responder: Responder<PromptResponse>,
                            connection: ConnectionTo<Client>| {
                    let state = on_prompt.clone();
                    let sender = connection.clone();
                    connection.spawn(async move {
                        state.prompt(request, responder, sender).await;
                        Ok(())
                    })
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_notification(
                async move |notification: CancelNotification, _connection| {
                    on_cancel.cancel(&notification.session_id);
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
    }

    /// Ends every session's MCP servers (the grace sequence) and forgets the sessions.
    pub async fn shutdown(&self) {
        let sessions: Vec<Arc<Session>> = self
            .state
            .sessions
            .lock()
            .drain()
            .map(|(_, session)| session)
            .collect();
        for session in sessions {
            if let Some(token) = session.turn.lock().take() {
                token.cancel();
            }
            session.host.shutdown().await;
        }
    }
}

impl State {
    async fn new_session(
        &self,
        request: NewSessionRequest,
        responder: Responder<NewSessionResponse>,
        connection: ConnectionTo<Client>,
    ) {
        let cwd = request.cwd.clone();
        if !cwd.is_absolute() || !cwd.is_dir() {
            let _ = responder.respond_with_error(Error::invalid_params().data(json!(format!(
                "cwd {} is not an absolute path to a directory",
                cwd.display()
            ))));
            return;
        }
        let config_dir = self.config.user_config_dir.as_deref();
        let root = find_project_root(&cwd, config_dir);
        let settings = Settings::load(config_dir, Some(ProjectPaths::new(root)));
        let env = |name: &str| std::env::var(name).ok();
        let configured: Vec<String> = read_servers(&settings, &env)
            .into_iter()
            .map(|entry| entry.name)
            .collect();
        let plan = screen_session_mcp(&request.mcp_servers, &configured);
        for rejection in &plan.rejected {
            tracing::warn!(
                server = %rejection.name,
                "an MCP server from the editor was not used: {}",
                rejection.reason
            );
        }
        let options = McpOptions {
            end_servers_on_signals: self.config.end_servers_on_signals,
            ..McpOptions::from_settings(&settings)
        };
        let settings_problems: Vec<String> = settings
            .problems
            .iter()
            .map(ToString::to_string)
            .chain(crate::gate::rule_warnings(&settings, &|name| {
                std::env::var(name).ok()
            }))
            .collect();
        let number = self.next_session.fetch_add(1, Ordering::SeqCst) + 1;
        let built = HostBuilder::new(settings)
            .hooks(self.config.hooks)
            .session_id(format!("earshot-session-{number}"))
            .cache(self.config.cache.clone())
            .mcp_options(options)
            .session_servers(plan.accepted.clone())
            .build()
            .await;
        let host = match built {
            Ok(host) => Arc::new(host),
            Err(error) => {
                let _ = responder.respond_with_error(
                    Error::internal_error()
                        .data(json!(format!("the session could not load: {error}"))),
                );
                return;
            }
        };
        let session_id = SessionId::new(format!("earshot-session-{number}"));
        let problems: Vec<String> = settings_problems
            .into_iter()
            .chain(host.registry().problems())
            .chain(host.hook_notices().iter().cloned())
            .chain(host.session_start_report().lines_for_user())
            .collect();
        self.sessions.lock().insert(
            session_id.0.to_string(),
            Arc::new(Session {
                host: host.clone(),
                turn: Mutex::new(None),
                calls: Arc::default(),
            }),
        );
        let mut meta = serde_json::Map::new();
        meta.insert(
            "earshot".into(),
            json!({ "rejectedMcpServers": plan.rejected }),
        );
        if responder
            .respond(NewSessionResponse::new(session_id.clone()).meta(meta))
            .is_err()
        {
            return;
        }
        self.report(&connection, &session_id, &plan.rejected, &problems);
        let commands = available_commands(&host).await;
        let _ = connection.send_notification(SessionNotification::new(
            session_id,
            SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands)),
        ));
    }

    /// Tells the editor, once the session exists, which of its servers were not used and what
    /// did not load.
    fn report(
        &self,
        connection: &ConnectionTo<Client>,
        session: &SessionId,
        rejected: &[Rejection],
        problems: &[String],
    ) {
        let send = |update: SessionUpdate| {
            let _ = connection.send_notification(SessionNotification::new(session.clone(), update));
        };
        let notices = self.notices.load(Ordering::SeqCst);
        for rejection in rejected {
            let title = format!(
                "MCP server \"{}\" from the editor is not used",
                rejection.name
            );
            if notices {
                send(SessionUpdate::Notice(
                    Notice::new(NoticeSeverity::Warning, title)
                        .description(rejection.reason.clone()),
                ));
            } else {
                send(message(&format!("{title}: {}", rejection.reason)));
            }
        }
        for problem in problems {
            send(message(&format!("not loaded: {problem}")));
        }
    }

    async fn prompt(
        &self,
        request: PromptRequest,
        responder: Responder<PromptResponse>,
        connection: ConnectionTo<Client>,
    ) {
        let session = self.sessions.lock().get(&*request.session_id.0).cloned();
        let Some(session) = session else {
            let _ = responder.respond_with_error(
                Error::invalid_params().data(json!(format!("no session {}", request.session_id))),
            );
            return;
        };
        let token = CancellationToken::new();
        {
            let mut turn = session.turn.lock();
            if turn.as_ref().is_some_and(|running| !running.is_cancelled()) {
                drop(turn);
                let _ = responder.respond_with_error(Error::invalid_request().data(json!(
                    "a prompt is already running in this session; cancel it first"
                )));
                return;
            }
            *turn = Some(token.clone());
        }
        let text = prompt_text(&request.prompt);
        let tools = SessionTools::new(
            session.host.clone(),
            connection,
            request.session_id.clone(),
            token.clone(),
            session.calls.clone(),
        );
        let driver = &self.config.driver;
        // `/name ARGS` of a command or skill: the driver gets its expansion, or does not run.
        let turn = async {
            match tools.expand(&text).await {
                None => driver.run_turn(&text, &tools).await,
                Some(Ok(expansion)) => driver.run_turn(&expansion.text, &tools).await,
                Some(Err(error)) => tools.say(&not_expanded(&text, &error)),
            }
        };
        tokio::pin!(turn);
        tokio::select! {
            () = &mut turn => {}
            // A call in the turn ends at the cancel by itself (and tells the editor); a driver
            // still busy after a moment is dropped.
            () = token.cancelled() => {
                let _ = tokio::time::timeout(CANCEL_GRACE, &mut turn).await;
            }
        }
        let stop = if token.is_cancelled() {
            StopReason::Cancelled
        } else {
            StopReason::EndTurn
        };
        // One turn at a time per session: this one is over.
        *session.turn.lock() = None;
        let _ = responder.respond(PromptResponse::new(stop));
    }

    fn cancel(&self, session: &SessionId) {
        let session = self.sessions.lock().get(&*session.0).cloned();
        if let Some(session) = session
            && let Some(token) = session.turn.lock().as_ref()
        {
            token.cancel();
        }
    }
}

/// What the editor offers after `/`: the session's commands and skills (the user's and trusted
/// project ones, by the name typed without `/`, the argument hint as the input hint), then the
/// MCP prompts of its running servers (`mcp__server__prompt`, their arguments as `key=…`). Every
/// text is one sanitised line: a server's description is its own, not earshot's.
async fn available_commands(host: &Host) -> Vec<AvailableCommand> {
    let mut commands: Vec<AvailableCommand> = host
        .slash_commands()
        .into_iter()
        .map(|entry| {
            let command = AvailableCommand::new(entry.name, entry.description);
            match entry.argument_hint.filter(|hint| !hint.is_empty()) {
                Some(hint) => command.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(hint),
                )),
                None => command,
            }
        })
        .collect();
    let (prompts, failures) = host.mcp_prompts(None).await;
    for failure in failures {
        tracing::debug!(%failure, "an MCP server's prompts were not listed");
    }
    for prompt in prompts {
        let name = prompt.command.trim_start_matches('/').to_string();
        let description = prompt
            .description
            .as_deref()
            .or(prompt.title.as_deref())
            .map(|text| sanitise_for_terminal(text, 1_024))
            .unwrap_or_default();
        let hint = prompt
            .arguments
            .iter()
            .map(|argument| {
                let pair = format!("{}=…", sanitise_for_terminal(&argument.name, 80));
                if argument.required {
                    pair
                } else {
                    format!("[{pair}]")
                }
            })
            .collect::<Vec<_>>()
            .join(" ");
        let command = AvailableCommand::new(name, description);
        commands.push(if hint.is_empty() {
            command
        } else {
            command.input(AvailableCommandInput::Unstructured(
                UnstructuredCommandInput::new(hint),
            ))
        });
    }
    commands
}

/// The one line the editor is told when `/name` in `text` was not expanded (the turn does not
/// run).
fn not_expanded(text: &str, error: &ExpandError) -> String {
    let name = text
        .trim_start()
        .split(char::is_whitespace)
        .next()
        .unwrap_or_default();
    let line = error.to_string();
    // Most errors start by naming the command already.
    let reason = line
        .strip_prefix(name)
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(&line);
    sanitise_for_terminal(&format!("{name} was not expanded: {reason}"), 2_000)
}

/// An agent message.
fn message(text: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text.to_string())))
}

/// The text of a prompt: its text blocks, joined (other blocks are not commands).
fn prompt_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
