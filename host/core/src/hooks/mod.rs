//! HOOKS: commands (or HTTP endpoints) that run on the session's events and can deny, ask or add
//! context, and never allow.
//!
//! Configured under `hooks` in every settings layer, in Claude Code's shape. The host fires the
//! tool events (`PreToolUse`, `PostToolUse`, `PostToolUseFailure`, `PermissionAsked`) on every
//! `earshot_host::Host::call`, whoever calls, and `SessionStart`/`SessionEnd`; the embedder
//! fires the agent loop's events (`UserPromptSubmit`, `Stop`, ...) through
//! `earshot_host::Host::fire_hook`.
//!
//! What a hook says only narrows: a deny blocks the call, an ask raises it to at least an ask
//! (a deny when no one can be asked), an `allow` is read as no decision. A failing hook narrows
//! too (`onError`, `ask` by default). The gate still decides; a hook is one more input to it.
//!
//! * `config` — reading `hooks` from the settings layers into definitions.
//! * `matcher` — which tools a handler fires for, in the gate's rule syntax.
//! * `admission` — which definitions may run: project and local hooks only with a trust record
//!   for their digest (definition and the project files it names); the user's hook set checked
//!   for changes made outside earshot.
//! * `process` — running one command hook (own process group, no TTY, capped output, timeout).
//! * `http` — running one HTTP hook.
//! * `output` — reading what a hook answered, fail-closed.
//! * `engine` — firing an event: matching, running, chaining rewrites, combining answers.

mod admission;
mod config;
pub(crate) mod definition_text;
mod engine;
mod http;
mod last_result;
mod matcher;
mod output;
pub mod process;
#[cfg(target_os = "linux")]
mod reaper;

pub use admission::{
    HookTrustError, current_hook_digest, review_user_hooks, trust_hook, untrust_hook,
};
pub use admission::{admitted_hook_digest, hook_admission, user_hooks_held};
pub use config::{HeldHook, HookDefinition, HookEvent, HookKind, HookSet, OnError};
pub use engine::{EnvLookup, HookEngine, MAX_STOP_BLOCKS, PreToolUse};
pub use engine::{HookAsk, HookedCall};
pub use last_result::{last_results, result_key};
pub use matcher::{HookMatcher, HookTool};

/// The most characters of a hook's context, reason or message that reach anyone.
pub const MESSAGE_CAP: usize = 10_000;

/// One thing a hook said, labelled with the hook that said it. What the embedder gets back from
/// an event it fires; the host applies the same outcomes itself on the tool events.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum HookOutcome {
    /// A hook blocked the action (a `deny`, `decision: "block"`, `continue: false` or exit
    /// code 2), or failed with `onError: "deny"`.
    Blocked {
        /// The hook's name.
        hook: String,
        /// Why, sanitised.
        reason: String,
    },
    /// A hook asked for the user's approval (`permissionDecision: "ask"`), or failed with
    /// `onError: "ask"`: the action needs a person's yes.
    Asked {
        /// The hook's name.
        hook: String,
        /// Why, sanitised.
        reason: String,
    },
    /// Context for the model (`additionalContext`), sanitised and capped.
    Context {
        /// The hook's name.
        hook: String,
        /// The text.
        text: String,
    },
    /// The prompt to send instead of the user's (`updatedPrompt`, `UserPromptSubmit` only).
    UpdatedPrompt {
        /// The hook's name (the last in the chain).
        hook: String,
        /// The new prompt.
        prompt: String,
    },
    /// A message for the user (`systemMessage`, or a notice about the hook itself).
    Message {
        /// The hook's name.
        hook: String,
        /// The text, sanitised.
        text: String,
    },
    /// The hook failed (crash, exit code, unparsable output, timeout, missing program), one line.
    Failed {
        /// The hook's name.
        hook: String,
        /// What happened and how its stderr ended.
        message: String,
    },
}

/// Everything the hooks of one event said, in the fixed order they are declared in (user,
/// project, local, then as written).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct HookReport {
    /// Each outcome.
    pub outcomes: Vec<HookOutcome>,
}

impl HookReport {
    /// The first block, when a hook blocked: `(hook, reason)`.
    pub fn blocked(&self) -> Option<(&str, &str)> {
        self.outcomes.iter().find_map(|outcome| match outcome {
            HookOutcome::Blocked { hook, reason } => Some((hook.as_str(), reason.as_str())),
            _ => None,
        })
    }

    /// The first ask, when a hook asked (and none blocked): `(hook, reason)`.
    pub fn asked(&self) -> Option<(&str, &str)> {
        self.outcomes.iter().find_map(|outcome| match outcome {
            HookOutcome::Asked { hook, reason } => Some((hook.as_str(), reason.as_str())),
            _ => None,
        })
    }

    /// The prompt to send instead, when a `UserPromptSubmit` hook replaced it.
    pub fn updated_prompt(&self) -> Option<&str> {
        self.outcomes
            .iter()
            .rev()
            .find_map(|outcome| match outcome {
                HookOutcome::UpdatedPrompt { prompt, .. } => Some(prompt.as_str()),
                _ => None,
            })
    }

    /// Every context a hook added, each wrapped as `<hook-context source="NAME">…</hook-context>`
    /// so the model reads it as data from that hook; empty when none.
    pub fn context_for_model(&self) -> String {
        self.outcomes
            .iter()
            .filter_map(|outcome| match outcome {
                HookOutcome::Context { hook, text } => Some(format!(
                    "<hook-context source=\"{hook}\">\n{}\n</hook-context>",
                    without_labels(text)
                )),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The lines for the user: messages and failures, each naming its hook.
    pub fn lines_for_user(&self) -> Vec<String> {
        self.outcomes
            .iter()
            .filter_map(|outcome| match outcome {
                HookOutcome::Message { hook, text } => Some(format!("hook \"{hook}\": {text}")),
                HookOutcome::Failed { message, .. } => Some(message.clone()),
                _ => None,
            })
            .collect()
    }
}

/// `text` with every `<hook-context` and `</hook-context` written as `&lt;…`, so a hook cannot
/// close its own label and open one in another hook's name.
pub fn without_labels(text: &str) -> String {
    let lowered = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (at, _) in lowered.match_indices('<') {
        let rest = &lowered[at..];
        if rest.starts_with("<hook-context") || rest.starts_with("</hook-context") {
            out.push_str(&text[last..at]);
            out.push_str("&lt;");
            last = at + 1;
        }
    }
    out.push_str(&text[last..]);
    out
}

/// `text` stripped of control characters and escape sequences (newlines and tabs kept) and cut
/// to [`MESSAGE_CAP`] characters: what any hook-written text becomes before anyone sees it.
pub fn sanitised(text: &str) -> String {
    let stripped = crate::gate::strip_for_terminal(text);
    if stripped.chars().count() <= MESSAGE_CAP {
        return stripped;
    }
    let mut cut: String = stripped.chars().take(MESSAGE_CAP).collect();
    cut.push('…');
    cut
}
