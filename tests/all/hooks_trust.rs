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
    for name in ["globbed", "runner"] {
        let (code, _, stderr) = sandbox.run(&["hooks", "trust", name]);
        assert_eq!(code, 0, "{stderr}");
    }
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
