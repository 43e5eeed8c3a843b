//! Loaders: each turns one kind of source into registered tools. Loaders never call tools.
//!
//! * [`components`] — sandboxed wasm tool components.
//! * [`extensions`] — in-process TypeScript/JavaScript extensions (oxc + Boa).
//! * [`mcp`] — MCP servers' tools (rmcp connections in [`crate::mcp`]).

pub mod components;
pub mod extensions;
pub mod mcp;
