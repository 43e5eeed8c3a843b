//! earshot-host: the plugin host of the earshot coding agent.
//!
//! It loads everything that adds tools (MCP servers, TypeScript/JavaScript extensions, sandboxed
//! WebAssembly components), gives every tool one namespaced name, and sends every call through
//! one permission gate.
//!
//! An embedder builds a [`Host`] with [`HostBuilder`] inside its own tokio runtime, lists
//! [`Host::model_tools`], and calls tools with [`Host::call`], answering asks through its own
//! [`Prompter`]; `host/examples/embed.rs` is a whole agent loop. The folders:
//!
//! * [`host`] — a loaded session: settings, gate, sandboxes, registry.
//! * [`gate`] — THE GATE: rules, decisions, prompters.
//! * [`hooks`] — commands on the session's events that can deny, ask or add context, never allow.
//! * `dispatch` — the only code that runs a tool (after the gate allows it).
//! * [`content`] — images, audio, resources and structured results, and their caps.
//! * `runner` — the one seam every source kind's runtime implements, and what a call returns.
//! * `registry` — one namespace for every tool.
//! * `loaders` — sources into registered tools (components, extensions, MCP servers' tools).
//! * `extensions` — the extension runtime: one Boa context on its own JS thread each.
//! * [`settings`] — the settings layers, the project, safe edits.
//! * [`trust`] — trust records a repository cannot forge.
//! * [`sources`] — what each loader would load, found without loading it.
//! * [`names`] — source names, namespaced tool names, model-facing aliases.
//! * [`mcp`] — MCP servers: configuration, connections (rmcp), tool_search.
//! * `tls` — the one crypto provider every HTTP client uses.
//! * [`redact`] — the values `${VAR}` expanded to, masked in everything earshot writes.
//! * [`sandbox`] — the wasm sandboxes: schema validator, MCP output parser, tool components.
//! * [`paths`] — where the user's files live.
//! * [`cli`] — the `earshot` command, one more embedder of the same API.
//! * [`serve`] — `earshot mcp serve`: the session's tools, gated, as one MCP server.
//! * [`acp`] — `earshot acp`: the host as an ACP agent; the editor answers asks, never a deny.

pub mod acp;
pub mod cli;
pub mod content;
mod dispatch;
pub mod extensions;
pub mod gate;
pub mod hooks;
pub mod host;
mod loaders;
pub mod mcp;
pub mod names;
pub mod paths;
pub mod redact;
pub mod registry;
mod runner;
pub mod sandbox;
pub mod serve;
pub mod settings;
pub mod skills;
pub mod sources;
mod tls;
pub mod trust;

/// The extension loader exactly as a session runs it, for `benches/extensions.rs` to time (not
/// part of the embedding API: embedders load extensions through [`HostBuilder`]).
#[doc(hidden)]
pub mod bench_support {
    pub use crate::extensions::web::set_skipped_for_bench as skip_web_platform;
    pub use crate::loaders::extensions::{ExtensionOutcome, LoadedExtension, load_all};
}

pub use content::{ContentBlock, ContentLimits};
pub use gate::{
    NonInteractivePrompter, PermissionPrompt, PromptAnswer, Prompter, TerminalPrompter,
};
pub use hooks::{HookEvent, HookOutcome, HookReport, HookTool};
pub use host::{Host, HostBuilder, McpStart, ModelTool};
pub use mcp::{
    McpOptions, McpPrompt, McpPromptArgument, McpPromptMessage, McpResource, McpResourceContents,
    ServerState, ServerStatus, StartProgress,
};
pub use names::SourceKind;
pub use runner::{BoxFuture, CallError, FailureCause, PromptText, ToolOutput};
pub use sandbox::{ComponentCache, SandboxEngine, SandboxError, SandboxLimits};
pub use settings::{ProjectPaths, Settings};
