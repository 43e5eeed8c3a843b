//! The extension loader: trusted TypeScript/JavaScript files into registered tools (the runtime
//! that runs them is [`crate::extensions`]).
//!
//! A project extension that is not trusted is never read into Boa: the trust check happens
//! before a thread is started.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::extensions::shape::ToolSpec;
use crate::extensions::{ExtensionLimits, ExtensionWorker};
use crate::names::{SourceKind, ToolId};
use crate::registry::{RegisteredTool, ToolRegistry};
use crate::sandbox::{CompiledSchema, SchemaValidator};
use crate::settings::Settings;
use crate::sources::{
    ExtensionSnapshot, FoundFile, admission, extension_snapshot, find_extensions, is_shadowed,
};

/// The extension limits the settings ask for (`extensions.loadTimeoutSeconds`,
/// `extensions.callTimeoutSeconds`, `extensions.loopIterationLimit`), else the defaults.
pub fn limits_from_settings(settings: &Settings) -> ExtensionLimits {
    let mut limits = ExtensionLimits::default();
    let seconds = |key: &str| {
        settings
            .tunable("extensions", key)
            .and_then(serde_json::Value::as_f64)
            .filter(|value| *value > 0.0 && value.is_finite())
            // At most a day: a cloned repository's settings must not be able to overflow a clock.
            .map(|value| Duration::from_secs_f64(value.min(86_400.0)))
    };
    if let Some(timeout) = seconds("loadTimeoutSeconds") {
        limits.load_timeout = timeout;
    }
    if let Some(timeout) = seconds("callTimeoutSeconds") {
        limits.call_timeout = timeout;
    }
    if let Some(iterations) = settings
        .tunable("extensions", "loopIterationLimit")
        .and_then(serde_json::Value::as_u64)
        .filter(|value| *value > 0)
    {
        limits.script.loop_iterations = iterations;
    }
    limits
}

/// Whether an extension may load (its name is valid and it is the user's own or trusted), before
/// it is loaded; the digest its trust was checked against.
fn admitted(settings: &Settings, file: &FoundFile) -> Result<ExtensionSnapshot, String> {
    if let Some(refusal) = file.name_refusal() {
        return Err(format!("not loaded: {refusal}"));
    }
    let snapshot = extension_snapshot(&file.path)?;
    let trust = admission(
        settings,
        SourceKind::Extension,
        &file.name,
        file.scope,
        &snapshot.digest,
    );
    if trust.is_trusted() {
        Ok(snapshot)
    } else {
        Err(format!(
            "not loaded: {}",
            trust.explain(SourceKind::Extension, &file.name)
        ))
    }
}

/// An extension that loaded: its thread, and each tool with its compiled input schema.
pub struct LoadedExtension {
    /// The JS thread that runs its tools.
    pub worker: Arc<ExtensionWorker>,
    /// Its tools, in the order it listed them.
    pub tools: Vec<(ToolSpec, CompiledSchema)>,
}

/// What became of each extension file that was looked at.
pub struct ExtensionOutcome {
    /// The file.
    pub file: FoundFile,
    /// Loaded, or why not (shadowed, invalid name, not trusted, failed with the error).
    pub result: Result<LoadedExtension, String>,
}

/// Loads every extension the user may load, all at once (each on its own thread). Untrusted
/// project extensions are never read into Boa. Used by the session and by `extensions list`.
pub fn load_all(
    settings: &Settings,
    validator: &SchemaValidator,
    limits: ExtensionLimits,
) -> Vec<ExtensionOutcome> {
    let found = find_extensions(settings);
    let started = Instant::now();
    let mut outcomes = Vec::new();
    let mut pending = Vec::new();
    for file in found.iter().cloned() {
        if is_shadowed(&found, &file) {
            let message = format!(
                "{} is not loaded: your own extension of the same name is used instead",
                file.path.display()
            );
            outcomes.push(ExtensionOutcome {
                file,
                result: Err(message),
            });
            continue;
        }
        let snapshot = match admitted(settings, &file) {
            Ok(snapshot) => snapshot,
            Err(message) => {
                outcomes.push(ExtensionOutcome {
                    file,
                    result: Err(message),
                });
                continue;
            }
        };
        let load = ExtensionWorker::spawn(&file.name, file.path.clone(), snapshot.files, limits);
        pending.push((file, load));
    }
    for (file, load) in pending {
        let (worker, result) = load.wait(started);
        let result = result
            .and_then(|tools| check_schemas(tools, validator))
            .map(|tools| LoadedExtension { worker, tools })
            .map_err(|reason| {
                let path = file.path.display().to_string();
                if reason.starts_with(&path) {
                    reason
                } else {
                    format!("{path}: {reason}")
                }
            });
        outcomes.push(ExtensionOutcome { file, result });
    }
    outcomes
}

/// Loads every extension the user may load and registers their tools. Every problem is
/// reported in `registry` and costs only that extension.
pub fn load_extensions(
    settings: &Settings,
    validator: &SchemaValidator,
    limits: ExtensionLimits,
    registry: &mut ToolRegistry,
) {
    let mut reported = std::collections::HashSet::new();
    for outcome in load_all(settings, validator, limits) {
        let name = outcome.file.name;
        match outcome.result {
            Err(message) => {
                // Files with one stem are refused with one message naming them all: say it once.
                if reported.insert((name.clone(), message.clone())) {
                    registry.report(SourceKind::Extension, &name, message);
                }
            }
            Ok(loaded) => {
                for (tool, schema) in loaded.tools {
                    let id = ToolId::new(SourceKind::Extension, &name, &tool.name)
                        .expect("both names were checked");
                    registry.register(RegisteredTool {
                        model_name: id.model_name(),
                        id,
                        description: tool.description,
                        input_schema: tool.input_schema,
                        read_only: tool.read_only,
                        compiled_schema: Arc::new(schema),
                        runner: loaded.worker.clone(),
                    });
                }
            }
        }
    }
}

/// Checks every tool's input schema against its meta-schema in the validator sandbox (each is
/// compiled on its tool's first call); any invalid one fails the extension, naming each.
fn check_schemas(
    tools: Vec<ToolSpec>,
    validator: &SchemaValidator,
) -> Result<Vec<(ToolSpec, CompiledSchema)>, String> {
    let mut compiled = Vec::new();
    let mut problems = Vec::new();
    for (index, tool) in tools.into_iter().enumerate() {
        match validator.prepare(&tool.input_schema) {
            Ok(schema) => compiled.push((tool, schema)),
            Err(error) => problems.push(format!(
                "tool {index} (\"{}\"): `inputSchema` is not a valid JSON Schema: {error}",
                tool.name
            )),
        }
    }
    if problems.is_empty() {
        Ok(compiled)
    } else {
        Err(problems.join("; "))
    }
}
