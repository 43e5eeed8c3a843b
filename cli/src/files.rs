//! `earshot extensions …` and `earshot plugins …`: sources that are files in a folder.

use std::collections::HashMap;
use std::path::PathBuf;

use clap::Subcommand;
use serde_json::json;

#[cfg(feature = "js")]
use earshot_host::loaders::extensions::{limits_from_settings, load_all};
use earshot_host::names::SourceKind;
#[cfg(feature = "js")]
use earshot_host::sandbox::SchemaValidator;
use earshot_host::sandbox::{ComponentCache, SandboxEngine, SandboxLimits, ToolComponent};
use earshot_host::sources::{
    FoundFile, admission, extension_snapshot, find_component, find_components, find_extension,
    find_extensions, is_shadowed,
};
use earshot_host::trust::{Manifest, TrustState, digest_of, record_trust_parts, remove_trust};

use super::{CommandResult, Context, Failure, exit, output};

#[derive(Debug, Subcommand)]
pub(crate) enum FilesCommand {
    /// Every one found, with its scope, path and state. Imports and runs nothing.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Trust project ones as they are now, so that they load.
    Trust {
        /// Their names (the file stems).
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Remove the trust records of project ones.
    Untrust {
        /// Their names (the file stems).
        #[arg(required = true)]
        names: Vec<String>,
    },
}

pub(crate) fn run(context: &Context, kind: SourceKind, command: FilesCommand) -> CommandResult {
    match command {
        FilesCommand::List { json } => list(context, kind, json),
        FilesCommand::Trust { names } => {
            super::each_name(&names, |name| trust(context, kind, name))
        }
        FilesCommand::Untrust { names } => {
            super::each_name(&names, |name| untrust(context, kind, name))
        }
    }
}

fn found(context: &Context, kind: SourceKind) -> Vec<FoundFile> {
    match kind {
        SourceKind::Extension => find_extensions(&context.settings),
        _ => find_components(&context.settings),
    }
}

/// What was read of a file to decide its trust: the digest a trust record binds to, and for a
/// component the very bytes that were hashed (so what loads is what was checked).
pub(crate) struct Hashed {
    /// `sha256:…` of the component, or of the extension's module graph.
    pub digest: String,
    /// The component's bytes; `None` for an extension.
    pub bytes: Option<Vec<u8>>,
    /// An extension's digest part by part (see [`Manifest`]); `None` for a component.
    pub manifest: Option<Manifest>,
}

/// Reads and hashes a found file.
pub(crate) fn file_digest(file: &FoundFile) -> Result<Hashed, String> {
    match file.kind {
        SourceKind::Extension => extension_snapshot(&file.path).map(|snapshot| Hashed {
            digest: snapshot.digest,
            bytes: None,
            manifest: Some(snapshot.manifest),
        }),
        _ => earshot_host::sources::read_capped(
            &file.path,
            earshot_host::sources::MAX_COMPONENT_BYTES,
        )
        .map(|bytes| Hashed {
            digest: digest_of(&bytes),
            bytes: Some(bytes),
            manifest: None,
        }),
    }
}

/// The state of a found file, as `list` shows it.
pub(crate) fn file_state(
    context: &Context,
    file: &FoundFile,
    shadowed: bool,
) -> (String, Option<TrustState>, Option<Hashed>) {
    if let Some(refusal) = file.name_refusal() {
        return (refusal, None, None);
    }
    if shadowed {
        return (
            format!("shadowed by the user {} of the same name", file.kind.noun()),
            None,
            None,
        );
    }
    match file_digest(file) {
        Err(reason) => (format!("failed: {reason}"), None, None),
        Ok(hashed) => {
            let state = admission(
                &context.settings,
                file.kind,
                &file.name,
                file.scope,
                &hashed.digest,
                hashed.manifest.as_ref(),
            );
            let text = if state.is_trusted() {
                if file.scope.needs_trust() {
                    "trusted".to_string()
                } else {
                    "loads (your own file)".to_string()
                }
            } else {
                state.explain(file.kind, &file.name)
            };
            (text, Some(state), Some(hashed))
        }
    }
}

/// The tools of a component that may load, by loading the very bytes whose digest was trusted
/// (from the compiled-component cache); an error when it does not load. Never called for
/// anything untrusted.
fn component_tools(file: &FoundFile, hashed: &Hashed) -> Result<Vec<String>, String> {
    let bytes = hashed.bytes.as_deref().unwrap_or_default();
    let sha256 = hashed
        .digest
        .strip_prefix("sha256:")
        .unwrap_or(&hashed.digest);
    let component = ToolComponent::load_with_digest(
        &SandboxEngine::shared(),
        &ComponentCache::user(),
        &file.name,
        bytes,
        sha256,
        SandboxLimits::TOOL_COMPONENT,
    )
    .map_err(|error| error.to_string())?;
    Ok(component
        .tools()
        .iter()
        .map(|tool| tool.name.clone())
        .collect())
}

/// Each extension file's tool names once loaded, or why it did not load.
type ExtensionTools = Vec<(std::path::PathBuf, Result<Vec<String>, String>)>;

/// The tools of every extension that may load (each on its own thread, all at once), or why it
/// failed, by path. Untrusted ones are never read into Boa.
#[cfg(feature = "js")]
fn extension_tools(context: &Context) -> Result<ExtensionTools, Failure> {
    let validator = SchemaValidator::new(&SandboxEngine::shared(), &ComponentCache::user())
        .map_err(|error| Failure::new(error.to_string()))?;
    let limits = limits_from_settings(&context.settings);
    Ok(load_all(&context.settings, &validator, limits)
        .into_iter()
        .map(|outcome| {
            let tools = outcome.result.map(|loaded| {
                loaded
                    .tools
                    .iter()
                    .map(|(tool, _)| tool.name.clone())
                    .collect()
            });
            (outcome.file.path, tools)
        })
        .collect())
}

/// Without the JS runtime no extension loads: each says so.
#[cfg(not(feature = "js"))]
fn extension_tools(context: &Context) -> Result<ExtensionTools, Failure> {
    Ok(earshot_host::sources::find_extensions(&context.settings)
        .into_iter()
        .map(|file| {
            let reason = earshot_host::loaders::no_extensions::NO_JS_RUNTIME.to_string();
            (file.path, Err(reason))
        })
        .collect())
}

/// Every file that runs because an extension that may load imports it (by canonical path), with
/// the names of those extensions. A file directly in the extensions folder can be both an
/// extension of its own (untrusted, say) and the helper of a trusted one: then it runs anyway.
fn helpers(context: &Context, files: &[FoundFile]) -> HashMap<PathBuf, Vec<String>> {
    let mut importers: HashMap<PathBuf, Vec<String>> = HashMap::new();
    for file in files {
        if is_shadowed(files, file) || file.name_refusal().is_some() {
            continue;
        }
        let Ok(snapshot) = extension_snapshot(&file.path) else {
            continue;
        };
        let state = admission(
            &context.settings,
            file.kind,
            &file.name,
            file.scope,
            &snapshot.digest,
            Some(&snapshot.manifest),
        );
        if !state.is_trusted() {
            continue;
        }
        let own = file.path.canonicalize().ok();
        for path in snapshot.files.keys() {
            if own.as_ref() != Some(path) {
                importers
                    .entry(path.clone())
                    .or_default()
                    .push(file.name.clone());
            }
        }
    }
    importers
}

/// `text` for a file that also runs as the helper of `importers`.
fn helper_text(file: &FoundFile, text: String, loads: bool, importers: &[String]) -> String {
    let names = importers.join(", ");
    if loads {
        format!("{text}; also runs as a helper of {names}")
    } else if file.scope.needs_trust() {
        format!("runs as a helper of {names} (trusted with it); as an extension of its own: {text}")
    } else {
        format!("runs as a helper of {names} (your own); as an extension of its own: {text}")
    }
}

/// One row of `list`: the file, its state as shown, its trust, its tools, and the extensions
/// that import it.
struct Row {
    file: FoundFile,
    text: String,
    state: Option<TrustState>,
    tools: Vec<String>,
    importers: Vec<String>,
}

fn list(context: &Context, kind: SourceKind, as_json: bool) -> CommandResult {
    let files = found(context, kind);
    let extension_results = if kind == SourceKind::Extension {
        extension_tools(context)?
    } else {
        Vec::new()
    };
    let helpers = if kind == SourceKind::Extension {
        helpers(context, &files)
    } else {
        HashMap::new()
    };
    let rows: Vec<Row> = files
        .iter()
        .cloned()
        .map(|file| {
            let shadowed = is_shadowed(&files, &file);
            let (mut text, state, hashed) = file_state(context, &file, shadowed);
            let mut tools = Vec::new();
            let may_load = !shadowed && state.as_ref().is_some_and(TrustState::is_trusted);
            if let (SourceKind::Plugin, true, Some(hashed)) = (kind, may_load, &hashed) {
                match component_tools(&file, hashed) {
                    Ok(names) => tools = names,
                    Err(reason) => text = format!("failed: {reason}"),
                }
            }
            if kind == SourceKind::Extension && may_load {
                match extension_results
                    .iter()
                    .find(|(path, _)| *path == file.path)
                {
                    Some((_, Ok(names))) => {
                        tools = names.clone();
                        text = if file.scope.needs_trust() {
                            "loaded (trusted)".to_string()
                        } else {
                            "loaded (your own file)".to_string()
                        };
                    }
                    Some((_, Err(reason))) => text = format!("failed: {reason}"),
                    None => {}
                }
            }
            let importers = file
                .path
                .canonicalize()
                .ok()
                .and_then(|path| helpers.get(&path))
                .cloned()
                .unwrap_or_default();
            if !importers.is_empty() {
                let loads = may_load && !text.starts_with("failed");
                text = helper_text(&file, text, loads, &importers);
            }
            Row {
                file,
                text,
                state,
                tools,
                importers,
            }
        })
        .collect();
    if as_json {
        let items: Vec<_> = rows
            .iter()
            .map(|Row { file, text, state, tools, importers }| {
                let mut item = json!({"name": file.name, "scope": file.scope, "path": file.path, "state": text, "trust": state, "tools": tools});
                if kind == SourceKind::Extension {
                    // The extensions that import this file, so that it runs as their helper.
                    item["helper_of"] = json!(importers);
                }
                item
            })
            .collect();
        output::json(&json!({ kind.cli_noun(): items }));
        return Ok(exit::OK);
    }
    if rows.is_empty() {
        let place = match kind {
            SourceKind::Extension => {
                ".earshot/extensions/ or the extensions/ folder of your config dir"
            }
            _ => ".earshot/plugins/ or the plugins/ folder of your config dir",
        };
        output::out(&format!("no {} found in {place}", kind.cli_noun()));
        return Ok(exit::OK);
    }
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(
            |Row {
                 file, text, tools, ..
             }| {
                let mut row = vec![
                    file.name.clone(),
                    file.scope.as_str().to_string(),
                    file.path.display().to_string(),
                    text.clone(),
                ];
                {
                    row.insert(
                        3,
                        if tools.is_empty() {
                            "-".into()
                        } else {
                            tools.join(", ")
                        },
                    );
                }
                row
            },
        )
        .collect();
    output::table(&["NAME", "SCOPE", "PATH", "TOOLS", "STATE"], &table);
    Ok(exit::OK)
}

fn lookup(context: &Context, kind: SourceKind, name: &str) -> Result<FoundFile, Failure> {
    let file = match kind {
        SourceKind::Extension => find_extension(&context.settings, name),
        _ => find_component(&context.settings, name),
    };
    file.ok_or_else(|| {
        Failure::new(format!(
            "no {} named \"{name}\" in this project",
            kind.noun()
        ))
        .hint(format!(
            "`earshot {} list` shows what is there",
            kind.cli_noun()
        ))
    })
}

fn trust(context: &Context, kind: SourceKind, name: &str) -> CommandResult {
    let file = lookup(context, kind, name)?;
    if let Some(refusal) = file.name_refusal() {
        let hint = if file.name_problem.is_some() {
            "rename the file".to_string()
        } else {
            format!(
                "keep one file named \"{name}\", then run `earshot {} trust {name}`",
                kind.cli_noun()
            )
        };
        return Err(
            Failure::new(format!("{} \"{name}\" cannot load: {refusal}", kind.noun())).hint(hint),
        );
    }
    if !file.scope.needs_trust() {
        return Err(Failure::new(format!(
            "{} \"{name}\" is in your own config dir ({}) and loads without trust",
            kind.noun(),
            file.path.display()
        )));
    }
    let hashed = file_digest(&file).map_err(Failure::new)?;
    record_trust_parts(
        &context.settings,
        kind,
        name,
        &hashed.digest,
        hashed.manifest.as_ref(),
    )
    .map_err(|error| Failure::new(error.to_string()))?;
    output::say(&format!(
        "trusted {} \"{name}\" ({}) as it is now; a change to it lapses the trust",
        kind.noun(),
        file.path.display()
    ));
    Ok(exit::OK)
}

fn untrust(context: &Context, kind: SourceKind, name: &str) -> CommandResult {
    let removed = remove_trust(&context.settings, kind, name)
        .map_err(|error| Failure::new(error.to_string()))?;
    if removed {
        output::out(&format!(
            "{} \"{name}\" is no longer trusted in this project",
            kind.noun()
        ));
        Ok(exit::OK)
    } else {
        Err(Failure::new(format!(
            "{} \"{name}\" has no trust record in this project",
            kind.noun()
        )))
    }
}
