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
//! A shell script (`sh -c '…'`, a hook's shell string) is read word by word (see [`shell`]): the
//! project-dir forms (`$PWD`, `${EARSHOT_PROJECT_DIR:-.}`, `"$(pwd)"`, ...) resolve to the
//! folders they name, and a word the digest cannot resolve (another `$` expansion, a command
//! substitution, `~`) makes the digest partial, naming the word.
//!
//! Installed packages are not hashed: a `node_modules` or `.venv` inside a named folder, or
//! beside any folder from a named path up to the project root (where Node looks for a
//! `require`d package), makes the digest partial, and so does a relative path that leads out of
//! the project. Only regular files are ever opened, without blocking: a FIFO, socket or device
//! is recorded by its kind and makes the digest partial.
//!
//! The files earshot itself writes in the project (the local settings file, its lock, the ignore
//! lines it keeps) are left out, so a server that names the project root (`node .`) is not
//! "changed" by the trust that was just recorded.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::settings::ignore_line_written_by_earshot;
use crate::trust::{DEFINITION_PART, Manifest, TrustKey};

use super::config::{ServerDefinition, Transport};

pub mod shell;

use shell::{Places, lexically_normal};

/// The most bytes hashed into one server's digest, over every project file and folder it names;
/// past that the digest is partial.
pub const MAX_HASHED_BYTES: u64 = 64 << 20;
/// The most files hashed into one server's digest; past that the digest is partial.
pub const MAX_HASHED_FILES: usize = 5_000;
/// Folders not walked when a named folder is hashed: version control, build output and
/// installed packages (the last make the digest partial, see [`INSTALLED_PACKAGES`]).
pub const SKIPPED_FOLDERS: &[&str] = &[".git", "node_modules", "target", ".venv"];
/// Folders of installed packages, never hashed: one inside a named folder, or beside any
/// folder from a named path up to the project root, makes the digest partial. So does any
/// folder holding a `pyvenv.cfg` (a Python virtual environment by another name).
pub const INSTALLED_PACKAGES: &[&str] = &["node_modules", ".venv"];

/// A server's digest as computed now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerDigest {
    /// `hmac-sha256:<hex>` under the user's trust key.
    pub value: String,
    /// Why the digest does not cover everything its command can run, when it does not: a word
    /// it cannot resolve, installed packages, a path out of the project, a file that is not a
    /// regular one, or a budget that ran out (what is past it counts by its size only).
    pub partial: Option<String>,
    /// What the digest is made of, part by part: [`DEFINITION_PART`] (keyed, since a definition
    /// can hold expanded secrets) and each project file by its path relative to the project, so
    /// that "changed since you trusted it" can name the file.
    pub manifest: Manifest,
    /// The project files and folders the command names, each with how many files of it the
    /// digest covers: what `trust` says it bound.
    pub bound: Vec<BoundPath>,
}

/// One project file or folder a command names, as `trust` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundPath {
    /// Its path relative to the project root (`.` for the root itself).
    pub path: String,
    /// Whether it is a folder (every file under it counts).
    pub folder: bool,
    /// How many files under it the digest covers.
    pub files: usize,
}

impl BoundPath {
    /// `folder .earshot/hooks/ (3 files)` or `file Makefile`.
    pub fn describe(&self) -> String {
        if self.folder {
            let path = if self.path == "." {
                "the project root".to_string()
            } else {
                format!("{}/", self.path)
            };
            format!(
                "folder {path} ({} file{})",
                self.files,
                if self.files == 1 { "" } else { "s" }
            )
        } else {
            format!("file {}", self.path)
        }
    }
}

/// What a command names, for its digest: its words, resolved, and those that could not be.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamedWords {
    /// Each word that may name a project path (relative to where the command starts, or
    /// absolute).
    pub words: Vec<String>,
    /// The shell words that cannot be resolved before they run, as written, each with its
    /// part that made it so.
    pub unresolved: Vec<String>,
}

impl NamedWords {
    /// The words of a command run without a shell (a server's `command` and `args`, a hook's
    /// exec form), as they are; the script of a shell among them (`sh -c SCRIPT`) is read as
    /// [`NamedWords::script`] reads one.
    pub fn exec(words: Vec<String>, places: &Places<'_>) -> NamedWords {
        let mut named = NamedWords::default();
        for script in shell::nested_scripts(&words) {
            named.add_script(&script, places);
        }
        let nested = std::mem::replace(&mut named.words, words);
        named.words.extend(nested);
        named
    }

    /// The words of a shell script (see [`shell`]).
    pub fn script(script: &str, places: &Places<'_>) -> NamedWords {
        let mut named = NamedWords::default();
        named.add_script(script, places);
        named
    }

    fn add_script(&mut self, script: &str, places: &Places<'_>) {
        let found = shell::script_words(script, places);
        self.words.extend(found.words);
        for word in found.unresolved {
            if !self.unresolved.contains(&word) {
                self.unresolved.push(word);
            }
        }
    }
}

/// What [`add_named_words`] found besides the material.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Named {
    /// Why the digest is partial, when it is.
    pub partial: Option<String>,
    /// The project files and folders named.
    pub bound: Vec<BoundPath>,
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
    let mut named = Named::default();
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
        let places = Places {
            dir: &dir,
            project: Some(&root),
        };
        let mut words = NamedWords::exec(
            std::iter::once(command.clone())
                .chain(args.iter().cloned())
                .collect(),
            &places,
        );
        // An env value is not run by a shell: its words name paths as written.
        words.words.extend(env.values().cloned());
        named = add_named_words(&words, &dir, &root, &mut material, &mut manifest)?;
    }
    Ok(ServerDigest {
        value: key.keyed_digest(&material),
        partial: named.partial,
        manifest,
        bound: named.bound,
    })
}

/// Appends to `material` every project file and folder that `words` name, relative to `dir`
/// (see the module doc: a named file brings its folder, `-m pkg` its package), each word as
/// written (no shell reads it). Returns why the digest is partial, when it is; each file and link
/// is also recorded in `manifest`, by its path relative to `root`.
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
    let named = NamedWords {
        words: words.map(str::to_string).collect(),
        unresolved: Vec::new(),
    };
    add_named_words(&named, dir, root, material, manifest).map(|named| named.partial)
}

/// Appends to `material` every project file and folder that `named` names, relative to `dir`
/// (see the module doc: a named file brings its folder, `-m pkg` its package), for the digest of
/// anything that runs a command in the project (an MCP server, a hook). Returns why the digest is
/// partial (see [`ServerDigest::partial`]) and what it bound. Each file and link is also
/// recorded in `manifest`, by its path relative to `root` (canonical).
///
/// # Errors
/// [`DigestError`] when a named path links out of the project.
pub fn add_named_words(
    named: &NamedWords,
    dir: &Path,
    root: &Path,
    material: &mut Vec<u8>,
    manifest: &mut Manifest,
) -> Result<Named, DigestError> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let mut reasons = Vec::new();
    if !named.unresolved.is_empty() {
        let (noun, verb) = if named.unresolved.len() == 1 {
            ("shell word", "is")
        } else {
            ("shell words", "are")
        };
        let shown: Vec<&str> = named
            .unresolved
            .iter()
            .take(3)
            .map(String::as_str)
            .collect();
        let more = match named.unresolved.len() {
            0..=3 => String::new(),
            count => format!(" and {} more", count - 3),
        };
        reasons.push(format!(
            "its {noun} {}{more} {verb} known only when it runs (earshot resolves only $PWD, $(pwd), $EARSHOT_PROJECT_DIR and $CLAUDE_PROJECT_DIR), so earshot cannot tell which file it names",
            shown.join(", ")
        ));
    }
    // Material that says what could not be resolved, so dropping such a word is a change too.
    for word in &named.unresolved {
        material.extend_from_slice(b"\0unresolved\0");
        material.extend_from_slice(word.as_bytes());
    }
    let found = named_project_paths(named.words.iter().map(String::as_str), &dir, root)?;
    reasons.extend(found.outside);
    reasons.extend(installed_packages_beside(&found.paths, root));
    let mut walk = Walk::new(root, manifest);
    for path in &found.paths {
        walk.add(path, material)?;
    }
    reasons.extend(walk.reasons());
    let bound = bound_paths(&found.paths, root, &walk.hashed);
    let partial = (!reasons.is_empty()).then(|| {
        let mut unique: Vec<String> = Vec::new();
        for reason in reasons {
            if !unique.contains(&reason) {
                unique.push(reason);
            }
        }
        let count = unique.len();
        let mut text = unique.into_iter().take(4).collect::<Vec<_>>().join("; ");
        if count > 4 {
            text.push_str(&format!("; and {} more", count - 4));
        }
        text
    });
    Ok(Named { partial, bound })
}

/// The named paths at the top (none inside another named folder), each with the number of
/// hashed files under it.
fn bound_paths(paths: &[PathBuf], root: &Path, hashed: &[PathBuf]) -> Vec<BoundPath> {
    let folders: Vec<&PathBuf> = paths.iter().filter(|path| path.is_dir()).collect();
    paths
        .iter()
        .filter(|path| {
            !folders
                .iter()
                .any(|folder| *folder != *path && path.starts_with(folder))
        })
        .map(|path| {
            let folder = path.is_dir();
            let shown = relative(root, path);
            BoundPath {
                path: if shown.is_empty() { ".".into() } else { shown },
                folder,
                files: hashed.iter().filter(|file| file.starts_with(path)).count(),
            }
        })
        .collect()
}

/// Why the digest is partial for installed packages beside a named path: a `node_modules` or
/// `.venv` in any folder from the named path's up to the project root (Node looks for a
/// `require`d package in each of them).
fn installed_packages_beside(paths: &[PathBuf], root: &Path) -> Vec<String> {
    let mut reasons = Vec::new();
    let mut seen = BTreeSet::new();
    for path in paths {
        let mut folder = if path.is_dir() {
            Some(path.as_path())
        } else {
            path.parent()
        };
        while let Some(current) = folder {
            if !current.starts_with(root) || !seen.insert(current.to_path_buf()) {
                break;
            }
            for name in INSTALLED_PACKAGES {
                let installed = current.join(name);
                if std::fs::symlink_metadata(&installed).is_ok() {
                    reasons.push(installed_reason(root, &installed));
                }
            }
            if current == root {
                break;
            }
            folder = current.parent();
        }
    }
    reasons
}

fn installed_reason(root: &Path, installed: &Path) -> String {
    let shown = relative(root, installed);
    let name = installed
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let at = if installed.parent() == Some(root) {
        format!("`{name}` at the project root")
    } else {
        format!("`{shown}`")
    };
    format!(
        "{at} holds installed packages, which earshot does not hash (what a script loads from it could change without lapsing the trust)"
    )
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

/// The project paths a command names, and why some cannot be covered.
struct Found {
    /// Inside the project, sorted, without repeats.
    paths: Vec<PathBuf>,
    /// Why the digest is partial for a relative path out of the project.
    outside: Vec<String>,
}

/// The project paths (inside `root`) that `words` name, relative to `dir`: each piece as a path,
/// a named file's folder, and a dotted module's top-level package (`a.b.c` names `a/` and
/// `a.py`); and each existing path a relative piece (or one written from the project's folder)
/// names out of the project.
///
/// # Errors
/// [`DigestError::LinkOutOfProject`] when a piece names a path inside the project that leads
/// out of it through a link.
fn named_project_paths<'a>(
    words: impl Iterator<Item = &'a str>,
    dir: &Path,
    root: &Path,
) -> Result<Found, DigestError> {
    let mut candidates: Vec<(PathBuf, &str)> = Vec::new();
    for word in words {
        for piece in pieces(word) {
            candidates.push((dir.join(piece), piece));
            if let Some(top) = module_name(piece) {
                candidates.push((dir.join(top), piece));
                candidates.push((dir.join(format!("{top}.py")), piece));
            }
        }
    }
    let mut paths = BTreeSet::new();
    let mut outside = Vec::new();
    for (candidate, piece) in candidates {
        let lexical = lexically_normal(&candidate);
        if !lexical.starts_with(root)
            && dir.starts_with(root)
            && (Path::new(piece).is_relative()
                || candidate.starts_with(dir)
                || candidate.starts_with(root))
            && std::fs::symlink_metadata(&candidate).is_ok()
        {
            // `../shared/guard.sh`, `$PWD/../x.sh`: in a folder beside the project, which a
            // change in the repository does not show.
            let reason = format!(
                "`{piece}` is outside the project, so a change to it would not lapse the trust"
            );
            if !outside.contains(&reason) {
                outside.push(reason);
            }
            continue;
        }
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
    Ok(Found {
        paths: paths.into_iter().collect(),
        outside,
    })
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
    /// Why the digest is partial besides the budget: installed packages, special files.
    reasons: Vec<String>,
    /// Every regular file hashed (or counted past the budget).
    hashed: Vec<PathBuf>,
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
            reasons: Vec::new(),
            hashed: Vec::new(),
        }
    }

    /// Why the digest is partial: what the walk met that it could not cover, and a budget that
    /// ran out.
    fn reasons(&self) -> Vec<String> {
        let mut reasons = self.reasons.clone();
        if self.overflowed {
            reasons.push(format!(
                "what it names holds more than {MAX_HASHED_FILES} files or {} MiB, so the files past that count by their size only",
                MAX_HASHED_BYTES >> 20
            ));
        }
        reasons
    }

    fn reason(&mut self, reason: String) {
        if !self.reasons.contains(&reason) {
            self.reasons.push(reason);
        }
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
            self.hashed.push(path.to_path_buf());
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
            let mut children: Vec<PathBuf> = Vec::new();
            for entry in entries.filter_map(Result::ok) {
                let name = entry.file_name().to_string_lossy().into_owned();
                let child = entry.path();
                let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
                if INSTALLED_PACKAGES.contains(&name.as_str())
                    || (is_dir && std::fs::symlink_metadata(child.join("pyvenv.cfg")).is_ok())
                {
                    self.reason(installed_reason(self.root, &child));
                    continue;
                }
                if SKIPPED_FOLDERS.contains(&name.as_str()) {
                    continue;
                }
                // A link counts whatever it is (one out of the project is refused), and so
                // does anything that is not a regular file (reported, never opened).
                if pycache && !python_would_load(&child) {
                    continue;
                }
                children.push(child);
            }
            children.sort();
            for child in children {
                self.add(&child, material)?;
            }
        } else {
            // A FIFO, socket or device: never opened (a FIFO would block the walk for ever).
            let kind = special_kind(&meta);
            material.extend_from_slice(b"\0special\0");
            material.extend_from_slice(shown.as_bytes());
            material.push(0);
            material.extend_from_slice(kind.as_bytes());
            self.manifest
                .insert(shown.clone(), format!("{kind}, not opened"));
            self.reason(format!(
                "`{shown}` is a {kind}, not a regular file, so earshot does not open it and cannot say what it holds; remove it"
            ));
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
        let Ok(file) = open_regular(path) else {
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

/// Opens `path` for reading only if it is a regular file, without following a link and without
/// blocking: a FIFO, socket or device put in its place is refused, never opened for reading
/// (a FIFO's `open` would wait for a writer for ever).
///
/// # Errors
/// It is not a regular file, or it cannot be opened.
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    let not_regular = || std::io::Error::other(format!("{} is not a regular file", path.display()));
    if !std::fs::symlink_metadata(path)?.file_type().is_file() {
        return Err(not_regular());
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let file = options.open(path)?;
    // It may have been swapped between the check and the open.
    if !file.metadata()?.file_type().is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// What a file that is neither regular, a folder nor a link is, for messages.
fn special_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        if kind.is_fifo() {
            return "FIFO";
        }
        if kind.is_socket() {
            return "socket";
        }
        if kind.is_block_device() {
            return "block device";
        }
        if kind.is_char_device() {
            return "character device";
        }
    }
    let _ = meta;
    "special file"
}

fn is_gitignore(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == ".gitignore")
}

/// A `.gitignore`'s patterns without the lines earshot writes itself when it records trust (and
/// any that name the local settings file, as earlier versions wrote in the root one), blank lines
/// and comments: an ignore file runs no code.
fn gitignore_without_earshots_lines(path: &Path) -> String {
    let mut text = Vec::new();
    if let Ok(file) = open_regular(path) {
        let _ = file.take(MAX_HASHED_BYTES).read_to_end(&mut text);
    }
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
    // Decided by its type before anything is opened: a link or anything that is not a regular
    // file counts (and is reported as what it is).
    if !std::fs::symlink_metadata(child).is_ok_and(|meta| meta.file_type().is_file()) {
        return true;
    }
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
    let read = open_regular(child).and_then(|mut file| file.read_exact(&mut header));
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
