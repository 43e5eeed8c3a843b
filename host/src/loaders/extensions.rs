//! The extension loader: trusted TypeScript/JavaScript files into registered tools (the runtime
//! that runs them is [`crate::extensions`]).
//!
//! A project extension that is not trusted is never read into Boa: the trust check happens
//! before its JS thread is started. Each file is parsed by oxc once, for its imports (the trust
//! digest) and its stripped JavaScript together, or not at all when the user's module cache
//! ([`ModuleCache`]) already holds it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::extensions::module_cache::ModuleCache;
use crate::extensions::shape::ToolSpec;
use crate::extensions::{AdmittedFiles, ExtensionLimits, ExtensionWorker, PendingLoad};
use crate::names::{SourceKind, ToolId};
use crate::registry::{RegisteredTool, ToolRegistry};
use crate::sandbox::{CompiledSchema, SchemaValidator};
use crate::settings::Settings;
use crate::sources::{
    FoundFile, admission, extension_snapshot_with, find_extensions, is_shadowed, parse_guard,
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
    limits.env = visible_env(settings);
    limits
}

/// `extensions.env`: the names `process.env` shows. Every settings file that sets it narrows it
/// (a name is shown only when each list has it), so a cloned repository's list can hide more of
/// your environment but never show what your own list hides. A value that is not a list of
/// strings hides everything.
fn visible_env(settings: &Settings) -> Option<std::sync::Arc<[String]>> {
    use crate::settings::Layer;
    let mut visible: Option<Vec<String>> = None;
    for layer in [Layer::User, Layer::Project, Layer::Local] {
        let Some(listed) = settings
            .file(layer)
            .and_then(|file| file.get("extensions"))
            .and_then(|section| section.get("env"))
        else {
            continue;
        };
        let names: Vec<String> = listed
            .as_array()
            .map(|names| {
                names
                    .iter()
                    .filter_map(serde_json::Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        visible = Some(match visible {
            None => names,
            Some(before) => before
                .into_iter()
                .filter(|name| names.contains(name))
                .collect(),
        });
    }
    visible.map(Into::into)
}

/// Whether an extension may load (its name is valid and it is the user's own or trusted), before
/// it is loaded: the files its trust was checked against, each file stripped in the same parse
/// that found its imports (or taken from `cache`).
fn admitted(
    settings: &Settings,
    cache: &ModuleCache,
    file: &FoundFile,
) -> Result<AdmittedFiles, String> {
    if let Some(refusal) = file.name_refusal() {
        return Err(format!("not loaded: {refusal}"));
    }
    let mut stripped = HashMap::new();
    let snapshot = extension_snapshot_with(&file.path, &mut |path: &Path, source: &str| {
        let analysis = cache.analyse(path, source)?;
        if let (Ok(module), Ok(canonical)) = (analysis.module, path.canonicalize()) {
            stripped.insert(canonical, module);
        }
        Ok(analysis.imports)
    })?;
    let trust = admission(
        settings,
        SourceKind::Extension,
        &file.name,
        file.scope,
        &snapshot.digest,
        Some(&snapshot.manifest),
    );
    if trust.is_trusted() {
        Ok(AdmittedFiles {
            files: snapshot.files,
            stripped,
        })
    } else {
        Err(format!(
            "not loaded: {}",
            trust.explain(SourceKind::Extension, &file.name)
        ))
    }
}

/// Admits every extension of `found` and starts the JS thread of each one admitted, on up to one
/// thread per core at once (reading, hashing and stripping are work of their own, not the
/// loading thread's to do one after another). In `found`'s order: the load started, or why not.
fn admit_and_spawn(
    settings: &Settings,
    found: &[FoundFile],
    limits: ExtensionLimits,
) -> Vec<Result<PendingLoad, String>> {
    let cache = ModuleCache::for_settings(settings);
    let session = tokio::runtime::Handle::try_current().ok();
    let next = AtomicUsize::new(0);
    let admit_next = || {
        // The session's runtime, which each JS thread takes for its fetches.
        let _inside = session.as_ref().map(tokio::runtime::Handle::enter);
        parse_guard::declare_parse_stack(parse_guard::PARSE_STACK_BYTES);
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(file) = found.get(index) else {
                return done;
            };
            let started = if is_shadowed(found, file) {
                Err(format!(
                    "{} is not loaded: your own extension of the same name is used instead",
                    file.path.display()
                ))
            } else {
                admitted(settings, &cache, file).map(|files| {
                    ExtensionWorker::spawn(&file.name, file.path.clone(), files, limits.clone())
                })
            };
            done.push((index, started));
        }
    };
    let threads = std::thread::available_parallelism()
        .map_or(2, std::num::NonZero::get)
        .min(found.len());
    // One slot per file, in `found`'s order; what no thread reached (none could start) stays empty.
    let mut slots: Vec<Option<Result<PendingLoad, String>>> =
        std::iter::repeat_with(|| None).take(found.len()).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                std::thread::Builder::new()
                    .name("ext-admit".into())
                    .stack_size(parse_guard::PARSE_STACK_BYTES)
                    .spawn_scoped(scope, admit_next)
            })
            .collect();
        for handle in handles {
            match handle
                .map_err(|error| error.to_string())
                .and_then(|handle| {
                    handle
                        .join()
                        .map_err(|_| "an admission thread panicked".to_string())
                }) {
                Ok(done) => {
                    for (index, started) in done {
                        slots[index] = Some(started);
                    }
                }
                Err(error) => {
                    tracing::error!(target: "earshot::extension", %error, "extensions not admitted")
                }
            }
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.unwrap_or_else(|| {
                Err("not loaded: earshot could not start a thread to read it".to_string())
            })
        })
        .collect()
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
    for (file, load) in found
        .iter()
        .cloned()
        .zip(admit_and_spawn(settings, &found, limits))
    {
        match load {
            Ok(load) => pending.push((file, load)),
            Err(message) => outcomes.push(ExtensionOutcome {
                file,
                result: Err(message),
            }),
        }
    }
    for (file, load) in pending {
        let (worker, result) = load.wait(started);
        let result = result
            .and_then(|tools| check_schemas(tools, validator))
            .map(|tools| LoadedExtension { worker, tools })
            .map_err(|reason| headed_by_path(&file.path, &reason));
        outcomes.push(ExtensionOutcome { file, result });
    }
    outcomes
}

/// A load failure headed by the extension's path, once: a reason that starts at a place in the
/// file (`/x/a.ts:3:9: ...`, the JS thread names it canonically) keeps that place, shown by the
/// path the extension was found at; any other reason is put after the path.
fn headed_by_path(path: &Path, reason: &str) -> String {
    let shown = path.display().to_string();
    let canonical = path
        .canonicalize()
        .map_or_else(|_| shown.clone(), |path| path.display().to_string());
    for prefix in [&canonical, &shown] {
        if let Some(place) = reason.strip_prefix(prefix.as_str())
            && place.starts_with(':')
        {
            return format!("{shown}{place}");
        }
    }
    format!("{shown}: {reason}")
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
