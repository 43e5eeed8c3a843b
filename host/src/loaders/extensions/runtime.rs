//! The globals an extension sees: console (to tracing, never raw to the terminal), timers and
//! `queueMicrotask` on our job loop, TextEncoder/TextDecoder, URL, structuredClone, atob/btoa,
//! AbortController, `fetch` on the background runtime, and a read-only `process.env`; and string
//! and RegExp built-ins that stay linear on large texts ([`super::string_natives`]).

use std::rc::Rc;

use boa_engine::context::ContextBuilder;
use boa_engine::{Context, Finalize, JsResult, Source, Trace};
use boa_runtime::console::{ConsoleState, Logger};
use boa_runtime::extensions::{ConsoleExtension, FetchExtension};

use super::fetch::BackgroundFetcher;
use super::job_loop::JobLoop;
use super::module_loader::ConfinedLoader;

/// Limits on an extension's JavaScript, from settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptLimits {
    /// Iterations of one loop before Boa stops it (a tight loop at top level or in a call).
    pub loop_iterations: u64,
    /// Nested calls before Boa stops them.
    pub recursion: usize,
}

impl Default for ScriptLimits {
    fn default() -> ScriptLimits {
        ScriptLimits {
            loop_iterations: 100_000_000,
            recursion: 2_000,
        }
    }
}

/// Sends `console.*` of one extension to tracing, under target `earshot::extension`.
#[derive(Debug, Trace, Finalize)]
pub struct TracingConsole {
    #[unsafe_ignore_trace]
    extension: String,
}

impl Logger for TracingConsole {
    fn log(&self, msg: String, _: &ConsoleState, _: &mut Context) -> JsResult<()> {
        tracing::info!(target: "earshot::extension", extension = %self.extension, "{msg}");
        Ok(())
    }

    fn info(&self, msg: String, _: &ConsoleState, _: &mut Context) -> JsResult<()> {
        tracing::info!(target: "earshot::extension", extension = %self.extension, "{msg}");
        Ok(())
    }

    fn warn(&self, msg: String, _: &ConsoleState, _: &mut Context) -> JsResult<()> {
        tracing::warn!(target: "earshot::extension", extension = %self.extension, "{msg}");
        Ok(())
    }

    fn error(&self, msg: String, _: &ConsoleState, _: &mut Context) -> JsResult<()> {
        tracing::error!(target: "earshot::extension", extension = %self.extension, "{msg}");
        Ok(())
    }

    fn debug(&self, msg: String, _: &ConsoleState, _: &mut Context) -> JsResult<()> {
        tracing::debug!(target: "earshot::extension", extension = %self.extension, "{msg}");
        Ok(())
    }
}

/// A fresh context for one extension, with its job loop, its confined module loader and every
/// global listed above.
///
/// # Errors
/// When Boa cannot build the context or register a global (a bug, not an extension's fault).
pub fn new_context(
    extension: &str,
    jobs: Rc<JobLoop>,
    loader: Rc<ConfinedLoader>,
    limits: ScriptLimits,
) -> JsResult<Context> {
    let mut context = ContextBuilder::new()
        .job_executor(jobs)
        .module_loader(loader)
        .build()?;
    context
        .runtime_limits_mut()
        .set_loop_iteration_limit(limits.loop_iterations);
    context
        .runtime_limits_mut()
        .set_recursion_limit(limits.recursion);
    boa_runtime::register(
        (
            ConsoleExtension(TracingConsole {
                extension: extension.to_string(),
            }),
            FetchExtension(BackgroundFetcher),
        ),
        None,
        &mut context,
    )?;
    super::string_natives::install(&mut context)?;
    // `vars_os`: one variable that is not UTF-8 must not stop every extension from loading.
    let env: serde_json::Map<String, serde_json::Value> = std::env::vars_os()
        .filter_map(|(key, value)| Some((key.into_string().ok()?, value.into_string().ok()?)))
        .map(|(key, value)| (key, serde_json::Value::String(value)))
        .collect();
    let script = format!(
        "Object.defineProperty(globalThis, 'process', {{ value: Object.freeze({{ env: Object.freeze({}) }}), enumerable: false }});",
        serde_json::Value::Object(env)
    );
    context.eval(Source::from_bytes(script.as_bytes()))?;
    Ok(context)
}
