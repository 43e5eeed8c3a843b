//! Reading, judging, writing and removing trust records.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::names::SourceKind;
use crate::settings::{
    EditError, IgnoreError, Layer, Settings, edit_project_settings, ensure_local_files_ignored,
};

use super::key::{TrustError, TrustKey};
use super::manifest::{Manifest, describe_changes, signed_manifest_text};

/// What a trust record is for: a source of tools, or a hook. Its noun is the record's key under
/// `trust` and the command that makes it (`earshot hooks trust NAME`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrustKind {
    /// An MCP server, an extension or a component.
    Source(SourceKind),
    /// A hook (`hooks` in settings), trusted by its name.
    Hook,
    /// A project's skill (a folder with `SKILL.md`), trusted by its name.
    Skill,
    /// A project's slash command (a Markdown file), trusted by its name (`git:commit`).
    Command,
}

impl TrustKind {
    /// `mcp`, `extensions`, `plugins`, `hooks`, `skills` or `commands`.
    pub fn noun(self) -> &'static str {
        match self {
            TrustKind::Source(kind) => kind.cli_noun(),
            TrustKind::Hook => "hooks",
            TrustKind::Skill => "skills",
            TrustKind::Command => "commands",
        }
    }
}

impl From<SourceKind> for TrustKind {
    fn from(kind: SourceKind) -> TrustKind {
        TrustKind::Source(kind)
    }
}

/// Whether a source the repository chose may load, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum TrustState {
    /// A valid record for exactly what is there now.
    Trusted,
    /// No record.
    NotTrusted,
    /// A valid record, but for something else: the source changed since it was trusted.
    Changed {
        /// What changed, part by part (`lib/util.ts`, `new.ts (new)`, `(its definition)`),
        /// when the record says what it was made of; empty when it does not (a record made
        /// before records kept their parts, or a hook or skill judged without them).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        files: Vec<String>,
    },
    /// The record was made for another clone of the project.
    OtherClone {
        /// The project path the record names.
        made_for: String,
    },
    /// The record's signature is not this user's: it was not made by `trust` on this machine
    /// (committed, hand-written, or from another machine).
    NotSignedByYou,
    /// `settings.local.json` (or its folder) is a symbolic link or someone else's file.
    LocalFileNotYours,
    /// The trust key is missing or unusable, so no record can be checked.
    KeyUnavailable {
        /// Why.
        reason: String,
    },
}

impl TrustState {
    /// True only for [`TrustState::Trusted`].
    pub fn is_trusted(&self) -> bool {
        matches!(self, TrustState::Trusted)
    }

    /// One line for `list`: what is wrong and the command that fixes it.
    pub fn explain(&self, kind: impl Into<TrustKind>, name: &str) -> String {
        let command = format!("earshot {} trust {name}", kind.into().noun());
        match self {
            TrustState::Trusted => "trusted".into(),
            TrustState::NotTrusted => {
                format!("not trusted: the repository added it; run `{command}` to load it")
            }
            TrustState::Changed { files } if files.is_empty() => {
                format!("changed since you trusted it; review it, then run `{command}`")
            }
            TrustState::Changed { files } => format!(
                "changed since you trusted it ({}); review it, then run `{command}`",
                describe_changes(files)
            ),
            TrustState::OtherClone { made_for } => {
                format!(
                    "its trust record was made for another clone ({made_for}); run `{command}` here"
                )
            }
            TrustState::NotSignedByYou => format!(
                "its trust record was not made by you on this machine (committed or copied); run `{command}`"
            ),
            TrustState::LocalFileNotYours => format!(
                "not trusted: .earshot/settings.local.json is a symbolic link or not your file, so its records do not count; replace it with your own file, then run `{command}`"
            ),
            TrustState::KeyUnavailable { reason } => {
                format!("not trusted: {reason}; then run `{command}`")
            }
        }
    }
}

fn record_path<'a>(settings_value: &'a Value, kind: TrustKind, name: &str) -> Option<&'a Value> {
    settings_value.get("trust")?.get(kind.noun())?.get(name)
}

/// Judges the record for `kind`/`name` against `digest`, the digest of what is there now.
pub fn trust_state(
    settings: &Settings,
    kind: impl Into<TrustKind>,
    name: &str,
    digest: &str,
) -> TrustState {
    TrustJudge::new(settings).judge(kind, name, digest)
}

/// Judges many records of one project with the user's key read once (a session with hundreds of
/// project skills would otherwise read the key file for each).
pub struct TrustJudge<'a> {
    settings: &'a Settings,
    key: Result<TrustKey, TrustState>,
}

impl<'a> TrustJudge<'a> {
    /// Reads the user's key for judging records of `settings`' project.
    pub fn new(settings: &'a Settings) -> TrustJudge<'a> {
        let key = match settings.user_config_dir.as_deref().map(TrustKey::load) {
            None => Err(TrustState::KeyUnavailable {
                reason: TrustError::NoConfigDir.to_string(),
            }),
            Some(Err(error)) => Err(TrustState::KeyUnavailable {
                reason: error.to_string(),
            }),
            Some(Ok(None)) => Err(TrustState::KeyUnavailable {
                reason: "there is no trust key on this machine, so this record was made elsewhere"
                    .into(),
            }),
            Some(Ok(Some(key))) => Ok(key),
        };
        TrustJudge { settings, key }
    }

    /// As [`trust_state`].
    pub fn judge(&self, kind: impl Into<TrustKind>, name: &str, digest: &str) -> TrustState {
        self.judge_parts(kind, name, digest, None)
    }

    /// As [`TrustJudge::judge`], with `manifest` saying what `digest` is made of now: a
    /// [`TrustState::Changed`] then names the parts that changed, when the record kept (and
    /// signed) its own manifest.
    pub fn judge_parts(
        &self,
        kind: impl Into<TrustKind>,
        name: &str,
        digest: &str,
        manifest: Option<&Manifest>,
    ) -> TrustState {
        let kind = kind.into();
        let settings = self.settings;
        if settings.local_file_refused() {
            return TrustState::LocalFileNotYours;
        }
        let Some(project) = &settings.project else {
            return TrustState::NotTrusted;
        };
        let record = settings
            .file(Layer::Local)
            .and_then(|file| file.value.as_ref())
            .and_then(|value| record_path(value, kind, name));
        let Some(record) = record else {
            return TrustState::NotTrusted;
        };
        let field = |key: &str| record.get(key).and_then(Value::as_str).unwrap_or_default();
        let key = match &self.key {
            Ok(key) => key,
            Err(state) => return state.clone(),
        };
        let made_for = field("project");
        if Path::new(made_for) != project.root {
            return TrustState::OtherClone {
                made_for: made_for.to_string(),
            };
        }
        let recorded_digest = field("digest");
        if !key.verify(
            &project.root,
            kind.noun(),
            name,
            recorded_digest,
            field("signature"),
        ) {
            return TrustState::NotSignedByYou;
        }
        if recorded_digest != digest {
            let files = manifest
                .and_then(|now| {
                    let then = Manifest::from_json(record.get("files")?)?;
                    let signed = key.verify(
                        &project.root,
                        kind.noun(),
                        name,
                        &signed_manifest_text(recorded_digest, &then),
                        field("files_signature"),
                    );
                    signed.then(|| now.changes_since(&then))
                })
                .unwrap_or_default();
            return TrustState::Changed { files };
        }
        TrustState::Trusted
    }
}

/// Why `trust`/`untrust` failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The key is unusable.
    #[error(transparent)]
    Key(#[from] TrustError),
    /// The settings file could not be edited.
    #[error("{path}: {source}")]
    Edit {
        /// The file.
        path: PathBuf,
        /// Why.
        source: EditError,
    },
    /// There is no project to record trust in.
    #[error(
        "there is no project here to trust anything in; run this inside a project or pass --project DIR"
    )]
    NoProject,
    /// Git would not ignore the local file, or its ignore file cannot be written.
    #[error(transparent)]
    NotIgnored(#[from] IgnoreError),
    /// An allow rule was to be written to the checked-in project file, where it grants nothing.
    #[error(
        "an allow rule in the checked-in .earshot/settings.json grants nothing (a repository cannot grant permissions); use -s local or -s user"
    )]
    AllowInProjectFile,
    /// The local file is a symbolic link or someone else's.
    #[error(
        ".earshot/settings.local.json (or .earshot/) is a symbolic link or not your file; replace it with your own regular file first"
    )]
    LocalFileNotYours,
}

/// Records that the user trusts `kind`/`name` as it is now (`digest`), signs the record, and
/// keeps `.earshot/settings.local.json` out of git.
///
/// # Errors
/// A [`RecordError`] when the key or a file cannot be used.
pub fn record_trust(
    settings: &Settings,
    kind: impl Into<TrustKind>,
    name: &str,
    digest: &str,
) -> Result<(), RecordError> {
    record_trust_parts(settings, kind, name, digest, None)
}

/// As [`record_trust`], keeping `manifest` (what `digest` is made of, signed with it) in the
/// record, so that a later change can be named part by part.
///
/// # Errors
/// A [`RecordError`] when the key or a file cannot be used.
pub fn record_trust_parts(
    settings: &Settings,
    kind: impl Into<TrustKind>,
    name: &str,
    digest: &str,
    manifest: Option<&Manifest>,
) -> Result<(), RecordError> {
    let kind = kind.into();
    let record = signed_record(settings, kind.noun(), name, Some(digest), manifest)?;
    store_record(settings, kind, name, record)
}

/// Writes `record` as `trust.<kind>.<name>` in the local file, refusing (and changing nothing)
/// when `trust` or `trust.<kind>` there is not an object.
///
/// # Errors
/// A [`RecordError`] when the file cannot be edited or has the wrong shape.
pub(super) fn store_record(
    settings: &Settings,
    kind: impl Into<TrustKind>,
    name: &str,
    record: Value,
) -> Result<(), RecordError> {
    let kind = kind.into();
    let mut shape_ok = true;
    let path = edit_local_file(settings, |value| {
        let root = value.as_object_mut().expect("settings files hold objects");
        match object_at(root, "trust").and_then(|trust| object_at(trust, kind.noun())) {
            Some(kind_map) => {
                kind_map.insert(name.to_string(), record);
            }
            None => shape_ok = false,
        }
    })?;
    if !shape_ok {
        return Err(RecordError::Edit {
            path: path.clone(),
            source: EditError::Io {
                path,
                reason: format!(
                    "\"trust\" or \"trust.{}\" there is not an object; fix it by hand, nothing was changed",
                    kind.noun()
                ),
            },
        });
    }
    Ok(())
}

/// The project whose local file earshot may write: there is a project, and its local file is
/// not refused (a link, or someone else's).
fn usable_local_file(settings: &Settings) -> Result<&crate::settings::ProjectPaths, RecordError> {
    let project = settings.project.as_ref().ok_or(RecordError::NoProject)?;
    if settings.local_file_refused() {
        return Err(RecordError::LocalFileNotYours);
    }
    Ok(project)
}

/// A record signed with the user's key (created on first use) for this project: `project` and
/// `signature` over the kind, the name and `digest` (an empty digest when `None`), plus
/// `digest` itself when given. With `manifest` (what `digest` is made of), the record also keeps
/// it as `files`, signed over `digest` as `files_signature`, so a later change can be named.
///
/// # Errors
/// [`RecordError::NoProject`], or the key's [`TrustError`].
pub(super) fn signed_record(
    settings: &Settings,
    kind: &str,
    name: &str,
    digest: Option<&str>,
    manifest: Option<&Manifest>,
) -> Result<Value, RecordError> {
    let project = usable_local_file(settings)?;
    let config_dir = settings
        .user_config_dir
        .as_deref()
        .ok_or(TrustError::NoConfigDir)?;
    let key = TrustKey::load_or_create(config_dir)?;
    let signature = key.sign(&project.root, kind, name, digest.unwrap_or_default());
    let mut record = serde_json::Map::new();
    if let Some(digest) = digest {
        record.insert("digest".into(), digest.into());
    }
    record.insert("project".into(), project.root.to_string_lossy().into());
    record.insert("signature".into(), signature.into());
    if let (Some(digest), Some(manifest)) = (digest, manifest) {
        let text = signed_manifest_text(digest, manifest);
        record.insert("files".into(), manifest.to_json());
        record.insert(
            "files_signature".into(),
            key.sign(&project.root, kind, name, &text).into(),
        );
    }
    Ok(Value::Object(record))
}

/// Applies `change` to the project's local settings file, the one place earshot writes what it
/// signs: refused when that file (or its folder) is a link or someone else's, and git must ignore
/// it first (earshot's lines last in `.earshot/.gitignore`, checked with git's rules), so nothing
/// is recorded when that cannot be done. Returns the file.
///
/// # Errors
/// A [`RecordError`] when there is no project, the file is refused, or an edit fails.
pub(super) fn edit_local_file(
    settings: &Settings,
    change: impl FnOnce(&mut Value),
) -> Result<PathBuf, RecordError> {
    let project = usable_local_file(settings)?;
    ensure_local_files_ignored(project)?;
    let path = project.local_settings();
    edit_project_settings(&project.root, &path, change).map_err(|source| RecordError::Edit {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// Removes the record for `kind`/`name`; returns whether there was one. The same refusals as
/// [`record_trust`] apply: a linked or foreign local file is never read or rewritten.
///
/// # Errors
/// A [`RecordError`] when the file cannot be edited.
pub fn remove_trust(
    settings: &Settings,
    kind: impl Into<TrustKind>,
    name: &str,
) -> Result<bool, RecordError> {
    let kind = kind.into();
    let project = usable_local_file(settings)?;
    let path = project.local_settings();
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(false);
    }
    let mut removed = false;
    edit_project_settings(&project.root, &path, |value| {
        if let Some(kind_map) = value
            .get_mut("trust")
            .and_then(|trust| trust.get_mut(kind.noun()))
            .and_then(Value::as_object_mut)
        {
            removed = kind_map.shift_remove(name).is_some();
        }
    })
    .map_err(|source| RecordError::Edit { path, source })?;
    Ok(removed)
}

/// The object at `key`, created when absent; `None` when something else is there (which is the
/// user's to fix and is never replaced).
pub(super) fn object_at<'a>(
    map: &'a mut serde_json::Map<String, Value>,
    key: &str,
) -> Option<&'a mut serde_json::Map<String, Value>> {
    map.entry(key).or_insert_with(|| json!({})).as_object_mut()
}
