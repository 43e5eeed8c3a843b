//! Trusted project code runs from what was hashed, not from what its path names now.
//!
//! A trusted project hook or stdio server names project files (`python3 .earshot/hooks/g.py`,
//! `node server.js`); its trust digest covers them (see `mcp::digest`). Run by path, the
//! interpreter would open them tens of milliseconds after the check, and a file swapped in between
//! would run unreviewed. So each file of the digest's [`Manifest`] is copied into a private
//! snapshot under the user's cache dir (`<config dir>/cache/snapshots/<key>/`, the project's
//! relative layout), re-read and re-hashed while it is copied: bytes that are no longer the ones
//! the digest covered refuse the run ([`SnapshotError::Lapsed`]). Files are made read-only, the
//! snapshot is written to a temporary folder beside its final name and renamed into place (so
//! concurrent sessions either make it or use the one another made), and a snapshot is keyed by
//! the trusted digest and the project, so one made once is used as long as the trust holds.
//!
//! What the digest does not hash is not copied: a `node_modules` folder beside a snapshot's
//! folder (Node looks for packages there) and a `package.json` of a folder the digest did not
//! walk (Node reads its `type`) are links back to the project's, as unhashed as before.
//! `words` rewrites a command's words that name project files to their snapshot paths.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use super::{DEFINITION_PART, Manifest};

mod words;

pub use words::{Launch, exec_launch, shell_launch};

/// The folder under the user's cache dir (`<config dir>/cache/`) that holds the snapshots.
pub const SNAPSHOTS_DIR: &str = "snapshots";

/// How long a snapshot nobody used is kept (pruned when a new one is made).
const UNUSED_KEPT_FOR: Duration = Duration::from_secs(14 * 24 * 3600);

/// How long an unfinished temporary snapshot (a crashed writer's) is kept.
const TEMPORARY_KEPT_FOR: Duration = Duration::from_secs(3600);

/// The most bytes hashed into one digest (`mcp::digest::MAX_HASHED_BYTES`): a file that crossed
/// it was hashed up to what was left of it.
const HASHED_BYTES_BUDGET: u64 = crate::mcp::digest::MAX_HASHED_BYTES;

/// Why a snapshot could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// A file's bytes are no longer the ones its trust digest covered (it changed after the
    /// check), so what would run is not what was trusted.
    #[error(
        "`{file}` changed after its trust was checked, so what would run is not what you trusted (the trust has lapsed)"
    )]
    Lapsed {
        /// The file, relative to the project.
        file: String,
    },
    /// The snapshot could not be written.
    #[error("could not copy what it runs into {dir}: {error}; check that the folder is writable")]
    Write {
        /// The snapshots folder.
        dir: String,
        /// What failed.
        error: String,
    },
}

/// The private, read-only copy of what a trust digest covered, that trusted project code runs
/// from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The snapshot's root: the project's root in the copy.
    dir: PathBuf,
    /// The project root (canonical) the manifest is relative to.
    project: PathBuf,
    /// Each file and link copied, relative to the project.
    entries: BTreeSet<PathBuf>,
    /// Each folder holding an entry (the root as the empty path).
    folders: BTreeSet<PathBuf>,
}

/// What one part of a manifest is, as the digest recorded it.
enum Part<'a> {
    /// A file hashed as `sha256:` of its length and bytes.
    File(&'a str),
    /// A file past the digest's budget: only its size counts.
    Unhashed(u64),
    /// A symbolic link with this text (one that led nowhere is not copied).
    Link(&'a str),
}

fn part_of<'a>(path: &str, value: &'a str) -> Option<Part<'a>> {
    if path == DEFINITION_PART
        || Path::new(path)
            .file_name()
            .is_some_and(|n| n == ".gitignore")
    {
        // An ignore file's digest is of its patterns, and it runs nothing.
        return None;
    }
    if value.starts_with("sha256:") {
        return Some(Part::File(value));
    }
    if let Some(size) = value.strip_prefix("unhashed:") {
        return size.parse().ok().map(Part::Unhashed);
    }
    if let Some(text) = value.strip_prefix("link to ") {
        if text.ends_with(" (dangling)") {
            return None;
        }
        return Some(Part::Link(text));
    }
    // `unreadable`, or what the digest marks in ways this copy does not know: not copied.
    None
}

/// A manifest path as a relative path of plain components, or `None`.
fn relative_path(part: &str) -> Option<PathBuf> {
    let path = Path::new(part);
    path.components()
        .all(|component| matches!(component, Component::Normal(_)))
        .then(|| path.to_path_buf())
        .filter(|path| !path.as_os_str().is_empty())
}

impl Snapshot {
    /// The snapshot of what `manifest` covers (the manifest of the trusted digest `digest`, made
    /// relative to the canonical project root `project`), under `snapshots` (the user's
    /// `<config dir>/cache/snapshots`): the one already made for this digest and project, else a
    /// new one. `None` when the manifest names no project file (nothing to copy).
    ///
    /// # Errors
    /// [`SnapshotError::Lapsed`] when a file no longer has the bytes the manifest recorded;
    /// [`SnapshotError::Write`] when the copy cannot be written.
    pub fn take(
        snapshots: &Path,
        digest: &str,
        project: &Path,
        manifest: &Manifest,
    ) -> Result<Option<Snapshot>, SnapshotError> {
        let parts: Vec<(PathBuf, Part<'_>)> = manifest
            .parts()
            .filter_map(|(path, value)| Some((relative_path(path)?, part_of(path, value)?)))
            .collect();
        if parts.is_empty() {
            return Ok(None);
        }
        let mut key = Sha256::new();
        key.update(b"earshot-snapshot-v1\0");
        key.update(digest.as_bytes());
        key.update([0]);
        key.update(project.as_os_str().as_encoded_bytes());
        let dir = snapshots.join(hex::encode(key.finalize()));
        let entries: BTreeSet<PathBuf> = parts.iter().map(|(path, _)| path.clone()).collect();
        let mut folders = BTreeSet::new();
        for entry in &entries {
            for ancestor in entry.ancestors().skip(1) {
                folders.insert(ancestor.to_path_buf());
            }
        }
        let snapshot = Snapshot {
            dir,
            project: project.to_path_buf(),
            entries,
            folders,
        };
        if snapshot.dir.is_dir() {
            // Made before (whole: it was renamed into place), and used again now.
            touch(&snapshot.dir);
            return Ok(Some(snapshot));
        }
        let write_error = |error: std::io::Error| SnapshotError::Write {
            dir: snapshots.display().to_string(),
            error: error.to_string(),
        };
        std::fs::create_dir_all(snapshots).map_err(write_error)?;
        let temporary = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempdir_in(snapshots)
            .map_err(write_error)?
            .keep();
        let written = snapshot.write(&temporary, &parts);
        let written = written.and_then(|()| {
            make_folders_read_only(&temporary).map_err(|error| SnapshotError::Write {
                dir: snapshots.display().to_string(),
                error: error.to_string(),
            })
        });
        if let Err(error) = written {
            remove_tree(&temporary);
            return Err(error);
        }
        if let Err(error) = std::fs::rename(&temporary, &snapshot.dir) {
            remove_tree(&temporary);
            // Another session made it meanwhile: theirs is the same copy.
            if !snapshot.dir.is_dir() {
                return Err(write_error(error));
            }
        }
        prune(snapshots, &snapshot.dir);
        Ok(Some(snapshot))
    }

    /// The snapshot's root (the project's root in the copy).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The project root the snapshot copies from (canonical).
    pub fn project(&self) -> &Path {
        &self.project
    }

    /// Where `relative` (a path relative to the project) is in the snapshot, when the snapshot
    /// holds it: a file or link it copied, or a path under a link it copied. With `folders`, a
    /// folder holding what it copied counts too.
    pub fn holds(&self, relative: &Path, folders: bool) -> Option<PathBuf> {
        let held = self.entries.contains(relative)
            || relative
                .ancestors()
                .skip(1)
                .any(|ancestor| self.entries.contains(ancestor))
            || (folders && self.folders.contains(relative));
        held.then(|| self.path_of(relative))
    }

    /// Where `relative` (relative to the project) is in the snapshot (the root for the empty
    /// path).
    pub fn path_of(&self, relative: &Path) -> PathBuf {
        if relative.as_os_str().is_empty() {
            self.dir.clone()
        } else {
            self.dir.join(relative)
        }
    }

    /// Copies every part into `into`, checking each file's bytes against the manifest, then
    /// links what Node looks for and the digest does not hash.
    fn write(&self, into: &Path, parts: &[(PathBuf, Part<'_>)]) -> Result<(), SnapshotError> {
        let write_error = |error: std::io::Error| SnapshotError::Write {
            dir: into.parent().unwrap_or(into).display().to_string(),
            error: error.to_string(),
        };
        let lapsed = |path: &Path| SnapshotError::Lapsed {
            file: path.display().to_string(),
        };
        // Bytes hashed in full, and the file(s) whose hash differs: one file may have crossed the
        // digest's byte budget and been hashed only in part.
        let mut hashed_bytes: u64 = 0;
        let mut differing: Vec<(&Path, &str, u64)> = Vec::new();
        for (relative, part) in parts {
            let target = into.join(relative);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(write_error)?;
            }
            let source = self.project.join(relative);
            match part {
                Part::Link(text) => {
                    let now = std::fs::read_link(&source).map_err(|_| lapsed(relative))?;
                    if now.as_os_str() != Path::new(text).as_os_str() {
                        return Err(lapsed(relative));
                    }
                    let Some(inside) = self.link_target(relative, &now) else {
                        // It leads out of the project or nowhere: the digest refused or
                        // recorded it as dangling; nothing to copy.
                        continue;
                    };
                    std::os::unix::fs::symlink(inside, &target).map_err(write_error)?;
                }
                Part::File(expected) => {
                    let (digest, length) =
                        copy_hashed(&source, &target).map_err(|_| lapsed(relative))?;
                    if digest == *expected {
                        hashed_bytes += length;
                    } else {
                        differing.push((relative, expected, length));
                    }
                }
                Part::Unhashed(size) => {
                    let (_, length) =
                        copy_hashed(&source, &target).map_err(|_| lapsed(relative))?;
                    if length != *size {
                        return Err(lapsed(relative));
                    }
                }
            }
        }
        match differing.as_slice() {
            [] => {}
            [(relative, expected, length)] if hashed_bytes < HASHED_BYTES_BUDGET => {
                // Hashed only up to what was left of the budget: compare that much of the copy
                // (ours now, so it cannot change again).
                let budget = HASHED_BYTES_BUDGET - hashed_bytes;
                let copy = into.join(relative);
                let digest = hash_prefix(&copy, *length, budget).map_err(|_| lapsed(relative))?;
                if digest != *expected {
                    return Err(lapsed(relative));
                }
            }
            [(relative, ..), ..] => return Err(lapsed(relative)),
        }
        self.link_unhashed(into).map_err(write_error)
    }

    /// Where the link `relative` with text `text` leads, as a relative text inside the
    /// snapshot: `None` when it leads out of the project.
    fn link_target(&self, relative: &Path, text: &Path) -> Option<PathBuf> {
        let folder = relative.parent().unwrap_or(Path::new(""));
        let absolute = lexically_normal(&self.project.join(folder).join(text));
        let inside = absolute.strip_prefix(&self.project).ok()?;
        let mut up = PathBuf::new();
        for _ in folder.components() {
            up.push("..");
        }
        let joined = up.join(inside);
        Some(if joined.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            joined
        })
    }

    /// Links back to the project what Node looks for beside the snapshot's folders and the
    /// digest does not hash: each `node_modules` folder, and each `package.json` not copied.
    fn link_unhashed(&self, into: &Path) -> std::io::Result<()> {
        for folder in &self.folders {
            for name in ["node_modules", "package.json"] {
                let relative = folder.join(name);
                let source = self.project.join(&relative);
                let target = into.join(&relative);
                if self.entries.contains(&relative)
                    || std::fs::symlink_metadata(&target).is_ok()
                    || std::fs::symlink_metadata(&source).is_err()
                {
                    continue;
                }
                std::os::unix::fs::symlink(&source, &target)?;
            }
        }
        Ok(())
    }
}

/// Opens `path` for reading without following a link and without blocking on a FIFO, refusing
/// anything but a regular file.
fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(file)
}

/// Copies `source` to `target` (read-only, executable when the source is), returning the digest
/// the trust digest records for a file (`sha256:` of its length and bytes) and the length.
fn copy_hashed(source: &Path, target: &Path) -> std::io::Result<(String, u64)> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut file = open_regular(source)?;
    let meta = file.metadata()?;
    let length = meta.len();
    let mode = if meta.permissions().mode() & 0o111 != 0 {
        0o555
    } else {
        0o444
    };
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(target)?;
    let mut hasher = Sha256::new();
    hasher.update(length.to_be_bytes());
    let mut buffer = vec![0u8; 64 * 1024];
    let mut copied: u64 = 0;
    loop {
        let read = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        hasher.update(&buffer[..read]);
        out.write_all(&buffer[..read])?;
        copied += read as u64;
    }
    if copied != length {
        // It grew or shrank while it was read.
        return Err(std::io::Error::other("changed while copied"));
    }
    out.sync_all()?;
    out.set_permissions(std::fs::Permissions::from_mode(mode))?;
    Ok((format!("sha256:{}", hex::encode(hasher.finalize())), length))
}

/// `sha256:` of `length` and the first `budget` bytes of `path` (a file hashed only in part).
fn hash_prefix(path: &Path, length: u64, budget: u64) -> std::io::Result<String> {
    let file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    hasher.update(length.to_be_bytes());
    let mut reader = file.take(budget);
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buffer)? {
            0 => break,
            read => hasher.update(&buffer[..read]),
        }
    }
    Ok(format!("sha256:{}", hex::encode(hasher.finalize())))
}

/// `path` with `.` and `..` resolved by their text alone.
pub(crate) fn lexically_normal(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    normal
}

/// Makes every folder under `root` (and `root`) read-only, the deepest first.
fn make_folders_read_only(root: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    for entry in std::fs::read_dir(root)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            make_folders_read_only(&entry.path())?;
        }
    }
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o555))
}

/// Removes a snapshot tree (its folders are read-only: made writable first), ignoring errors.
fn remove_tree(root: &Path) {
    fn writable(path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700));
        if let Ok(entries) = std::fs::read_dir(path) {
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    writable(&entry.path());
                }
            }
        }
    }
    if std::fs::symlink_metadata(root).is_ok_and(|meta| meta.is_dir()) {
        writable(root);
        let _ = std::fs::remove_dir_all(root);
    }
}

/// Marks a snapshot as used now (its folder's modification time), for [`prune`].
fn touch(dir: &Path) {
    if let Ok(folder) = std::fs::File::open(dir) {
        let _ = folder.set_modified(SystemTime::now());
    }
}

/// Removes the snapshots not used for [`UNUSED_KEPT_FOR`] and temporary ones older than
/// [`TEMPORARY_KEPT_FOR`], except `keep`.
fn prune(snapshots: &Path, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(snapshots) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let path = entry.path();
        if path == keep {
            continue;
        }
        let temporary = entry.file_name().to_string_lossy().starts_with(".tmp-");
        let kept_for = if temporary {
            TEMPORARY_KEPT_FOR
        } else {
            UNUSED_KEPT_FOR
        };
        let old = entry
            .metadata()
            .and_then(|meta| meta.modified())
            .ok()
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|age| age > kept_for);
        if old {
            remove_tree(&path);
        }
    }
}

/// The snapshots folder of a user config dir: `<config dir>/cache/snapshots`.
pub fn snapshots_dir(config_dir: &Path) -> PathBuf {
    config_dir.join("cache").join(SNAPSHOTS_DIR)
}

/// [`Snapshot::take`] as a trusted hook or server needs it: under `config_dir`'s snapshots
/// folder, for the canonical `project_root`, with a lapsed trust told as one line ending in the
/// command that trusts it again (`retrust`, e.g. `earshot hooks trust NAME`).
///
/// # Errors
/// The one-line text of a [`SnapshotError`].
pub fn take_for_run(
    config_dir: &Path,
    project_root: &Path,
    digest: &str,
    manifest: &Manifest,
    retrust: &str,
) -> Result<Option<Snapshot>, String> {
    let root = project_root
        .canonicalize()
        .unwrap_or_else(|_| project_root.to_path_buf());
    Snapshot::take(&snapshots_dir(config_dir), digest, &root, manifest).map_err(|error| match error
    {
        SnapshotError::Lapsed { .. } => format!("{error}; review it, then run `{retrust}`"),
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::add_named_project_files;

    /// The manifest the digest walk makes for `words` in `root`.
    fn manifest_of(root: &Path, words: &[&str]) -> Manifest {
        let mut manifest = Manifest::new();
        let mut material = Vec::new();
        add_named_project_files(
            words.iter().copied(),
            root,
            root,
            &mut material,
            &mut manifest,
        )
        .unwrap();
        manifest
    }

    fn project() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir_all(root.join("hooks/lib")).unwrap();
        std::fs::write(root.join("hooks/g.sh"), "echo trusted\n").unwrap();
        std::fs::write(root.join("hooks/lib/util.sh"), "echo util\n").unwrap();
        std::os::unix::fs::symlink("lib/util.sh", root.join("hooks/u.sh")).unwrap();
        let root = root.canonicalize().unwrap();
        let cache = dir.path().join("cache");
        (dir, root, cache)
    }

    #[test]
    fn copies_what_the_digest_hashed_read_only_and_reuses_it() {
        let (_dir, root, cache) = project();
        let manifest = manifest_of(&root, &["hooks/g.sh"]);
        let snapshot = Snapshot::take(&cache, "d1", &root, &manifest)
            .unwrap()
            .unwrap();
        let copy = snapshot.dir().join("hooks/g.sh");
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), "echo trusted\n");
        assert!(std::fs::metadata(&copy).unwrap().permissions().readonly());
        assert_eq!(
            std::fs::read_to_string(snapshot.dir().join("hooks/u.sh")).unwrap(),
            "echo util\n",
            "a link inside the project leads inside the snapshot"
        );
        assert!(!snapshot.dir().starts_with(&root));
        // A change after the snapshot was made never reaches it: the same trusted digest uses
        // the same copy.
        std::fs::write(root.join("hooks/g.sh"), "echo swapped\n").unwrap();
        let again = Snapshot::take(&cache, "d1", &root, &manifest)
            .unwrap()
            .unwrap();
        assert_eq!(again.dir(), snapshot.dir());
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), "echo trusted\n");
        assert_eq!(
            again.holds(Path::new("hooks/g.sh"), false),
            Some(copy.clone())
        );
        assert_eq!(again.holds(Path::new("hooks"), false), None);
        assert!(again.holds(Path::new("hooks"), true).is_some());
        assert_eq!(again.holds(Path::new("other.sh"), true), None);
    }

    #[test]
    fn a_file_changed_after_the_check_refuses_the_copy_and_leaves_nothing() {
        let (_dir, root, cache) = project();
        let manifest = manifest_of(&root, &["hooks/g.sh"]);
        std::fs::write(root.join("hooks/g.sh"), "echo swapped\n").unwrap();
        let error = Snapshot::take(&cache, "d2", &root, &manifest).unwrap_err();
        assert_eq!(
            error,
            SnapshotError::Lapsed {
                file: "hooks/g.sh".into()
            }
        );
        assert!(
            error.to_string().contains("the trust has lapsed"),
            "{error}"
        );
        let left: Vec<_> = std::fs::read_dir(&cache).unwrap().flatten().collect();
        assert!(left.is_empty(), "{left:?}");
        // A link in the named folder retargeted after the check is refused too.
        std::fs::write(root.join("hooks/g.sh"), "echo trusted\n").unwrap();
        let manifest = manifest_of(&root, &["hooks/g.sh"]);
        std::fs::remove_file(root.join("hooks/u.sh")).unwrap();
        std::os::unix::fs::symlink("lib/../lib/util.sh", root.join("hooks/u.sh")).unwrap();
        assert_eq!(
            Snapshot::take(&cache, "d3", &root, &manifest),
            Err(SnapshotError::Lapsed {
                file: "hooks/u.sh".into()
            })
        );
        // A FIFO in place of a file is refused without blocking.
        std::fs::remove_file(root.join("hooks/g.sh")).unwrap();
        let fifo =
            std::ffi::CString::new(root.join("hooks/g.sh").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo only creates a file.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        assert_eq!(
            Snapshot::take(&cache, "d2", &root, &manifest),
            Err(SnapshotError::Lapsed {
                file: "hooks/g.sh".into()
            })
        );
    }

    #[test]
    fn a_manifest_without_project_files_needs_no_snapshot() {
        let (_dir, root, cache) = project();
        let mut manifest = Manifest::new();
        manifest.insert(DEFINITION_PART, "x");
        assert_eq!(Snapshot::take(&cache, "d", &root, &manifest), Ok(None));
        assert!(!cache.exists());
    }

    #[test]
    fn node_modules_beside_a_snapshot_folder_is_linked_back() {
        let (_dir, root, cache) = project();
        std::fs::create_dir_all(root.join("node_modules/dep")).unwrap();
        std::fs::write(root.join("package.json"), "{}").unwrap();
        let manifest = manifest_of(&root, &["hooks/g.sh"]);
        let snapshot = Snapshot::take(&cache, "d", &root, &manifest)
            .unwrap()
            .unwrap();
        assert_eq!(
            std::fs::read_link(snapshot.dir().join("node_modules")).unwrap(),
            root.join("node_modules")
        );
        assert_eq!(
            std::fs::read_link(snapshot.dir().join("package.json")).unwrap(),
            root.join("package.json")
        );
    }
}
