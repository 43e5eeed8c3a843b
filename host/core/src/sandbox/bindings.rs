//! Host-side bindings of the three worlds in `wit/`, and how the runner instantiates each.

use wasmtime::Store;
use wasmtime::component::{HasSelf, InstancePre, Linker};

use super::runner::World;
use super::store::GuestState;

/// Bindings of the `tool-provider` world (contract 0.2.0, the current one).
pub mod tool_provider {
    wasmtime::component::bindgen!({ world: "tool-provider", path: "../../wit" });
}

/// Bindings of the `tool-provider` world of contract 0.1.0, so that components built against it
/// keep loading (their results carry text only).
pub mod tool_provider_v1 {
    wasmtime::component::bindgen!({ world: "tool-provider", path: "../../wit/since_v0.1.0" });
}

/// Bindings of the `schema-validator` world.
pub mod schema_validator {
    wasmtime::component::bindgen!({ world: "schema-validator", path: "../../wit" });
}

/// Bindings of the `mcp-output` world.
pub mod mcp_output {
    wasmtime::component::bindgen!({ world: "mcp-output", path: "../../wit" });
}

/// The most characters of one guest log message kept.
const LOG_MESSAGE_CAP: usize = 4096;

/// The `types` interface has no functions; tool components import it only for its records.
impl tool_provider::earshot::plugin::types::Host for GuestState {}

/// The same for the mcp-output world, whose results are made of the `types` content blocks.
impl mcp_output::earshot::plugin::types::Host for GuestState {}

impl tool_provider::earshot::plugin::log::Host for GuestState {
    fn log(&mut self, level: tool_provider::earshot::plugin::log::Level, message: String) {
        use tool_provider::earshot::plugin::log::Level;
        let message: String = message
            .chars()
            .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
            .take(LOG_MESSAGE_CAP)
            .collect();
        let component = self.component.as_str();
        match level {
            Level::Trace => tracing::trace!(component, "{message}"),
            Level::Debug => tracing::debug!(component, "{message}"),
            Level::Info => tracing::info!(component, "{message}"),
            Level::Warn => tracing::warn!(component, "{message}"),
            Level::Error => tracing::error!(component, "{message}"),
        }
    }
}

impl tool_provider_v1::earshot::plugin::types::Host for GuestState {}

impl tool_provider_v1::earshot::plugin::log::Host for GuestState {
    fn log(&mut self, level: tool_provider_v1::earshot::plugin::log::Level, message: String) {
        use tool_provider::earshot::plugin::log::Host as CurrentLog;
        use tool_provider::earshot::plugin::log::Level as Current;
        use tool_provider_v1::earshot::plugin::log::Level;
        let level = match level {
            Level::Trace => Current::Trace,
            Level::Debug => Current::Debug,
            Level::Info => Current::Info,
            Level::Warn => Current::Warn,
            Level::Error => Current::Error,
        };
        CurrentLog::log(self, level, message);
    }
}

impl World for tool_provider_v1::ToolProvider {
    type Pre = tool_provider_v1::ToolProviderPre<GuestState>;
    const NAME: &'static str = "earshot:plugin/tool-provider@0.1.0";

    fn add_imports(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
        tool_provider_v1::ToolProvider::add_to_linker::<_, HasSelf<GuestState>>(linker, |state| {
            state
        })
    }

    fn pre(pre: InstancePre<GuestState>) -> wasmtime::Result<Self::Pre> {
        tool_provider_v1::ToolProviderPre::new(pre)
    }

    fn instantiate(pre: &Self::Pre, store: &mut Store<GuestState>) -> wasmtime::Result<Self> {
        pre.instantiate(store)
    }
}

impl World for tool_provider::ToolProvider {
    type Pre = tool_provider::ToolProviderPre<GuestState>;
    const NAME: &'static str = "earshot:plugin/tool-provider@0.2.0";

    fn add_imports(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
        tool_provider::ToolProvider::add_to_linker::<_, HasSelf<GuestState>>(linker, |state| state)
    }

    fn pre(pre: InstancePre<GuestState>) -> wasmtime::Result<Self::Pre> {
        tool_provider::ToolProviderPre::new(pre)
    }

    fn instantiate(pre: &Self::Pre, store: &mut Store<GuestState>) -> wasmtime::Result<Self> {
        pre.instantiate(store)
    }
}

impl World for schema_validator::SchemaValidator {
    type Pre = schema_validator::SchemaValidatorPre<GuestState>;
    const NAME: &'static str = "earshot:plugin/schema-validator@0.2.0";

    fn pre(pre: InstancePre<GuestState>) -> wasmtime::Result<Self::Pre> {
        schema_validator::SchemaValidatorPre::new(pre)
    }

    fn instantiate(pre: &Self::Pre, store: &mut Store<GuestState>) -> wasmtime::Result<Self> {
        pre.instantiate(store)
    }
}

impl World for mcp_output::McpOutput {
    type Pre = mcp_output::McpOutputPre<GuestState>;
    const NAME: &'static str = "earshot:plugin/mcp-output@0.2.0";

    fn add_imports(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
        mcp_output::McpOutput::add_to_linker::<_, HasSelf<GuestState>>(linker, |state| state)
    }

    fn pre(pre: InstancePre<GuestState>) -> wasmtime::Result<Self::Pre> {
        mcp_output::McpOutputPre::new(pre)
    }

    fn instantiate(pre: &Self::Pre, store: &mut Store<GuestState>) -> wasmtime::Result<Self> {
        pre.instantiate(store)
    }
}
