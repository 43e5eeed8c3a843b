//! The decision itself.

use std::path::PathBuf;

use crate::names::{SourceKind, ToolId};
use crate::settings::{Layer, edit_settings};

use super::display::sanitise_for_terminal;
use super::prompter::{PromptAnswer, Prompter};
use super::rules::{Effect, RuleSet};

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
    /// The tool is read-only and its source's claim is honoured.
    ReadOnly,
    /// No rule matched: the default is to ask.
    Default,
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

/// A question for the user, built only by the gate, for an `Ask` only.
#[derive(Debug, Clone)]
pub struct PermissionPrompt {
    rule_name: String,
    target: String,
    title: String,
    detail: String,
    local_settings: Option<PathBuf>,
}

impl PermissionPrompt {
    /// The rule that would allow exactly this tool (computed by the host).
    pub fn rule_name(&self) -> &str {
        &self.rule_name
    }
    /// The namespaced tool name (computed by the host).
    pub fn target(&self) -> &str {
        &self.target
    }
    /// The tool's title, sanitised and capped (empty when none).
    pub fn title(&self) -> &str {
        &self.title
    }
    /// The tool's detail, sanitised and capped (empty when none).
    pub fn detail(&self) -> &str {
        &self.detail
    }
    /// Where "always for this project" would write the allow rule, when there is a project.
    pub fn local_settings(&self) -> Option<&std::path::Path> {
        self.local_settings.as_deref()
    }
}

/// The final word on a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Run it.
    Allowed,
    /// Do not run it; the string says why and what to do.
    Denied(String),
}

/// The permission gate over one set of rules.
#[derive(Debug, Clone)]
pub struct Gate {
    rules: RuleSet,
    local_settings: Option<PathBuf>,
}

impl Gate {
    /// A gate over `rules`. `local_settings` is the project's `.earshot/settings.local.json`,
    /// where an "always for this project" answer is recorded.
    pub fn new(rules: RuleSet, local_settings: Option<PathBuf>) -> Gate {
        Gate {
            rules,
            local_settings,
        }
    }

    /// The gate over every layer of `settings`. "Always for this project" answers go to the
    /// project's local settings file, unless that file was refused (tracked by git, a link, not
    /// the user's), in which case nothing is written.
    pub fn from_settings(settings: &crate::settings::Settings) -> Gate {
        let local = if settings.local_file_refused() {
            None
        } else {
            settings
                .project
                .as_ref()
                .map(|project| project.local_settings())
        };
        Gate::new(RuleSet::from_settings(settings), local)
    }

    /// The rules in force.
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    /// Decides `request` without prompting: deny beats allow beats ask; then an honoured
    /// read-only claim allows; otherwise ask.
    pub fn decide(&self, request: &ToolRequest<'_>) -> Decision {
        let kind = request.tool.kind();
        let name = request.tool.namespaced();
        let rule_name = request.tool.rule();
        for effect in [Effect::Deny, Effect::Allow, Effect::Ask] {
            if let Some(matched) = self.rules.first_match(effect, kind, &name) {
                return Decision {
                    effect,
                    decided_by: DecidedBy::Rule {
                        rule: matched.rule.text.clone(),
                        layer: matched.rule.origin.layer,
                        file: matched.rule.origin.path.clone(),
                    },
                    rule_name,
                };
            }
        }
        let read_only_honoured = request.read_only && kind != SourceKind::Mcp;
        Decision {
            effect: if read_only_honoured {
                Effect::Allow
            } else {
                Effect::Ask
            },
            decided_by: if read_only_honoured {
                DecidedBy::ReadOnly
            } else {
                DecidedBy::Default
            },
            rule_name,
        }
    }

    /// Decides `request`, asking `prompter` only if the decision is `Ask`. An "always for this
    /// project" answer writes the allow rule to `.earshot/settings.local.json`.
    pub fn authorize(&self, request: &ToolRequest<'_>, prompter: &dyn Prompter) -> Outcome {
        self.authorize_with(
            request,
            || {
                (
                    request.title.unwrap_or_default().to_string(),
                    request.detail.unwrap_or_default().to_string(),
                )
            },
            prompter,
        )
    }

    /// As [`Gate::authorize`], with the prompt's title and detail computed by `prompt_text` only
    /// when the gate is going to ask (an extension's `describe` runs then, and never otherwise);
    /// the request's own `title` and `detail` are not used.
    pub fn authorize_with(
        &self,
        request: &ToolRequest<'_>,
        prompt_text: impl FnOnce() -> (String, String),
        prompter: &dyn Prompter,
    ) -> Outcome {
        let decision = self.decide(request);
        match decision.effect {
            Effect::Allow => Outcome::Allowed,
            Effect::Deny => Outcome::Denied(match &decision.decided_by {
                DecidedBy::Rule { rule, file, .. } => {
                    format!(
                        "{} is denied by the rule \"{rule}\" in {}",
                        request.tool,
                        file.display()
                    )
                }
                _ => format!("{} is denied", request.tool),
            }),
            Effect::Ask => {
                let (title, detail) = prompt_text();
                let prompt = PermissionPrompt {
                    rule_name: decision.rule_name.clone(),
                    target: request.tool.namespaced(),
                    title: sanitise_for_terminal(&title, TITLE_CAP),
                    detail: sanitise_for_terminal(&detail, DETAIL_CAP),
                    local_settings: self.local_settings.clone(),
                };
                match prompter.ask(&prompt) {
                    PromptAnswer::AllowOnce => Outcome::Allowed,
                    PromptAnswer::AllowAlwaysForProject => match &self.local_settings {
                        Some(path) => match remember_allow(path, &decision.rule_name) {
                            Ok(()) => Outcome::Allowed,
                            Err(error) => {
                                tracing::warn!(%error, "could not record the allow rule; allowing this call only");
                                Outcome::Allowed
                            }
                        },
                        None => Outcome::Allowed,
                    },
                    PromptAnswer::Deny(reason) => Outcome::Denied(reason),
                }
            }
        }
    }
}

/// Appends `rule` to `permissions.allow` in the local settings file (once).
fn remember_allow(path: &std::path::Path, rule: &str) -> Result<(), crate::settings::EditError> {
    let mut shape_ok = true;
    edit_settings(path, |settings| {
        let root = settings
            .as_object_mut()
            .expect("settings files hold objects");
        let permissions = root
            .entry("permissions")
            .or_insert_with(|| serde_json::json!({}));
        // A `permissions` or `allow` of another type is the user's to fix; it is never replaced.
        let Some(permissions) = permissions.as_object_mut() else {
            shape_ok = false;
            return;
        };
        let allow = permissions
            .entry("allow")
            .or_insert_with(|| serde_json::json!([]));
        let Some(list) = allow.as_array_mut() else {
            shape_ok = false;
            return;
        };
        if !list.iter().any(|existing| existing.as_str() == Some(rule)) {
            list.push(serde_json::Value::String(rule.to_string()));
        }
    })?;
    if shape_ok {
        Ok(())
    } else {
        Err(crate::settings::EditError::Io {
            path: path.to_path_buf(),
            reason: "permissions.allow there is not a list, so the rule was not added".into(),
        })
    }
}
