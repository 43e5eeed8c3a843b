//! The globals an extension sees: console (to tracing, never raw to the terminal), timers and
//! `queueMicrotask` on our job loop, TextEncoder/TextDecoder, URL, structuredClone, atob/btoa,
//! the rest of the web platform ([`super::web`]: events, streams, Blob, crypto, `fetch` on the
//! session's runtime, ...), `Intl`, and a read-only `process.env`; string and RegExp
//! built-ins that stay linear on large texts ([`super::string_natives`]); and a native numeric
//! sort for `(a, b) => a - b` ([`super::numeric_sort`]).

use std::rc::Rc;

use super::job_loop::JobLoop;
use super::module_loader::ConfinedLoader;
use boa_engine::context::ContextBuilder;
use boa_engine::object::{IntegrityLevel, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{Context, Finalize, JsResult, JsValue, Trace, js_string};
use boa_runtime::console::{ConsoleState, Logger};
use boa_runtime::extensions::{
    Base64Extension, ConsoleExtension, EncodingExtension, MicrotaskExtension,
    StructuredCloneExtension, TimeoutExtension, UrlExtension,
};

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

pub use super::console_text::{CONSOLE_MAX_CHARS, sanitise_console};

/// Sends `console.*` of one extension to tracing, under target `earshot::extension`, sanitised by
/// [`sanitise_console`]. The CLI shows that target only with `-v` or `RUST_LOG`; `console.warn`
/// and `console.error` are logged at warn and error so that a filter can still tell them apart.
#[derive(Debug, Trace, Finalize)]
pub struct TracingConsole {
    #[unsafe_ignore_trace]
    extension: String,
}

impl Logger for TracingConsole {
    fn log(&self, msg: String, _: &ConsoleState, _: &mut Context) -> JsResult<()> {
        let msg = sanitise_console(&msg);
        tracing::info!(target: "earshot::extension", extension = %self.extension, "{msg}");
        Ok(())
    }

    fn info(&self, msg: String, _: &ConsoleState, _: &mut Context) -> JsResult<()> {
        let msg = sanitise_console(&msg);
        tracing::info!(target: "earshot::extension", extension = %self.extension, "{msg}");
        Ok(())
    }

    fn warn(&self, msg: String, _: &ConsoleState, _: &mut Context) -> JsResult<()> {
        let msg = sanitise_console(&msg);
        tracing::warn!(target: "earshot::extension", extension = %self.extension, "{msg}");
        Ok(())
    }

    fn error(&self, msg: String, _: &ConsoleState, _: &mut Context) -> JsResult<()> {
        let msg = sanitise_console(&msg);
        tracing::error!(target: "earshot::extension", extension = %self.extension, "{msg}");
        Ok(())
    }

    fn debug(&self, msg: String, _: &ConsoleState, _: &mut Context) -> JsResult<()> {
        let msg = sanitise_console(&msg);
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
    visible_env: Option<&[String]>,
) -> JsResult<Context> {
    let mut context = ContextBuilder::new()
        .host_hooks(Rc::new(super::hooks::ExtensionHooks))
        .job_executor(jobs)
        .module_loader(loader)
        .build()?;
    context
        .runtime_limits_mut()
        .set_loop_iteration_limit(limits.loop_iterations);
    context
        .runtime_limits_mut()
        .set_recursion_limit(limits.recursion);
    // Every boa_runtime extension but its AbortController (the web platform's replaces it, as an
    // EventTarget) and fetch (web/js/fetch.js).
    boa_runtime::register_extensions(
        (
            Base64Extension,
            TimeoutExtension,
            EncodingExtension,
            MicrotaskExtension,
            StructuredCloneExtension,
            UrlExtension,
            ConsoleExtension(TracingConsole {
                extension: extension.to_string(),
            }),
        ),
        None,
        &mut context,
    )?;
    super::web::install(&mut context)?;
    super::additions::install(&mut context)?;
    super::string_natives::install(&mut context)?;
    super::numeric_sort::install(&mut context)?;
    // `vars_os`: one variable that is not UTF-8 must not stop every extension from loading.
    let env: serde_json::Map<String, serde_json::Value> = std::env::vars_os()
        .filter_map(|(key, value)| Some((key.into_string().ok()?, value.into_string().ok()?)))
        .filter(|(key, _)| visible_env.is_none_or(|names| names.iter().any(|name| name == key)))
        .map(|(key, value)| (key, serde_json::Value::String(value)))
        .collect();
    // Built as an object, not parsed as a script: parsing the whole environment as source text
    // cost a third of a fresh context.
    let env = JsValue::from_json(&serde_json::Value::Object(env), &mut context)?;
    freeze(&env, &mut context)?;
    let process = ObjectInitializer::new(&mut context)
        .property(js_string!("env"), env, Attribute::all())
        .build();
    let process = JsValue::from(process);
    freeze(&process, &mut context)?;
    // As `Object.defineProperty(globalThis, "process", { value })`: not writable, enumerable or
    // configurable.
    context.register_global_property(js_string!("process"), process, Attribute::empty())?;
    Ok(context)
}

/// `Object.freeze(value)`, for an object the runtime builds.
fn freeze(value: &JsValue, context: &mut Context) -> JsResult<()> {
    if let Some(object) = value.as_object() {
        object.set_integrity_level(IntegrityLevel::Frozen, context)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_text_is_one_clean_line_with_visible_line_breaks() {
        let hostile = "ok\r\n\u{1b}[2K\u{1b}]0;title\u{7}$ sudo rm -rf ~\u{202e}txt.exe\tend\u{0}";
        assert_eq!(
            sanitise_console(hostile),
            "ok\\r\\n$ sudo rm -rf ~txt.exe\\tend"
        );
        let long = "x".repeat(CONSOLE_MAX_CHARS + 10);
        let capped = sanitise_console(&long);
        assert!(capped.ends_with("… (10 more characters)"), "{capped}");
        assert_eq!(
            capped.chars().filter(|c| *c == 'x').count(),
            CONSOLE_MAX_CHARS
        );
    }
}
