//! What a project server's trust digest covers: its definition and the project files its
//! interpreter will load, found the way the interpreter finds them.
//!
//! The words of `command`, `args` and every `env` value name project paths (`node server.js`,
//! `--require=./x.js`, `PYTHONPATH=vendor`, `NODE_OPTIONS=--require ./x.js`, `LD_PRELOAD=./x.so`).
//! A named file names its whole folder (Python puts a script's folder first on `sys.path`, so a
//! sibling module it imports is loaded from there; Node and shells load `./lib/x.js` relative to
//! it), and `-m a.b.c` names the top-level package folder
//! `a/` (Python runs `a/__init__.py` and `a/b/__init__.py` first). Inside a named folder every
//! file counts, symbolic links by their text and by what they point to, and a compiled Python file
//! that Python would load instead of its source counts by its bytes. A link that leads out of the
//! project cannot be digested, so such a server cannot be trusted. Past the byte or file budget
//! the digest is partial, which `trust` refuses unless asked for explicitly.
//!
//! The files earshot itself writes in the project (the local settings file, its lock, the ignore
//! lines it keeps) are left out, so a server that names the project root (`node .`) is not
//! "changed" by the trust that was just recorded.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::settings::ignore_line_written_by_earshot;
use crate::trust::{DEFINITION_PART, Manifest, TrustKey};

use super::config::{ServerDefinition, Transport};

/// The most bytes hashed into one server's digest, over every project file and folder it names;
/// past that the digest is partial.
pub const MAX_HASHED_BYTES: u64 = 64 << 20;
/// The most files hashed into one server's digest; past that the digest is partial.
pub const MAX_HASHED_FILES: usize = 5_000;
/// Folders not walked when a named folder is hashed: version control and installed packages.
pub const SKIPPED_FOLDERS: &[&str] = &[".git", "node_modules", "target", ".venv"];

/// A server's digest as computed now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerDigest {
    /// `hmac-sha256:<hex>` under the user's trust key.
    pub value: String,
    /// Why the digest does not cover every byte it names (a budget ran out), when it does not:
    /// what is past the budget counts by its size only.
    pub partial: Option<String>,
    /// What the digest is made of, part by part: [`DEFINITION_PART`] (keyed, since a definition
    /// can hold expanded secrets) and each project file by its path relative to the project, so
    /// that "changed since you trusted it" can name the file.
    pub manifest: Manifest,
}

/// Why a server's digest cannot be made: what it names cannot be bound to a record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DigestError {
    /// A path it names, or a link inside a folder it names, leads out of the project: what is
    /// there can change without any change in the repository.
    #[error(
        "{link} is a symbolic link to {target}, outside the project, so its code cannot be covered by a trust record; replace the link with the file itself"
    )]
    LinkOutOfProject {
        /// The link, relative to the project root.
        link: String,
        /// Where it leads.
        target: String,
    },
}

/// The server's digest: HMAC-SHA256 under the user's key (the definition can hold expanded
/// secrets) over the canonical definition and every project file its interpreter loads (see the
/// module doc), relative to its start directory `start_dir`.
///
/// # Errors
/// [`DigestError`] when a named path links out of the project.
pub fn server_digest(
    key: &TrustKey,
    definition: &ServerDefinition,
    start_dir: &Path,
    project_root: Option<&Path>,
) -> Result<ServerDigest, DigestError> {
    let mut material = definition.canonical_json().into_bytes();
    let mut manifest = Manifest::new();
    manifest.insert(DEFINITION_PART, key.keyed_digest(&material));
    let mut partial = None;
    if let (
        Transport::Stdio {
            command,
            args,
            cwd,
            env,
        },
        Some(root),
    ) = (&definition.transport, project_root)
        && let Ok(root) = root.canonicalize()
    {
        let dir = cwd
            .as_deref()
            .map(|own| start_dir.join(own))
            .unwrap_or_else(|| start_dir.to_path_buf());
        let words = std::iter::once(command.as_str())
            .chain(args.iter().map(String::as_str))
            .chain(env.values().map(String::as_str));
        partial = add_named_project_files(words, &dir, &root, &mut material, &mut manifest)?;
    }
    Ok(ServerDigest {
        value: key.keyed_digest(&material),
        partial,
        manifest,
    })
}

/// Appends to `material` every project file and folder that `words` name, relative to `dir`
/// (see the module doc: a named file brings its folder, `-m pkg` its package), for the digest of
/// anything that runs a command in the project (an MCP server, a hook). Returns why the digest is
/// partial, when a budget ran out. Each file and link is also recorded in `manifest`, by its
/// path relative to `root`.
///
/// # Errors
/// [`DigestError`] when a named path links out of the project.
pub fn add_named_project_files<'a>(
    words: impl Iterator<Item = &'a str>,
    dir: &Path,
    root: &Path,
    material: &mut Vec<u8>,
    manifest: &mut Manifest,
) -> Result<Option<String>, DigestError> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let mut walk = Walk::new(root, manifest);
    for path in named_project_paths(words, &dir, root)? {
        walk.add(&path, material)?;
    }
    Ok(walk.partial())
}

/// The pieces of one word that can name a path: the word, and what its separators (`=`, `:`,
/// `,`, `;`, whitespace and quotes) split it into.
fn pieces(word: &str) -> impl Iterator<Item = &str> {
    std::iter::once(word)
        .chain(
            word.split(|c: char| {
                c.is_whitespace() || matches!(c, '=' | ':' | ',' | ';' | '"' | '\'')
            }),
        )
        .filter(|piece| !piece.is_empty())
}

/// Whether `piece` reads as a dotted Python module name (`pkg`, `pkg.srv`).
fn module_name(piece: &str) -> Option<&str> {
    let valid = |part: &str| {
        part.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    (piece.split('.').all(valid)).then(|| piece.split('.').next().unwrap_or(piece))
}

/// The project paths (inside `root`) that `words` name, relative to `dir`: each piece as a path,
/// a named file's folder, and a dotted module's top-level package (`a.b.c` names `a/` and
/// `a.py`); sorted, without repeats.
///
/// # Errors
/// [`DigestError::LinkOutOfProject`] when a piece names a path inside the project that leads
/// out of it through a link.
fn named_project_paths<'a>(
    words: impl Iterator<Item = &'a str>,
    dir: &Path,
    root: &Path,
) -> Result<Vec<PathBuf>, DigestError> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    for word in words {
        for piece in pieces(word) {
            candidates.push(dir.join(piece));
            if let Some(top) = module_name(piece) {
                candidates.push(dir.join(top));
                candidates.push(dir.join(format!("{top}.py")));
            }
        }
    }
    let mut paths = BTreeSet::new();
    for candidate in candidates {
        let lexical = lexically_normal(&candidate);
        let Ok(real) = candidate.canonicalize() else {
            continue;
        };
        if !real.starts_with(root) {
            if lexical.starts_with(root) {
                return Err(DigestError::LinkOutOfProject {
                    link: relative(root, &lexical),
                    target: real.display().to_string(),
                });
            }
            continue;
        }
        if real.is_file()
            && let Some(folder) = real.parent()
        {
            // A named file brings its folder: Python puts a script's folder first on sys.path
            // (its siblings import from there), and Node and shells load `./lib/x.js` or
            // `./env.sh` relative to it.
            paths.insert(folder.to_path_buf());
        }
        paths.insert(real);
    }
    Ok(paths.into_iter().collect())
}

/// `path` with `.` and `..` resolved by their text alone (no link is followed).
fn lexically_normal(path: &Path) -> PathBuf {
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

/// `path` relative to `root`, for messages and for the digest (a moved clone keeps its digest
/// material the same apart from the record's own project path).
fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .map(|rest| rest.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

/// One digest's walk over the project: what is left of the budget, what was already hashed (a
/// folder reached twice, through a link, is hashed once and a link cycle ends).
struct Walk<'a> {
    root: &'a Path,
    manifest: &'a mut Manifest,
    bytes: u64,
    files: usize,
    overflowed: bool,
    visited: BTreeSet<PathBuf>,
}

impl<'a> Walk<'a> {
    fn new(root: &'a Path, manifest: &'a mut Manifest) -> Walk<'a> {
        Walk {
            root,
            manifest,
            bytes: MAX_HASHED_BYTES,
            files: MAX_HASHED_FILES,
            overflowed: false,
            visited: BTreeSet::new(),
        }
    }

    /// Why the digest is partial, when a budget ran out.
    fn partial(&self) -> Option<String> {
        self.overflowed.then(|| {
            format!(
                "what it names holds more than {MAX_HASHED_FILES} files or {} MiB, so the files past that count by their size only",
                MAX_HASHED_BYTES >> 20
            )
        })
    }

    /// Adds a file's, a folder tree's or a link's path and contents to `material`.
    fn add(&mut self, path: &Path, material: &mut Vec<u8>) -> Result<(), DigestError> {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return Ok(());
        };
        if self.written_by_earshot(path) {
            return Ok(());
        }
        let shown = relative(self.root, path);
        if meta.file_type().is_symlink() {
            let text = std::fs::read_link(path).unwrap_or_default();
            material.extend_from_slice(b"\0link\0");
            material.extend_from_slice(shown.as_bytes());
            material.push(0);
            material.extend_from_slice(text.to_string_lossy().as_bytes());
            let Ok(target) = path.canonicalize() else {
                material.extend_from_slice(b"\0dangling");
                self.manifest
                    .insert(shown, format!("link to {} (dangling)", text.display()));
                return Ok(());
            };
            self.manifest
                .insert(shown.clone(), format!("link to {}", text.display()));
            if !target.starts_with(self.root) {
                return Err(DigestError::LinkOutOfProject {
                    link: shown,
                    target: target.display().to_string(),
                });
            }
            return self.add(&target, material);
        }
        if meta.is_file() {
            if !self.visited.insert(path.to_path_buf()) {
                return Ok(());
            }
            if is_gitignore(path) {
                // Only what is left after earshot's own lines counts: a `.gitignore` that
                // earshot created to hold them adds nothing.
                let kept = gitignore_without_earshots_lines(path);
                if !kept.is_empty() {
                    material.extend_from_slice(b"\0ignore\0");
                    material.extend_from_slice(shown.as_bytes());
                    material.push(0);
                    material.extend_from_slice(kept.as_bytes());
                    self.manifest
                        .insert(shown, crate::trust::digest_of(kept.as_bytes()));
                }
                return Ok(());
            }
            material.extend_from_slice(b"\0file\0");
            material.extend_from_slice(shown.as_bytes());
            material.push(0);
            if self.files == 0 || self.bytes == 0 {
                self.overflowed = true;
                let unhashed = format!("unhashed:{}", meta.len());
                material.extend_from_slice(unhashed.as_bytes());
                self.manifest.insert(shown, unhashed);
                return Ok(());
            }
            self.files -= 1;
            let hashed = self.hash_file(path);
            material.extend_from_slice(hashed.as_bytes());
            self.manifest.insert(shown, hashed);
        } else if meta.is_dir() {
            if !self.visited.insert(path.to_path_buf()) {
                return Ok(());
            }
            let Ok(entries) = std::fs::read_dir(path) else {
                return Ok(());
            };
            let pycache = path.file_name().is_some_and(|name| name == "__pycache__");
            let mut children: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .filter(|entry| {
                    !SKIPPED_FOLDERS.contains(&entry.file_name().to_string_lossy().as_ref())
                })
                .map(|entry| entry.path())
                // A link counts whatever it is (one out of the project is refused).
                .filter(|child| !pycache || child.is_symlink() || python_would_load(child))
                .collect();
            children.sort();
            for child in children {
                self.add(&child, material)?;
            }
        }
        Ok(())
    }

    /// The files earshot writes in the project: the local settings file, what sits beside it
    /// under its name (its lock), and the temporary file an edit of it renames into place.
    fn written_by_earshot(&self, path: &Path) -> bool {
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        path.parent() == Some(self.root.join(".earshot").as_path())
            && (name.starts_with("settings.local.json")
                || (name.starts_with(".settings-") && name.ends_with(".tmp")))
    }

    /// `sha256:<hex>` of a file's length and bytes (as many as the budget allows), or
    /// `unreadable`.
    fn hash_file(&mut self, path: &Path) -> String {
        let Ok(file) = std::fs::File::open(path) else {
            return "unreadable".into();
        };
        let length = file.metadata().map(|meta| meta.len()).unwrap_or_default();
        let mut hasher = Sha256::new();
        hasher.update(length.to_be_bytes());
        if length > self.bytes {
            self.overflowed = true;
        }
        let mut reader = file.take(self.bytes);
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(read) => {
                    hasher.update(&buffer[..read]);
                    self.bytes = self.bytes.saturating_sub(read as u64);
                }
            }
        }
        format!("sha256:{}", hex::encode(hasher.finalize()))
    }
}

fn is_gitignore(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == ".gitignore")
}

/// A `.gitignore`'s patterns without the lines earshot writes itself when it records trust (and
/// any that name the local settings file, as earlier versions wrote in the root one), blank lines
/// and comments: an ignore file runs no code.
fn gitignore_without_earshots_lines(path: &Path) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    String::from_utf8_lossy(&text)
        .lines()
        .map(str::trim_end)
        .filter(|line| {
            !line.trim().is_empty()
                && !line.starts_with('#')
                && !ignore_line_written_by_earshot(line)
                && !line.contains("settings.local.json")
        })
        .map(|line| format!("{line}\n"))
        .collect()
}

/// Whether Python would load the compiled file `child` of a `__pycache__` folder in place of its
/// source: its source (`../name.py`) exists, and it is an unchecked hash-based file (PEP 552:
/// never compared with the source) or a timestamp-based one whose recorded modification time
/// and size match the source's. A checked hash-based file is compared with the source's bytes
/// (which the digest covers), and a stale one is compiled again, so neither counts; anything
/// that is not a compiled file counts as an ordinary file.
fn python_would_load(child: &Path) -> bool {
    let Some(name) = child.file_name().and_then(|name| name.to_str()) else {
        return true;
    };
    let Some(stem) = name.strip_suffix(".pyc") else {
        return true;
    };
    let module = stem.split('.').next().unwrap_or(stem);
    let Some(source) = child
        .parent()
        .and_then(Path::parent)
        .map(|folder| folder.join(format!("{module}.py")))
    else {
        return true;
    };
    let Ok(source_meta) = std::fs::metadata(&source) else {
        // Python never loads a __pycache__ file without its source.
        return false;
    };
    let mut header = [0u8; 16];
    let read = std::fs::File::open(child).and_then(|mut file| file.read_exact(&mut header));
    if read.is_err() {
        return true;
    }
    let flags = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
    match flags & 0b11 {
        // Timestamp-based: loaded when its recorded mtime and size are the source's.
        0 => {
            let recorded_mtime = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
            let recorded_size =
                u32::from_le_bytes([header[12], header[13], header[14], header[15]]);
            let mtime = source_meta
                .modified()
                .ok()
                .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|since| since.as_secs() as u32);
            mtime == Some(recorded_mtime) && recorded_size == source_meta.len() as u32
        }
        // Checked hash-based: Python compares it with the source's hash.
        0b11 => false,
        // Unchecked hash-based (0b01), or flags Python does not define: count it.
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dotted_module_names_its_top_level_package() {
        assert_eq!(module_name("pkg.srv"), Some("pkg"));
        assert_eq!(module_name("pkg"), Some("pkg"));
        assert_eq!(module_name("./x.js"), None);
        assert_eq!(module_name("-m"), None);
    }

    #[test]
    fn env_values_split_into_the_paths_they_name() {
        let found: Vec<&str> = pieces("--require ./x.js").collect();
        assert!(found.contains(&"./x.js"), "{found:?}");
        let found: Vec<&str> = pieces("vendor:lib").collect();
        assert!(
            found.contains(&"vendor") && found.contains(&"lib"),
            "{found:?}"
        );
        let found: Vec<&str> = pieces("--require=./y.js").collect();
        assert!(found.contains(&"./y.js"), "{found:?}");
    }

    #[test]
    fn dot_dot_resolves_by_text() {
        assert_eq!(
            lexically_normal(Path::new("/p/pkg/../lib/./x.py")),
            PathBuf::from("/p/lib/x.py")
        );
    }
}
