//! Every file of a skill's folder, read once: their digest is what `earshot skills trust`
//! records, and the bytes handed to the model are the bytes that were hashed, so a file swapped
//! after the check is never what the model reads.

use std::path::Path;

use sha2::{Digest, Sha256};

/// The most files a skill folder may hold.
pub const MAX_FILES: usize = 1_000;

/// The most bytes a skill folder may hold in all.
pub const MAX_BYTES: u64 = 16 << 20;

/// The most bytes one command file or `SKILL.md` may have.
pub const MAX_FILE_BYTES: u64 = 256 << 10;

/// One file of a skill's folder.
#[derive(Debug, Clone)]
pub struct FolderFile {
    /// Its path relative to the folder, `/`-separated (`references/api.md`).
    pub path: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// A skill folder's files (sorted by path) and their digest.
#[derive(Debug, Clone)]
pub struct FolderContents {
    /// Every file, sorted by path (for the user's own skill, nothing under `.git` or
    /// `node_modules`).
    pub files: Vec<FolderFile>,
    /// `sha256:…` over every path and its bytes.
    pub digest: String,
}

impl FolderContents {
    /// The file at `path` (relative, `/`-separated), if the folder holds it.
    pub fn file(&self, path: &str) -> Option<&FolderFile> {
        self.files
            .binary_search_by(|file| file.path.as_str().cmp(path))
            .ok()
            .map(|index| &self.files[index])
    }
}

/// Reads every file under `folder`, adding every byte read to `spent` (a load's budget).
///
/// A project's skill (`follow_links` false) is read whole: every file counts in its digest,
/// `.git` and `node_modules` included, and a symbolic link, a fifo, a socket or a device
/// anywhere makes the folder refused. The user's own skill may hold links, but only to files
/// inside its own folder (a link to `~/.ssh/id_rsa` or `/proc/self/environ` would hand the model
/// what no `Read` rule was asked about), and its `.git` and `node_modules` are skipped.
///
/// # Errors
/// One phrase: a link, a special file, too many files or bytes, a folder too deep, or a read
/// that failed.
pub fn read_folder(
    folder: &Path,
    follow_links: bool,
    spent: &std::cell::Cell<u64>,
) -> Result<FolderContents, String> {
    // The folder's real path, found when the first link needs it (most skills have none).
    let mut inside: Option<std::path::PathBuf> = None;
    let mut files = Vec::new();
    let mut total = 0u64;
    let mut stack = vec![(folder.to_path_buf(), String::new(), 0usize)];
    while let Some((dir, prefix, depth)) = stack.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|error| format!("{} cannot be read: {error}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|error| format!("{}: {error}", dir.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            let relative = format!("{prefix}{name}");
            let file_type = entry
                .file_type()
                .map_err(|error| format!("{}: {error}", path.display()))?;
            let (is_dir, is_file) = match file_type.is_symlink() {
                true if !follow_links => {
                    return Err(format!(
                        "{relative} is a symbolic link; a project's skill may hold none"
                    ));
                }
                true => {
                    let inside = match &inside {
                        Some(inside) => inside,
                        None => inside.insert(folder.canonicalize().map_err(|error| {
                            format!("{} cannot be read: {error}", folder.display())
                        })?),
                    };
                    let target = path
                        .canonicalize()
                        .map_err(|error| format!("{relative}: {error}"))?;
                    if !target.starts_with(inside) {
                        return Err(format!(
                            "{relative} is a symbolic link out of the skill's folder"
                        ));
                    }
                    let meta = std::fs::metadata(&target)
                        .map_err(|error| format!("{relative}: {error}"))?;
                    (meta.is_dir(), meta.is_file())
                }
                _ => (file_type.is_dir(), file_type.is_file()),
            };
            if is_dir {
                if follow_links && (name == ".git" || name == "node_modules") {
                    continue;
                }
                if depth + 1 > super::discovery::MAX_DEPTH {
                    return Err(format!(
                        "{relative} is deeper than {} folders",
                        super::discovery::MAX_DEPTH
                    ));
                }
                stack.push((path, format!("{relative}/"), depth + 1));
            } else if is_file {
                if files.len() >= MAX_FILES {
                    return Err(format!("it holds more than {MAX_FILES} files"));
                }
                let (bytes, _) = read_no_follow(&path, follow_links, MAX_BYTES - total + 1)
                    .map_err(|error| format!("{relative}: {error}"))?;
                total += bytes.len() as u64;
                spent.set(spent.get() + bytes.len() as u64);
                if total > MAX_BYTES {
                    return Err(format!("it holds more than {} MiB", MAX_BYTES >> 20));
                }
                files.push(FolderFile {
                    path: relative,
                    bytes,
                });
            } else if !follow_links {
                return Err(format!(
                    "{relative} is not a regular file (a fifo, socket or device); a project's skill may hold none"
                ));
            }
            // The user's own fifos, sockets and devices are neither read nor counted.
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let mut hasher = Sha256::new();
    for file in &files {
        hasher.update(file.path.as_bytes());
        hasher.update([0]);
        hasher.update((file.bytes.len() as u64).to_le_bytes());
        hasher.update(&file.bytes);
    }
    Ok(FolderContents {
        files,
        digest: format!("sha256:{}", hex::encode(hasher.finalize())),
    })
}

/// Reads one command file: refused when it is a link inside the project (`follow_links`
/// false) or larger than [`MAX_FILE_BYTES`].
///
/// # Errors
/// One phrase saying why.
pub fn read_file(
    path: &Path,
    follow_links: bool,
    spent: &std::cell::Cell<u64>,
) -> Result<Vec<u8>, String> {
    let (bytes, _) = read_no_follow(path, follow_links, MAX_FILE_BYTES + 1).map_err(|error| {
        if error.raw_os_error() == Some(libc::ELOOP) {
            "is a symbolic link; links are not followed inside the project".to_string()
        } else {
            error.to_string()
        }
    })?;
    spent.set(spent.get() + bytes.len() as u64);
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("is larger than {} KiB", MAX_FILE_BYTES >> 10));
    }
    Ok(bytes)
}

/// Reads `path`; unless `follow_links`, opened so that a link swapped in after the walk looked
/// is refused rather than followed.
/// At most `limit` bytes are read, so a huge file costs no more than the cap it breaks; the
/// file's whole size comes back with them.
pub fn read_no_follow(
    path: &Path,
    follow_links: bool,
    limit: u64,
) -> std::io::Result<(Vec<u8>, u64)> {
    use std::io::Read as _;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    if !follow_links {
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW);
    }
    let file = options.open(path)?;
    let size = file.metadata().map(|meta| meta.len()).unwrap_or_default();
    let mut bytes = Vec::with_capacity(size.min(limit) as usize);
    file.take(limit).read_to_end(&mut bytes)?;
    Ok((bytes, size))
}

/// `bytes`, cut from a longer text at a cap, without a character the cut split: its first bytes
/// are dropped rather than the text refused. Anything else that is not UTF-8 is left for the
/// caller's own check.
pub fn whole_characters(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Err(error) if error.error_len().is_none() => &bytes[..error.valid_up_to()],
        _ => bytes,
    }
}
