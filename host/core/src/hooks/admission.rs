//! Which hooks may run.
//!
//! A hook in the checked-in `.earshot/settings.json`, or in `.earshot/settings.local.json` (which
//! a download or a submodule can ship), runs only with a trust record earshot signed for its
//! digest: the keyed digest (as for project MCP servers) of its normalised definition, its layer,
//! and the bytes of every project file its `command` and `args` name. Editing the script lapses
//! the trust; reordering entries does not (the record is keyed by the hook's name).
//!
//! The user's own hooks run, but earshot keeps a keyed digest of the user's hook set (with the
//! scripts they name) in the config dir and says so at start when it changed outside earshot;
//! with `hooks.requireReview: true` the user's hooks stay off until `earshot hooks review`. This
//! is tamper evidence, not protection from malware running as the user (which can read the key).

use std::path::Path;

use crate::mcp::digest::shell::Places;
use crate::mcp::digest::{NamedWords, add_named_words, open_regular};
use crate::mcp::{DigestError, ServerDigest};
use crate::settings::{Layer, Settings};
use crate::trust::{
    DEFINITION_PART, Manifest, TrustError, TrustJudge, TrustKey, TrustKind, TrustState,
    record_trust_parts, remove_trust, trust_state, user_key,
};

use super::config::{HookDefinition, HookKind, HookSet};
use super::process::expand_project_dir;

/// Why a hook could not be trusted, untrusted or reviewed: one line saying what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HookTrustError(String);

/// The files a task runner reads its tasks from: a hook that runs `make check` or `npm run x`
/// runs what those files say.
const RUNNER_FILES: &[(&str, &[&str])] = &[
    ("make", &["Makefile", "makefile", "GNUmakefile"]),
    ("npm", &["package.json"]),
    ("yarn", &["package.json"]),
    ("pnpm", &["package.json"]),
    ("bun", &["package.json"]),
    ("just", &["justfile", "Justfile", ".justfile"]),
    ("task", &["Taskfile.yml", "Taskfile.yaml"]),
    ("rake", &["Rakefile"]),
    ("tox", &["tox.ini"]),
    ("nox", &["noxfile.py"]),
    ("poetry", &["pyproject.toml"]),
    ("uv", &["pyproject.toml"]),
    ("cargo", &["Cargo.toml", ".cargo/config.toml"]),
];

/// The words of a project hook that can name project files, relative to the project root
/// `root` (where it starts): a shell string's words as the shell will expand them (see
/// [`crate::mcp::digest::shell`]; a word it cannot resolve is reported), an exec form's words
/// with the project root expanded (a glob's fixed folder beside it, so a script added under it
/// counts), and the task files of a runner it calls.
fn project_words(definition: &HookDefinition, root: &Path) -> NamedWords {
    let places = Places {
        dir: root,
        project: Some(root),
    };
    let mut named = match &definition.kind {
        HookKind::Shell { script, .. } => NamedWords::script(script, &places),
        HookKind::Exec { .. } => NamedWords::exec(named_words(definition, Some(root)), &places),
        HookKind::Http { .. } => NamedWords::default(),
    };
    let runners = runner_files(&named.words);
    named.words.extend(runners);
    named
}

/// The task files of the runners `words` call (`make` reads its Makefile).
fn runner_files(words: &[String]) -> Vec<String> {
    words
        .iter()
        .filter_map(|word| {
            let program = Path::new(word).file_name()?.to_str()?;
            RUNNER_FILES
                .iter()
                .find(|(runner, _)| *runner == program)
                .map(|(_, files)| {
                    files
                        .iter()
                        .map(|file| file.to_string())
                        .collect::<Vec<_>>()
                })
        })
        .flatten()
        .collect()
}

/// The words of a hook that can name files, read plainly (for the user's own hooks, and a
/// project hook's exec form): its words (a glob's fixed folder in place of the glob, so a
/// script added under it counts), and the task files of a runner it calls.
fn named_words(definition: &HookDefinition, project: Option<&Path>) -> Vec<String> {
    let mut words = plain_words(definition, project);
    let globs: Vec<String> = words
        .iter()
        .filter_map(|word| {
            let at = word.find(['*', '?', '['])?;
            Some(match word[..at].rfind('/') {
                Some(slash) => word[..=slash].to_string(),
                None => ".".to_string(),
            })
        })
        .collect();
    let runners: Vec<String> = words
        .iter()
        .filter_map(|word| {
            let program = Path::new(word).file_name()?.to_str()?;
            RUNNER_FILES
                .iter()
                .find(|(runner, _)| *runner == program)
                .map(|(_, files)| {
                    files
                        .iter()
                        .map(|file| file.to_string())
                        .collect::<Vec<_>>()
                })
        })
        .flatten()
        .collect();
    words.extend(globs);
    words.extend(runners);
    words
}

/// The words of a hook as written (the project root expanded).
fn plain_words(definition: &HookDefinition, project: Option<&Path>) -> Vec<String> {
    match &definition.kind {
        HookKind::Exec { command, args } => std::iter::once(command)
            .chain(args)
            .map(|word| expand_project_dir(word, project))
            .collect(),
        // Quotes go first: `"$CLAUDE_PROJECT_DIR"/hooks/x.sh` names the script, not the root.
        HookKind::Shell { script, .. } => script
            .split(|c: char| c.is_whitespace() || ";|&()<>`".contains(c))
            .map(|word| expand_project_dir(&word.replace(['"', '\''], ""), project))
            .collect(),
        HookKind::Http { .. } => Vec::new(),
    }
}

/// The digest a trust record for `definition` binds to, as it is now.
///
/// # Errors
/// [`DigestError`] when a path it names links out of the project.
pub fn hook_digest(
    settings: &Settings,
    definition: &HookDefinition,
    key: &TrustKey,
) -> Result<ServerDigest, DigestError> {
    let mut material = format!(
        "{}\0{}\0{}",
        definition.layer.as_str(),
        definition.name,
        definition.canonical_json()
    )
    .into_bytes();
    let mut manifest = Manifest::new();
    manifest.insert(DEFINITION_PART, key.keyed_digest(&material));
    let mut named = crate::mcp::digest::Named::default();
    if let Some(project) = &settings.project
        && let Ok(root) = project.root.canonicalize()
    {
        let words = project_words(definition, &root);
        named = add_named_words(&words, &root, &root, &mut material, &mut manifest)?;
    }
    Ok(ServerDigest {
        value: key.keyed_digest(&material),
        partial: named.partial,
        manifest,
        bound: named.bound,
    })
}

/// Whether `definition` may run now, and if not the one line saying why and what to run.
pub fn hook_admission(settings: &Settings, definition: &HookDefinition) -> Result<(), String> {
    admitted_hook_digest(settings, definition).map(|_| ())
}

/// [`hook_admission`], with the digest it judged trusted (for a project or local hook: what
/// its snapshot copies; none for the user's own hooks).
///
/// # Errors
/// Why it may not run, as [`hook_admission`].
pub fn admitted_hook_digest(
    settings: &Settings,
    definition: &HookDefinition,
) -> Result<Option<ServerDigest>, String> {
    if definition.layer == Layer::User {
        return Ok(None);
    }
    let mut judged = None;
    // The trust record as it is now, not as the session found it: `hooks untrust` (or a
    // record removed by hand) takes effect at the next run, as an edit of the script does.
    let current = settings.with_local_file_reread();
    let settings = &current;
    // Judged first without the digest: no record (or one that is not this user's) needs no
    // hashing, so an untrusted repository's hooks cost nothing at start. Only a valid record
    // for something ("changed" against no digest) is worth hashing the named files for.
    let state = match trust_state(settings, TrustKind::Hook, &definition.name, "") {
        TrustState::Changed { .. } => match user_key(settings) {
            Some(key) => {
                let digest = hook_digest(settings, definition, &key)
                    .map_err(|error| format!("cannot be trusted: {error}"))?;
                let state = TrustJudge::new(settings).judge_parts(
                    TrustKind::Hook,
                    &definition.name,
                    &digest.value,
                    Some(&digest.manifest),
                );
                judged = Some(digest);
                state
            }
            None => TrustState::NotTrusted,
        },
        other => other,
    };
    match state {
        TrustState::Trusted => Ok(judged),
        TrustState::NotTrusted if definition.layer == Layer::Local => Err(format!(
            "not trusted: a hook in .earshot/settings.local.json runs only when earshot signed it (a download or submodule can ship that file); review it, then run `earshot hooks trust {}`",
            definition.name
        )),
        other => Err(other.explain(TrustKind::Hook, &definition.name)),
    }
}

/// The project or local hook named `name`.
fn project_hook(settings: &Settings, name: &str) -> Result<HookDefinition, HookTrustError> {
    let set = HookSet::from_settings(settings);
    let mut found = set
        .definitions
        .into_iter()
        .filter(|definition| definition.name == name && definition.layer != Layer::User);
    let first = found.next().ok_or_else(|| {
        HookTrustError(format!(
            "there is no hook \"{name}\" in the project's settings files (`earshot hooks list` shows them; your own hooks need no trust)"
        ))
    })?;
    if found.next().is_some() {
        return Err(HookTrustError(format!(
            "two of the project's hooks are named \"{name}\" (in .earshot/settings.json and .earshot/settings.local.json); rename one, then trust it"
        )));
    }
    Ok(first)
}

/// The user's config dir and trust key (made on first use), for what `trust` and `review`
/// record.
fn config_dir_and_key(settings: &Settings) -> Result<(&Path, TrustKey), HookTrustError> {
    let config_dir = settings
        .user_config_dir
        .as_deref()
        .ok_or_else(|| HookTrustError(TrustError::NoConfigDir.to_string()))?;
    let key =
        TrustKey::load_or_create(config_dir).map_err(|error| HookTrustError(error.to_string()))?;
    Ok((config_dir, key))
}

/// The digest `earshot hooks trust NAME` would record for the project or local hook `name`,
/// creating the user's key on first use, with why it is partial when it is.
///
/// # Errors
/// No such hook, no usable key, or a named path that links out of the project.
pub fn current_hook_digest(
    settings: &Settings,
    name: &str,
) -> Result<ServerDigest, HookTrustError> {
    let definition = project_hook(settings, name)?;
    let (_, key) = config_dir_and_key(settings)?;
    hook_digest(settings, &definition, &key)
        .map_err(|error| HookTrustError(format!("hook \"{name}\" cannot be trusted: {error}")))
}

/// Trusts the project or local hook `name` as it is now (a change to it, or to a project file it
/// names, lapses the trust), and returns the digest recorded (what it bound). A digest that could
/// not cover everything it names is refused unless `partial`; with `reviewed`, a digest that is
/// no longer that one is refused.
///
/// # Errors
/// As [`current_hook_digest`], a partial or changed digest, or the record could not be written.
pub fn trust_hook(
    settings: &Settings,
    name: &str,
    partial: bool,
    reviewed: Option<&str>,
) -> Result<ServerDigest, HookTrustError> {
    let digest = current_hook_digest(settings, name)?;
    if let Some(reviewed) = reviewed
        && reviewed != digest.value
    {
        return Err(HookTrustError(format!(
            "hook \"{name}\" changed since you reviewed it (it is now {}); review it again with `earshot hooks trust {name} --digest`",
            digest.value
        )));
    }
    if let Some(why) = &digest.partial
        && !partial
    {
        return Err(HookTrustError(format!(
            "hook \"{name}\" cannot be trusted as a whole: {why}; a change to those files would not lapse the trust. Narrow what it names, or run `earshot hooks trust {name} --partial`"
        )));
    }
    record_trust_parts(
        settings,
        TrustKind::Hook,
        name,
        &digest.value,
        Some(&digest.manifest),
    )
    .map_err(|error| HookTrustError(error.to_string()))?;
    Ok(digest)
}

/// Removes the trust record of hook `name`; returns whether there was one.
///
/// # Errors
/// The local file could not be edited.
pub fn untrust_hook(settings: &Settings, name: &str) -> Result<bool, HookTrustError> {
    remove_trust(settings, TrustKind::Hook, name).map_err(|error| HookTrustError(error.to_string()))
}

/// The file that holds the reviewed digest of the user's hook set.
const REVIEWED_FILE: &str = "hooks-reviewed";

/// The keyed digest of the user's hooks as they are now: every definition (by name) and the
/// bytes of its program and of the scripts its words name (by their extension), so a rewritten
/// script counts as a change too.
fn user_set_digest(set: &HookSet, key: &TrustKey, start_dir: &Path) -> Option<String> {
    let mut user: Vec<&HookDefinition> = set
        .definitions
        .iter()
        .filter(|definition| definition.layer == Layer::User)
        .collect();
    if user.is_empty() {
        return None;
    }
    user.sort_by(|a, b| a.name.cmp(&b.name));
    let mut material = Vec::new();
    for definition in user {
        material.extend_from_slice(definition.name.as_bytes());
        material.push(0);
        material.extend_from_slice(definition.canonical_json().as_bytes());
        material.push(0);
        for word in named_words(definition, None)
            .into_iter()
            .enumerate()
            .filter(|(index, word)| *index == 0 || is_script(word))
            .map(|(_, word)| word)
        {
            let path = start_dir.join(&word);
            let mut bytes = Vec::new();
            if let Ok(meta) = std::fs::metadata(&path)
                && meta.is_file()
                && meta.len() <= 1 << 20
                // Never blocks: a FIFO swapped in for the script is not opened.
                && let Ok(real) = path.canonicalize()
                && let Ok(file) = open_regular(&real)
                && std::io::Read::read_to_end(&mut std::io::Read::take(file, 1 << 20), &mut bytes)
                    .is_ok()
            {
                material.extend_from_slice(word.as_bytes());
                material.push(0);
                material.extend_from_slice(&bytes);
                material.push(0);
            }
        }
    }
    Some(key.keyed_digest(&material))
}

/// Whether `word` names a script by its extension: what a user hook's digest reads besides its
/// program (a data file a hook writes, such as its own log, must not count as a change).
fn is_script(word: &str) -> bool {
    const SCRIPTS: &[&str] = &[
        "sh", "bash", "zsh", "fish", "py", "js", "mjs", "cjs", "ts", "mts", "rb", "pl", "php",
        "lua", "jar",
    ];
    Path::new(word)
        .extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| SCRIPTS.contains(&extension))
}

/// What earshot found about the user's own hooks at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserHooks {
    /// No user hooks, or the same as last reviewed.
    Unchanged,
    /// They changed since earshot last saw them (or were first seen): the line to print, and
    /// whether they are held back until `earshot hooks review`.
    Changed { notice: String, held: bool },
}

/// Compares the user's hook set with the digest recorded last time. Without `requireReview` the
/// new digest is recorded at once (the notice is printed once); with it, nothing is recorded and
/// the user's hooks stay off until `earshot hooks review`.
pub fn check_user_hooks(settings: &Settings, set: &HookSet, start_dir: &Path) -> UserHooks {
    compare_user_hooks(settings, set, start_dir, true)
}

/// Whether the user's hooks are held back for review now (for `hooks list`; records nothing).
pub fn user_hooks_held(settings: &Settings, set: &HookSet) -> bool {
    let start_dir = super::engine::user_start_dir(settings);
    matches!(
        compare_user_hooks(settings, set, &start_dir, false),
        UserHooks::Changed { held: true, .. }
    )
}

/// [`check_user_hooks`]; records the new digest only when `record`.
fn compare_user_hooks(
    settings: &Settings,
    set: &HookSet,
    start_dir: &Path,
    record: bool,
) -> UserHooks {
    let Some(config_dir) = settings.user_config_dir.as_deref() else {
        return UserHooks::Unchanged;
    };
    let path = config_dir.join(REVIEWED_FILE);
    let recorded = std::fs::read_to_string(&path).ok();
    let has_user_hooks = set
        .definitions
        .iter()
        .any(|definition| definition.layer == Layer::User);
    // No hooks now and none before: nothing to watch, and no key is made for it.
    if !has_user_hooks && recorded.is_none() {
        return UserHooks::Unchanged;
    }
    let Ok(key) = TrustKey::load_or_create(config_dir) else {
        return UserHooks::Unchanged;
    };
    let current = user_set_digest(set, &key, start_dir);
    let recorded_digest = recorded.as_deref().map(str::trim).filter(|d| !d.is_empty());
    if current.as_deref() == recorded_digest || (current.is_none() && recorded_digest.is_none()) {
        return UserHooks::Unchanged;
    }
    let count = set
        .definitions
        .iter()
        .filter(|definition| definition.layer == Layer::User)
        .count();
    let what = if recorded_digest.is_none() {
        format!("earshot now keeps watch over your {count} hook(s)")
    } else {
        format!(
            "your hooks changed outside earshot since it last ran (now {count}): if you did not change them, something else did; `earshot hooks list` shows them"
        )
    };
    if set.require_review && recorded_digest.is_some() {
        return UserHooks::Changed {
            notice: format!(
                "{what}; hooks.requireReview is on, so your hooks do not run until you run `earshot hooks review`"
            ),
            held: true,
        };
    }
    if record {
        let _ = write_reviewed(config_dir, current.as_deref());
    }
    UserHooks::Changed {
        notice: what,
        held: false,
    }
}

fn write_reviewed(config_dir: &Path, digest: Option<&str>) -> std::io::Result<()> {
    let path = config_dir.join(REVIEWED_FILE);
    let mut file = tempfile::NamedTempFile::new_in(config_dir)?;
    std::io::Write::write_all(&mut file, digest.unwrap_or_default().as_bytes())?;
    file.persist(path).map(|_| ()).map_err(|error| error.error)
}

/// `earshot hooks review`: records the user's hook set as it is now as reviewed.
///
/// # Errors
/// There is no config dir, or the key or the file cannot be written.
pub fn review_user_hooks(settings: &Settings) -> Result<usize, HookTrustError> {
    let (config_dir, key) = config_dir_and_key(settings)?;
    let set = HookSet::from_settings(settings);
    let start_dir = super::engine::user_start_dir(settings);
    let digest = user_set_digest(&set, &key, &start_dir);
    write_reviewed(config_dir, digest.as_deref())
        .map_err(|error| HookTrustError(format!("could not record the review: {error}")))?;
    Ok(set
        .definitions
        .iter()
        .filter(|definition| definition.layer == Layer::User)
        .count())
}
