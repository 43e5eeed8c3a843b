//! Loading the three settings files, each on its own: a file that does not parse is reported with
//! its path, line and column, and the others still load.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::project::ProjectPaths;

/// Which settings file a value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// `<config dir>/settings.json`.
    User,
    /// `.earshot/settings.json`, checked in by the repository.
    Project,
    /// `.earshot/settings.local.json`, the user's own file for this project.
    Local,
}

impl Layer {
    /// Whether the user owns the file (and so may grant permissions and trust in it).
    pub fn owned_by_user(self) -> bool {
        matches!(self, Layer::User | Layer::Local)
    }

    /// `user`, `project` or `local`.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::User => "user",
            Layer::Project => "project",
            Layer::Local => "local",
        }
    }
}

/// One settings file as loaded.
#[derive(Debug, Clone)]
pub struct SettingsFile {
    /// Which layer.
    pub layer: Layer,
    /// Where it is.
    pub path: PathBuf,
    /// Its contents; `None` when the file is absent, unreadable, malformed or refused.
    pub value: Option<Value>,
}

impl SettingsFile {
    /// The value at `key` at the top level, if the file loaded and has it.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.value.as_ref().and_then(|value| value.get(key))
    }
}

/// Something wrong with a settings file, reported to the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsProblem {
    /// The file is not valid JSON.
    #[error(
        "{path}:{line}:{column}: does not parse: {reason}; its settings are ignored until it is fixed"
    )]
    Malformed {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        reason: String,
    },
    /// The file parses but is not a JSON object.
    #[error("{path}: must hold a JSON object; its settings are ignored")]
    NotAnObject {
        /// The file.
        path: PathBuf,
    },
    /// The file could not be read.
    #[error("{path}: cannot be read: {reason}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `settings.local.json` is tracked by git, so anyone could have committed it.
    #[error(
        "{path} is tracked by git, so the repository could have written it; it is ignored (run `git rm --cached {path}` and keep it out of commits)"
    )]
    LocalFileTracked {
        /// The file.
        path: PathBuf,
    },
}

/// Every settings layer for one project, plus what went wrong loading them.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The project, when there is one.
    pub project: Option<ProjectPaths>,
    /// The user config dir, when known.
    pub user_config_dir: Option<PathBuf>,
    /// The files, in order user, project, local (narrowest last).
    pub files: Vec<SettingsFile>,
    /// Problems found while loading; each already names its file.
    pub problems: Vec<SettingsProblem>,
}

impl Settings {
    /// Loads the user file from `user_config_dir` and, when `project` is given, the project's
    /// checked-in and local files.
    pub fn load(user_config_dir: Option<&Path>, project: Option<ProjectPaths>) -> Settings {
        let mut files = Vec::new();
        let mut problems = Vec::new();
        if let Some(dir) = user_config_dir {
            files.push(load_file(
                Layer::User,
                dir.join("settings.json"),
                &mut problems,
            ));
        }
        if let Some(project) = &project {
            files.push(load_file(
                Layer::Project,
                project.project_settings(),
                &mut problems,
            ));
            let local_path = project.local_settings();
            if local_path.exists() && is_tracked_by_git(&project.root, &local_path) {
                problems.push(SettingsProblem::LocalFileTracked {
                    path: local_path.clone(),
                });
                files.push(SettingsFile {
                    layer: Layer::Local,
                    path: local_path,
                    value: None,
                });
            } else {
                files.push(load_file(Layer::Local, local_path, &mut problems));
            }
        }
        Settings {
            project,
            user_config_dir: user_config_dir.map(Path::to_path_buf),
            files,
            problems,
        }
    }

    /// The file of `layer`, when that layer exists here.
    pub fn file(&self, layer: Layer) -> Option<&SettingsFile> {
        self.files.iter().find(|file| file.layer == layer)
    }

    /// Whether the local file was refused because git tracks it.
    pub fn local_file_refused(&self) -> bool {
        self.problems
            .iter()
            .any(|problem| matches!(problem, SettingsProblem::LocalFileTracked { .. }))
    }
}

fn load_file(layer: Layer, path: PathBuf, problems: &mut Vec<SettingsProblem>) -> SettingsFile {
    let value = match std::fs::read_to_string(&path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => {
            problems.push(SettingsProblem::Unreadable {
                path: path.clone(),
                reason: error.to_string(),
            });
            None
        }
        Ok(text) => match parse_settings(&path, &text) {
            Ok(value) => Some(value),
            Err(problem) => {
                problems.push(problem);
                None
            }
        },
    };
    SettingsFile { layer, path, value }
}

/// Parses a settings file's text: a JSON object, or the problem with its line and column.
pub(crate) fn parse_settings(path: &Path, text: &str) -> Result<Value, SettingsProblem> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(SettingsProblem::NotAnObject {
            path: path.to_path_buf(),
        }),
        Err(error) => Err(SettingsProblem::Malformed {
            path: path.to_path_buf(),
            line: error.line(),
            column: error.column(),
            reason: strip_position(&error.to_string()),
        }),
    }
}

/// serde_json appends " at line L column C"; the report puts the position first instead.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

/// Whether git tracks `path` in the repository at `root`. No git, or not a repository: false.
fn is_tracked_by_git(root: &Path, path: &Path) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["ls-files", "--error-unmatch", "--"])
        .arg(path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map(|status| status.success())
        .unwrap_or(false)
}
