//! Third-party tool components (the `tool-provider` world), each in its own sandbox.

use std::sync::Mutex;

use super::bindings::tool_provider::ToolProvider;
use super::cache::{CacheOutcome, ComponentCache};
use super::engine::SandboxEngine;
use super::error::SandboxError;
use super::limits::SandboxLimits;
use super::runner::Runner;

/// A tool as the component described it (names are not yet namespaced or checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentTool {
    /// The tool's name inside the component.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its input schema, as JSON text.
    pub input_schema: String,
    /// Whether the component says it only reads.
    pub read_only: bool,
}

/// What a component tool returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentOutput {
    /// Text for the model.
    pub output: String,
    /// The tool reported failure.
    pub is_error: bool,
    /// A title for the user's display.
    pub title: Option<String>,
}

/// A loaded tool component: its tools, and a sandbox to call them in.
///
/// This type runs what it is asked to run. Only the host's dispatch, after the gate has allowed
/// the call and the validator has accepted the input, may call [`ToolComponent::call`].
pub struct ToolComponent {
    name: String,
    tools: Vec<ComponentTool>,
    runner: Mutex<Runner<ToolProvider>>,
    readiness: CacheOutcome,
}

impl ToolComponent {
    /// Compiles (or loads from `cache`) `bytes`, checks it implements `tool-provider`, and asks
    /// it for its tools.
    ///
    /// # Errors
    /// [`SandboxError::Compile`] for bytes that are not a component, [`SandboxError::WrongShape`]
    /// for a component of another world or contract version, or the failure of `list-tools`.
    pub fn load(
        engine: &SandboxEngine,
        cache: &ComponentCache,
        name: &str,
        bytes: &[u8],
        limits: SandboxLimits,
    ) -> Result<Self, SandboxError> {
        let sha256 = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(bytes));
        Self::load_with_digest(engine, cache, name, bytes, &sha256, limits)
    }

    /// As [`ToolComponent::load`], for a caller that already has the hex SHA-256 of `bytes`
    /// (the loader computes it for the trust check; hashing once is enough).
    ///
    /// # Errors
    /// As [`ToolComponent::load`].
    pub fn load_with_digest(
        engine: &SandboxEngine,
        cache: &ComponentCache,
        name: &str,
        bytes: &[u8],
        sha256: &str,
        limits: SandboxLimits,
    ) -> Result<Self, SandboxError> {
        let (component, readiness) =
            cache.load_with_precompiled(engine, name, bytes, sha256, None)?;
        let mut runner = Runner::<ToolProvider>::new(engine, name, &component, limits)?;
        let specs =
            runner.call(|world, store| world.earshot_plugin_tools().call_list_tools(store))?;
        let tools = specs
            .into_iter()
            .map(|spec| ComponentTool {
                name: spec.name,
                description: spec.description,
                input_schema: spec.input_schema,
                read_only: spec.read_only,
            })
            .collect();
        Ok(ToolComponent {
            name: name.to_string(),
            tools,
            runner: Mutex::new(runner),
            readiness,
        })
    }

    /// The component's name (its file stem).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tools it contributes, as it described them.
    pub fn tools(&self) -> &[ComponentTool] {
        &self.tools
    }

    /// Whether loading hit the compiled-component cache.
    pub fn readiness(&self) -> CacheOutcome {
        self.readiness
    }

    /// Runs `tool` with `input_json` under the component's limits.
    ///
    /// # Errors
    /// A [`SandboxError`] when the call traps, panics, runs out of time or memory; the component
    /// answers its next call from a fresh store.
    pub fn call(&self, tool: &str, input_json: &str) -> Result<ComponentOutput, SandboxError> {
        let mut runner = self
            .runner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let output = runner.call(|world, store| {
            world
                .earshot_plugin_tools()
                .call_call_tool(store, tool, input_json)
        })?;
        Ok(ComponentOutput {
            output: output.output,
            is_error: output.is_error,
            title: output.title,
        })
    }
}
