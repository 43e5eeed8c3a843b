//! Reading `hooks` from every settings layer, in Claude Code's shape:
//! `{"hooks": {"PreToolUse": [{"matcher": "Mcp(github__*)", "hooks": [{"type": "command",
//! "command": "…", "args": […], "timeout": 60, "name": "…", "onError": "ask"}]}]}}`, plus
//! `disableAllHooks` (true in any layer wins), `hooks.disabled` (names turned off; the
//! checked-in file can name only its own hooks) and `hooks.requireReview`.
//!
//! A definition that cannot be read is reported and never runs; a project hook without a `name`
//! is one of those (its name is its trust key).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::settings::{Layer, Settings};

use super::matcher::HookMatcher;

/// An event hooks can run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[non_exhaustive]
pub enum HookEvent {
    /// Before a tool runs (after its input is known, before the gate asks): may deny, ask,
    /// rewrite the input, add context.
    PreToolUse,
    /// After a tool ran and returned a result: may add context.
    PostToolUse,
    /// After a tool ran and failed, or its input was refused: may add context.
    PostToolUseFailure,
    /// When the gate is about to ask someone: may deny (or just observe). Never answers.
    PermissionAsked,
    /// When a session starts (the host is built).
    SessionStart,
    /// When a session ends (`earshot_host::Host::shutdown`).
    SessionEnd,
    /// The embedder's: the user submitted a prompt. May block it or replace it.
    UserPromptSubmit,
    /// The embedder's: the agent is about to stop. May block (at most 8 times in a row).
    Stop,
    /// The embedder's: a subagent is about to stop. May block (at most 8 times in a row).
    SubagentStop,
    /// The embedder's: before the conversation is compacted.
    PreCompact,
    /// The embedder's: a notification for the user.
    Notification,
}

impl HookEvent {
    /// Every event, in the order `hooks list` shows them.
    pub const ALL: [HookEvent; 11] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PermissionAsked,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::Notification,
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::PreCompact,
        HookEvent::SessionEnd,
    ];

    /// The event's name as written in settings (`PreToolUse`).
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::PermissionAsked => "PermissionAsked",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::Notification => "Notification",
        }
    }

    /// The event named `name`, exactly as written.
    pub fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL
            .into_iter()
            .find(|event| event.as_str() == name)
    }

    /// How long a hook on this event may run when its definition says nothing.
    pub fn default_timeout(self) -> Duration {
        match self {
            HookEvent::UserPromptSubmit => Duration::from_secs(30),
            HookEvent::SessionEnd => Duration::from_secs(5),
            _ => Duration::from_secs(60),
        }
    }

    /// Whether the event is about one tool call (its matcher applies, its input names the tool).
    pub fn is_tool_event(self) -> bool {
        matches!(
            self,
            HookEvent::PreToolUse
                | HookEvent::PostToolUse
                | HookEvent::PostToolUseFailure
                | HookEvent::PermissionAsked
        )
    }

    /// Whether a hook on this event decides something, so that its failure resolves by its
    /// `onError` (on the other events a failure is reported).
    pub fn decides(self) -> bool {
        matches!(self, HookEvent::PreToolUse | HookEvent::UserPromptSubmit)
    }

    /// Whether a hook's block stops what the event is about (on the others it is reported).
    pub fn can_block(self) -> bool {
        matches!(
            self,
            HookEvent::PreToolUse
                | HookEvent::PermissionAsked
                | HookEvent::UserPromptSubmit
                | HookEvent::Stop
                | HookEvent::SubagentStop
        )
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a failing hook (crash, exit code other than 0 or 2, missing program, unparsable output,
/// timeout) means on `PreToolUse` and `UserPromptSubmit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// The action needs a person's yes (a deny when no one can be asked). The default.
    Ask,
    /// The action is blocked.
    Deny,
    /// The failure is reported and the action goes on: the user's own settings only.
    Continue,
}

/// How a hook runs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum HookKind {
    /// A program and its arguments, no shell (the default form).
    Exec {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A shell string, run by `sh -c` (a `command` with shell syntax and no `args`), or by
    /// `bash -c` with `"shell": "bash"`.
    Shell {
        /// The script.
        script: String,
        /// `sh` or `bash`.
        shell: String,
    },
    /// `type: "http"`: the event's JSON POSTed to `url`.
    Http {
        /// Where.
        url: String,
        /// Header values; `$VAR`/`${VAR}` expands only for a name in `allowed_env_vars`.
        headers: Vec<(String, String)>,
        /// The environment variables header values may name.
        allowed_env_vars: Vec<String>,
    },
}

/// One handler as configured, with where it came from.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HookDefinition {
    /// Its stable name: given, or derived from what it runs (never from its position).
    pub name: String,
    /// The event it runs on.
    pub event: HookEvent,
    /// Which tools it fires for (tool events only).
    pub matcher: HookMatcher,
    /// What it runs.
    pub kind: HookKind,
    /// How long it may run.
    #[serde(serialize_with = "seconds")]
    pub timeout: Duration,
    /// What its failure means on a deciding event.
    pub on_error: OnError,
    /// `"enabled": false` turns it off.
    pub enabled: bool,
    /// The settings layer it is in.
    pub layer: Layer,
    /// Its settings file.
    pub file: PathBuf,
    /// Its place among the event's handlers in its file (the declared order, not its identity).
    #[serde(skip)]
    pub position: usize,
}

fn seconds<S: serde::Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(duration.as_secs_f64())
}

impl HookDefinition {
    /// The definition as its digest and deduplication see it: everything that decides what runs
    /// and how, not where it sits in the file.
    pub fn canonical_json(&self) -> String {
        json!({
            "event": self.event.as_str(),
            "matcher": self.matcher.text(),
            "kind": self.kind,
            "timeout": self.timeout.as_millis() as u64,
            "onError": self.on_error,
        })
        .to_string()
    }

    /// What makes two handlers the same handler: what runs and how, whatever matched it. Two
    /// that match one call run once.
    pub fn identity(&self) -> String {
        json!({
            "event": self.event.as_str(),
            "kind": self.kind,
            "timeout": self.timeout.as_millis() as u64,
            "onError": self.on_error,
            "layer": self.layer.as_str(),
        })
        .to_string()
    }

    /// `exec`, `shell` or `http`, for `hooks list`.
    pub fn form(&self) -> &'static str {
        match self.kind {
            HookKind::Exec { .. } => "exec",
            HookKind::Shell { .. } => "shell",
            HookKind::Http { .. } => "http",
        }
    }

    /// What it runs, as one line for a person.
    pub fn shown_command(&self) -> String {
        match &self.kind {
            HookKind::Exec { command, args } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .map(|word| {
                    if word.is_empty() || word.contains(char::is_whitespace) {
                        crate::gate::shell_word(word)
                    } else {
                        word.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(" "),
            HookKind::Shell { script, shell } => {
                format!("{shell} -c {}", crate::gate::shell_word(script))
            }
            HookKind::Http {
                url,
                headers,
                allowed_env_vars,
            } => {
                let mut shown = format!("POST {url}");
                if !headers.is_empty() {
                    let names: Vec<&str> = headers.iter().map(|(name, _)| name.as_str()).collect();
                    shown.push_str(&format!(" (headers: {})", names.join(", ")));
                }
                if !allowed_env_vars.is_empty() {
                    shown.push_str(&format!(" (sends ${})", allowed_env_vars.join(", $")));
                }
                shown
            }
        }
    }
}

/// One of the user's hook definitions on a deciding event that could not be read: it is held.
/// It never runs, and on its event it counts as a hook that failed with `onError: "ask"` (a deny
/// when no one can be asked), so a typo in the user's own guard never lets a call through.
#[derive(Debug, Clone)]
pub struct HeldHook {
    /// A stand-in definition: the event, the matcher when it could be read (else every tool),
    /// `onError: "ask"`, and a name saying where it is (`unreadable hooks.PreToolUse[0]`).
    pub definition: HookDefinition,
    /// What is wrong with it, one line naming its file and key.
    pub problem: String,
}

/// Every hook definition of a session's settings, what could not be read, and the switches.
#[derive(Debug, Clone, Default)]
pub struct HookSet {
    /// Every definition that could be read, in the fixed order: user, project, local, then as
    /// declared.
    pub definitions: Vec<HookDefinition>,
    /// One line for each definition that could not be read (it never runs).
    pub problems: Vec<String>,
    /// The user's definitions on a deciding event that could not be read, held (see
    /// [`HeldHook`]).
    pub held: Vec<HeldHook>,
    /// The user's own file, when it sets `disableAllHooks: true`: every hook is off.
    pub disabled_by: Option<PathBuf>,
    /// The project's or local file, when it sets `disableAllHooks: true`: the project's and
    /// the local file's hooks are off (marked not enabled); the user's own still run.
    pub project_disabled_by: Option<PathBuf>,
    /// `hooks.requireReview: true` in some layer: a change to the user's hooks made outside
    /// earshot stops them until reviewed.
    pub require_review: bool,
}

impl HookSet {
    /// Reads `hooks` from every layer of `settings`.
    pub fn from_settings(settings: &Settings) -> HookSet {
        let mut set = HookSet::default();
        // `hooks.disabled: [NAME, …]` turns those hooks off: from the user's files any hook, from
        // the checked-in file only the project's own (a repository cannot switch off the
        // user's guard).
        let mut disabled: Vec<(Layer, String)> = Vec::new();
        let mut files: Vec<_> = settings.files.iter().collect();
        files.sort_by_key(|file| file.layer);
        for file in files {
            let Some(value) = file.value.as_ref() else {
                continue;
            };
            if value.get("disableAllHooks") == Some(&Value::Bool(true)) {
                // A repository switches off its own hooks, never the user's guard.
                let slot = if file.layer == Layer::User {
                    &mut set.disabled_by
                } else {
                    &mut set.project_disabled_by
                };
                slot.get_or_insert_with(|| file.path.clone());
            }
            let where_ = file.path.display().to_string();
            if file.layer == Layer::User {
                hold_misspelt_hooks_key(value, &file.path, &mut set);
            }
            let Some(hooks) = value.get("hooks") else {
                continue;
            };
            let Some(events) = hooks.as_object() else {
                let problem = format!("{where_}: \"hooks\" must be an object of events");
                if file.layer == Layer::User {
                    for event in HookEvent::ALL.into_iter().filter(|event| event.decides()) {
                        hold(&mut set, event, None, &file.path, "hooks", &problem);
                    }
                }
                set.problems.push(problem);
                continue;
            };
            let before = set.definitions.len();
            for (key, groups) in events {
                if key == "disabled" {
                    match groups.as_array().and_then(|names| {
                        names
                            .iter()
                            .map(|name| name.as_str().map(str::to_string))
                            .collect::<Option<Vec<String>>>()
                    }) {
                        Some(names) => {
                            disabled.extend(names.into_iter().map(|name| (file.layer, name)));
                        }
                        None => set.problems.push(format!(
                            "{where_}: hooks.disabled must be a list of hook names"
                        )),
                    }
                    continue;
                }
                if key == "requireReview" {
                    match groups {
                        // Only the user's own file: it holds the user's hooks back.
                        Value::Bool(on) => set.require_review |= *on && file.layer == Layer::User,
                        _ => set.problems.push(format!(
                            "{where_}: hooks.requireReview must be true or false"
                        )),
                    }
                    continue;
                }
                let Some(event) = HookEvent::parse(key) else {
                    let shown = crate::gate::sanitise_for_terminal(key, 40);
                    // An empty list held nothing; anything else may have held the user's guard.
                    let held_event = near_event(key).filter(|meant| {
                        file.layer == Layer::User
                            && meant.decides()
                            && !groups.as_array().is_some_and(Vec::is_empty)
                    });
                    let problem = match near_event(key) {
                        Some(meant) if held_event.is_some() => format!(
                            "{where_}: hooks.{shown}: unknown event (did you mean \"{meant}\"?); its hooks are held: each {meant} counts as a hook that failed (onError \"ask\") until it is fixed"
                        ),
                        Some(meant) => format!(
                            "{where_}: hooks.{shown}: unknown event (did you mean \"{meant}\"?); its hooks never run"
                        ),
                        None => format!(
                            "{where_}: hooks.{shown}: unknown event (known: {})",
                            HookEvent::ALL.map(HookEvent::as_str).join(", ")
                        ),
                    };
                    if let Some(meant) = held_event {
                        let at = format!("hooks.{shown}");
                        hold(&mut set, meant, None, &file.path, &at, &problem);
                    }
                    set.problems.push(problem);
                    continue;
                };
                read_groups(event, groups, file.layer, &file.path, &mut set);
            }
            refuse_repeated_names(&mut set, before, &where_);
        }
        if let Some(file) = &set.project_disabled_by {
            let mut off = 0;
            for definition in &mut set.definitions {
                if definition.layer != Layer::User && definition.enabled {
                    definition.enabled = false;
                    off += 1;
                }
            }
            if off > 0 {
                set.problems.push(format!(
                    "{}: disableAllHooks turns off the project's and the local file's hooks ({off}); your own hooks still run (only your settings.json can turn them off)",
                    file.display()
                ));
            }
        }
        for definition in &mut set.definitions {
            // The user's file names any hook; the project's files (the local one can be shipped
            // too) only their own.
            if disabled.iter().any(|(layer, name)| {
                *name == definition.name
                    && (*layer == Layer::User || definition.layer != Layer::User)
            }) {
                definition.enabled = false;
            }
        }
        set
    }
}

/// Keeps the first of two definitions with one name in one file: a name is a trust key, so it
/// must say which hook it means.
fn refuse_repeated_names(set: &mut HookSet, from: usize, where_: &str) {
    let mut seen = std::collections::BTreeSet::new();
    let mut index = from;
    while index < set.definitions.len() {
        let name = set.definitions[index].name.clone();
        if seen.insert(name.clone()) {
            index += 1;
        } else {
            set.definitions.remove(index);
            set.problems.push(format!(
                "{where_}: two hooks are named \"{name}\"; only the first is used (a name is a hook's trust key, give each its own)"
            ));
        }
    }
}

fn read_groups(
    event: HookEvent,
    groups: &Value,
    layer: Layer,
    file: &std::path::Path,
    set: &mut HookSet,
) {
    let where_ = format!("{}: hooks.{event}", file.display());
    // The user's own guard on a deciding event is held where it cannot be read, never dropped.
    let holds = layer == Layer::User && event.decides();
    let held = |problem: &str| {
        if holds {
            format!(
                "{problem}; it is held: each {event} counts as a hook that failed (onError \"ask\") until it is fixed"
            )
        } else {
            format!("{problem}; it never runs")
        }
    };
    let Some(groups) = groups.as_array() else {
        let problem = held(&format!("{where_} must be a list of {{matcher, hooks}}"));
        if holds {
            hold(set, event, None, file, &format!("hooks.{event}"), &problem);
        }
        set.problems.push(problem);
        return;
    };
    let mut position = 0;
    for (group_index, group) in groups.iter().enumerate() {
        let at = format!("{where_}[{group_index}]");
        let key = format!("hooks.{event}[{group_index}]");
        let matcher_text = match group.get("matcher") {
            None | Some(Value::Null) => "",
            Some(Value::String(text)) => text.as_str(),
            Some(_) => {
                let problem = held(&format!("{at}.matcher must be a string"));
                if holds {
                    hold(set, event, None, file, &key, &problem);
                }
                set.problems.push(problem);
                continue;
            }
        };
        let matcher = match HookMatcher::parse(matcher_text) {
            Ok(matcher) => matcher,
            Err(why) => {
                // The tools it meant cannot be known: held, it stands for every tool.
                let problem = held(&format!("{at}.matcher: {why}"));
                if holds {
                    hold(set, event, None, file, &key, &problem);
                }
                set.problems.push(problem);
                continue;
            }
        };
        let Some(handlers) = group.get("hooks").and_then(Value::as_array) else {
            let near = group.as_object().and_then(|group| {
                group
                    .keys()
                    .find(|key| *key != "hooks" && *key != "matcher")
                    .filter(|key| {
                        crate::settings::edit_distance(&key.to_ascii_lowercase(), "hooks") <= 2
                    })
                    .cloned()
            });
            let problem = match near {
                Some(near) => held(&format!(
                    "{at}: unknown key \"{}\" (did you mean \"hooks\"?): \"hooks\" must be a list of handlers",
                    crate::gate::sanitise_for_terminal(&near, 40)
                )),
                None => held(&format!("{at}.hooks must be a list of handlers")),
            };
            if holds {
                hold(set, event, Some(&matcher), file, &key, &problem);
            }
            set.problems.push(problem);
            continue;
        };
        for (index, handler) in handlers.iter().enumerate() {
            let at = format!("{at}.hooks[{index}]");
            match read_handler(event, &matcher, handler, layer) {
                Ok(mut definition) => {
                    definition.file = file.to_path_buf();
                    definition.position = position;
                    position += 1;
                    set.definitions.push(definition);
                }
                Err(why) => {
                    let problem = held(&format!("{at}: {why}"));
                    if holds {
                        let key = format!("{key}.hooks[{index}]");
                        hold(set, event, Some(&matcher), file, &key, &problem);
                    }
                    set.problems.push(problem);
                }
            }
        }
    }
}

/// Adds a held stand-in for one of the user's definitions on `event` that could not be read at
/// `key` (`hooks.PreToolUse[0]`): it fires for `matcher`'s tools (every tool when the matcher
/// itself could not be read) and resolves as `onError: "ask"`.
fn hold(
    set: &mut HookSet,
    event: HookEvent,
    matcher: Option<&HookMatcher>,
    file: &std::path::Path,
    key: &str,
    problem: &str,
) {
    let matcher = match matcher {
        Some(matcher) => matcher.clone(),
        None => HookMatcher::parse("").expect("the empty matcher parses"),
    };
    let name = format!("unreadable {}", crate::gate::sanitise_for_terminal(key, 80));
    set.held.push(HeldHook {
        definition: HookDefinition {
            name: name.clone(),
            event,
            matcher,
            kind: HookKind::Exec {
                command: name,
                args: Vec::new(),
            },
            timeout: event.default_timeout(),
            on_error: OnError::Ask,
            enabled: true,
            layer: Layer::User,
            file: file.to_path_buf(),
            position: 0,
        },
        problem: problem.to_string(),
    });
}

/// The event `key` was probably meant to be, when it is not one: the same letters in another
/// case or with separators (`pretooluse`, `Pre_Tool_Use`), up to two letters off (`PretoolUse`,
/// `PreToolUze`), or Claude Code's `PermissionRequest` (earshot's `PermissionAsked`).
fn near_event(key: &str) -> Option<HookEvent> {
    let lower: String = key
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if lower == "permissionrequest" {
        return Some(HookEvent::PermissionAsked);
    }
    HookEvent::ALL.into_iter().find(|event| {
        let name = event.as_str().to_ascii_lowercase();
        lower == name || crate::settings::edit_distance(&lower, &name) <= 2
    })
}

/// A top-level key of the user's file that reads as `hooks` but is not (`Hooks`, `hook`): the
/// settings problem is reported with the misspelt `permissions` keys; here each deciding event
/// under it (or near-miss of one) is held, so the guard it holds still counts.
fn hold_misspelt_hooks_key(value: &Value, file: &std::path::Path, set: &mut HookSet) {
    let Some(root) = value.as_object() else {
        return;
    };
    for (key, events) in root {
        if key == "hooks" || !crate::settings::reads_as_hooks(key) {
            continue;
        }
        let Some(events) = events.as_object() else {
            continue;
        };
        let shown = crate::gate::sanitise_for_terminal(key, 40);
        for event_key in events.keys() {
            let Some(event) = HookEvent::parse(event_key).or_else(|| near_event(event_key)) else {
                continue;
            };
            if !event.decides() {
                continue;
            }
            let problem = format!(
                "{}: unknown key \"{shown}\" (did you mean \"hooks\"?); the {event} hooks under it are held: each {event} counts as a hook that failed (onError \"ask\") until it is fixed",
                file.display()
            );
            let at = format!(
                "{shown}.{}",
                crate::gate::sanitise_for_terminal(event_key, 40)
            );
            hold(set, event, None, file, &at, &problem);
            set.problems.push(problem);
        }
    }
}

const HANDLER_KEYS: &[&str] = &[
    "type",
    "command",
    "args",
    "shell",
    "url",
    "headers",
    "allowedEnvVars",
    "timeout",
    "name",
    "onError",
    "enabled",
    "statusMessage",
];

fn read_handler(
    event: HookEvent,
    matcher: &HookMatcher,
    handler: &Value,
    layer: Layer,
) -> Result<HookDefinition, String> {
    let object = handler.as_object().ok_or("a handler must be an object")?;
    super::definition_text::refuse_hidden(handler, &[("matcher", matcher.text())])?;
    if let Some(other @ ("prompt" | "agent" | "mcp_tool")) =
        object.get("type").and_then(Value::as_str)
    {
        return Err(format!(
            "type \"{other}\" is not supported (only command and http)"
        ));
    }
    if let Some(unknown) = object
        .keys()
        .find(|key| !HANDLER_KEYS.contains(&key.as_str()))
    {
        return Err(format!(
            "unknown key \"{}\" (known: {})",
            crate::gate::sanitise_for_terminal(unknown, 40),
            HANDLER_KEYS.join(", ")
        ));
    }
    let string = |key: &str| -> Result<Option<String>, String> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(format!("\"{key}\" must be a string")),
        }
    };
    let kind = match string("type")?.as_deref().unwrap_or("command") {
        "command" => command_kind(object, &string("command")?, string("shell")?)?,
        "http" => http_kind(object, string("url")?, layer)?,
        other => {
            return Err(format!(
                "unknown type \"{}\" (command or http)",
                crate::gate::sanitise_for_terminal(other, 40)
            ));
        }
    };
    let timeout = match object.get("timeout") {
        None | Some(Value::Null) => event.default_timeout(),
        Some(value) => {
            let seconds = value
                .as_f64()
                .filter(|seconds| *seconds > 0.0 && *seconds <= 3600.0)
                .ok_or("\"timeout\" must be a number of seconds, above 0 and at most 3600")?;
            Duration::from_secs_f64(seconds)
        }
    };
    let on_error = match string("onError")?.as_deref() {
        None | Some("ask") => OnError::Ask,
        Some("deny") => OnError::Deny,
        Some("continue") if layer == Layer::User => OnError::Continue,
        Some("continue") => {
            return Err(
                "onError \"continue\" is allowed only in your own settings (a failing hook from the project must narrow); use \"ask\" or \"deny\""
                    .into(),
            );
        }
        Some(other) => {
            return Err(format!(
                "onError \"{}\" is not ask, deny or continue",
                crate::gate::sanitise_for_terminal(other, 40)
            ));
        }
    };
    let enabled = match object.get("enabled") {
        None => true,
        Some(Value::Bool(on)) => *on,
        Some(_) => return Err("\"enabled\" must be true or false".into()),
    };
    let mut definition = HookDefinition {
        name: String::new(),
        event,
        matcher: matcher.clone(),
        kind,
        timeout,
        on_error,
        enabled,
        layer,
        file: PathBuf::new(),
        position: 0,
    };
    definition.name = match string("name")? {
        Some(name) => {
            crate::names::check_source_name(&name).map_err(|error| format!("\"name\": {error}"))?;
            name
        }
        None if layer != Layer::Project => derived_name(&definition),
        None => {
            return Err(
                "a hook in the checked-in .earshot/settings.json needs a \"name\" (its trust key: `earshot hooks trust NAME`)"
                    .into(),
            );
        }
    };
    Ok(definition)
}

/// `command` with `args` (or a command of plain words) runs without a shell; anything with shell
/// syntax and no `args`, or `"shell": "sh"`, runs under `sh -c`.
fn command_kind(
    object: &serde_json::Map<String, Value>,
    command: &Option<String>,
    shell: Option<String>,
) -> Result<HookKind, String> {
    let command = command
        .clone()
        .filter(|command| !command.trim().is_empty())
        .ok_or("a command hook needs a non-empty \"command\"")?;
    let args = match object.get("args") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|item| item.as_str().map(str::to_string))
                .collect::<Option<Vec<String>>>()
                .ok_or("\"args\" must be a list of strings")?,
        ),
        Some(_) => return Err("\"args\" must be a list of strings".into()),
    };
    match (shell.as_deref(), args) {
        (Some("sh" | "bash"), Some(_)) => {
            Err("a shell hook takes its whole script in \"command\", without \"args\"".into())
        }
        (Some(shell @ ("sh" | "bash")), None) => Ok(HookKind::Shell {
            script: command,
            shell: shell.to_string(),
        }),
        (Some(other), _) => Err(format!(
            "\"shell\" must be \"sh\" or \"bash\" (got \"{}\")",
            crate::gate::sanitise_for_terminal(other, 40)
        )),
        (None, Some(args)) => Ok(HookKind::Exec { command, args }),
        (None, None) if has_shell_syntax(&command) => Ok(HookKind::Shell {
            script: command,
            shell: "sh".into(),
        }),
        (None, None) => {
            let mut words = command.split_whitespace().map(str::to_string);
            let program = words.next().unwrap_or_default();
            Ok(HookKind::Exec {
                command: program,
                args: words.collect(),
            })
        }
    }
}

/// Whether a command string means something only to a shell (quotes, expansions, redirections,
/// pipes, globs, comments, variables).
fn has_shell_syntax(command: &str) -> bool {
    command
        .chars()
        .any(|c| "|&;<>()$`\\\"'*?[]#~{}!".contains(c) || c == '\n')
        || command
            .split_whitespace()
            .next()
            .is_some_and(|first| first.contains('='))
}

fn http_kind(
    object: &serde_json::Map<String, Value>,
    url: Option<String>,
    layer: Layer,
) -> Result<HookKind, String> {
    let url = url.ok_or("an http hook needs a \"url\"")?;
    let parsed = url::Url::parse(&url).map_err(|error| format!("\"url\": {error}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("\"url\" must be http or https".into());
    }
    let headers = match object.get("headers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(name, value)| {
                value
                    .as_str()
                    .map(|value| (name.clone(), value.to_string()))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or("\"headers\" values must be strings")?,
        Some(_) => return Err("\"headers\" must be an object of strings".into()),
    };
    let allowed_env_vars = match object.get("allowedEnvVars") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or("\"allowedEnvVars\" must be a list of names")?,
        Some(_) => return Err("\"allowedEnvVars\" must be a list of names".into()),
    };
    if !allowed_env_vars.is_empty() && layer != Layer::User {
        // The repository would choose which of the user's secrets it receives.
        return Err(
            "\"allowedEnvVars\" is allowed only in your own settings: a project's hook may not name your environment variables to send"
                .into(),
        );
    }
    Ok(HookKind::Http {
        url,
        headers,
        allowed_env_vars,
    })
}

/// A name for a user hook that gave none: what it runs and a hash of its definition, so it is
/// the same wherever the entry sits in the file.
fn derived_name(definition: &HookDefinition) -> String {
    let stem = match &definition.kind {
        HookKind::Exec { command, args } => args
            .iter()
            .rev()
            .find(|arg| arg.contains('.') || arg.contains('/'))
            .unwrap_or(command)
            .clone(),
        HookKind::Shell { script, .. } => script.split_whitespace().next().unwrap_or("sh").into(),
        HookKind::Http { url, .. } => url::Url::parse(url)
            .ok()
            .and_then(|url| url.host_str().map(str::to_string))
            .unwrap_or_else(|| "http".into()),
    };
    let stem = std::path::Path::new(&stem)
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    let stem = if stem.is_empty() { "hook".into() } else { stem };
    let hash = hex::encode(&Sha256::digest(definition.canonical_json().as_bytes())[..3]);
    format!("{stem}-{hash}")
}
