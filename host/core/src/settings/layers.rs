//! Loading the three settings files, each on its own: a file that does not parse is reported with
//! its path, line and column, and the others still load.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::no_links::{NoLinkError, read_text_no_follow};
use super::project::ProjectPaths;
use super::shape::{extension_env_problems, misspelt_keys};
use super::strict_json::{StrictJsonError, from_str_refusing_duplicates};

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
#[non_exhaustive]
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
    /// A key appears twice in one object of the file: JSON would keep only the last, which could
    /// silently drop a deny rule, so the file counts as not parsing.
    #[error(
        "{path}:{line}:{column}: the key \"{key}\" appears twice (JSON would keep only the last, which can drop a deny rule); its settings are ignored until one is removed"
    )]
    DuplicateKey {
        /// The file.
        path: PathBuf,
        /// 1-based line of the second occurrence.
        line: usize,
        /// 1-based column just past it.
        column: usize,
        /// Its dotted path, e.g. `permissions.deny`.
        key: String,
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
    /// A key that earshot does not know where it reads permissions (`"Deny"`, `"denied"`,
    /// `"permission"`), or `permissions` that is not an object: a typo that could have held a
    /// deny rule, so every allow rule is suspended until it is fixed.
    #[error(
        "{path}: {what}; every allow rule is suspended until it is fixed (a typo must not widen access)"
    )]
    Misspelt {
        /// The file.
        path: PathBuf,
        /// What is wrong, e.g. `unknown key "permissions.Deny" (did you mean "deny"?)`.
        what: String,
    },
    /// A setting that narrows what code can reach, written so that it cannot mean what it
    /// says (`"extensions": {"Env": [...]}`, or `"env"` that is not a list of names). It grants
    /// nothing either way, so allow rules stay; the line says what earshot does instead.
    #[error("{path}: {what}")]
    Unusable {
        /// The file.
        path: PathBuf,
        /// What is wrong and what earshot does with it.
        what: String,
    },
}

impl SettingsProblem {
    /// The file the problem is about.
    pub fn path(&self) -> Option<&Path> {
        match self {
            SettingsProblem::Malformed { path, .. }
            | SettingsProblem::DuplicateKey { path, .. }
            | SettingsProblem::NotAnObject { path }
            | SettingsProblem::Unreadable { path, .. }
            | SettingsProblem::LocalFileNotYours { path, .. }
            | SettingsProblem::Misspelt { path, .. }
            | SettingsProblem::Unusable { path, .. } => Some(path),
        }
    }

    /// Whether this problem suspends every allow rule: a file that does not parse (or repeats a
    /// key) or has a misspelt key might have held a deny rule, so nothing may be granted until it is fixed
    /// (exactly as a malformed deny rule does).
    pub fn suspends_allow_rules(&self) -> bool {
        matches!(
            self,
            SettingsProblem::Malformed { .. }
                | SettingsProblem::DuplicateKey { .. }
                | SettingsProblem::NotAnObject { .. }
                | SettingsProblem::Unreadable { .. }
                | SettingsProblem::Misspelt { .. }
        )
    }
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
                Links::Follow,
                &mut problems,
            ));
        }
        if let Some(project) = &project {
            files.push(load_file(
                Layer::Project,
                project.project_settings(),
                Links::Refuse,
                &mut problems,
            ));
            let local_path = project.local_settings();
            let refusal = local_file_refusal(&local_path);
            if let Some(problem) = refusal {
                problems.push(problem);
                files.push(SettingsFile {
                    layer: Layer::Local,
                    path: local_path,
                    value: None,
                });
            } else {
                files.push(load_file(
                    Layer::Local,
                    local_path,
                    Links::Refuse,
                    &mut problems,
                ));
            }
        }
        Settings {
            project,
            user_config_dir: user_config_dir.map(Path::to_path_buf),
            files,
            problems,
        }
    }

    /// These settings with the project's local file read again as it is now (its problems
    /// replaced by the new read's): trust records live there, so a record removed or made during
    /// a session (`hooks untrust`, `hooks trust`) counts at the next run.
    pub fn with_local_file_reread(&self) -> Settings {
        let Some(project) = &self.project else {
            return self.clone();
        };
        let local_path = project.local_settings();
        let mut problems: Vec<SettingsProblem> = self
            .problems
            .iter()
            .filter(|problem| problem.path() != Some(local_path.as_path()))
            .cloned()
            .collect();
        let file = match local_file_refusal(&local_path) {
            Some(problem) => {
                problems.push(problem);
                SettingsFile {
                    layer: Layer::Local,
                    path: local_path,
                    value: None,
                }
            }
            None => load_file(Layer::Local, local_path, Links::Refuse, &mut problems),
        };
        let mut files: Vec<SettingsFile> = self
            .files
            .iter()
            .filter(|file| file.layer != Layer::Local)
            .cloned()
            .collect();
        files.push(file);
        Settings {
            project: self.project.clone(),
            user_config_dir: self.user_config_dir.clone(),
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

    /// Whether the local file was refused (a symbolic link, or not the user's).
    pub fn local_file_refused(&self) -> bool {
        self.problems
            .iter()
            .any(|problem| matches!(problem, SettingsProblem::LocalFileNotYours { .. }))
    }

    /// The first problem that suspends every allow rule (see
    /// [`SettingsProblem::suspends_allow_rules`]), if any.
    pub fn allow_rules_suspended_by(&self) -> Option<&SettingsProblem> {
        self.problems
            .iter()
            .find(|problem| problem.suspends_allow_rules())
    }
}

/// The largest settings file read (a FIFO or `/dev/zero` behind the name must not hang a `list`).
const MAX_SETTINGS_BYTES: u64 = 4 << 20;

/// Whether a settings file may be reached through a symbolic link: the user's own config dir
/// yes (dotfile managers link it), a project's files never (a repository can commit a link).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Links {
    Follow,
    Refuse,
}

fn load_file(
    layer: Layer,
    path: PathBuf,
    links: Links,
    problems: &mut Vec<SettingsProblem>,
) -> SettingsFile {
    let unreadable = |reason: String| SettingsProblem::Unreadable {
        path: path.clone(),
        reason,
    };
    let text = match links {
        Links::Refuse => match read_text_no_follow(&path, MAX_SETTINGS_BYTES) {
            Ok(text) => Ok(text),
            Err(NoLinkError::Link(_)) => Err(unreadable(
                "it is a symbolic link, which a repository can commit; earshot does not follow links in a project".into(),
            )),
            Err(NoLinkError::Io { source, .. }) => Err(unreadable(source.to_string())),
        },
        Links::Follow => read_user_file(&path).map_err(unreadable),
    };
    let value = match text {
        Ok(None) => None,
        Err(problem) => {
            problems.push(problem);
            None
        }
        Ok(Some(text)) => match parse_settings(&path, &text) {
            Ok(value) => {
                problems.extend(misspelt_keys(&value).into_iter().map(|what| {
                    SettingsProblem::Misspelt {
                        path: path.clone(),
                        what,
                    }
                }));
                problems.extend(extension_env_problems(&value).into_iter().map(|what| {
                    SettingsProblem::Unusable {
                        path: path.clone(),
                        what,
                    }
                }));
                Some(value)
            }
            Err(problem) => {
                problems.push(problem);
                None
            }
        },
    };
    SettingsFile { layer, path, value }
}

/// Reads the user's own settings file (links followed); `Ok(None)` when absent.
fn read_user_file(path: &Path) -> Result<Option<String>, String> {
    match std::fs::metadata(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Ok(meta) if !meta.is_file() || meta.len() > MAX_SETTINGS_BYTES => {
            return Err(format!(
                "it is not a regular file of at most {MAX_SETTINGS_BYTES} bytes"
            ));
        }
        _ => {}
    }
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error.to_string()),
    }
}

/// Parses a settings file's text: a JSON object, or the problem with its line and column. A key
/// that appears twice in one object, at any depth, is refused like a syntax error: JSON keeps
/// only the last one, which would silently drop a deny rule.
pub fn parse_settings(path: &Path, text: &str) -> Result<Value, SettingsProblem> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match from_str_refusing_duplicates(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(SettingsProblem::NotAnObject {
            path: path.to_path_buf(),
        }),
        Err(StrictJsonError::DuplicateKey { line, column, key }) => {
            Err(SettingsProblem::DuplicateKey {
                path: path.to_path_buf(),
                line,
                column,
                key,
            })
        }
        Err(StrictJsonError::Syntax {
            line,
            column,
            reason,
        }) => Err(SettingsProblem::Malformed {
            path: path.to_path_buf(),
            line,
            column,
            reason,
        }),
    }
}

/// Why the local settings file must not be used at all, if it must not: it or its folder is a
/// symbolic link, or someone else owns it. No git command is run (a repository's `.git/config`
/// can make git execute commands, and git's view of what is tracked is no proof of who wrote
/// the file): what the file grants counts only where earshot signed it for this user.
fn local_file_refusal(path: &Path) -> Option<SettingsProblem> {
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
    None
}
