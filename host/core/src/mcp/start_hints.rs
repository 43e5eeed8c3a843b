//! Hints for a stdio server that will not start where it is told to: an argument that names a
//! project file while the server starts in the user's config dir (the user's own servers never
//! start in the project), and `npx` without `-y`, which waits on a question no one answers.

use std::path::Path;

use super::config::{PROJECT_DIR_VARIABLE, Transport};

/// The arguments of a stdio server (`command` and `args`, relative to `start_dir`, the directory
/// it will start in) that name a file or folder inside `project_root` but nothing in
/// `start_dir`: `python tools/notes.py` added as your own server, which starts in your config
/// dir. Absolute paths and words that name something where the server starts are left out.
pub fn project_only_paths(
    command: &str,
    args: &[String],
    start_dir: &Path,
    project_root: &Path,
) -> Vec<String> {
    std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .filter(|word| !word.is_empty() && !word.starts_with('-') && !word.contains("${"))
        .filter(|word| Path::new(word).is_relative())
        .filter(|word| *word != "." && *word != "..")
        .filter(|word| {
            start_dir.join(word).symlink_metadata().is_err()
                && project_root.join(word).symlink_metadata().is_ok()
        })
        .map(str::to_string)
        .collect()
}

/// The one line saying that `paths` are project files while the server starts in `start_dir`,
/// with the `--cwd` form of `mcp add` that starts it in the project.
pub fn cwd_hint(name: &str, paths: &[String], start_dir: &Path) -> String {
    let named = paths
        .iter()
        .map(|path| format!("\"{path}\""))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{named} is in the project, but server \"{name}\" starts in {} (your own servers never start in the project); to run the project's file, add it with `--cwd '${{{PROJECT_DIR_VARIABLE}}}'` (earshot mcp add --force --cwd '${{{PROJECT_DIR_VARIABLE}}}' {name} -- ...) or set \"cwd\": \"${{{PROJECT_DIR_VARIABLE}}}\" in its entry",
        start_dir.display()
    )
}

/// Whether `transport` runs `npx` without `-y`/`--yes`: npx then asks "Ok to proceed?" before
/// installing a package, and with no one to answer the server never answers initialize.
pub fn npx_without_yes(transport: &Transport) -> bool {
    let Transport::Stdio { command, args, .. } = transport else {
        return false;
    };
    let program = Path::new(command)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    program == "npx"
        && !args
            .iter()
            .any(|arg| arg == "-y" || arg == "--yes" || arg == "--yes=true")
}

/// The sentence added to "did not answer initialize" for an `npx` without `-y`.
pub const NPX_HINT: &str = "`npx` without `-y` waits on a question (\"Ok to proceed?\") that no one answers here; add `-y` to its args";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_file_missing_where_the_server_starts_is_named() {
        let project = tempfile::tempdir().unwrap();
        let config = tempfile::tempdir().unwrap();
        std::fs::create_dir(project.path().join("tools")).unwrap();
        std::fs::write(project.path().join("tools/notes.py"), "").unwrap();
        std::fs::write(config.path().join("both.py"), "").unwrap();
        std::fs::write(project.path().join("both.py"), "").unwrap();
        let args = vec![
            "tools/notes.py".to_string(),
            "both.py".into(),
            "-u".into(),
            "/abs".into(),
        ];
        assert_eq!(
            project_only_paths("python", &args, config.path(), project.path()),
            vec!["tools/notes.py".to_string()]
        );
    }

    #[test]
    fn npx_needs_yes() {
        let stdio = |args: &[&str]| Transport::Stdio {
            command: "/usr/bin/npx".into(),
            args: args.iter().map(|arg| arg.to_string()).collect(),
            env: Default::default(),
            cwd: None,
        };
        assert!(npx_without_yes(&stdio(&["pkg"])));
        assert!(!npx_without_yes(&stdio(&["-y", "pkg"])));
        assert!(!npx_without_yes(&stdio(&["--yes", "pkg"])));
    }
}
