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
