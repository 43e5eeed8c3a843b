//! Whether git tracks a file, read from the repository's index without running git (a
//! repository's `.git/config` can make git execute commands). An ignore line does not apply to a
//! tracked file, so a repository that committed `.earshot/settings.local.json` would have git
//! commit what earshot writes there, whatever `.gitignore` says.
//!
//! The reader knows index versions 2, 3 and 4 with SHA-1 or SHA-256 object names (the hash is
//! found from the layout itself: only one width parses to the index's end), sparse-directory
//! entries and a split index (`link` extension: the shared index, less the entries it deletes).
//! An index it cannot read is never taken to mean "not tracked": it answers
//! [`Tracked::Unknown`], and the caller writes nothing.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest index read (a monorepo's index is tens of megabytes).
const MAX_INDEX_BYTES: u64 = 512 << 20;

/// The object-name widths git uses: SHA-1 and SHA-256.
const HASH_WIDTHS: [usize; 2] = [20, 32];

/// What a repository's index says about some paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tracked {
    /// None of the paths is in the index (or the repository has no index yet).
    No,
    /// This path (one of those asked about) is in the index.
    Yes(String),
    /// The index could not be read, so any of the paths may be tracked.
    Unknown {
        /// The index file (or the `.git` file naming it).
        index: PathBuf,
        /// Why it could not be read.
        why: String,
    },
}

/// Whether the index of the repository at `top` (the folder holding `.git`) has an entry for any
/// of `relatives` (`/`-separated paths from `top`), or a sparse-directory entry above one.
pub fn tracked(top: &Path, relatives: &[String]) -> Tracked {
    let dot_git = top.join(".git");
    let unknown = |index: &Path, why: String| Tracked::Unknown {
        index: index.to_path_buf(),
        why,
    };
    let git_dir = match git_dir(top) {
        Ok(dir) => dir,
        Err(why) => return unknown(&dot_git, why),
    };
    let index = git_dir.join("index");
    let bytes = match read_bounded(&index) {
        Ok(Some(bytes)) => bytes,
        // A repository nothing was ever added to has no index.
        Ok(None) => return Tracked::No,
        Err(why) => return unknown(&index, why),
    };
    let parsed = match parse(&bytes) {
        Ok(parsed) => parsed,
        Err(why) => return unknown(&index, why),
    };
    let mut paths = parsed.paths;
    if let Some((shared, deleted)) = parsed.link {
        let shared_path = git_dir.join(format!("sharedindex.{shared}"));
        let shared_bytes = match read_bounded(&shared_path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return unknown(&shared_path, "the shared index is missing".into()),
            Err(why) => return unknown(&shared_path, why),
        };
        match parse(&shared_bytes) {
            Ok(base) if base.link.is_none() => {
                paths.extend(
                    base.paths
                        .into_iter()
                        .enumerate()
                        .filter(|(position, _)| !deleted.contains(position))
                        .map(|(_, path)| path),
                );
            }
            Ok(_) => return unknown(&shared_path, "a shared index that links again".into()),
            Err(why) => return unknown(&shared_path, why),
        }
    }
    for relative in relatives {
        let hit = paths.iter().any(|path| {
            path.as_slice() == relative.as_bytes()
                || (path.ends_with(b"/") && relative.as_bytes().starts_with(path))
        });
        if hit {
            return Tracked::Yes(relative.clone());
        }
    }
    Tracked::No
}

/// The repository's git dir: `top/.git` when it is a folder, or the folder a `.git` file names
/// (`gitdir: …`, as in a worktree or a submodule).
fn git_dir(top: &Path) -> Result<PathBuf, String> {
    let dot_git = top.join(".git");
    let meta = std::fs::symlink_metadata(&dot_git).map_err(|error| error.to_string())?;
    let dir = if meta.is_dir() {
        dot_git
    } else {
        let mut text = String::new();
        std::fs::File::open(&dot_git)
            .and_then(|file| file.take(64 << 10).read_to_string(&mut text))
            .map_err(|error| error.to_string())?;
        let named = text
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("gitdir:"))
            .map(str::trim)
            .filter(|dir| !dir.is_empty())
            .ok_or("the .git file names no gitdir")?;
        top.join(named)
    };
    if !dir.is_dir() {
        return Err(format!("its git dir {} is not a folder", dir.display()));
    }
    Ok(dir)
}

/// The file's bytes, `None` when it does not exist.
fn read_bounded(path: &Path) -> Result<Option<Vec<u8>>, String> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error.to_string()),
    };
    let mut bytes = Vec::new();
    file.take(MAX_INDEX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| error.to_string())?;
    if bytes.len() as u64 > MAX_INDEX_BYTES {
        return Err(format!("larger than {} MiB", MAX_INDEX_BYTES >> 20));
    }
    Ok(Some(bytes))
}

/// One index file read.
#[derive(Debug)]
struct Parsed {
    /// Every entry's path, in order (a sparse directory's ends with `/`).
    paths: Vec<Vec<u8>>,
    /// A split index: the shared index's hash (hex) and the positions it deletes from it.
    link: Option<(String, Vec<usize>)>,
}

/// The index with whichever object-name width parses it to its end (both parsing is taken as
/// the union of what they name, never fewer paths).
fn parse(bytes: &[u8]) -> Result<Parsed, String> {
    if bytes.get(..4) != Some(b"DIRC") {
        return Err("not a git index (no DIRC signature)".into());
    }
    let version = u32_at(bytes, 4).ok_or("truncated")?;
    if !(2..=4).contains(&version) {
        return Err(format!(
            "index version {version}, which earshot does not read"
        ));
    }
    let mut fits: Vec<Parsed> = HASH_WIDTHS
        .iter()
        .filter_map(|&width| parse_with(bytes, version, width))
        .collect();
    match fits.len() {
        0 => Err(format!(
            "a version {version} index that parses neither with SHA-1 nor with SHA-256 object names"
        )),
        1 => Ok(fits.remove(0)),
        _ => {
            let mut first = fits.remove(0);
            let second = fits.remove(0);
            first.paths.extend(second.paths);
            if first.link.is_some() || second.link.is_some() {
                return Err("a split index of ambiguous layout".into());
            }
            Ok(first)
        }
    }
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// The entries and extensions of a version 2, 3 or 4 index whose object names are `width`
/// bytes, or `None` unless they end exactly where the trailing checksum (`width` bytes) starts.
fn parse_with(bytes: &[u8], version: u32, width: usize) -> Option<Parsed> {
    let end = bytes.len().checked_sub(width)?;
    let count = u32_at(bytes, 8)? as usize;
    // Ctime, mtime, dev, ino, mode, uid, gid, size (40 bytes), the object name, flags (2).
    let fixed = 40 + width + 2;
    if count > end / fixed + 1 {
        return None;
    }
    let mut paths = Vec::with_capacity(count.min(1 << 20));
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let flags = u16::from_be_bytes(bytes.get(at + fixed - 2..at + fixed)?.try_into().ok()?);
        at += fixed;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            at += 2;
        }
        let path = if version == 4 {
            let (strip, used) = varint(bytes.get(at..end)?)?;
            at += used;
            let length = bytes.get(at..end)?.iter().position(|&b| b == 0)?;
            let keep = previous.len().checked_sub(strip)?;
            let mut path = previous[..keep].to_vec();
            path.extend_from_slice(&bytes[at..at + length]);
            at += length + 1;
            path
        } else {
            let length = bytes.get(at..end)?.iter().position(|&b| b == 0)?;
            let path = bytes[at..at + length].to_vec();
            // Entries are padded with 1-8 NULs to a multiple of 8 bytes.
            let size = at + length - start;
            at = start + (size + 8) / 8 * 8;
            if at > end || bytes[at - 1] != 0 {
                return None;
            }
            path
        };
        // A split index's replacement entries may have empty names (they keep the shared
        // entry's): dropped below, the shared entry counts.
        previous = path.clone();
        paths.push(path);
    }
    let mut link = None;
    while at < end {
        let signature = bytes.get(at..at + 4)?;
        let size = u32_at(bytes, at + 4)? as usize;
        let data = bytes.get(at + 8..(at + 8).checked_add(size)?)?;
        if at + 8 + size > end {
            return None;
        }
        if signature == b"link" {
            let hash = data.get(..width)?;
            if hash.iter().any(|&byte| byte != 0) {
                link = Some(read_link(data, width)?);
            }
        }
        at += 8 + size;
    }
    (at == end).then_some(Parsed {
        paths: paths.into_iter().filter(|path| !path.is_empty()).collect(),
        link,
    })
}

/// A `link` extension: the shared index's name and the entries of it the delete bitmap removes.
fn read_link(data: &[u8], width: usize) -> Option<(String, Vec<usize>)> {
    let hash = data.get(..width)?;
    let hex: String = hash.iter().map(|byte| format!("{byte:02x}")).collect();
    let rest = &data[width..];
    if rest.is_empty() {
        return Some((hex, Vec::new()));
    }
    let (deleted, _) = ewah(rest)?;
    Some((hex, deleted))
}

/// Git's EWAH bitmap: the set bits' positions and how many bytes it took.
fn ewah(bytes: &[u8]) -> Option<(Vec<usize>, usize)> {
    let bit_count = u32_at(bytes, 0)? as usize;
    let words = u32_at(bytes, 4)? as usize;
    let body = bytes.get(8..8 + words.checked_mul(8)?)?;
    let word = |index: usize| -> Option<u64> {
        Some(u64::from_be_bytes(
            body.get(index * 8..index * 8 + 8)?.try_into().ok()?,
        ))
    };
    let mut set = Vec::new();
    let mut position = 0usize;
    let mut index = 0;
    while index < words {
        let marker = word(index)?;
        index += 1;
        let running_bit = marker & 1 == 1;
        let running = ((marker >> 1) & 0xffff_ffff) as usize;
        let literals = (marker >> 33) as usize;
        let run_bits = running.checked_mul(64)?;
        if running_bit {
            if position.checked_add(run_bits)? > bit_count.checked_add(64)? {
                return None;
            }
            set.extend(position..position + run_bits);
        }
        position = position.checked_add(run_bits)?;
        for _ in 0..literals {
            let literal = word(index)?;
            index += 1;
            for bit in 0..64 {
                if literal & (1 << bit) != 0 {
                    set.push(position + bit);
                }
            }
            position = position.checked_add(64)?;
        }
    }
    // The position of the last run-length word (4 bytes) ends the bitmap.
    Some((set, 8 + words * 8 + 4))
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

    fn tracks(top: &Path, relative: &str) -> Tracked {
        tracked(top, &[relative.to_string()])
    }

    const FILES: [&str; 4] = [
        ".earshot/settings.local.json",
        ".earshot/settings.json",
        "a/very/long/path/name.txt",
        "a/very/long/path/other.txt",
    ];

    fn repository(init: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["init", "-q"];
        args.extend_from_slice(init);
        args.push(".");
        git(dir.path(), &args);
        for file in FILES {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "{}").unwrap();
        }
        git(dir.path(), &["add", "-A"]);
        dir
    }

    #[test]
    fn the_index_of_every_version_and_hash_names_what_git_tracks() {
        for format in ["sha1", "sha256"] {
            for version in ["2", "3", "4"] {
                let case = format!("{format} v{version}");
                let dir = repository(&["--object-format", format]);
                git(dir.path(), &["update-index", "--index-version", version]);
                let local = ".earshot/settings.local.json";
                assert_eq!(
                    tracks(dir.path(), local),
                    Tracked::Yes(local.into()),
                    "{case}"
                );
                let other = "a/very/long/path/other.txt";
                assert_eq!(
                    tracks(dir.path(), other),
                    Tracked::Yes(other.into()),
                    "{case}"
                );
                assert_eq!(
                    tracks(dir.path(), ".earshot/settings.local.json.lock"),
                    Tracked::No,
                    "{case}"
                );
                git(dir.path(), &["rm", "-q", "--cached", local]);
                assert_eq!(tracks(dir.path(), local), Tracked::No, "{case}");
            }
        }
    }

    #[test]
    fn a_split_index_is_read_with_its_shared_index_and_deletions() {
        for format in ["sha1", "sha256"] {
            let dir = repository(&["--object-format", format]);
            git(dir.path(), &["update-index", "--split-index"]);
            git(dir.path(), &["commit", "-q", "-m", "x"]);
            let local = ".earshot/settings.local.json";
            assert!(
                std::fs::read_dir(dir.path().join(".git"))
                    .unwrap()
                    .any(|entry| entry
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .starts_with("sharedindex.")),
                "{format}: git wrote a shared index"
            );
            assert_eq!(
                tracks(dir.path(), local),
                Tracked::Yes(local.into()),
                "{format}"
            );
            git(dir.path(), &["rm", "-q", "--cached", local]);
            assert_eq!(tracks(dir.path(), local), Tracked::No, "{format}");
            assert_eq!(
                tracks(dir.path(), ".earshot/settings.json"),
                Tracked::Yes(".earshot/settings.json".into()),
                "{format}"
            );
            // The shared index gone: the split one cannot be read alone.
            for entry in std::fs::read_dir(dir.path().join(".git")).unwrap() {
                let entry = entry.unwrap();
                if entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with("sharedindex.")
                {
                    std::fs::remove_file(entry.path()).unwrap();
                }
            }
            assert!(
                matches!(tracks(dir.path(), local), Tracked::Unknown { .. }),
                "{format}"
            );
        }
    }

    #[test]
    fn no_index_tracks_nothing_and_a_damaged_or_unknown_one_may_track_anything() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        assert_eq!(tracks(dir.path(), "x"), Tracked::No);
        for damaged in [
            &b"DIRC\0\0\0\x02\xff\xff\xff\xff"[..],
            b"DIRC\0\0\0\x05\0\0\0\0",
            b"DIRX\0\0\0\x02\0\0\0\0",
            b"",
        ] {
            std::fs::write(dir.path().join(".git/index"), damaged).unwrap();
            assert!(
                matches!(tracks(dir.path(), "x"), Tracked::Unknown { .. }),
                "{damaged:?}"
            );
        }
        // A `.git` file that names no folder.
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join(".git"), "gitdir: nowhere\n").unwrap();
        assert!(matches!(tracks(other.path(), "x"), Tracked::Unknown { .. }));
    }

    #[test]
    fn a_sparse_directory_entry_tracks_what_is_under_it() {
        let dir = repository(&[]);
        git(dir.path(), &["commit", "-q", "-m", "x"]);
        git(
            dir.path(),
            &["sparse-checkout", "init", "--cone", "--sparse-index"],
        );
        git(dir.path(), &["sparse-checkout", "set", "a"]);
        let local = ".earshot/settings.local.json";
        assert_eq!(tracks(dir.path(), local), Tracked::Yes(local.into()));
    }
}
