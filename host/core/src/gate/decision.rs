//! The decision itself.

use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use crate::names::{SourceKind, ToolId};
use crate::settings::{Layer, Settings};
use crate::trust::{RuleFile, write_rule};

use super::actions::Action;
use super::display::sanitise_for_terminal;
use super::prompter::{PermissionPrompt, PromptAnswer, Prompter};
use super::rules::{Effect, Rule, RuleSet};

/// The most characters of a tool-supplied title shown.
const TITLE_CAP: usize = 120;
/// The most characters of a tool-supplied detail shown.
const DETAIL_CAP: usize = 1_000;

/// A request to run one tool, as dispatch hands it to the gate.
#[derive(Debug, Clone)]
pub struct ToolRequest<'a> {
    /// Which tool. The rule name and target are computed from this, never taken from the tool.
    pub tool: &'a ToolId,
    /// The source's read-only claim. Honoured for extensions and components, ignored for MCP.
    pub read_only: bool,
    /// A title the tool supplied for the prompt (sanitised before display).
    pub title: Option<&'a str>,
    /// A detail the tool supplied for the prompt (sanitised before display).
    pub detail: Option<&'a str>,
}

/// What decided.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "by", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum DecidedBy {
    /// A rule in a settings file.
    Rule {
        /// The rule as written.
        rule: String,
        /// Its layer.
        layer: Layer,
        /// Its file.
        file: PathBuf,
    },
    /// The tool is read-only and its source's claim is honoured; or, for the host's own action,
    /// no rule matched and the action only reads (a slash command's `@file` inside the project,
    /// a skill's text), so the default is to allow.
    ReadOnly,
    /// No rule matched: the default is to ask.
    Default,
    /// No rule matched and the action would be allowed by default (a read-only tool, a read, a
    /// skill), but a settings file does not parse or has a misspelt key (or a deny or ask rule
    /// is malformed): a deny rule it held might have refused this, so it asks (a deny when no one
    /// can be asked) until the file is fixed. A typo never widens access.
    Suspended,
}

/// The gate's answer before any prompt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Decision {
    /// Allow, deny or ask.
    pub effect: Effect,
    /// What decided it.
    pub decided_by: DecidedBy,
    /// The rule that names exactly this tool, e.g. `Mcp(github__create_issue)`.
    pub rule_name: String,
}

/// The final word on a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Run it.
    Allowed,
    /// Do not run it; the string says why and what to do.
    Denied(String),
}

/// What decided a call, as [`Gate::verdict`] finds it (the borrowed form of [`DecidedBy`]).
#[derive(Debug, Clone, Copy)]
enum Why<'a> {
    /// A rule in a settings file.
    Rule(&'a Rule),
    /// The tool is read-only and its source's claim is honoured, or the host's own action only
    /// reads.
    ReadOnly,
    /// No rule matched: the default is to ask.
    Default,
    /// No rule matched; the default would allow, but the rules are not all readable.
    Suspended,
}

impl Why<'_> {
    fn decided_by(self) -> DecidedBy {
        match self {
            Why::Rule(rule) => DecidedBy::Rule {
                rule: rule.text.clone(),
                layer: rule.origin.layer,
                file: rule.origin.path.clone(),
            },
            Why::ReadOnly => DecidedBy::ReadOnly,
            Why::Default => DecidedBy::Default,
            Why::Suspended => DecidedBy::Suspended,
        }
    }
}

/// The permission gate over one set of rules.
#[derive(Debug, Clone)]
pub struct Gate {
    rules: RuleSet,
    /// The settings an "always for this project" answer is recorded in (signed, in the project's
    /// local file); `None` when nothing is recorded.
    always: Option<Box<Settings>>,
    /// Rules answered "always" in this session: a later ask for the same rule is not asked again
    /// (a deny rule still wins: only an ask is ever turned into an allow by it).
    answered_always: Arc<Mutex<BTreeSet<String>>>,
}

impl Gate {
    /// A gate over `rules` that records nothing: an "always" answer allows that call only.
    pub fn new(rules: RuleSet) -> Gate {
        Gate {
            rules,
            always: None,
            answered_always: Arc::default(),
        }
    }

    /// The gate over every layer of `settings`. "Always for this project" answers go, signed, to
    /// the project's local settings file, unless that file was refused (a link, not the user's),
    /// in which case nothing is written.
    pub fn from_settings(settings: &Settings) -> Gate {
        let records = settings.project.is_some() && !settings.local_file_refused();
        Gate {
            rules: RuleSet::from_settings(settings),
            always: records.then(|| Box::new(settings.clone())),
            answered_always: Arc::default(),
        }
    }

    fn local_settings(&self) -> Option<PathBuf> {
        self.always
            .as_ref()
            .and_then(|settings| settings.project.as_ref())
            .map(|project| project.local_settings())
    }

    /// The rules in force.
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    /// Decides `request` without prompting: deny beats allow beats ask; then an honoured
    /// read-only claim allows; otherwise ask.
    pub fn decide(&self, request: &ToolRequest<'_>) -> Decision {
        let (effect, why) = self.verdict(request);
        Decision {
            effect,
            decided_by: why.decided_by(),
            rule_name: request.tool.rule(),
        }
    }

    /// Decides one of the host's own actions without prompting: deny beats allow beats ask, under
    /// `Bash(…)`, `Read(…)` and `Skill(…)` rules (see [`Action`] for their matching); with no
    /// rule matching, a command asks and a read or a skill is allowed.
    pub fn decide_action(&self, action: &Action<'_>) -> Decision {
        let (effect, why) = self.action_verdict(action);
        Decision {
            effect,
            decided_by: why.decided_by(),
            rule_name: action.rule(),
        }
    }

    fn action_verdict(&self, action: &Action<'_>) -> (Effect, Why<'_>) {
        if let Some(matched) = self.rules.deciding_action_rule(action) {
            return (matched.rule.effect, Why::Rule(matched.rule));
        }
        match action.default_effect() {
            Effect::Ask => (Effect::Ask, Why::Default),
            // What a default allows, an unreadable deny rule might have refused.
            Effect::Allow if self.rules.suspension().is_some() => (Effect::Ask, Why::Suspended),
            effect => (effect, Why::ReadOnly),
        }
    }

    /// Decides one of the host's own actions (a slash command's `` !`cmd` `` or `@path`, the
    /// model loading a skill), asking `prompter` only if the decision is `Ask`, with `title` and
    /// `detail` (sanitised) in the prompt. The default when no rule matches: a command
    /// ([`Action::Bash`]) asks; a read ([`Action::Read`], inside the project, named by a command
    /// the user trusts, as Claude Code's reads are) and a skill ([`Action::Skill`], which only
    /// adds text) are allowed. An "always for this project" answer writes the action's exact rule
    /// to `.earshot/settings.local.json`, signed, when it has one ([`Action::exact_rule`]);
    /// otherwise (a command holding `*`) it allows this call only.
    pub async fn authorize_action(
        &self,
        action: &Action<'_>,
        title: &str,
        detail: &str,
        prompter: &dyn Prompter,
    ) -> Outcome {
        let (effect, why) = self.action_verdict(action);
        match effect {
            Effect::Allow => Outcome::Allowed,
            Effect::Deny => Outcome::Denied(match why {
                Why::Rule(rule) => format!(
                    "{} is denied by the rule \"{}\" in {}",
                    sanitise_for_terminal(&action.rule(), DETAIL_CAP),
                    rule.text,
                    rule.origin.path.display()
                ),
                Why::ReadOnly | Why::Default | Why::Suspended => format!(
                    "{} is denied",
                    sanitise_for_terminal(&action.rule(), DETAIL_CAP)
                ),
            }),
            Effect::Ask => {
                let exact = action.exact_rule().is_some();
                let rule_name = action.rule();
                if exact && self.answered_always(&rule_name) {
                    return Outcome::Allowed;
                }
                let (title, detail) = if prompter.shows_prompt_text() {
                    (title, detail)
                } else {
                    ("", "")
                };
                let prompt = PermissionPrompt {
                    rule_name,
                    target: action.target().to_string(),
                    title: sanitise_for_terminal(title, TITLE_CAP),
                    detail: sanitise_for_terminal(detail, DETAIL_CAP),
                    local_settings: if exact { self.local_settings() } else { None },
                    rule_is_exact: exact,
                    allow_rules_suspended: self.rules.suspension().map(str::to_string),
                };
                self.ask(prompt, prompter).await
            }
        }
    }

    /// Whether `rule_name` was answered "always" in this session.
    fn answered_always(&self, rule_name: &str) -> bool {
        self.answered_always.lock().contains(rule_name)
    }

    /// Asks `prompter`; an "always for this project" answer to a prompt whose rule is exact is
    /// remembered for the session and written, signed, to the project's local file.
    async fn ask(&self, prompt: PermissionPrompt, prompter: &dyn Prompter) -> Outcome {
        match prompter.ask(&prompt).await {
            PromptAnswer::AllowOnce => Outcome::Allowed,
            PromptAnswer::AllowAlwaysForProject if !prompt.rule_is_exact => Outcome::Allowed,
            PromptAnswer::AllowAlwaysForProject => {
                let rule_name = prompt.rule_name;
                self.answered_always.lock().insert(rule_name.clone());
                if let Some(settings) = &self.always
                    && let Err(error) =
                        write_rule(settings, Effect::Allow.key(), &rule_name, RuleFile::Local)
                {
                    tracing::warn!(%error, "could not record the allow rule; allowing this call only");
                }
                Outcome::Allowed
            }
            PromptAnswer::Deny(reason) => Outcome::Denied(reason),
        }
    }

    /// [`Gate::decide`]'s effect and what decided it, without building its explanation: every
    /// call goes through here, and an allowed call needs nothing more.
    fn verdict(&self, request: &ToolRequest<'_>) -> (Effect, Why<'_>) {
        let kind = request.tool.kind();
        if let Some(matched) = self.rules.deciding_rule(kind, &request.tool.namespaced()) {
            return (matched.rule.effect, Why::Rule(matched.rule));
        }
        if request.read_only && kind != SourceKind::Mcp {
            // What the read-only default allows, an unreadable deny rule might have refused.
            if self.rules.suspension().is_some() {
                return (Effect::Ask, Why::Suspended);
            }
            (Effect::Allow, Why::ReadOnly)
        } else {
            (Effect::Ask, Why::Default)
        }
    }

    /// What [`Gate::authorize`] would do with `request` now, before any prompt: as
    /// [`Gate::decide`], except that an `Ask` already answered "always" in this session is an
    /// `Allow`. For a consumer that orders its own notifications around the ask (the ACP agent);
    /// it decides nothing.
    pub fn effect_now(&self, request: &ToolRequest<'_>) -> Effect {
        let decision = self.decide(request);
        match decision.effect {
            Effect::Ask if self.answered_always(&decision.rule_name) => Effect::Allow,
            effect => effect,
        }
    }

    /// Decides `request`, asking `prompter` only if the decision is `Ask`. An "always for this
    /// project" answer writes the allow rule to `.earshot/settings.local.json`.
    pub async fn authorize(&self, request: &ToolRequest<'_>, prompter: &dyn Prompter) -> Outcome {
        let text = (
            request.title.unwrap_or_default().to_string(),
            request.detail.unwrap_or_default().to_string(),
        );
        self.authorize_with(request, || std::future::ready(text), prompter)
            .await
    }

    /// As [`Gate::authorize`], with the prompt's title and detail computed by `prompt_text` only
    /// when the gate is going to ask a prompter that shows them (an extension's `describe` runs
    /// then, and never otherwise: not for a rule's verdict, and not when no one will see its
    /// text); the request's own `title` and `detail` are not used.
    pub async fn authorize_with<Text>(
        &self,
        request: &ToolRequest<'_>,
        prompt_text: impl FnOnce() -> Text,
        prompter: &dyn Prompter,
    ) -> Outcome
    where
        Text: std::future::Future<Output = (String, String)>,
    {
        self.authorize_raised(request, prompt_text, prompter, false)
            .await
    }

    /// Asks `prompter` about a call of one of the host's own tools (`tool_search`, listing
    /// resources) that a hook asked approval for: those have no rule of their own, so only this
    /// ask stands between the hook's ask and the call. An "always" answer runs this call only:
    /// there is no rule to record.
    pub async fn ask_for_hook(
        &self,
        target: &str,
        detail: &str,
        prompter: &dyn Prompter,
    ) -> Outcome {
        let prompt = PermissionPrompt {
            rule_name: target.to_string(),
            target: target.to_string(),
            title: String::new(),
            detail: sanitise_for_terminal(detail, DETAIL_CAP),
            local_settings: None,
            rule_is_exact: true,
            allow_rules_suspended: None,
        };
        match prompter.ask(&prompt).await {
            PromptAnswer::AllowOnce | PromptAnswer::AllowAlwaysForProject => Outcome::Allowed,
            PromptAnswer::Deny(reason) => Outcome::Denied(reason),
        }
    }

    /// As [`Gate::authorize_with`]; when `raised` (a hook asked for approval) an `Allow` becomes
    /// an `Ask` and an earlier "always" answer does not skip it. A deny stays a deny: nothing
    /// here can widen what the rules say.
    pub async fn authorize_raised<Text>(
        &self,
        request: &ToolRequest<'_>,
        prompt_text: impl FnOnce() -> Text,
        prompter: &dyn Prompter,
        raised: bool,
    ) -> Outcome
    where
        Text: std::future::Future<Output = (String, String)>,
    {
        let (effect, why) = self.verdict(request);
        let effect = match effect {
            Effect::Allow if raised => Effect::Ask,
            effect => effect,
        };
        match effect {
            Effect::Allow => Outcome::Allowed,
            Effect::Deny => Outcome::Denied(match why {
                Why::Rule(rule) => format!(
                    "{} is denied by the rule \"{}\" in {}",
                    request.tool,
                    rule.text,
                    rule.origin.path.display()
                ),
                Why::ReadOnly | Why::Default | Why::Suspended => {
                    format!("{} is denied", request.tool)
                }
            }),
            Effect::Ask => {
                let rule_name = request.tool.rule();
                if !raised && self.answered_always(&rule_name) {
                    return Outcome::Allowed;
                }
                let (title, detail) = if prompter.shows_prompt_text() {
                    prompt_text().await
                } else {
                    (String::new(), String::new())
                };
                let prompt = PermissionPrompt {
                    rule_name,
                    target: request.tool.namespaced(),
                    title: sanitise_for_terminal(&title, TITLE_CAP),
                    detail: sanitise_for_terminal(&detail, DETAIL_CAP),
                    local_settings: self.local_settings(),
                    rule_is_exact: true,
                    allow_rules_suspended: self.rules.suspension().map(str::to_string),
                };
                self.ask(prompt, prompter).await
            }
        }
    }
}
