//! The user's own file in a project (`.earshot/settings.local.json`, which holds the tokens of
//! `mcp add --env` and the user's signed trust), its lock and an edit's temporary file stay out
//! of git whatever ignore files the repository commits: earshot's lines are the last of
//! `.earshot/.gitignore`, checked with git's rules before anything is written. Each case is
//! judged by the real `git`, as the user's `git add -A` would be.

use serde_json::json;

use crate::common::{Sandbox, fixture_server};

/// The repository's own ignore lines, each a way to re-include the local file.
const DEFEATS: &[(&str, &str, &str)] = &[
    (
        "a nested .earshot/.gitignore re-including it",
        ".earshot/.gitignore",
        "# the repository's\n!settings.local.json\n",
    ),
    (
        "a later ! line in the root .gitignore",
        ".gitignore",
        "node_modules/\n.earshot/settings.local.json\n!.earshot/settings.local.json\n",
    ),
    (
        "the root line with leading spaces (git reads them as part of the name)",
        ".gitignore",
        "node_modules/\n  .earshot/settings.local.json\n",
    ),
    (
        "a root .gitignore negation of the whole folder",
        ".gitignore",
        "*.json\n!.earshot/\n!.earshot/*\n",
    ),
    (
        "a nested negation of the lock and temp files",
        ".earshot/.gitignore",
        "!*.lock\n!.settings-*\n!*.tmp\n",
    ),
    (
        "earshot's own lines already there, with a ! after them",
        ".earshot/.gitignore",
        "/settings.local.json\n/settings.local.json.lock\n!settings.local.json\n!/settings.local.json.lock\n",
    ),
];

fn git_output(sandbox: &Sandbox, args: &[&str]) -> (bool, String) {
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(sandbox.project())
        .args(args)
        .output()
        .expect("git runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// `earshot mcp add -s local --env TOKEN=hunter2 mine -- python3 env_dump.py`: a token earshot
/// writes into the local file. Returns (exit code, stdout, stderr).
fn add_local_server_with_token(sandbox: &Sandbox) -> (i32, String, String) {
    let fixture = crate::common::mcp_fixture("env_dump.py");
    sandbox.run(&[
        "mcp",
        "add",
        "-s",
        "local",
        "--env",
        "TOKEN=hunter2",
        "mine",
        "--",
        "python3",
        &fixture,
    ])
}

/// What the real git says: every earshot file is ignored, `git add -A` stages none of them, and
/// the repository's ignore file still holds its own lines.
fn assert_kept_out_of_git(sandbox: &Sandbox, case: &str, file: &str, text: &str) {
    for name in [
        ".earshot/settings.local.json",
        ".earshot/settings.local.json.lock",
        ".earshot/.settings-x1y2.tmp",
    ] {
        let (ignored, _) = git_output(sandbox, &["check-ignore", "-q", "--no-index", name]);
        assert!(ignored, "{case}: git does not ignore {name}");
    }
    assert!(
        std::fs::metadata(sandbox.project().join(".earshot/settings.local.json")).is_ok(),
        "{case}: the local file was written"
    );
    let (_, status) = git_output(sandbox, &["status", "--porcelain", "-uall"]);
    assert!(!status.contains("settings.local"), "{case}: {status}");
    sandbox.git(&["add", "-A"]);
    let (_, staged) = git_output(sandbox, &["diff", "--cached", "--name-only"]);
    assert!(
        !staged.contains("settings.local"),
        "{case}: staged {staged}"
    );
    let kept = sandbox.read(file);
    for line in text.lines() {
        assert!(
            kept.lines().any(|kept| kept == line),
            "{case}: the repository's line {line:?} was dropped from {file}:\n{kept}"
        );
    }
    let nested = sandbox.read(".earshot/.gitignore");
    assert!(
        nested.ends_with("/settings.local.json\n/settings.local.json.lock\n/.settings-*.tmp\n"),
        "{case}: earshot's lines are last:\n{nested}"
    );
}

#[test]
fn mcp_add_with_env_keeps_the_token_out_of_git_whatever_the_repository_ignores() {
    for (case, file, text) in DEFEATS {
        let sandbox = Sandbox::new();
        sandbox.write(file, text);
        sandbox.git(&["add", "-A"]);
        sandbox.git(&["commit", "-q", "-m", "the repository"]);
        let (code, _, stderr) = add_local_server_with_token(&sandbox);
        assert_eq!(code, 0, "{case}: {stderr}");
        assert!(
            sandbox
                .read(".earshot/settings.local.json")
                .contains("hunter2")
        );
        // The lock file is there too (an edit takes it).
        assert!(
            sandbox
                .project()
                .join(".earshot/settings.local.json.lock")
                .exists()
        );
        // And a temp file an edit killed mid-way would leave behind.
        sandbox.write(".earshot/.settings-x1y2.tmp", "TOKEN=hunter2");
        assert_kept_out_of_git(&sandbox, case, file, text);
    }
}

#[test]
fn mcp_trust_keeps_its_record_out_of_git_whatever_the_repository_ignores() {
    for (case, file, text) in DEFEATS {
        let sandbox = Sandbox::new();
        sandbox.write(file, text);
        sandbox.write(
            ".earshot/settings.json",
            json!({"mcpServers": {"repo": fixture_server("env_dump.py", &[])}}).to_string(),
        );
        sandbox.git(&["add", "-A"]);
        sandbox.git(&["commit", "-q", "-m", "the repository"]);
        let (code, _, stderr) = sandbox.run(&["mcp", "trust", "repo"]);
        assert_eq!(code, 0, "{case}: {stderr}");
        sandbox.write(".earshot/.settings-x1y2.tmp", "{}");
        assert_kept_out_of_git(&sandbox, case, file, text);
    }
}

#[test]
fn an_ignore_file_earshot_cannot_own_means_no_token_and_no_record_is_written() {
    // `.earshot/.gitignore` is a folder (it cannot be written) or a link (never followed).
    for setup in ["folder", "link"] {
        let sandbox = Sandbox::new();
        let ignore = sandbox.project().join(".earshot/.gitignore");
        let target = sandbox.dir.path().join("elsewhere");
        std::fs::write(&target, "unchanged\n").unwrap();
        match setup {
            "folder" => std::fs::create_dir_all(&ignore).unwrap(),
            _ => std::os::unix::fs::symlink(&target, &ignore).unwrap(),
        }
        let (code, _, stderr) = add_local_server_with_token(&sandbox);
        assert_eq!(code, 1, "{setup}: {stderr}");
        assert_eq!(
            stderr.trim().lines().count(),
            1,
            "{setup}: one line: {stderr}"
        );
        assert!(stderr.contains(".earshot/.gitignore"), "{setup}: {stderr}");
        assert!(
            !sandbox
                .project()
                .join(".earshot/settings.local.json")
                .exists(),
            "{setup}: nothing was written"
        );
        let (code, _, stderr) = sandbox.run(&["permissions", "allow", "Mcp(x__y)"]);
        assert_eq!(code, 1, "{setup}: {stderr}");
        assert!(
            !sandbox
                .project()
                .join(".earshot/settings.local.json")
                .exists(),
            "{setup}: nothing was written"
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "unchanged\n");
    }
}

#[test]
fn a_local_file_the_repository_committed_gets_no_token_and_no_record() {
    let sandbox = Sandbox::new();
    sandbox.write(".earshot/settings.local.json", "{}\n");
    sandbox.git(&["add", "-A"]);
    sandbox.git(&["commit", "-q", "-m", "the repository ships its local file"]);
    let (code, _, stderr) = add_local_server_with_token(&sandbox);
    assert_ne!(code, 0, "{stderr}");
    assert!(
        stderr.contains("is tracked by git")
            && stderr.contains("git rm --cached .earshot/settings.local.json"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert_eq!(sandbox.read(".earshot/settings.local.json"), "{}\n");
    // Once the user untracks it (keeping the file), the same command writes it, ignored by git.
    sandbox.git(&["rm", "-q", "--cached", ".earshot/settings.local.json"]);
    let (code, _, stderr) = add_local_server_with_token(&sandbox);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        sandbox
            .read(".earshot/settings.local.json")
            .contains("hunter2")
    );
    let (ignored, _) = git_output(
        &sandbox,
        &[
            "check-ignore",
            "-q",
            "--no-index",
            ".earshot/settings.local.json",
        ],
    );
    assert!(ignored, "git ignores the untracked local file");
    // `git add -A` stages only the user's own removal from the index, never the token.
    sandbox.git(&["add", "-A"]);
    let (_, staged) = git_output(&sandbox, &["diff", "--cached", "--name-status"]);
    let local: Vec<&str> = staged
        .lines()
        .filter(|line| line.contains("settings.local"))
        .collect();
    assert_eq!(local, ["D\t.earshot/settings.local.json"], "{staged}");
}

/// Runs git in `dir` (a repository the test made beside or inside the project).
fn git_in(dir: &std::path::Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(["-c", "protocol.file.allow=always"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Every file under `dir` (but `.git` folders) with its bytes, to prove nothing was written.
fn snapshot(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() && entry.file_name() != ".git" {
                pending.push(path);
            } else if kind.is_file() {
                files.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// `mcp add -s local --env TOKEN=hunter2` is refused in one line holding `expected`, the
/// token is in no file, and no file in the project changed (nor was one added).
fn assert_refused_and_nothing_written(sandbox: &Sandbox, case: &str, expected: &[&str]) {
    let before = snapshot(&sandbox.project());
    let (code, _, stderr) = add_local_server_with_token(sandbox);
    assert_eq!(code, 1, "{case}: {stderr}");
    assert_eq!(
        stderr.trim().lines().count(),
        1,
        "{case}: one line: {stderr}"
    );
    for part in expected {
        assert!(stderr.contains(part), "{case}: {part:?} in {stderr}");
    }
    let after = snapshot(&sandbox.project());
    assert_eq!(
        before.iter().map(|(path, _)| path).collect::<Vec<_>>(),
        after.iter().map(|(path, _)| path).collect::<Vec<_>>(),
        "{case}: no file was added or removed"
    );
    assert!(before == after, "{case}: a file changed");
    assert!(
        after
            .iter()
            .all(|(_, bytes)| !String::from_utf8_lossy(bytes).contains("hunter2")),
        "{case}: the token was written"
    );
}

/// A fresh project repository in the object format given, the local file committed in it.
fn sandbox_committing_the_local_file(format: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::remove_dir_all(sandbox.project().join(".git")).unwrap();
    sandbox.git(&["init", "-q", "--object-format", format, "."]);
    sandbox.write(".earshot/settings.local.json", "{}\n");
    sandbox.write("README", "the repository\n");
    sandbox.git(&["add", "-A"]);
    sandbox.git(&["commit", "-q", "-m", "ships its local file"]);
    sandbox
}

#[test]
fn a_committed_local_file_is_seen_in_sha256_repositories_and_every_index_layout() {
    for format in ["sha1", "sha256"] {
        for layout in ["2", "3", "4", "split"] {
            let case = format!("{format}, index {layout}");
            let sandbox = sandbox_committing_the_local_file(format);
            match layout {
                "split" => sandbox.git(&["update-index", "--split-index"]),
                version => sandbox.git(&["update-index", "--index-version", version]),
            }
            assert_refused_and_nothing_written(
                &sandbox,
                &case,
                &[
                    "is tracked by git",
                    "rm --cached .earshot/settings.local.json",
                    "nothing was written",
                ],
            );
            // Untracked (the user's copy stays), the same command writes it, ignored by git.
            sandbox.git(&["rm", "-q", "--cached", ".earshot/settings.local.json"]);
            let (code, _, stderr) = add_local_server_with_token(&sandbox);
            assert_eq!(code, 0, "{case}: {stderr}");
            let (ignored, _) = git_output(
                &sandbox,
                &[
                    "check-ignore",
                    "-q",
                    "--no-index",
                    ".earshot/settings.local.json",
                ],
            );
            assert!(ignored, "{case}: git ignores the local file");
        }
    }
}

#[test]
fn a_sha256_repository_that_tracks_nothing_of_earshots_gets_the_token_kept_out_of_git() {
    let sandbox = Sandbox::new();
    std::fs::remove_dir_all(sandbox.project().join(".git")).unwrap();
    sandbox.git(&["init", "-q", "--object-format", "sha256", "."]);
    sandbox.write("README", "the repository\n");
    sandbox.git(&["add", "-A"]);
    sandbox.git(&["commit", "-q", "-m", "x"]);
    let (code, _, stderr) = add_local_server_with_token(&sandbox);
    assert_eq!(code, 0, "{stderr}");
    sandbox.write(".earshot/.settings-x1y2.tmp", "TOKEN=hunter2");
    assert_kept_out_of_git(&sandbox, "sha256", ".earshot/.gitignore", "");
}

#[test]
fn an_earshot_folder_that_is_a_submodule_or_a_nested_repository_is_checked_where_it_is_committed() {
    for setup in ["submodule", "nested repository", "nested sha256 repository"] {
        let sandbox = Sandbox::new();
        let earshot = sandbox.project().join(".earshot");
        std::fs::remove_dir_all(&earshot).unwrap();
        match setup {
            "submodule" => {
                let upstream = sandbox.dir.path().join("upstream");
                std::fs::create_dir_all(&upstream).unwrap();
                git_in(&upstream, &["init", "-q", "."]);
                std::fs::write(upstream.join("settings.local.json"), "{}\n").unwrap();
                git_in(&upstream, &["add", "-A"]);
                git_in(&upstream, &["commit", "-q", "-m", "the shared settings"]);
                git_in(
                    &sandbox.project(),
                    &[
                        "submodule",
                        "add",
                        "-q",
                        upstream.to_str().unwrap(),
                        ".earshot",
                    ],
                );
                git_in(&sandbox.project(), &["commit", "-q", "-m", "the submodule"]);
                assert!(
                    earshot.join(".git").is_file(),
                    "a submodule's .git is a file"
                );
            }
            _ => {
                std::fs::create_dir_all(&earshot).unwrap();
                let format = if setup.contains("sha256") {
                    "sha256"
                } else {
                    "sha1"
                };
                git_in(&earshot, &["init", "-q", "--object-format", format, "."]);
                std::fs::write(earshot.join("settings.local.json"), "{}\n").unwrap();
                git_in(&earshot, &["add", "-A"]);
                git_in(&earshot, &["commit", "-q", "-m", "nested"]);
            }
        }
        assert_refused_and_nothing_written(
            &sandbox,
            setup,
            &[
                "is tracked by git",
                "rm --cached settings.local.json",
                &earshot.display().to_string(),
            ],
        );
        assert_eq!(git_in(&earshot, &["status", "--porcelain"]), "", "{setup}");
    }
}

#[test]
fn an_index_earshot_cannot_read_means_it_may_be_tracked_and_nothing_is_written() {
    for (case, bytes) in [
        ("a future index version", &b"DIRC\0\0\0\x09\0\0\0\0"[..]),
        ("a damaged index", b"DIRC\0\0\0\x02\0\0\0\x05garbage"),
        ("not an index", b"something else"),
    ] {
        let sandbox = Sandbox::new();
        sandbox.write("README", "x\n");
        sandbox.git(&["add", "-A"]);
        sandbox.git(&["commit", "-q", "-m", "x"]);
        std::fs::write(sandbox.project().join(".git/index"), bytes).unwrap();
        assert_refused_and_nothing_written(
            &sandbox,
            case,
            &[
                "may be tracked by git",
                "cannot read the index",
                "-s user",
                "nothing was written",
            ],
        );
        // Nor is a trust record written there.
        let (code, _, stderr) = sandbox.run(&["permissions", "allow", "Mcp(x__y)"]);
        assert_eq!(code, 1, "{case}: {stderr}");
        assert!(
            !sandbox
                .project()
                .join(".earshot/settings.local.json")
                .exists(),
            "{case}"
        );
    }
    // A `.git` file naming a git dir that is not there.
    let sandbox = Sandbox::new();
    std::fs::remove_dir_all(sandbox.project().join(".git")).unwrap();
    sandbox.write(".git", "gitdir: ../nowhere\n");
    assert_refused_and_nothing_written(&sandbox, "a gitfile to nowhere", &["may be tracked"]);
}
