//! The wasm sandboxes: one engine, capability-free stores, per-call memory and CPU bounds, typed
//! failures, and a cache of compiled components.
//!
//! * [`SchemaValidator`] — JSON Schema validation (the `schema-validator` world).
//! * [`McpOutputParser`] — MCP result normalisation (the `mcp-output` world).
//! * [`ToolComponent`] — third-party tools (the `tool-provider` world).

mod bindings;
mod cache;
mod engine;
mod engine_config;
mod limits;
mod output_parser;
mod runner;
mod store;
mod tool_component;
mod tool_runner;
mod validator;

pub use crate::sandbox_error::SandboxError;
pub use cache::{CacheOutcome, ComponentCache};
pub use engine::{EPOCH_TICK, SandboxEngine};
pub use limits::SandboxLimits;
pub use output_parser::{
    Attachment, McpOutputParser, NormalisedOutput, OUTPUT_COMPONENT, OutputError, OutputLimits,
};
pub use store::GuestState;
pub use tool_component::{ComponentOutput, ComponentTool, ToolComponent};
pub use tool_runner::ComponentRunner;
pub use validator::{
    CompiledSchema, Remote, SchemaError, SchemaValidator, VALIDATOR_COMPONENT, ValidationIssue,
    Verdict,
};
