//! Write earshot tool components in Rust.
//!
//! earshot loads WebAssembly components that implement the `tool-provider` world of the
//! `earshot:plugin@0.2.0` WIT package (`wit/` in this repository). Each component contributes
//! tools; the host names them `<component>__<tool>`, validates every input against the tool's
//! schema, sends every call through its permission gate, and runs the component with nothing
//! granted: no filesystem, no environment, no sockets, a memory cap and a CPU deadline.
//!
//! This crate turns that contract into one trait, [`ToolProvider`], and one macro,
//! [`export_tool_provider!`]. A complete component:
//!
//! ```no_run
//! use earshot_guest_sdk::{Output, Tool, ToolProvider, Value, json};
//!
//! struct Greeter;
//!
//! impl ToolProvider for Greeter {
//!     fn tools() -> Vec<Tool> {
//!         vec![Tool::new("greet", "Greets someone by name.")
//!             .input_schema(json!({
//!                 "type": "object",
//!                 "properties": { "name": { "type": "string" } },
//!                 "required": ["name"]
//!             }))
//!             .read_only()]
//!     }
//!
//!     fn call(name: &str, input: Value) -> Result<Output, String> {
//!         match name {
//!             "greet" => Ok(Output::text(format!("Hello, {}!", input["name"].as_str().unwrap_or("?")))),
//!             other => Err(format!("no tool named {other}")),
//!         }
//!     }
//! }
//!
//! earshot_guest_sdk::export_tool_provider!(Greeter);
//! ```
//!
//! Build it with `cargo build --release --target wasm32-wasip2` (crate type `cdylib`); the
//! `.wasm` file rustc writes is already a component. Put it in `.earshot/plugins/` of a project
//! (then `earshot plugins trust NAME`) or in `plugins/` of the user config directory.
//!
//! The `schema-validator` and `mcp-output` features give the raw bindings of the host's own
//! sandboxed components; a component enables exactly one world's feature.
#![deny(missing_docs)]

// The generated bindings name their runtime through the crate's public path, which must also
// resolve inside this crate.
extern crate self as earshot_guest_sdk;

pub use serde_json::{self, Value, json};

#[cfg(feature = "tool-provider")]
mod provider;
/// The contract's content blocks, for [`Output::block`].
#[cfg(feature = "tool-provider")]
pub use bindings::tool_provider::earshot::plugin::types::{
    ContentBlock, EmbeddedResource, Media, ResourceContents, ResourceLink,
};
#[cfg(feature = "tool-provider")]
pub use provider::{Output, Tool, ToolProvider, log};

/// Raw bindings generated from `wit/`, one module per world.
///
/// Most components never touch these: [`ToolProvider`] covers the `tool-provider` world. The host's
/// own components implement the `schema-validator` and `mcp-output` worlds through them.
pub mod bindings {
    /// Bindings of the `tool-provider` world.
    #[cfg(feature = "tool-provider")]
    #[allow(missing_docs)]
    pub mod tool_provider {
        wit_bindgen::generate!({
            world: "tool-provider",
            path: "../wit",
            pub_export_macro: true,
            export_macro_name: "__export_tool_provider_world",
            default_bindings_module: "earshot_guest_sdk::bindings::tool_provider",
            runtime_path: "earshot_guest_sdk::__private::wit_bindgen::rt",
        });
    }

    /// Bindings of the `schema-validator` world (the host's validator component).
    #[cfg(feature = "schema-validator")]
    #[allow(missing_docs)]
    pub mod schema_validator {
        wit_bindgen::generate!({
            world: "schema-validator",
            path: "../wit",
            pub_export_macro: true,
            export_macro_name: "export_schema_validator",
            default_bindings_module: "earshot_guest_sdk::bindings::schema_validator",
            runtime_path: "earshot_guest_sdk::__private::wit_bindgen::rt",
        });
    }

    /// Bindings of the `mcp-output` world (the host's MCP output parser component).
    #[cfg(feature = "mcp-output")]
    #[allow(missing_docs)]
    pub mod mcp_output {
        wit_bindgen::generate!({
            world: "mcp-output",
            path: "../wit",
            pub_export_macro: true,
            export_macro_name: "export_mcp_output",
            default_bindings_module: "earshot_guest_sdk::bindings::mcp_output",
            runtime_path: "earshot_guest_sdk::__private::wit_bindgen::rt",
        });
    }
}

/// Not part of the API: what the export macros expand to.
#[doc(hidden)]
pub mod __private {
    #[cfg(feature = "tool-provider")]
    pub use crate::provider::{call_tool, list_tools};
    pub use wit_bindgen;
}
