//! Where skills and commands are looked for, and the bounded walk that finds them.
//!
//! Fixed roots only: `~/.earshot/skills`, `~/.agents/skills` and `~/.earshot/commands` (the
//! user's), and the project's `.earshot/skills`, `.agents/skills` and `.earshot/commands`. No
//! walk goes deeper than [`MAX_DEPTH`] folders or visits more than [`MAX_FOLDERS`], nothing under
//! `.git`, `node_modules` or another hidden folder is looked at, and inside the project a
//! symbolic link is never followed (it is reported instead): a repository cannot point the walk
//! at the user's files or make it run for ever.

use std::path::{Path, PathBuf};

use crate::settings::Settings;

use super::item::{ItemKind, ItemOrigin, Problem};

/// The deepest a skill folder or command file may sit below its root (`root/a/b/c/d/e/f`).
pub const MAX_DEPTH: usize = 6;

/// The most folders one root's walk visits; past it the walk stops and says so.
pub const MAX_FOLDERS: usize = 2_000;

/// One place skills or commands are looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// The folder.
    pub path: PathBuf,
    /// Whose it is: the user's own, or the project's (inert until trusted).
    pub origin: ItemOrigin,
    /// Skills (folders with `SKILL.md`) or commands (`*.md` files).
    pub kind: ItemKind,
}

/// What a walk found: skill folders (with their `SKILL.md`) or command files, and what it
/// refused on the way.
#[derive(Debug, Default)]
pub struct Found {
    /// For skills: each folder holding a `SKILL.md`; for commands: each `*.md` file.
    pub paths: Vec<PathBuf>,
    /// Links, too-deep folders and the like, one line each.
    pub problems: Vec<Problem>,
}

/// The user's home directory, for `~/.agents/skills`: `$HOME` (so a test or an embedder can
/// point it elsewhere), else the OS's idea of it.
pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .or_else(std::env::home_dir)
}

/// Every root for `settings`, the user's first (their items win a name clash): skills in
/// `<config>/skills` then `~/.agents/skills`, commands in `<config>/commands`; then the
/// project's `.earshot/skills`, `.agents/skills` and `.earshot/commands`.
pub fn roots(settings: &Settings, home: Option<&Path>) -> Vec<Root> {
    let mut roots = Vec::new();
    let mut push = |path: PathBuf, origin, kind| roots.push(Root { path, origin, kind });
    if let Some(config) = &settings.user_config_dir {
        push(config.join("skills"), ItemOrigin::User, ItemKind::Skill);
    }
    if let Some(home) = home {
        let agents = home.join(".agents").join("skills");
        // With EARSHOT_CONFIG_DIR unset the config dir is ~/.earshot, never ~/.agents: no root
        // is walked twice.
        push(agents, ItemOrigin::User, ItemKind::Skill);
    }
    if let Some(config) = &settings.user_config_dir {
        push(config.join("commands"), ItemOrigin::User, ItemKind::Command);
    }
    if let Some(project) = &settings.project {
        let root = &project.root;
        push(
            root.join(".earshot").join("skills"),
            ItemOrigin::Project,
            ItemKind::Skill,
        );
        push(
            root.join(".agents").join("skills"),
            ItemOrigin::Project,
            ItemKind::Skill,
        );
        push(
            root.join(".earshot").join("commands"),
            ItemOrigin::Project,
            ItemKind::Command,
        );
    }
    roots.dedup_by(|a, b| a.path == b.path);
    roots
}

/// Walks `root`: skill folders or command files, sorted by path, within the bounds above.
/// `project_root` is the project's root when `root` is the project's: then no link is
/// followed, not even on the way down from the project root to `root` itself.
pub fn walk(root: &Root, project_root: Option<&Path>) -> Found {
    let mut found = Found::default();
    let links_refused = root.origin == ItemOrigin::Project;
    if links_refused && let Some(project_root) = project_root {
        // `.earshot` or `.agents` (or the root itself) a link: the repository points somewhere
        // else; refuse the whole root.
        if let Ok(relative) = root.path.strip_prefix(project_root) {
            let mut at = project_root.to_path_buf();
            for part in relative.components() {
                at.push(part);
                match std::fs::symlink_metadata(&at) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        found.problems.push(Problem::new(
                            &at,
                            None,
                            "is a symbolic link; links are not followed inside the project, so nothing under it is loaded",
                        ));
                        return found;
                    }
                    Ok(_) => {}
                    Err(_) => return found,
                }
            }
        }
    } else if !root.path.is_dir() {
        return found;
    }
    let mut visited = 0usize;
    let mut stack = vec![(root.path.clone(), 0usize)];
    while let Some((folder, depth)) = stack.pop() {
        visited += 1;
        if visited > MAX_FOLDERS {
            found.problems.push(Problem::new(
                &root.path,
                None,
                &format!("holds more than {MAX_FOLDERS} folders; the rest were not looked at"),
            ));
            break;
        }
        if root.kind == ItemKind::Skill && depth > 0 {
            let skill_md = folder.join("SKILL.md");
            if let Ok(meta) = std::fs::symlink_metadata(&skill_md) {
                if meta.file_type().is_symlink() && links_refused {
                    found.problems.push(Problem::new(
                        &skill_md,
                        None,
                        "is a symbolic link; links are not followed inside the project",
                    ));
                } else {
                    found.paths.push(folder);
                }
                // A skill's subfolders are its own files, never more skills.
                continue;
            }
        }
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|entry| entry.file_name());
        let mut subfolders = Vec::new();
        for entry in entries {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let (is_dir, is_file) = if file_type.is_symlink() {
                if links_refused {
                    if name.ends_with(".md") || root.kind == ItemKind::Skill {
                        found.problems.push(Problem::new(
                            &path,
                            None,
                            "is a symbolic link; links are not followed inside the project",
                        ));
                    }
                    continue;
                }
                match std::fs::metadata(&path) {
                    Ok(meta) => (meta.is_dir(), meta.is_file()),
                    Err(_) => continue,
                }
            } else {
                (file_type.is_dir(), file_type.is_file())
            };
            if is_dir {
                if name.starts_with('.') || name == "node_modules" {
                    continue;
                }
                if depth + 1 > MAX_DEPTH {
                    found.problems.push(Problem::new(
                        &path,
                        None,
                        &format!(
                            "is deeper than {MAX_DEPTH} folders below {}; it was not looked at",
                            root.path.display()
                        ),
                    ));
                    continue;
                }
                subfolders.push((path, depth + 1));
            } else if is_file && root.kind == ItemKind::Command && name.ends_with(".md") {
                found.paths.push(path);
            }
        }
        // Popped in sorted order.
        stack.extend(subfolders.into_iter().rev());
    }
    found.paths.sort();
    found
}
