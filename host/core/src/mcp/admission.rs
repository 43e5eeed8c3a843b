//! Which MCP servers may start, in which directory, and what a server's trust record binds to.
//!
//! A server the repository chose (`.earshot/settings.json`) or that earshot did not write for the
//! user (`.earshot/settings.local.json` by hand, a download, a submodule) starts only with a
//! trust record. The user's own servers start outside the project, so `npx`, `python3 -m` or
//! `node server.js` cannot pick up the repository's files through a server the user defined.
//!
//! A trusted project or local stdio server starts from the snapshot of what its admission hashed
//! ([`effective_launch`], see `trust::snapshot`): its words that named project files name their
//! read-only copies, its working directory stays where it was, `EARSHOT_PROJECT_DIR` names the
//! project, and Python runs with the safe path and the snapshot folders on `PYTHONPATH`.

use std::path::PathBuf;

use crate::names::SourceKind;
use crate::settings::{Layer, Settings};
use crate::sources::{Scope, admission};
use crate::trust::{TrustKey, TrustState, exec_launch, take_for_run, user_key, written_by_earshot};

use super::config::{ServerDefinition, ServerEntry, Transport};
use super::digest::{DigestError, ServerDigest, server_digest};

/// The directory a stdio server starts in (before its own `cwd`, which is relative to it): the
/// project root for a project server, and for the user's own servers (user or local file) the
/// user config dir, else the home directory, never the project.
pub fn start_dir(settings: &Settings, entry: &ServerEntry) -> PathBuf {
    if entry.layer == Layer::Project
        && let Some(project) = &settings.project
    {
        return project.root.clone();
    }
    user_start_dir(settings)
}

/// Where the user's own code starts (their servers, their hooks): the user config dir, else the
/// home directory, never the project, so a relative path in it cannot run a file the repository
/// chose.
pub fn user_start_dir(settings: &Settings) -> PathBuf {
    settings
        .user_config_dir
        .clone()
        .filter(|dir| dir.is_dir())
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// Whether `entry` may start now, and if not the one line saying why and what to run. The
/// user's own file (`settings.json` in the config dir) starts without trust; the project's
/// checked-in and local files need a valid record for the digest of what is there now.
pub fn server_admission(settings: &Settings, entry: &ServerEntry) -> Result<(), String> {
    admitted_digest(settings, entry).map(|_| ())
}

/// [`server_admission`], with the digest it judged trusted (none for the user's own servers).
fn admitted_digest(
    settings: &Settings,
    entry: &ServerEntry,
) -> Result<Option<ServerDigest>, String> {
    let definition = entry.definition.as_ref().map_err(Clone::clone)?;
    let scope = Scope::of_layer(entry.layer);
    if !scope.needs_trust() {
        return Ok(None);
    }
    let digest = match user_key(settings) {
        Some(key) => Some(
            entry_digest(settings, entry, definition, &key)
                .map_err(|error| format!("cannot be trusted: {error}"))?,
        ),
        None => None,
    };
    let state = admission(
        settings,
        SourceKind::Mcp,
        &entry.name,
        scope,
        digest.as_ref().map_or("", |digest| &digest.value),
        digest.as_ref().map(|digest| &digest.manifest),
    );
    match state {
        TrustState::Trusted => Ok(digest),
        TrustState::NotTrusted if entry.layer == Layer::Local => Err(format!(
            "not written by you: a server in .earshot/settings.local.json starts only when earshot wrote it (`earshot mcp add -s local`), since a download or submodule can ship that file; review it, then run `earshot mcp trust {}`",
            entry.name
        )),
        other => Err(other.explain(SourceKind::Mcp, &entry.name)),
    }
}

/// The entry that starts under `entry`'s name, with whether it may start (as
/// [`server_admission`], computed once: it hashes project files). That is `entry` itself, except
/// that a local-file entry under the name of the user's own server counts only when earshot
/// wrote it for the user (`earshot mcp add -s local`), never through `mcp trust`: a shipped local
/// file could otherwise take the user's server over and inherit the user's allow rules. Until
/// then the user's is used, with the local one reported.
pub fn effective_entry(
    settings: &Settings,
    entry: ServerEntry,
) -> (ServerEntry, Result<(), String>) {
    let (entry, admitted) = effective(settings, entry);
    (entry, admitted.map(|_| ()))
}

/// The entry that starts under `entry`'s name and whether it may start, as [`effective_entry`],
/// and when it may, the definition it starts with: a trusted project or local stdio server's
/// rewritten to run from the snapshot of what its admission hashed (see the module doc), made
/// now; any other as written.
pub fn effective_launch(
    settings: &Settings,
    entry: ServerEntry,
) -> (ServerEntry, Result<ServerDefinition, String>) {
    let (entry, admitted) = effective(settings, entry);
    let launch = admitted.and_then(|digest| {
        let definition = entry.definition.as_ref().map_err(Clone::clone)?;
        match digest {
            Some(digest) => launch_definition(settings, &entry, definition, &digest),
            None => Ok(definition.clone()),
        }
    });
    (entry, launch)
}

/// `definition` (a trusted server's, admitted with `digest`) as it starts: from the snapshot
/// of what `digest` covers, with `EARSHOT_PROJECT_DIR`.
fn launch_definition(
    settings: &Settings,
    entry: &ServerEntry,
    definition: &ServerDefinition,
    digest: &ServerDigest,
) -> Result<ServerDefinition, String> {
    let (
        Transport::Stdio {
            command,
            args,
            cwd,
            env,
        },
        Some(project),
        Some(config),
    ) = (
        &definition.transport,
        &settings.project,
        &settings.user_config_dir,
    )
    else {
        return Ok(definition.clone());
    };
    let snapshot = take_for_run(
        config,
        &project.root,
        &digest.value,
        &digest.manifest,
        &format!("earshot mcp trust {}", entry.name),
    )?;
    let start = start_dir(settings, entry);
    let dir = cwd.as_deref().map(|own| start.join(own)).unwrap_or(start);
    let launch = exec_launch(snapshot.as_ref(), &project.root, &dir, command, args, env);
    let mut env = launch.env;
    env.insert(
        "EARSHOT_PROJECT_DIR".into(),
        project.root.display().to_string(),
    );
    Ok(ServerDefinition {
        transport: Transport::Stdio {
            command: launch.program,
            args: launch.args,
            cwd: cwd.clone(),
            env,
        },
        ..definition.clone()
    })
}

/// [`effective_entry`], with the digest the used entry was admitted with.
fn effective(
    settings: &Settings,
    entry: ServerEntry,
) -> (ServerEntry, Result<Option<ServerDigest>, String>) {
    let Some(user) = &entry.replaces_user_entry else {
        let admitted = admitted_digest(settings, &entry);
        return (entry, admitted);
    };
    let why = match written_state(settings, &entry) {
        Ok(Some(digest)) => return (entry, Ok(Some(digest))),
        Ok(None) => format!(
            "it has the name of your own server and earshot did not write it as it is now (a download or submodule can ship that file, and `mcp trust` cannot give it your server's name); to replace your server in this project, run `earshot mcp add -s local {} -- COMMAND...`",
            entry.name
        ),
        Err(why) => why,
    };
    let mut user = (**user).clone();
    user.refused.push(format!(
        "the definition in .earshot/settings.local.json is not used: {why}"
    ));
    let admitted = admitted_digest(settings, &user);
    (user, admitted)
}

/// Whether earshot wrote `entry` (a local-file entry) for the user as it is now: a record that
/// `earshot mcp add -s local` signed for its current digest (returned when it did).
fn written_state(settings: &Settings, entry: &ServerEntry) -> Result<Option<ServerDigest>, String> {
    let definition = entry.definition.as_ref().map_err(Clone::clone)?;
    let Some(key) = user_key(settings) else {
        return Ok(None);
    };
    let digest = entry_digest(settings, entry, definition, &key)
        .map_err(|error| format!("cannot be trusted: {error}"))?;
    Ok(written_by_earshot(settings, SourceKind::Mcp, &entry.name, &digest.value).then_some(digest))
}

/// The digest `earshot mcp trust` records for `entry`, creating the user's key on first use.
/// A partial digest (see [`ServerDigest::partial`]) is refused unless `partial` is set, and a
/// local-file entry under the name of the user's own server is refused whatever it is (only
/// `earshot mcp add -s local`, through [`digest_for_written`], replaces the user's server).
///
/// # Errors
/// Why the entry cannot be trusted, as one line saying what to do.
pub fn digest_for_trust(
    settings: &Settings,
    entry: &ServerEntry,
    partial: bool,
) -> Result<ServerDigest, String> {
    if entry.layer == Layer::Local && entry.replaces_user_entry.is_some() {
        return Err(format!(
            "server \"{0}\" in .earshot/settings.local.json has the name of your own server, and earshot did not write it there; trusting it would give it your server's name and allow rules, so it cannot be trusted. To replace your own server in this project, run `earshot mcp add -s local {0} -- COMMAND...`; to use it beside yours, rename it",
            entry.name
        ));
    }
    let digest = digest_for_written(settings, entry)?;
    match &digest.partial {
        Some(why) if !partial => Err(format!(
            "server \"{}\" cannot be trusted as a whole: {why}; a change to those files would not lapse the trust. Narrow what its command names, or run `earshot mcp trust {} --partial` to trust it anyway",
            entry.name, entry.name
        )),
        _ => Ok(digest),
    }
}

/// The digest of `entry` as earshot writes it for the user (`earshot mcp add -s local`),
/// creating the user's key on first use.
///
/// # Errors
/// Why the entry cannot be trusted (unusable definition, no usable key, a link out of the
/// project).
pub fn digest_for_written(
    settings: &Settings,
    entry: &ServerEntry,
) -> Result<ServerDigest, String> {
    let definition = entry.definition.as_ref().map_err(Clone::clone)?;
    let config_dir = settings
        .user_config_dir
        .as_deref()
        .ok_or_else(|| crate::trust::TrustError::NoConfigDir.to_string())?;
    let key = TrustKey::load_or_create(config_dir).map_err(|error| error.to_string())?;
    entry_digest(settings, entry, definition, &key)
        .map_err(|error| format!("server \"{}\" cannot be trusted: {error}", entry.name))
}

/// [`server_digest`] of `entry` as it starts here (its start directory, this project).
fn entry_digest(
    settings: &Settings,
    entry: &ServerEntry,
    definition: &ServerDefinition,
    key: &TrustKey,
) -> Result<ServerDigest, DigestError> {
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
