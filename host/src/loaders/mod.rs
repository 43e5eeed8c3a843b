//! Loaders: each turns one kind of source into registered tools. Loaders never call tools.
//!
//! * [`components`] — sandboxed wasm tool components.
//! * `extensions` — in-process TypeScript/JavaScript extensions (oxc + Boa; the `js` feature);
//!   `no_extensions` says why none load in a build without it.
//! * [`mcp`] — MCP servers' tools (rmcp connections in [`crate::mcp`]).

pub mod components;
#[cfg(feature = "js")]
pub mod extensions;
pub mod mcp;
#[cfg(not(feature = "js"))]
pub mod no_extensions;
