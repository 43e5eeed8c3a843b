//! Editing a settings file safely: under a lock, refusing a file that does not parse, keeping
//! every key the edit does not own (and their order), and replacing the file atomically.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::layers::{SettingsProblem, parse_settings};
use super::no_links::{
    NoLinkError, open_dir_no_follow, open_lock_no_follow, read_text_no_follow, refuse_links_below,
};

/// Why a settings file could not be edited.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// The file exists but does not parse; it is left untouched.
    #[error("refusing to rewrite it: {0}")]
    Unparsable(SettingsProblem),
    /// The file, its lock or a folder on the way is a symbolic link inside the project.
    #[error(transparent)]
    Link(NoLinkError),
    /// Reading, locking or writing failed.
    #[error("cannot write {path}: {reason}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
}

impl From<NoLinkError> for EditError {
    /// A link stays a link (its own message names it); any other failure is an I/O error.
    fn from(error: NoLinkError) -> EditError {
        match error {
            NoLinkError::Io { path, source } => EditError::Io {
                path,
                reason: source.to_string(),
            },
            link => EditError::Link(link),
        }
    }
}

/// Applies `change` to the JSON object in the user's own settings file `path` (an absent file is
/// an empty object) and writes the result atomically. Links are followed: the user's config dir is
/// theirs to arrange (dotfile managers link `settings.json`). For a file inside a project use
/// [`edit_project_settings`]. Concurrent edits of the same file serialise on a lock file beside
/// it, so two edits made at once both land.
///
/// # Errors
/// [`EditError::Unparsable`] when the file does not parse (it is not touched);
/// [`EditError::Io`] when it cannot be read, locked or written.
pub fn edit_settings(path: &Path, change: impl FnOnce(&mut Value)) -> Result<(), EditError> {
    edit(None, path, change)
}

/// As [`edit_settings`], for a file inside the project at `root`: the file, its lock file and
/// every folder between `root` and them must not be symbolic links (a repository can commit
/// one), and none is followed.
///
/// # Errors
/// As [`edit_settings`], and [`EditError::Link`] for a link.
pub fn edit_project_settings(
    root: &Path,
    path: &Path,
    change: impl FnOnce(&mut Value),
) -> Result<(), EditError> {
    edit(Some(root), path, change)
}

/// The largest settings file earshot rewrites.
const MAX_EDITED_BYTES: u64 = 4 << 20;

fn edit(
    project_root: Option<&Path>,
    path: &Path,
    change: impl FnOnce(&mut Value),
) -> Result<(), EditError> {
    let io = |reason: std::io::Error| EditError::Io {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    };
    let dir = path.parent().ok_or_else(|| EditError::Io {
        path: path.to_path_buf(),
        reason: "it has no parent directory".into(),
    })?;
    let lock_path = lock_path_for(path);
    // A checked-in file (`.earshot/settings.json`) is locked through its folder, so no lock file
    // is left beside it for `git add .earshot` to commit; the local file keeps its lock file,
    // which git ignores with it.
    let lock_folder = project_root.is_some() && !is_local_file(path);
    if let Some(root) = project_root {
        refuse_links_below(root, path)?;
        if !lock_folder {
            refuse_links_below(root, &lock_path)?;
        }
    }
    std::fs::create_dir_all(dir).map_err(io)?;
    let lock = if lock_folder {
        open_dir_no_follow(dir)?
    } else if project_root.is_some() {
        open_lock_no_follow(&lock_path)?
    } else {
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io)?
    };
    lock.lock().map_err(io)?;

    let text = if project_root.is_some() {
        read_text_no_follow(path, MAX_EDITED_BYTES)?
    } else {
        match std::fs::read_to_string(path) {
            Ok(text) => Some(text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(error) => return Err(io(error)),
        }
    };
    let mut value = match text {
        Some(text) => parse_settings(path, &text).map_err(EditError::Unparsable)?,
        None => Value::Object(Default::default()),
    };
    change(&mut value);
    let mut text = serde_json::to_string_pretty(&value).expect("a JSON value serialises");
    text.push('\n');

    let mut temp = tempfile::Builder::new()
        .prefix(".settings-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io)?;
    temp.write_all(text.as_bytes()).map_err(io)?;
    temp.as_file().sync_all().map_err(io)?;
    pause_for_tests();
    temp.persist(path).map_err(|error| io(error.error))?;
    drop(lock);
    Ok(())
}

/// Whether `path` is a project's local settings file (which keeps a lock file of its own).
fn is_local_file(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| name == "settings.local.json")
}

fn lock_path_for(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// Test hook: `EARSHOT_TEST_PAUSE_BEFORE_RENAME_MS` holds a write between writing the temp file
/// and renaming it, so a test can kill the writer there and check the old file survived.
fn pause_for_tests() {
    if let Some(millis) = std::env::var("EARSHOT_TEST_PAUSE_BEFORE_RENAME_MS")
        .ok()
        .and_then(|value| value.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(millis));
    }
}
