//! earshot-core: the parts of earshot-host that every other part builds on.
//!
//! The facade crate `earshot-host` re-exports these modules under the same names and adds the
//! loaders, the session (`Host`) and the front-ends; an embedder depends on `earshot-host`, not on
//! this crate. The folders:
//!
//! * [`gate`] — THE GATE: rules, decisions, prompters.
//! * [`hooks`] — commands on the session's events that can deny, ask or add context, never allow.
//! * [`dispatch`] — the only code that runs a tool (after the gate allows it).
//! * [`content`] — images, audio, resources and structured results, and their caps.
//! * [`runner`] — the one seam every source kind's runtime implements, and what a call returns.
//! * [`registry`] — one namespace for every tool.
//! * [`settings`] — the settings layers, the project, safe edits.
//! * [`trust`] — trust records a repository cannot forge.
//! * [`sources`] — what each loader would load, found without loading it.
//! * [`names`] — source names, namespaced tool names, model-facing aliases.
//! * [`skills`] — skills and slash commands.
//! * [`mcp`] — MCP servers: configuration, connections (rmcp), tool_search.
//! * [`tls`] — the one crypto provider every HTTP client uses.
//! * [`redact`] — the values `${VAR}` expanded to, masked in everything earshot writes.
//! * [`sandbox`] — the wasm sandboxes: schema validator, MCP output parser, tool components;
//!   [`sandbox_error`] — how one failed, a leaf both it and [`runner`] build on.
//! * [`paths`] — where the user's files live.

pub mod content;
pub mod dispatch;
pub mod gate;
pub mod hooks;
pub mod mcp;
pub mod names;
pub mod paths;
pub mod redact;
pub mod registry;
pub mod runner;
pub mod sandbox;
pub mod sandbox_error;
pub mod settings;
pub mod skills;
pub mod sources;
pub mod tls;
pub mod trust;

pub use content::{ContentBlock, ContentLimits};
pub use gate::{
    NonInteractivePrompter, PermissionPrompt, PromptAnswer, Prompter, TerminalPrompter,
};
pub use hooks::{HookEvent, HookOutcome, HookReport, HookTool};
pub use mcp::{
    McpOptions, McpPrompt, McpPromptArgument, McpPromptMessage, McpResource, McpResourceContents,
    ServerState, ServerStatus, StartProgress,
};
pub use names::SourceKind;
pub use runner::{BoxFuture, CallError, FailureCause, PromptText, ToolOutput};
pub use sandbox::{ComponentCache, SandboxEngine, SandboxError, SandboxLimits};
pub use settings::{ProjectPaths, Settings};

/// The oxc release that parses (and, in earshot-extensions, strips) extension code: caches of
/// what oxc produced are keyed by it, so an upgrade never serves a stale entry.
pub const OXC_VERSION: &str = env!("EARSHOT_OXC_VERSION");

/// Where this build put the library's own wasm guests, for this repository's tests and benchmarks
/// (not an embedding API: the library embeds the bytes it needs).
#[doc(hidden)]
pub mod build_outputs {
    /// The schema-validator component as built by `build.rs`.
    pub const VALIDATOR_WASM: &str = env!("EARSHOT_GUEST_EARSHOT_SCHEMA_VALIDATOR_WASM");
    /// The mcp-output component as built by `build.rs`.
    pub const MCP_OUTPUT_WASM: &str = env!("EARSHOT_GUEST_EARSHOT_MCP_OUTPUT_WASM");
}
