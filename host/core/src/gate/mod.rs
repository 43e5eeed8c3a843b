//! THE GATE: the one place that decides whether a tool call may run.
//!
//! Deny beats allow beats ask; the default is ask. Allow rules count only from files the user
//! owns (user settings, `.earshot/settings.local.json`); the checked-in project file can add deny
//! and ask rules only. A read-only claim skips the prompt only where it is honoured (extensions
//! and components, never MCP). The rule name and target are computed here from the tool's
//! identity; a tool supplies only the prompt's title and detail. An `Ask` goes to a
//! [`Prompter`], which can answer only that ask; a deny never reaches it.
//!
//! The host's own actions (a slash command's `` !`cmd` `` and `@path`, the model's `skill` tool)
//! are decided here too, as [`Action`]s under `Bash(…)`, `Read(…)` and `Skill(…)` rules with
//! Claude Code's matching, in the same rule lists and layers ([`Gate::authorize_action`]).
//!
//! Hooks ([`crate::hooks`]) are one more input here that can only narrow: a hook's ask raises an
//! allow to an ask ([`Gate::authorize_raised`]), a hook's block never reaches the gate at all,
//! and nothing a hook says can turn an ask or a deny into an allow.

mod actions;
mod decision;
mod display;
mod prompter;
mod reach;
mod rules;
mod shell;

pub use actions::compile_action_rule;
pub use actions::{ACTION_KEYWORDS, Action};
pub use decision::{DecidedBy, Decision, Gate, Outcome, ToolRequest};
pub use display::{sanitise_escaping_breaks, sanitise_for_terminal, strip_for_terminal};
pub use prompter::PermissionPrompt;
pub use prompter::deny_naming_the_rule;
pub use prompter::{
    NonInteractivePrompter, PromptAnswer, Prompter, TerminalPrompter, terminal_busy,
};
pub use prompter::{TerminalIo, stdio_terminal};
pub use reach::{rule_warnings, source_names, unmatchable_rules};
pub use rules::{
    Effect, Matched, OTHER_TOOL, OTHER_TOOL_KEYWORDS, Origin, Rule, RuleSet, parse_rule, shell_word,
};
