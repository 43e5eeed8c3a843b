//! `earshot mcp add|add-json|remove`: a server's entry checked exactly as the loader reads it
//! before anything is written, so a refused entry is never left behind to warn on every command.

use serde_json::json;

use earshot_host::mcp::{
    PROJECT_DIR_VARIABLE, ServerEntry, Transport, cwd_hint, digest_for_written, parse_entry,
    project_only_paths, read_servers, start_dir,
};
use earshot_host::names::SourceKind;
use earshot_host::settings::{
    Layer, ProjectPaths, Settings, edit_project_settings, edit_settings, ensure_local_files_ignored,
};
use earshot_host::trust::{record_written, remove_trust};

use super::mcp_servers::{ScopeArg, TransportArg, find, servers};
use super::{CommandResult, Context, Failure, exit, output};

/// What `mcp add` was given, before it becomes a definition.
pub(crate) struct AddArguments {
    pub transport: TransportArg,
    pub env: Vec<String>,
    pub headers: Vec<String>,
    pub cwd: Option<String>,
    pub command_or_url: String,
    pub args: Vec<String>,
}

/// The JSON definition `mcp add`'s arguments describe.
pub(crate) fn definition_of(arguments: AddArguments) -> Result<serde_json::Value, Failure> {
    let AddArguments {
        transport,
        env,
        headers,
        cwd,
        command_or_url,
        args,
    } = arguments;
    Ok(match transport {
        TransportArg::Stdio => {
            if !headers.is_empty() {
                return Err(Failure::new("--header is for http servers").code(exit::USAGE));
            }
            let mut definition = json!({"command": command_or_url, "args": args});
            if !env.is_empty() {
                definition["env"] = pairs(&env, '=', "--env KEY=VALUE")?;
            }
            if let Some(cwd) = cwd {
                definition["cwd"] = cwd.into();
            }
            definition
        }
        TransportArg::Http => {
            if !args.is_empty() || !env.is_empty() {
                return Err(Failure::new(
                    "an http server takes a URL and --header only, no arguments or --env",
                )
                .code(exit::USAGE));
            }
            let mut definition = json!({"type": "http", "url": command_or_url});
            if !headers.is_empty() {
                definition["headers"] = pairs(&headers, ':', "--header \"Name: value\"")?;
            }
            definition
        }
    })
}

/// `mcp add-json`'s text as a definition: JSON (a repeated key refused, as in a settings file:
/// it would drop an `env` or a header), and an object.
pub(crate) fn definition_from_json(name: &str, text: &str) -> Result<serde_json::Value, Failure> {
    let definition =
        earshot_host::settings::from_str_refusing_duplicates(text).map_err(|error| {
            Failure::new(format!(
                "the definition of \"{name}\" is not JSON: {error}; nothing was written"
            ))
            .code(exit::USAGE)
        })?;
    if !definition.is_object() {
        return Err(Failure::new(format!(
            "the definition of \"{name}\" must be a JSON object, as under mcpServers; nothing was written"
        ))
        .hint(r#"e.g. '{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}'"#)
        .code(exit::USAGE));
    }
    Ok(definition)
}

/// `KEY=VALUE` (or `Name: value`) pairs as a JSON object.
fn pairs(items: &[String], separator: char, form: &str) -> Result<serde_json::Value, Failure> {
    let mut map = serde_json::Map::new();
    for item in items {
        let (key, value) = item
            .split_once(separator)
            .filter(|(key, _)| !key.trim().is_empty())
            .ok_or_else(|| {
                Failure::new(format!("\"{item}\" is not of the form {form}")).code(exit::USAGE)
            })?;
        map.insert(
            key.trim().to_string(),
            value.trim_start().to_string().into(),
        );
    }
    Ok(serde_json::Value::Object(map))
}

/// The settings file of `layer` here, and the project root when it is inside the project.
fn file_of(
    context: &Context,
    layer: Layer,
) -> Result<(std::path::PathBuf, Option<std::path::PathBuf>), Failure> {
    let settings = &context.settings;
    let no_project = || {
        Failure::new("there is no project here; run this inside a project or pass --project DIR")
    };
    Ok(match layer {
        Layer::User => (
            settings
                .user_config_dir
                .as_ref()
                .ok_or_else(|| Failure::new("no user config dir: set EARSHOT_CONFIG_DIR or HOME"))?
                .join("settings.json"),
            None,
        ),
        Layer::Local => {
            let project = settings.project.as_ref().ok_or_else(no_project)?;
            (project.local_settings(), Some(project.root.clone()))
        }
        Layer::Project => {
            let project = settings.project.as_ref().ok_or_else(no_project)?;
            (project.project_settings(), Some(project.root.clone()))
        }
    })
}

/// Edits one settings file: symbolic links refused inside the project, and the local file (which
/// can hold tokens) never written unless git ignores it.
fn edit_file(
    path: &std::path::Path,
    root: Option<&std::path::Path>,
    change: impl FnOnce(&mut serde_json::Value),
) -> Result<(), Failure> {
    if let Some(root) = root {
        let project = ProjectPaths::new(root.to_path_buf());
        if path == project.local_settings() {
            ensure_local_files_ignored(&project)
                .map_err(|error| Failure::new(error.to_string()))?;
        }
    }
    match root {
        Some(root) => edit_project_settings(root, path, change),
        None => edit_settings(path, change),
    }
    .map_err(|error| Failure::new(format!("{}: {error}", path.display())))
}

/// A stand-in for each variable that is not set, so that checking an entry before writing it
/// finds what is wrong with its shape; an unset variable is reported after it is written.
fn set_or_stand_in(name: &str) -> Option<String> {
    Context::env(name).or_else(|| Some("http://unset.invalid".into()))
}

/// Refuses, before anything is written, an entry every command would then refuse: the same
/// check the loader makes, and a name the target file already defines (unless `force`).
fn check_before_writing(
    context: &Context,
    layer: Layer,
    path: &std::path::Path,
    name: &str,
    definition: &serde_json::Value,
    force: bool,
) -> Result<(), Failure> {
    let project_dir = context
        .settings
        .project
        .as_ref()
        .map(|project| project.root.to_string_lossy().into_owned());
    let env = |variable: &str| {
        if variable == PROJECT_DIR_VARIABLE {
            project_dir.clone()
        } else {
            set_or_stand_in(variable)
        }
    };
    if let Err(reason) = parse_entry(name, definition, layer, &env) {
        return Err(Failure::new(format!(
            "server \"{name}\" was not added: {reason}; nothing was written"
        ))
        .code(exit::USAGE));
    }
    if definition
        .get("command")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|command| command.trim().is_empty())
    {
        return Err(Failure::new(format!(
            "server \"{name}\" was not added: its command is empty; nothing was written"
        ))
        .code(exit::USAGE));
    }
    let users_own = context
        .settings
        .file(Layer::User)
        .filter(|_| layer == Layer::Project)
        .filter(|file| {
            file.get("mcpServers")
                .and_then(|servers| servers.get(name))
                .is_some()
        });
    if let Some(file) = users_own {
        return Err(Failure::new(format!(
            "your own settings ({}) define a server \"{name}\", which is the one this project uses: a project entry of that name would be ignored; nothing was written",
            file.path.display()
        ))
        .hint("give the project's server another name"));
    }
    let existing = context
        .settings
        .file(layer)
        .and_then(|file| file.get("mcpServers"))
        .and_then(|servers| servers.get(name));
    if existing.is_some() && !force {
        return Err(Failure::new(format!(
            "{} already defines a server \"{name}\"; nothing was written",
            path.display()
        ))
        .hint(format!(
            "pass --force to replace it, or `earshot mcp remove {name}` first"
        )));
    }
    Ok(())
}

/// `earshot mcp add` and `add-json`: checks the entry, writes it to `layer`'s file, and signs it
/// there when it is the local file.
pub(crate) fn add(
    context: &Context,
    layer: Layer,
    name: &str,
    definition: serde_json::Value,
    force: bool,
) -> CommandResult {
    earshot_host::names::check_source_name(name).map_err(|error| {
        Failure::new(format!(
            "invalid server name \"{name}\": {error}; nothing was written"
        ))
        .code(exit::USAGE)
    })?;
    if layer == Layer::Local && context.settings.local_file_refused() {
        return Err(Failure::new(
            ".earshot/settings.local.json (or .earshot/) is a symbolic link or not your file; replace it with your own regular file first",
        ));
    }
    if layer != Layer::User {
        context.require_project(&format!("`mcp add -s {}`", layer.as_str()))?;
    }
    let (path, root) = file_of(context, layer)?;
    check_before_writing(context, layer, &path, name, &definition, force)?;
    let mut not_an_object = false;
    edit_file(&path, root.as_deref(), |value| {
        let root = value.as_object_mut().expect("settings files hold objects");
        match root
            .entry("mcpServers")
            .or_insert_with(|| json!({}))
            .as_object_mut()
        {
            Some(servers) => {
                servers.insert(name.to_string(), definition);
            }
            None => not_an_object = true,
        }
    })?;
    if not_an_object {
        return Err(Failure::new(format!(
            "{}: mcpServers there is not an object; fix it by hand, nothing was changed",
            path.display()
        )));
    }
    // Read back what was written, as every command will: the entry that is used for this name.
    let settings = Settings::load(
        context.settings.user_config_dir.as_deref(),
        context.settings.project.clone(),
    );
    let entry = find(read_servers(&settings, &Context::env), name)?;
    if entry.layer != layer {
        output::warning_line(&format!(
            "server \"{name}\" is also defined in your {} settings, which is the definition used",
            entry.layer.as_str()
        ));
    }
    if let Err(reason) = &entry.definition {
        // The shape was checked above: what is left is a variable to set before it starts.
        output::warning_line(&format!(
            "server \"{name}\" cannot start until this is fixed: {reason}"
        ));
    } else if entry.layer == Layer::Local && layer == Layer::Local {
        // Your local file is yours: what earshot writes there is signed so it starts. Written
        // by earshot as the user asked, it may replace the user's own server of the same name
        // in this project, which a trusted record never can.
        let digest = digest_for_written(&settings, &entry).map_err(Failure::new)?;
        if let Some(why) = &digest.partial {
            output::warning_line(&format!("server \"{name}\"'s digest is partial: {why}"));
        }
        record_written(
            &settings,
            SourceKind::Mcp,
            name,
            &digest.value,
            Some(&digest.manifest),
        )
        .map_err(|error| Failure::new(error.to_string()))?;
    }
    output::say(&format!(
        "added server \"{name}\" to {} ({} settings)",
        path.display(),
        layer.as_str()
    ));
    if let Some(hint) = project_file_hint(&settings, &entry) {
        output::warning_line(&hint);
    }
    if layer == Layer::Project {
        output::say(&format!(
            "it starts once trusted: review it, then run `earshot mcp trust {name}` (everyone who checks it out does the same)"
        ));
    }
    Ok(exit::OK)
}

/// For one of your own stdio servers without a `cwd`: the `--cwd` form when an argument names a
/// project file that is not where it starts (your own servers start in your config dir).
fn project_file_hint(settings: &Settings, entry: &ServerEntry) -> Option<String> {
    let definition = entry.definition.as_ref().ok()?;
    let Transport::Stdio {
        command, args, cwd, ..
    } = &definition.transport
    else {
        return None;
    };
    let root = &settings.project.as_ref()?.root;
    let start = start_dir(settings, entry);
    if cwd.is_some() || start == *root {
        return None;
    }
    let paths = project_only_paths(command, args, &start, root);
    (!paths.is_empty()).then(|| cwd_hint(&entry.name, &paths, &start))
}

/// `earshot mcp remove`: the entry (and its trust record) from one settings file.
pub(crate) fn remove(context: &Context, scope: Option<ScopeArg>, name: &str) -> CommandResult {
    let layer = match scope {
        Some(scope) => scope.layer(),
        None => find(servers(context), name)?.layer,
    };
    let (path, root) = file_of(context, layer)?;
    if std::fs::symlink_metadata(&path).is_err() {
        return Err(Failure::new(format!("{} does not exist", path.display())));
    }
    let mut removed = false;
    edit_file(&path, root.as_deref(), |value| {
        if let Some(servers) = value.get_mut("mcpServers").and_then(|s| s.as_object_mut()) {
            removed = servers.shift_remove(name).is_some();
        }
    })?;
    if layer != Layer::User && context.settings.project.is_some() {
        let _ = remove_trust(&context.settings, SourceKind::Mcp, name);
    }
    if removed {
        output::say(&format!(
            "removed server \"{name}\" from {}",
            path.display()
        ));
        Ok(exit::OK)
    } else {
        Err(Failure::new(format!(
            "{} defines no server \"{name}\"",
            path.display()
        )))
    }
}
