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
use crate::trust::{TrustKey, TrustState};

use super::config::{ServerDefinition, ServerEntry, Transport};

/// The most bytes of one project file hashed into a server's digest; past that its size and the
/// first bytes stand for it.
const MAX_HASHED_FILE_BYTES: u64 = 64 << 20;

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
/// hold expanded secrets) over the canonical definition and the bytes of every project file its
/// command and arguments name, so a script in the repository changed by a pull lapses the trust.
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
        for file in named_project_files(command, args, &dir, root) {
            material.extend_from_slice(b"\0file\0");
            material.extend_from_slice(file.to_string_lossy().as_bytes());
            material.push(0);
            material.extend_from_slice(hash_file(&file).as_bytes());
        }
    }
    key.keyed_digest(&material)
}

/// The project files (inside `root`) that `command` and `args` name, as written or after an
/// `--option=` prefix, relative to `dir`; sorted and without repeats.
fn named_project_files(command: &str, args: &[String], dir: &Path, root: &Path) -> Vec<PathBuf> {
    let Ok(root) = root.canonicalize() else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .flat_map(|word| [Some(word), word.split_once('=').map(|(_, value)| value)])
        .flatten()
        .filter(|word| !word.is_empty())
        .filter_map(|word| dir.join(word).canonicalize().ok())
        .filter(|path| path.starts_with(&root) && path.is_file())
        .collect();
    files.sort();
    files.dedup();
    files
}

/// `sha256:<hex>` of a file's bytes (at most [`MAX_HASHED_FILE_BYTES`], plus its length), or why
/// it could not be read (which then is what the digest binds to).
fn hash_file(path: &Path) -> String {
    let Ok(file) = std::fs::File::open(path) else {
        return "unreadable".into();
    };
    let length = file.metadata().map(|meta| meta.len()).unwrap_or_default();
    let mut hasher = Sha256::new();
    hasher.update(length.to_be_bytes());
    let mut reader = file.take(MAX_HASHED_FILE_BYTES);
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => hasher.update(&buffer[..read]),
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
    let key = settings
        .user_config_dir
        .as_deref()
        .and_then(|dir| TrustKey::load(dir).ok().flatten());
    let digest = key
        .map(|key| {
            server_digest(
                &key,
                definition,
                &start_dir(settings, entry),
                settings
                    .project
                    .as_ref()
                    .map(|project| project.root.as_path()),
            )
        })
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
    Ok(server_digest(
        &key,
        definition,
        &start_dir(settings, entry),
        settings
            .project
            .as_ref()
            .map(|project| project.root.as_path()),
    ))
}
