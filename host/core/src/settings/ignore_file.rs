//! Keeping the user's own files in a project out of git: `.earshot/settings.local.json` (which
//! can hold tokens from `mcp add --env` and the user's signed trust), its lock file and the
//! temporary files an edit writes beside it.
//!
//! A repository can commit ignore files that re-include them: `!settings.local.json` in
//! `.earshot/.gitignore`, a later `!` line, a negation in the root `.gitignore`. Earshot owns the
//! most specific ignore file that applies: its entries are the LAST lines of
//! `.earshot/.gitignore`, where no deeper ignore file can exist (the files sit directly in that
//! folder), a deeper file overrides every file above it, and within one file the last matching
//! line wins. The result is then checked with git's own matching rules (ripgrep's `ignore`
//! crate) over every `.gitignore` from the repository's top down to `.earshot/`; when the files
//! would still not be ignored, nothing is written.
//!
//! No git command is run (a repository's `.git/config` can make git execute commands).

use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::git_index::Tracked;
use super::no_links::{NoLinkError, read_text_no_follow, refuse_links_below};
use super::project::ProjectPaths;

/// The line above earshot's entries in `.earshot/.gitignore`.
const HEADER: &str = "# Written by earshot, keep these lines last: your own settings for this project, never committed.";

/// Earshot's entries, relative to `.earshot/`: the local file, its lock, and the temporary file
/// an edit writes before renaming it into place (left behind if the edit is killed).
const ENTRIES: &[&str] = &[
    "/settings.local.json",
    "/settings.local.json.lock",
    "/.settings-*.tmp",
];

/// The files (in `.earshot/`) that must be ignored, checked after writing.
const CHECKED: &[&str] = &[
    "settings.local.json",
    "settings.local.json.lock",
    ".settings-check.tmp",
];

/// Whether `line` of an ignore file is one earshot writes there (its header or an entry), so that
/// what reads ignore files for another purpose (a server's trust digest) can leave it out.
pub fn written_by_earshot(line: &str) -> bool {
    let line = line.trim();
    line == HEADER || ENTRIES.contains(&line)
}

/// The largest ignore file read.
const MAX_IGNORE_BYTES: u64 = 4 << 20;

/// Why the local files could not be kept out of git.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IgnoreError {
    /// `.earshot/.gitignore` (or `.earshot/`) is a symbolic link.
    #[error(transparent)]
    Link(NoLinkError),
    /// Reading or writing `.earshot/.gitignore` failed.
    #[error("cannot write {path}: {reason}; nothing was written")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
    /// Git tracks the file (the repository committed it), so no ignore line applies to it.
    #[error(
        "{path} is tracked by git (the repository at {repository} committed it), so git would commit what earshot writes there; nothing was written: run `{untrack}` (your copy stays), then run the command again"
    )]
    Tracked {
        /// The file.
        path: PathBuf,
        /// The repository that tracks it (the one holding `.earshot/`, or one above it).
        repository: PathBuf,
        /// Its path from the repository's top.
        relative: String,
        /// The git command that untracks it, run from the project root.
        untrack: String,
    },
    /// A repository's index could not be read, so git may track the file: nothing is written.
    #[error(
        "{path} may be tracked by git: earshot cannot read the index {index} ({why}), so git could commit what earshot writes there; nothing was written: keep secrets out of this project (`earshot mcp add -s user`, or a ${{VAR}} reference instead of the value), or have git rewrite the index (`git update-index --index-version 2`) and run the command again"
    )]
    MaybeTracked {
        /// The file earshot would write.
        path: PathBuf,
        /// The index (or `.git` file) that could not be read.
        index: PathBuf,
        /// Why.
        why: String,
    },
    /// After writing, git would still not ignore one of the files.
    #[error(
        "{path} would not be ignored by git ({why}); nothing was written to it: fix that ignore file, then run the command again"
    )]
    NotIgnored {
        /// The file git would not ignore.
        path: PathBuf,
        /// Which line keeps it in, or why.
        why: String,
    },
}

impl From<NoLinkError> for IgnoreError {
    fn from(error: NoLinkError) -> IgnoreError {
        match error {
            NoLinkError::Io { path, source } => IgnoreError::Io {
                path,
                reason: source.to_string(),
            },
            link => IgnoreError::Link(link),
        }
    }
}

/// Makes earshot's entries the last lines of `.earshot/.gitignore` (keeping every other line,
/// in order), then checks with git's rules that the local file, its lock and an edit's
/// temporary file are all ignored. Call it before writing the local file.
///
/// # Errors
/// [`IgnoreError::Link`] when `.earshot/` or its `.gitignore` is a link, [`IgnoreError::Io`] when
/// it cannot be written, [`IgnoreError::Tracked`] when a repository holding `.earshot/` committed one of the files,
/// [`IgnoreError::MaybeTracked`] when one's index cannot be read,
/// [`IgnoreError::NotIgnored`] when git would still not ignore one.
pub fn ensure_local_files_ignored(project: &ProjectPaths) -> Result<(), IgnoreError> {
    let path = project.earshot_dir().join(".gitignore");
    refuse_links_below(&project.root, &path)?;
    // Every repository `.earshot/` sits in, the nearest (the one that holds it: a submodule's
    // or a nested repository's) first: a file any of them tracks is one git would commit.
    let earshot_dir = project.earshot_dir();
    for top in earshot_dir
        .ancestors()
        .filter(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok())
    {
        let relative_of = |name: &str| {
            earshot_dir
                .join(name)
                .strip_prefix(top)
                .map(|rest| rest.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default()
        };
        let relatives: Vec<String> = CHECKED.iter().map(|name| relative_of(name)).collect();
        match super::git_index::tracked(top, &relatives) {
            Tracked::No => {}
            Tracked::Yes(relative) => {
                let untrack = if top == project.root {
                    format!("git rm --cached {relative}")
                } else {
                    format!("git -C {} rm --cached {relative}", top.display())
                };
                return Err(IgnoreError::Tracked {
                    path: top.join(&relative),
                    repository: top.to_path_buf(),
                    relative,
                    untrack,
                });
            }
            Tracked::Unknown { index, why } => {
                return Err(IgnoreError::MaybeTracked {
                    path: project.local_settings(),
                    index,
                    why,
                });
            }
        }
    }
    let existing = read_text_no_follow(&path, MAX_IGNORE_BYTES)?;
    let text = with_entries_last(existing.as_deref().unwrap_or_default());
    if existing.as_deref() != Some(text.as_str()) {
        write_atomically(&path, &text)?;
    }
    for name in CHECKED {
        let file = project.earshot_dir().join(name);
        if let Some(why) = not_ignored_because(&project.root, &file)? {
            return Err(IgnoreError::NotIgnored { path: file, why });
        }
    }
    Ok(())
}

/// `existing` without earshot's own lines (wherever they are), then earshot's lines last.
fn with_entries_last(existing: &str) -> String {
    let ours = |line: &str| line.trim_end() == HEADER || ENTRIES.contains(&line.trim_end());
    let mut kept: Vec<&str> = existing.lines().filter(|line| !ours(line)).collect();
    while kept.last().is_some_and(|line| line.trim().is_empty()) {
        kept.pop();
    }
    let mut text = String::new();
    for line in kept {
        text.push_str(line);
        text.push('\n');
    }
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(HEADER);
    text.push('\n');
    for entry in ENTRIES {
        text.push_str(entry);
        text.push('\n');
    }
    text
}

fn write_atomically(path: &Path, text: &str) -> Result<(), IgnoreError> {
    let io = |error: std::io::Error| IgnoreError::Io {
        path: path.to_path_buf(),
        reason: error.to_string(),
    };
    let dir = path.parent().expect("the ignore file lives in .earshot");
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    std::io::Write::write_all(&mut temp, text.as_bytes()).map_err(io)?;
    let mode = std::fs::symlink_metadata(path)
        .map(|meta| meta.permissions())
        .unwrap_or_else(|_| std::os::unix::fs::PermissionsExt::from_mode(0o644));
    std::fs::set_permissions(temp.path(), mode).map_err(io)?;
    temp.persist(path).map_err(|error| io(error.error))?;
    Ok(())
}

/// Why git would not ignore `file` (under `root`), or `None` when it would. Git's rules: the
/// `.gitignore` files from the repository's top (the nearest folder with `.git` at or above the
/// file's folder: a submodule or nested repository holding it) down to the file's folder apply, a deeper file's match overrides a shallower one's,
/// the last matching line of a file wins, and nothing below an ignored folder is re-included.
/// A `.gitignore` that is a symbolic link counts as absent, as git (2.32 and later) treats it.
///
/// # Errors
/// [`IgnoreError::Io`] when an ignore file cannot be read.
pub fn not_ignored_because(root: &Path, file: &Path) -> Result<Option<String>, IgnoreError> {
    let top = file
        .parent()
        .and_then(repository_holding)
        .unwrap_or_else(|| repository_top(root));
    let folders: Vec<&Path> = file
        .ancestors()
        .skip(1)
        .take_while(|dir| dir.starts_with(top))
        .collect();
    // Shallowest first.
    let mut matchers = Vec::new();
    for dir in folders.iter().rev() {
        matchers.push(matcher(dir)?);
    }
    // A folder below the top that is ignored takes everything in it along.
    for (depth, dir) in folders.iter().rev().enumerate().skip(1) {
        if let Decision::Ignored = decide(&matchers[..depth], dir, true) {
            return Ok(None);
        }
    }
    Ok(match decide(&matchers, file, false) {
        Decision::Ignored => None,
        Decision::ReIncluded(line, from) => Some(format!("\"{line}\" in {} re-includes it", from)),
        Decision::NoMatch => Some("no ignore line matches it".into()),
    })
}

/// The repository's top: the nearest folder with `.git` at or above `dir`, else `dir`.
fn repository_top(dir: &Path) -> &Path {
    repository_holding(dir).unwrap_or(dir)
}

/// The nearest folder with `.git` at or above `dir`.
fn repository_holding(dir: &Path) -> Option<&Path> {
    dir.ancestors()
        .find(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok())
}

enum Decision {
    Ignored,
    ReIncluded(String, String),
    NoMatch,
}

/// The deepest matcher with a match decides.
fn decide(matchers: &[Gitignore], path: &Path, is_dir: bool) -> Decision {
    for matcher in matchers.iter().rev() {
        match matcher.matched(path, is_dir) {
            Match::None => continue,
            Match::Ignore(_) => return Decision::Ignored,
            Match::Whitelist(glob) => {
                return Decision::ReIncluded(
                    glob.original()
                        .chars()
                        .filter(|c| !c.is_control())
                        .take(200)
                        .collect(),
                    matcher.path().join(".gitignore").display().to_string(),
                );
            }
        }
    }
    Decision::NoMatch
}

/// The matcher of `dir/.gitignore` (empty when absent or a link).
fn matcher(dir: &Path) -> Result<Gitignore, IgnoreError> {
    let path = dir.join(".gitignore");
    let text = match read_text_no_follow(&path, MAX_IGNORE_BYTES) {
        Ok(text) => text.unwrap_or_default(),
        Err(NoLinkError::Link(_)) => String::new(),
        Err(NoLinkError::Io { source, .. }) => {
            return Err(IgnoreError::Io {
                path,
                reason: source.to_string(),
            });
        }
    };
    let mut builder = GitignoreBuilder::new(dir);
    for (index, line) in text.lines().enumerate() {
        let line = if index == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        // A line git cannot read as a pattern matches nothing, as in git.
        let _ = builder.add_line(Some(path.clone()), line);
    }
    builder.build().map_err(|error| IgnoreError::Io {
        path,
        reason: error.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_lines_are_kept_in_order_and_ours_move_last() {
        let text = with_entries_last("a\n/settings.local.json\n!settings.local.json\n\n");
        assert!(text.starts_with("a\n!settings.local.json\n\n# Written by earshot"));
        assert!(
            text.ends_with("/settings.local.json\n/settings.local.json.lock\n/.settings-*.tmp\n")
        );
        assert_eq!(with_entries_last(&text), text, "idempotent");
        assert!(with_entries_last("").starts_with("# Written"));
    }
}
