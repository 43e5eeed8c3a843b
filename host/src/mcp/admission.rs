//! Which MCP servers may start, in which directory, and what a server's trust record binds to.
//!
//! A server the repository chose (`.earshot/settings.json`) or that earshot did not write for the
//! user (`.earshot/settings.local.json` by hand, a download, a submodule) starts only with a
//! trust record. The user's own servers start outside the project, so `npx`, `python3 -m` or
//! `node server.js` cannot pick up the repository's files through a server the user defined.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::names::SourceKind;
use crate::settings::{Layer, Settings};
use crate::sources::{Scope, admission};
use crate::trust::{TrustKey, TrustState, user_key};

use super::config::{ServerDefinition, ServerEntry, Transport};

/// The most bytes hashed into one server's digest, over every project file and folder its command
/// and arguments name; past that the rest is covered by its size and count only.
const MAX_HASHED_BYTES: u64 = 64 << 20;
/// The most files hashed into one server's digest.
const MAX_HASHED_FILES: usize = 5_000;
/// Folders not walked when a named folder is hashed: version control and installed packages.
const SKIPPED_FOLDERS: &[&str] = &[".git", "node_modules", "target", ".venv", "__pycache__"];

/// The directory a stdio server starts in (before its own `cwd`, which is relative to it): the
/// project root for a project server, and for the user's own servers (user or local file) the
/// user config dir, else the home directory, never the project.
pub fn start_dir(settings: &Settings, entry: &ServerEntry) -> PathBuf {
    if entry.layer == Layer::Project
        && let Some(project) = &settings.project
    {
        return project.root.clone();
    }
    settings
        .user_config_dir
        .clone()
        .filter(|dir| dir.is_dir())
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// What a server's trust record binds to: HMAC-SHA256 under the user's key (the definition can
/// hold expanded secrets) over the canonical definition and the bytes of every project file and
/// folder its command and arguments name (within a budget), so a script in the repository changed
/// by a pull lapses the trust.
pub fn server_digest(
    key: &TrustKey,
    definition: &ServerDefinition,
    start_dir: &Path,
    project_root: Option<&Path>,
) -> String {
    let mut material = definition.canonical_json().into_bytes();
    if let (
        Transport::Stdio {
            command, args, cwd, ..
        },
        Some(root),
    ) = (&definition.transport, project_root)
    {
        let dir = cwd
            .as_deref()
            .map(|own| start_dir.join(own))
            .unwrap_or_else(|| start_dir.to_path_buf());
        let mut budget = Budget {
            bytes: MAX_HASHED_BYTES,
            files: MAX_HASHED_FILES,
        };
        for path in named_project_paths(command, args, &dir, root) {
            hash_tree(&path, &mut material, &mut budget);
        }
    }
    key.keyed_digest(&material)
}

/// What is left to hash for one digest.
struct Budget {
    bytes: u64,
    files: usize,
}

/// The project files and folders (inside `root`) that `command` and `args` name, as written, after
/// an `--option=` prefix, or as a Python module (`-m pkg.mod` names `pkg/mod.py` or `pkg/mod/`),
/// relative to `dir`; sorted and without repeats. `node .` names the folder it starts in.
fn named_project_paths(command: &str, args: &[String], dir: &Path, root: &Path) -> Vec<PathBuf> {
    let Ok(root) = root.canonicalize() else {
        return Vec::new();
    };
    let mut words: Vec<String> = Vec::new();
    for word in std::iter::once(command).chain(args.iter().map(String::as_str)) {
        words.push(word.to_string());
        if let Some((_, value)) = word.split_once('=') {
            words.push(value.to_string());
        }
        let module = word.replace('.', "/");
        words.push(format!("{module}.py"));
        words.push(module);
    }
    let mut paths: Vec<PathBuf> = words
        .iter()
        .filter(|word| !word.is_empty())
        .filter_map(|word| dir.join(word).canonicalize().ok())
        .filter(|path| path.starts_with(&root))
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// Adds a file's, or a folder tree's, paths and contents to `material`, within `budget`. Links
/// are not followed; what is past the budget is covered by a marker only.
fn hash_tree(path: &Path, material: &mut Vec<u8>, budget: &mut Budget) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.is_file() {
        material.extend_from_slice(b"\0file\0");
        material.extend_from_slice(path.to_string_lossy().as_bytes());
        material.push(0);
        if budget.files == 0 || budget.bytes == 0 {
            material.extend_from_slice(format!("unhashed:{}", meta.len()).as_bytes());
            return;
        }
        budget.files -= 1;
        material.extend_from_slice(hash_file(path, budget).as_bytes());
    } else if meta.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        let mut children: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|entry| {
                !SKIPPED_FOLDERS.contains(&entry.file_name().to_string_lossy().as_ref())
            })
            .map(|entry| entry.path())
            .collect();
        children.sort();
        for child in children {
            hash_tree(&child, material, budget);
        }
    }
}

/// `sha256:<hex>` of a file's length and bytes (as many as `budget` allows), or `unreadable`.
fn hash_file(path: &Path, budget: &mut Budget) -> String {
    let Ok(file) = std::fs::File::open(path) else {
        return "unreadable".into();
    };
    let length = file.metadata().map(|meta| meta.len()).unwrap_or_default();
    let mut hasher = Sha256::new();
    hasher.update(length.to_be_bytes());
    let mut reader = file.take(budget.bytes);
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => {
                hasher.update(&buffer[..read]);
                budget.bytes = budget.bytes.saturating_sub(read as u64);
            }
        }
    }
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

/// Whether `entry` may start now, and if not the one line saying why and what to run. The
/// user's own file (`settings.json` in the config dir) starts without trust; the project's
/// checked-in and local files need a valid record.
pub fn server_admission(settings: &Settings, entry: &ServerEntry) -> Result<(), String> {
    let definition = entry.definition.as_ref().map_err(Clone::clone)?;
    let scope = Scope::of_layer(entry.layer);
    if !scope.needs_trust() {
        return Ok(());
    }
    let key = user_key(settings);
    let digest = key
        .map(|key| entry_digest(settings, entry, definition, &key))
        .unwrap_or_default();
    match admission(settings, SourceKind::Mcp, &entry.name, scope, &digest) {
        TrustState::Trusted => Ok(()),
        TrustState::NotTrusted if entry.layer == Layer::Local => Err(format!(
            "not written by you: a server in .earshot/settings.local.json starts only when earshot wrote it (`earshot mcp add -s local`), since a download or submodule can ship that file; review it, then run `earshot mcp trust {}`",
            entry.name
        )),
        other => Err(other.explain(SourceKind::Mcp, &entry.name)),
    }
}

/// The entry that starts under `entry`'s name, with whether it may start (as
/// [`server_admission`], computed once: it hashes project files). That is `entry` itself, except
/// that a local-file entry that is not trusted never displaces the user's own server of that name
/// (a shipped local file could otherwise take it over, and once trusted inherit the user's allow
/// rules); the user's is used, with the local one reported.
pub fn effective_entry(
    settings: &Settings,
    entry: ServerEntry,
) -> (ServerEntry, Result<(), String>) {
    let admitted = server_admission(settings, &entry);
    match (&entry.replaces_user_entry, admitted) {
        (Some(user), Err(why)) => {
            let mut user = (**user).clone();
            user.refused.push(format!(
                "the definition in .earshot/settings.local.json is not used: {why}"
            ));
            let admitted = server_admission(settings, &user);
            (user, admitted)
        }
        (_, admitted) => (entry, admitted),
    }
}

/// The digest `earshot mcp trust` records for `entry`, creating the user's key on first use.
///
/// # Errors
/// Why the entry cannot be trusted (unusable definition, or no usable key).
pub fn digest_for_trust(settings: &Settings, entry: &ServerEntry) -> Result<String, String> {
    let definition = entry.definition.as_ref().map_err(Clone::clone)?;
    let config_dir = settings
        .user_config_dir
        .as_deref()
        .ok_or_else(|| crate::trust::TrustError::NoConfigDir.to_string())?;
    let key = TrustKey::load_or_create(config_dir).map_err(|error| error.to_string())?;
    Ok(entry_digest(settings, entry, definition, &key))
}

/// [`server_digest`] of `entry` as it starts here (its start directory, this project).
fn entry_digest(
    settings: &Settings,
    entry: &ServerEntry,
    definition: &ServerDefinition,
    key: &TrustKey,
) -> String {
    server_digest(
        key,
        definition,
        &start_dir(settings, entry),
        settings
            .project
            .as_ref()
            .map(|project| project.root.as_path()),
    )
}
