//! `earshot permissions check NAME` and `earshot permissions list`.

use clap::Subcommand;
use serde_json::json;

use earshot_host::gate::{
    Action, DecidedBy, Effect, OTHER_TOOL, ToolRequest, compile_action_rule, parse_rule,
    sanitise_for_terminal, source_names, unmatchable_rules,
};
use earshot_host::mcp::read_servers;
use earshot_host::names::{SourceKind, ToolId};
use earshot_host::sources::{find_components, find_extensions};
use earshot_host::trust::{RuleFile, write_rule};

use super::{CommandResult, Context, Failure, exit, output};

#[derive(Debug, Subcommand)]
pub(crate) enum PermissionsCommand {
    /// Which rule decides a tool, and from which file. NAME is `server__tool` or a rule such as
    /// `Mcp(server__tool)`; or one of the host's own actions: `Bash(git diff HEAD)`,
    /// `Read(src/lib.rs)`, `Skill(deploy)`.
    Check {
        /// The tool, as `source__tool` or `Kind(source__tool)`; or `Bash(command)`, `Read(path)`,
        /// `Skill(name)`.
        name: String,
        /// Treat the tool as declaring itself read-only (honoured for extensions and plugins only).
        #[arg(long)]
        read_only: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Every rule in every settings file, and whether it is in force.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Allow a rule without asking, e.g. `earshot permissions allow 'Mcp(github__*)'` or
    /// `earshot permissions allow 'Bash(git diff:*)'`. In the
    /// local file the rule is signed for you and this project; an allow rule there that earshot
    /// did not write grants nothing.
    Allow(RuleArgs),
    /// Always ask for a rule's tools (an ask rule only narrows; it counts from any file).
    Ask(RuleArgs),
    /// Deny a rule's tools (a deny rule only narrows; it counts from any file).
    Deny(RuleArgs),
}

/// A rule and the file to write it to.
#[derive(Debug, clap::Args)]
pub(crate) struct RuleArgs {
    /// The rule: `Mcp(glob)`, `Extension(glob)` or `Plugin(glob)` over namespaced tool names, or
    /// `Bash(…)`, `Read(…)`, `Skill(…)` for a slash command's lines and includes and for skills.
    rule: String,
    /// local: .earshot/settings.local.json (this project); user: your settings.json (every
    /// project); project: the checked-in .earshot/settings.json, shared with everyone who checks
    /// it out (deny and ask only).
    #[arg(short, long, value_enum, default_value = "local")]
    scope: RuleScope,
}

/// Where `permissions allow|ask|deny` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum RuleScope {
    /// `.earshot/settings.local.json`: this project only.
    Local,
    /// `settings.json` in your config dir: every project.
    User,
    /// `.earshot/settings.json`, checked in: deny and ask rules for everyone (never allow).
    Project,
}

pub(crate) fn run(context: &Context, command: PermissionsCommand) -> CommandResult {
    match command {
        PermissionsCommand::Check {
            name,
            read_only,
            json,
        } => check(context, &name, read_only, json),
        PermissionsCommand::List { json } => list(context, json),
        PermissionsCommand::Allow(args) => add_rule(context, Effect::Allow, args),
        PermissionsCommand::Ask(args) => add_rule(context, Effect::Ask, args),
        PermissionsCommand::Deny(args) => add_rule(context, Effect::Deny, args),
    }
}

fn add_rule(context: &Context, effect: Effect, args: RuleArgs) -> CommandResult {
    let shown = sanitise_for_terminal(&args.rule, 200);
    match compile_action_rule(&args.rule).map(|compiled| compiled.map(|_| ())) {
        Some(Ok(())) => {}
        Some(Err(reason)) => {
            return Err(Failure::new(format!("\"{shown}\": {reason}")).code(exit::USAGE));
        }
        None => match parse_rule(&args.rule) {
            Ok(_) => {}
            Err(reason) if reason == OTHER_TOOL => {
                return Err(Failure::new(format!(
                    "\"{shown}\" is a rule of another earshot tool; this command writes Mcp(…), Extension(…), Plugin(…), Bash(…), Read(…) and Skill(…) rules"
                ))
                .code(exit::USAGE));
            }
            Err(reason) => {
                return Err(Failure::new(format!("\"{shown}\": {reason}")).code(exit::USAGE));
            }
        },
    }
    let file = match args.scope {
        RuleScope::Local => RuleFile::Local,
        RuleScope::User => RuleFile::User,
        RuleScope::Project => RuleFile::Project,
    };
    if file == RuleFile::Project && effect == Effect::Allow {
        return Err(Failure::new(format!(
            "an allow rule in the checked-in .earshot/settings.json grants nothing (a repository cannot grant permissions); \"{shown}\" was not written"
        ))
        .hint("use -s local (this project, signed for you) or -s user (every project)")
        .code(exit::USAGE));
    }
    if file != RuleFile::User {
        context.require_project(&format!("`permissions {}`", effect.key()))?;
    }
    let path = write_rule(&context.settings, effect.key(), &args.rule, file)
        .map_err(|error| Failure::new(error.to_string()))?;
    output::say(&format!(
        "{} rule \"{shown}\" written to {}",
        effect.key(),
        path.display()
    ));
    Ok(exit::OK)
}

fn check(context: &Context, name: &str, read_only: bool, as_json: bool) -> CommandResult {
    if let Some(action) = Action::parse(name) {
        return check_action(context, &action, as_json);
    }
    let tool = resolve_tool(context, name)?;
    // What the real call gets: a read-only extension or component tool runs without asking.
    let declared = if read_only || tool.kind() == SourceKind::Mcp {
        None
    } else {
        super::read_only::declared_read_only(context, tool.kind(), tool.source(), tool.tool())
    };
    let read_only = read_only || declared == Some(true);
    let gate = context.gate();
    let decision = gate.decide(&ToolRequest {
        tool: &tool,
        read_only,
        title: None,
        detail: None,
    });
    if as_json {
        output::json(&json!({
            "tool": tool.namespaced(),
            "rule_name": decision.rule_name,
            "decision": decision.effect,
            "decided_by": decision.decided_by,
            "read_only": read_only,
        }));
        return Ok(exit::OK);
    }
    // Every part of this line can come from a checked-in file or a plugin: shown sanitised.
    let why = match &decision.decided_by {
        DecidedBy::Rule { rule, layer, file } => format!(
            "by \"{}\" in {} ({} settings)",
            sanitise_for_terminal(rule, 200),
            sanitise_for_terminal(&file.display().to_string(), 500),
            layer.as_str()
        ),
        DecidedBy::ReadOnly if declared == Some(true) => {
            "because the tool declares itself read-only (honoured for extensions and plugins): it runs without asking".to_string()
        }
        DecidedBy::ReadOnly => {
            "because the tool is read-only and its source's claim is honoured".to_string()
        }
        DecidedBy::Default => "by default: no rule matches".to_string(),
        DecidedBy::Suspended => "because a settings file cannot be read in full: it would run without asking, but a deny rule there might have refused it".to_string(),
        _ => "by the host".to_string(),
    };
    println!(
        "{}: {} {why}",
        sanitise_for_terminal(&decision.rule_name, 300),
        decision.effect.key()
    );
    if decision.decided_by == DecidedBy::Default
        && !read_only
        && declared.is_none()
        && tool.kind() != SourceKind::Mcp
    {
        println!(
            "(a tool that declares itself read-only runs without asking; add --read-only to check that case)"
        );
    }
    if let Some(why) = gate.rules().suspension() {
        output::warning_line(&format!("allow rules are {why}"));
    }
    Ok(exit::OK)
}

/// `permissions check` for one of the host's own actions (`Bash(git diff HEAD)`).
fn check_action(context: &Context, action: &Action<'_>, as_json: bool) -> CommandResult {
    let gate = context.gate();
    let decision = gate.decide_action(action);
    if as_json {
        output::json(&json!({
            "action": action.keyword(),
            "target": action.target(),
            "rule_name": decision.rule_name,
            "decision": decision.effect,
            "decided_by": decision.decided_by,
        }));
        return Ok(exit::OK);
    }
    let why = match &decision.decided_by {
        DecidedBy::Rule { rule, layer, file } => format!(
            "by \"{}\" in {} ({} settings)",
            sanitise_for_terminal(rule, 200),
            sanitise_for_terminal(&file.display().to_string(), 500),
            layer.as_str()
        ),
        DecidedBy::ReadOnly => {
            "by default: no rule matches, and reading inside the project or loading a skill is allowed".to_string()
        }
        DecidedBy::Default => "by default: no rule matches".to_string(),
        DecidedBy::Suspended => "because a settings file cannot be read in full: it would run without asking, but a deny rule there might have refused it".to_string(),
        _ => "by the host".to_string(),
    };
    println!(
        "{}: {} {why}",
        sanitise_for_terminal(&decision.rule_name, 1000),
        decision.effect.key()
    );
    if let Some(why) = gate.rules().suspension() {
        output::warning_line(&format!("allow rules are {why}"));
    }
    Ok(exit::OK)
}

/// `Kind(source__tool)`, or `source__tool` resolved against the configured sources.
fn resolve_tool(context: &Context, name: &str) -> Result<ToolId, Failure> {
    let (kind, namespaced) = if name.contains('(') {
        let (kind, pattern) =
            parse_rule(name).map_err(|reason| Failure::new(format!("\"{name}\": {reason}")))?;
        (Some(kind), pattern)
    } else {
        (None, name)
    };
    let (source, tool) = namespaced.split_once("__").ok_or_else(|| {
        Failure::new(format!("\"{namespaced}\" is not a namespaced tool name"))
            .hint("write it as source__tool, e.g. github__create_issue")
    })?;
    let kind = match kind {
        Some(kind) => kind,
        None => source_kind_of(context, source).ok_or_else(|| {
            Failure::new(format!("no MCP server, extension or plugin named \"{source}\" is configured here"))
                .hint(format!("name the kind explicitly: Mcp({namespaced}), Extension({namespaced}) or Plugin({namespaced})"))
        })?,
    };
    ToolId::new(kind, source, tool)
        .map_err(|error| Failure::new(format!("\"{namespaced}\": {error}")))
}

fn source_kind_of(context: &Context, source: &str) -> Option<SourceKind> {
    if read_servers(&context.settings, &Context::env)
        .iter()
        .any(|entry| entry.name == source)
    {
        return Some(SourceKind::Mcp);
    }
    if find_extensions(&context.settings)
        .iter()
        .any(|file| file.name == source)
    {
        return Some(SourceKind::Extension);
    }
    if find_components(&context.settings)
        .iter()
        .any(|file| file.name == source)
    {
        return Some(SourceKind::Plugin);
    }
    None
}

fn list(context: &Context, as_json: bool) -> CommandResult {
    let gate = context.gate();
    let rules = gate.rules().rules();
    let settings = &context.settings;
    let unmatchable = unmatchable_rules(rules, &|kind| source_names(settings, &Context::env, kind));
    let warning_of = |index: usize| {
        unmatchable
            .iter()
            .find(|(at, _)| *at == index)
            .map(|(_, why)| why.clone())
    };
    if as_json {
        let listed: Vec<serde_json::Value> = rules
            .iter()
            .enumerate()
            .map(|(index, rule)| {
                let mut value = json!(rule);
                if let Some(why) = warning_of(index) {
                    value["warning"] = why.into();
                }
                value
            })
            .collect();
        let problems: Vec<String> = settings.problems.iter().map(ToString::to_string).collect();
        output::json(&json!({ "rules": listed, "problems": problems }));
        return Ok(exit::OK);
    }
    // A file that does not parse contributes no rule, so what is wrong with it is part of the
    // list: it may have held deny rules.
    for problem in &settings.problems {
        println!(
            "settings problem: {}",
            sanitise_for_terminal(&problem.to_string(), 1000)
        );
    }
    if rules.is_empty() {
        if settings.problems.is_empty() {
            println!(
                "no permission rules: every tool call asks (read-only extension and plugin tools run without asking)"
            );
        } else {
            println!("no permission rules were read: every tool call asks");
        }
        return Ok(exit::OK);
    }
    let rows: Vec<Vec<String>> = [Effect::Deny, Effect::Allow, Effect::Ask]
        .iter()
        .flat_map(|effect| {
            rules
                .iter()
                .enumerate()
                .filter(move |(_, rule)| rule.effect == *effect)
        })
        .map(|(index, rule)| {
            vec![
                rule.effect.key().to_string(),
                sanitise_for_terminal(&rule.text, 200),
                format!(
                    "{} ({})",
                    rule.origin.path.display(),
                    rule.origin.layer.as_str()
                ),
                match (&rule.not_in_force, warning_of(index)) {
                    (Some(why), _) => why.clone(),
                    (None, Some(warning)) => format!("in force, but {warning}"),
                    (None, None) => "in force".into(),
                },
            ]
        })
        .collect();
    output::table(&["EFFECT", "RULE", "FILE", "STATUS"], &rows);
    if let Some(why) = gate.rules().suspension() {
        println!("allow rules are {}", sanitise_for_terminal(why, 1000));
    }
    Ok(exit::OK)
}
