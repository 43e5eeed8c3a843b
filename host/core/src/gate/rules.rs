//! Permission rules: `Mcp(glob)`, `Extension(glob)`, `Plugin(glob)` under `permissions.allow`,
//! `permissions.deny` and `permissions.ask`, read from every settings layer; and `Bash(…)`,
//! `Read(…)`, `Skill(…)` for what the host itself does (see `gate/actions.rs`).

use std::path::PathBuf;

use globset::{Candidate, Glob, GlobSet, GlobSetBuilder};
use serde_json::Value;

use crate::names::SourceKind;
use crate::settings::{Layer, Settings};
use crate::trust::{allow_rule_signed, user_key};

use super::actions::{
    Action, ActionPattern, BashPattern, compile_action_rule, narrowing_candidates,
};
use super::shell;

/// What a rule does when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Refuse the call.
    Deny,
    /// Run the call without asking.
    Allow,
    /// Ask the user.
    Ask,
}

impl Effect {
    /// `allow`, `deny` or `ask`, as written under `permissions`.
    pub fn key(self) -> &'static str {
        match self {
            Effect::Deny => "deny",
            Effect::Allow => "allow",
            Effect::Ask => "ask",
        }
    }
}

/// Where a rule was written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Origin {
    /// The settings layer.
    pub layer: Layer,
    /// The file.
    pub path: PathBuf,
}

/// One rule as written, and whether it is in force.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Rule {
    /// The rule exactly as written, e.g. `Mcp(github__*)`.
    pub text: String,
    /// Allow, deny or ask.
    pub effect: Effect,
    /// The source kind it applies to (`None` when malformed).
    pub kind: Option<SourceKind>,
    /// Where it was written.
    pub origin: Origin,
    /// Why it is not in force, when it is not.
    pub not_in_force: Option<String>,
}

/// The rules of every layer, compiled for matching.
#[derive(Debug, Clone)]
pub struct RuleSet {
    rules: Vec<Rule>,
    /// For each effect and kind, the set of globs in force and the rule index of each.
    matchers: Vec<Matcher>,
    /// The `Bash(…)`, `Read(…)` and `Skill(…)` rules in force, in the order read.
    actions: Vec<ActionMatcher>,
    /// Set when a deny or ask rule is malformed: allow rules are suspended, because a rule we
    /// cannot read might have denied what an allow rule would let through.
    allow_suspended_by: Option<usize>,
    /// Why allow rules are suspended, when they are (a malformed deny or ask rule, or a settings
    /// file that does not parse or has a misspelt key).
    suspension: Option<String>,
}

#[derive(Debug, Clone)]
struct Matcher {
    effect: Effect,
    kind: SourceKind,
    globs: GlobSet,
    rule_indices: Vec<usize>,
}

/// One `Bash(…)`, `Read(…)` or `Skill(…)` rule in force, compiled.
#[derive(Debug, Clone)]
struct ActionMatcher {
    effect: Effect,
    rule_index: usize,
    pattern: ActionPattern,
}

/// A rule that matched, for the decision's explanation.
#[derive(Debug, Clone, Copy)]
pub struct Matched<'a> {
    /// The rule.
    pub rule: &'a Rule,
}

impl RuleSet {
    /// Reads `permissions` from every loaded settings file. An allow rule in the project's local
    /// file counts only when earshot wrote it for this user (its signature in `trust.allow`
    /// verifies under the user's key for this project); any other is listed as "not written by
    /// you". A settings file that does not parse or has a misspelt key suspends every allow rule.
    pub fn from_settings(settings: &Settings) -> RuleSet {
        let key = user_key(settings);
        let mut rules = Vec::new();
        for file in &settings.files {
            let Some(permissions) = file.get("permissions") else {
                continue;
            };
            let origin = Origin {
                layer: file.layer,
                path: file.path.clone(),
            };
            for effect in [Effect::Deny, Effect::Allow, Effect::Ask] {
                read_effect(permissions, effect, &origin, &mut rules);
            }
        }
        for rule in rules.iter_mut().filter(|rule| {
            rule.effect == Effect::Allow
                && rule.origin.layer == Layer::Local
                && rule.not_in_force.is_none()
        }) {
            if !allow_rule_signed(settings, key.as_ref(), &rule.text) {
                rule.not_in_force = Some(format!(
                    "not written by you: an allow rule in the local file counts only when earshot wrote it (a download or submodule can ship this file); review it, then run `earshot permissions allow {}`",
                    shell_word(&rule.text)
                ));
            }
        }
        let mut set = RuleSet::from_rules(rules);
        if set.suspension.is_none()
            && let Some(problem) = settings.allow_rules_suspended_by()
        {
            set.suspend_allow_rules(format!(
                "suspended: a settings file does not parse or has a misspelt key ({problem})"
            ));
        }
        set
    }

    fn suspend_allow_rules(&mut self, why: String) {
        for rule in self
            .rules
            .iter_mut()
            .filter(|rule| rule.effect == Effect::Allow && rule.not_in_force.is_none())
        {
            rule.not_in_force = Some(why.clone());
        }
        self.suspension = Some(why);
    }

    /// Compiles a list of rules (already marked in force or not).
    pub fn from_rules(mut rules: Vec<Rule>) -> RuleSet {
        let mut builders: Vec<(Effect, SourceKind, GlobSetBuilder, Vec<usize>)> = Vec::new();
        for effect in [Effect::Deny, Effect::Allow, Effect::Ask] {
            for kind in [SourceKind::Mcp, SourceKind::Extension, SourceKind::Plugin] {
                builders.push((effect, kind, GlobSetBuilder::new(), Vec::new()));
            }
        }
        let mut actions = Vec::new();
        for (index, rule) in rules.iter_mut().enumerate() {
            if rule.not_in_force.is_some() {
                continue;
            }
            if let Some(compiled) = compile_action_rule(&rule.text) {
                match compiled {
                    Ok(pattern) => actions.push(ActionMatcher {
                        effect: rule.effect,
                        rule_index: index,
                        pattern,
                    }),
                    Err(why) => rule.not_in_force = Some(format!("malformed: {why}")),
                }
                continue;
            }
            let Some((kind, pattern)) = parse_rule(&rule.text).ok() else {
                continue;
            };
            match Glob::new(pattern) {
                Ok(glob) => {
                    let slot = builders
                        .iter_mut()
                        .find(|(effect, k, _, _)| *effect == rule.effect && *k == kind)
                        .expect("every effect and kind has a builder");
                    slot.2.add(glob);
                    slot.3.push(index);
                }
                Err(error) => rule.not_in_force = Some(format!("malformed: {}", error.kind())),
            }
        }
        let matchers = builders
            .into_iter()
            .filter(|(_, _, _, indices)| !indices.is_empty())
            .map(|(effect, kind, builder, rule_indices)| Matcher {
                effect,
                kind,
                globs: builder
                    .build()
                    .expect("globs that compiled one by one compile as a set"),
                rule_indices,
            })
            .collect();
        let allow_suspended_by = rules.iter().position(|rule| {
            rule.effect != Effect::Allow
                && rule
                    .not_in_force
                    .as_deref()
                    .is_some_and(|why| why.starts_with("malformed"))
        });
        let mut set = RuleSet {
            rules,
            matchers,
            actions,
            allow_suspended_by,
            suspension: None,
        };
        if let Some(index) = allow_suspended_by {
            let rule = &set.rules[index];
            let why = format!(
                "suspended while the {} rule \"{}\" in {} is malformed (it might have denied this)",
                rule.effect.key(),
                crate::gate::sanitise_for_terminal(&rule.text, 200),
                rule.origin.path.display()
            );
            set.suspend_allow_rules(why);
        }
        set
    }

    /// Every rule, in force or not, in the order read.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The malformed deny or ask rule that suspends all allow rules, if any.
    pub fn allow_suspended_by(&self) -> Option<&Rule> {
        self.allow_suspended_by.map(|index| &self.rules[index])
    }

    /// Why every allow rule is suspended, if it is: one line naming the malformed rule or the
    /// settings file that does not parse or has a misspelt key.
    pub fn suspension(&self) -> Option<&str> {
        self.suspension.as_deref()
    }

    /// The rule that decides `name` of `kind`: the first deny rule that matches, else the first
    /// allow rule, else the first ask rule; `None` when no rule in force matches. Every call goes
    /// through this, so the name is prepared for matching once and one list of hits is reused.
    pub fn deciding_rule(&self, kind: SourceKind, name: &str) -> Option<Matched<'_>> {
        let candidate = Candidate::new(name);
        let mut hits = Vec::new();
        [Effect::Deny, Effect::Allow, Effect::Ask]
            .into_iter()
            .find_map(|effect| self.first_match_of(effect, kind, &candidate, &mut hits))
    }

    /// The rule that decides `action`, in the same order as [`RuleSet::deciding_rule`]: the first
    /// deny rule that matches, else an allow rule, else the first ask rule; `None` when no rule in
    /// force matches. For a command line a deny or ask rule matches when it matches the line or
    /// any command in it, and allow rules apply only when they cover every command of a plain
    /// line (see `gate/actions.rs`); the allow rule named is the one covering its first command.
    pub fn deciding_action_rule(&self, action: &Action<'_>) -> Option<Matched<'_>> {
        let keyword = action.keyword();
        let of = |effect: Effect| {
            self.actions
                .iter()
                .filter(move |m| m.effect == effect && m.pattern.keyword() == keyword)
        };
        let allow_applies = self.suspension.is_none();
        let found = match action {
            Action::Bash(command) => {
                let split = shell::split(command);
                let candidates = narrowing_candidates(command, &split);
                let narrows = |m: &&ActionMatcher| {
                    bash_pattern(m).is_some_and(|pattern| {
                        candidates
                            .iter()
                            .any(|candidate| pattern.matches(candidate))
                    })
                };
                of(Effect::Deny)
                    .find(narrows)
                    .or_else(|| {
                        allow_applies
                            .then(|| allowing_rule(command, &split, of(Effect::Allow)))
                            .flatten()
                    })
                    .or_else(|| of(Effect::Ask).find(narrows))
            }
            Action::Read(_) | Action::Skill(_) => {
                let matches = |m: &&ActionMatcher| m.pattern.matches(action);
                let allows = |m: &&ActionMatcher| m.pattern.allows(action);
                of(Effect::Deny)
                    .find(matches)
                    .or_else(|| {
                        allow_applies
                            .then(|| of(Effect::Allow).find(allows))
                            .flatten()
                    })
                    .or_else(|| of(Effect::Ask).find(matches))
            }
        };
        found.map(|m| Matched {
            rule: &self.rules[m.rule_index],
        })
    }

    /// The first rule in force with `effect` that matches `candidate` of `kind`; `hits` is
    /// scratch space for the glob set's matches.
    fn first_match_of(
        &self,
        effect: Effect,
        kind: SourceKind,
        candidate: &Candidate<'_>,
        hits: &mut Vec<usize>,
    ) -> Option<Matched<'_>> {
        if effect == Effect::Allow && self.suspension.is_some() {
            return None;
        }
        // At most one matcher per effect and kind (the builders are keyed by both).
        let matcher = self
            .matchers
            .iter()
            .find(|matcher| matcher.effect == effect && matcher.kind == kind)?;
        matcher.globs.matches_candidate_into(candidate, hits);
        let first = hits.iter().min()?;
        Some(Matched {
            rule: &self.rules[matcher.rule_indices[*first]],
        })
    }
}

fn bash_pattern(matcher: &ActionMatcher) -> Option<&BashPattern> {
    match &matcher.pattern {
        ActionPattern::Bash(pattern) => Some(pattern),
        _ => None,
    }
}

/// The allow rule that lets `command` run, if one does: one that matches every command, or one
/// without `*` naming the whole line; else, for a plain line only, every command of it must be
/// matched by some allow rule, and the rule matching the first is named.
fn allowing_rule<'a>(
    command: &str,
    split: &shell::Split,
    allow: impl Iterator<Item = &'a ActionMatcher> + Clone,
) -> Option<&'a ActionMatcher> {
    let patterns = allow.filter_map(|m| Some((m, bash_pattern(m)?)));
    let whole = shell::collapse_spaces(command);
    if let Some((m, _)) = patterns.clone().find(|(_, pattern)| {
        pattern.matches_everything() || (pattern.is_literal() && pattern.matches(&whole))
    }) {
        return Some(m);
    }
    if !split.plain {
        return None;
    }
    let mut first = None;
    for part in &split.parts {
        let part = shell::without_keywords(part);
        if part.is_empty() {
            continue;
        }
        let (m, _) = patterns
            .clone()
            .find(|(_, pattern)| pattern.matches(part))?;
        first.get_or_insert(m);
    }
    first
}

fn read_effect(permissions: &Value, effect: Effect, origin: &Origin, into: &mut Vec<Rule>) {
    let Some(list) = permissions.get(effect.key()) else {
        return;
    };
    let Some(list) = list.as_array() else {
        into.push(Rule {
            text: list.to_string(),
            effect,
            kind: None,
            origin: origin.clone(),
            not_in_force: Some(format!(
                "malformed: permissions.{} must be a list of rules",
                effect.key()
            )),
        });
        return;
    };
    for entry in list {
        let text = entry
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| entry.to_string());
        // `Some(kind)` for a plugin rule, `None` for a rule of the host's own actions.
        let parsed = match entry.as_str() {
            None => Err("a rule must be a string".to_string()),
            Some(text) => match compile_action_rule(text) {
                Some(compiled) => compiled.map(|_| None),
                None => parse_rule(text)
                    .map(|(kind, _)| Some(kind))
                    .map_err(str::to_string),
            },
        };
        let (kind, not_in_force) = match parsed {
            Err(reason) if reason == OTHER_TOOL => (
                None,
                Some("not a plugin rule: left to earshot's other tools".to_string()),
            ),
            Err(reason) => (None, Some(format!("malformed: {reason}"))),
            Ok(kind) if effect == Effect::Allow && !origin.layer.owned_by_user() => (
                kind,
                Some(format!(
                    "ignored: allow rules in the checked-in {} cannot grant permissions; to allow it yourself, run `earshot permissions allow {}`",
                    origin.path.display(),
                    shell_word(&text)
                )),
            ),
            Ok(kind) => (kind, None),
        };
        into.push(Rule {
            text,
            effect,
            kind,
            origin: origin.clone(),
            not_in_force,
        });
    }
}

/// The reason [`parse_rule`] gives for a well-formed rule of another earshot tool (`Edit(x)`,
/// `Bash(ls)`): the settings file is shared with the rest of earshot, so such a rule is not
/// malformed. `Bash(…)`, `Read(…)` and `Skill(…)` rules are also decided here, for the host's
/// own actions ([`super::Action`]); the others are not this host's to enforce.
pub const OTHER_TOOL: &str = "a rule for another earshot tool";

/// The rule keywords of earshot's other tools. Only these are left alone (or, for `Bash`, `Read`
/// and `Skill`, decided for the host's own actions); any other keyword is malformed, so a typo
/// (`Mpc(…)`, `Extention(…)`) can never pass as someone else's rule.
pub const OTHER_TOOL_KEYWORDS: &[&str] = &[
    "Agent",
    "Bash",
    "Edit",
    "Glob",
    "Grep",
    "LS",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    "Read",
    "Skill",
    "SlashCommand",
    "Task",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
    "Write",
];

const EXPECTED: &str = "expected Mcp(…), Extension(…) or Plugin(…)";

/// Splits `Mcp(glob)` into its kind and glob.
///
/// # Errors
/// A description of what is wrong with the rule, or [`OTHER_TOOL`] for a well-formed rule of
/// another tool (including `Bash(…)`, `Read(…)` and `Skill(…)`, which are compiled apart, by
/// the gate's actions).
pub fn parse_rule(text: &str) -> Result<(SourceKind, &str), &'static str> {
    if text.chars().any(is_invisible_or_control) {
        return Err(
            "a rule may not hold control characters, escape sequences or invisible formatting characters",
        );
    }
    let (keyword, rest) = text.split_once('(').ok_or(EXPECTED)?;
    let pattern = rest.strip_suffix(')').ok_or("missing the closing ')'")?;
    let kind = match keyword {
        "Mcp" => SourceKind::Mcp,
        "Extension" => SourceKind::Extension,
        "Plugin" => SourceKind::Plugin,
        other if OTHER_TOOL_KEYWORDS.contains(&other) => return Err(OTHER_TOOL),
        other if is_near_miss(other) => {
            return Err(
                "did you mean Mcp(…), Extension(…) or Plugin(…)? keywords are case-sensitive and singular",
            );
        }
        _ => {
            return Err(
                "unknown keyword: expected Mcp(…), Extension(…) or Plugin(…), or a rule of earshot's other tools (Bash(…), Read(…), …)",
            );
        }
    };
    if pattern.is_empty() {
        return Err("the pattern is empty");
    }
    // No quote, backslash or backtick either: a rule is suggested inside a shell command
    // (`earshot permissions allow '…'`), which must stay one single-quoted word.
    if pattern
        .chars()
        .any(|c| c.is_whitespace() || "()'\"`\\".contains(c))
    {
        return Err("the pattern may hold only tool-name characters and glob syntax");
    }
    Ok((kind, pattern))
}

/// `text` as one single-quoted shell word, safe to paste whatever it holds (a rule that parsed
/// holds no quote, but a suggested command must never depend on that).
pub fn shell_word(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Control characters (escape sequences start with one), bidi overrides and zero-width
/// formatting characters: nothing a rule needs, and each can disguise a rule on a terminal.
pub(super) fn is_invisible_or_control(c: char) -> bool {
    c.is_control()
        || earshot_terminal_text::is_bidi_override(c)
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}')
}

/// A keyword that is almost one of ours (`MCP`, `mcp`, `Plugins`, `extension`): a typo that must
/// count as malformed, never as another tool's rule that is silently left alone.
fn is_near_miss(keyword: &str) -> bool {
    let lower = keyword.to_ascii_lowercase();
    let singular = lower.strip_suffix('s').unwrap_or(&lower);
    matches!(
        singular,
        "mcp" | "extension" | "plugin" | "mcpserver" | "ext"
    )
}
