//! `earshot mcp serve` against an independent client (the PyPI `mcp` package's ClientSession,
//! fixtures/mcp/clients/serve_client.py) and a hostile one written here: what it lists, calls of
//! every kind, the gate with and without elicitation, tool_search and list_changed, cancellation,
//! shutdown of the servers behind, and garbage that costs nothing but its own requests.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Sandbox, fixture_server, hello_wasm, mcp_fixture, mcp_python};

/// A project with one extension of each kind (jira: read-only; writer: not), the hello
/// component, and MCP servers behind (`clock`, whose echo claims read-only).
fn served_sandbox(extra_servers: Value, allow: &[&str], deny: &[&str]) -> Sandbox {
    let sandbox = Sandbox::new();
    let extensions = sandbox.config().join("extensions");
    std::fs::create_dir_all(&extensions).unwrap();
    for file in ["jira.ts", "writer.ts"] {
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../fixtures/extensions")
                .join(file),
            extensions.join(file),
        )
        .unwrap();
    }
    let plugins = sandbox.config().join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(hello_wasm(), plugins.join("hello.wasm")).unwrap();
    let mut servers = json!({"clock": fixture_server("clock.py", &[])});
    if let (Some(servers), Some(extra)) = (servers.as_object_mut(), extra_servers.as_object()) {
        servers.extend(extra.clone());
    }
    sandbox.user_settings(json!({
        "mcpServers": servers,
        "permissions": {"allow": allow, "deny": deny},
    }));
    sandbox
}

/// Runs the Python client's `steps` against `earshot mcp serve` on `sandbox`; one JSON value per step.
fn client(sandbox: &Sandbox, steps: Value, elicitation: bool) -> Vec<Value> {
    let mut command = Command::new(mcp_python());
    command
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/mcp/clients/serve_client.py"))
        .arg(env!("CARGO_BIN_EXE_earshot"))
        .arg(sandbox.project())
        .arg(sandbox.config())
        .arg(steps.to_string());
    if !elicitation {
        command.arg("--no-elicitation");
    }
    let output = command.output().expect("the client runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "client failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

fn text(step: &Value) -> &str {
    step["text"].as_str().unwrap_or_default()
}

// Its tool is a TypeScript extension.
#[cfg(feature = "js")]
#[test]
fn it_lists_what_a_model_is_shown_and_runs_a_tool_of_every_kind() {
    let sandbox = served_sandbox(json!({}), &["Mcp(clock__echo)"], &[]);
    let out = client(
        &sandbox,
        json!([
            {"op": "list"},
            {"op": "call", "name": "jira__ticket", "args": {"key": "OK-1"}},
            {"op": "call", "name": "hello__greet", "args": {"name": "Ada"}},
            {"op": "call", "name": "clock__echo", "args": {"text": "from behind"}},
        ]),
        false,
    );
    let tools = &out[0]["tools"];
    // Read-only is shown where earshot honours it, and never for an MCP tool behind it, however
    // it claims to be.
    assert_eq!(tools["jira__ticket"], json!(true), "{tools}");
    assert_eq!(tools["hello__greet"], json!(true), "{tools}");
    assert_eq!(tools["writer__note"], Value::Null, "{tools}");
    assert_eq!(tools["clock__echo"], Value::Null, "{tools}");
    assert!(tools.get("clock__nap").is_some(), "{tools}");
    for (step, expected) in [(1, "OK-1"), (2, "Hello, Ada!"), (3, "from behind")] {
        assert_eq!(out[step]["is_error"], json!(false), "{}", out[step]);
        assert!(text(&out[step]).contains(expected), "{}", out[step]);
    }
}

#[test]
fn denied_and_invalid_calls_are_error_results_naming_the_rule() {
    let sandbox = served_sandbox(json!({}), &[], &["Mcp(clock__nap)"]);
    let out = client(
        &sandbox,
        json!([
            {"op": "call", "name": "clock__nap", "args": {"ms": 1}},
            {"op": "call", "name": "clock__echo", "args": {"text": "x"}},
            {"op": "call", "name": "hello__greet", "args": {"name": 42}},
            {"op": "call", "name": "no__such_tool", "args": {}},
            {"op": "list"},
        ]),
        false,
    );
    assert_eq!(out[0]["is_error"], json!(true));
    assert!(
        text(&out[0]).contains("clock__nap is denied by the rule \"Mcp(clock__nap)\""),
        "{}",
        out[0]
    );
    // No elicitation: an ask is denied with the rule to add, and nothing was asked.
    assert_eq!(out[1]["is_error"], json!(true));
    assert!(
        text(&out[1]).contains("earshot permissions allow 'Mcp(clock__echo)'"),
        "{}",
        out[1]
    );
    assert!(
        text(&out[2]).contains("does not match its schema"),
        "{}",
        out[2]
    );
    assert!(text(&out[3]).contains("no tool named"), "{}", out[3]);
    assert!(
        out[4]["tools"].get("hello__greet").is_some(),
        "still serving"
    );
}

// Its tool is a TypeScript extension.
#[cfg(feature = "js")]
#[test]
fn an_ask_goes_to_the_client_and_only_an_explicit_allow_runs_the_call() {
    let sandbox = served_sandbox(json!({}), &[], &[]);
    let call = |answer: &str| json!({"op": "call", "name": "writer__note", "args": {"text": "x"}, "answer": answer});
    let out = client(
        &sandbox,
        json!([
            call("deny"),
            call("decline"),
            call("cancel"),
            call("bogus"),
            call("allow_once"),
            call("allow_always"),
            call("deny"),
        ]),
        true,
    );
    for step in &out[..4] {
        assert_eq!(step["is_error"], json!(true), "{step}");
        assert!(text(step).contains("writer__note was"), "{step}");
        assert_eq!(step["asked"].as_array().unwrap().len(), 1, "{step}");
    }
    let asked = out[0]["asked"][0].as_str().unwrap();
    assert!(
        asked.contains("earshot wants to run writer__note")
            && asked.contains("rule: Extension(writer__note)"),
        "{asked}"
    );
    assert_eq!(out[4]["is_error"], json!(false), "{}", out[4]);
    assert_eq!(out[5]["is_error"], json!(false), "{}", out[5]);
    // "Always" holds: the last call is not asked, whatever the client would answer.
    assert_eq!(out[6]["is_error"], json!(false), "{}", out[6]);
    assert_eq!(out[6]["asked"], json!([]), "{}", out[6]);
    let local =
        std::fs::read_to_string(sandbox.project().join(".earshot/settings.local.json")).unwrap();
    assert!(local.contains("Extension(writer__note)"), "{local}");
}

#[test]
fn tool_search_surfaces_tools_and_the_client_hears_the_list_change() {
    let sandbox = served_sandbox(
        json!({"thirty": fixture_server("thirty_tools.py", &[])}),
        &["Mcp(thirty__*)"],
        &[],
    );
    let out = client(
        &sandbox,
        json!([
            {"op": "list"},
            {"op": "call", "name": "tool_search", "args": {"query": "weather forecast for a city"}},
            {"op": "changes"},
            {"op": "list"},
            {"op": "call", "name": "thirty__get_weather_forecast", "args": {"city": "Oslo", "days": 2}},
        ]),
        false,
    );
    let first = out[0]["tools"].as_object().unwrap();
    assert!(first.contains_key("tool_search"), "{first:?}");
    assert!(!first.contains_key("thirty__get_weather_forecast"));
    assert!(
        text(&out[1]).contains("thirty__get_weather_forecast"),
        "{}",
        out[1]
    );
    assert!(out[2]["list_changed"].as_u64().unwrap() >= 1, "{}", out[2]);
    assert!(
        out[3]["tools"]
            .get("thirty__get_weather_forecast")
            .is_some()
    );
    assert_eq!(out[4]["is_error"], json!(false), "{}", out[4]);
}

// Its tool is a TypeScript extension.
#[cfg(feature = "js")]
#[test]
fn a_cancelled_call_stops_and_the_next_one_works() {
    let sandbox = served_sandbox(
        json!({"b": fixture_server("clock.py", &[])}),
        &["Mcp(clock__*)", "Mcp(b__*)"],
        &[],
    );
    let started = std::time::Instant::now();
    let out = client(
        &sandbox,
        json!([
            {"op": "call", "name": "clock__nap", "args": {"ms": 30000}, "cancel_after": 1.0},
            {"op": "call", "name": "writer__note", "args": {"text": "x"}, "answer": "allow_once"},
            {"op": "call", "name": "b__echo", "args": {"text": "after"}},
        ]),
        true,
    );
    assert_eq!(out[0]["cancelled"], json!(true), "{}", out[0]);
    assert_eq!(out[1]["is_error"], json!(false), "{}", out[1]);
    assert_eq!(out[2]["is_error"], json!(false), "{}", out[2]);
    assert_eq!(text(&out[2]), "after");
    // MCP calls are serialised: had the cancelled call gone on, the next one would have waited
    // for its 30 s.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the cancelled call held up the next MCP call ({:?})",
        started.elapsed()
    );
}

#[test]
fn closing_stdin_ends_every_server_behind() {
    let pids_dir = tempfile::tempdir().unwrap();
    let pids = pids_dir.path().join("pids");
    let pids_arg = pids.display().to_string();
    let sandbox = served_sandbox(
        json!({"stubborn": fixture_server("ignores_stdin_close.py", &["--pid-file", &pids_arg])}),
        &[],
        &[],
    );
    let out = client(&sandbox, json!([{"op": "list"}]), false);
    assert!(out[0]["tools"].is_object(), "{}", out[0]);
    let found: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|line| line.parse().unwrap())
        .collect();
    assert_eq!(found.len(), 2, "the server and its grandchild");
    for pid in found {
        assert!(
            crate::common::wait_dead(pid),
            "process {pid} outlived earshot mcp serve"
        );
    }
}

/// Sends one JSON-RPC message as a line.
fn send(stdin: &mut impl Write, message: Value) {
    writeln!(stdin, "{message}").unwrap();
    stdin.flush().unwrap();
}

#[test]
fn a_hostile_client_costs_nothing_but_its_own_requests() {
    let sandbox = served_sandbox(json!({}), &["Mcp(clock__echo)"], &[]);
    let mut earshot = sandbox
        .earshot()
        .args(["mcp", "serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = earshot.stdin.take().unwrap();
    let mut lines = BufReader::new(earshot.stdout.take().unwrap()).lines();
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "hostile", "version": "0"}}}),
    );
    let initialized: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(
        initialized["result"]["serverInfo"]["name"],
        json!("earshot")
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    // Garbage, a truncated message, a wrong shape, a 20 MB line, then a flood of calls.
    writeln!(
        stdin,
        "hello there\n{{\"jsonrpc\": \"2.0\", \"id\": 2, \"meth"
    )
    .unwrap();
    send(&mut stdin, json!({"jsonrpc": "2.0", "id": 3, "method": 7}));
    let huge = "x".repeat(20 << 20);
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "clock__echo", "arguments": {"text": huge}}}),
    );
    for id in 100..300 {
        send(
            &mut stdin,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "clock__echo", "arguments": {"text": format!("n{id}")}}}),
        );
    }
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 999, "method": "tools/list"}),
    );
    let mut answered = std::collections::BTreeSet::new();
    let mut listed = false;
    for line in lines.by_ref() {
        let message: Value =
            serde_json::from_str(&line.unwrap()).expect("stdout carries only JSON-RPC");
        if let Some(id) = message["id"].as_i64() {
            if (100..300).contains(&id) {
                assert_eq!(
                    message["result"]["content"][0]["text"],
                    json!(format!("n{id}")),
                    "{message}"
                );
            }
            listed |= id == 999 && message["result"]["tools"].is_array();
            answered.insert(id);
        }
        if listed && (100..300).all(|id| answered.contains(&id)) {
            break;
        }
    }
    assert!(listed, "tools/list was answered after the garbage");
    assert!(
        (100..300).all(|id| answered.contains(&id)),
        "every call of the flood was answered"
    );
    assert!(
        !answered.contains(&4),
        "the 20 MB line was dropped, not answered"
    );
    drop(stdin);
    let status = wait_with_timeout(&mut earshot, Duration::from_secs(30));
    assert_eq!(
        status,
        Some(0),
        "earshot mcp serve exits cleanly when stdin closes"
    );
}

fn wait_with_timeout(child: &mut std::process::Child, limit: Duration) -> Option<i32> {
    let started = std::time::Instant::now();
    while started.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    None
}

#[test]
fn an_untrusted_project_server_stays_inert_and_its_problem_goes_to_stderr_not_stdout() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/settings.json",
        json!({"mcpServers": {"theirs": {"command": "python3", "args": [mcp_fixture("clock.py")]}}})
            .to_string(),
    );
    let mut earshot = sandbox
        .earshot()
        .args(["mcp", "serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(earshot.stdin.take());
    let output = earshot.wait_with_output().unwrap();
    assert!(output.stdout.is_empty(), "stdout carries only the protocol");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("theirs") && stderr.contains("earshot mcp trust theirs"),
        "{stderr}"
    );
}

#[test]
fn claude_code_lists_earshot_mcp_serve_as_connected() {
    let sandbox = served_sandbox(json!({}), &[], &[]);
    let claude = crate::common::mcp_parts().join("node_modules/.bin/claude");
    let home = tempfile::tempdir().unwrap();
    let claude_command = |args: &[&str]| {
        Command::new(&claude)
            .args(args)
            .env("HOME", home.path())
            .env("EARSHOT_CONFIG_DIR", sandbox.config())
            .current_dir(sandbox.project())
            .output()
            .expect("claude runs")
    };
    let earshot = env!("CARGO_BIN_EXE_earshot");
    let config = format!("EARSHOT_CONFIG_DIR={}", sandbox.config().display());
    let project = sandbox.project().display().to_string();
    let added = claude_command(&[
        "mcp",
        "add",
        "-s",
        "user",
        "earshot",
        "-e",
        &config,
        "--",
        earshot,
        "--project",
        &project,
        "mcp",
        "serve",
    ]);
    assert!(added.status.success(), "{added:?}");
    let listed = claude_command(&["mcp", "list"]);
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert!(
        stdout.contains("earshot:") && stdout.contains("Connected"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&listed.stderr)
    );
}

// Its tool is a TypeScript extension.
#[cfg(feature = "js")]
#[test]
fn a_client_that_allows_everything_cannot_turn_a_deny_into_an_allow() {
    // The deny is in the user's settings; the local file holds an allow earshot signed.
    let sandbox = served_sandbox(json!({}), &[], &["Extension(writer__note)"]);
    let (code, _, err) = sandbox.run(&["permissions", "allow", "Extension(writer__note)"]);
    assert_eq!(code, 0, "{err}");
    let local_file = sandbox.project().join(".earshot/settings.local.json");
    let local_before = std::fs::read_to_string(&local_file).unwrap();
    let out = client(
        &sandbox,
        json!([
            {"op": "call", "name": "writer__note", "args": {"text": "x"}, "answer": "allow_always"},
            {"op": "call", "name": "writer__note", "args": {"text": "y"}, "answer": "allow_once"},
        ]),
        true,
    );
    for step in &out {
        assert_eq!(step["is_error"], json!(true), "{step}");
        assert!(
            text(step).contains("writer__note is denied by the rule \"Extension(writer__note)\""),
            "{step}"
        );
        assert_eq!(
            step["asked"],
            json!([]),
            "a denied call never reaches the client: {step}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&local_file).unwrap(),
        local_before,
        "nothing was written"
    );
}

#[test]
fn a_servers_own_form_goes_on_to_the_client_as_that_server_speaking() {
    let sandbox = served_sandbox(
        json!({"loop": fixture_server("elicits_in_a_loop.py", &[])}),
        &["Mcp(loop__ask)"],
        &[],
    );
    // The client answers the server's data form (its own permission forms are never involved:
    // the tool is allowed by a rule). The host's cap of 5 a minute applies behind it.
    let steps = json!([{"op": "call", "name": "loop__ask", "data": {"secret": "typed"}}]);
    let answered = client(&sandbox, steps, true);
    let counts: Value = serde_json::from_str(text(&answered[0])).unwrap();
    assert_eq!(counts, json!({"accept": 5, "decline": 45, "cancel": 0}));
    let asked = answered[0]["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 5, "{asked:?}");
    assert!(
        asked[0]
            .as_str()
            .unwrap()
            .starts_with("MCP server \"loop\" asks (the server is asking, not earshot):\nagain 0"),
        "{asked:?}"
    );
    // A client without elicitation: every form is declined, the call still answers.
    let steps = json!([{"op": "call", "name": "loop__ask"}]);
    let declined = client(&sandbox, steps, false);
    let counts: Value = serde_json::from_str(text(&declined[0])).unwrap();
    assert_eq!(counts, json!({"accept": 0, "decline": 50, "cancel": 0}));
}

#[test]
fn a_pre_tool_use_hook_that_blocks_gives_the_client_an_error_result_naming_the_hook() {
    let sandbox = served_sandbox(json!({}), &["Mcp(clock__echo)"], &[]);
    let path = sandbox.config().join("settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    settings["hooks"] = crate::hooks::on(
        "PreToolUse",
        "Mcp(clock__*)",
        vec![crate::hooks::handler(
            "guard",
            &["exit", "2", "not through serve"],
        )],
    );
    std::fs::write(&path, settings.to_string()).unwrap();
    let out = client(
        &sandbox,
        json!([
            {"op": "call", "name": "clock__echo", "args": {"text": "x"}},
            {"op": "call", "name": "hello__greet", "args": {"name": "Ada"}},
        ]),
        false,
    );
    assert_eq!(out[0]["is_error"], json!(true), "{}", out[0]);
    assert!(
        text(&out[0]).contains("clock__echo was blocked by hook \"guard\": not through serve"),
        "{}",
        out[0]
    );
    assert_eq!(out[1]["is_error"], json!(false), "{}", out[1]);
}
