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
use super::record::{RecordError, ignore_local_settings};

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
    let config_dir = settings.user_config_dir.as_deref();
    let path = match file {
        RuleFile::User => config_dir
            .ok_or(RecordError::Key(TrustError::NoConfigDir))?
            .join("settings.json"),
        RuleFile::Local => {
            let project = settings.project.as_ref().ok_or(RecordError::NoProject)?;
            if settings.local_file_refused() {
                return Err(RecordError::LocalFileNotYours);
            }
            project.local_settings()
        }
    };
    let signature = match (file, effect) {
        (RuleFile::Local, "allow") => {
            let project = settings.project.as_ref().ok_or(RecordError::NoProject)?;
            let key = TrustKey::load_or_create(config_dir.ok_or(TrustError::NoConfigDir)?)?;
            Some(json!({
                "project": project.root.to_string_lossy(),
                "signature": key.sign(&project.root, ALLOW_SIGNATURE_KIND, rule, ""),
            }))
        }
        _ => None,
    };
    let mut shape_problem = None;
    let change = |value: &mut Value| {
        let root = value.as_object_mut().expect("settings files hold objects");
        let list = root
            .entry("permissions")
            .or_insert_with(|| json!({}))
            .as_object_mut()
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
            let records = root
                .entry("trust")
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .map(|trust| trust.entry(ALLOW_RECORDS).or_insert_with(|| json!({})))
                .and_then(Value::as_object_mut);
            match records {
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
    let edited = match (file, &settings.project) {
        (RuleFile::Local, Some(project)) => {
            // The .gitignore first: if it cannot be written (a link), the rule is not written.
            ignore_local_settings(&project.root).map_err(|source| RecordError::Edit {
                path: project.root.join(".gitignore"),
                source,
            })?;
            edit_project_settings(&project.root, &path, change)
        }
        _ => edit_settings(&path, change),
    };
    let edit_error = |source: EditError| RecordError::Edit {
        path: path.clone(),
        source,
    };
    edited.map_err(edit_error)?;
    if let Some(reason) = shape_problem {
        return Err(edit_error(EditError::Io {
            path: path.clone(),
            reason,
        }));
    }
    Ok(path)
}
