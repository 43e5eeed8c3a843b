//! Loaders: each turns one kind of source into registered tools. Loaders never call tools.
//!
//! * [`components`] — sandboxed wasm tool components.
//! * `extensions` — in-process TypeScript/JavaScript extensions (oxc + Boa; the `js` feature);
//!   `no_extensions` says why none load in a build without it.
//! * `mcp` — MCP servers' tools (earshot-mcp's connections; the `mcp` feature); `no_mcp` says
//!   why no server starts in a build without it.

pub mod components;
#[cfg(feature = "js")]
pub mod extensions;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(not(feature = "js"))]
pub mod no_extensions;
#[cfg(not(feature = "mcp"))]
pub mod no_mcp;
