//! Permission rules written for the user by earshot (`earshot permissions allow|ask|deny`, the
//! "always" answer at a prompt), and the signature that makes an allow rule in the project's
//! local file count.
//!
//! The local file sits inside the project, so a ZIP download, a template or a git submodule can
//! ship one. An allow rule there counts only when a record under `trust.allow.<rule>` signs it
//! with the per-user key for this project path; earshot writes that record whenever it writes the
//! rule. Deny and ask rules only narrow, so they count from any file and need no signature.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::settings::{EditError, Layer, Settings, edit_project_settings, edit_settings};

use super::key::{TrustError, TrustKey};
use super::record::{RecordError, edit_local_file, object_at, signed_record};

/// The kind a signed allow rule is recorded under: `trust.allow.<rule>`.
const ALLOW_RECORDS: &str = "allow";
/// What the signature binds besides the project and the rule, so it can never be mistaken for a
/// trust record of a source.
const ALLOW_SIGNATURE_KIND: &str = "permission-allow";

/// Which file a rule is written to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleFile {
    /// The user's own `settings.json` in the config dir: every project.
    User,
    /// The project's `.earshot/settings.local.json`: this project only, signed.
    Local,
    /// The project's checked-in `.earshot/settings.json`, shared with everyone who checks it
    /// out: deny and ask rules only (an allow rule there grants nothing, so none is written).
    Project,
}

/// Whether `rule`, an allow rule in the project's local file, was written there by earshot for
/// this user and this project: its record verifies under `key`.
pub fn allow_rule_signed(settings: &Settings, key: Option<&TrustKey>, rule: &str) -> bool {
    let (Some(key), Some(project)) = (key, &settings.project) else {
        return false;
    };
    let Some(record) = settings
        .file(Layer::Local)
        .and_then(|file| file.value.as_ref())
        .and_then(|value| value.get("trust"))
        .and_then(|trust| trust.get(ALLOW_RECORDS))
        .and_then(|records| records.get(rule))
    else {
        return false;
    };
    let field = |name: &str| record.get(name).and_then(Value::as_str).unwrap_or_default();
    Path::new(field("project")) == project.root
        && key.verify(
            &project.root,
            ALLOW_SIGNATURE_KIND,
            rule,
            "",
            field("signature"),
        )
}

/// Adds `rule` to `permissions.<effect>` (`allow`, `ask` or `deny`) in `file`, once. An allow rule
/// written to the local file is signed for this user and project, and the local file is added
/// to the project's `.gitignore`. Returns the file written.
///
/// # Errors
/// A [`RecordError`] when there is no such file here, the key is unusable, or the file cannot be
/// edited (it does not parse, a link, or `permissions.<effect>` is not a list).
pub fn write_rule(
    settings: &Settings,
    effect: &str,
    rule: &str,
    file: RuleFile,
) -> Result<PathBuf, RecordError> {
    if file == RuleFile::Project && effect == "allow" {
        return Err(RecordError::AllowInProjectFile);
    }
    let signature = match (file, effect) {
        (RuleFile::Local, "allow") => Some(signed_record(
            settings,
            ALLOW_SIGNATURE_KIND,
            rule,
            None,
            None,
        )?),
        _ => None,
    };
    let mut shape_problem = None;
    let change = |value: &mut Value| {
        let root = value.as_object_mut().expect("settings files hold objects");
        let list = object_at(root, "permissions")
            .map(|permissions| permissions.entry(effect).or_insert_with(|| json!([])))
            .and_then(Value::as_array_mut);
        let Some(list) = list else {
            shape_problem = Some(format!(
                "permissions.{effect} there is not a list; fix it by hand, nothing was changed"
            ));
            return;
        };
        if !list.iter().any(|existing| existing.as_str() == Some(rule)) {
            list.push(Value::String(rule.to_string()));
        }
        if let Some(record) = signature {
            match object_at(root, "trust").and_then(|trust| object_at(trust, ALLOW_RECORDS)) {
                Some(records) => {
                    records.insert(rule.to_string(), record);
                }
                None => {
                    shape_problem = Some(
                        "\"trust\" or \"trust.allow\" there is not an object; fix it by hand"
                            .into(),
                    );
                }
            }
        }
    };
    let path = match file {
        RuleFile::Local => edit_local_file(settings, change)?,
        RuleFile::Project => {
            let project = settings.project.as_ref().ok_or(RecordError::NoProject)?;
            let path = project.project_settings();
            edit_project_settings(&project.root, &path, change).map_err(|source| {
                RecordError::Edit {
                    path: path.clone(),
                    source,
                }
            })?;
            path
        }
        RuleFile::User => {
            let path = settings
                .user_config_dir
                .as_deref()
                .ok_or(RecordError::Key(TrustError::NoConfigDir))?
                .join("settings.json");
            edit_settings(&path, change).map_err(|source| RecordError::Edit {
                path: path.clone(),
                source,
            })?;
            path
        }
    };
    if let Some(reason) = shape_problem {
        return Err(RecordError::Edit {
            path: path.clone(),
            source: EditError::Io { path, reason },
        });
    }
    Ok(path)
}
