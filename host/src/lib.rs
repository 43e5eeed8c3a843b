//! earshot-host: the plugin host of the earshot coding agent.
//!
//! It loads everything that adds tools (MCP servers, TypeScript/JavaScript extensions, sandboxed
//! WebAssembly components), gives every tool one namespaced name, and sends every call through
//! one permission gate.
//!
//! * [`host`] — a loaded session: settings, gate, sandboxes, registry.
//! * [`gate`] — THE GATE: rules, decisions, prompters.
//! * [`dispatch`] — the only code that runs a tool (after the gate allows it).
//! * [`registry`] — one namespace for every tool.
//! * [`loaders`] — sources into registered tools (components so far).
//! * [`settings`] — the settings layers, the project, safe edits.
//! * [`trust`] — trust records a repository cannot forge.
//! * [`sources`] — what each loader would load, found without loading it.
//! * [`names`] — source names, namespaced tool names, model-facing aliases.
//! * [`mcp`] — MCP servers: configuration, connections (rmcp), tool_search.
//! * [`tls`] — the one crypto provider every HTTP client uses.
//! * [`sandbox`] — the wasm sandboxes: schema validator, MCP output parser, tool components.
//! * [`paths`] — where the user's files live.
#![deny(missing_docs)]

pub mod dispatch;
pub mod gate;
pub mod host;
pub mod loaders;
pub mod mcp;
pub mod names;
pub mod paths;
pub mod registry;
pub mod sandbox;
pub mod settings;
pub mod sources;
pub mod tls;
pub mod trust;
