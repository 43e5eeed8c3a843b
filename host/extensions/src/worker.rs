//! One extension on its own JS thread, with its own Boa context: one extension cannot break,
//! block or see another. The host talks to the thread over a channel; values cross as JSON.
//!
//! A call that does not settle in time returns an error; a thread that does not even answer
//! (stuck in synchronous code the loop limit cannot see) is marked failed, and every later call
//! to the extension fails at once with that reason.

use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use boa_engine::builtins::promise::PromiseState;
use boa_engine::object::builtins::JsPromise;
use boa_engine::{Context, JsError, JsValue, js_string};

use tokio::sync::oneshot;

use crate::content::{ContentBlock, ContentLimits};
use crate::runner::{CallError, FailureCause, PromptText, ToolOutput};

use super::errors::{describe_load_error, locate_error};
use super::job_loop::{Drive, JobLoop};
use super::module_loader::{ConfinedLoader, EntryFailure};
use super::runtime::{ScriptLimits, new_context};
use super::shape::{CheckedTool, ToolSpec, check_default_export, describe_value};
use super::strip::StrippedModule;
use super::to_json::{JsonBudget, MAX_DEPTH, MAX_RESULT_BYTES, ToJsonError, to_json};
use super::web::crypto_jobs::Activity;

/// `now + timeout`, or a day from now when that would overflow.
fn deadline_after(timeout: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(timeout)
        .unwrap_or_else(|| now + Duration::from_secs(86_400))
}

/// How long the host waits past a deadline for the thread to answer before calling it stuck.
const STUCK_GRACE: Duration = Duration::from_secs(2);

/// Time limits of one extension, and the environment it sees, from settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionLimits {
    /// How long evaluating the module (top level, including top-level await) may take.
    pub load_timeout: Duration,
    /// How long one `execute` may take to settle.
    pub call_timeout: Duration,
    /// Boa's limits.
    pub script: ScriptLimits,
    /// The only environment variables `process.env` shows (`extensions.env`); `None` shows the
    /// whole environment of the process.
    pub env: Option<std::sync::Arc<[String]>>,
}

impl Default for ExtensionLimits {
    fn default() -> ExtensionLimits {
        ExtensionLimits {
            load_timeout: Duration::from_secs(60),
            call_timeout: Duration::from_secs(60),
            script: ScriptLimits::default(),
            env: None,
        }
    }
}

enum Request {
    Call {
        tool: String,
        /// JSON text, parsed on the JS thread straight into a JavaScript value.
        input_json: String,
        deadline: Instant,
        reply: oneshot::Sender<Result<ToolOutput, JsFailure>>,
    },
    Describe {
        tool: String,
        input_json: String,
        deadline: Instant,
        reply: oneshot::Sender<PromptText>,
    },
}

/// How a call failed on the JS thread.
enum JsFailure {
    /// `execute` threw or rejected: what, and where in the original source.
    Threw {
        verb: &'static str,
        error: String,
        location: Option<String>,
    },
    /// Its promise can never settle, or did not settle in time.
    Unsettled(String),
    /// The tool is unknown.
    Other(String),
    /// The input is not JSON text (only a direct caller can hand one in: dispatch validates
    /// first).
    NotJson(String),
    /// What it returned is over the host's limits (nesting, size): the whole message.
    OverLimit(String),
}

/// How long `describe(input)` may take before the prompt falls back to the host's own text.
const DESCRIBE_TIMEOUT: Duration = Duration::from_secs(2);

/// A running extension: its thread, and whether it has been given up on.
pub struct ExtensionWorker {
    name: String,
    requests: Mutex<Sender<Request>>,
    failed: Mutex<Option<String>>,
    limits: ExtensionLimits,
    describing: Mutex<Vec<String>>,
}

/// What an extension may run, as its trust check read it: the bytes of every file of its module
/// graph and those already stripped, each by canonical path.
#[derive(Debug, Default)]
pub struct AdmittedFiles {
    /// Every file the trust digest covers.
    pub files: HashMap<PathBuf, Vec<u8>>,
    /// The files already stripped while they were read for the digest.
    pub stripped: HashMap<PathBuf, StrippedModule>,
}

/// A load in progress: wait on it to get the extension's tools or the reason it failed.
pub struct PendingLoad {
    worker: Arc<ExtensionWorker>,
    loaded: Receiver<Result<Vec<ToolSpec>, String>>,
}

impl PendingLoad {
    /// The worker, its tools once loaded, or why it did not load. Waits at most until the load
    /// timeout (from when the load started) plus a grace period; after that the extension is
    /// marked failed. It blocks the calling thread: from async code, call it on the blocking pool
    /// (`HostBuilder::build` does).
    pub fn wait(self, started: Instant) -> (Arc<ExtensionWorker>, Result<Vec<ToolSpec>, String>) {
        let limit = started + self.worker.limits.load_timeout + STUCK_GRACE;
        let result = match self
            .loaded
            .recv_timeout(limit.saturating_duration_since(Instant::now()))
        {
            Ok(result) => result,
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "did not finish loading within {}s (its top level is still running)",
                self.worker.limits.load_timeout.as_secs()
            )),
            Err(RecvTimeoutError::Disconnected) => {
                Err("its JS thread crashed while loading".to_string())
            }
        };
        match &result {
            Err(reason) => self.worker.mark_failed(reason.clone()),
            Ok(tools) => {
                if let Ok(mut describing) = self.worker.describing.lock() {
                    *describing = tools
                        .iter()
                        .filter(|tool| tool.describes)
                        .map(|tool| tool.name.clone())
                        .collect();
                }
            }
        }
        (self.worker, result)
    }
}

impl ExtensionWorker {
    /// Starts the thread of extension `name` and begins loading `entry` on it, running only the
    /// files of `admitted` (what its trust was checked against).
    pub fn spawn(
        name: &str,
        entry: PathBuf,
        admitted: AdmittedFiles,
        limits: ExtensionLimits,
    ) -> PendingLoad {
        let (requests, incoming) = mpsc::channel::<Request>();
        let (loaded_sender, loaded) = mpsc::channel();
        let worker = Arc::new(ExtensionWorker {
            name: name.to_string(),
            requests: Mutex::new(requests),
            failed: Mutex::new(None),
            limits: limits.clone(),
            describing: Mutex::new(Vec::new()),
        });
        let thread_name = format!("ext-{name}");
        let session = tokio::runtime::Handle::try_current().ok();
        let extension = name.to_string();
        let spawned = std::thread::Builder::new()
            .name(thread_name)
            // Boa parses, compiles and runs recursively: what the nesting scan lets through
            // (`sources::parse_guard::MAX_NESTING` levels) takes up to about 160 KiB a level in a
            // debug build. Only the pages used are committed.
            .stack_size(super::JS_STACK_BYTES)
            .spawn(move || {
                // The session's runtime, where this extension's fetches run.
                let _inside = session.as_ref().map(tokio::runtime::Handle::enter);
                crate::sources::parse_guard::declare_parse_stack(super::JS_STACK_BYTES);
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    run_thread(&extension, entry, admitted, limits, &loaded_sender, incoming);
                }));
                if outcome.is_err() {
                    tracing::error!(target: "earshot::extension", extension = %extension, "the JS thread panicked");
                }
            });
        if let Err(error) = spawned {
            worker.mark_failed(format!("cannot start its JS thread: {error}"));
        }
        PendingLoad { worker, loaded }
    }

    /// The extension's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Why the extension was given up on, if it was.
    pub fn failure(&self) -> Option<String> {
        self.failed.lock().map(|f| f.clone()).unwrap_or(None)
    }

    fn mark_failed(&self, reason: String) {
        if let Ok(mut failed) = self.failed.lock() {
            failed.get_or_insert(reason);
        }
    }

    /// What `tool`'s `describe(input)` writes for a permission prompt, for `input_json`; empty
    /// when it has none, fails (or the text is not JSON), or takes longer than two seconds (the
    /// host's own title and detail are used then).
    pub async fn describe(&self, tool: &str, input_json: &str) -> PromptText {
        let has_describe = self
            .describing
            .lock()
            .map(|names| names.iter().any(|name| name == tool))
            .unwrap_or(false);
        if !has_describe || self.failure().is_some() {
            return PromptText::default();
        }
        let (reply, answer) = oneshot::channel();
        let request = Request::Describe {
            tool: tool.to_string(),
            input_json: input_json.to_string(),
            deadline: Instant::now() + DESCRIBE_TIMEOUT,
            reply,
        };
        let sent = match self.requests.lock() {
            Ok(requests) => requests.send(request).is_ok(),
            Err(_) => false,
        };
        if !sent {
            return PromptText::default();
        }
        tokio::time::timeout(DESCRIBE_TIMEOUT + STUCK_GRACE, answer)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default()
    }

    /// Runs `tool`'s `execute` with `input_json` on the extension's thread, waiting without
    /// blocking the caller's thread: calls to different extensions run at the same time. The
    /// text is parsed there straight into the argument, as `JSON.parse` would (keys in the
    /// text's order), with no `serde_json::Value` on the way.
    ///
    /// # Errors
    /// Why no output came back, typed: it threw, did not settle in time, failed earlier, or its
    /// thread is stuck (it is then marked failed); [`CallError::InvalidInput`] when the text is
    /// not JSON. The message does not name the tool.
    pub async fn call(&self, tool: &str, input_json: &str) -> Result<ToolOutput, CallError> {
        let unavailable = |name: &str, reason: &str| {
            CallError::failed(
                format!("extension \"{name}\" is unavailable: {reason}"),
                FailureCause::ExtensionUnavailable,
            )
        };
        if let Some(reason) = self.failure() {
            return Err(unavailable(&self.name, &reason));
        }
        let timeout = self.limits.call_timeout;
        let (reply, answer) = oneshot::channel();
        let sent = self
            .requests
            .lock()
            .map_err(|_| unavailable(&self.name, "its channel is poisoned"))?
            .send(Request::Call {
                tool: tool.to_string(),
                input_json: input_json.to_string(),
                deadline: deadline_after(timeout),
                reply,
            });
        if sent.is_err() {
            let reason = "its JS thread has stopped".to_string();
            self.mark_failed(reason.clone());
            return Err(unavailable(&self.name, &reason));
        }
        match tokio::time::timeout(timeout + STUCK_GRACE, answer).await {
            Ok(Ok(Ok(output))) => Ok(output),
            Ok(Ok(Err(failure))) => Err(match failure {
                JsFailure::Threw {
                    verb,
                    error,
                    location,
                } => CallError::failed(
                    match &location {
                        Some(location) => format!("execute {verb}: {error} (at {location})"),
                        None => format!("execute {verb}: {error}"),
                    },
                    FailureCause::ExtensionThrew { error, location },
                ),
                JsFailure::Unsettled(message) => {
                    CallError::failed(message, FailureCause::ExtensionUnsettled)
                }
                JsFailure::Other(message) | JsFailure::OverLimit(message) => {
                    CallError::failed(message, FailureCause::ExtensionUnsettled)
                }
                JsFailure::NotJson(reason) => CallError::InvalidInput {
                    tool: crate::names::namespaced(&self.name, tool),
                    issues: vec![format!("it is not JSON: {reason}")],
                },
            }),
            Err(_) => {
                let reason = format!(
                    "its JS thread has been stuck in a call to {tool} for over {}s, so its tools are off for this session",
                    timeout.as_secs()
                );
                self.mark_failed(reason.clone());
                Err(CallError::failed(
                    format!("extension \"{}\" {reason}", self.name),
                    FailureCause::ExtensionStuck,
                ))
            }
            Ok(Err(_)) => {
                let reason = "its JS thread crashed".to_string();
                self.mark_failed(reason.clone());
                Err(CallError::failed(
                    format!("extension \"{}\": {reason}", self.name),
                    FailureCause::ExtensionStuck,
                ))
            }
        }
    }
}

/// The whole life of the JS thread: load, report the tools, then answer calls until the host
/// drops its end of the channel.
fn run_thread(
    extension: &str,
    entry: PathBuf,
    admitted: AdmittedFiles,
    limits: ExtensionLimits,
    loaded: &Sender<Result<Vec<ToolSpec>, String>>,
    incoming: Receiver<Request>,
) {
    // Canonical, like the root: a linked extensions folder must not make every relative import
    // look as if it left the folder.
    let entry = match entry.canonicalize() {
        Ok(entry) => entry,
        Err(error) => {
            let _ = loaded.send(Err(format!("cannot open {}: {error}", entry.display())));
            return;
        }
    };
    let Some(root) = entry.parent().map(std::path::Path::to_path_buf) else {
        let _ = loaded.send(Err(format!("{} has no folder", entry.display())));
        return;
    };
    let loader = Rc::new(ConfinedLoader::from_snapshot(
        root,
        admitted.files,
        admitted.stripped,
    ));
    let jobs = Rc::new(JobLoop::default());
    let mut context = match new_context(
        extension,
        jobs.clone(),
        loader.clone(),
        limits.script,
        limits.env.as_deref(),
    ) {
        Ok(context) => context,
        Err(error) => {
            let _ = loaded.send(Err(format!("cannot create its JS context: {error}")));
            return;
        }
    };
    // This thread's stack is `JS_STACK_BYTES`; the engine's default reserve is for small ones.
    context
        .runtime_limits_mut()
        .set_native_stack_reserve(super::NATIVE_STACK_RESERVE);
    let tools = match load_module(&entry, &loader, &jobs, &mut context, limits.load_timeout) {
        Ok(tools) => tools,
        Err(reason) => {
            let _ = loaded.send(Err(reason));
            return;
        }
    };
    let specs = tools.iter().map(|tool| tool.spec.clone()).collect();
    if loaded.send(Ok(specs)).is_err() {
        return;
    }
    while let Ok(request) = incoming.recv() {
        match request {
            Request::Call {
                tool,
                input_json,
                deadline,
                reply,
            } => {
                let result = match tools.iter().find(|t| t.spec.name == tool) {
                    Some(tool) => call_tool(
                        extension,
                        tool,
                        &input_json,
                        &loader,
                        &jobs,
                        &mut context,
                        deadline,
                        limits.clone(),
                    ),
                    None => Err(JsFailure::Other(format!(
                        "extension \"{extension}\" has no tool \"{tool}\""
                    ))),
                };
                let _ = reply.send(result);
            }
            Request::Describe {
                tool,
                input_json,
                deadline,
                reply,
            } => {
                let text = tools
                    .iter()
                    .find(|t| t.spec.name == tool)
                    .map(|tool| describe_call(tool, &input_json, &jobs, &mut context, deadline))
                    .unwrap_or_default();
                let _ = reply.send(text);
            }
        }
    }
}

/// Runs a tool's `describe(input)`: a string is the title; `{ title?, detail? }` gives both.
/// Anything else, a throw, or no answer by `deadline` gives nothing.
fn describe_call(
    tool: &CheckedTool,
    input_json: &str,
    jobs: &Rc<JobLoop>,
    context: &mut Context,
    deadline: Instant,
) -> PromptText {
    let Some(describe) = &tool.describe else {
        return PromptText::default();
    };
    // Crypto work it starts ends with it.
    let _activity = Activity::start(deadline);
    let Ok(argument) = JsValue::from_json_text(input_json, context) else {
        return PromptText::default();
    };
    let Ok(mut value) = describe.call(&tool.object.clone().into(), &[argument], context) else {
        return PromptText::default();
    };
    if let Some(promise) = value.as_promise() {
        match settle(&promise, jobs, context, deadline) {
            Ok(Settled::Fulfilled(settled)) => value = settled,
            _ => return PromptText::default(),
        }
    }
    let text = |value: JsValue| value.as_string().map(|s| s.to_std_string_escaped());
    if let Some(title) = text(value.clone()) {
        return PromptText {
            title: Some(title),
            detail: None,
        };
    }
    let Some(object) = value.as_object() else {
        return PromptText::default();
    };
    PromptText {
        title: object.get(js_string!("title"), context).ok().and_then(text),
        detail: object
            .get(js_string!("detail"), context)
            .ok()
            .and_then(text),
    }
}

/// Parses, links and evaluates the entry module, then checks its default export.
fn load_module(
    entry: &std::path::Path,
    loader: &Rc<ConfinedLoader>,
    jobs: &Rc<JobLoop>,
    context: &mut Context,
    timeout: Duration,
) -> Result<Vec<CheckedTool>, String> {
    let deadline = deadline_after(timeout);
    // Crypto work the top level starts and does not await ends with the load.
    let _activity = Activity::start(deadline);
    let module = loader
        .load_entry(entry, context)
        .map_err(|failure| match failure {
            EntryFailure::Strip(error) => error.to_string(),
            EntryFailure::Js(error) => describe_load_error("", &error, loader, context),
        })?;
    let promise = module.load_link_evaluate(context);
    match settle(&promise, jobs, context, deadline) {
        Ok(Settled::Fulfilled(_)) => {}
        Ok(Settled::Rejected(error)) | Err(error) => {
            return Err(describe_load_error(
                "threw while loading",
                &error,
                loader,
                context,
            ));
        }
        Ok(Settled::Never) => {
            return Err(
                "its top level awaits a promise that can never settle (nothing is left that could settle it)"
                    .to_string(),
            );
        }
        Ok(Settled::TimedOut) => {
            return Err(format!(
                "did not finish loading within {}s",
                timeout.as_secs()
            ));
        }
    }
    let namespace = module.namespace(context);
    let default = namespace
        .get(js_string!("default"), context)
        .unwrap_or_default();
    check_default_export(&default, context).map_err(|problems| problems.join("; "))
}

enum Settled {
    Fulfilled(JsValue),
    Rejected(JsError),
    Never,
    TimedOut,
}

/// Drives the job loop until `promise` settles, cannot settle, or `deadline`.
fn settle(
    promise: &JsPromise,
    jobs: &Rc<JobLoop>,
    context: &mut Context,
    deadline: Instant,
) -> Result<Settled, JsError> {
    let pending = || matches!(promise.state(), PromiseState::Pending);
    let drive = jobs.drive(context, &|| !pending(), deadline)?;
    Ok(match promise.state() {
        PromiseState::Fulfilled(value) => Settled::Fulfilled(value),
        PromiseState::Rejected(reason) => Settled::Rejected(JsError::from_opaque(reason)),
        PromiseState::Pending => match drive {
            Drive::Stalled => Settled::Never,
            _ => Settled::TimedOut,
        },
    })
}

/// Calls one tool's `execute` and turns what it produced into a [`ToolOutput`].
#[allow(clippy::too_many_arguments)]
fn call_tool(
    extension: &str,
    tool: &CheckedTool,
    input_json: &str,
    loader: &ConfinedLoader,
    jobs: &Rc<JobLoop>,
    context: &mut Context,
    deadline: Instant,
    limits: ExtensionLimits,
) -> Result<ToolOutput, JsFailure> {
    // Crypto work the call starts (awaited or not) is cancelled when it returns or times out.
    let _activity = Activity::start(deadline);
    let threw = |verb: &'static str, error: &JsError, context: &mut Context| {
        let (error, location) = locate_error(error, loader, context);
        JsFailure::Threw {
            verb,
            error,
            location,
        }
    };
    let argument = JsValue::from_json_text(input_json, context)
        .map_err(|error| JsFailure::NotJson(error.to_string()))?;
    let returned = tool
        .execute
        .call(&tool.object.clone().into(), &[argument], context)
        .map_err(|error| threw("threw", &error, context))?;
    let value = if let Some(promise) = returned.as_promise() {
        match settle(&promise, jobs, context, deadline) {
            Ok(Settled::Fulfilled(value)) => value,
            Ok(Settled::Rejected(error)) => return Err(threw("rejected", &error, context)),
            Err(error) => return Err(threw("failed", &error, context)),
            Ok(Settled::Never) => {
                return Err(JsFailure::Unsettled(format!(
                    "{} returned a promise that can never settle (nothing is left that could settle it)",
                    tool.spec.name
                )));
            }
            Ok(Settled::TimedOut) => {
                return Err(JsFailure::Unsettled(format!(
                    "{} did not settle within {}s",
                    tool.spec.name,
                    limits.call_timeout.as_secs()
                )));
            }
        }
    } else {
        // Let promise reactions the call queued (and due timers) run before answering.
        jobs.drive(context, &|| true, deadline)
            .map_err(|error| threw("failed", &error, context))?;
        returned
    };
    interpret_return(extension, &value, context)
}

/// A string, or `{ output, isError?, title?, content?, structuredContent? }`; anything else is an
/// error output naming what came back. A result over the host's limits (nesting deeper than
/// [`MAX_DEPTH`], over [`MAX_RESULT_BYTES`] as JSON) fails the call, naming the extension and
/// the limit; nothing of it is kept.
fn interpret_return(
    extension: &str,
    value: &JsValue,
    context: &mut Context,
) -> Result<ToolOutput, JsFailure> {
    let wrong = |what: String| ToolOutput {
        output: format!(
            "execute returned {what}; it must return a string or {{ output, isError?, title?, content?, structuredContent? }}"
        ),
        is_error: true,
        title: None,
        notice: None,
        ..ToolOutput::default()
    };
    let over = |what: &str, error: &ToJsonError| {
        JsFailure::OverLimit(format!(
            "extension \"{extension}\" returned {what} that {error}, more than a tool's result may (as an MCP server's: {MAX_DEPTH} levels, {} MiB); nothing of it was kept",
            MAX_RESULT_BYTES >> 20
        ))
    };
    let mut budget = JsonBudget::new(MAX_RESULT_BYTES);
    if let Some(text) = value.as_string() {
        let output = text.to_std_string_escaped();
        if let Err(error) = budget.take(output.len()) {
            return Err(over("an output", &error));
        }
        return Ok(ToolOutput {
            output,
            is_error: false,
            title: None,
            notice: None,
            ..ToolOutput::default()
        });
    }
    let Some(object) = value
        .as_object()
        .filter(|o| !o.is_callable() && !o.is_array())
    else {
        let what = describe_value(value, context);
        return Ok(wrong(what));
    };
    let output = object
        .get(js_string!("output"), context)
        .unwrap_or_default();
    let Some(output) = output.as_string().map(|s| s.to_std_string_escaped()) else {
        let what = format!(
            "an object whose `output` is {}",
            describe_value(&output, context)
        );
        return Ok(wrong(what));
    };
    let is_error = object
        .get(js_string!("isError"), context)
        .unwrap_or_default();
    let title = object.get(js_string!("title"), context).unwrap_or_default();
    let title = title.as_string().map(|s| s.to_std_string_escaped());
    if let Err(error) = budget.take(output.len() + title.as_ref().map_or(0, String::len)) {
        return Err(over("an output", &error));
    }
    let extra = match returned_content(&object, &mut budget, context) {
        Ok(extra) => extra,
        Err(Unusable::Limit(field, error)) => {
            return Err(over(&format!("a `{field}`"), &error));
        }
        Err(Unusable::Wrong(what)) => return Ok(wrong(what)),
    };
    let output = ToolOutput {
        output,
        is_error: is_error.to_boolean(),
        title,
        notice: None,
        structured_content: extra.structured,
        ..ToolOutput::default()
    };
    Ok(output.with_extra_blocks(extra.blocks, ContentLimits::default()))
}

/// What an extension returned beside `output`.
struct ReturnedContent {
    blocks: Vec<ContentBlock>,
    structured: Option<serde_json::Value>,
}

/// Why `content` or `structuredContent` was not taken.
enum Unusable {
    /// Over one of the host's limits: the field, and which limit.
    Limit(&'static str, ToJsonError),
    /// Not what it must be: what was found, as the rest of the return value's errors say it.
    Wrong(String),
}

/// Reads `content` (MCP content blocks) and `structuredContent` (a plain object) from a returned
/// object, without recursion and within `budget` ([`crate::to_json`]).
fn returned_content(
    object: &boa_engine::JsObject,
    budget: &mut JsonBudget,
    context: &mut Context,
) -> Result<ReturnedContent, Unusable> {
    let mut as_json = |key: &'static str| -> Result<Option<serde_json::Value>, Unusable> {
        let value = object
            .get(boa_engine::JsString::from(key), context)
            .unwrap_or_default();
        if value.is_undefined() || value.is_null() {
            return Ok(None);
        }
        to_json(&value, budget, context).map_err(|error| {
            if error.is_limit() {
                Unusable::Limit(key, error)
            } else {
                Unusable::Wrong(format!(
                    "an object whose `{key}` cannot be read as JSON (it {error})"
                ))
            }
        })
    };
    let blocks = match as_json("content")? {
        None => Vec::new(),
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                ContentBlock::from_mcp_json(item).map_err(|why| {
                    Unusable::Wrong(format!(
                        "an object whose `content[{index}]` is wrong: {why}"
                    ))
                })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(Unusable::Wrong(
                "an object whose `content` is not an array".into(),
            ));
        }
    };
    let structured = match as_json("structuredContent")? {
        None => None,
        Some(value @ serde_json::Value::Object(_)) => Some(value),
        Some(_) => {
            return Err(Unusable::Wrong(
                "an object whose `structuredContent` is not a plain object".into(),
            ));
        }
    };
    Ok(ReturnedContent { blocks, structured })
}
