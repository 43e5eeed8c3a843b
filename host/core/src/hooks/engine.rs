//! Firing an event: the handlers that match, run (in parallel, identical ones once), the rewrites
//! chained in a fixed order, and every answer combined so that it only narrows.

use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{Map, Value, json};

use crate::gate::{PermissionPrompt, PromptAnswer, Prompter};
use crate::runner::BoxFuture;
use crate::settings::{Layer, Settings};

use super::admission::{UserHooks, check_user_hooks, hook_admission};
use super::config::{HookDefinition, HookEvent, HookKind, HookSet, OnError};
use super::matcher::HookTool;
use super::output::{Answer, read_answer};
use super::process::{RunContext, run_command};
use super::{HookOutcome, HookReport, last_result};

/// How many times in a row a `Stop` (or `SubagentStop`) hook may block before earshot lets the
/// agent stop anyway.
pub const MAX_STOP_BLOCKS: u32 = 8;

/// Looks up an environment variable (for an http hook's `allowedEnvVars`).
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

pub use crate::mcp::user_start_dir;

/// The hooks of one session, ready to fire. Built by `earshot_host::HostBuilder` from
/// the settings (only the hooks that may run: enabled, and trusted where trust is needed).
pub struct HookEngine {
    hooks: Vec<HookDefinition>,
    events: BTreeSet<HookEvent>,
    context: RunContext,
    env: EnvLookup,
    notices: Vec<String>,
    /// The user's hooks held back under `requireReview` after a change made outside earshot:
    /// they do not run, and on a deciding event each fails (never an allow by absence).
    held: BTreeSet<String>,
    /// The user's definitions on a deciding event that could not be read, by stand-in name, with
    /// what is wrong: each fails (resolving as `onError: "ask"`) instead of running.
    unreadable: std::collections::BTreeMap<String, String>,
    /// The session's settings: a project or local hook is admitted again before each run.
    settings: Arc<Settings>,
    said_allow: Mutex<BTreeSet<String>>,
    /// Each hook's last result as last written, so the file is rewritten only on a change.
    last_written: Mutex<std::collections::BTreeMap<String, String>>,
    stop_blocks: AtomicU32,
    subagent_stop_blocks: AtomicU32,
}

/// What the `PreToolUse` hooks said about one call.
#[derive(Debug, Clone, Default)]
pub struct PreToolUse {
    /// Every outcome, in order.
    pub report: HookReport,
    /// The input to use instead, when hooks rewrote it (the last rewrite in the chain).
    pub updated_input: Option<Value>,
    /// The hooks that rewrote the input, in the order they ran.
    pub rewritten_by: Vec<String>,
}

impl HookEngine {
    /// The session's hooks from `settings`: the user's (unless a change made outside earshot
    /// holds them back under `requireReview`), and the project's and local file's that are
    /// trusted as they are now. Every hook that does not run, and why, is in
    /// [`HookEngine::notices`]. `disableAllHooks: true` in any layer turns every hook off.
    pub fn load(settings: &Settings, session_id: String, env: EnvLookup) -> HookEngine {
        let set = HookSet::from_settings(settings);
        let user_start_dir = user_start_dir(settings);
        let mut notices: Vec<String> = set
            .problems
            .iter()
            .map(|problem| format!("hooks: {problem}"))
            .collect();
        let mut hooks = Vec::new();
        let mut held = BTreeSet::new();
        let mut unreadable = std::collections::BTreeMap::new();
        if let Some(file) = &set.disabled_by {
            if !set.definitions.is_empty() {
                notices.push(format!(
                    "hooks: every hook is off (disableAllHooks in {})",
                    file.display()
                ));
            }
        } else {
            let user_held = match check_user_hooks(settings, &set, &user_start_dir) {
                UserHooks::Unchanged => false,
                UserHooks::Changed { notice, held } => {
                    notices.push(format!("hooks: {notice}"));
                    held
                }
            };
            for definition in set.definitions {
                if !definition.enabled {
                    continue;
                }
                if definition.layer == Layer::User && user_held {
                    held.insert(definition.name.clone());
                    hooks.push(definition);
                    continue;
                }
                match hook_admission(settings, &definition) {
                    Ok(()) => hooks.push(definition),
                    Err(why) => notices.push(format!(
                        "hooks: hook \"{}\" ({}, {}) does not run: {why}",
                        definition.name,
                        definition.layer.as_str(),
                        definition.event
                    )),
                }
            }
            // The user's unreadable guards stand, as hooks that fail (their notice is above).
            for stand_in in set.held {
                unreadable.insert(stand_in.definition.name.clone(), stand_in.problem);
                hooks.push(stand_in.definition);
            }
        }
        HookEngine {
            events: hooks.iter().map(|hook| hook.event).collect(),
            hooks,
            context: RunContext {
                project_dir: settings
                    .project
                    .as_ref()
                    .map(|project| project.root.clone()),
                user_start_dir,
                session_id,
            },
            env,
            notices,
            held,
            unreadable,
            settings: Arc::new(settings.clone()),
            said_allow: Mutex::default(),
            last_written: Mutex::default(),
            stop_blocks: AtomicU32::new(0),
            subagent_stop_blocks: AtomicU32::new(0),
        }
    }

    /// Whether any hook runs on a tool event (when none does, a call costs what it did before
    /// hooks existed).
    pub fn has_tool_hooks(&self) -> bool {
        self.events.iter().any(|event| event.is_tool_event())
    }

    /// Whether any hook runs on `event` (when none does, firing it costs nothing).
    pub fn has(&self, event: HookEvent) -> bool {
        self.events.contains(&event)
    }

    /// The hooks that run in this session.
    pub fn hooks(&self) -> &[HookDefinition] {
        &self.hooks
    }

    /// What the user should know at start: hooks that do not run and why, settings problems,
    /// and a change to the user's hooks made outside earshot. One line each.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The session's id, as hooks see it (`session_id`, `EARSHOT_SESSION_ID`).
    pub fn session_id(&self) -> &str {
        &self.context.session_id
    }

    /// Fires `event` with `fields` (merged into the input every hook gets: `session_id`, `cwd`,
    /// `hook_event_name`), for the hooks whose matcher matches `tool` (on tool events). Returns
    /// what they said, already narrowed: a failure on a deciding event is an ask or a block by
    /// its `onError`; a `Stop` block past the eighth in a row is let go.
    pub async fn fire(
        &self,
        event: HookEvent,
        fields: Map<String, Value>,
        tool: Option<&HookTool>,
    ) -> HookReport {
        if !self.has(event) {
            return HookReport::default();
        }
        let counter = match event {
            HookEvent::Stop => Some(&self.stop_blocks),
            HookEvent::SubagentStop => Some(&self.subagent_stop_blocks),
            _ => None,
        };
        let mut fields = fields;
        if let Some(counter) = counter {
            fields.insert(
                "stop_hook_active".into(),
                Value::Bool(counter.load(Ordering::SeqCst) > 0),
            );
        }
        let (mut report, rewrite, _) = self.run_event(event, fields, tool).await;
        if let Some((hook, prompt)) = rewrite
            && let Value::String(prompt) = prompt
        {
            report
                .outcomes
                .push(HookOutcome::UpdatedPrompt { hook, prompt });
        }
        if let Some(counter) = counter {
            if report.blocked().is_some() {
                let in_a_row = counter.fetch_add(1, Ordering::SeqCst) + 1;
                if in_a_row > MAX_STOP_BLOCKS {
                    counter.store(0, Ordering::SeqCst);
                    let hooks: Vec<String> = report
                        .outcomes
                        .iter()
                        .filter_map(|outcome| match outcome {
                            HookOutcome::Blocked { hook, .. } => Some(hook.clone()),
                            _ => None,
                        })
                        .collect();
                    report
                        .outcomes
                        .retain(|outcome| !matches!(outcome, HookOutcome::Blocked { .. }));
                    report.outcomes.push(HookOutcome::Message {
                        hook: hooks.join(", "),
                        text: format!(
                            "blocked {event} {MAX_STOP_BLOCKS} times in a row; earshot lets the agent stop"
                        ),
                    });
                }
            } else {
                counter.store(0, Ordering::SeqCst);
            }
        }
        if event == HookEvent::UserPromptSubmit {
            self.stop_blocks.store(0, Ordering::SeqCst);
        }
        report
    }

    /// Fires `PreToolUse` for `tool` with `input`, telling hooks what the gate decided (`gate`).
    pub async fn pre_tool_use(&self, tool: &HookTool, input: Value, gate: Value) -> PreToolUse {
        if !self.has(HookEvent::PreToolUse) {
            return PreToolUse::default();
        }
        let mut fields = Map::new();
        fields.insert("tool_name".into(), Value::String(tool.name.clone()));
        fields.insert("tool_input".into(), input);
        fields.insert("gate".into(), gate);
        let (report, rewrite, rewritten_by) = self
            .run_event(HookEvent::PreToolUse, fields, Some(tool))
            .await;
        PreToolUse {
            report,
            updated_input: rewrite.map(|(_, input)| input),
            rewritten_by,
        }
    }

    /// Runs the event's matching hooks and combines their answers; returns the final rewrite
    /// (`tool_input` or `prompt`) and the hook that made it, when hooks rewrote, and every hook
    /// that rewrote, in the order they ran.
    async fn run_event(
        &self,
        event: HookEvent,
        mut fields: Map<String, Value>,
        tool: Option<&HookTool>,
    ) -> (HookReport, Option<(String, Value)>, Vec<String>) {
        let mut seen = BTreeSet::new();
        let matching: Vec<&HookDefinition> = self
            .hooks
            .iter()
            .filter(|hook| hook.event == event)
            .filter(|hook| {
                !event.is_tool_event() || tool.is_none_or(|tool| hook.matcher.matches(tool))
            })
            // Identical handlers run once.
            .filter(|hook| seen.insert(hook.identity()))
            .collect();
        if matching.is_empty() {
            return (HookReport::default(), None, Vec::new());
        }
        fields.insert(
            "session_id".into(),
            Value::String(self.context.session_id.clone()),
        );
        fields.insert(
            "cwd".into(),
            Value::String(
                self.context
                    .project_dir
                    .as_ref()
                    .map(|dir| dir.display().to_string())
                    .unwrap_or_default(),
            ),
        );
        fields.insert(
            "hook_event_name".into(),
            Value::String(event.as_str().into()),
        );
        let rewrite_field = match event {
            HookEvent::PreToolUse => Some("tool_input"),
            HookEvent::UserPromptSubmit => Some("prompt"),
            _ => None,
        };
        let input = Value::Object(fields.clone());
        let mut answers: Vec<Answer> =
            futures::future::join_all(matching.iter().map(|hook| self.run_one(hook, &input))).await;
        // Rewrites run one after another in the fixed order: each later rewriter sees the
        // input as the one before it left it, so the result never depends on who finished first.
        let rewrote = |answer: &Answer| match event {
            HookEvent::PreToolUse => answer.updated_input.clone(),
            HookEvent::UserPromptSubmit => answer.updated_prompt.clone().map(Value::String),
            _ => None,
        };
        let rewriters: Vec<usize> = (0..answers.len())
            .filter(|index| rewrote(&answers[*index]).is_some())
            .collect();
        let mut rewrite: Option<(String, Value)> = None;
        let mut rewriter_names = Vec::new();
        // A block already decides: nothing to chain.
        let blocked = answers.iter().any(|answer| answer.block.is_some());
        for (nth, index) in rewriters.iter().copied().enumerate() {
            if blocked {
                break;
            }
            if nth > 0
                && let (Some(field), Some((_, current))) = (rewrite_field, &rewrite)
            {
                let mut again = fields.clone();
                again.insert(field.into(), current.clone());
                let first = std::mem::take(&mut answers[index]);
                let rerun = self.run_one(matching[index], &Value::Object(again)).await;
                answers[index] = first.narrowed_by(rerun);
            }
            if let Some(value) = rewrote(&answers[index]) {
                rewrite = Some((matching[index].name.clone(), value));
                rewriter_names.push(matching[index].name.clone());
            }
        }
        // Every hook but the one that made the final input runs again on it, so a later
        // rewrite cannot slip past an earlier hook's check (an earlier rewriter included). What
        // a hook said the first time still stands (a block or an ask is never taken back), and
        // a hook that would change the final input again asks.
        if let (Some(field), Some((last, current))) = (rewrite_field, &rewrite)
            && !blocked
        {
            let mut again = fields.clone();
            again.insert(field.into(), current.clone());
            let again = Value::Object(again);
            let others: Vec<usize> = (0..answers.len())
                .filter(|index| matching[*index].name != *last)
                .collect();
            let reruns = futures::future::join_all(
                others
                    .iter()
                    .map(|index| self.run_one(matching[*index], &again)),
            )
            .await;
            for (index, mut rerun) in others.into_iter().zip(reruns) {
                let would_rewrite = rewrote(&rerun).filter(|value| value != current);
                if would_rewrite.is_some() && rerun.block.is_none() {
                    rerun.ask.get_or_insert_with(|| {
                        format!(
                            "hook \"{}\" would change the input that hook \"{last}\" rewrote",
                            matching[index].name
                        )
                    });
                }
                // Only the chain changes the input.
                rerun.updated_input = None;
                rerun.updated_prompt = None;
                let first = std::mem::take(&mut answers[index]);
                let kept_rewrite = (first.updated_input.clone(), first.updated_prompt.clone());
                answers[index] = first.narrowed_by(rerun);
                (answers[index].updated_input, answers[index].updated_prompt) = kept_rewrite;
            }
        }
        self.remember(&matching, &answers);
        let mut report = HookReport::default();
        for (hook, answer) in matching.iter().zip(answers) {
            self.combine(event, hook, answer, &mut report);
        }
        (report, rewrite, rewriter_names)
    }

    /// Whether `hook` is one of the user's hooks held back for review.
    fn is_held(&self, hook: &HookDefinition) -> bool {
        hook.layer == Layer::User && self.held.contains(&hook.name)
    }

    /// Runs one hook on `input` (a held one does not run: it fails).
    async fn run_one(&self, hook: &HookDefinition, input: &Value) -> Answer {
        let mut trusted = None;
        if hook.layer != Layer::User {
            // Admitted again as it is now: a script edited during the session (by a tool the
            // model called, a pull) lapses its trust at once, not at the next start. It runs
            // from the snapshot of what this check hashed, never from the path.
            let settings = self.settings.clone();
            let definition = hook.clone();
            let admitted = tokio::task::spawn_blocking(move || {
                super::process::trusted_run(&settings, &definition)
            })
            .await
            .unwrap_or_else(|_| Err("its admission check failed".into()));
            match admitted {
                Ok(run) => trusted = Some(run),
                Err(why) => {
                    return Answer {
                        failure: Some(format!(
                            "hook \"{}\" ({}, {}) no longer runs: {why}",
                            hook.name,
                            hook.layer.as_str(),
                            hook.event
                        )),
                        ..Answer::default()
                    };
                }
            }
        }
        if hook.layer == Layer::User
            && let Some(problem) = self.unreadable.get(&hook.name)
        {
            return Answer {
                failure: Some(format!(
                    "your {} hook cannot be read, so it is held: {problem}",
                    hook.event
                )),
                ..Answer::default()
            };
        }
        if self.is_held(hook) {
            return Answer {
                failure: Some(format!(
                    "hook \"{}\" (user, {}) is held back: your hooks changed outside earshot and hooks.requireReview is on; review them, then run `earshot hooks review`",
                    hook.name, hook.event
                )),
                ..Answer::default()
            };
        }
        // A value a `${VAR}` expanded to (a server's URL or key in an error) never reaches a
        // hook's stdin or an http hook's body.
        let bytes = serde_json::to_vec(&crate::redact::redact_json(input)).unwrap_or_default();
        let finished = match hook.kind {
            HookKind::Http { .. } => super::http::run_http(hook, bytes, &*self.env).await,
            _ => run_command(hook, bytes, &self.context, trusted.as_ref()).await,
        };
        read_answer(hook, &finished)
    }

    /// Keeps each hook's last result for `hooks list`, off the caller's thread, writing the
    /// file only when a result changed (a hook that answers the same every call costs no I/O).
    fn remember(&self, hooks: &[&HookDefinition], answers: &[Answer]) {
        let Some(config_dir) = self.settings.user_config_dir.clone() else {
            return;
        };
        let mut written = self.last_written.lock();
        let results: Vec<(String, String)> = hooks
            .iter()
            .zip(answers)
            .map(|(hook, answer)| {
                (
                    last_result::result_key(
                        hook.layer,
                        &hook.name,
                        self.context.project_dir.as_deref(),
                    ),
                    answer.summary(),
                )
            })
            .filter(|(key, summary)| written.get(key) != Some(summary))
            .collect();
        if results.is_empty() {
            return;
        }
        for (key, summary) in &results {
            written.insert(key.clone(), summary.clone());
        }
        drop(written);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn_blocking(move || last_result::record(&config_dir, results));
        }
    }

    /// Adds what `hook` answered to `report`, narrowing only.
    fn combine(
        &self,
        event: HookEvent,
        hook: &HookDefinition,
        answer: Answer,
        report: &mut HookReport,
    ) {
        let name = hook.name.clone();
        if let Some(failure) = answer.failure {
            if event == HookEvent::PermissionAsked && hook.on_error == OnError::Deny {
                report.outcomes.push(HookOutcome::Blocked {
                    hook: name.clone(),
                    reason: failure.clone(),
                });
            }
            if event.decides() {
                // A held hook never lets a call through by its absence.
                let on_error = match hook.on_error {
                    OnError::Continue if self.is_held(hook) => OnError::Ask,
                    other => other,
                };
                match on_error {
                    OnError::Ask => report.outcomes.push(HookOutcome::Asked {
                        hook: name.clone(),
                        reason: failure.clone(),
                    }),
                    OnError::Deny => report.outcomes.push(HookOutcome::Blocked {
                        hook: name.clone(),
                        reason: failure.clone(),
                    }),
                    OnError::Continue => {}
                }
            }
            report.outcomes.push(HookOutcome::Failed {
                hook: name,
                message: failure,
            });
            return;
        }
        if let Some(reason) = answer.block {
            if event.can_block() {
                report.outcomes.push(HookOutcome::Blocked {
                    hook: name.clone(),
                    reason,
                });
            } else if matches!(
                event,
                HookEvent::PostToolUse | HookEvent::PostToolUseFailure
            ) {
                report.outcomes.push(HookOutcome::Context {
                    hook: name.clone(),
                    text: reason,
                });
            } else {
                report.outcomes.push(HookOutcome::Message {
                    hook: name.clone(),
                    text: reason,
                });
            }
        }
        if let Some(reason) = answer.ask {
            if matches!(event, HookEvent::PreToolUse) {
                report.outcomes.push(HookOutcome::Asked {
                    hook: name.clone(),
                    reason: if reason.is_empty() {
                        format!("hook \"{name}\" asks for your approval")
                    } else {
                        reason
                    },
                });
            } else {
                report.outcomes.push(HookOutcome::Message {
                    hook: name.clone(),
                    text: format!(
                        "asked for approval, which {event} cannot ask for; read as no decision"
                    ),
                });
            }
        }
        if answer.said_allow && self.said_allow.lock().insert(name.clone()) {
            report.outcomes.push(HookOutcome::Message {
                hook: name.clone(),
                text: "said \"allow\", which earshot reads as no decision: a hook cannot grant a permission, the gate decides (this notice is shown once)".into(),
            });
        }
        if let Some(text) = answer.context {
            report.outcomes.push(HookOutcome::Context {
                hook: name.clone(),
                text,
            });
        }
        if let Some(text) = answer.message {
            report
                .outcomes
                .push(HookOutcome::Message { hook: name, text });
        }
    }
}

/// What a hook asked about a call: the call needs a person's yes, even over an allow rule.
#[derive(Debug, Clone)]
pub struct HookAsk {
    /// The hook that asked, by name.
    pub hook: String,
    /// Why, as the hook said it.
    pub reason: String,
}

/// A call as the hooks shaped it: the asks they raised and the input they rewrote, for the gate's
/// prompt to show, and the `PermissionAsked` hooks to fire before anyone is asked.
pub struct HookedCall<'a> {
    /// The session's hooks, for the `PermissionAsked` event.
    pub engine: &'a HookEngine,
    /// Who answers the ask in the end (the embedder's prompter).
    pub inner: &'a dyn Prompter,
    /// The call the prompt is about.
    pub tool: HookTool,
    /// The input as the hooks left it.
    pub input: Value,
    /// The ask a hook raised, if any.
    pub ask: Option<HookAsk>,
}

impl Prompter for HookedCall<'_> {
    fn ask<'a>(&'a self, prompt: &'a PermissionPrompt) -> BoxFuture<'a, PromptAnswer> {
        Box::pin(async move {
            if self.engine.has(HookEvent::PermissionAsked) {
                let mut fields = Map::new();
                fields.insert("tool_name".into(), Value::String(self.tool.name.clone()));
                fields.insert("tool_input".into(), self.input.clone());
                fields.insert(
                    "permission".into(),
                    json!({"rule": prompt.rule_name(), "target": prompt.target()}),
                );
                let report = self
                    .engine
                    .fire(HookEvent::PermissionAsked, fields, Some(&self.tool))
                    .await;
                for line in report.lines_for_user() {
                    tracing::warn!("{line}");
                }
                if let Some((hook, reason)) = report.blocked() {
                    return PromptAnswer::Deny(format!(
                        "{} was blocked by hook \"{hook}\" before anyone was asked: {reason}",
                        prompt.target()
                    ));
                }
            }
            let answer = self.inner.ask(prompt).await;
            match (&answer, &self.ask) {
                (PromptAnswer::Deny(_), Some(ask)) if !self.inner.shows_prompt_text() => {
                    PromptAnswer::Deny(format!(
                        "{} needs approval because hook \"{}\" asked for it ({}), and there is no one to ask",
                        prompt.target(),
                        ask.hook,
                        ask.reason
                    ))
                }
                _ => answer,
            }
        })
    }

    fn shows_prompt_text(&self) -> bool {
        self.inner.shows_prompt_text()
    }
}
