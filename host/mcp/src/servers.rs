//! Every configured MCP server in one session: started concurrently, each under its own start-up
//! timeout; calls serialised (never two at once, across all servers); a server that died is
//! restarted once, with back-off, by the next call; a tool-list change is picked up on request.
//! Every start after the first (a restart, a reconnect after a login or step-up) is admitted
//! again from the settings files as they are on disk then, so a pull during a long session lapses
//! the trust exactly as it would for a new session. A server whose call timed out is
//! unresponsive: its calls fail at once, without taking the queue, until it answers a ping.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::runner::{CallError, FailureCause};
use crate::settings::{ProjectPaths, Settings};
use crate::status::{
    CallOutcome, MAX_STEP_UPS_PER_SERVER, McpOptions, ServerState, ServerStatus, StartProgress,
    UNRESPONSIVE_PING_TIMEOUT, transport_name,
};

use super::admission::{effective_launch, start_dir};
use super::client_handler::EarshotClient;
use super::config::{ServerDefinition, ServerEntry, SessionServer, Transport, read_servers};
use super::connection::{CallFailure, ConnectError, Connected, Connection, connect};
use super::elicitation::{Elicitor, ElicitorSlot};
use super::notifications::{CallProgressCallback, ProgressSlot};
use super::oauth::{Browser, CALLBACK_TIMEOUT, Challenge, LoginRequest, OAuthTarget, login};
use super::status::seconds;
use super::stdio::Ending;

enum Live {
    Up {
        connection: Arc<Connection>,
        tools: Vec<Value>,
        took: Duration,
    },
    Down(ServerState),
}

struct Slot {
    entry: ServerEntry,
    /// The definition it starts with, from its last admission: a trusted project server's runs
    /// from the snapshot of what that admission hashed (see `admission::effective_launch`).
    launch: Mutex<Option<ServerDefinition>>,
    /// Where a stdio server starts (see `admission::start_dir`).
    cwd: PathBuf,
    /// The project, offered to the server as its one MCP root.
    project_root: Option<PathBuf>,
    live: Mutex<Live>,
    died_at: Mutex<Option<Instant>>,
    restarted: Mutex<bool>,
    /// Set when a restart brought a new tool list that the registry has not seen.
    tools_replaced: Mutex<bool>,
    /// Where its OAuth tokens are, when OAuth applies to it.
    oauth: Option<OAuthTarget>,
    /// Scope step-ups so far this session.
    step_ups: Mutex<u32>,
    /// While it needs a login: the challenge it answered with, and the stored token it refused
    /// (a different token in the store, from a login in another process, is tried once).
    login_wanted: Mutex<Option<(Challenge, Option<String>)>>,
    /// Held by a login or step-up for this server, so that two calls refused at once lead to
    /// one login.
    logging_in: tokio::sync::Mutex<()>,
    /// Set when a call timed out on the connection it holds: why (cleared by a ping answered,
    /// a call answered, or a new connection).
    unresponsive: Mutex<Option<String>>,
}

impl Slot {
    fn unresponsive(&self) -> Option<String> {
        self.unresponsive.lock().clone()
    }

    fn set_unresponsive(&self, why: Option<String>) {
        *self.unresponsive.lock() = why;
    }

    fn definition(&self) -> Option<&ServerDefinition> {
        self.entry.definition.as_ref().ok()
    }

    /// The definition it starts with (see `launch`), else as written.
    fn launch_definition(&self) -> Option<ServerDefinition> {
        self.launch
            .lock()
            .clone()
            .or_else(|| self.definition().cloned())
    }

    /// `reason` (why the server did not start) with what to do when earshot can tell: an
    /// argument naming a project file while the server starts elsewhere, or `npx` without `-y`
    /// that never answered initialize.
    fn failure_with_hints(&self, reason: String) -> String {
        let Some(definition) = self.definition() else {
            return reason;
        };
        let mut reason = reason;
        if let (
            Transport::Stdio {
                command, args, cwd, ..
            },
            Some(root),
        ) = (&definition.transport, &self.project_root)
            && cwd.is_none()
            && self.cwd != *root
        {
            let paths = crate::start_hints::project_only_paths(command, args, &self.cwd, root);
            if !paths.is_empty() {
                reason.push_str("; ");
                reason.push_str(&crate::start_hints::cwd_hint(
                    &self.entry.name,
                    &paths,
                    &self.cwd,
                ));
            }
        }
        if reason.contains("did not answer initialize")
            && crate::start_hints::npx_without_yes(&definition.transport)
        {
            reason.push_str("; ");
            reason.push_str(crate::start_hints::NPX_HINT);
        }
        reason
    }

    fn startup_timeout(&self, options: &McpOptions) -> Duration {
        self.definition()
            .and_then(|d| d.timeout_ms)
            .map(Duration::from_millis)
            .unwrap_or(options.startup_timeout)
    }

    fn call_timeout(&self, options: &McpOptions) -> Duration {
        self.definition()
            .and_then(|d| d.call_timeout_ms)
            .map(Duration::from_millis)
            .unwrap_or(options.call_timeout)
    }

    /// Records that the server needs a login (see `login_wanted`), with the stored token it
    /// refused (or that could not be used).
    async fn want_login(&self, challenge: Challenge) {
        let refused = match &self.oauth {
            Some(target) => target.stored_token_fingerprint().await,
            None => None,
        };
        *self.login_wanted.lock() = Some((challenge, refused));
    }

    /// Whether the store now holds a token other than the one the server refused.
    async fn has_new_login(&self) -> bool {
        let Some(target) = &self.oauth else {
            return false;
        };
        let refused = match &*self.login_wanted.lock() {
            Some((_, refused)) => refused.clone(),
            None => return false,
        };
        let now = target.stored_token_fingerprint().await;
        now.is_some() && now != refused
    }

    /// The challenge the server answered with while it needs a login.
    fn wanted_challenge(&self) -> Option<Challenge> {
        self.login_wanted
            .lock()
            .as_ref()
            .map(|(challenge, _)| challenge.clone())
    }

    /// Takes the token now stored as refused too (a reconnect with it failed), so the next look
    /// does not try it again.
    async fn refuse_stored_token(&self) {
        if let Some(challenge) = self.wanted_challenge() {
            self.want_login(challenge).await;
        }
    }

    /// Moves the slot to `needs login` after `challenge`; returns the state's line and the
    /// connection it held (for the caller to close).
    async fn await_login(&self, challenge: Challenge) -> (String, Option<Arc<Connection>>) {
        self.want_login(challenge).await;
        let reason = needs_login(&self.entry.name);
        let old = self.set(Live::Down(ServerState::NeedsLogin(reason.clone())));
        (reason, old)
    }

    /// Whether `connection` is still the slot's (another call's step-up or restart may have
    /// replaced it while this call was not holding the call lock).
    fn holds(&self, connection: &Arc<Connection>) -> bool {
        matches!(
            &*self.live.lock(),
            Live::Up { connection: current, .. } if Arc::ptr_eq(current, connection)
        )
    }

    /// The connection the slot holds now, if up.
    fn current(&self) -> Option<Arc<Connection>> {
        match &*self.live.lock() {
            Live::Up { connection, .. } => Some(connection.clone()),
            Live::Down(_) => None,
        }
    }

    fn set(&self, live: Live) -> Option<Arc<Connection>> {
        self.set_unresponsive(None);
        let old = std::mem::replace(&mut *self.live.lock(), live);
        match old {
            Live::Up { connection, .. } => Some(connection),
            Live::Down(_) => None,
        }
    }
}

/// The MCP servers of one session. Every connection lives on the runtime that started the
/// session (the embedder's): the library owns no runtime and never blocks on one.
pub struct McpServers {
    handle: tokio::runtime::Handle,
    slots: Vec<Slot>,
    options: McpOptions,
    /// One call at a time across every server (the spec's rule), awaited, never blocked on.
    calls: tokio::sync::Mutex<()>,
    /// Who answers the servers' elicitations.
    elicitor: ElicitorSlot,
    /// Where the progress of calls goes.
    progress: ProgressSlot,
    /// How a step-up login opens its URL; none: a 403 `insufficient_scope` fails the call.
    step_up_browser: Mutex<Option<Browser>>,
    /// What admitting a server again needs.
    readmission: Readmission,
}

/// Where the session's settings files are, and every `${VAR}` their servers looked up at start
/// with its value then, so that a server is admitted again before each later start from the
/// files as they are on disk then.
#[derive(Clone)]
struct Readmission {
    user_config_dir: Option<PathBuf>,
    project: Option<ProjectPaths>,
    variables: HashMap<String, Option<String>>,
}

impl Readmission {
    /// Why `started` (the entry a server was started from) may not start again now, from the
    /// settings files as they are on disk, with whether that is a trust refusal; when it may,
    /// the definition it starts with (see `admission::effective_launch`).
    fn refusal(&self, started: &ServerEntry) -> Result<ServerDefinition, (String, bool)> {
        let settings = Settings::load(self.user_config_dir.as_deref(), self.project.clone());
        let lookup = |variable: &str| self.variables.get(variable).cloned().flatten();
        let found = read_servers(&settings, &lookup)
            .into_iter()
            .find(|entry| entry.name == started.name);
        Err(
            match found.map(|entry| effective_launch(&settings, entry)) {
                None => (
                    "it is no longer configured in any settings file".to_string(),
                    false,
                ),
                // A definition that no longer expands is a failure, anything else a trust refusal.
                Some((entry, Err(why))) => (why, entry.definition.is_ok()),
                Some((entry, Ok(launch))) => {
                    let same = entry.layer == started.layer
                        && match (&entry.definition, &started.definition) {
                            (Ok(now), Ok(then)) => now.canonical_json() == then.canonical_json(),
                            _ => false,
                        };
                    if same {
                        return Ok(launch);
                    }
                    (
                        "its definition changed during this session; start a new session to use it"
                            .to_string(),
                        false,
                    )
                }
            },
        )
    }
}

impl McpServers {
    /// Starts every usable, admitted server in `settings` concurrently and waits until each has
    /// connected or failed (each within its own start-up timeout). `only` limits it to one name.
    /// Must be awaited inside a tokio runtime with IO and time enabled; the servers' pipes and
    /// supervisors live on it.
    pub async fn start(
        settings: &Settings,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
        options: McpOptions,
        only: Option<&str>,
        progress: &mut (dyn FnMut(StartProgress<'_>) + Send),
    ) -> McpServers {
        McpServers::start_with_session(settings, env, options, only, &[], progress).await
    }

    /// As [`McpServers::start`], plus `session` servers a session's client added for this
    /// session only. A session server whose name the settings also use is not started (the
    /// configured one is: a client may not shadow the user's server or take its allow rules).
    pub async fn start_with_session(
        settings: &Settings,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
        options: McpOptions,
        only: Option<&str>,
        session: &[SessionServer],
        progress: &mut (dyn FnMut(StartProgress<'_>) + Send),
    ) -> McpServers {
        let selected = |name: &str| only.is_none_or(|only| only == name);
        McpServers::start_selected(settings, env, options, &selected, session, progress).await
    }

    /// As [`McpServers::start_with_session`], for the servers whose name `selected` accepts
    /// (the others are neither started nor reported: this session does without them).
    pub async fn start_selected(
        settings: &Settings,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
        options: McpOptions,
        selected: &(dyn Fn(&str) -> bool + Sync),
        session: &[SessionServer],
        progress: &mut (dyn FnMut(StartProgress<'_>) + Send),
    ) -> McpServers {
        let handle = tokio::runtime::Handle::current();
        if options.end_servers_on_signals {
            super::process_group::end_all_groups_on_signals();
        }
        let looked_up: Mutex<HashMap<String, Option<String>>> = Mutex::new(HashMap::new());
        let recording = |name: &str| {
            let value = env(name);
            looked_up.lock().insert(name.to_string(), value.clone());
            value
        };
        let mut entries = read_servers(settings, &recording);
        for server in session {
            if !entries.iter().any(|entry| entry.name == server.name) {
                entries.push(server.entry());
            }
        }
        let slots: Vec<Slot> = entries
            .into_iter()
            .filter(|entry| selected(&entry.name))
            .map(|entry| effective_launch(settings, entry))
            .map(|(entry, admitted)| {
                let (admitted, launch) = match admitted {
                    Ok(launch) => (Ok(()), Some(launch)),
                    Err(why) => (Err(why), None),
                };
                let state = admit(&entry, admitted);
                let oauth = entry.definition.as_ref().ok().and_then(|definition| {
                    OAuthTarget::of(settings, &entry.name, entry.layer, &definition.transport)
                });
                Slot {
                    oauth,
                    step_ups: Mutex::new(0),
                    login_wanted: Mutex::new(None),
                    logging_in: tokio::sync::Mutex::new(()),
                    unresponsive: Mutex::new(None),
                    cwd: start_dir(settings, &entry),
                    project_root: settings
                        .project
                        .as_ref()
                        .map(|project| project.root.clone()),
                    entry,
                    launch: Mutex::new(launch),
                    live: Mutex::new(Live::Down(state)),
                    died_at: Mutex::new(None),
                    restarted: Mutex::new(false),
                    tools_replaced: Mutex::new(false),
                }
            })
            .collect();
        let servers = McpServers {
            handle,
            slots,
            options,
            calls: tokio::sync::Mutex::new(()),
            elicitor: ElicitorSlot::default(),
            progress: ProgressSlot::default(),
            step_up_browser: Mutex::new(None),
            readmission: Readmission {
                user_config_dir: settings.user_config_dir.clone(),
                project: settings.project.clone(),
                variables: looked_up.into_inner(),
            },
        };
        servers.connect_admitted(progress).await;
        servers
    }

    async fn connect_admitted(&self, progress: &mut (dyn FnMut(StartProgress<'_>) + Send)) {
        let starting: Vec<usize> = (0..self.slots.len())
            .filter(|&index| {
                let live = self.slots[index].live.lock();
                matches!(&*live, Live::Down(ServerState::Starting))
            })
            .collect();
        let total = starting.len();
        {
            let mut set = tokio::task::JoinSet::new();
            for index in starting {
                let slot = &self.slots[index];
                let definition = slot.launch_definition().expect("admitted");
                let cwd = slot.cwd.clone();
                let handler = self.handler_for(slot);
                let timeout = slot.startup_timeout(&self.options);
                let oauth = slot.oauth.clone();
                set.spawn(async move {
                    let connected =
                        connect(&definition, &cwd, handler, timeout, oauth.as_ref()).await;
                    (index, connected)
                });
            }
            let mut done = 0;
            while let Some(joined) = set.join_next().await {
                let Ok((index, result)) = joined else {
                    continue;
                };
                let slot = &self.slots[index];
                match result {
                    Err(ConnectError::NeedsLogin(challenge)) => {
                        slot.await_login(challenge).await;
                    }
                    Err(ConnectError::Failed(reason)) => {
                        let reason = slot.failure_with_hints(reason);
                        slot.set(Live::Down(ServerState::Failed(reason)));
                    }
                    Ok(connected) => {
                        slot.set(live_of(connected));
                    }
                }
                done += 1;
                progress(StartProgress {
                    finished: &slot.entry.name,
                    done,
                    total,
                });
            }
            // A start-up task that panicked leaves its slot starting: report it instead.
            for slot in &self.slots {
                let mut live = slot.live.lock();
                if matches!(&*live, Live::Down(ServerState::Starting)) {
                    *live = Live::Down(ServerState::Failed(
                        "its start-up failed inside earshot (see -v for details)".into(),
                    ));
                }
            }
        }
    }

    /// The client side of a new session with `slot`'s server: the project as its root, the
    /// session's elicitor answering for it.
    fn handler_for(&self, slot: &Slot) -> EarshotClient {
        EarshotClient::new(
            slot.project_root.as_deref(),
            &slot.entry.name,
            self.elicitor.clone(),
            self.progress.clone(),
        )
    }

    /// Lets a 403 `insufficient_scope` re-authorize with the union of the scopes (at most one
    /// step-up per call, [`MAX_STEP_UPS_PER_SERVER`] per server), opening the URL with
    /// `browser`. For embedders with a user at hand (a terminal); without it such a call fails
    /// with the command that grants the scopes.
    pub fn allow_step_up(&self, browser: Browser) {
        *self.step_up_browser.lock() = Some(browser);
    }

    /// Reports the progress servers send during calls to `callback` from now on.
    pub fn set_call_progress(&self, callback: CallProgressCallback) {
        self.progress.set(callback);
    }

    /// Answers the servers' elicitations with `elicitor` from now on (they are declined until
    /// one is set).
    pub fn set_elicitor(&self, elicitor: Arc<dyn Elicitor>) {
        self.elicitor.set(elicitor);
    }

    /// Every server, in settings order.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.slots
            .iter()
            .map(|slot| {
                let live = slot.live.lock();
                let (state, warnings) = match &*live {
                    Live::Up {
                        connection,
                        tools,
                        took,
                    } => (
                        match (connection.ended(), slot.unresponsive()) {
                            (Some(ending), _) => ServerState::Died(ending.sentence("")),
                            (None, Some(why)) => ServerState::Unresponsive(why),
                            (None, None) => ServerState::Connected {
                                tools: tools.len(),
                                took: *took,
                            },
                        },
                        connection.noise().into_iter().collect(),
                    ),
                    Live::Down(state) => (state.clone(), Vec::new()),
                };
                let mut warnings: Vec<String> = warnings;
                warnings.extend(
                    slot.entry
                        .refused
                        .iter()
                        .map(|why| format!("is yours: {why}")),
                );
                ServerStatus {
                    name: slot.entry.name.clone(),
                    layer: slot.entry.layer,
                    shadows: slot.entry.shadows.clone(),
                    transport: transport_name(&slot.entry),
                    state,
                    warnings,
                }
            })
            .collect()
    }

    /// The tools `server` lists now, as raw JSON objects (empty unless connected).
    pub fn tools_of(&self, server: &str) -> Vec<Value> {
        self.slot(server)
            .map(|slot| match &*slot.live.lock() {
                Live::Up { tools, .. } => tools.clone(),
                Live::Down(_) => Vec::new(),
            })
            .unwrap_or_default()
    }

    /// Lists the tools again of every server that sent `notifications/tools/list_changed` since
    /// the last look; returns their names (their tools in [`McpServers::tools_of`] are current).
    pub async fn refresh_changed(&self) -> Vec<String> {
        let mut changed = Vec::new();
        for slot in &self.slots {
            let waiting = matches!(&*slot.live.lock(), Live::Down(ServerState::NeedsLogin(_)));
            if waiting && slot.has_new_login().await {
                if self.reconnect(slot).await.is_ok() {
                    changed.push(slot.entry.name.clone());
                    continue;
                }
                slot.refuse_stored_token().await;
            }
            let restarted = std::mem::take(&mut *slot.tools_replaced.lock());
            let connection = match &*slot.live.lock() {
                Live::Up { connection, .. } if connection.take_tools_changed() => {
                    connection.clone()
                }
                Live::Up { .. } | Live::Down(_) if restarted => {
                    changed.push(slot.entry.name.clone());
                    continue;
                }
                _ => continue,
            };
            let timeout = slot.startup_timeout(&self.options);
            let listed = tokio::time::timeout(timeout, connection.list_tools()).await;
            if let Ok(Ok(tools)) = listed {
                if let Live::Up { tools: held, .. } = &mut *slot.live.lock() {
                    *held = tools;
                }
                changed.push(slot.entry.name.clone());
            } else {
                // Keep the old list and try again on the next look.
                connection.mark_tools_changed();
                tracing::warn!(server = %slot.entry.name, "could not list tools after list_changed");
            }
        }
        changed
    }

    /// Calls `tool` on `server` (one call at a time across every server). A server that died
    /// is restarted once per session, after the back-off, and the outcome says so.
    ///
    /// # Errors
    /// A [`CallError::Failed`] whose line starts with the server's name and whose cause says
    /// whether a retry can help (timeout, server gone, not connected, JSON-RPC error).
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
    ) -> Result<CallOutcome, CallError> {
        let Value::Object(arguments) = arguments else {
            return Err(CallError::failed(
                format!("server \"{server}\": tool arguments must be a JSON object"),
                FailureCause::Transport {
                    server: server.to_string(),
                },
            ));
        };
        self.request(server, tool, |connection, timeout| {
            let arguments = arguments.clone();
            async move { connection.call(tool, arguments, timeout).await }
        })
        .await
    }

    /// Gets prompt `name` of `server` with `arguments` (`prompts/get`), under the same rules as a
    /// call: one request at a time, the server's call timeout, a dead server restarted once.
    ///
    /// # Errors
    /// As [`McpServers::call`].
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<CallOutcome, CallError> {
        let what = format!("prompt {name}");
        self.request(server, &what, |connection, timeout| {
            let arguments = arguments.clone();
            async move { connection.get_prompt(name, arguments, timeout).await }
        })
        .await
    }

    /// Reads resource `uri` of `server` (`resources/read`), under the same rules as a call.
    ///
    /// # Errors
    /// As [`McpServers::call`].
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<CallOutcome, CallError> {
        let what = format!("resource {uri}");
        self.request(server, &what, |connection, timeout| async move {
            connection.read_resource(uri, timeout).await
        })
        .await
    }

    /// The names of the running servers that declared resources.
    pub fn servers_with_resources(&self) -> Vec<String> {
        self.slots
            .iter()
            .filter(|slot| {
                self.live_connection(slot)
                    .ok()
                    .flatten()
                    .is_some_and(|connection| connection.offers_resources())
            })
            .map(|slot| slot.entry.name.clone())
            .collect()
    }

    /// The resources and resource templates `server` lists (raw JSON; none when it declares no
    /// resources), within its start-up timeout.
    ///
    /// # Errors
    /// As [`McpServers::list_prompts`].
    pub async fn list_resources(
        &self,
        server: &str,
    ) -> Result<(Vec<Value>, Vec<Value>), CallError> {
        self.listing(server, "resources", async |connection| {
            connection.list_resources().await
        })
        .await
    }

    /// Runs one listing (`list`, of `what`) on `server`'s live connection within its start-up
    /// timeout; a failure is one line that starts with the server's name.
    async fn listing<T>(
        &self,
        server: &str,
        what: &str,
        list: impl AsyncFnOnce(&Connection) -> Result<T, String>,
    ) -> Result<T, CallError> {
        let connection = self.listing_connection(server)?;
        let timeout = self
            .slot(server)
            .map_or(self.options.startup_timeout, |slot| {
                slot.startup_timeout(&self.options)
            });
        match tokio::time::timeout(timeout, list(&connection)).await {
            Ok(Ok(listed)) => Ok(listed),
            Ok(Err(reason)) => Err(CallError::failed(
                format!("server \"{server}\" {reason}"),
                FailureCause::Transport {
                    server: server.to_string(),
                },
            )),
            Err(_) => Err(CallError::failed(
                format!(
                    "server \"{server}\" did not list its {what} within {}",
                    seconds(timeout)
                ),
                FailureCause::TimedOut { after: timeout },
            )),
        }
    }

    /// The live connection of `server` for a listing (a listing never restarts a server).
    fn listing_connection(&self, server: &str) -> Result<Arc<Connection>, CallError> {
        let unavailable = || FailureCause::ServerUnavailable {
            server: server.to_string(),
        };
        let slot = self.slot(server).ok_or_else(|| {
            CallError::failed(format!("no MCP server named \"{server}\""), unavailable())
        })?;
        self.live_connection(slot)?.ok_or_else(|| {
            CallError::failed(
                format!("server \"{server}\" is not running; call one of its tools to restart it"),
                unavailable(),
            )
        })
    }

    /// The prompts `server` lists (raw JSON; none when it declares no prompts), within its
    /// start-up timeout.
    ///
    /// # Errors
    /// A [`CallError::Failed`] when the server is unknown, down, or fails to list.
    pub async fn list_prompts(&self, server: &str) -> Result<Vec<Value>, CallError> {
        self.listing(server, "prompts", async |connection| {
            connection.list_prompts().await
        })
        .await
    }

    /// Sends one request (`send`, given the live connection and the call timeout) to `server`:
    /// one at a time across all servers, a dead server restarted once per session, every
    /// failure one line that starts with the server's name and says what `what` was.
    async fn request<Send, Answer>(
        &self,
        server: &str,
        what: &str,
        send: Send,
    ) -> Result<CallOutcome, CallError>
    where
        Send: Fn(Arc<Connection>, Duration) -> Answer,
        Answer: std::future::Future<Output = Result<Value, CallFailure>>,
    {
        let unavailable = || FailureCause::ServerUnavailable {
            server: server.to_string(),
        };
        let slot = self.slot(server).ok_or_else(|| {
            CallError::failed(format!("no MCP server named \"{server}\""), unavailable())
        })?;
        // Outside the queue: an unresponsive server costs the other servers' calls nothing.
        self.answers_a_ping(slot).await?;
        let mut one_at_a_time = Some(self.calls.lock().await);
        let mut notice = None;
        let connection = match self.live_connection(slot)? {
            Some(connection) => connection,
            None => {
                let (connection, said) = self.restart(slot).await?;
                notice = Some(said);
                connection
            }
        };
        let timeout = slot.call_timeout(&self.options);
        let mut noise_before = connection.noise_lines();
        let mut connection = connection;
        let mut answer = send_within(&send, &connection, timeout).await;
        if let Err(CallFailure::NeedsAuthorization(challenge)) = &answer
            && challenge.insufficient_scope
        {
            // Other servers' calls go on while the user is in the browser.
            drop(one_at_a_time.take());
            let stepped_up = self.step_up(slot, challenge.clone(), &connection).await;
            one_at_a_time = Some(self.calls.lock().await);
            if let Some(stepped_up) = stepped_up {
                connection = stepped_up;
                noise_before = connection.noise_lines();
                answer = send_within(&send, &connection, timeout).await;
            }
        }
        let _one_at_a_time = one_at_a_time;
        // A call that failed any other way on a connection that has meanwhile ended (a stdin
        // that stopped draining, say) is reported with that ending.
        let answer = match (answer, connection.ended()) {
            (Err(CallFailure::TimedOut(_) | CallFailure::Refused(_)), Some(ending)) => {
                Err(CallFailure::Ended(ending))
            }
            (answer, _) => answer,
        };
        match answer {
            Ok(result) => {
                let noise = connection.noise_lines() - noise_before;
                if noise > 0 {
                    let said = format!(
                        "server \"{server}\" wrote {noise} line(s) that are not JSON to stdout during the call; they were skipped"
                    );
                    notice = Some(match notice {
                        Some(restart) => format!("{restart}; {said}"),
                        None => said,
                    });
                }
                Ok(CallOutcome { result, notice })
            }
            Err(CallFailure::Ended(ending)) => {
                if slot.holds(&connection) {
                    self.mark_died(slot, &ending);
                }
                let context = format!(" during the call to {what}");
                let restartable = self.restart_allowed(slot).is_ok();
                let next = if restartable {
                    "the next call restarts it once"
                } else {
                    "it was already restarted once in this session, so it stays down"
                };
                Err(CallError::failed(
                    format!("server \"{server}\" {}; {next}", ending.sentence(&context)),
                    FailureCause::ServerGone {
                        server: server.to_string(),
                        restartable,
                    },
                ))
            }
            Err(CallFailure::NeedsAuthorization(challenge)) if challenge.insufficient_scope => {
                if let (Some(target), Some(scope)) = (&slot.oauth, &challenge.scope) {
                    target
                        .want_scopes(scope.split_whitespace().map(str::to_string).collect())
                        .await;
                }
                let scope = challenge
                    .scope
                    .map(|scope| format!(" ({scope})"))
                    .unwrap_or_default();
                Err(CallError::failed(
                    format!(
                        "server \"{server}\" refused {what}: the login lacks the scopes it needs{scope}; run `earshot mcp login {server}` to grant them"
                    ),
                    FailureCause::Transport {
                        server: server.to_string(),
                    },
                ))
            }
            Err(CallFailure::NeedsAuthorization(challenge)) => {
                let reason = needs_login(server);
                if slot.holds(&connection)
                    && let (_, Some(old)) = slot.await_login(challenge).await
                {
                    self.close_in_background(old);
                }
                Err(CallError::failed(
                    format!("server \"{server}\" {reason}"),
                    FailureCause::ServerUnavailable {
                        server: server.to_string(),
                    },
                ))
            }
            Err(failure @ CallFailure::TimedOut(_)) => {
                if slot.holds(&connection) {
                    slot.set_unresponsive(Some(format!(
                        "its call to {what} timed out after {}",
                        seconds(timeout)
                    )));
                }
                Err(CallError::failed(
                    format!(
                        "server \"{server}\" {failure} to {what}{}; raise mcp.callTimeoutSeconds or the server's callTimeout if it needs longer",
                        connection.stderr_suffix()
                    ),
                    FailureCause::TimedOut { after: timeout },
                ))
            }
            Err(failure) => Err(CallError::failed(
                format!("server \"{server}\" {failure}"),
                FailureCause::Transport {
                    server: server.to_string(),
                },
            )),
        }
    }

    /// Nothing when `slot`'s server is not unresponsive, or when it answers a ping now (within
    /// [`UNRESPONSIVE_PING_TIMEOUT`], at most its call timeout), which makes it responsive again.
    /// A server that does not is ended when it may still be restarted (the next call restarts it
    /// once, as a server that died), else left unresponsive. A server that died meanwhile is left
    /// to the usual restart.
    ///
    /// # Errors
    /// `server "NAME" is not answering: ...`, at once, without the call being sent.
    async fn answers_a_ping(&self, slot: &Slot) -> Result<(), CallError> {
        let Some(why) = slot.unresponsive() else {
            return Ok(());
        };
        let Some(connection) = slot.current().filter(|c| c.ended().is_none()) else {
            return Ok(());
        };
        let bound = UNRESPONSIVE_PING_TIMEOUT.min(slot.call_timeout(&self.options));
        if connection.ping(bound).await {
            if slot.holds(&connection) {
                slot.set_unresponsive(None);
            }
            return Ok(());
        }
        let name = &slot.entry.name;
        let what = format!(
            "{why}, and it did not answer a ping within {}",
            seconds(bound)
        );
        let restartable = self.restart_allowed(slot).is_ok();
        let (next, cause) = if restartable {
            if slot.holds(&connection) {
                self.mark_died(
                    slot,
                    &Ending {
                        what: format!("stopped answering: {what}"),
                        stderr: connection.stderr_suffix(),
                    },
                );
            }
            (
                "it was ended, and the next call restarts it once",
                FailureCause::ServerGone {
                    server: name.clone(),
                    restartable: true,
                },
            )
        } else {
            (
                "its calls fail at once until it answers one",
                FailureCause::ServerUnavailable {
                    server: name.clone(),
                },
            )
        };
        Err(CallError::failed(
            format!("server \"{name}\" is not answering: {what}; {next}"),
            cause,
        ))
    }

    /// The connection when the server is up; `None` when it died and may be restarted.
    fn live_connection(&self, slot: &Slot) -> Result<Option<Arc<Connection>>, CallError> {
        let name = &slot.entry.name;
        let gone = |message: String| {
            CallError::failed(
                message,
                FailureCause::ServerGone {
                    server: name.clone(),
                    restartable: false,
                },
            )
        };
        let unavailable = |message: String| {
            CallError::failed(
                message,
                FailureCause::ServerUnavailable {
                    server: name.clone(),
                },
            )
        };
        let live = slot.live.lock();
        match &*live {
            Live::Up { connection, .. } => match connection.ended() {
                None => Ok(Some(connection.clone())),
                Some(ending) => {
                    drop(live);
                    self.mark_died(slot, &ending);
                    let reason = ending.sentence("");
                    self.restart_allowed(slot)
                        .map(|()| None)
                        .map_err(|why| gone(format!("server \"{name}\" {reason}; {why}")))
                }
            },
            Live::Down(ServerState::Died(reason)) => {
                let reason = reason.clone();
                drop(live);
                self.restart_allowed(slot)
                    .map(|()| None)
                    .map_err(|why| gone(format!("server \"{name}\" {reason}; {why}")))
            }
            Live::Down(ServerState::AwaitingTrust(explanation)) => Err(unavailable(format!(
                "server \"{name}\" is not started: {explanation}"
            ))),
            Live::Down(ServerState::Failed(reason)) => Err(unavailable(format!(
                "server \"{name}\" is not connected: {reason}"
            ))),
            Live::Down(ServerState::NeedsLogin(reason)) => {
                Err(unavailable(format!("server \"{name}\" {reason}")))
            }
            // Connected, starting, unresponsive, or a state added to the core later.
            Live::Down(_) => Err(unavailable(format!("server \"{name}\" is not connected"))),
        }
    }

    /// Re-authorizes `slot`'s server with the scopes `challenge` asks for on top of the ones
    /// granted, then connects again; the new connection, or none when step-ups are not allowed
    /// here, this server had its share, or the login failed (reported on stderr by the login).
    async fn step_up(
        &self,
        slot: &Slot,
        challenge: Challenge,
        refused: &Arc<Connection>,
    ) -> Option<Arc<Connection>> {
        let browser = self.step_up_browser.lock().clone()?;
        slot.oauth.as_ref()?;
        let _one_login = slot.logging_in.lock().await;
        // Another call's step-up finished while this one waited for it: use its connection.
        if let Some(current) = slot.current()
            && !Arc::ptr_eq(&current, refused)
        {
            return Some(current);
        }
        {
            let mut step_ups = slot.step_ups.lock();
            if *step_ups >= MAX_STEP_UPS_PER_SERVER {
                return None;
            }
            *step_ups += 1;
        }
        if let Err(error) = self
            .run_login(slot, Some(challenge), &browser.without_paste())
            .await
        {
            tracing::warn!(server = %slot.entry.name, "step-up failed: {error}");
            return None;
        }
        let connection = self.reconnect(slot).await.ok()?;
        Some(connection)
    }

    /// Logs in to `server` (the one-shot flow of `earshot mcp login`, opening the URL with
    /// `browser`) and connects it again with the new token; its tools are picked up by the next
    /// listing. Returns the scopes granted. For embedders that show a server as `needs login`
    /// and let the user log in without restarting the session.
    ///
    /// # Errors
    /// One line: no such server, not an OAuth server, not started (trust), or the login or the
    /// connection after it failed.
    pub async fn login(&self, server: &str, browser: &Browser) -> Result<Vec<String>, String> {
        let slot = self
            .slot(server)
            .ok_or_else(|| format!("no MCP server named \"{server}\""))?;
        if let Live::Down(ServerState::AwaitingTrust(why) | ServerState::Failed(why)) =
            &*slot.live.lock()
        {
            return Err(format!("server \"{server}\" is not started: {why}"));
        }
        // The login sends the entry's headers: only for the definition as it is trusted now.
        self.readmit(slot).await?;
        let challenge = slot.wanted_challenge();
        let _one_login = slot.logging_in.lock().await;
        let scopes = self
            .run_login(slot, challenge, &browser.without_paste())
            .await?;
        self.reconnect(slot).await?;
        Ok(scopes)
    }

    async fn run_login(
        &self,
        slot: &Slot,
        challenge: Option<Challenge>,
        browser: &Browser,
    ) -> Result<Vec<String>, String> {
        let name = &slot.entry.name;
        let target = slot
            .oauth
            .as_ref()
            .ok_or_else(|| format!("server \"{name}\" does not use OAuth"))?;
        let definition = slot
            .definition()
            .ok_or_else(|| format!("server \"{name}\" cannot start"))?;
        let Transport::Http { url, headers, .. } = &definition.transport else {
            return Err(format!("server \"{name}\" is not an HTTP server"));
        };
        login(LoginRequest {
            server: name,
            url,
            headers,
            settings: &target.settings,
            store: &target.store,
            key: &target.key,
            challenge,
            browser,
            timeout: CALLBACK_TIMEOUT,
        })
        .await
        .map_err(|error| format!("could not log in to \"{name}\": {error}"))
    }

    /// Connects `slot`'s server again (after a login) and marks its tools as replaced, once it
    /// is admitted again (see [`McpServers::readmit`]).
    async fn reconnect(&self, slot: &Slot) -> Result<Arc<Connection>, String> {
        let name = &slot.entry.name;
        self.readmit(slot).await?;
        let definition = slot
            .launch_definition()
            .ok_or_else(|| format!("server \"{name}\" cannot start"))?;
        let result = connect(
            &definition,
            &slot.cwd,
            self.handler_for(slot),
            slot.startup_timeout(&self.options),
            slot.oauth.as_ref(),
        )
        .await;
        match result {
            Ok(connected) => Ok(self.install(slot, connected)),
            Err(ConnectError::NeedsLogin(challenge)) => {
                let (reason, old) = slot.await_login(challenge).await;
                if let Some(old) = old {
                    self.close_in_background(old);
                }
                Err(format!("server \"{name}\" {reason}"))
            }
            Err(ConnectError::Failed(reason)) => Err(format!(
                "server \"{name}\" {}",
                slot.failure_with_hints(reason)
            )),
        }
    }

    /// Makes a new connection `slot`'s (after a restart or a login): the one it replaces is
    /// closed, a wanted login is settled, and its tool list is marked for the registry.
    fn install(&self, slot: &Slot, connected: Connected) -> Arc<Connection> {
        let connection = Arc::new(connected.connection);
        *slot.login_wanted.lock() = None;
        if let Some(old) = slot.set(Live::Up {
            connection: connection.clone(),
            tools: connected.tools,
            took: connected.took,
        }) {
            self.close_in_background(old);
        }
        *slot.tools_replaced.lock() = true;
        connection
    }

    /// Admits `slot`'s server again before a start after the first: the settings files are read
    /// again from disk (with the `${VAR}` values of the session's start), and the entry of its
    /// name must still be the one this session started, with its trust (definition, digest,
    /// record) still valid. Otherwise the server is left down, and the line says why as a new
    /// session would (`changed since you trusted it ... run `earshot mcp trust NAME``).
    ///
    /// # Errors
    /// `server "NAME" is not started: ...`.
    async fn readmit(&self, slot: &Slot) -> Result<(), String> {
        if slot.entry.session_only {
            // A client's session server is in no settings file and runs no process here.
            return Ok(());
        }
        let name = &slot.entry.name;
        // Reading the settings files and hashing the project files a server names is blocking
        // I/O: it runs off the async caller's thread.
        let readmission = self.readmission.clone();
        let started = slot.entry.clone();
        let refusal = tokio::task::spawn_blocking(move || readmission.refusal(&started))
            .await
            .unwrap_or_else(|_| Err(("its admission check panicked".to_string(), false)));
        let (why, trust) = match refusal {
            Ok(launch) => {
                *slot.launch.lock() = Some(launch);
                return Ok(());
            }
            Err(refusal) => refusal,
        };
        let line = format!("server \"{name}\" is not started: {why}");
        let state = if trust {
            ServerState::AwaitingTrust(why)
        } else {
            ServerState::Failed(why)
        };
        if let Some(old) = slot.set(Live::Down(state)) {
            self.close_in_background(old);
        }
        Err(line)
    }

    fn restart_allowed(&self, slot: &Slot) -> Result<(), String> {
        if *slot.restarted.lock() {
            Err("it was already restarted once in this session, so it stays down".into())
        } else {
            Ok(())
        }
    }

    fn mark_died(&self, slot: &Slot, ending: &Ending) {
        let reason = ending.sentence("");
        let mut died_at = slot.died_at.lock();
        if died_at.is_none() {
            *died_at = Some(Instant::now());
        }
        drop(died_at);
        if let Some(old) = slot.set(Live::Down(ServerState::Died(reason))) {
            self.close_in_background(old);
        }
    }

    async fn restart(&self, slot: &Slot) -> Result<(Arc<Connection>, String), CallError> {
        let name = &slot.entry.name;
        *slot.restarted.lock() = true;
        let reason = match &*slot.live.lock() {
            Live::Down(ServerState::Died(reason)) => reason.clone(),
            _ => "stopped".into(),
        };
        let since = slot
            .died_at
            .lock()
            .map(|at| at.elapsed())
            .unwrap_or_default();
        let wait = self.options.restart_backoff.saturating_sub(since);
        let timeout = slot.startup_timeout(&self.options);
        let cwd = slot.cwd.clone();
        let handler = self.handler_for(slot);
        tokio::time::sleep(wait).await;
        self.readmit(slot).await.map_err(|line| {
            CallError::failed(
                line,
                FailureCause::ServerUnavailable {
                    server: name.clone(),
                },
            )
        })?;
        let definition = slot.launch_definition().expect("it was connected once");
        let result = connect(&definition, &cwd, handler, timeout, slot.oauth.as_ref()).await;
        match result {
            Ok(connected) => {
                let connection = self.install(slot, connected);
                *slot.died_at.lock() = None;
                Ok((
                    connection,
                    format!(
                        "server \"{name}\" had stopped ({reason}); restarted it after {}",
                        seconds(wait.max(Duration::from_millis(1)))
                    ),
                ))
            }
            Err(ConnectError::NeedsLogin(challenge)) => {
                let (reason, _) = slot.await_login(challenge).await;
                Err(CallError::failed(
                    format!("server \"{name}\" {reason}"),
                    FailureCause::ServerUnavailable {
                        server: name.clone(),
                    },
                ))
            }
            Err(ConnectError::Failed(error)) => {
                // Built as the definition is written: a value a `${VAR}` expanded to (a URL's
                // key) goes back to `${VAR}` before the line reaches anyone (hooks included).
                let reason = format!(
                    "could not be restarted: {}",
                    earshot_core::redact::redact(&slot.failure_with_hints(error))
                );
                slot.set(Live::Down(ServerState::Died(reason.clone())));
                Err(CallError::failed(
                    format!("server \"{name}\" {reason}"),
                    FailureCause::ServerGone {
                        server: name.clone(),
                        restartable: false,
                    },
                ))
            }
        }
    }

    fn close_in_background(&self, connection: Arc<Connection>) {
        let grace = self.options.exit_grace;
        self.handle.spawn(async move {
            if let Ok(connection) = Arc::try_unwrap(connection) {
                connection.close(grace).await;
            }
        });
    }

    fn slot(&self, server: &str) -> Option<&Slot> {
        self.slots.iter().find(|slot| slot.entry.name == server)
    }

    /// The process id of a connected stdio server (for tests and diagnostics).
    pub fn pid_of(&self, server: &str) -> Option<u32> {
        match &*self.slot(server)?.live.lock() {
            Live::Up { connection, .. } => connection.pid,
            Live::Down(_) => None,
        }
    }

    fn take_connections(&self) -> Vec<Arc<Connection>> {
        self.slots
            .iter()
            .filter_map(|slot| slot.set(Live::Down(ServerState::Failed("shut down".into()))))
            .collect()
    }

    /// Ends every server and waits until they are gone: closes each one's stdin, then ends its
    /// process group (SIGTERM, then SIGKILL after a grace period), all at once.
    pub async fn shut_down(&self) {
        let mut set = tokio::task::JoinSet::new();
        for connection in self.take_connections() {
            if let Ok(connection) = Arc::try_unwrap(connection) {
                set.spawn(connection.close(self.options.exit_grace));
            }
        }
        while set.join_next().await.is_some() {}
    }
}

impl Drop for McpServers {
    /// Never blocks and never panics, inside async code or out: the same shutdown runs as
    /// background tasks on the session's runtime. If that runtime is already gone, each
    /// server's process group is killed as its supervisor is dropped.
    fn drop(&mut self) {
        for connection in self.take_connections() {
            if let Ok(connection) = Arc::try_unwrap(connection) {
                drop(self.handle.spawn(connection.close(self.options.exit_grace)));
            }
        }
    }
}

/// The entry's first state from its admission (see `admission::effective_entry`): a usable,
/// admitted entry is `Starting` until `connect_admitted` replaces it.
fn admit(entry: &ServerEntry, admitted: Result<(), String>) -> ServerState {
    match (&entry.definition, admitted) {
        (Err(reason), _) => ServerState::Failed(reason.clone()),
        (Ok(_), Ok(())) => ServerState::Starting,
        (Ok(_), Err(why)) => ServerState::AwaitingTrust(why),
    }
}

fn live_of(connected: Connected) -> Live {
    let Connected {
        connection,
        tools,
        took,
    } = connected;
    Live::Up {
        connection: Arc::new(connection),
        tools,
        took,
    }
}

/// `needs login: run `earshot mcp login NAME``.
fn needs_login(name: &str) -> String {
    format!("needs login: run `earshot mcp login {name}`")
}

/// Sends one request through `send`, bounded by the call timeout (rmcp's own timeout can wait
/// on a blocked pipe; this one cannot).
async fn send_within<Send, Answer>(
    send: &Send,
    connection: &Arc<Connection>,
    timeout: Duration,
) -> Result<Value, CallFailure>
where
    Send: Fn(Arc<Connection>, Duration) -> Answer,
    Answer: std::future::Future<Output = Result<Value, CallFailure>>,
{
    tokio::time::timeout(
        timeout + Duration::from_secs(2),
        send(connection.clone(), timeout),
    )
    .await
    .unwrap_or_else(|_| Err(CallFailure::TimedOut(seconds(timeout))))
}
