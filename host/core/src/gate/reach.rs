//! Deny and ask rules that are well formed but can match no tool: `Mcp(demo_echo)` (one
//! underscore, so no `source__tool` name can equal it), or `Mcp(Demo__*)` where the only server
//! is `demo` (rules are case-sensitive). Such a rule protects nothing, and its author believes it
//! does, so it is reported as a warning; it suspends nothing.

use globset::GlobBuilder;

use crate::names::{SourceKind, check_mcp_tool_name, check_source_name, check_tool_name};
use crate::settings::Settings;

use super::display::sanitise_for_terminal;
use super::rules::{Effect, Rule, RuleSet, parse_rule};

/// The glob syntax of a rule pattern.
const GLOB_SYNTAX: &[char] = &['*', '?', '[', ']', '{', '}'];

/// For each deny or ask rule in force in `rules` that can match no tool, its index and why.
/// `sources(kind)` lists the names of the configured sources of `kind`.
pub fn unmatchable_rules(
    rules: &[Rule],
    sources: &dyn Fn(SourceKind) -> Vec<String>,
) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (index, rule) in rules.iter().enumerate() {
        if rule.effect == Effect::Allow || rule.not_in_force.is_some() {
            continue;
        }
        let Ok((kind, pattern)) = parse_rule(&rule.text) else {
            continue;
        };
        if let Some(why) =
            literal_problem(kind, pattern).or_else(|| case_problem(kind, pattern, sources))
        {
            found.push((index, why));
        }
    }
    found
}

/// Why a pattern without glob syntax is no tool's name, if it is not.
fn literal_problem(kind: SourceKind, pattern: &str) -> Option<String> {
    if pattern.contains(GLOB_SYNTAX) {
        return None;
    }
    let Some((source, tool)) = pattern.split_once("__") else {
        return Some(
            "can match no tool: a tool is named source__tool, with two underscores (as `earshot tools list` shows)"
                .into(),
        );
    };
    let checked = check_source_name(source).and_then(|()| match kind {
        SourceKind::Mcp => check_mcp_tool_name(tool),
        _ => check_tool_name(tool),
    });
    checked
        .err()
        .map(|error| format!("can match no tool: {error}"))
}

/// Why a pattern whose source part names no configured source, but one in another letter case,
/// matches nothing here.
fn case_problem(
    kind: SourceKind,
    pattern: &str,
    sources: &dyn Fn(SourceKind) -> Vec<String>,
) -> Option<String> {
    let (source_part, _) = pattern.split_once("__")?;
    let glob = |case_insensitive: bool| {
        GlobBuilder::new(source_part)
            .case_insensitive(case_insensitive)
            .build()
            .ok()
            .map(|glob| glob.compile_matcher())
    };
    let (exact, any_case) = (glob(false)?, glob(true)?);
    let names = sources(kind);
    if names.iter().any(|name| exact.is_match(name)) {
        return None;
    }
    let other_case = names.iter().find(|name| any_case.is_match(name))?;
    Some(format!(
        "can match no tool here: no {} is named \"{}\", but \"{}\" is (rules are case-sensitive)",
        kind.noun(),
        sanitise_for_terminal(source_part, 100),
        sanitise_for_terminal(other_case, 100)
    ))
}

/// One warning line per deny or ask rule that can match no tool, naming the rule and its file:
/// what `permissions list` and the start of a session report.
pub fn rule_warnings(settings: &Settings, env: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let set = RuleSet::from_settings(settings);
    let rules = set.rules();
    unmatchable_rules(rules, &|kind| source_names(settings, env, kind))
        .into_iter()
        .map(|(index, why)| {
            let rule = &rules[index];
            format!(
                "the {} rule \"{}\" in {} {why}; it protects nothing as written",
                rule.effect.key(),
                sanitise_for_terminal(&rule.text, 200),
                sanitise_for_terminal(&rule.origin.path.display().to_string(), 500),
            )
        })
        .collect()
}

/// The names of the configured sources of `kind`.
pub fn source_names(
    settings: &Settings,
    env: &dyn Fn(&str) -> Option<String>,
    kind: SourceKind,
) -> Vec<String> {
    match kind {
        SourceKind::Mcp => crate::mcp::read_servers(settings, env)
            .into_iter()
            .map(|entry| entry.name)
            .collect(),
        SourceKind::Extension => crate::sources::find_extensions(settings)
            .into_iter()
            .map(|file| file.name)
            .collect(),
        SourceKind::Plugin => crate::sources::find_components(settings)
            .into_iter()
            .map(|file| file.name)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::Origin;
    use crate::settings::Layer;

    fn rule(effect: Effect, text: &str) -> Rule {
        Rule {
            text: text.into(),
            effect,
            kind: None,
            origin: Origin {
                layer: Layer::User,
                path: "settings.json".into(),
            },
            not_in_force: None,
        }
    }

    #[test]
    fn rules_that_match_nothing_are_found_and_others_are_not() {
        let sources = |kind: SourceKind| match kind {
            SourceKind::Mcp => vec!["demo".to_string(), "GitHub".to_string()],
            _ => vec!["notes".to_string()],
        };
        let cases = [
            ("Mcp(demo_echo)", true),
            ("Mcp(demo)", true),
            ("Mcp(demo__)", true),
            ("Mcp(_demo__echo)", true),
            ("Mcp(Demo__echo)", true),
            ("Mcp(DEMO__*)", true),
            ("Mcp(D*__*)", true),
            ("Extension(Notes__*)", true),
            ("Mcp(demo__echo)", false),
            ("Mcp(demo__*)", false),
            ("Mcp(GitHub__*)", false),
            ("Mcp(d*)", false),
            ("Mcp(*)", false),
            ("Mcp(unknown__x)", false),
            ("Extension(notes__*)", false),
        ];
        for (text, unmatchable) in cases {
            for effect in [Effect::Deny, Effect::Ask] {
                let found = unmatchable_rules(&[rule(effect, text)], &sources);
                assert_eq!(!found.is_empty(), unmatchable, "{text}: {found:?}");
            }
            assert!(
                unmatchable_rules(&[rule(Effect::Allow, text)], &sources).is_empty(),
                "allow rules are not judged"
            );
        }
        let found = unmatchable_rules(&[rule(Effect::Deny, "Mcp(Demo__*)")], &sources);
        assert!(found[0].1.contains("\"demo\" is"), "{found:?}");
    }
}
