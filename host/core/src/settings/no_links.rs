//! Reading and creating files inside a project without following symbolic links.
//!
//! A repository can commit a link anywhere in its tree: `.earshot/settings.local.json` pointing at
//! `/proc/self/environ`, a `.gitignore` pointing at a secret, a dangling lock file pointing at
//! `~/.bashrc`. Every file earshot reads in order to rewrite it, or creates, inside a project goes
//! through here, so a link is refused with a clear error instead of being followed.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Why a project file was refused or could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NoLinkError {
    /// The file, or a folder between the project root and it, is a symbolic link.
    #[error(
        "{0} is a symbolic link (a repository can commit one); earshot does not read or write through links in a project: remove it, then run the command again"
    )]
    Link(PathBuf),
    /// Anything else the file system said.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

/// Refuses `path` when it, or any folder between `root` and it, is a symbolic link. A part that
/// does not exist yet is fine (it will be created as a real file or folder).
///
/// # Errors
/// [`NoLinkError::Link`] naming the first link found.
pub fn refuse_links_below(root: &Path, path: &Path) -> Result<(), NoLinkError> {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let mut current = root.to_path_buf();
    for part in relative.components() {
        current.push(part);
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(NoLinkError::Link(current));
            }
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(source) => {
                return Err(NoLinkError::Io {
                    path: current,
                    source,
                });
            }
        }
    }
    Ok(())
}

/// Opens `path` with `options` plus `O_NOFOLLOW` (and `extra_flags`), so a link in the last
/// component fails (ELOOP) instead of being followed; reports that as [`NoLinkError::Link`].
fn open_no_follow(
    path: &Path,
    options: &mut std::fs::OpenOptions,
    extra_flags: i32,
) -> Result<File, NoLinkError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | extra_flags);
    }
    options.open(path).map_err(|source| {
        #[cfg(unix)]
        if source.raw_os_error() == Some(libc::ELOOP) {
            return NoLinkError::Link(path.to_path_buf());
        }
        NoLinkError::Io {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// Reads `path` as text without following a link; `Ok(None)` when it does not exist. At most
/// `max_bytes` are read (a FIFO or `/dev/zero` behind the name must not hang the command).
///
/// # Errors
/// [`NoLinkError::Link`] for a link; [`NoLinkError::Io`] when it is not a readable regular file.
pub fn read_text_no_follow(path: &Path, max_bytes: u64) -> Result<Option<String>, NoLinkError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // A FIFO must not block the open.
    let file = match open_no_follow(path, &mut options, libc::O_NONBLOCK) {
        Ok(file) => file,
        Err(NoLinkError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None);
        }
        Err(error) => return Err(error),
    };
    let io = |source: std::io::Error| NoLinkError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() || meta.len() > max_bytes {
        return Err(io(std::io::Error::other(format!(
            "it is not a regular file of at most {max_bytes} bytes"
        ))));
    }
    let mut text = String::new();
    file.take(max_bytes).read_to_string(&mut text).map_err(io)?;
    Ok(Some(text))
}

/// Opens a folder (to lock it) without following a link.
///
/// # Errors
/// [`NoLinkError::Link`] for a link; [`NoLinkError::Io`] when it is not a folder or cannot be
/// opened.
pub fn open_dir_no_follow(path: &Path) -> Result<File, NoLinkError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    open_no_follow(path, &mut options, libc::O_DIRECTORY)
}

/// Opens (creating it when absent) a lock file without following a link.
///
/// # Errors
/// [`NoLinkError::Link`] for a link (dangling or not); [`NoLinkError::Io`] otherwise.
pub fn open_lock_no_follow(path: &Path) -> Result<File, NoLinkError> {
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && !meta.file_type().is_symlink()
        && !meta.is_file()
    {
        return Err(NoLinkError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other("it is not a regular file"),
        });
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    // A FIFO planted as the lock must not block the open (it is refused just below).
    let file = open_no_follow(path, &mut options, libc::O_NONBLOCK)?;
    let meta = file.metadata().map_err(|source| NoLinkError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if !meta.is_file() {
        return Err(NoLinkError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other("it is not a regular file"),
        });
    }
    Ok(file)
}
