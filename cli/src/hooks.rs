//! `earshot hooks …`: list the hooks of every layer with their state, trust or untrust a
//! project hook by name, record a review of the user's own hooks, and fire one event by hand so
//! a hook's author can test a script the way a session runs it.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Subcommand;
use serde_json::{Map, Value, json};

use earshot_host::hooks::{
    HookDefinition, HookEngine, HookEvent, HookOutcome, HookReport, HookSet, HookTool,
    current_hook_digest, hook_admission, last_results, result_key, review_user_hooks, trust_hook,
    untrust_hook, user_hooks_held,
};
use earshot_host::mcp::ServerDigest;
use earshot_host::settings::Layer;
use earshot_host::skills::catalogue::visible;

use super::{CommandResult, Context, Failure, exit, output};

/// `text` for the review: every invisible or control character, newline and tab included, as
/// `⟦U+XXXX⟧`, on one line.
fn shown(text: &str) -> String {
    visible(text)
        .replace('\n', "⟦U+000A⟧")
        .replace('\t', "⟦U+0009⟧")
}

#[derive(Debug, Subcommand)]
pub(crate) enum HooksCommand {
    /// Every hook in every settings layer: event, matcher, what it runs, source, trust, last
    /// result. Runs nothing.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Trust a hook of the project's files (by its name) as it is now, with the project files
    /// it names; a change to either lapses the trust. Prints what it bound.
    Trust {
        /// The hooks' names.
        #[arg(required = true)]
        names: Vec<String>,
        /// Trust it even though its digest is partial (a shell word earshot cannot resolve,
        /// installed packages, a path out of the project, past the budget): what it does not
        /// cover can change without lapsing the trust.
        #[arg(long)]
        partial: bool,
        /// Alone (after the name): print the digest and what it binds, and trust nothing. With
        /// a value: trust it only if its digest is still this one; with one name only.
        #[arg(long, value_name = "DIGEST", num_args = 0..=1, default_missing_value = "")]
        digest: Option<String>,
    },
    /// Remove the trust record of a project hook.
    Untrust {
        /// The hooks' names.
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Record your own hooks as they are now as reviewed (after a change made outside earshot;
    /// with hooks.requireReview they do not run until then).
    Review,
    /// Fire one event by hand, exactly as a session would (untrusted hooks do not run), with
    /// the JSON object in FILE as the hook's input (`-` for stdin).
    Run {
        /// The event (PreToolUse, UserPromptSubmit, Stop, ...).
        event: String,
        /// A JSON object: the event's input (`tool_name`, `tool_input`, `prompt`, ...).
        #[arg(long, value_name = "FILE")]
        input: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub(crate) async fn run(context: &Context, command: HooksCommand) -> CommandResult {
    match command {
        HooksCommand::List { json } => list(context, json),
        HooksCommand::Trust {
            names,
            partial,
            digest,
        } => trust(context, &names, partial, digest.as_deref()),
        HooksCommand::Untrust { names } => super::each_name(&names, |name| {
            let removed = untrust_hook(&context.settings, name)
                .map_err(|error| Failure::new(error.to_string()))?;
            output::say(&if removed {
                format!("hook \"{name}\" is no longer trusted")
            } else {
                format!("hook \"{name}\" had no trust record")
            });
            Ok(exit::OK)
        }),
        HooksCommand::Review => {
            let count = review_user_hooks(&context.settings)
                .map_err(|error| Failure::new(error.to_string()))?;
            output::say(&format!("recorded your {count} hook(s) as reviewed"));
            Ok(exit::OK)
        }
        HooksCommand::Run { event, input, json } => fire(context, &event, &input, json).await,
    }
}

/// `hooks trust`: print the digest (`--digest` alone), or trust each name (pinned to a digest
/// with `--digest VALUE`), saying what it bound.
fn trust(
    context: &Context,
    names: &[String],
    partial: bool,
    digest: Option<&str>,
) -> CommandResult {
    match digest {
        Some("") => super::each_name(names, |name| {
            let digest = current_hook_digest(&context.settings, name)
                .map_err(|error| Failure::new(error.to_string()))?;
            output::say(&format!("hook \"{name}\": {}", digest.value));
            print_bound(&digest);
            output::say(&format!(
                "not trusted: to trust exactly this, run `earshot hooks trust {name} --digest {}{}`",
                digest.value,
                if digest.partial.is_some() {
                    " --partial"
                } else {
                    ""
                }
            ));
            Ok(exit::OK)
        }),
        Some(_) if names.len() > 1 => Err(Failure::new(
            "--digest pins one hook's digest; give one name with it",
        )
        .code(exit::USAGE)),
        reviewed => super::each_name(names, |name| {
            let digest = trust_hook(&context.settings, name, partial, reviewed)
                .map_err(|error| Failure::new(error.to_string()))?;
            output::say(&format!(
                "trusted hook \"{name}\" as it is now ({}); a change to it or to a project file it names lapses the trust",
                digest.value
            ));
            print_bound(&digest);
            Ok(exit::OK)
        }),
    }
}

/// What a hook's or server's digest binds, one line each: its definition, each project file or
/// folder it names, why it is partial, and what no digest covers.
pub(crate) fn print_bound(digest: &ServerDigest) {
    for line in bound_lines(digest) {
        output::say(&line);
    }
}

/// The lines [`print_bound`] prints.
pub(crate) fn bound_lines(digest: &ServerDigest) -> Vec<String> {
    let mut lines = vec!["  bound: its definition".to_string()];
    for bound in &digest.bound {
        lines.push(format!("  bound: {}", bound.describe()));
    }
    if digest.bound.is_empty() {
        lines.push("  bound: no project file (its command names none)".into());
    }
    if let Some(why) = &digest.partial {
        lines.push(format!("  partial: {why}"));
    }
    lines.push(
        "  not covered: code it loads from elsewhere in the project (earshot cannot follow a script's own loads)"
            .into(),
    );
    lines
}

/// Whether a hook runs, and if not why.
fn state_of(context: &Context, set: &HookSet, definition: &HookDefinition) -> String {
    if let Some(file) = &set.disabled_by {
        return format!("off: disableAllHooks in {}", file.display());
    }
    if !super::hooks_enabled() {
        return "off: --no-hooks".into();
    }
    if !definition.enabled {
        return "disabled (enabled: false)".into();
    }
    if definition.layer == Layer::User {
        return if user_hooks_held(&context.settings, set) {
            "held: your hooks changed outside earshot; review them, then run `earshot hooks review`"
                .into()
        } else {
            "runs (your own)".into()
        };
    }
    match hook_admission(&context.settings, definition) {
        Ok(()) => "trusted".into(),
        Err(why) => why,
    }
}

fn list(context: &Context, as_json: bool) -> CommandResult {
    let set = HookSet::from_settings(&context.settings);
    for problem in &set.problems {
        output::warning_line(&format!("hooks: {problem}"));
    }
    let results = context
        .settings
        .user_config_dir
        .as_deref()
        .map(last_results)
        .unwrap_or_default();
    let rows: Vec<(HookDefinition, String, String)> = set
        .definitions
        .iter()
        .map(|definition| {
            let project = context
                .settings
                .project
                .as_ref()
                .map(|project| project.root.as_path());
            let last = results
                .get(&result_key(definition.layer, &definition.name, project))
                .map(|(_, result)| result.clone())
                .unwrap_or_else(|| "-".into());
            (
                definition.clone(),
                state_of(context, &set, definition),
                last,
            )
        })
        .collect();
    if as_json {
        let hooks: Vec<Value> = rows
            .iter()
            .map(|(definition, state, last)| {
                json!({
                    "name": definition.name,
                    "event": definition.event.as_str(),
                    "matcher": definition.matcher.text(),
                    "form": definition.form(),
                    "command": definition.shown_command(),
                    "source": definition.layer,
                    "file": definition.file,
                    "timeout": definition.timeout.as_secs_f64(),
                    "onError": definition.on_error,
                    "enabled": definition.enabled,
                    "state": state,
                    "lastResult": last,
                })
            })
            .collect();
        output::json(&json!({ "hooks": hooks, "problems": set.problems }));
        return Ok(exit::OK);
    }
    if rows.is_empty() {
        output::out("no hooks: none is configured under \"hooks\" in any settings file");
        return Ok(exit::OK);
    }
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|(definition, state, last)| {
            // What runs, every character of it: an invisible or control character, a newline or
            // a tab is shown as `⟦U+XXXX⟧`, never dropped or turned into a space.
            let matcher = match definition.matcher.text() {
                "" => "*".to_string(),
                text => shown(text),
            };
            let form = match definition.form() {
                "shell" => "shell string",
                other => other,
            };
            vec![
                definition.name.clone(),
                definition.event.as_str().to_string(),
                if definition.event.is_tool_event() {
                    matcher
                } else {
                    "-".into()
                },
                format!("{form}: {}", shown(&definition.shown_command())),
                definition.layer.as_str().to_string(),
                state.clone(),
                last.clone(),
            ]
        })
        .collect();
    output::table(
        &[
            "NAME",
            "EVENT",
            "MATCHER",
            "RUNS",
            "SOURCE",
            "TRUST",
            "LAST RESULT",
        ],
        &table,
    );
    Ok(exit::OK)
}

/// The tool named in a hand-fired event, as hooks see it in a session: its keyword found from
/// the sources the settings name; `read_mcp_resource` as `Mcp(server__resources)` for the
/// server its `input` names, `skill` as `Skill(name)` for the skill it names.
fn tool_of(context: &Context, name: &str, input: &Value) -> HookTool {
    if name == earshot_host::mcp::READ_RESOURCE_TOOL {
        return HookTool::read_resource(input);
    }
    if name == earshot_host::skills::SKILL_TOOL_NAME {
        return earshot_host::skills::tool::hook_tool(input);
    }
    let source = name.split_once("__").map(|(source, _)| source);
    let keyword = source.and_then(|source| {
        if earshot_host::mcp::read_servers(&context.settings, &Context::env)
            .iter()
            .any(|entry| entry.name == source)
        {
            Some("Mcp")
        } else if earshot_host::sources::find_extensions(&context.settings)
            .iter()
            .any(|file| file.name == source)
        {
            Some("Extension")
        } else if earshot_host::sources::find_components(&context.settings)
            .iter()
            .any(|file| file.name == source)
        {
            Some("Plugin")
        } else {
            None
        }
    });
    HookTool {
        name: name.to_string(),
        keyword: keyword.map(str::to_string),
        target: name.to_string(),
    }
}

async fn fire(context: &Context, event: &str, input: &PathBuf, as_json: bool) -> CommandResult {
    let event = HookEvent::parse(event).ok_or_else(|| {
        Failure::new(format!(
            "unknown event \"{}\"; one of {}",
            earshot_host::gate::sanitise_for_terminal(event, 40),
            HookEvent::ALL.map(HookEvent::as_str).join(", ")
        ))
        .code(exit::USAGE)
    })?;
    let text = if input.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(input)
    }
    .map_err(|error| Failure::new(format!("--input {}: {error}", input.display())))?;
    let fields: Map<String, Value> = match serde_json::from_str(&text) {
        Ok(Value::Object(fields)) => fields,
        Ok(_) => return Err(Failure::new("--input must hold one JSON object")),
        Err(error) => {
            return Err(Failure::new(format!(
                "--input {} is not JSON: {error}",
                input.display()
            )));
        }
    };
    let settings = context.settings.clone();
    let engine = tokio::task::spawn_blocking(move || {
        HookEngine::load(
            &settings,
            format!("hooks-run-{}", std::process::id()),
            Arc::new(|name: &str| std::env::var(name).ok()),
        )
    })
    .await
    .map_err(|_| Failure::new("could not load the hooks"))?;
    if !super::hooks_enabled() {
        return Err(Failure::new("hooks are off (--no-hooks): nothing to run"));
    }
    for notice in engine.notices() {
        output::warning_line(notice);
    }
    let (report, rewritten) = if event == HookEvent::PreToolUse {
        let name = fields
            .get("tool_name")
            .and_then(Value::as_str)
            .ok_or_else(|| Failure::new("a PreToolUse input needs \"tool_name\""))?;
        let input = fields.get("tool_input").cloned().unwrap_or(json!({}));
        let tool = tool_of(context, name, &input);
        let gate = fields.get("gate").cloned().unwrap_or(Value::Null);
        let pre = engine.pre_tool_use(&tool, input, gate).await;
        (pre.report, pre.updated_input)
    } else {
        let tool = fields.get("tool_name").and_then(Value::as_str).map(|name| {
            let input = fields.get("tool_input").cloned().unwrap_or(json!({}));
            tool_of(context, name, &input)
        });
        if event.is_tool_event() && tool.is_none() {
            return Err(Failure::new(format!(
                "a {event} input needs \"tool_name\" (its hooks' matchers match it)"
            )));
        }
        (engine.fire(event, fields, tool.as_ref()).await, None)
    };
    print_report(&report, rewritten.as_ref(), as_json);
    Ok(if report.blocked().is_some() {
        exit::DENIED
    } else {
        exit::OK
    })
}

fn print_report(report: &HookReport, rewritten: Option<&Value>, as_json: bool) {
    if as_json {
        output::json(&json!({"outcomes": report.outcomes, "updatedInput": rewritten}));
        return;
    }
    if report.outcomes.is_empty() && rewritten.is_none() {
        output::out("no hook said anything (none ran, or each answered with no decision)");
    }
    for outcome in &report.outcomes {
        let line = match outcome {
            HookOutcome::Blocked { hook, reason } => format!("blocked by \"{hook}\": {reason}"),
            HookOutcome::Asked { hook, reason } => format!("asked by \"{hook}\": {reason}"),
            HookOutcome::Context { hook, text } => format!("context from \"{hook}\": {text}"),
            HookOutcome::UpdatedPrompt { hook, prompt } => {
                format!("prompt replaced by \"{hook}\": {prompt}")
            }
            HookOutcome::Message { hook, text } => format!("message from \"{hook}\": {text}"),
            HookOutcome::Failed { message, .. } => format!("failed: {message}"),
            other => format!("{other:?}"),
        };
        output::out(&earshot_host::gate::strip_for_terminal(&line));
    }
    if let Some(input) = rewritten {
        output::out(&format!("input rewritten to: {input}"));
    }
}
