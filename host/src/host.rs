//! A loaded session: settings, the gate, the sandboxes, MCP servers, and every tool in one
//! registry, plus what a model is shown of it (`tool_search` past 25 MCP tools).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard};

use serde_json::{Value, json};

use crate::dispatch::{CallError, ToolOutput, call_registered};
use crate::gate::{Gate, Prompter};
use crate::loaders::components::load_components;
use crate::loaders::extensions::{limits_from_settings, load_extensions};
use crate::loaders::mcp::{load_mcp_tools, reload_server_tools};
use crate::mcp::{
    LISTED_MCP_TOOLS_LIMIT, MAX_SEARCH_RESULTS, McpOptions, McpServers, SearchDocument,
    StartProgress, TOOL_SEARCH_NAME, read_servers, search,
};
use crate::names::SourceKind;
use crate::registry::{RegisteredTool, Runner, ToolRegistry};
use crate::sandbox::{
    ComponentCache, McpOutputParser, SandboxEngine, SandboxError, SandboxLimits, SchemaValidator,
};
use crate::settings::Settings;

/// Everything a session needs to list and call tools.
pub struct Host {
    settings: Settings,
    gate: Gate,
    validator: SchemaValidator,
    registry: RwLock<ToolRegistry>,
    mcp: Option<Arc<McpServers>>,
    parser: Option<Arc<McpOutputParser>>,
    surfaced: Mutex<BTreeSet<String>>,
}

/// One tool as a model is shown it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
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
}

impl Host {
    /// Loads every source the settings allow, with the user's component cache.
    ///
    /// # Errors
    /// A [`SandboxError`] only if the host's own sandbox components cannot start; every
    /// problem with a source is recorded in the registry instead.
    pub fn load(settings: Settings) -> Result<Host, SandboxError> {
        Host::load_with(
            settings,
            &SandboxEngine::shared(),
            &ComponentCache::user(),
            SandboxLimits::TOOL_COMPONENT,
        )
    }

    /// Loads with an explicit engine, cache and component limits (for embedders and tests).
    ///
    /// # Errors
    /// As [`Host::load`].
    pub fn load_with(
        settings: Settings,
        engine: &SandboxEngine,
        cache: &ComponentCache,
        limits: SandboxLimits,
    ) -> Result<Host, SandboxError> {
        let options = McpOptions::from_settings(&settings);
        Host::load_with_mcp(settings, engine, cache, limits, options, &mut |_| {})
    }

    /// Loads with explicit MCP timeouts, reporting each server as it finishes starting.
    ///
    /// # Errors
    /// As [`Host::load`].
    pub fn load_with_mcp(
        settings: Settings,
        engine: &SandboxEngine,
        cache: &ComponentCache,
        limits: SandboxLimits,
        mcp_options: McpOptions,
        progress: &mut dyn FnMut(StartProgress<'_>),
    ) -> Result<Host, SandboxError> {
        let validator = SchemaValidator::new(engine, cache)?;
        let mut registry = ToolRegistry::new();
        load_components(&settings, engine, cache, &validator, limits, &mut registry);
        let extension_limits = limits_from_settings(&settings);
        load_extensions(&settings, &validator, extension_limits, &mut registry);
        let env = |name: &str| std::env::var(name).ok();
        let (mcp, parser) = if read_servers(&settings, &env).is_empty() {
            (None, None)
        } else {
            let parser = Arc::new(McpOutputParser::new(engine, cache)?);
            let servers = Arc::new(McpServers::start(
                &settings,
                &env,
                mcp_options,
                None,
                progress,
            ));
            load_mcp_tools(&servers, &validator, &parser, &mut registry);
            (Some(servers), Some(parser))
        };
        let gate = Gate::from_settings(&settings);
        Ok(Host {
            settings,
            gate,
            validator,
            registry: RwLock::new(registry),
            mcp,
            parser,
            surfaced: Mutex::new(BTreeSet::new()),
        })
    }

    /// The settings this session loaded.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The registry of every tool (held for reading while the guard lives).
    pub fn registry(&self) -> RwLockReadGuard<'_, ToolRegistry> {
        self.registry.read().unwrap_or_else(|p| p.into_inner())
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
    pub fn refresh_changed_tools(&self) -> Vec<String> {
        let (Some(servers), Some(parser)) = (&self.mcp, &self.parser) else {
            return Vec::new();
        };
        let changed = servers.refresh_changed();
        if !changed.is_empty() {
            let mut registry = self.registry.write().unwrap_or_else(|p| p.into_inner());
            for server in &changed {
                reload_server_tools(servers, server, &self.validator, parser, &mut registry);
            }
        }
        changed
    }

    /// Whether MCP tools are reached through `tool_search` (more than 25 of them), after picking
    /// up announced tool-list changes.
    pub fn tool_search_active(&self) -> bool {
        self.refresh_changed_tools();
        self.counted_tool_search_active()
    }

    fn counted_tool_search_active(&self) -> bool {
        self.registry()
            .tools()
            .filter(|tool| tool.id.kind() == SourceKind::Mcp)
            .count()
            > LISTED_MCP_TOOLS_LIMIT
    }

    /// Exactly what a model is shown: every extension and component tool, and either every MCP
    /// tool (25 or fewer) or `tool_search` plus the MCP tools it surfaced in this session.
    pub fn model_tools(&self) -> Vec<ModelTool> {
        self.refresh_changed_tools();
        let searching = self.counted_tool_search_active();
        let surfaced = self
            .surfaced
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let registry = self.registry();
        let mut tools: Vec<ModelTool> = registry
            .tools()
            .filter(|tool| {
                !searching
                    || tool.id.kind() != SourceKind::Mcp
                    || surfaced.contains(&tool.id.namespaced())
            })
            .map(model_tool)
            .collect();
        if searching {
            tools.push(tool_search_tool());
        }
        tools
    }

    /// Calls a tool through the gate, asking `prompter` only on ask. `tool_search` runs here;
    /// an MCP tool that is neither listed nor surfaced cannot be called.
    ///
    /// # Errors
    /// A [`CallError`] saying why it did not run or did not finish.
    pub fn call(
        &self,
        name: &str,
        input_json: &str,
        prompter: &dyn Prompter,
    ) -> Result<ToolOutput, CallError> {
        self.refresh_changed_tools();
        let searching = self.counted_tool_search_active();
        if name == TOOL_SEARCH_NAME && searching {
            return self.tool_search(input_json);
        }
        // A copy of the entry (it holds only `Arc`s): no lock is held while the gate asks or
        // the tool runs, so a list_changed refresh never waits on a prompt or a slow call.
        let tool = self
            .registry()
            .find(name)
            .cloned()
            .ok_or_else(|| CallError::UnknownTool(name.to_string()))?;
        if searching
            && tool.id.kind() == SourceKind::Mcp
            && !self
                .surfaced
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(&tool.id.namespaced())
        {
            return Err(CallError::NotListed(tool.id.namespaced()));
        }
        call_registered(&tool, &self.gate, &self.validator, prompter, input_json)
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
        let mcp_tools: Vec<&RegisteredTool> = registry
            .tools()
            .filter(|tool| tool.id.kind() == SourceKind::Mcp)
            .collect();
        let documents: Vec<SearchDocument> = mcp_tools
            .iter()
            .map(|tool| SearchDocument {
                name: tool.id.namespaced(),
                text: match &tool.runner {
                    Runner::Mcp(runner) => format!(
                        "{} {} {}",
                        tool.id.tool(),
                        runner.title.as_deref().unwrap_or(""),
                        tool.description
                    ),
                    _ => format!("{} {}", tool.id.tool(), tool.description),
                },
            })
            .collect();
        let found = search(&documents, query, limit);
        let mut surfaced = self.surfaced.lock().unwrap_or_else(|p| p.into_inner());
        let results: Vec<ModelTool> = found
            .iter()
            .filter_map(|name| registry.find(name))
            .map(|tool| {
                surfaced.insert(tool.id.namespaced());
                model_tool(tool)
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
    }
}
