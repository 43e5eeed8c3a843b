//! A loaded session: settings, the gate, the sandboxes, and every tool in one registry.

use crate::dispatch::{CallError, ToolOutput, call_tool};
use crate::gate::{Gate, Prompter};
use crate::loaders::components::load_components;
use crate::loaders::extensions::{limits_from_settings, load_extensions};
use crate::registry::ToolRegistry;
use crate::sandbox::{ComponentCache, SandboxEngine, SandboxError, SandboxLimits, SchemaValidator};
use crate::settings::Settings;

/// Everything a session needs to list and call tools.
pub struct Host {
    settings: Settings,
    gate: Gate,
    validator: SchemaValidator,
    registry: ToolRegistry,
}

impl Host {
    /// Loads every source the settings allow, with the user's component cache.
    ///
    /// # Errors
    /// A [`SandboxError`] only if the host's own validator component cannot start; every
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
        let validator = SchemaValidator::new(engine, cache)?;
        let mut registry = ToolRegistry::new();
        load_components(&settings, engine, cache, &validator, limits, &mut registry);
        let extension_limits = limits_from_settings(&settings);
        load_extensions(&settings, &validator, extension_limits, &mut registry);
        let gate = Gate::from_settings(&settings);
        Ok(Host {
            settings,
            gate,
            validator,
            registry,
        })
    }

    /// The settings this session loaded.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The registry of every tool.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// The gate.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// Calls a tool through the gate, asking `prompter` only on ask.
    ///
    /// # Errors
    /// A [`CallError`] saying why it did not run or did not finish.
    pub fn call(
        &self,
        name: &str,
        input_json: &str,
        prompter: &dyn Prompter,
    ) -> Result<ToolOutput, CallError> {
        call_tool(
            &self.registry,
            &self.gate,
            &self.validator,
            prompter,
            name,
            input_json,
        )
    }
}
