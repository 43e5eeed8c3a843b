//! Loaders: each turns one kind of source into registered tools. Loaders never call tools.
//!
//! * [`components`] — sandboxed wasm tool components.
//! * [`extensions`] — in-process TypeScript/JavaScript extensions (oxc + Boa).

pub mod components;
pub mod extensions;
