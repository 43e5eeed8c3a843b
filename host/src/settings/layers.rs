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
    /// `settings.local.json` (or `.earshot/`) is not plainly the user's own file: a symbolic
    /// link (which a repository can commit), or owned by someone else.
    #[error(
        "{path} is ignored: {reason}; it must be a regular file you own in a real .earshot folder"
    )]
    LocalFileNotYours {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
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
            let refusal = local_file_refusal(&project.root, &local_path);
            if let Some(problem) = refusal {
                problems.push(problem);
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

    /// `section.key` from the narrowest layer that sets it (local, then project, then user):
    /// tunables such as `extensions.callTimeoutSeconds`.
    pub fn tunable(&self, section: &str, key: &str) -> Option<&Value> {
        [Layer::Local, Layer::Project, Layer::User]
            .into_iter()
            .filter_map(|layer| self.file(layer))
            .find_map(|file| file.get(section).and_then(|value| value.get(key)))
    }

    /// Whether the local file was refused because git tracks it.
    pub fn local_file_refused(&self) -> bool {
        self.problems.iter().any(|problem| {
            matches!(
                problem,
                SettingsProblem::LocalFileTracked { .. }
                    | SettingsProblem::LocalFileNotYours { .. }
            )
        })
    }
}

/// The largest settings file read (a FIFO or `/dev/zero` behind the name must not hang a `list`).
const MAX_SETTINGS_BYTES: u64 = 4 << 20;

fn load_file(layer: Layer, path: PathBuf, problems: &mut Vec<SettingsProblem>) -> SettingsFile {
    match std::fs::metadata(&path) {
        Ok(meta) if !meta.is_file() || meta.len() > MAX_SETTINGS_BYTES => {
            problems.push(SettingsProblem::Unreadable {
                path: path.clone(),
                reason: format!("it is not a regular file of at most {MAX_SETTINGS_BYTES} bytes"),
            });
            return SettingsFile {
                layer,
                path,
                value: None,
            };
        }
        _ => {}
    }
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
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .ok()
    };
    // Not a git work tree (or no git): nothing can be tracked.
    if !git(&["rev-parse", "--is-inside-work-tree"]).is_some_and(|status| status.success()) {
        return false;
    }
    let relative = path
        .strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned();
    // `icase`: a repository could commit `.earshot/Settings.Local.json` for a case-insensitive
    // file system. Only "did not match" (exit 1) means untracked; any other failure refuses.
    let pathspec = format!(":(icase){relative}");
    let listed = git(&["ls-files", "--error-unmatch", "--", &pathspec]);
    !matches!(listed.and_then(|status| status.code()), Some(1))
}

/// Why the local settings file must not be used, if it must not: it is tracked by git, it or its
/// folder is a symbolic link, or someone else owns it.
fn local_file_refusal(root: &Path, path: &Path) -> Option<SettingsProblem> {
    let not_yours = |reason: &str| {
        Some(SettingsProblem::LocalFileNotYours {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        })
    };
    let folder = path.parent()?;
    if std::fs::symlink_metadata(folder).is_ok_and(|meta| meta.file_type().is_symlink()) {
        return not_yours("its .earshot folder is a symbolic link");
    }
    let meta = std::fs::symlink_metadata(path).ok()?;
    if meta.file_type().is_symlink() {
        return not_yours("it is a symbolic link");
    }
    if !meta.is_file() {
        return not_yours("it is not a regular file");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            return not_yours("another user owns it");
        }
    }
    if is_tracked_by_git(root, path) {
        return Some(SettingsProblem::LocalFileTracked {
            path: path.to_path_buf(),
        });
    }
    None
}
