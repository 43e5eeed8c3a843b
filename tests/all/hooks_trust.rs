//! Trust in hooks: a project hook never runs before `earshot hooks trust NAME` (no side effect
//! appears), runs after it, and lapses when its script changes; reordering keeps it; a local-file
//! hook earshot did not sign never runs; the user's own hooks are watched for changes made outside
//! earshot, and `hooks.requireReview` holds them back until reviewed.

use serde_json::{Value, json};

use crate::common::Sandbox;
use crate::hooks::{hook_py, project};

/// A project hook named `name` that appends a line to `marker` (relative to the project: what
/// it does is visible) on PreToolUse, in exec form through its own script in
/// `.earshot/hooks/NAME/run.sh` (a folder each: a named script's folder is in its digest).
fn project_hook(sandbox: &Sandbox, name: &str, marker: &str) -> Value {
    sandbox.write(
        &format!(".earshot/hooks/{name}/run.sh"),
        format!("#!/bin/sh\ncat >/dev/null\necho ran >> \"$EARSHOT_PROJECT_DIR/{marker}\"\n"),
    );
    json!({"matcher": "*", "hooks": [{"type": "command", "command": "sh",
        "args": [format!(".earshot/hooks/{name}/run.sh")], "name": name}]})
}

fn write_project_hooks(sandbox: &Sandbox, groups: Vec<Value>) {
    sandbox.write(
        ".earshot/settings.json",
        json!({"hooks": {"PreToolUse": groups}}).to_string(),
    );
}

fn call(sandbox: &Sandbox) -> (i32, String, String) {
    sandbox.run(&["tools", "call", "t__run", r#"{"path": "p"}"#])
}

#[test]
fn a_project_hook_runs_only_after_trust_and_lapses_when_its_script_changes() {
    let (sandbox, _) = project(json!({"permissions": {"allow": ["Extension(t__run)"]}}));
    let audit = project_hook(&sandbox, "audit", "ran.txt");
    write_project_hooks(&sandbox, vec![audit]);
    // Untrusted: listed with its trust command, never run (no terminal here, so nothing could
    // have been asked either).
    let (code, _, stderr) = call(&sandbox);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !sandbox.project().join("ran.txt").exists(),
        "an untrusted hook ran"
    );
    assert!(
        stderr.contains("hook \"audit\" (project, PreToolUse) does not run"),
        "{stderr}"
    );
    assert!(stderr.contains("earshot hooks trust audit"), "{stderr}");
    let (_, listed, _) = sandbox.run(&["hooks", "list"]);
    assert!(
        listed.contains("audit") && listed.contains("not trusted"),
        "{listed}"
    );

    let (code, _, stderr) = sandbox.run(&["hooks", "trust", "audit"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = call(&sandbox);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(sandbox.read("ran.txt"), "ran\n");
    let (_, listed, _) = sandbox.run(&["hooks", "list", "--json"]);
    let listed: Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed["hooks"][0]["state"], "trusted");
    assert_eq!(listed["hooks"][0]["lastResult"], "ok");

    // Reordering the project's hooks (another one first) keeps the trust: it is keyed by name.
    let other = project_hook(&sandbox, "other", "other.txt");
    let audit = json!({"matcher": "*", "hooks": [{"type": "command", "command": "sh",
        "args": [".earshot/hooks/audit/run.sh"], "name": "audit"}]});
    write_project_hooks(&sandbox, vec![other, audit]);
    call(&sandbox);
    assert_eq!(sandbox.read("ran.txt"), "ran\nran\n");
    assert!(!sandbox.project().join("other.txt").exists());

    // A pull changes the script: the trust lapses and the new script never runs.
    sandbox.write(
        ".earshot/hooks/audit/run.sh",
        "#!/bin/sh\ncat >/dev/null\necho pwned >> \"$EARSHOT_PROJECT_DIR/ran.txt\"\n",
    );
    let (_, _, stderr) = call(&sandbox);
    assert_eq!(sandbox.read("ran.txt"), "ran\nran\n");
    assert!(stderr.contains("changed since you trusted it"), "{stderr}");

    // Untrust: it stops.
    sandbox.run(&["hooks", "trust", "audit"]);
    sandbox.run(&["hooks", "untrust", "audit"]);
    call(&sandbox);
    assert_eq!(sandbox.read("ran.txt"), "ran\nran\n");
}

#[test]
fn a_project_hook_needs_a_name_and_cannot_fail_open() {
    let (sandbox, _) = project(json!({"permissions": {"allow": ["Extension(t__run)"]}}));
    write_project_hooks(
        &sandbox,
        vec![json!({"matcher": "*", "hooks": [
            {"command": "sh", "args": ["-c", "true"]},
            {"command": "sh", "args": ["-c", "exit 1"], "name": "lax", "onError": "continue"},
        ]})],
    );
    let (_, _, stderr) = call(&sandbox);
    assert!(stderr.contains("needs a \"name\""), "{stderr}");
    assert!(
        stderr.contains("onError \"continue\" is allowed only in your own settings"),
        "{stderr}"
    );
    let (code, _, stderr) = sandbox.run(&["hooks", "trust", "lax"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("there is no hook \"lax\""), "{stderr}");
}

#[test]
fn a_local_file_hook_earshot_did_not_sign_never_runs() {
    let (sandbox, _) = project(json!({"permissions": {"allow": ["Extension(t__run)"]}}));
    let shipped = project_hook(&sandbox, "shipped", "shipped.txt");
    sandbox.write(
        ".earshot/settings.local.json",
        json!({"hooks": {"PreToolUse": [shipped]}}).to_string(),
    );
    let (_, _, stderr) = call(&sandbox);
    assert!(
        !sandbox.project().join("shipped.txt").exists(),
        "a shipped local hook ran"
    );
    assert!(
        stderr.contains("runs only when earshot signed it"),
        "{stderr}"
    );
    // A forged trust record (wrong signature) does not count either.
    let mut local: Value =
        serde_json::from_str(&sandbox.read(".earshot/settings.local.json")).unwrap();
    local["trust"] = json!({"hooks": {"shipped": {"digest": "hmac-sha256:00", "project": sandbox.project(), "signature": "00"}}});
    sandbox.write(".earshot/settings.local.json", local.to_string());
    call(&sandbox);
    assert!(!sandbox.project().join("shipped.txt").exists());
    // Signed by the user, it runs.
    let (code, _, stderr) = sandbox.run(&["hooks", "trust", "shipped"]);
    assert_eq!(code, 0, "{stderr}");
    call(&sandbox);
    assert!(sandbox.project().join("shipped.txt").exists());
}

#[test]
fn the_users_hooks_are_watched_for_changes_made_outside_earshot() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("user-hook-ran");
    let user_hook = |extra_args: &[&str]| {
        let mut args = vec![
            hook_py(),
            "--log".to_string(),
            marker.display().to_string(),
            "print".into(),
            "".into(),
        ];
        args.extend(extra_args.iter().map(|arg| arg.to_string()));
        json!({"PreToolUse": [{"matcher": "*", "hooks": [{"command": "python3", "args": args, "name": "mine"}]}]})
    };
    let (sandbox, _) = project(json!({
        "permissions": {"allow": ["Extension(t__run)"]},
        "hooks": user_hook(&[]),
    }));
    // First run: earshot starts keeping watch (one line), the hook runs.
    let (_, _, stderr) = call(&sandbox);
    assert!(
        stderr.contains("earshot now keeps watch over your 1 hook"),
        "{stderr}"
    );
    assert!(marker.exists());
    let (_, _, stderr) = call(&sandbox);
    assert!(!stderr.contains("hooks:"), "{stderr}");
    // Something else rewrites the user's hooks: one line at the next start; the hook still runs.
    let rewrite = |hooks: Value| {
        let mut current: Value = serde_json::from_str(
            &std::fs::read_to_string(sandbox.config().join("settings.json")).unwrap(),
        )
        .unwrap();
        current["hooks"] = hooks;
        std::fs::write(sandbox.config().join("settings.json"), current.to_string()).unwrap();
    };
    rewrite(user_hook(&["worm"]));
    let (_, _, stderr) = call(&sandbox);
    assert!(
        stderr.contains("your hooks changed outside earshot"),
        "{stderr}"
    );
    let (_, _, stderr) = call(&sandbox);
    assert!(
        !stderr.contains("changed outside earshot"),
        "said twice: {stderr}"
    );

    // With requireReview, a change holds the user's hooks back until `hooks review`.
    let mut reviewed = user_hook(&[]);
    reviewed["requireReview"] = json!(true);
    rewrite(reviewed.clone());
    sandbox.run(&["hooks", "review"]);
    std::fs::remove_file(&marker).unwrap();
    let mut changed = user_hook(&["again"]);
    changed["requireReview"] = json!(true);
    rewrite(changed);
    let (code, _, stderr) = call(&sandbox);
    // Held back, the user's guard fails closed: the call is asked, and with no one to ask denied.
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("is held back"), "{stderr}");
    assert!(
        stderr.contains("do not run until you run `earshot hooks review`"),
        "{stderr}"
    );
    assert!(!marker.exists(), "a changed user hook ran before review");
    let (code, _, _) = sandbox.run(&["hooks", "review"]);
    assert_eq!(code, 0);
    call(&sandbox);
    assert!(marker.exists());
}

#[test]
fn what_a_hook_runs_through_a_glob_a_task_runner_or_a_path_out_of_the_project_is_covered() {
    let (sandbox, _) = project(json!({"permissions": {"allow": ["Extension(t__run)"]}}));
    sandbox.write(".earshot/hooks/all/a.sh", "echo a >/dev/null\n");
    sandbox.write("Makefile", "check:\n\t@true\n");
    write_project_hooks(
        &sandbox,
        vec![json!({"matcher": "*", "hooks": [
            {"command": "cat >/dev/null; for f in .earshot/hooks/all/*.sh; do sh \"$f\"; done", "name": "globbed"},
            {"command": "make", "args": ["-s", "check"], "name": "runner"},
        ]})],
    );
    // The glob and `$f` are known only when the shell runs: partial, named, and trusted only
    // when asked for as such (the glob's folder is still bound).
    let (code, _, stderr) = sandbox.run(&["hooks", "trust", "globbed"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("`.earshot/hooks/all/*.sh` (a glob)")
            && stderr.contains("`\"$f\"` (`$f`)")
            && stderr.contains("--partial"),
        "{stderr}"
    );
    let (code, stdout, stderr) = sandbox.run(&["hooks", "trust", "globbed", "--partial"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("bound: folder .earshot/hooks/all/ (1 file)")
            && stdout.contains("partial: its shell words"),
        "{stdout}"
    );
    let (code, stdout, stderr) = sandbox.run(&["hooks", "trust", "runner"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("bound: folder the project root"),
        "{stdout}"
    );
    let state = |sandbox: &Sandbox| -> Vec<String> {
        let (_, listed, _) = sandbox.run(&["hooks", "list", "--json"]);
        let listed: Value = serde_json::from_str(&listed).unwrap();
        listed["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hook| hook["state"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(state(&sandbox), ["trusted", "trusted"]);
    // A new script under the glob, and a changed Makefile: both lapse.
    sandbox.write(".earshot/hooks/all/zz.sh", "echo pwned\n");
    sandbox.write("Makefile", "check:\n\t@echo pwned\n");
    let states = state(&sandbox);
    assert!(
        states
            .iter()
            .all(|state| state.contains("changed since you trusted it")),
        "{states:?}"
    );

    // A script out of the project cannot be covered: trust refuses without --partial.
    let outside = sandbox.dir.path().join("shared");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("guard.sh"), "cat >/dev/null\n").unwrap();
    write_project_hooks(
        &sandbox,
        vec![
            json!({"matcher": "*", "hooks": [{"command": "sh", "args": ["../shared/guard.sh"], "name": "outside"}]}),
        ],
    );
    let (code, _, stderr) = sandbox.run(&["hooks", "trust", "outside"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("is outside the project") && stderr.contains("--partial"),
        "{stderr}"
    );
}

#[test]
fn a_trusted_hooks_script_edited_during_a_session_stops_at_once_and_fails_closed() {
    let (sandbox, _) = project(json!({"permissions": {"allow": ["Extension(t__run)"]}}));
    let audit = project_hook(&sandbox, "audit", "ran.txt");
    write_project_hooks(&sandbox, vec![audit]);
    let (code, _, stderr) = sandbox.run(&["hooks", "trust", "audit"]);
    assert_eq!(code, 0, "{stderr}");
    let host = sandbox.host();
    host.call("t__run", "{}", &earshot_host::NonInteractivePrompter)
        .unwrap();
    assert_eq!(sandbox.read("ran.txt"), "ran\n");
    sandbox.write(
        ".earshot/hooks/audit/run.sh",
        "#!/bin/sh\ncat >/dev/null\necho pwned >> \"$EARSHOT_PROJECT_DIR/ran.txt\"\n",
    );
    let denied = host.call("t__run", "{}", &earshot_host::NonInteractivePrompter);
    assert_eq!(sandbox.read("ran.txt"), "ran\n", "the edited script ran");
    match denied {
        Err(earshot_host::CallError::Denied(why)) => {
            assert!(
                why.contains("no longer runs") && why.contains("changed since you trusted it"),
                "{why}"
            )
        }
        other => panic!("{other:?}"),
    }
}

/// The trust records in the local file, by hook name.
fn hook_records(sandbox: &Sandbox) -> Vec<String> {
    let local: Value =
        serde_json::from_str(&sandbox.read(".earshot/settings.local.json")).unwrap_or(json!({}));
    local["trust"]["hooks"]
        .as_object()
        .map(|records| records.keys().cloned().collect())
        .unwrap_or_default()
}

/// Each hook's state in `hooks list`, by name.
fn states(sandbox: &Sandbox) -> std::collections::BTreeMap<String, String> {
    let (code, listed, stderr) = run_within(sandbox, &["hooks", "list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let listed: Value = serde_json::from_str(&listed).unwrap();
    listed["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hook| {
            (
                hook["name"].as_str().unwrap().to_string(),
                hook["state"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Runs `earshot ARGS`, failing the test if it has not ended within a minute (a walk that
/// opened a FIFO would wait for a writer for ever): a hang detector, not a speed check.
fn run_within(sandbox: &Sandbox, args: &[&str]) -> (i32, String, String) {
    let mut child = sandbox
        .earshot()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("earshot {args:?} did not end: something blocked it");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A project hook in shell-string form.
fn shell_hook(name: &str, script: &str) -> Value {
    json!({"matcher": "*", "hooks": [{"type": "command", "command": script, "name": name}]})
}

/// `.earshot/hooks/NAME/run.sh`, which appends `line` to `ran.txt` in the project.
fn hook_script(sandbox: &Sandbox, name: &str, line: &str) {
    sandbox.write(
        &format!(".earshot/hooks/{name}/run.sh"),
        format!("cat >/dev/null\necho {line} >> \"$EARSHOT_PROJECT_DIR/ran.txt\"\n"),
    );
}

#[test]
fn the_project_dir_forms_of_a_shell_string_bind_the_script_they_name() {
    let (sandbox, _) = project(json!({"permissions": {"allow": ["Extension(t__run)"]}}));
    let forms = [
        ("pwd", r#"sh "$PWD/.earshot/hooks/pwd/run.sh""#),
        (
            "default",
            r#"sh "${EARSHOT_PROJECT_DIR:-.}/.earshot/hooks/default/run.sh""#,
        ),
        ("subst", r#"sh "$(pwd)/.earshot/hooks/subst/run.sh""#),
        (
            "claude",
            r#"sh "$CLAUDE_PROJECT_DIR"/.earshot/hooks/claude/run.sh"#,
        ),
        (
            "nested",
            r#"bash -c 'sh "$PWD/.earshot/hooks/nested/run.sh"'"#,
        ),
    ];
    let mut hooks = Vec::new();
    for (name, script) in forms {
        hook_script(&sandbox, name, name);
        hooks.push(shell_hook(name, script));
    }
    write_project_hooks(&sandbox, hooks);
    for (name, _) in forms {
        let (code, stdout, stderr) = sandbox.run(&["hooks", "trust", name]);
        assert_eq!(code, 0, "{name}: {stderr}");
        assert!(
            stdout.contains(&format!("bound: folder .earshot/hooks/{name}/ (1 file)"))
                && stdout.contains("bound: its definition")
                && stdout.contains("not covered: code it loads from elsewhere in the project")
                && !stdout.contains("partial:"),
            "{name}: {stdout}"
        );
    }
    let (code, _, stderr) = call(&sandbox);
    assert_eq!(code, 0, "{stderr}");
    let mut ran: Vec<String> = sandbox.read("ran.txt").lines().map(String::from).collect();
    ran.sort();
    assert_eq!(ran, ["claude", "default", "nested", "pwd", "subst"]);

    // A pull rewrites two of the scripts: those two lapse, the others stay trusted, and the
    // rewrites never run.
    std::fs::remove_file(sandbox.project().join("ran.txt")).unwrap();
    hook_script(&sandbox, "default", "pwned");
    hook_script(&sandbox, "subst", "pwned");
    let now = states(&sandbox);
    for (name, _) in forms {
        if name == "default" || name == "subst" {
            assert!(
                now[name].contains(&format!(
                    "changed since you trusted it (`.earshot/hooks/{name}/run.sh`)"
                )),
                "{name}: {now:?}"
            );
        } else {
            assert_eq!(now[name], "trusted", "{name}: {now:?}");
        }
    }
    call(&sandbox);
    let mut ran: Vec<String> = sandbox.read("ran.txt").lines().map(String::from).collect();
    ran.sort();
    assert_eq!(ran, ["claude", "nested", "pwd"]);
}

#[test]
fn a_shell_word_the_digest_cannot_resolve_is_refused_naming_it() {
    let (sandbox, _) = project(json!({"permissions": {"allow": ["Extension(t__run)"]}}));
    hook_script(&sandbox, "w", "w");
    sandbox.write(".earshot/hooks/w/name", ".earshot/hooks/w/run.sh\n");
    let kept = project_hook(&sandbox, "kept", "kept.txt");
    let cases = [
        (
            "home",
            r#"sh "$HOME/.earshot/hooks/w/run.sh""#,
            "`\"$HOME/.earshot/hooks/w/run.sh\"` (`$HOME`)",
        ),
        (
            "backslash",
            r#"sh .earshot/hooks/w/run\.sh"#,
            "`.earshot/hooks/w/run\\.sh` (a backslash)",
        ),
        (
            "glob",
            "sh .earshot/hooks/w/r*.sh",
            "`.earshot/hooks/w/r*.sh` (a glob)",
        ),
        (
            "backtick",
            "sh `cat .earshot/hooks/w/name`",
            "(``cat .earshot/hooks/w/name``)",
        ),
        (
            "subst",
            r#"sh "$(cat .earshot/hooks/w/name)""#,
            "(`$(cat .earshot/hooks/w/name)`)",
        ),
        (
            "variable",
            r#"f=.earshot/hooks/w/run.sh; sh "$f""#,
            "`\"$f\"` (`$f`)",
        ),
        (
            "cd",
            "cd .earshot/hooks/w && sh run.sh",
            "(a `cd` into another folder)",
        ),
        ("tilde", "sh ~/run.sh", "`~/run.sh` (`~`)"),
    ];
    let mut hooks = vec![kept];
    hooks.extend(
        cases
            .iter()
            .map(|(name, script, _)| shell_hook(name, script)),
    );
    write_project_hooks(&sandbox, hooks);
    let (code, _, stderr) = sandbox.run(&["hooks", "trust", "kept"]);
    assert_eq!(code, 0, "{stderr}");
    for (name, _, word) in cases {
        let (code, stdout, stderr) = sandbox.run(&["hooks", "trust", name]);
        assert_ne!(code, 0, "{name}: {stdout}");
        assert!(
            stderr.contains(&format!(
                "hook \"{name}\" cannot be trusted as a whole: its shell word"
            )) && stderr.contains(word)
                && stderr.contains("known only when it runs")
                && stderr.contains(&format!("earshot hooks trust {name} --partial")),
            "{name}: {stderr}"
        );
    }
    // Nothing was recorded for them; the hook trusted before is still the only one that runs.
    assert_eq!(hook_records(&sandbox), ["kept"]);
    let now = states(&sandbox);
    assert_eq!(now["kept"], "trusted");
    for (name, _, _) in cases {
        assert!(now[name].starts_with("not trusted"), "{name}: {now:?}");
    }
    call(&sandbox);
    assert_eq!(sandbox.read("kept.txt"), "ran\n");
    assert_eq!(sandbox.read("ran.txt"), "");

    // Asked for as partial, it is trusted, and the output says why it is partial.
    let (code, stdout, stderr) = sandbox.run(&["hooks", "trust", "home", "--partial"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("partial: its shell word `\"$HOME/.earshot/hooks/w/run.sh\"` (`$HOME`)"),
        "{stdout}"
    );
}

#[test]
fn installed_packages_on_the_resolution_path_make_a_hooks_digest_partial() {
    let (sandbox, _) = project(json!({"permissions": {"allow": ["Extension(t__run)"]}}));
    sandbox.write(
        ".earshot/hooks/n/check.js",
        "require('dep');\nprocess.stdin.resume();\n",
    );
    sandbox.write("node_modules/dep/index.js", "module.exports = 1;\n");
    sandbox.write(".earshot/hooks/v/check.py", "import dep\n");
    sandbox.write(".earshot/hooks/v/.venv/lib/dep.py", "X = 1\n");
    let kept = project_hook(&sandbox, "kept", "kept.txt");
    write_project_hooks(
        &sandbox,
        vec![
            kept,
            json!({"matcher": "*", "hooks": [
                {"command": "node", "args": [".earshot/hooks/n/check.js"], "name": "node-hook"},
                {"command": "python3", "args": [".earshot/hooks/v/check.py"], "name": "venv-hook"},
                {"command": "node .", "name": "root"},
            ]}),
        ],
    );
    // `kept` names only its own folder, but that folder is under the root, whose node_modules
    // Node would search: it is partial too, so it is trusted as such.
    let (code, _, stderr) = sandbox.run(&["hooks", "trust", "kept"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("`node_modules` at the project root holds installed packages"),
        "{stderr}"
    );
    let (code, _, stderr) = sandbox.run(&["hooks", "trust", "kept", "--partial"]);
    assert_eq!(code, 0, "{stderr}");
    for (name, expected) in [
        (
            "node-hook",
            "`node_modules` at the project root holds installed packages",
        ),
        (
            "root",
            "`node_modules` at the project root holds installed packages",
        ),
        (
            "venv-hook",
            "`.earshot/hooks/v/.venv` holds installed packages",
        ),
    ] {
        let (code, _, stderr) = sandbox.run(&["hooks", "trust", name]);
        assert_ne!(code, 0, "{name}");
        assert!(
            stderr.contains(expected)
                && stderr.contains("which earshot does not hash")
                && stderr.contains("--partial"),
            "{name}: {stderr}"
        );
    }
    assert_eq!(hook_records(&sandbox), ["kept"]);
    let now = states(&sandbox);
    assert_eq!(now["kept"], "trusted");
    assert!(now["node-hook"].starts_with("not trusted"), "{now:?}");
}

#[test]
fn a_fifo_in_a_trusted_hooks_folder_is_reported_and_never_blocks() {
    let (sandbox, _) = project(json!({"permissions": {"allow": ["Extension(t__run)"]}}));
    let audit = project_hook(&sandbox, "audit", "ran.txt");
    let other = project_hook(&sandbox, "other", "other.txt");
    write_project_hooks(&sandbox, vec![audit, other]);
    for name in ["audit", "other"] {
        let (code, _, stderr) = sandbox.run(&["hooks", "trust", name]);
        assert_eq!(code, 0, "{stderr}");
    }
    let pipe = sandbox
        .project()
        .join(".earshot/hooks/audit/__pycache__/run.cpython-311.pyc");
    std::fs::create_dir_all(pipe.parent().unwrap()).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(&pipe)
        .status()
        .unwrap();
    assert!(status.success());

    let now = states(&sandbox);
    assert_eq!(
        now["audit"],
        "changed since you trusted it (new `.earshot/hooks/audit/__pycache__/run.cpython-311.pyc`); review it, then run `earshot hooks trust audit`"
    );
    assert_eq!(now["other"], "trusted");
    let (_, _, stderr) = run_within(&sandbox, &["tools", "call", "t__run", r#"{"path": "p"}"#]);
    assert!(stderr.contains("changed since you trusted it"), "{stderr}");
    assert!(
        !sandbox.project().join("ran.txt").exists(),
        "the lapsed hook ran"
    );
    assert_eq!(sandbox.read("other.txt"), "ran\n");
    let (code, _, stderr) = run_within(&sandbox, &["hooks", "trust", "audit"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains(
            "`.earshot/hooks/audit/__pycache__/run.cpython-311.pyc` is a FIFO, not a regular file, so earshot does not open it"
        ),
        "{stderr}"
    );
}

#[test]
fn hooks_trust_digest_prints_what_it_would_bind_and_pins_what_was_reviewed() {
    let (sandbox, _) = project(json!({"permissions": {"allow": ["Extension(t__run)"]}}));
    let audit = project_hook(&sandbox, "audit", "ran.txt");
    write_project_hooks(&sandbox, vec![audit]);
    let (code, stdout, stderr) = sandbox.run(&["hooks", "trust", "audit", "--digest"]);
    assert_eq!(code, 0, "{stderr}");
    let first = stdout.lines().next().unwrap();
    let digest = first
        .strip_prefix("hook \"audit\": ")
        .unwrap_or_else(|| panic!("{stdout}"))
        .to_string();
    assert!(digest.starts_with("hmac-sha256:"), "{stdout}");
    assert!(
        stdout.contains("bound: folder .earshot/hooks/audit/ (1 file)")
            && stdout.contains(&format!("not trusted: to trust exactly this, run `earshot hooks trust audit --digest {digest}`")),
        "{stdout}"
    );
    // Printing trusts nothing.
    assert!(hook_records(&sandbox).is_empty());
    assert!(states(&sandbox)["audit"].starts_with("not trusted"));

    // Pinned to what was reviewed: a change since then is refused, and nothing is recorded.
    sandbox.write(
        ".earshot/hooks/audit/run.sh",
        "#!/bin/sh\ncat >/dev/null\necho pwned >> \"$EARSHOT_PROJECT_DIR/ran.txt\"\n",
    );
    let (code, _, stderr) = sandbox.run(&["hooks", "trust", "audit", "--digest", &digest]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("hook \"audit\" changed since you reviewed it (it is now hmac-sha256:"),
        "{stderr}"
    );
    assert!(hook_records(&sandbox).is_empty());
    call(&sandbox);
    assert!(!sandbox.project().join("ran.txt").exists());

    // The digest as it is now pins it.
    let (_, stdout, _) = sandbox.run(&["hooks", "trust", "audit", "--digest"]);
    let now = stdout
        .lines()
        .next()
        .unwrap()
        .strip_prefix("hook \"audit\": ")
        .unwrap()
        .to_string();
    let (code, stdout, stderr) = sandbox.run(&["hooks", "trust", "audit", "--digest", &now]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(&format!("trusted hook \"audit\" as it is now ({now})")),
        "{stdout}"
    );
    assert_eq!(hook_records(&sandbox), ["audit"]);
    let (code, _, stderr) = sandbox.run(&["hooks", "trust", "audit", "kept", "--digest", &now]);
    assert_ne!(code, 0);
    assert!(stderr.contains("give one name with it"), "{stderr}");
}
