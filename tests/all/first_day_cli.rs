//! The frictions of a first day, as a user meets them at the command line: `mcp add` checks
//! before it writes and refuses a name it would overwrite, says how to run a project's own
//! script, deny and ask rules can be committed with `-s project` (never allow), writing a rule
//! outside any project creates nothing, `permissions check` shows the read-only verdict,
//! `trust` takes several names, `mcp get` has no empty header, a server's read-only claim is shown
//! apart from the verdict, and `npx` without `-y` is named when a server never answers.

// Its MCP tests are compiled out without the MCP client; what only they use goes with them.
#![cfg_attr(not(feature = "mcp"), allow(dead_code, unused_imports))]

use serde_json::json;

use crate::common::Sandbox;

/// The tool called `name` in a `{"tools": [...]}` answer (`tools list --json`, `tool_search`).
fn tool_named<'a>(answer: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    answer["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|tool| tool["name"] == name))
        .unwrap_or_else(|| panic!("no {name} in {answer}"))
}

#[test]
fn mcp_add_checks_before_writing_and_refuses_a_name_it_would_overwrite() {
    let sandbox = Sandbox::new();
    let local = ".earshot/settings.local.json";
    let (code, _, stderr) = sandbox.run(&[
        "mcp",
        "add-json",
        "x",
        r#"{"type": "sse", "url": "http://127.0.0.1:9/sse"}"#,
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("server \"x\" was not added: the sse transport is not supported")
            && stderr.contains("nothing was written"),
        "{stderr}"
    );
    assert!(
        !sandbox.project().join(local).exists(),
        "a refused entry was written"
    );
    let (code, _, stderr) = sandbox.run(&["mcp", "list"]);
    assert_eq!(code, 0);
    assert!(
        !stderr.contains("\"x\""),
        "every later command warns: {stderr}"
    );

    let (code, _, stderr) = sandbox.run(&["mcp", "add", "n", "--", "python3", "a.py"]);
    assert_eq!(code, 0, "{stderr}");
    let before = sandbox.read(local);
    let (code, _, stderr) = sandbox.run(&["mcp", "add", "n", "--", "python3", "b.py"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("already defines a server \"n\"; nothing was written"),
        "{stderr}"
    );
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(sandbox.read(local), before, "the first entry is intact");
    let (code, _, stderr) = sandbox.run(&["mcp", "add", "n", "--force", "--", "python3", "b.py"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(sandbox.read(local).contains("b.py"));
}

#[test]
fn a_project_script_given_to_mcp_add_gets_the_cwd_form() {
    let sandbox = Sandbox::new();
    sandbox.write("tools/notes_server.py", "");
    let (code, stdout, stderr) = sandbox.run(&[
        "mcp",
        "add",
        "notes",
        "--",
        "python3",
        "tools/notes_server.py",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let said = format!("{stdout}{stderr}");
    assert!(
        said.contains("\"tools/notes_server.py\" is in the project")
            && said.contains("--cwd '${EARSHOT_PROJECT_DIR}'"),
        "{said}"
    );
}

#[test]
fn deny_and_ask_rules_can_be_committed_but_an_allow_rule_cannot() {
    let sandbox = Sandbox::new();
    let (code, _, stderr) = sandbox.run(&["permissions", "deny", "Mcp(x__y)", "-s", "project"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = sandbox.run(&["permissions", "ask", "Mcp(x__z)", "-s", "project"]);
    assert_eq!(code, 0, "{stderr}");
    let committed: serde_json::Value =
        serde_json::from_str(&sandbox.read(".earshot/settings.json")).unwrap();
    assert_eq!(committed["permissions"]["deny"], json!(["Mcp(x__y)"]));
    assert_eq!(committed["permissions"]["ask"], json!(["Mcp(x__z)"]));
    let (code, _, stderr) = sandbox.run(&["permissions", "allow", "Mcp(x__y)", "-s", "project"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("a repository cannot grant permissions"),
        "{stderr}"
    );
    assert!(!sandbox.read(".earshot/settings.json").contains("allow"));
    let (_, stdout, _) = sandbox.run(&["permissions", "check", "Mcp(x__y)"]);
    assert!(
        stdout.contains("deny"),
        "the committed rule counts: {stdout}"
    );
    assert!(
        !sandbox
            .project()
            .join(".earshot/settings.json.lock")
            .exists(),
        "no lock file for git to commit"
    );
}

#[test]
fn writing_a_rule_outside_any_project_creates_nothing() {
    let sandbox = Sandbox::new();
    let outside = sandbox.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_earshot"))
        .args(["permissions", "allow", "Mcp(a__b)"])
        .current_dir(&outside)
        .env("EARSHOT_CONFIG_DIR", sandbox.config())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("is not inside a project") && stderr.contains("--project"),
        "{stderr}"
    );
    assert!(
        !outside.join(".earshot").exists(),
        "a .earshot/ was created"
    );
}

// Its tool is a TypeScript extension.
#[cfg(feature = "js")]
#[test]
fn permissions_check_shows_the_read_only_verdict_and_trust_takes_several_names() {
    let sandbox = Sandbox::new();
    let source = "export default { tools: [{ name: 'look', description: 'Looks.', inputSchema: { type: 'object' }, readOnly: true, execute: () => 'seen' }] };\n";
    sandbox.write_user_extension("ro.ts", source);
    let (code, stdout, stderr) = sandbox.run(&["permissions", "check", "ro__look"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("allow because the tool declares itself read-only")
            && stdout.contains("runs without asking"),
        "{stdout}"
    );

    sandbox.write(".earshot/extensions/pa.ts", source);
    sandbox.write(".earshot/extensions/pb.ts", source);
    let (code, stdout, stderr) = sandbox.run(&["extensions", "trust", "pa", "pb"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("trusted extension \"pa\"") && stdout.contains("trusted extension \"pb\""),
        "{stdout}"
    );
    let (code, stdout, _) = sandbox.run(&["tools", "call", "pb__look", "{}"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("seen"));
}

// Its tool is a TypeScript extension.
#[cfg(feature = "js")]
#[test]
fn with_allow_rules_suspended_by_a_typo_the_denial_names_the_file_to_fix() {
    let sandbox = Sandbox::new();
    sandbox.write_user_extension(
        "wr.ts",
        "export default { tools: [{ name: 'w', description: 'Writes.', inputSchema: { type: 'object' }, execute: () => 'done' }] };\n",
    );
    sandbox.user_settings(json!({
        "permisions": {"deny": ["Mcp(x__y)"]},
        "permissions": {"allow": ["Extension(wr__w)"]},
    }));
    let (code, _, stderr) = sandbox.run(&["tools", "call", "wr__w", "{}"]);
    assert_eq!(code, 3, "{stderr}");
    let settings = sandbox.config().join("settings.json");
    let denial = stderr
        .lines()
        .find(|line| line.starts_with("error:"))
        .unwrap_or_default();
    assert!(
        denial.contains("allow rules are suspended")
            && denial.contains(&settings.display().to_string())
            && denial.contains("fix that file first"),
        "{stderr}"
    );
    assert!(
        !denial.contains("run `earshot permissions allow"),
        "a command that cannot help: {denial}"
    );
}

// Its tool is a TypeScript extension.
#[cfg(feature = "mcp")]
#[cfg(feature = "js")]
#[test]
fn hints_name_the_project_through_mcp_serve_and_the_cwd_form_when_a_script_does_not_start() {
    let sandbox = Sandbox::new();
    sandbox.write_user_extension(
        "wr.ts",
        "export default { tools: [{ name: 'w', description: 'Writes.', inputSchema: { type: 'object' }, execute: () => 'done' }] };\n",
    );
    let output = std::process::Command::new(crate::common::mcp_python())
        .arg(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../fixtures/mcp/clients/serve_client.py"),
        )
        .arg(env!("CARGO_BIN_EXE_earshot"))
        .arg(sandbox.project())
        .arg(sandbox.config())
        .arg(json!([{"op": "call", "name": "wr__w", "args": {}}]).to_string())
        .arg("--no-elicitation")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let project = sandbox.project().display().to_string();
    assert!(
        stdout.contains(&format!(
            "earshot permissions allow 'Extension(wr__w)' --project '{project}'"
        )),
        "{stdout}"
    );

    sandbox.write("tools/notes_server.py", "");
    let (code, _, stderr) = sandbox.run(&[
        "mcp",
        "add",
        "notes",
        "--",
        "python3",
        "tools/notes_server.py",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (_, stdout, stderr) = sandbox.run(&["mcp", "list"]);
    let said = format!("{stdout}{stderr}");
    let failed = said
        .lines()
        .find(|line| line.contains("server \"notes\""))
        .unwrap_or_default();
    assert!(
        failed.contains("can't open file")
            && failed.contains(
                "\"tools/notes_server.py\" is in the project, but server \"notes\" starts in"
            ),
        "{said}"
    );
}

#[cfg(feature = "mcp")]
#[test]
fn mcp_get_starts_with_the_servers_name_and_a_claimed_read_only_hint_is_shown_apart() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({
        "mcpServers": {"clock": crate::common::fixture_server("clock.py", &[])}
    }));
    let (code, stdout, stderr) = sandbox.run(&["mcp", "get", "clock"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.lines().next(), Some("clock"), "{stdout}");
    assert!(
        stdout.contains("echo  claims read-only (not believed)"),
        "{stdout}"
    );
    // An MCP server's readOnlyHint is never believed: --json says so in its own field, and the
    // tool is not read-only.
    let (code, stdout, stderr) = sandbox.run(&["tools", "list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let listed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let echo = tool_named(&listed, "clock__echo");
    assert_eq!(
        (&echo["read_only"], &echo["claims_read_only"]),
        (&json!(false), &json!(true))
    );
}

#[cfg(feature = "mcp")]
/// `npx` without `-y` asks "Ok to proceed?" before installing, and no one answers: the start
/// failure says so. A stand-in `npx` that asks and waits, as the real one does offline.
#[test]
fn a_server_run_by_npx_without_yes_that_never_answers_is_explained() {
    let sandbox = Sandbox::new();
    let npx = sandbox.dir.path().join("bin/npx");
    std::fs::create_dir_all(npx.parent().unwrap()).unwrap();
    std::fs::write(
        &npx,
        "#!/bin/sh\nprintf 'Need to install the following packages:\\n  some-server\\nOk to proceed? (y) ' >&2\nsleep 30\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&npx, std::fs::Permissions::from_mode(0o755)).unwrap();
    let npx = npx.display().to_string();
    sandbox.user_settings(json!({
        "mcp": {"startupTimeoutSeconds": 1},
        "mcpServers": {
            "asks": {"command": npx, "args": ["some-server"]},
            "yes": {"command": npx, "args": ["-y", "some-server"]}
        }
    }));
    let (code, stdout, stderr) = sandbox.run(&["mcp", "list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let listed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let reason = |name: &str| {
        listed["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|server| server["name"] == name)
            .map(|server| server.to_string())
            .unwrap_or_default()
    };
    let asks = reason("asks");
    assert!(
        asks.contains("did not answer initialize")
            && asks.contains("`npx` without `-y` waits on a question")
            && asks.contains("add `-y` to its args"),
        "{asks}"
    );
    let yes = reason("yes");
    assert!(
        yes.contains("did not answer initialize") && !yes.contains("without `-y`"),
        "{yes}"
    );
}

#[cfg(feature = "mcp")]
/// `tool_search` shows the model an MCP tool's read-only claim apart from the verdict, as `tools
/// list --json` does; and a denial's hint names the project exactly when the command would
/// otherwise run for another folder.
#[test]
fn tool_search_shows_the_claim_apart_and_a_denial_names_the_project_only_from_outside_it() {
    let sandbox = Sandbox::new();
    // Past 25 MCP tools, the model finds the rest through tool_search.
    sandbox.user_settings(json!({
        "mcpServers": {
            "clock": crate::common::fixture_server("clock.py", &[]),
            "many": crate::common::fixture_server("thirty_tools.py", &["--count", "30"])
        }
    }));
    let (code, stdout, stderr) =
        sandbox.run(&["tools", "call", "tool_search", r#"{"query": "echo text"}"#]);
    assert_eq!(code, 0, "{stderr}");
    let found: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let echo = tool_named(&found, "clock__echo");
    assert_eq!(
        (&echo["read_only"], &echo["claims_read_only"]),
        (&json!(false), &json!(true))
    );

    let call = |dir: &std::path::Path| {
        let output = sandbox
            .earshot()
            .current_dir(dir)
            .args(["tools", "call", "clock__echo", r#"{"text": "x"}"#])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(3));
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let outside = call(sandbox.dir.path());
    assert!(
        outside.contains(&format!(
            "earshot permissions allow 'Mcp(clock__echo)' --project '{}'",
            sandbox.project().display()
        )),
        "{outside}"
    );
    let inside = call(&sandbox.project());
    assert!(
        inside.contains("earshot permissions allow 'Mcp(clock__echo)'`"),
        "{inside}"
    );
}

/// `mcp add -s project` refuses, before writing, a name the user's own settings already use
/// (the project's entry would be ignored), and an empty command.
#[test]
fn mcp_add_refuses_a_project_entry_shadowed_by_the_users_own_and_an_empty_command() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({
        "mcpServers": {"notes": {"command": "python3", "args": ["notes.py"]}}
    }));
    let (code, _, stderr) = sandbox.run(&[
        "mcp", "add", "-s", "project", "notes", "--", "python3", "other.py",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("define a server \"notes\", which is the one this project uses")
            && stderr.contains("nothing was written"),
        "{stderr}"
    );
    assert!(!sandbox.project().join(".earshot/settings.json").exists());
    let (code, _, stderr) = sandbox.run(&["mcp", "add-json", "blank", r#"{"command": "  "}"#]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("its command is empty"), "{stderr}");
    let (code, _, stderr) = sandbox.run(&["mcp", "add", "bad__name", "--", "python3", "x.py"]);
    assert_eq!(code, 2, "{stderr}");
}

#[cfg(feature = "mcp")]
/// A misspelt `extensions.env`, or one that is not a list, is reported (extensions see less,
/// never more), and a `mcp add -s local` record names what changed in the script it runs.
#[test]
fn extensions_env_mistakes_are_reported_and_a_written_record_names_what_changed() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"extensions": {"Env": ["HOME"]}}));
    let (_, _, stderr) = sandbox.run(&["tools", "list"]);
    assert!(
        stderr.contains("unknown key \"extensions.Env\" (did you mean \"env\"?)"),
        "{stderr}"
    );
    sandbox.user_settings(json!({"extensions": {"env": "HOME"}}));
    let (_, _, stderr) = sandbox.run(&["tools", "list"]);
    assert!(
        stderr.contains("extensions see no environment variables"),
        "{stderr}"
    );

    sandbox.user_settings(json!({}));
    sandbox.write(
        "tools/notes_server.py",
        std::fs::read(crate::common::mcp_fixture("env_dump.py")).unwrap(),
    );
    let (code, _, stderr) = sandbox.run(&[
        "mcp",
        "add",
        "--cwd",
        "${EARSHOT_PROJECT_DIR}",
        "notes",
        "--",
        "python3",
        "tools/notes_server.py",
    ]);
    assert_eq!(code, 0, "{stderr}");
    sandbox.write(
        "tools/notes_server.py",
        sandbox.read("tools/notes_server.py") + "\n# changed\n",
    );
    let (_, stdout, _) = sandbox.run(&["mcp", "list"]);
    assert!(
        stdout.contains("changed since you trusted it (`tools/notes_server.py`)"),
        "{stdout}"
    );
}
