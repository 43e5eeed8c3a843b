//! `earshot skills …` and `earshot commands …`: list what was found (with what kept each
//! problem from loading, at `file:line`), show one with its `!` and `@` marked, trust or untrust
//! a project's, and expand a command the way a session would.
//!
//! Listing starts nothing (no server, no extension): it only reads the roots, so it runs at the
//! process floor.

use std::io::IsTerminal;

use clap::Subcommand;
use serde_json::{Value, json};

use earshot_host::gate::{NonInteractivePrompter, Prompter, TerminalPrompter, strip_for_terminal};
use earshot_host::skills::arguments::{Piece, pieces};
use earshot_host::skills::item::current_body;
use earshot_host::skills::{
    Catalogue, ItemKind, ItemOrigin, Library, LoadedItem, budget, expand_command, skill_denied,
    trust_item, untrust_item,
};

use super::{CommandResult, Context, Failure, exit, output};

#[derive(Debug, Subcommand)]
pub(crate) enum SkillsCommand {
    /// Every skill found: source, trust, who may invoke it, what it asks for; and what did not
    /// load, at file:line. Reads no untrusted body.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// One skill: its frontmatter, files and body, with `!` shell lines and `@` includes marked.
    Show {
        /// The skill's name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Trust a project's skill as it is now (every file of its folder); a change lapses it.
    Trust {
        /// The skills' names.
        #[arg(required = true)]
        names: Vec<String>,
        /// Trust it only if its digest is still this one (the one `show` printed); with one
        /// name only.
        #[arg(long, value_name = "SHA256")]
        digest: Option<String>,
    },
    /// Remove the trust record of a project's skill.
    Untrust {
        /// The skills' names.
        #[arg(required = true)]
        names: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum CommandsCommand {
    /// Every slash command found (and each skill you can type as /name): source, trust,
    /// arguments; and what did not load, at file:line. Reads no untrusted body.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// One command: its frontmatter and body, with `!` shell lines and `@` includes marked.
    Show {
        /// The command's name (`git:commit`).
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the text the model would get for `/NAME ARGS…`, asking through the gate for each
    /// `!` and `@` (with no terminal to ask, an ask is a deny).
    Expand {
        /// The command's name (`git:commit`, `project:deploy`, or a skill's).
        name: String,
        /// Its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        arguments: Vec<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Trust a project's command as it is now (its file); a change lapses it.
    Trust {
        /// The commands' names.
        #[arg(required = true)]
        names: Vec<String>,
        /// Trust it only if its digest is still this one (the one `show` printed); with one
        /// name only.
        #[arg(long, value_name = "SHA256")]
        digest: Option<String>,
    },
    /// Remove the trust record of a project's command.
    Untrust {
        /// The commands' names.
        #[arg(required = true)]
        names: Vec<String>,
    },
}

pub(crate) fn run_skills(context: &Context, command: SkillsCommand) -> CommandResult {
    match command {
        SkillsCommand::List { json } => list(context, ItemKind::Skill, json),
        SkillsCommand::Show { name, json } => show(context, ItemKind::Skill, &name, json),
        SkillsCommand::Trust { names, digest } => {
            trust_each(context, ItemKind::Skill, &names, digest)
        }
        SkillsCommand::Untrust { names } => {
            super::each_name(&names, |name| untrust(context, ItemKind::Skill, name))
        }
    }
}

pub(crate) async fn run_commands(context: &Context, command: CommandsCommand) -> CommandResult {
    match command {
        CommandsCommand::List { json } => list(context, ItemKind::Command, json),
        CommandsCommand::Show { name, json } => show(context, ItemKind::Command, &name, json),
        CommandsCommand::Expand {
            name,
            arguments,
            json,
        } => expand(context, &name, &arguments, json).await,
        CommandsCommand::Trust { names, digest } => {
            trust_each(context, ItemKind::Command, &names, digest)
        }
        CommandsCommand::Untrust { names } => {
            super::each_name(&names, |name| untrust(context, ItemKind::Command, name))
        }
    }
}

/// `trust` for each name; `--digest` pins one item, so it takes one name.
fn trust_each(
    context: &Context,
    kind: ItemKind,
    names: &[String],
    digest: Option<String>,
) -> CommandResult {
    if digest.is_some() && names.len() > 1 {
        return Err(
            Failure::new("--digest pins one item's digest; give one name with it")
                .code(exit::USAGE),
        );
    }
    super::each_name(names, |name| trust(context, kind, name, digest.as_deref()))
}

/// Whether any deny list in any layer holds a `Skill` rule (or something that is not text,
/// which the gate then judges).
fn names_skills(settings: &earshot_host::settings::Settings) -> bool {
    settings
        .files
        .iter()
        .filter_map(|file| file.get("permissions")?.get("deny"))
        .any(|deny| match deny.as_array() {
            Some(rules) => rules
                .iter()
                .any(|rule| rule.as_str().is_none_or(|rule| rule.starts_with("Skill"))),
            None => true,
        })
}

/// Whether `item` runs now, and if not what to do: one line.
fn state(item: &LoadedItem) -> String {
    match item.origin {
        ItemOrigin::User => "yours".into(),
        ItemOrigin::Project => item.trust.explain(item.kind.trust_kind(), &item.name),
    }
}

fn invoked_by(item: &LoadedItem) -> &'static str {
    match (item.model_invocable(), item.user_invocable()) {
        (true, true) => "model, /name",
        (true, false) => "model",
        (false, true) => "/name only",
        (false, false) => "nobody",
    }
}

fn item_json(item: &LoadedItem, slash: Option<&str>) -> Value {
    json!({
        "name": item.name,
        "kind": item.kind,
        "source": item.origin,
        "file": item.file,
        "digest": item.digest,
        "trusted": item.is_active(),
        "state": state(item),
        "slash": slash,
        "model_invocable": item.model_invocable(),
        "user_invocable": item.user_invocable(),
        "description": item.description(),
        "asks_for": item.frontmatter.allowed_tools,
        "frontmatter": item.frontmatter,
        "files": item.files,
    })
}

/// The `/name` an item answers to in `library`, if any.
fn slash_name(library: &Library, item: &LoadedItem) -> Option<String> {
    [item.name.clone(), format!("project:{}", item.name)]
        .into_iter()
        .find(|name| {
            library
                .slash(name)
                .is_some_and(|found| found.file == item.file)
        })
}

fn list(context: &Context, kind: ItemKind, as_json: bool) -> CommandResult {
    let library = Library::load(&context.settings);
    // `commands list` shows the skills one can type too.
    let shown: Vec<&LoadedItem> = library
        .items()
        .iter()
        .filter(|item| {
            item.kind == kind
                || (kind == ItemKind::Command && item.is_active() && item.user_invocable())
        })
        .collect();
    let problems: Vec<String> = library
        .problems_of(kind)
        .into_iter()
        .map(ToString::to_string)
        .collect();
    // The rules are compiled only when a deny list names a skill at all: listing stays at the
    // process floor otherwise.
    let gate = names_skills(&context.settings).then(|| context.gate());
    let denied = |item: &LoadedItem| {
        item.kind == ItemKind::Skill
            && gate
                .as_ref()
                .is_some_and(|gate| skill_denied(gate, &item.name).is_some())
    };
    let catalogue = (kind == ItemKind::Skill)
        .then(|| Catalogue::build(library.model_skills(), budget(&context.settings)));
    if as_json {
        let items: Vec<Value> = shown
            .iter()
            .map(|item| {
                let mut value = item_json(
                    item,
                    slash_name(&library, item)
                        .filter(|_| !denied(item))
                        .as_deref(),
                );
                value["denied"] = Value::Bool(denied(item));
                value
            })
            .collect();
        output::json(&json!({
            kind.noun_plural(): items,
            "problems": problems,
            "catalogue_notice": catalogue.as_ref().and_then(Catalogue::notice),
        }));
        return Ok(exit::OK);
    }
    for problem in &problems {
        output::warning_line(problem);
    }
    if shown.is_empty() {
        output::say(&format!(
            "no {} found (looked in {})",
            kind.noun_plural(),
            match kind {
                ItemKind::Skill =>
                    "~/.earshot/skills, ~/.agents/skills, .earshot/skills, .agents/skills",
                ItemKind::Command => "~/.earshot/commands, .earshot/commands",
            }
        ));
        return Ok(exit::OK);
    }
    let rows: Vec<Vec<String>> = shown
        .iter()
        .map(|item| {
            let slash = slash_name(&library, item)
                .filter(|_| !denied(item))
                .map(|name| format!("/{name}"))
                .unwrap_or_else(|| "-".into());
            let name = if item.kind == kind {
                item.name.clone()
            } else {
                format!("{} (skill)", item.name)
            };
            let asks = if item.frontmatter.allowed_tools.is_empty() {
                "-".to_string()
            } else {
                item.frontmatter.allowed_tools.join(" ")
            };
            let state = if denied(item) {
                "denied by a Skill(…) rule".to_string()
            } else {
                state(item)
            };
            vec![
                name,
                item.origin.as_str().into(),
                state,
                match kind {
                    ItemKind::Skill => invoked_by(item).into(),
                    ItemKind::Command => slash,
                },
                asks,
                earshot_host::skills::catalogue::sanitised_line(item.description(), 300),
            ]
        })
        .collect();
    output::table(
        &[
            "NAME",
            "SOURCE",
            "STATE",
            match kind {
                ItemKind::Skill => "INVOKED BY",
                ItemKind::Command => "TYPE",
            },
            "ASKS FOR",
            "DESCRIPTION",
        ],
        &rows,
    );
    if let Some(notice) = catalogue.as_ref().and_then(Catalogue::notice) {
        output::note(&notice);
    }
    Ok(exit::OK)
}

/// The body with each `@path` and `` !`cmd` `` marked, each line stripped of escapes.
fn marked(body: &str) -> String {
    let mut text = String::new();
    for piece in pieces(body) {
        match piece {
            Piece::Text(part) => text.push_str(&part),
            Piece::Include(path) => text.push_str(&format!("⟦@ includes {path}⟧")),
            Piece::Shell(line) => text.push_str(&format!("⟦! runs: {line}⟧")),
        }
    }
    // The review must see what a terminal would not show: escapes, controls and invisible
    // characters are made visible, never dropped.
    earshot_host::skills::catalogue::visible(&text)
}

fn show(context: &Context, kind: ItemKind, name: &str, as_json: bool) -> CommandResult {
    let library = Library::load(&context.settings);
    let items = library.named(kind, name);
    if items.is_empty() {
        let problem = library.problems().iter().find(|problem| {
            problem
                .path
                .to_string_lossy()
                .contains(name.trim_start_matches('/'))
        });
        return Err(match problem {
            Some(problem) => Failure::new(format!(
                "{} \"{name}\" did not load: {problem}",
                kind.as_str()
            )),
            None => Failure::new(format!("there is no {} \"{name}\"", kind.as_str()))
                .hint(format!("`earshot {} list` shows them", kind.noun_plural())),
        });
    }
    let mut shown = Vec::new();
    for item in items {
        // `show` is the review before trust: it reads the body as it is now, trusted or not.
        let body = match read_body(item) {
            Ok(body) => body,
            Err(why) => return Err(Failure::new(why)),
        };
        if as_json {
            let mut value = item_json(item, slash_name(&library, item).as_deref());
            let marks: Vec<Value> = pieces(&body)
                .into_iter()
                .filter_map(|piece| match piece {
                    Piece::Include(path) => Some(json!({"include": path})),
                    Piece::Shell(line) => Some(json!({"shell": line})),
                    Piece::Text(_) => None,
                })
                .collect();
            value["body"] = Value::String(body);
            value["marks"] = Value::Array(marks);
            shown.push(value);
            continue;
        }
        let fm = &item.frontmatter;
        let mut lines = vec![
            format!(
                "{} {} ({})",
                item.kind.as_str(),
                item.name,
                item.origin.as_str()
            ),
            format!("file: {}", item.file.display()),
            format!("digest: {}", item.digest),
            format!("state: {}", state(item)),
            format!("invoked by: {}", invoked_by(item)),
        ];
        let mut field = |label: &str, value: Option<String>| {
            if let Some(value) = value.filter(|value| !value.is_empty()) {
                lines.push(format!(
                    "{label}: {}",
                    earshot_host::skills::catalogue::visible(&value)
                ));
            }
        };
        field("description", fm.description.clone());
        field("when to use", fm.when_to_use.clone());
        field("argument hint", fm.argument_hint.clone());
        field("arguments", Some(fm.arguments.join(" ")));
        field(
            "asks for (not pre-approved)",
            Some(fm.allowed_tools.join(" ")),
        );
        field("disallowed tools", Some(fm.disallowed_tools.join(" ")));
        field("paths", Some(fm.paths.join(" ")));
        field("model", fm.model.clone());
        field("effort", fm.effort.clone());
        field("license", fm.license.clone());
        field("compatibility", fm.compatibility.clone());
        field("ignored fields", Some(fm.ignored.join(" ")));
        if !item.files.is_empty() {
            field("files", Some(item.files.join(" ")));
        }
        for line in lines {
            output::say(&line);
        }
        output::out("---");
        output::out(&marked(&body));
        output::out("");
    }
    if as_json {
        output::json(&Value::Array(shown));
    }
    Ok(exit::OK)
}

/// An item's body for review: re-read from disk (refused when it changed since it was listed).
fn read_body(item: &LoadedItem) -> Result<String, String> {
    current_body(item).map(|(body, _, _)| body)
}

fn trust(context: &Context, kind: ItemKind, name: &str, reviewed: Option<&str>) -> CommandResult {
    let digest = trust_item(&context.settings, kind, name, reviewed)
        .map_err(|error| Failure::new(error.to_string()))?;
    output::say(&format!(
        "trusted {} \"{}\" as it is now ({digest}); any change to {} lapses the trust",
        kind.as_str(),
        name.trim_start_matches('/'),
        match kind {
            ItemKind::Skill => "a file of its folder",
            ItemKind::Command => "its file",
        }
    ));
    Ok(exit::OK)
}

fn untrust(context: &Context, kind: ItemKind, name: &str) -> CommandResult {
    let removed = untrust_item(&context.settings, kind, name)
        .map_err(|error| Failure::new(error.to_string()))?;
    let name = name.trim_start_matches('/');
    output::say(&if removed {
        format!("{} \"{name}\" is no longer trusted", kind.as_str())
    } else {
        format!("{} \"{name}\" had no trust record", kind.as_str())
    });
    Ok(exit::OK)
}

async fn expand(
    context: &Context,
    name: &str,
    arguments: &[String],
    as_json: bool,
) -> CommandResult {
    let library = Library::load(&context.settings);
    let gate = context.gate();
    let prompter: Box<dyn Prompter> =
        if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            Box::new(TerminalPrompter::stdio())
        } else {
            Box::new(NonInteractivePrompter)
        };
    // The words as typed, quoted again where needed, so `$ARGUMENTS` and the split agree.
    let raw = arguments
        .iter()
        .map(|word| {
            if word.is_empty()
                || word
                    .chars()
                    .any(|c| c.is_whitespace() || "'\"\\".contains(c))
            {
                shell_words::quote(word).into_owned()
            } else {
                word.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    let expansion = expand_command(
        &library,
        &context.settings,
        &gate,
        prompter.as_ref(),
        name,
        &raw,
    )
    .await
    .map_err(|error| {
        let denied = matches!(
            error,
            earshot_host::skills::ExpandError::Shell { .. }
                | earshot_host::skills::ExpandError::Include { .. }
        );
        let failure = Failure::new(error.to_string());
        if denied {
            failure.code(exit::DENIED)
        } else {
            failure
        }
    })?;
    if as_json {
        output::json(&serde_json::to_value(&expansion).unwrap_or_default());
    } else {
        output::out(
            &expansion
                .text
                .lines()
                .map(strip_for_terminal)
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
    Ok(exit::OK)
}
