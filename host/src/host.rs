//! A loaded session: settings, the gate, the sandboxes, MCP servers, and every tool in one
//! registry, plus what a model is shown of it (`tool_search` past 25 MCP tools).
//!
//! Built by [`HostBuilder`] and used from async code: loading, listing, calling and shutting
//! down are `async`, run on the embedder's tokio runtime, and never block on a runtime of their
//! own, so the earshot agent loop, an ACP or MCP server and the `earshot` command hold the same
//! [`Host`].

use parking_lot::{Mutex, RwLock, RwLockReadGuard};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use crate::dispatch::{HookNote, call_registered};
use crate::gate::{Gate, Outcome, Prompter};
use crate::hooks::{HookAsk, HookEngine, HookEvent, HookReport, HookTool, HookedCall};
use crate::loaders::components::load_components;
#[cfg(feature = "mcp")]
use crate::loaders::mcp::{load_mcp_tools, reload_server_tools};
#[cfg(not(feature = "mcp"))]
use crate::loaders::no_mcp::{McpServers, reload_server_tools};
use crate::mcp::{
    CallProgressCallback, Elicitor, LISTED_MCP_TOOLS_LIMIT, MAX_SEARCH_RESULTS, McpOptions,
    McpPrompt, McpPromptMessage, SearchDocument, SearchIndex, ServerState, SessionServer,
    StartProgress, TOOL_SEARCH_NAME, messages_of, missing_arguments, prompts_of,
};
#[cfg(feature = "mcp")]
use crate::mcp::{McpServers, read_servers};
use crate::names::{SourceKind, ToolId};
use crate::registry::{RegisteredTool, ToolRegistry};
use crate::runner::{CallError, ToolOutput};
use crate::sandbox::{
    ComponentCache, McpOutputParser, SandboxEngine, SandboxError, SandboxLimits, SchemaValidator,
};
use crate::settings::Settings;

mod hooked_calls;
mod mcp_resources;
mod mcp_start;
mod skills;
pub mod trust_source;

pub use mcp_start::McpStart;

/// Who asked for a call: what the model may call is what it was shown; the user may call any
/// tool by its exact name. Either way the gate decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Caller {
    /// The model, or a client acting for it: an MCP tool behind `tool_search` must be surfaced
    /// first.
    Model,
    /// A person who typed the tool's exact name (`earshot tools call`, the console's `/call`).
    User,
}

/// Looks up an environment variable for `${VAR}` in server definitions.
type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Hears each MCP server as it finishes starting (for a progress line).
type ProgressCallback = Box<dyn FnMut(StartProgress<'_>) + Send>;

/// Everything a session needs to list and call tools. Hold it in an `Arc` to share it between
/// tasks: every method takes `&self`, and calls from concurrent tasks run concurrently (MCP calls
/// excepted: they are serialised, as the spec says).
pub struct Host {
    settings: Settings,
    gate: Gate,
    validator: SchemaValidator,
    registry: RwLock<ToolRegistry>,
    mcp: Option<Arc<McpServers>>,
    parser: Option<Arc<McpOutputParser>>,
    surfaced: Mutex<BTreeSet<String>>,
    /// Bumped whenever what a model is shown may have changed (a server's new tool list, a
    /// `tool_search` that surfaced tools), so a listener can tell without listing.
    listing_version: AtomicU64,
    /// `tool_search`'s index of the MCP tools, built at the first search and dropped when a
    /// server's tools change.
    search_index: Mutex<Option<Arc<SearchIndex>>>,
    /// The session's hooks, when any may run (`None` with hooks off or none configured).
    hooks: Option<Arc<HookEngine>>,
    /// What the hooks on `SessionStart` said.
    session_start: HookReport,
    /// What the user should know about the session's hooks (untrusted, refused, changed).
    hook_notices: Vec<String>,
    /// The session's skills and slash commands (found once, at start).
    skills: Arc<crate::skills::Library>,
    /// Which configured servers the session started, and what starting one later needs (a
    /// call moved by a hook to a server this session did not start).
    late_start: LateStart,
}

/// What starting a configured server during a session needs, and the servers started so.
struct LateStart {
    start: McpStart,
    env: EnvLookup,
    #[cfg_attr(
        not(feature = "mcp"),
        expect(
            dead_code,
            reason = "only a build with the MCP client starts a server late"
        )
    )]
    options: McpOptions,
    /// Each server started during the session, by name (one session of its own each).
    started: tokio::sync::Mutex<BTreeMap<String, Arc<McpServers>>>,
    elicitor: Mutex<Option<Arc<dyn Elicitor>>>,
    call_progress: Mutex<Option<CallProgressCallback>>,
}

/// One tool as a model is shown it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct ModelTool {
    /// The name the model calls it by (namespaced, or a stable alias).
    pub name: String,
    /// The rule that names it (`Mcp(github__create_issue)`); `None` for `tool_search`.
    pub identity: Option<String>,
    /// What it does.
    pub description: String,
    /// Its input schema.
    pub input_schema: Value,
    /// Its source's read-only claim (for an MCP tool, `readOnlyHint`: shown, never believed).
    pub read_only: bool,
    /// Where it comes from; `None` for `tool_search`, which the host provides.
    pub kind: Option<SourceKind>,
    /// The schema its structured results match, when it declared one (an MCP tool's
    /// `outputSchema`), for clients that read results as data.
    pub output_schema: Option<Value>,
}

impl ModelTool {
    /// The tool as JSON for a reader (`tools list --json`, `tool_search`'s results):
    /// `read_only` is what the gate believes, so an MCP tool's readOnlyHint (never believed) is
    /// shown apart, as `claims_read_only`.
    pub fn to_shown_json(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or_else(|_| json!({"name": self.name}));
        if self.kind == Some(SourceKind::Mcp)
            && let Some(object) = value.as_object_mut()
        {
            object.insert("read_only".into(), false.into());
            object.insert("claims_read_only".into(), self.read_only.into());
        }
        value
    }
}

/// Builds a [`Host`]: the settings, and optionally the sandbox engine, the compiled-component
/// cache, component limits, MCP timeouts, a start-up progress callback, an environment for
/// `${VAR}` in server definitions, and the tokio runtime the session lives on.
pub struct HostBuilder {
    settings: Settings,
    engine: Option<SandboxEngine>,
    cache: Option<ComponentCache>,
    limits: SandboxLimits,
    mcp_options: Option<McpOptions>,
    progress: Option<ProgressCallback>,
    env: Option<EnvLookup>,
    runtime: Option<tokio::runtime::Handle>,
    elicitor: Option<Arc<dyn Elicitor>>,
    call_progress: Option<CallProgressCallback>,
    session_servers: Vec<SessionServer>,
    hooks: bool,
    session_id: Option<String>,
    mcp_start: McpStart,
}

impl HostBuilder {
    /// A builder for a session on `settings`, with every other part at its default.
    pub fn new(settings: Settings) -> HostBuilder {
        HostBuilder {
            settings,
            engine: None,
            cache: None,
            limits: SandboxLimits::TOOL_COMPONENT,
            mcp_options: None,
            progress: None,
            env: None,
            runtime: None,
            elicitor: None,
            call_progress: None,
            session_servers: Vec::new(),
            hooks: true,
            session_id: None,
            mcp_start: McpStart::All,
        }
    }

    /// Which configured MCP servers start (default: all of them). A one-shot call by name
    /// starts only what it needs ([`McpStart::for_call`]); a session that shows tools to a
    /// model should start them all, since `tool_search` counts only the servers started.
    pub fn mcp_start(mut self, start: McpStart) -> HostBuilder {
        self.mcp_start = start;
        self
    }

    /// Whether the hooks in the settings run (default: yes). Off is `--no-hooks`: it only
    /// narrows what runs, since a hook can never grant.
    pub fn hooks(mut self, enabled: bool) -> HostBuilder {
        self.hooks = enabled;
        self
    }

    /// The session's id as hooks see it (`session_id`, `EARSHOT_SESSION_ID`); default: a new
    /// random UUID.
    pub fn session_id(mut self, id: impl Into<String>) -> HostBuilder {
        self.session_id = Some(id.into());
        self
    }

    /// Adds streamable HTTP servers for this session only (an editor's, over ACP), started
    /// without a trust record and gated like every server. A name the settings already use is
    /// not started: screen the client's list first (`acp::screen_session_mcp` reports why).
    pub fn session_servers(mut self, servers: Vec<SessionServer>) -> HostBuilder {
        self.session_servers = servers;
        self
    }

    /// Receives the progress MCP servers report during calls (for a progress line or a
    /// spinner); replaceable later with [`Host::set_call_progress`]. Reports are rate-limited
    /// per server.
    pub fn call_progress(mut self, callback: CallProgressCallback) -> HostBuilder {
        self.call_progress = Some(callback);
        self
    }

    /// Who answers MCP servers' elicitations (default: [`crate::mcp::DeclineElicitations`]); replaceable
    /// later with [`Host::set_elicitor`]. An elicitation grants nothing: it is data for the
    /// server, never a permission answer.
    pub fn elicitor(mut self, elicitor: Arc<dyn Elicitor>) -> HostBuilder {
        self.elicitor = Some(elicitor);
        self
    }

    /// The sandbox engine (default: the process-wide shared engine).
    pub fn engine(mut self, engine: SandboxEngine) -> HostBuilder {
        self.engine = Some(engine);
        self
    }

    /// The compiled-component cache (default: `cache/components` under the settings' user
    /// config dir, or none when there is no config dir).
    pub fn cache(mut self, cache: ComponentCache) -> HostBuilder {
        self.cache = Some(cache);
        self
    }

    /// Memory and CPU limits of every tool component (default: [`SandboxLimits::TOOL_COMPONENT`]).
    pub fn component_limits(mut self, limits: SandboxLimits) -> HostBuilder {
        self.limits = limits;
        self
    }

    /// MCP timeouts and back-off (default: from the settings, [`McpOptions::from_settings`]).
    pub fn mcp_options(mut self, options: McpOptions) -> HostBuilder {
        self.mcp_options = Some(options);
        self
    }

    /// Called as each MCP server finishes starting (connected or failed).
    pub fn progress(
        mut self,
        progress: impl FnMut(StartProgress<'_>) + Send + 'static,
    ) -> HostBuilder {
        self.progress = Some(Box::new(progress));
        self
    }

    /// Where `${VAR}` in server definitions is looked up (default: this process's environment).
    pub fn env(
        mut self,
        lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> HostBuilder {
        self.env = Some(Arc::new(lookup));
        self
    }

    /// The runtime the session's MCP connections live on (default: the runtime `build` is
    /// awaited on). It needs IO and time enabled.
    pub fn runtime(mut self, handle: tokio::runtime::Handle) -> HostBuilder {
        self.runtime = Some(handle);
        self
    }

    /// Loads every source the settings allow: components and extensions on tokio's blocking
    /// pool, MCP servers concurrently on the session's runtime.
    ///
    /// # Errors
    /// A [`SandboxError`] only if the host's own sandbox components cannot start; every
    /// problem with a source is recorded in the registry instead.
    ///
    /// # Panics
    /// If awaited outside a tokio runtime and no [`HostBuilder::runtime`] was given.
    pub async fn build(self) -> Result<Host, SandboxError> {
        match self.runtime.clone() {
            Some(handle) => handle
                .spawn(self.build_here())
                .await
                .unwrap_or_else(|joined| std::panic::resume_unwind(joined.into_panic())),
            None => self.build_here().await,
        }
    }

    async fn build_here(self) -> Result<Host, SandboxError> {
        let HostBuilder {
            settings,
            engine,
            cache,
            limits,
            mcp_options,
            mut progress,
            env,
            runtime: _,
            elicitor,
            call_progress,
            session_servers,
            hooks,
            session_id,
            mcp_start,
        } = self;
        let engine = engine.unwrap_or_else(SandboxEngine::shared);
        let cache = cache.unwrap_or_else(|| match &settings.user_config_dir {
            Some(dir) => ComponentCache::for_config_dir(dir),
            None => ComponentCache::disabled(),
        });
        let env: EnvLookup = env.unwrap_or_else(|| Arc::new(|name: &str| std::env::var(name).ok()));
        let mcp_options = mcp_options.unwrap_or_else(|| McpOptions::from_settings(&settings));
        #[cfg(not(feature = "mcp"))]
        let wants_mcp = false;
        #[cfg(feature = "mcp")]
        let wants_mcp = read_servers(&settings, &*env)
            .iter()
            .any(|entry| mcp_start.includes(&entry.name))
            || session_servers
                .iter()
                .any(|server| mcp_start.includes(&server.name));
        let hook_env = env.clone();
        let late_env = env.clone();
        let (late_elicitor, late_progress) = (elicitor.clone(), call_progress.clone());
        // Compiling components and running extensions' top levels is blocking work.
        let (settings, validator, mut registry, parser, skills) = blocking(move || {
            // Loaded at the first schema: a session with no plugin never maps its code.
            let validator = SchemaValidator::deferred(&engine, &cache);
            let mut registry = ToolRegistry::new();
            load_components(
                &settings,
                &engine,
                &cache,
                &validator,
                limits,
                &mut registry,
            );
            #[cfg(feature = "js")]
            crate::loaders::extensions::load_extensions(
                &settings,
                &validator,
                crate::loaders::extensions::limits_from_settings(&settings),
                &mut registry,
            );
            #[cfg(not(feature = "js"))]
            crate::loaders::no_extensions::load_extensions(&settings, &mut registry);
            let skills = Arc::new(crate::skills::Library::load(&settings));
            let parser = if wants_mcp {
                Some(Arc::new(McpOutputParser::new(&engine, &cache)?))
            } else {
                None
            };
            Ok::<_, SandboxError>((settings, validator, registry, parser, skills))
        })
        .await?;
        #[cfg(feature = "mcp")]
        let mcp = match &parser {
            Some(parser) => {
                let mut report = |step: StartProgress<'_>| {
                    if let Some(progress) = progress.as_mut() {
                        progress(step);
                    }
                };
                let servers = Arc::new(
                    McpServers::start_selected(
                        &settings,
                        &*env,
                        mcp_options,
                        &|name| mcp_start.includes(name),
                        &session_servers,
                        &mut report,
                    )
                    .await,
                );
                if let Some(elicitor) = elicitor {
                    servers.set_elicitor(elicitor);
                }
                if let Some(callback) = call_progress {
                    servers.set_call_progress(callback);
                }
                load_mcp_tools(&servers, &validator, parser, &mut registry);
                Some(servers)
            }
            None => None,
        };
        #[cfg(not(feature = "mcp"))]
        let mcp: Option<Arc<McpServers>> = {
            let _ = (mcp_options, elicitor, call_progress, &mut progress, &parser);
            crate::loaders::no_mcp::report_servers(
                &settings,
                &*env,
                &|name| mcp_start.includes(name),
                &session_servers,
                &mut registry,
            );
            None
        };
        let gate = Gate::from_settings(&settings);
        let (hooks, hook_notices) = if hooks {
            let session_id = session_id.unwrap_or_else(new_session_id);
            let for_hooks = settings.clone();
            // Admission hashes the project files each hook names.
            let engine = blocking(move || HookEngine::load(&for_hooks, session_id, hook_env)).await;
            let notices = engine.notices().to_vec();
            (
                (!engine.hooks().is_empty()).then(|| Arc::new(engine)),
                notices,
            )
        } else {
            (None, Vec::new())
        };
        let session_start = match &hooks {
            Some(engine) => {
                let mut fields = serde_json::Map::new();
                fields.insert("source".into(), "startup".into());
                engine.fire(HookEvent::SessionStart, fields, None).await
            }
            None => HookReport::default(),
        };
        Ok(Host {
            settings,
            gate,
            validator,
            registry: RwLock::new(registry),
            mcp,
            parser,
            surfaced: Mutex::new(BTreeSet::new()),
            listing_version: AtomicU64::new(0),
            search_index: Mutex::new(None),
            hooks,
            session_start,
            hook_notices,
            skills,
            late_start: LateStart {
                start: mcp_start,
                env: late_env,
                options: mcp_options,
                started: tokio::sync::Mutex::new(BTreeMap::new()),
                elicitor: Mutex::new(late_elicitor),
                call_progress: Mutex::new(late_progress),
            },
        })
    }
}

/// A random version 4 UUID: a session's id when the embedder gives none.
fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    let _ = getrandom::fill(&mut bytes);
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .to_string()
}

/// Runs blocking work on tokio's blocking pool, passing a panic on to the caller.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|joined| std::panic::resume_unwind(joined.into_panic()))
}

impl Host {
    /// The settings this session loaded.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The registry of every tool (held for reading while the guard lives).
    pub fn registry(&self) -> RwLockReadGuard<'_, ToolRegistry> {
        self.registry.read()
    }

    /// The session's MCP servers, when any are configured.
    pub fn mcp(&self) -> Option<&Arc<McpServers>> {
        self.mcp.as_ref()
    }

    /// The gate.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// Picks up tool lists that servers announced as changed (`notifications/tools/list_changed`);
    /// returns the servers whose tools were listed again. Listing and calling do this first.
    pub async fn refresh_changed_tools(&self) -> Vec<String> {
        let (Some(servers), Some(parser)) = (&self.mcp, &self.parser) else {
            return Vec::new();
        };
        // Boxed: the refresh's state (a reconnect after a login) would otherwise be part of the
        // future of every call, some 11 KB that an extension or component call would set up and
        // move for nothing.
        let changed = Box::pin(servers.refresh_changed()).await;
        if !changed.is_empty() {
            let mut registry = self.registry.write();
            for server in &changed {
                reload_server_tools(servers, server, &self.validator, parser, &mut registry);
            }
            *self.search_index.lock() = None;
            self.listing_version.fetch_add(1, Ordering::SeqCst);
        }
        changed
    }

    /// A number that changes whenever what [`Host::model_tools`] returns may have changed (a
    /// server's new tool list was picked up, or `tool_search` surfaced tools): compare it to tell
    /// a client its list changed without listing.
    pub fn listing_version(&self) -> u64 {
        self.listing_version.load(Ordering::SeqCst)
    }

    /// Whether MCP tools are reached through `tool_search` (more than 25 of them), after picking
    /// up announced tool-list changes.
    pub async fn tool_search_active(&self) -> bool {
        self.refresh_changed_tools().await;
        self.counted_tool_search_active()
    }

    fn counted_tool_search_active(&self) -> bool {
        self.registry().mcp_tool_count() > LISTED_MCP_TOOLS_LIMIT
    }

    /// Exactly what a model is shown: every extension and component tool, and either every MCP
    /// tool (25 or fewer) or `tool_search` plus the MCP tools it surfaced in this session.
    pub async fn model_tools(&self) -> Vec<ModelTool> {
        self.refresh_changed_tools().await;
        let searching = self.counted_tool_search_active();
        let surfaced = self.surfaced.lock().clone();
        let mut tools: Vec<ModelTool> = self
            .registry()
            .tools()
            .filter(|tool| {
                !searching
                    || tool.id.kind() != SourceKind::Mcp
                    || surfaced.contains(&tool.id.namespaced())
            })
            .map(model_tool)
            .collect();
        tools.extend(self.host_tools());
        tools
    }

    /// The host's own tools as the model is offered them now: `tool_search` (past 25 MCP
    /// tools), the two resource tools (when a server offers resources) and `skill` (when there
    /// is a skill to load). [`Host::model_tools`] shows these, and the tool events' hooks fire
    /// for exactly these, so a tool offered to the model is never called past its hooks.
    pub(crate) fn host_tools(&self) -> Vec<ModelTool> {
        let mut tools = Vec::new();
        if self.mcp.is_some() && self.counted_tool_search_active() {
            tools.push(tool_search_tool());
        }
        tools.extend(self.resource_tools());
        tools.extend(self.skill_tool());
        tools
    }

    /// Calls a tool for the model through the gate, asking `prompter` only on ask.
    /// `tool_search` runs here; an MCP tool that is neither listed nor surfaced cannot be
    /// called ([`CallError::NotListed`]).
    ///
    /// # Errors
    /// A [`CallError`] saying why it did not run or did not finish; a runtime failure carries
    /// its typed [`FailureCause`](crate::FailureCause).
    pub async fn call(
        &self,
        name: &str,
        input_json: &str,
        prompter: &dyn Prompter,
    ) -> Result<ToolOutput, CallError> {
        self.call_as(Caller::Model, name, input_json, prompter)
            .await
    }

    /// Calls a tool whose exact name a person typed (`earshot tools call`, a console's
    /// `/call`): the user's own request, so an MCP tool behind `tool_search` is called without
    /// a search first. Nothing else changes: hooks run around it and the gate decides, asking
    /// `prompter` only on ask. Never use it for a name a model chose.
    ///
    /// # Errors
    /// As [`Host::call`], except that it never returns [`CallError::NotListed`].
    pub async fn call_by_user(
        &self,
        name: &str,
        input_json: &str,
        prompter: &dyn Prompter,
    ) -> Result<ToolOutput, CallError> {
        self.call_as(Caller::User, name, input_json, prompter).await
    }

    async fn call_as(
        &self,
        caller: Caller,
        name: &str,
        input_json: &str,
        prompter: &dyn Prompter,
    ) -> Result<ToolOutput, CallError> {
        if let Some(hooks) = &self.hooks
            && hooks.has_tool_hooks()
        {
            // Boxed: with no tool hooks a call's future stays as small as it was.
            return Box::pin(self.call_hooked(hooks, caller, name, input_json, prompter)).await;
        }
        let result = self
            .call_unhooked(caller, name, input_json, prompter, None)
            .await;
        if self.hooks.is_some() {
            // Hooks speak to the model in this session (at its start, in a prompt): no tool
            // may pose as one, whatever part of its result it writes in.
            return result.map(|output| output.with_hook_context(""));
        }
        result
    }

    /// The MCP tools `tool_search` stands for now (none when it is not offered): what a model
    /// must search for, and what a person may still call by its exact name.
    pub async fn tools_behind_search(&self) -> Vec<ModelTool> {
        self.refresh_changed_tools().await;
        if !self.counted_tool_search_active() {
            return Vec::new();
        }
        let surfaced = self.surfaced.lock().clone();
        self.registry()
            .tools()
            .filter(|tool| {
                tool.id.kind() == SourceKind::Mcp && !surfaced.contains(&tool.id.namespaced())
            })
            .map(model_tool)
            .collect()
    }

    /// Whether `tool`, an MCP tool, is hidden from `caller` behind `tool_search`.
    fn behind_search(&self, caller: Caller, tool: &RegisteredTool) -> bool {
        caller == Caller::Model
            && self.mcp.is_some()
            && tool.id.kind() == SourceKind::Mcp
            && self.counted_tool_search_active()
            && !self.surfaced.lock().contains(&tool.id.namespaced())
    }

    /// [`Host::call`] after the `PreToolUse` hooks (`hooks` says what they did): `tool_search`
    /// and the resource tools run here, every other tool through dispatch.
    async fn call_unhooked(
        &self,
        caller: Caller,
        name: &str,
        input_json: &str,
        prompter: &dyn Prompter,
        hooks: Option<&HookNote>,
    ) -> Result<ToolOutput, CallError> {
        // After hooks the lists were refreshed already: a tool that appeared since would run
        // without the hooks that never saw it.
        if hooks.is_none() {
            self.refresh_changed_tools().await;
        }
        // With no MCP server there is no tool_search to count for.
        let searching = self.mcp.is_some() && self.counted_tool_search_active();
        if name == TOOL_SEARCH_NAME && searching {
            if hooks.is_some_and(|hooks| hooks.ask.is_some()) {
                // Boxed: its state stays out of every other call's future.
                Box::pin(self.ask_for_hook(name, input_json, hooks, prompter)).await?;
            }
            return self.tool_search(input_json);
        }
        if self.is_skill_tool(name) {
            return Box::pin(self.call_skill_tool(input_json, prompter, hooks)).await;
        }
        let raised = hooks.is_some_and(|hooks| hooks.ask.is_some());
        // Reading a resource is gated on its server: a hook's ask raises that gate (a deny rule
        // still denies first). Listing them is gated by nothing else, so the ask comes first.
        let reads = name == crate::mcp::READ_RESOURCE_TOOL;
        if let Some(answer) = self.resource_tool_call(name, input_json, prompter, raised && reads) {
            if raised && !reads {
                Box::pin(self.ask_for_hook(name, input_json, hooks, prompter)).await?;
            }
            return answer.await;
        }
        // The shared entry: no lock is held while the gate asks or the tool runs, so a
        // list_changed refresh never waits on a prompt or a slow call.
        let tool = self
            .registry()
            .find_shared(name)
            .cloned()
            .ok_or_else(|| self.unknown_tool(name))?;
        if self.behind_search(caller, &tool) {
            return Err(CallError::NotListed(tool.id.namespaced()));
        }
        call_registered(
            &tool,
            &self.gate,
            &self.validator,
            prompter,
            input_json,
            hooks,
        )
        .await
    }

    /// For one of the host's own tools, which no rule covers: when a hook asked for approval,
    /// the one ask that must be answered yes before it runs.
    async fn ask_for_hook(
        &self,
        name: &str,
        input_json: &str,
        hooks: Option<&HookNote>,
        prompter: &dyn Prompter,
    ) -> Result<(), CallError> {
        let Some(ask) = hooks.and_then(|hooks| hooks.ask.as_ref()) else {
            return Ok(());
        };
        let detail = format!(
            "input: {} | hook \"{}\" asks: {}",
            crate::gate::sanitise_for_terminal(input_json, 600),
            ask.hook,
            ask.reason
        );
        match self.gate.ask_for_hook(name, &detail, prompter).await {
            Outcome::Allowed => Ok(()),
            Outcome::Denied(reason) => Err(CallError::Denied(reason)),
        }
    }

    /// Why `name` cannot be called: its server is waiting for a login (its tools are not listed
    /// until then; the error says which command logs in), or is not connected (awaiting trust,
    /// failed, died: the error says why), else it is unknown.
    fn unknown_tool(&self, name: &str) -> CallError {
        let down = self.mcp.as_ref().and_then(|servers| {
            servers.statuses().into_iter().find_map(|status| {
                let names_it = name
                    .strip_prefix(status.name.as_str())
                    .is_some_and(|rest| rest.starts_with("__"));
                match status.state {
                    ServerState::NeedsLogin(reason) if names_it => {
                        Some((status.name, format!("{reason} before {name} can be called")))
                    }
                    ServerState::AwaitingTrust(reason)
                    | ServerState::Failed(reason)
                    | ServerState::Died(reason)
                        if names_it =>
                    {
                        Some((
                            status.name,
                            format!("is not connected, so {name} cannot be called: {reason}"),
                        ))
                    }
                    _ => None,
                }
            })
        });
        match down {
            Some((server, why)) => CallError::failed(
                format!("server \"{server}\" {why}"),
                crate::FailureCause::ServerUnavailable { server },
            ),
            None => CallError::UnknownTool(name.to_string()),
        }
    }

    /// Answers MCP servers' elicitations with `elicitor` from now on (for the calls that follow;
    /// an elicitation already being answered keeps its elicitor).
    pub fn set_elicitor(&self, elicitor: Arc<dyn Elicitor>) {
        *self.late_start.elicitor.lock() = Some(elicitor.clone());
        if let Ok(started) = self.late_start.started.try_lock() {
            for servers in started.values() {
                servers.set_elicitor(elicitor.clone());
            }
        }
        if let Some(servers) = &self.mcp {
            servers.set_elicitor(elicitor);
        }
    }

    /// Reports the progress MCP servers send during calls to `callback` from now on.
    pub fn set_call_progress(&self, callback: CallProgressCallback) {
        *self.late_start.call_progress.lock() = Some(callback.clone());
        if let Ok(started) = self.late_start.started.try_lock() {
            for servers in started.values() {
                servers.set_call_progress(callback.clone());
            }
        }
        if let Some(servers) = &self.mcp {
            servers.set_call_progress(callback);
        }
    }

    /// The prompts of the running MCP servers (of `server` alone when given), as slash commands
    /// (`/mcp__github__review`) with their arguments, for an agent to offer. A server that
    /// declares no prompts offers none, a prompt a deny rule covers is not offered, and a server
    /// that fails to list them is left out, with the reason in the second list.
    pub async fn mcp_prompts(&self, server: Option<&str>) -> (Vec<McpPrompt>, Vec<CallError>) {
        let Some(servers) = &self.mcp else {
            return (Vec::new(), Vec::new());
        };
        let names: Vec<String> = match server {
            Some(server) => vec![server.to_string()],
            None => servers
                .statuses()
                .into_iter()
                .filter(|status| matches!(status.state, ServerState::Connected { .. }))
                .map(|status| status.name)
                .collect(),
        };
        let (mut prompts, mut failures) = (Vec::new(), Vec::new());
        for name in names {
            match servers.list_prompts(&name).await {
                Ok(listed) => {
                    for prompt in prompts_of(&name, &listed) {
                        // A prompt a deny rule covers is not offered.
                        let denied = match ToolId::mcp(&name, &prompt.name) {
                            Ok(id) => self.refuse_if_denied_as(&id).await.is_err(),
                            Err(_) => true,
                        };
                        if !denied {
                            prompts.push(prompt);
                        }
                    }
                }
                Err(error) => failures.push(error),
            }
        }
        (prompts, failures)
    }

    /// The messages of prompt `name` of `server` with `arguments` (string values), each content
    /// block normalised in the mcp-output sandbox. The user asked for it, so nothing is asked,
    /// but a deny rule over `Mcp(server__name)` refuses it, as it would a tool of that name.
    ///
    /// # Errors
    /// [`CallError::Denied`] by a rule, [`CallError::MissingPromptArguments`] naming what to
    /// add, [`CallError::UnknownTool`] for a prompt the server does not list, or a typed
    /// [`CallError::Failed`] from the server or the sandbox.
    pub async fn get_mcp_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: &BTreeMap<String, String>,
    ) -> Result<Vec<McpPromptMessage>, CallError> {
        let command = format!("/mcp__{server}__{name}");
        let (Some(servers), Some(parser)) = (&self.mcp, &self.parser) else {
            return Err(CallError::UnknownTool(command));
        };
        let id = ToolId::mcp(server, name).map_err(|_| CallError::UnknownTool(command.clone()))?;
        // Only a deny rule can stop it: the gate's own line names the rule.
        self.refuse_if_denied_as(&id).await?;
        let listed = servers.list_prompts(server).await?;
        let prompt = prompts_of(server, &listed)
            .into_iter()
            .find(|prompt| prompt.name == name)
            .ok_or_else(|| CallError::UnknownTool(command.clone()))?;
        let arguments: serde_json::Map<String, Value> = arguments
            .iter()
            .map(|(key, value)| (key.clone(), Value::String(value.clone())))
            .collect();
        if let Some(missing) = missing_arguments(&prompt, &arguments) {
            return Err(missing);
        }
        let outcome = servers.get_prompt(server, name, arguments).await?;
        messages_of(server, name, &outcome.result, parser)
    }

    /// Ends every MCP server and waits until they are gone (stdin closed, then SIGTERM, then
    /// SIGKILL after a grace period, all servers at once). Dropping a `Host` without it neither
    /// blocks nor panics: the same sequence then runs in the background on the session's runtime.
    pub async fn shutdown(&self) {
        if let Some(hooks) = &self.hooks {
            let mut fields = serde_json::Map::new();
            fields.insert("reason".into(), "shutdown".into());
            let report = hooks.fire(HookEvent::SessionEnd, fields, None).await;
            for line in report.lines_for_user() {
                tracing::warn!("{line}");
            }
        }
        if let Some(servers) = &self.mcp {
            servers.shut_down().await;
        }
        let late: Vec<Arc<McpServers>> = self
            .late_start
            .started
            .lock()
            .await
            .values()
            .cloned()
            .collect();
        for servers in late {
            servers.shut_down().await;
        }
    }

    /// Whether `server` is configured but was left out of this session by its [`McpStart`]: a
    /// call a hook moved to it starts it ([`Host::start_late`]) once the gate allows that call.
    pub(crate) fn startable_late(&self, server: &str) -> bool {
        !self.late_start.start.includes(server)
            && crate::mcp::read_servers(&self.settings, &*self.late_start.env)
                .iter()
                .any(|entry| entry.name == server)
    }

    /// Starts `server`, configured but not started by this session (see
    /// [`Host::startable_late`]), as the session would have: admitted (trusted) from the
    /// settings as they are, with the session's options, elicitor and progress callback. Started
    /// once; later calls reuse it, and [`Host::shutdown`] ends it.
    #[cfg(feature = "mcp")]
    pub(crate) async fn start_late(&self, server: &str) -> Arc<McpServers> {
        let mut started = self.late_start.started.lock().await;
        if let Some(servers) = started.get(server) {
            return servers.clone();
        }
        let servers = Arc::new(
            McpServers::start_selected(
                &self.settings,
                &*self.late_start.env,
                self.late_start.options,
                &|name: &str| name == server,
                &[],
                &mut |_: StartProgress<'_>| {},
            )
            .await,
        );
        if let Some(elicitor) = self.late_start.elicitor.lock().clone() {
            servers.set_elicitor(elicitor);
        }
        if let Some(callback) = self.late_start.call_progress.lock().clone() {
            servers.set_call_progress(callback);
        }
        started.insert(server.to_string(), servers.clone());
        servers
    }

    /// `tool_search`: ranks the MCP tools by the query, returns at most ten, and keeps what it
    /// returned listed for the rest of the session. It grants nothing: a surfaced tool is gated
    /// like any other.
    fn tool_search(&self, input_json: &str) -> Result<ToolOutput, CallError> {
        let invalid = |issue: &str| CallError::InvalidInput {
            tool: TOOL_SEARCH_NAME.into(),
            issues: vec![issue.to_string()],
        };
        let input: Value = serde_json::from_str(input_json)
            .map_err(|error| invalid(&format!("it is not JSON: {error}")))?;
        let query = input
            .get("query")
            .and_then(Value::as_str)
            .filter(|query| !query.trim().is_empty())
            .ok_or_else(|| invalid("\"query\" must be a non-empty string"))?;
        let limit = match input.get("limit") {
            None | Some(Value::Null) => 5,
            Some(value) => value
                .as_u64()
                .filter(|n| (1..=MAX_SEARCH_RESULTS as u64).contains(n))
                .ok_or_else(|| invalid("\"limit\" must be a whole number from 1 to 10"))?
                as usize,
        };
        let registry = self.registry();
        let index = self
            .search_index
            .lock()
            .get_or_insert_with(|| {
                let documents: Vec<SearchDocument> = registry
                    .tools()
                    .filter(|tool| tool.id.kind() == SourceKind::Mcp)
                    .map(|tool| SearchDocument {
                        name: tool.id.namespaced(),
                        text: tool.runner.search_text(&tool.id, &tool.description),
                    })
                    .collect();
                Arc::new(SearchIndex::new(&documents))
            })
            .clone();
        let found = index.search(query, limit);
        let mut surfaced = self.surfaced.lock();
        let results: Vec<Value> = found
            .iter()
            .filter_map(|name| registry.find(name))
            .map(|tool| {
                if surfaced.insert(tool.id.namespaced()) {
                    self.listing_version.fetch_add(1, Ordering::SeqCst);
                }
                model_tool(tool).to_shown_json()
            })
            .collect();
        let output = if results.is_empty() {
            format!("no MCP tool matches \"{query}\"; try other words")
        } else {
            serde_json::to_string_pretty(&json!({ "tools": results })).expect("JSON")
        };
        Ok(ToolOutput {
            output,
            is_error: false,
            title: Some(format!("tool_search: {} found", results.len())),
            notice: None,
            ..ToolOutput::default()
        })
    }
}

fn model_tool(tool: &RegisteredTool) -> ModelTool {
    ModelTool {
        name: tool.model_name.clone(),
        identity: Some(tool.id.rule()),
        description: tool.description.clone(),
        input_schema: serde_json::from_str(&tool.input_schema).unwrap_or_default(),
        read_only: tool.read_only,
        kind: Some(tool.id.kind()),
        output_schema: tool
            .runner
            .output_schema()
            .and_then(|schema| serde_json::from_str(schema).ok()),
    }
}

fn tool_search_tool() -> ModelTool {
    ModelTool {
        name: TOOL_SEARCH_NAME.into(),
        identity: None,
        description: format!(
            "Finds MCP tools by what you want to do. More than {LISTED_MCP_TOOLS_LIMIT} MCP tools are available, so they are not listed: search with a few words describing the task; the tools found (at most {MAX_SEARCH_RESULTS}) become callable for the rest of the session."
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What you want to do, in a few words."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS, "description": "How many tools to return (default 5)."}
            },
            "required": ["query"],
            "additionalProperties": false
        }),
        read_only: true,
        kind: None,
        output_schema: None,
    }
}
