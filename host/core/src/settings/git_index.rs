//! Whether git tracks a file, read from the repository's index without running git (a
//! repository's `.git/config` can make git execute commands). An ignore line does not apply to a
//! tracked file, so a repository that committed `.earshot/settings.local.json` would have git
//! commit what earshot writes there, whatever `.gitignore` says.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest index read (a monorepo's index is tens of megabytes).
const MAX_INDEX_BYTES: u64 = 512 << 20;

/// Whether the index of the repository at `top` (the folder holding `.git`) has an entry for
/// `relative` (a `/`-separated path from `top`). An index that is absent or that this reader does
/// not understand (another hash than SHA-1, an unknown version) counts as not tracking it.
pub fn tracks(top: &Path, relative: &str) -> bool {
    let Some(index) = index_path(top) else {
        return false;
    };
    let mut bytes = Vec::new();
    let read = std::fs::File::open(&index)
        .and_then(|file| file.take(MAX_INDEX_BYTES).read_to_end(&mut bytes));
    read.is_ok() && entries(&bytes).is_some_and(|paths| paths.iter().any(|p| p == relative))
}

/// `top/.git/index`, or the index of the git dir a `.git` file names (`gitdir: …`, as in a
/// worktree or submodule).
fn index_path(top: &Path) -> Option<PathBuf> {
    let dot_git = top.join(".git");
    let meta = std::fs::symlink_metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git.join("index"));
    }
    let text = std::fs::read_to_string(&dot_git).ok()?;
    let dir = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    Some(top.join(dir).join("index"))
}

/// The paths of a version 2, 3 or 4 index with SHA-1 object names, or `None` when it does not
/// parse.
fn entries(bytes: &[u8]) -> Option<Vec<String>> {
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    if bytes.get(..4)? != b"DIRC" {
        return None;
    }
    let version = u32_at(4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = u32_at(8)? as usize;
    let mut paths = Vec::with_capacity(count.min(1 << 20));
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        // ctime, mtime, dev, ino, mode, uid, gid, size (40 bytes), SHA-1 (20), flags (2).
        let flags = u16::from_be_bytes(bytes.get(at + 60..at + 62)?.try_into().ok()?);
        at += 62;
        if version >= 3 && flags & 0x4000 != 0 {
            at += 2;
        }
        let path = if version == 4 {
            let (strip, used) = varint(bytes.get(at..)?)?;
            at += used;
            let end = at + bytes.get(at..)?.iter().position(|&b| b == 0)?;
            let keep = previous.len().checked_sub(strip)?;
            let mut path = previous[..keep].to_vec();
            path.extend_from_slice(&bytes[at..end]);
            at = end + 1;
            path
        } else {
            let end = at + bytes.get(at..)?.iter().position(|&b| b == 0)?;
            let path = bytes[at..end].to_vec();
            // Entries are padded with 1-8 NULs to a multiple of 8 bytes.
            let length = end - start;
            at = start + (length + 8) / 8 * 8;
            path
        };
        paths.push(String::from_utf8_lossy(&path).into_owned());
        previous = path;
    }
    Some(paths)
}

/// Git's offset varint (index version 4): the value and how many bytes it took.
fn varint(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut value: usize = 0;
    for (used, &byte) in bytes.iter().enumerate().take(9) {
        if used > 0 {
            value = value.checked_add(1)?;
        }
        value = value
            .checked_mul(128)?
            .checked_add((byte & 0x7f) as usize)?;
        if byte & 0x80 == 0 {
            return Some((value, used + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let status = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
            .args(args)
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn the_index_of_every_version_names_what_git_tracks() {
        for version in ["2", "3", "4"] {
            let dir = tempfile::tempdir().unwrap();
            git(dir.path(), &["init", "-q", "."]);
            for file in [
                ".earshot/settings.local.json",
                ".earshot/settings.json",
                "a/very/long/path/name.txt",
                "a/very/long/path/other.txt",
            ] {
                let path = dir.path().join(file);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, "{}").unwrap();
            }
            git(dir.path(), &["add", "-A"]);
            git(dir.path(), &["update-index", "--index-version", version]);
            assert!(
                tracks(dir.path(), ".earshot/settings.local.json"),
                "v{version}"
            );
            assert!(
                tracks(dir.path(), "a/very/long/path/other.txt"),
                "v{version}"
            );
            assert!(
                !tracks(dir.path(), ".earshot/settings.local.json.lock"),
                "v{version}"
            );
            git(
                dir.path(),
                &["rm", "-q", "--cached", ".earshot/settings.local.json"],
            );
            assert!(
                !tracks(dir.path(), ".earshot/settings.local.json"),
                "v{version}"
            );
        }
    }

    #[test]
    fn no_index_and_a_damaged_one_track_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!tracks(dir.path(), "x"));
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(
            dir.path().join(".git/index"),
            b"DIRC\0\0\0\x02\xff\xff\xff\xff",
        )
        .unwrap();
        assert!(!tracks(dir.path(), "x"));
    }
}
