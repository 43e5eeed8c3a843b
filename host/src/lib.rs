//! earshot-host: the plugin host of the earshot coding agent.
//!
//! It loads everything that adds tools (MCP servers, TypeScript/JavaScript extensions, sandboxed
//! WebAssembly components), gives every tool one namespaced name, and sends every call through
//! one permission gate.
//!
//! An embedder builds a [`Host`] with [`HostBuilder`] inside its own tokio runtime, lists
//! [`Host::model_tools`], and calls tools with [`Host::call`], answering asks through its own
//! [`Prompter`]; `host/examples/embed.rs` is a whole agent loop.
//!
//! This crate is the facade over the library's crates, and keeps one root API whichever of them
//! are built. Its own folders:
//!
//! * [`host`] — a loaded session: settings, gate, sandboxes, registry.
//! * [`loaders`] — sources into registered tools (components, extensions, MCP servers' tools).
//! * `serve` — `earshot mcp serve`: the session's tools, gated, as one MCP server (the `serve`
//!   feature).
//! * `acp` — `earshot acp`: the host as an ACP agent; the editor answers asks, never a deny (the
//!   `acp` feature).
//!
//! From `earshot-core` (host/core/), re-exported under the same names:
//!
//! * [`gate`] — THE GATE: rules, decisions, prompters.
//! * [`hooks`] — commands on the session's events that can deny, ask or add context, never allow.
//! * [`content`] — images, audio, resources and structured results, and their caps.
//! * [`registry`] — one namespace for every tool.
//! * [`settings`] — the settings layers, the project, safe edits.
//! * [`trust`] — trust records a repository cannot forge.
//! * [`sources`] — what each loader would load, found without loading it.
//! * [`names`] — source names, namespaced tool names, model-facing aliases.
//! * [`skills`] — skills and slash commands.
//! * [`mcp`] — MCP servers: configuration, admission, status, tool_search; with earshot-mcp's
//!   client (host/mcp/, the `mcp` feature) re-exported into the same module.
//! * [`redact`] — the values `${VAR}` expanded to, masked in everything earshot writes.
//! * [`sandbox`] — the wasm sandboxes: schema validator, MCP output parser, tool components.
//! * [`paths`] — where the user's files live.
//!
//! From `earshot-extensions` (host/extensions/, the `js` feature, on by default):
//! `extensions`, the extension runtime: one Boa context on its own JS thread each.
//!
//! The `earshot` command is its own crate (cli/), one more embedder of this API.

pub use earshot_core::{
    content, gate, hooks, names, paths, redact, registry, sandbox, settings, skills, sources,
};

/// MCP servers: configuration, admission, status, prompts, resources and `tool_search`
/// (earshot-core's `mcp`), and, with the `mcp` feature (on by default), the client itself
/// (earshot-mcp: rmcp connections, [`McpServers`](mcp::McpServers), OAuth logins).
pub mod mcp {
    pub use earshot_core::mcp::*;
    #[cfg(feature = "mcp")]
    pub use earshot_mcp::*;

    /// An entry's `oauth` block (earshot-core) and, with the `mcp` feature, logins, the token
    /// store and refresh (earshot-mcp).
    pub mod oauth {
        pub use earshot_core::mcp::oauth::*;
        #[cfg(feature = "mcp")]
        pub use earshot_mcp::oauth::*;
    }
}

/// Trust records a repository cannot forge (earshot-core's `trust`), and trusting a source by
/// name with the digest its loader checks ([`trust_source`](trust::trust_source), which needs
/// the loaders' view of every kind of source and so lives above the core).
pub mod trust {
    pub use crate::host::trust_source::{TrustSourceError, current_digest, trust_source};
    pub use earshot_core::trust::*;
}
// The core's internal seams, under the names this crate's code has always used.
use earshot_core::{dispatch, runner};

#[cfg(feature = "js")]
pub use earshot_extensions as extensions;

#[cfg(feature = "acp")]
pub mod acp;
pub mod host;
pub mod loaders;
#[cfg(feature = "serve")]
pub mod serve;

/// The extension loader exactly as a session runs it, for `benches/extensions.rs` to time (not
/// part of the embedding API: embedders load extensions through [`HostBuilder`]).
#[cfg(feature = "js")]
#[doc(hidden)]
pub mod bench_support {
    pub use crate::extensions::web::set_skipped_for_bench as skip_web_platform;
    pub use crate::loaders::extensions::{ExtensionOutcome, LoadedExtension, load_all};
}

#[doc(hidden)]
pub use earshot_core::build_outputs;

pub use earshot_core::{
    BoxFuture, CallError, ComponentCache, ContentBlock, ContentLimits, FailureCause, HookEvent,
    HookOutcome, HookReport, HookTool, McpOptions, McpPrompt, McpPromptArgument, McpPromptMessage,
    McpResource, McpResourceContents, NonInteractivePrompter, PermissionPrompt, ProjectPaths,
    PromptAnswer, PromptText, Prompter, SandboxEngine, SandboxError, SandboxLimits, ServerState,
    ServerStatus, Settings, SourceKind, StartProgress, TerminalPrompter, ToolOutput,
};
pub use host::{Host, HostBuilder, McpStart, ModelTool};
