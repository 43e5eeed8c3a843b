//! Finding the project a command runs in, and the paths inside it.

use std::path::{Path, PathBuf};

/// The project's earshot paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectPaths {
    /// The project root (canonical).
    pub root: PathBuf,
}

impl ProjectPaths {
    /// Paths for the project rooted at `root`.
    pub fn new(root: PathBuf) -> ProjectPaths {
        ProjectPaths { root }
    }

    /// `.earshot/` in the project.
    pub fn earshot_dir(&self) -> PathBuf {
        self.root.join(".earshot")
    }

    /// `.earshot/settings.json`, checked in.
    pub fn project_settings(&self) -> PathBuf {
        self.earshot_dir().join("settings.json")
    }

    /// `.earshot/settings.local.json`, never committed.
    pub fn local_settings(&self) -> PathBuf {
        self.earshot_dir().join("settings.local.json")
    }

    /// `.earshot/extensions/`.
    pub fn extensions_dir(&self) -> PathBuf {
        self.earshot_dir().join("extensions")
    }

    /// `.earshot/plugins/`.
    pub fn plugins_dir(&self) -> PathBuf {
        self.earshot_dir().join("plugins")
    }
}

/// The project root for `start`: the nearest ancestor with a `.earshot/` directory (other than
/// the user config dir itself, which lives in the home directory), else the nearest with `.git`,
/// else `start`. The result is canonical, so the same project always has the same path.
pub fn find_project_root(start: &Path, user_config_dir: Option<&Path>) -> PathBuf {
    let start = start.canonicalize().unwrap_or_else(|_| start.to_path_buf());
    let user_config = user_config_dir.and_then(|dir| dir.canonicalize().ok());
    let is_project_dir = |dir: &Path| {
        let candidate = dir.join(".earshot");
        candidate.is_dir() && candidate.canonicalize().ok() != user_config
    };
    if let Some(found) = start.ancestors().find(|dir| is_project_dir(dir)) {
        return found.to_path_buf();
    }
    if let Some(found) = start.ancestors().find(|dir| dir.join(".git").exists()) {
        return found.to_path_buf();
    }
    start
}
