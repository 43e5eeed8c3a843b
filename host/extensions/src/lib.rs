//! The extension runtime: trusted TypeScript/JavaScript run in-process, one Boa context on its own
//! thread per extension (earshot-host's `loaders/extensions.rs` finds, admits and registers them).
//!
//! * [`strip`] — oxc strips types (and lowers enums, namespaces, parameter properties).
//! * [`module_cache`] — stripped modules kept by the digest of their source.
//! * [`module_loader`] — relative imports, confined to the extension's folder.
//! * [`runtime`] — the globals an extension sees.
//! * [`job_loop`] — timers, microtasks and fetches, sleeping instead of spinning.
//! * [`console_text`] — what `console.*` may put on a terminal.
//! * [`web`] — the WinterTC web platform (events, streams, Blob, crypto, fetch, ...), lazily.
//! * [`fetch`] — the HTTP side of `fetch`, on the session's runtime.
//! * [`fetch_failure`] — why a `fetch` failed, as Node's `cause` says it.
//! * [`shape`] — the structural check of the default export.
//! * [`to_json`] — what an extension hands over, as JSON: no recursion, bounded depth and size.
//! * [`errors`] — errors located in the original `.ts` file.
//! * [`worker`] — one JS thread and context per extension.
//! * `tool_runner` — the worker behind the dispatch seam (the crate-private `ToolRunner`).

// The core's modules under the names this crate's code has always used (`crate::names::…`).
use earshot_core::{content, gate, names, runner, settings, sources, tls, trust};

pub(crate) mod additions;
pub mod console_text;
pub mod errors;
pub mod fetch;
pub mod fetch_failure;
pub mod hooks;
pub mod job_loop;
pub mod module_cache;
pub mod module_loader;
pub mod numeric_sort;
pub mod runtime;
pub mod shape;
pub mod string_natives;
pub mod strip;
pub mod to_json;
mod tool_runner;
pub mod web;
pub mod worker;

pub use runtime::ScriptLimits;

/// The stack of each extension's JS thread: room for Boa to parse, compile and run code nested
/// as deep as the nesting scan allows, many times over.
pub const JS_STACK_BYTES: usize = 512 << 20;

/// The native stack an extension's JS thread keeps in hand: below it, every object internal
/// method and every call throws `RangeError: Maximum call stack size exceeded` (the vendored
/// engine's check, vendor/README.md), so a built-in that recurses in Rust (`join` on nested
/// arrays, a chain of proxies, `structuredClone`, ...) costs its call, never the process. It
/// covers the most the engine runs between two checks, with room: one level of a built-in, the
/// error it builds, and the unwinding (a few hundred KiB in a debug build).
pub const NATIVE_STACK_RESERVE: usize = 32 << 20;
pub use worker::{AdmittedFiles, ExtensionLimits, ExtensionWorker, PendingLoad};
