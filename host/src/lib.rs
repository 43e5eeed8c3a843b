//! earshot-host: the plugin host of the earshot coding agent.
//!
//! It loads everything that adds tools (MCP servers, TypeScript/JavaScript extensions, sandboxed
//! WebAssembly components), gives every tool one namespaced name, and sends every call through
//! one permission gate. This crate currently provides the foundation the loaders stand on:
//!
//! * [`sandbox`] — the wasm sandboxes: the schema validator, the MCP output parser, and
//!   third-party tool components, each with no capabilities and bounded memory and CPU.
//! * [`paths`] — where the user's files live.
#![deny(missing_docs)]

pub mod paths;
pub mod sandbox;
