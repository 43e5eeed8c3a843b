//! A mistake in the user's own settings never removes a guard (issue 54): a settings file that
//! does not parse makes what its deny rules could have refused ask (read-only tools, skills,
//! `@` includes); a typo in the user's own PreToolUse guard holds the call instead of dropping
//! the guard. And: a repository's `disableAllHooks` switches off only the repository's hooks;
//! `@` never reads earshot's own local file or `.git/` without a rule naming it; `hooks untrust`
//! counts at the next run of a session already open.

// Its MCP tests are compiled out without the MCP client; what only they use goes with them.
#![cfg_attr(not(feature = "mcp"), allow(dead_code, unused_imports))]

use earshot_host::{NonInteractivePrompter, PromptAnswer};
use serde_json::{Value, json};

use crate::common::{Sandbox, block_on};
use crate::hooks::{Recording, denied, handler, hook_py, logged, on, project};
use crate::skills::{skill_md, user_command, user_skill};

/// The user's deny rules for one action of each kind that needs no allow rule.
const DENIES: &str = r#"["Extension(ro__look)", "Skill(notes)", "Read(notes.txt)"]"#;

/// A user's read-only extension tool `ro__look`, a skill `notes`, a command `/peek` including
/// `@notes.txt`, and the file.
fn every_action_kind() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_user_extension(
        "ro.ts",
        "export default { tools: [{ name: 'look', description: 'Looks', inputSchema: { type: 'object' }, readOnly: true,\n\
           async execute() { return 'looked'; } }] };\n",
    );
    user_skill(&sandbox, "notes", &skill_md("notes", "Takes notes"));
    user_command(&sandbox, "peek.md", "Read @notes.txt please\n");
    sandbox.write("notes.txt", "the notes");
    sandbox
}

fn write_user_file(sandbox: &Sandbox, text: &str) {
    std::fs::write(sandbox.config().join("settings.json"), text).unwrap();
}

/// What each action gives with no one to ask: (the read-only tool, the model's skill load, the
/// typed skill, the include), each `Ok(text)` or `Err(what the user sees)`.
fn outcomes(
    sandbox: &Sandbox,
    prompter: &dyn earshot_host::Prompter,
) -> Vec<Result<String, String>> {
    let host = sandbox.host();
    let text = |output: earshot_host::ToolOutput| output.output;
    vec![
        host.call("ro__look", "{}", prompter)
            .map(text)
            .map_err(|error| error.to_string()),
        host.call("skill", r#"{"name": "notes"}"#, prompter)
            .map(text)
            .map_err(|error| error.to_string()),
        block_on(host.expand_command("notes", "", prompter))
            .map(|expansion| expansion.text)
            .map_err(|error| error.to_string()),
        block_on(host.expand_command("peek", "", prompter))
            .map(|expansion| expansion.text)
            .map_err(|error| error.to_string()),
    ]
}

#[test]
fn a_user_file_that_does_not_parse_makes_what_needs_no_allow_rule_ask() {
    let sandbox = every_action_kind();
    // Nothing broken: each runs, and each deny rule holds.
    for outcome in outcomes(&sandbox, &NonInteractivePrompter) {
        assert!(outcome.is_ok(), "{outcome:?}");
    }
    write_user_file(
        &sandbox,
        &format!(r#"{{"permissions": {{"deny": {DENIES}}}}}"#),
    );
    for outcome in outcomes(&sandbox, &NonInteractivePrompter) {
        assert!(
            outcome
                .as_ref()
                .is_err_and(|why| why.contains("denied by the rule")),
            "{outcome:?}"
        );
    }
    for (form, text, says) in [
        (
            "a trailing comma",
            format!(r#"{{"permissions": {{"deny": {DENIES}}},}}"#),
            "does not parse",
        ),
        (
            "a repeated key",
            format!(r#"{{"permissions": {{"deny": {DENIES}}}, "permissions": {{"allow": []}}}}"#),
            "the key \"permissions\" appears twice",
        ),
    ] {
        write_user_file(&sandbox, &text);
        let settings = sandbox.config().join("settings.json").display().to_string();
        // No one to ask: each is denied, naming the file to fix; nothing ran.
        for outcome in outcomes(&sandbox, &NonInteractivePrompter) {
            let why = outcome.expect_err(form);
            assert!(
                why.contains("needs approval")
                    && why.contains(&settings)
                    && why.contains(says)
                    && !why.contains('\n'),
                "{form}: {why}"
            );
            assert!(
                !why.contains("looked") && !why.contains("the notes"),
                "{why}"
            );
        }
        // Someone to ask: each is asked, and runs on a yes.
        let yes = Recording::answering(PromptAnswer::AllowOnce);
        for outcome in outcomes(&sandbox, &yes) {
            assert!(outcome.is_ok(), "{form}: {outcome:?}");
        }
        let asked: Vec<String> = yes.asks().into_iter().map(|(target, _)| target).collect();
        for target in ["ro__look", "notes", "notes.txt"] {
            assert!(
                asked.iter().any(|asked| asked == target),
                "{target}: {asked:?}"
            );
        }
        // On the command line: exit 3 and the one line.
        let (code, _, stderr) = sandbox.run(&["tools", "call", "ro__look", "{}"]);
        assert_eq!(code, 3, "{form}: {stderr}");
        assert!(stderr.contains(says), "{form}: {stderr}");
        let (_, stdout, _) = sandbox.run(&["permissions", "check", "Skill(notes)"]);
        assert!(stdout.contains("Skill(notes): ask"), "{stdout}");
    }
    // The checked-in file too: a typo there never widens access either.
    write_user_file(&sandbox, "{}");
    sandbox.write(
        ".earshot/settings.json",
        r#"{"permissions": {"deny": [],},}"#,
    );
    for outcome in outcomes(&sandbox, &NonInteractivePrompter) {
        let why = outcome.expect_err("a broken checked-in file");
        assert!(
            why.contains("settings.json") && why.contains("does not parse"),
            "{why}"
        );
    }
}

/// A user whose PreToolUse guard blocks the sentinel, written with `typo` applied to the
/// settings: the call is held (denied with no one to ask), the sentinel never runs, the notice
/// names the key; the unrelated extension still runs.
#[cfg(feature = "mcp")]
fn held_by(typo: impl FnOnce(&mut Value), names: &str) {
    let guard = handler("guard", &["exit", "2", "no"]);
    let mut extra = json!({
        "permissions": {"allow": ["Mcp(sentinel__touch)", "Extension(t__run)"]},
        "hooks": on("PreToolUse", "Mcp(sentinel__*)", vec![guard]),
    });
    typo(&mut extra);
    let (sandbox, sentinel) = project(extra);
    let host = sandbox.host();
    let notices = host.hook_notices().join("\n");
    assert!(notices.contains(names), "{names} in: {notices}");
    let why = denied(host.call("sentinel__touch", "{}", &NonInteractivePrompter));
    assert!(
        !sentinel.exists(),
        "{names}: the call behind a broken guard ran"
    );
    assert!(
        why.contains("needs approval") && why.contains("no one to ask") && !why.contains('\n'),
        "{names}: {why}"
    );
    drop(host);
    let (code, _, stderr) = sandbox.run(&["tools", "call", "sentinel__touch", "{}"]);
    assert_eq!(code, 3, "{stderr}");
    assert!(!sentinel.exists());
    assert!(stderr.contains(names), "{names} in: {stderr}");
}

#[cfg(feature = "mcp")]
#[test]
fn a_typo_in_the_users_own_guard_holds_the_call_instead_of_dropping_the_guard() {
    held_by(
        |s| s["hooks"]["PreToolUse"][0]["matcher"] = json!("Mpc(sentinel__*)"),
        "hooks.PreToolUse[0].matcher: unknown rule keyword \"Mpc\"",
    );
    held_by(
        |s| {
            let groups = s["hooks"]
                .as_object_mut()
                .unwrap()
                .remove("PreToolUse")
                .unwrap();
            s["hooks"]["PretoolUse"] = groups;
        },
        "hooks.PretoolUse: unknown event (did you mean \"PreToolUse\"?)",
    );
    held_by(
        |s| s["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = json!(0),
        "\"timeout\" must be a number of seconds, above 0",
    );
    held_by(
        |s| {
            let group = s["hooks"]["PreToolUse"][0].as_object_mut().unwrap();
            let handlers = group.remove("hooks").unwrap();
            group.insert("hook".into(), handlers);
        },
        "unknown key \"hook\" (did you mean \"hooks\"?)",
    );
    held_by(
        |s| {
            let hooks = s.as_object_mut().unwrap().remove("hooks").unwrap();
            s["Hooks"] = hooks;
        },
        "unknown key \"Hooks\" (did you mean \"hooks\"?)",
    );
    // A typo on an event that decides nothing holds nothing: the call runs, the notice says why
    // that hook never runs.
    let log = tempfile::NamedTempFile::new().unwrap();
    let (sandbox, sentinel) = project(json!({
        "permissions": {"allow": ["Mcp(sentinel__touch)"]},
        "hooks": {"PostToolUse": [{"matcher": "*", "hooks": [{"command": "true", "timeout": 0}]}],
                  "PreToolUse": [{"matcher": "*", "hooks": [handler("log", &["--log", log.path().to_str().unwrap(), "print", "{}"])]}]},
    }));
    let host = sandbox.host();
    host.call("sentinel__touch", "{}", &NonInteractivePrompter)
        .expect("an unrelated typo holds nothing");
    assert!(sentinel.exists());
    assert_eq!(logged(log.path()).len(), 1, "the readable guard still ran");
    assert!(host.hook_notices().join("\n").contains("it never runs"));
}

#[test]
fn a_repositorys_disable_all_hooks_switches_off_only_the_repositorys_hooks() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let logging = |name: &str| json!({"command": "python3", "args": [hook_py(), "--log", log.path(), "print", "{}"], "name": name});
    let (sandbox, _) = project(json!({
        "permissions": {"allow": ["Extension(t__run)"]},
        "hooks": on("PreToolUse", "*", vec![logging("mine")]),
    }));
    sandbox.write(
        ".earshot/settings.json",
        serde_json::to_string(&json!({
            "disableAllHooks": true,
            "hooks": on("PreToolUse", "*", vec![logging("theirs")]),
        }))
        .unwrap(),
    );
    let host = sandbox.host();
    host.call("t__run", "{}", &NonInteractivePrompter).unwrap();
    assert_eq!(
        logged(log.path()).len(),
        1,
        "the user's own hook still runs"
    );
    let notices = host.hook_notices().join("\n");
    assert!(
        notices.contains("disableAllHooks turns off the project's and the local file's hooks (1); your own hooks still run"),
        "{notices}"
    );
    // The local file cannot either (a download can ship it).
    drop(host);
    std::fs::remove_file(sandbox.project().join(".earshot/settings.json")).unwrap();
    sandbox.write(
        ".earshot/settings.local.json",
        r#"{"disableAllHooks": true}"#,
    );
    sandbox
        .host()
        .call("t__run", "{}", &NonInteractivePrompter)
        .unwrap();
    assert_eq!(logged(log.path()).len(), 2);
    // The user's own file does.
    let mut mine: Value = serde_json::from_str(
        &std::fs::read_to_string(sandbox.config().join("settings.json")).unwrap(),
    )
    .unwrap();
    mine["disableAllHooks"] = json!(true);
    sandbox.user_settings(mine);
    sandbox
        .host()
        .call("t__run", "{}", &NonInteractivePrompter)
        .unwrap();
    assert_eq!(logged(log.path()).len(), 2);
}

#[test]
fn includes_never_read_earshots_local_file_or_git_without_a_rule_naming_them() {
    let sandbox = Sandbox::new();
    sandbox.git(&["init", "-q"]);
    sandbox.write(".earshot/settings.local.json", r#"{"trust": {}}"#);
    sandbox.write(".earshot/settings.local.json.lock", "");
    sandbox.write("sub/.git/config", "[core]\n");
    sandbox.write("notes.txt", "the notes");
    std::os::unix::fs::symlink(".git", sandbox.project().join("gitlink")).unwrap();
    let includes = [
        ".earshot/settings.local.json",
        ".earshot/settings.local.json.lock",
        ".git/config",
        "sub/.git/config",
        "gitlink/config",
        "./.git/HEAD",
    ];
    for (index, path) in includes.iter().enumerate() {
        user_command(&sandbox, &format!("c{index}.md"), &format!("see @{path}\n"));
    }
    user_command(&sandbox, "plain.md", "see @notes.txt\n");
    let expand = |name: &str| {
        block_on(
            sandbox
                .host()
                .expand_command(name, "", &NonInteractivePrompter),
        )
        .map(|expansion| expansion.text)
        .map_err(|error| error.to_string())
    };
    for rules in [
        json!([]),
        json!([
            "Read(**)",
            "Read",
            "Read(.earshot)",
            "Read(./*)",
            "Read(*.json)"
        ]),
    ] {
        sandbox.user_settings(json!({"permissions": {"allow": rules}}));
        for (index, path) in includes.iter().enumerate() {
            let why = expand(&format!("c{index}")).expect_err(path);
            assert!(
                why.contains("was not included") && why.contains("needs approval"),
                "{path} under {rules}: {why}"
            );
        }
        // Everything else is as before.
        assert!(expand("plain").unwrap().contains("the notes"));
    }
    // A rule that names the file, or a .git folder, does allow it.
    sandbox.user_settings(json!({"permissions": {"allow": [
        "Read(.earshot/settings.local.json)", "Read(.git)", "Read(sub/.git/config)",
    ]}}));
    assert!(expand("c0").unwrap().contains("\"trust\""));
    assert!(expand("c1").is_err(), "the lock is not named");
    for (index, path) in includes.iter().enumerate().skip(2) {
        assert!(expand(&format!("c{index}")).is_ok(), "{path}");
    }
    // A deny still wins over it.
    sandbox.user_settings(json!({"permissions": {
        "allow": ["Read(.git)"], "deny": ["Read(.git/config)"]}}));
    assert!(expand("c2").unwrap_err().contains("denied by the rule"));
    // What `permissions check` says.
    sandbox.user_settings(json!({"permissions": {"allow": ["Read(**)"]}}));
    let (_, stdout, _) = sandbox.run(&["permissions", "check", "Read(.git/config)"]);
    assert!(stdout.contains("Read(.git/config): ask"), "{stdout}");
}

#[test]
fn hooks_untrust_counts_at_the_next_run_of_a_session_already_open() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let (sandbox, _) = project(json!({"permissions": {"allow": ["Extension(t__run)"]}}));
    std::fs::create_dir_all(sandbox.project().join(".earshot/hooks")).unwrap();
    std::fs::copy(hook_py(), sandbox.project().join(".earshot/hooks/hook.py")).unwrap();
    sandbox.write(
        ".earshot/settings.json",
        serde_json::to_string(&json!({"hooks": on("PreToolUse", "*", vec![json!({
            "command": "python3", "name": "guard",
            "args": [".earshot/hooks/hook.py", "--log", log.path(), "print", "{}"],
        })])}))
        .unwrap(),
    );
    let (code, _, stderr) = sandbox.run(&["hooks", "trust", "guard", "--partial"]);
    assert_eq!(code, 0, "{stderr}");
    let host = sandbox.host();
    host.call("t__run", "{}", &NonInteractivePrompter).unwrap();
    assert_eq!(logged(log.path()).len(), 1, "the trusted hook ran");
    // Untrusted from outside while the session stays open.
    let (code, _, stderr) = sandbox.run(&["hooks", "untrust", "guard"]);
    assert_eq!(code, 0, "{stderr}");
    let why = denied(host.call("t__run", "{}", &NonInteractivePrompter));
    assert_eq!(logged(log.path()).len(), 1, "an untrusted hook ran");
    assert!(
        why.contains("hook \"guard\" (project, PreToolUse) no longer runs: not trusted"),
        "{why}"
    );
    // Trusted again: it runs again, in the same session.
    let (code, _, stderr) = sandbox.run(&["hooks", "trust", "guard", "--partial"]);
    assert_eq!(code, 0, "{stderr}");
    host.call("t__run", "{}", &NonInteractivePrompter).unwrap();
    assert_eq!(logged(log.path()).len(), 2);
}
