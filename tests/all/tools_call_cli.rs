//! `earshot tools call` as a person uses it (issue 34): an MCP tool called by its exact name past
//! 25 MCP tools (through the gate and the hooks, as always), "no such tool" with its own exit
//! code, the input from standard input or a file, and only the server the call needs started.

// Its MCP tests are compiled out without the MCP client; what only they use goes with them.
#![cfg_attr(not(feature = "mcp"), allow(dead_code, unused_imports))]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};

use crate::common::{Sandbox, fixture_server, mcp_parts};
use crate::hooks::{handler, on};

/// A stdio entry running the npm server `bin` with `args`, touching `marker` first (so a test
/// can tell it was started).
fn marked(bin: &str, args: &[&str], marker: &Path) -> Value {
    let bin = mcp_parts().join("node_modules/.bin").join(bin);
    let mut all = vec![
        "-c".to_string(),
        "touch \"$0\"; exec \"$@\"".to_string(),
        marker.display().to_string(),
        bin.display().to_string(),
    ];
    all.extend(args.iter().map(|arg| arg.to_string()));
    json!({"command": "sh", "args": all})
}

/// Three ordinary servers (server-everything, memory, filesystem: well past 25 tools), each
/// leaving a marker when it starts, plus `extra` settings.
#[cfg_attr(not(feature = "js"), allow(dead_code))]
struct ThreeServers {
    sandbox: Sandbox,
    markers: [PathBuf; 3],
}

impl ThreeServers {
    fn new(extra: Value) -> ThreeServers {
        let sandbox = Sandbox::new();
        let dir = sandbox.dir.path();
        let markers = [
            dir.join("started-everything"),
            dir.join("started-memory"),
            dir.join("started-files"),
        ];
        let mut memory = marked("mcp-server-memory", &[], &markers[1]);
        memory["env"] = json!({"MEMORY_FILE_PATH": dir.join("memory.jsonl").display().to_string()});
        let project = sandbox.project().display().to_string();
        let mut settings = json!({"mcpServers": {
            "everything": marked("mcp-server-everything", &["stdio"], &markers[0]),
            "memory": memory,
            "files": marked("mcp-server-filesystem", &[&project], &markers[2]),
        }});
        settings
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        sandbox.user_settings(settings);
        ThreeServers { sandbox, markers }
    }

    /// Which servers started since the last look (their markers, removed).
    #[cfg_attr(not(feature = "js"), allow(dead_code))]
    fn started(&self) -> Vec<&'static str> {
        let names = ["everything", "memory", "files"];
        let mut started = Vec::new();
        for (marker, name) in self.markers.iter().zip(names) {
            if marker.exists() {
                std::fs::remove_file(marker).unwrap();
                started.push(name);
            }
        }
        started
    }
}

/// A user extension `sizes` whose read-only tool `measure` answers the length of `text`.
#[cfg_attr(not(feature = "js"), allow(dead_code))]
fn write_sizes_extension(sandbox: &Sandbox) {
    sandbox.write_user_extension(
        "sizes.ts",
        "export default { tools: [{ name: 'measure', description: 'Measures text',\n\
           inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },\n\
           readOnly: true,\n\
           execute(input: { text: string }): string { return 'length ' + input.text.length; } }] };\n",
    );
}

/// Runs `earshot ARGS` with `stdin` on its standard input.
#[cfg_attr(not(feature = "js"), allow(dead_code))]
fn run_with_stdin(sandbox: &Sandbox, args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let mut child = sandbox
        .earshot()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[cfg(feature = "mcp")]
#[test]
fn past_25_tools_a_tool_is_called_by_its_exact_name_through_the_gate() {
    let servers = ThreeServers::new(json!({"permissions": {
        "allow": ["Mcp(everything__echo)", "Mcp(everything__get-sum)"],
        "deny": ["Mcp(everything__get-sum)"],
    }}));
    let sandbox = &servers.sandbox;

    // What a model is shown is tool_search; `tools list` also names what is behind it.
    let (code, stdout, stderr) = sandbox.run(&["tools", "list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    let names = |key: &str| -> Vec<String> {
        listed[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        names("tools").contains(&"tool_search".to_string()),
        "{listed}"
    );
    assert!(!names("tools").contains(&"everything__echo".to_string()));
    let behind = names("behind_tool_search");
    assert!(behind.len() > 25, "{behind:?}");
    assert!(
        behind.contains(&"everything__echo".to_string())
            && behind.contains(&"memory__read_graph".to_string())
    );
    let (code, stdout, stderr) = sandbox.run(&["tools", "list"]);
    assert_eq!(code, 0, "{stderr}");
    let echo_row = stdout
        .lines()
        .find(|line| line.starts_with("everything__echo "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(echo_row.contains("behind tool_search"), "{echo_row}");
    assert!(
        stderr.contains("`earshot tools call NAME` calls one by its name"),
        "{stderr}"
    );

    // Allowed by a rule: it runs, with no search first.
    let (code, stdout, stderr) = sandbox.run(&[
        "tools",
        "call",
        "everything__echo",
        r#"{"message":"called by name"}"#,
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("called by name"), "{stdout}");

    // Deny beats allow: exit 3, naming the rule, never "not listed".
    let (code, _, stderr) =
        sandbox.run(&["tools", "call", "everything__get-sum", r#"{"a":1,"b":2}"#]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("Mcp(everything__get-sum)"), "{stderr}");
    assert!(!stderr.contains("not listed"), "{stderr}");

    // No rule and no one to ask: denied by the gate, as any call.
    let (code, _, stderr) = sandbox.run(&["tools", "call", "memory__read_graph", "{}"]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("Mcp(memory__read_graph)"), "{stderr}");

    // No such tool: exit 5 and one line, on a configured server and on none.
    for name in ["everything__no_such_tool", "nobody__echo"] {
        let (code, _, stderr) = sandbox.run(&["tools", "call", name, "{}"]);
        assert_eq!(code, 5, "{stderr}");
        assert_eq!(
            stderr.trim_end(),
            format!(
                "error: no tool named \"{name}\"; `earshot tools list` shows what is available"
            ),
        );
    }
}

#[cfg(feature = "mcp")]
#[test]
fn hooks_still_run_around_a_call_by_name_past_25_tools() {
    let servers = ThreeServers::new(json!({
        "permissions": {"allow": ["Mcp(everything__echo)"]},
        "hooks": on("PreToolUse", "Mcp(everything__echo)", vec![handler("guard", &["exit", "2", "not today"])]),
    }));
    let (code, stdout, stderr) =
        servers
            .sandbox
            .run(&["tools", "call", "everything__echo", r#"{"message":"hi"}"#]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(
        stderr.contains("everything__echo was blocked by hook \"guard\"")
            && stderr.contains("not today"),
        "{stderr}"
    );
}

// Its tool is a TypeScript extension.
#[cfg(feature = "mcp")]
#[cfg(feature = "js")]
#[test]
fn a_call_starts_only_the_server_it_names_or_none() {
    let servers = ThreeServers::new(json!({"permissions": {"allow": ["Mcp(everything__echo)"]}}));
    let sandbox = &servers.sandbox;
    write_sizes_extension(sandbox);
    // A server that would fail to start: never started by a call that does not name it.
    let broken_marker = sandbox.dir.path().join("started-broken");
    let mut settings: Value = serde_json::from_str(
        &std::fs::read_to_string(sandbox.config().join("settings.json")).unwrap(),
    )
    .unwrap();
    settings["mcpServers"]["broken"] = json!({"command": "sh", "args": ["-c", "touch \"$0\"; exit 1", broken_marker.display().to_string()]});
    sandbox.user_settings(settings);

    let (code, stdout, stderr) =
        sandbox.run(&["tools", "call", "everything__echo", r#"{"message":"lazy"}"#]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("lazy"), "{stdout}");
    assert_eq!(servers.started(), ["everything"]);
    assert!(
        !broken_marker.exists() && !stderr.contains("broken"),
        "{stderr}"
    );

    // An extension's tool: no server at all.
    let (code, stdout, stderr) =
        sandbox.run(&["tools", "call", "sizes__measure", r#"{"text":"four"}"#]);
    assert_eq!((code, stdout.trim()), (0, "length 4"), "{stderr}");
    assert!(servers.started().is_empty());
    assert!(!broken_marker.exists());

    // An unknown name on no configured server: none either.
    let (code, _, _) = sandbox.run(&["tools", "call", "ghost__x", "{}"]);
    assert_eq!(code, 5);
    assert!(servers.started().is_empty() && !broken_marker.exists());

    // The named server failing to start is said as such (not "no such tool").
    let (code, _, stderr) = sandbox.run(&["tools", "call", "broken__x", "{}"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("server \"broken\" is not connected, so broken__x cannot be called"),
        "{stderr}"
    );
    assert!(servers.started().is_empty());
    std::fs::remove_file(&broken_marker).unwrap();

    // mcp prompt and mcp read start only the server they name.
    let (code, stdout, stderr) = sandbox.run(&["mcp", "prompt", "everything", "simple-prompt"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("simple prompt"), "{stdout}");
    assert_eq!(servers.started(), ["everything"]);
    let (code, stdout, stderr) = sandbox.run(&[
        "mcp",
        "read",
        "everything",
        "demo://resource/dynamic/text/3",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Resource 3"), "{stdout}");
    assert_eq!(servers.started(), ["everything"]);
    assert!(!broken_marker.exists());

    // An unknown server: one line at once, nothing started.
    for args in [
        &["mcp", "prompt", "ghost", "p"][..],
        &["mcp", "read", "ghost", "demo://x"],
        &["mcp", "get", "ghost"],
    ] {
        let (code, _, stderr) = sandbox.run(args);
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert_eq!(
            stderr.trim_end(),
            "error: no MCP server named \"ghost\" in any settings file; `earshot mcp list` shows what is configured",
            "{args:?}"
        );
    }
    assert!(servers.started().is_empty() && !broken_marker.exists());
}

#[cfg(feature = "mcp")]
#[test]
fn a_project_server_without_trust_still_refuses_a_call_by_name() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/settings.json",
        serde_json::to_string(
            &json!({"mcpServers": {"repo": fixture_server("thirty_tools.py", &["--count", "2"])}}),
        )
        .unwrap(),
    );
    let (code, _, stderr) = sandbox.run(&["tools", "call", "repo__get_weather_forecast", "{}"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("earshot mcp trust repo"), "{stderr}");
}

// Its tool is a TypeScript extension.
#[cfg(feature = "js")]
#[test]
fn the_input_comes_from_standard_input_or_a_file() {
    let sandbox = Sandbox::new();
    write_sizes_extension(&sandbox);

    // Past what one argument can carry on Linux (128 KiB).
    let text = "x".repeat(200 * 1024);
    let input = json!({ "text": text }).to_string();
    let (code, stdout, stderr) = run_with_stdin(
        &sandbox,
        &["tools", "call", "sizes__measure", "-"],
        input.as_bytes(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), format!("length {}", 200 * 1024));

    let file = sandbox.dir.path().join("input.json");
    std::fs::write(&file, r#"{"text": "from a file"}"#).unwrap();
    let argument = format!("@{}", file.display());
    let (code, stdout, stderr) = sandbox.run(&["tools", "call", "sizes__measure", &argument]);
    assert_eq!((code, stdout.trim()), (0, "length 11"), "{stderr}");

    // A missing file, a file that is not JSON, standard input that is not JSON: one line each.
    let missing = sandbox.dir.path().join("missing.json");
    let (code, _, stderr) = sandbox.run(&[
        "tools",
        "call",
        "sizes__measure",
        &format!("@{}", missing.display()),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "error: cannot read input file {}: no such file",
            missing.display()
        )
    );
    std::fs::write(&file, "text: not json").unwrap();
    let (code, _, stderr) = sandbox.run(&["tools", "call", "sizes__measure", &argument]);
    assert_eq!(code, 4, "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "error: input file {} is not JSON: ",
            file.display()
        )),
        "{stderr}"
    );
    let (code, _, stderr) = run_with_stdin(
        &sandbox,
        &["tools", "call", "sizes__measure", "-"],
        b"{oops",
    );
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.starts_with("error: standard input is not JSON: "),
        "{stderr}"
    );

    // Over the cap: refused, saying the cap.
    let big = vec![b' '; (16 << 20) + 1];
    let (code, _, stderr) =
        run_with_stdin(&sandbox, &["tools", "call", "sizes__measure", "-"], &big);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("over the 16 MiB"), "{stderr}");
}

#[test]
fn the_exit_codes_in_help_name_no_such_tool() {
    let sandbox = Sandbox::new();
    let (code, stdout, _) = sandbox.run(&["--help"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("5  tools call: no tool has that name"),
        "{stdout}"
    );
    let (_, stdout, _) = sandbox.run(&["tools", "call", "--help"]);
    assert!(
        stdout.contains("JSON|-|@FILE") && stdout.contains("16 MiB"),
        "{stdout}"
    );
}

#[test]
fn hooks_run_matches_read_mcp_resource_as_a_session_does() {
    let (sandbox, _) = crate::hooks::project(json!({
        "hooks": on("PreToolUse", "Mcp(sentinel__resources)", vec![handler("guard", &["exit", "2", "no reading"])]),
    }));
    let input = sandbox.dir.path().join("input.json");
    std::fs::write(
        &input,
        json!({"tool_name": "read_mcp_resource", "tool_input": {"server": "sentinel", "uri": "x://y"}})
            .to_string(),
    )
    .unwrap();
    let (code, stdout, stderr) = sandbox.run(&[
        "hooks",
        "run",
        "PreToolUse",
        "--input",
        input.to_str().unwrap(),
    ]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(
        stdout.contains("blocked by \"guard\": no reading"),
        "{stdout}"
    );
    // Another server's resources are not that hook's.
    std::fs::write(
        &input,
        json!({"tool_name": "read_mcp_resource", "tool_input": {"server": "other", "uri": "x://y"}})
            .to_string(),
    )
    .unwrap();
    let (code, stdout, stderr) = sandbox.run(&[
        "hooks",
        "run",
        "PreToolUse",
        "--input",
        input.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}
