//! MCP servers end to end, as a user sees them through `earshot`: the stdlib-Python fixture
//! servers in `fixtures/mcp/servers/` (hostile on purpose) in a throwaway project and config dir.

use crate::common::{Sandbox, fixture_server};
use serde_json::{Value, json};

fn mcp_list(sandbox: &Sandbox) -> Vec<Value> {
    let (code, stdout, stderr) = sandbox.run(&["mcp", "list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let value: Value = serde_json::from_str(&stdout).expect("JSON");
    value["servers"].as_array().unwrap().clone()
}

fn server<'a>(servers: &'a [Value], name: &str) -> &'a Value {
    servers
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {servers:?}"))
}

fn model_tool_names(sandbox: &Sandbox) -> Vec<String> {
    let (code, stdout, stderr) = sandbox.run(&["tools", "list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let value: Value = serde_json::from_str(&stdout).unwrap();
    value["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn unusable_entries_are_reported_each_and_the_others_still_connect() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {
        "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        "odd": {"type": "websocket", "url": "ws://127.0.0.1:9"},
        "gh__x": {"command": "python3"},
        "_gh": {"command": "python3"},
        "needs": {"command": "python3", "env": {"TOKEN": "${EARSHOT_TEST_SURELY_UNSET}"}},
        "fine": fixture_server("thirty_tools.py", &["--count", "2"]),
    }}));
    let servers = mcp_list(&sandbox);
    let reason = |name: &str| {
        server(&servers, name)["reason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(reason("old").contains("sse transport is not supported"));
    assert!(reason("odd").contains("\"websocket\" is not supported"));
    assert!(reason("gh__x").contains("invalid server name"));
    assert!(reason("_gh").contains("invalid server name"));
    assert!(reason("needs").contains("EARSHOT_TEST_SURELY_UNSET"));
    assert_eq!(server(&servers, "fine")["state"], "connected");
    assert_eq!(server(&servers, "fine")["tools"], 2);
    assert_eq!(
        model_tool_names(&sandbox),
        ["fine__create_issue", "fine__search_issues"]
    );
}

#[test]
fn the_narrower_layer_wins_and_list_says_so() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(
        json!({"mcpServers": {"t": fixture_server("thirty_tools.py", &["--count", "1"])}}),
    );
    let fixture = crate::common::mcp_fixture("thirty_tools.py");
    let (code, _, stderr) = sandbox.run(&[
        "mcp", "add", "-s", "local", "t", "--", "python3", &fixture, "--count", "3",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let servers = mcp_list(&sandbox);
    assert_eq!(servers[0]["scope"], "local");
    assert_eq!(servers[0]["overrides"], json!(["user"]));
    assert_eq!(servers[0]["tools"], 3, "the local definition is used");
    let (_, stdout, _) = sandbox.run(&["mcp", "list"]);
    assert!(stdout.contains("local (overrides user)"), "{stdout}");
}

#[test]
fn a_checked_in_server_never_starts_until_trusted() {
    let sandbox = Sandbox::new();
    let starts = sandbox.dir.path().join("starts.log");
    let starts_arg = starts.display().to_string();
    sandbox.write(
        ".earshot/settings.json",
        json!({"mcpServers": {"repo": fixture_server("misbehaving.py", &["--count-file", &starts_arg])}})
            .to_string(),
    );
    let servers = mcp_list(&sandbox);
    assert_eq!(servers[0]["state"], "awaiting-trust");
    assert!(
        servers[0]["reason"]
            .as_str()
            .unwrap()
            .contains("earshot mcp trust repo"),
        "{servers:?}"
    );
    let (_, stdout, _) = sandbox.run(&["tools", "list"]);
    assert!(!stdout.contains("repo__"), "{stdout}");
    assert!(!starts.exists(), "the process never ran");

    assert_eq!(sandbox.run(&["mcp", "trust", "repo"]).0, 0);
    let servers = mcp_list(&sandbox);
    assert_eq!(servers[0]["state"], "connected", "{servers:?}");
    assert_eq!(std::fs::read_to_string(&starts).unwrap().lines().count(), 1);
}

#[test]
fn servers_that_fail_to_start_are_reported_with_their_stderr_and_skipped() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {
        "dead": fixture_server("exits_at_once.py", &[]),
        "mute": {"command": "python3", "args": [crate::common::mcp_fixture("never_initializes.py")], "timeout": 1500},
        "absent": {"command": "earshot-no-such-server-binary"},
        "ok": fixture_server("thirty_tools.py", &["--count", "1"]),
    }}));
    let servers = mcp_list(&sandbox);
    let reason = |name: &str| {
        server(&servers, name)["reason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        reason("dead"),
        "exited with code 3 before answering initialize; its stderr ended: fatal: cannot open config /nonexistent"
    );
    assert_eq!(
        reason("mute"),
        "did not answer initialize within 1.5s; its stderr ended: starting up..."
    );
    assert!(reason("absent").contains("\"earshot-no-such-server-binary\" was not found"));
    assert_eq!(server(&servers, "ok")["state"], "connected");

    // The session goes on with the tools it has; each failure is one warning naming the server.
    let (code, stdout, stderr) = sandbox.run(&["tools", "list"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("ok__create_issue"));
    assert!(
        stderr.contains("warning: server \"dead\": exited with code 3"),
        "{stderr}"
    );
    assert!(stderr.contains("warning: server \"mute\": did not answer initialize"));
}

#[test]
fn a_stdio_server_sees_only_the_minimal_environment_and_its_own_variables() {
    let sandbox = Sandbox::new();
    let mut entry = fixture_server("env_dump.py", &[]);
    entry["env"] = json!({"GIVEN": "${EARSHOT_TEST_GIVEN:-from-default}"});
    sandbox.user_settings(
        json!({"mcpServers": {"env": entry}, "permissions": {"allow": ["Mcp(env__*)"]}}),
    );
    let output = sandbox
        .earshot()
        .env("EARSHOT_TEST_SECRET_TOKEN", "hunter2")
        .env("AWS_SECRET_ACCESS_KEY", "also-secret")
        .args(["tools", "call", "env__env", "{}"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    let env: Value = serde_json::from_str(stdout.trim()).expect("the env as JSON");
    assert_eq!(env["GIVEN"], "from-default");
    assert!(env.get("PATH").is_some());
    assert!(env.get("EARSHOT_TEST_SECRET_TOKEN").is_none(), "{env}");
    assert!(env.get("AWS_SECRET_ACCESS_KEY").is_none(), "{env}");
    assert!(env.get("EARSHOT_CONFIG_DIR").is_none(), "{env}");
}

#[test]
fn every_mcp_call_is_gated_and_read_only_hints_are_shown_not_believed() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(
        json!({"mcpServers": {"t": fixture_server("thirty_tools.py", &["--count", "3"])},
        "permissions": {"allow": ["Mcp(t__search_*)"], "deny": ["Mcp(t__create_*)"]}}),
    );
    let (code, stdout, stderr) =
        sandbox.run(&["tools", "call", "t__search_issues", r#"{"query":"bug"}"#]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("search_issues"), "{stdout}");
    let (code, _, stderr) = sandbox.run(&["tools", "call", "t__create_issue", r#"{"title":"x"}"#]);
    assert_eq!(code, 3, "denied: {stderr}");
    assert!(stderr.contains("Mcp(t__create_*)"), "{stderr}");
    // No rule: not interactive, so denied rather than asked.
    let (code, _, stderr) = sandbox.run(&["tools", "call", "t__list_pull_requests", "{}"]);
    assert_eq!(code, 3, "{stderr}");
}

#[test]
fn invalid_input_never_reaches_the_server() {
    let sandbox = Sandbox::new();
    let calls = sandbox.dir.path().join("starts.log");
    let calls_arg = calls.display().to_string();
    sandbox.user_settings(json!({"mcpServers": {"bad": fixture_server("misbehaving.py", &["--count-file", &calls_arg])},
        "permissions": {"allow": ["Mcp(bad__*)"]}}));
    let (code, _, stderr) = sandbox.run(&["tools", "call", "bad__echo", r#"{"text": 5}"#]);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("/text: 5 is not of type \"string\""),
        "{stderr}"
    );
    let log = std::fs::read_to_string(&calls).unwrap();
    assert!(log.starts_with("start "), "the server ran: {log}");
    assert!(!log.contains("call "), "the call never arrived: {log}");
    // The control: a valid call is logged.
    assert_eq!(
        sandbox
            .run(&["tools", "call", "bad__echo", r#"{"text": "ok"}"#])
            .0,
        0
    );
    assert!(
        std::fs::read_to_string(&calls)
            .unwrap()
            .contains("call echo")
    );
}

fn hostile(sandbox: &Sandbox, tool: &str) -> (i32, String, String) {
    sandbox.user_settings(json!({"mcpServers": {"bad": {"command": "python3", "args": [crate::common::mcp_fixture("misbehaving.py"), "--banner"], "callTimeout": 3000}},
        "permissions": {"allow": ["Mcp(bad__*)"]}}));
    sandbox.run(&["tools", "call", &format!("bad__{tool}"), "{}"])
}

#[test]
fn a_server_that_dies_mid_call_is_reported_with_its_stderr() {
    let (code, _, stderr) = hostile(&Sandbox::new(), "die");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("server \"bad\" exited with code 1 during the call to die; its stderr ended: panic: lost my mind; the next call restarts it once"),
        "{stderr}"
    );
}

#[test]
fn one_message_over_the_cap_stops_the_server_with_a_reason() {
    let (code, _, stderr) = hostile(&Sandbox::new(), "big");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("server \"bad\" sent a message over 16 MiB"),
        "{stderr}"
    );
}

#[test]
fn an_endless_line_stops_the_server_with_a_reason() {
    let (code, _, stderr) = hostile(&Sandbox::new(), "no_newline");
    assert_eq!(code, 1);
    assert!(
        stderr
            .contains("server \"bad\" sent a message over 16 MiB (or output without line breaks)"),
        "{stderr}"
    );
}

#[test]
fn a_call_that_hangs_times_out_with_the_setting_to_change() {
    let (code, _, stderr) = hostile(&Sandbox::new(), "hang");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("server \"bad\" did not answer within 3s to hang"),
        "{stderr}"
    );
    assert!(stderr.contains("callTimeout"), "{stderr}");
}

#[test]
fn non_json_lines_on_stdout_are_skipped_and_reported() {
    let (code, stdout, stderr) = hostile(&Sandbox::new(), "garbage");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "after the garbage");
    assert!(
        stderr.contains(
            "wrote 1 line(s) that are not JSON to stdout, skipped (first: \"server ready!\")"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "server \"bad\" wrote 2 line(s) that are not JSON to stdout during the call; they were skipped"
        ),
        "{stderr}"
    );
}

#[test]
fn a_malformed_result_is_refused_by_the_output_sandbox() {
    let (code, _, stderr) = hostile(&Sandbox::new(), "malformed");
    assert_eq!(code, 1);
    assert!(stderr.contains("server \"bad\" answered bad__malformed with a result earshot cannot use: the server's result is malformed"), "{stderr}");
}

#[test]
fn every_content_type_is_normalised_and_escapes_are_stripped() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(
        json!({"mcpServers": {"c": fixture_server("all_content.py", &[])},
        "permissions": {"allow": ["Mcp(c__*)"]}}),
    );
    let (code, stdout, stderr) = sandbox.run(&["tools", "call", "c__everything", "{}"]);
    assert_eq!(code, 0, "{stderr}");
    for part in [
        "[image: image/png",
        "[audio: audio/wav",
        "[resource link: report.txt",
        "embedded notes",
        "\"temperature\": 21.5",
    ] {
        assert!(stdout.contains(part), "{part} in {stdout}");
    }
    let (code, stdout, _) = sandbox.run(&["tools", "call", "c__escape", "{}"]);
    assert_eq!(code, 0);
    assert!(
        !stdout.contains('\u{1b}') && !stdout.contains('\u{7}'),
        "{stdout:?}"
    );
    let (code, stdout, _) = sandbox.run(&["tools", "call", "c__wrong_structured", "{}"]);
    assert_eq!(code, 4, "an outputSchema violation is an error result");
    assert!(
        stdout.contains("does not match the tool's outputSchema"),
        "{stdout}"
    );
    let (code, stdout, stderr) = sandbox.run(&["tools", "call", "c__fails", "{}"]);
    assert_eq!(code, 4);
    assert!(stdout.contains("the thing failed"));
    assert!(stderr.contains("c__fails reported an error"));
}

#[test]
fn invalid_tool_names_are_skipped_and_long_ones_get_a_stable_alias_rules_still_match() {
    let sandbox = Sandbox::new();
    let long = "a_very_long_tool_name_that_keeps_going_and_going_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x_x";
    sandbox.user_settings(
        json!({"mcpServers": {"n": fixture_server("bad_names.py", &[])},
        "permissions": {"allow": [format!("Mcp(n__{long})"), "Mcp(n__dots.in.name)"]}}),
    );
    let (_, _, stderr) = sandbox.run(&["tools", "list"]);
    assert!(
        stderr.contains("server \"n\": a tool is skipped: its name is invalid: the name is empty"),
        "{stderr}"
    );
    assert!(stderr.contains("\"has space\" contains ' '"), "{stderr}");
    assert!(
        stderr.contains("tool \"bad_schema\" skipped: its input schema is rejected"),
        "{stderr}"
    );
    let names = model_tool_names(&sandbox);
    assert_eq!(
        names,
        model_tool_names(&sandbox),
        "aliases are stable across runs"
    );
    assert!(names.contains(&"n__ok_tool".to_string()), "{names:?}");
    let aliases: Vec<&String> = names.iter().filter(|n| *n != "n__ok_tool").collect();
    assert_eq!(aliases.len(), 2, "{names:?}");
    for alias in &aliases {
        assert!(
            alias.len() <= 64
                && alias
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{alias}"
        );
        // The alias is callable, and the rule written for the full name decides.
        let (code, stdout, stderr) = sandbox.run(&["tools", "call", alias, r#"{"text":"x"}"#]);
        assert_eq!(code, 0, "{alias}: {stderr}");
        assert!(stdout.starts_with("called "), "{stdout}");
    }
}

#[test]
fn past_25_tools_only_tool_search_is_listed_and_what_it_surfaces_is_still_gated() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(
        json!({"mcpServers": {"t": fixture_server("thirty_tools.py", &["--count", "25"])}}),
    );
    let names = model_tool_names(&sandbox);
    assert_eq!(names.len(), 25, "25 tools are all listed: {names:?}");
    assert!(!names.contains(&"tool_search".to_string()));

    sandbox.user_settings(
        json!({"mcpServers": {"t": fixture_server("thirty_tools.py", &["--count", "26"])}}),
    );
    assert_eq!(
        model_tool_names(&sandbox),
        ["tool_search"],
        "26: none is listed"
    );

    // Not surfaced, but typed by its exact name: the user's own call, gated as any (no rule, no
    // one to ask: denied by the gate, never refused as "not listed").
    let (code, _, stderr) = sandbox.run(&[
        "tools",
        "call",
        "t__get_weather_forecast",
        r#"{"city":"Oslo","days":3}"#,
    ]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("Mcp(t__get_weather_forecast)"), "{stderr}");
    assert!(!stderr.contains("is not listed"), "{stderr}");

    // Surfaced by tool_search, but no rule allows it: tool_search granted nothing.
    let (code, _, stderr) = sandbox.run(&[
        "tools",
        "call",
        "t__get_weather_forecast",
        r#"{"city":"Oslo","days":3}"#,
        "--search",
        "weather forecast for a city",
    ]);
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("tool_search surfaced: t__get_weather_forecast"),
        "{stderr}"
    );
    assert!(stderr.contains("Mcp(t__get_weather_forecast)"), "{stderr}");

    sandbox.user_settings(
        json!({"mcpServers": {"t": fixture_server("thirty_tools.py", &["--count", "26"])},
        "permissions": {"allow": ["Mcp(t__get_weather_forecast)"]}}),
    );
    let (code, stdout, stderr) = sandbox.run(&[
        "tools",
        "call",
        "t__get_weather_forecast",
        r#"{"city":"Oslo","days":3}"#,
        "--search",
        "weather forecast for a city",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Oslo"), "{stdout}");

    // tool_search itself: ranked, at most ten.
    let (code, stdout, _) = sandbox.run(&[
        "tools",
        "call",
        "tool_search",
        r#"{"query":"issue pull request repository", "limit": 10}"#,
    ]);
    assert_eq!(code, 0);
    let found: Value = serde_json::from_str(&stdout).unwrap();
    let found = found["tools"].as_array().unwrap();
    assert!(!found.is_empty() && found.len() <= 10, "{found:?}");
    let (code, _, stderr) = sandbox.run(&[
        "tools",
        "call",
        "tool_search",
        r#"{"query":"x", "limit": 11}"#,
    ]);
    assert_eq!(code, 4, "{stderr}");
}

#[test]
fn mcp_get_shows_the_expanded_definition_with_secrets_masked_and_the_tools() {
    let sandbox = Sandbox::new();
    let mut entry = fixture_server("thirty_tools.py", &["--count", "2"]);
    entry["env"] = json!({"API_KEY": "sk-very-secret-value"});
    sandbox.user_settings(json!({"mcpServers": {"t": entry}}));
    let (code, stdout, stderr) = sandbox.run(&["mcp", "get", "t", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains("very-secret"), "{stdout}");
    let value: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(value["definition"]["env"]["API_KEY"], "sk-v****");
    assert_eq!(value["state"], "connected");
    assert_eq!(value["tools"].as_array().unwrap().len(), 2);
    let (code, _, stderr) = sandbox.run(&["mcp", "get", "nothere"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("no MCP server named \"nothere\""));
}

/// Starts `http_hostile.py` in `mode` on an ephemeral loopback port; returns the child and URL.
fn hostile_http(mode: &str) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = std::process::Command::new("python3")
        .args([
            &crate::common::mcp_fixture("http_hostile.py"),
            "--port",
            "0",
            "--mode",
            mode,
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().rsplit(' ').next().unwrap().to_string();
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

#[test]
fn http_servers_that_refuse_or_flood_are_reported_and_skipped() {
    let sandbox = Sandbox::new();
    let mut children = Vec::new();
    let mut servers = serde_json::Map::new();
    for mode in ["401", "404", "500", "oversized"] {
        let (child, url) = hostile_http(mode);
        children.push(child);
        servers.insert(
            format!("h{mode}"),
            json!({"type": "http", "url": url, "timeout": 10000}),
        );
    }
    // Nothing listens on port 9 of loopback.
    servers.insert(
        "gone".into(),
        json!({"type": "http", "url": "http://127.0.0.1:9/mcp", "timeout": 10000}),
    );
    servers.insert(
        "ok".into(),
        fixture_server("thirty_tools.py", &["--count", "1"]),
    );
    sandbox.user_settings(json!({"mcpServers": servers}));
    let listed = mcp_list(&sandbox);
    for child in &mut children {
        child.kill().ok();
        child.wait().ok();
    }
    for name in ["h404", "h500", "hoversized", "gone"] {
        let entry = server(&listed, name);
        assert_eq!(entry["state"], "failed", "{entry}");
        assert!(
            entry["reason"].as_str().unwrap().contains("127.0.0.1"),
            "{entry}"
        );
    }
    // A 401 is an authorization challenge: the server needs a login, with the command to run.
    let h401 = server(&listed, "h401");
    assert_eq!(h401["state"], "needs-login", "{h401}");
    assert!(
        h401["reason"]
            .as_str()
            .unwrap()
            .contains("earshot mcp login h401"),
        "{h401}"
    );
    assert_eq!(server(&listed, "ok")["state"], "connected");
}

#[test]
fn a_message_nested_too_deep_fails_the_call_at_once_instead_of_hanging() {
    let (code, _, stderr) = hostile(&Sandbox::new(), "deep");
    assert_eq!(code, 1);
    assert!(
        stderr.contains(
            "server \"bad\" sent a message that is not valid JSON-RPC (recursion limit exceeded"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("did not answer"), "{stderr}");
}

/// `earshot mcp list` kept busy by a server that never answers initialize, beside a server that
/// ignores stdin closing and SIGTERM and has a grandchild; returns earshot and the two pids
/// (the server's, then its grandchild's) once both run.
fn earshot_with_a_stubborn_server(
    sandbox: &Sandbox,
    extra: &[&str],
) -> (std::process::Child, Vec<u32>) {
    let pids = sandbox.dir.path().join("pids");
    let pids_arg = pids.display().to_string();
    let mut args = vec!["--pid-file", pids_arg.as_str()];
    args.extend_from_slice(extra);
    sandbox.user_settings(json!({"mcpServers": {
        "stubborn": fixture_server("ignores_stdin_close.py", &args),
        "slow": {"command": "python3", "args": [crate::common::mcp_fixture("slow_start.py"), "--delay", "600"], "timeout": 600000},
    }}));
    let earshot = sandbox
        .earshot()
        .args(["mcp", "list"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let found = crate::common::wait_for_pids(&pids, 2);
    assert_eq!(
        found.len(),
        2,
        "the server wrote its and its grandchild's pid"
    );
    (earshot, found)
}

#[test]
fn a_signal_to_earshot_ends_every_server_process_group() {
    let sandbox = Sandbox::new();
    let (mut earshot, found) = earshot_with_a_stubborn_server(&sandbox, &[]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: sends SIGTERM to the earshot child this test started.
    unsafe { kill(earshot.id() as i32, 15) };
    let status = earshot.wait().unwrap();
    assert_eq!(status.code(), Some(128 + 15), "{status:?}");
    for pid in found {
        assert!(
            crate::common::wait_dead(pid),
            "process {pid} outlived earshot"
        );
    }
}

#[test]
fn a_server_does_not_outlive_an_earshot_that_was_killed_outright() {
    let sandbox = Sandbox::new();
    let (mut earshot, found) = earshot_with_a_stubborn_server(&sandbox, &["--quiet-grandchild"]);
    let (server, grandchild) = (found[0], found[1]);
    // SIGKILL: earshot runs no code at all; the kernel ends its direct children.
    // SAFETY: sends SIGKILL to the earshot child this test started.
    unsafe { kill(earshot.id() as i32, 9) };
    earshot.wait().unwrap();
    let gone = crate::common::wait_dead(server);
    // Clean up the grandchild whichever way it went (it is not covered by the parent-death signal).
    // SAFETY: sends SIGKILL to the grandchild this test's server started.
    unsafe { kill(grandchild as i32, 9) };
    assert!(gone, "server {server} outlived a killed earshot");
}

#[test]
fn a_one_shot_listing_leaves_no_server_or_grandchild_running() {
    // A server that ignores stdin closing and SIGTERM, with a grandchild in its group: `mcp list`
    // gives it only the one-shot grace, and nothing of it is left once earshot has exited.
    let sandbox = Sandbox::new();
    let pids = sandbox.dir.path().join("pids");
    let pids_arg = pids.display().to_string();
    sandbox.user_settings(json!({"mcpServers": {
        "stubborn": fixture_server("ignores_stdin_close.py", &["--pid-file", &pids_arg]),
        "polite": fixture_server("sentinel.py", &["--path", "/nonexistent/never-written"]),
    }}));
    let (code, stdout, stderr) = sandbox.run(&["mcp", "list"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.matches("connected").count(), 2, "{stdout}");
    let found = crate::common::wait_for_pids(&pids, 2);
    assert_eq!(found.len(), 2);
    for pid in found {
        assert!(
            crate::common::wait_dead(pid),
            "process {pid} outlived a one-shot earshot"
        );
    }
}

unsafe extern "C" {
    /// libc's kill(2), to send earshot a signal as a terminal or a supervisor would.
    fn kill(pid: i32, signal: i32) -> i32;
}

#[test]
fn the_global_timeout_settings_apply_to_servers_that_set_none() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {
        "mute": fixture_server("never_initializes.py", &[]),
        "bad": fixture_server("misbehaving.py", &[]),
    }, "mcp": {"startupTimeoutSeconds": 1.5, "callTimeoutSeconds": 1},
       "permissions": {"allow": ["Mcp(bad__*)"]}}));
    let servers = mcp_list(&sandbox);
    assert_eq!(
        server(&servers, "mute")["reason"],
        "did not answer initialize within 1.5s; its stderr ended: starting up..."
    );
    let (code, _, stderr) = sandbox.run(&["tools", "call", "bad__hang", "{}"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("server \"bad\" did not answer within 1s to hang"),
        "{stderr}"
    );
}

#[test]
fn add_json_round_trips_on_every_scope_keeping_foreign_keys_and_trusts_only_the_local_file() {
    let sandbox = Sandbox::new();
    let definition = fixture_server("thirty_tools.py", &["--count", "2"]).to_string();
    let user_file = sandbox.config().join("settings.json");
    std::fs::write(
        &user_file,
        r#"{"theme": "dark", "permissions": {"allow": []}}"#,
    )
    .unwrap();
    sandbox.write(".earshot/settings.json", r#"{"model": "x"}"#);

    for scope in ["user", "local", "project"] {
        let name = format!("j{scope}");
        let (code, stdout, stderr) =
            sandbox.run(&["mcp", "add-json", "-s", scope, &name, &definition]);
        assert_eq!(code, 0, "{scope}: {stderr}");
        assert!(
            stdout.contains(&format!("added server \"{name}\"")),
            "{stdout}"
        );
        if scope == "project" {
            assert!(
                stdout.contains(&format!("earshot mcp trust {name}")),
                "{stdout}"
            );
        }
    }
    let servers = mcp_list(&sandbox);
    assert_eq!(server(&servers, "juser")["state"], "connected");
    assert_eq!(
        server(&servers, "jlocal")["state"],
        "connected",
        "signed when written"
    );
    assert_eq!(
        server(&servers, "jproject")["state"],
        "awaiting-trust",
        "adding to the checked-in file does not trust it"
    );
    let user: Value = serde_json::from_str(&std::fs::read_to_string(&user_file).unwrap()).unwrap();
    assert_eq!(user["theme"], "dark");
    let project: Value = serde_json::from_str(&sandbox.read(".earshot/settings.json")).unwrap();
    assert_eq!(project["model"], "x");

    for (scope, name) in [
        ("user", "juser"),
        ("local", "jlocal"),
        ("project", "jproject"),
    ] {
        let (code, _, stderr) = sandbox.run(&["mcp", "remove", "-s", scope, name]);
        assert_eq!(code, 0, "{stderr}");
    }
    assert!(mcp_list(&sandbox).is_empty());
    let user: Value = serde_json::from_str(&std::fs::read_to_string(&user_file).unwrap()).unwrap();
    assert_eq!(user["theme"], "dark", "foreign keys survive the round trip");
    assert_eq!(user["permissions"], json!({"allow": []}));
}

#[test]
fn add_json_refuses_what_is_not_a_definition_and_never_overwrites_an_unparseable_file() {
    let sandbox = Sandbox::new();
    let (code, _, stderr) = sandbox.run(&["mcp", "add-json", "x", "{not json"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("the definition of \"x\" is not JSON"),
        "{stderr}"
    );
    let (code, _, stderr) = sandbox.run(&["mcp", "add-json", "x", r#"["npx"]"#]);
    assert_eq!(code, 2);
    assert!(stderr.contains("must be a JSON object"), "{stderr}");
    let (code, _, stderr) = sandbox.run(&["mcp", "add-json", "x", r#"{"args": ["a"]}"#]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("server \"x\" was not added: a stdio server needs a \"command\" string; nothing was written"),
        "{stderr}"
    );

    let user_file = sandbox.config().join("settings.json");
    std::fs::write(&user_file, "{ \"theme\": \"dark\", oops").unwrap();
    let definition = fixture_server("thirty_tools.py", &[]).to_string();
    let (code, _, stderr) = sandbox.run(&["mcp", "add-json", "-s", "user", "y", &definition]);
    assert_ne!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&user_file).unwrap(),
        "{ \"theme\": \"dark\", oops",
        "an unparseable file is never overwritten"
    );
}

#[test]
fn a_server_definition_with_a_hidden_or_control_character_is_refused_in_every_layer_and_shown() {
    let hidden = ['\u{200b}', '\u{202e}', '\u{2066}', '\u{7}', '\u{85}'];
    for layer in ["user", "project", "local"] {
        for (index, c) in hidden.iter().enumerate() {
            let marker = format!("⟦U+{:04X}⟧", *c as u32);
            // One field each time: command, an argument, an env value, an env name, a URL.
            let (field, bad) = match index {
                0 => (
                    "command",
                    json!({"command": format!("python3{c}"), "args": ["x.py"]}),
                ),
                1 => (
                    "args",
                    json!({"command": "python3", "args": [format!("check{c}.py")]}),
                ),
                2 => (
                    "env",
                    json!({"command": "python3", "env": {"MODE": format!("a{c}b")}}),
                ),
                3 => (
                    "env",
                    json!({"command": "python3", "env": {format!("MO{c}DE"): "a"}}),
                ),
                _ => (
                    "url",
                    json!({"type": "http", "url": format!("https://example.com/{c}mcp")}),
                ),
            };
            let case = format!("{layer}, {field}, U+{:04X}", *c as u32);
            let sandbox = Sandbox::new();
            let settings = json!({"mcpServers": {
                "clean": fixture_server("thirty_tools.py", &["--count", "2"]),
                "bad": bad,
            }});
            match layer {
                "user" => sandbox.user_settings(settings),
                "project" => sandbox.write(".earshot/settings.json", settings.to_string()),
                _ => sandbox.write(".earshot/settings.local.json", settings.to_string()),
            }
            if layer != "user" {
                let (code, _, stderr) = sandbox.run(&["mcp", "trust", "clean"]);
                assert_eq!(code, 0, "{case}: {stderr}");
                let (code, _, stderr) = sandbox.run(&["mcp", "trust", "bad"]);
                assert_ne!(code, 0, "{case}: trusted: {stderr}");
            }
            let servers = mcp_list(&sandbox);
            let reason = server(&servers, "bad")["reason"]
                .as_str()
                .unwrap()
                .to_string();
            assert!(
                reason.contains(&format!("\"{field}\"")) && reason.contains(&marker),
                "{case}: {reason}"
            );
            assert!(!reason.contains(*c), "{case}: {reason:?}");
            assert_eq!(server(&servers, "clean")["state"], "connected", "{case}");
            let (_, stdout, stderr) = sandbox.run(&["mcp", "get", "bad"]);
            assert!(
                stdout.contains(&marker),
                "{case}: mcp get: {stdout}{stderr}"
            );
            assert!(
                !stdout.contains(*c) && !stderr.contains(*c),
                "{case}: shown raw"
            );
            assert_eq!(
                model_tool_names(&sandbox),
                ["clean__create_issue", "clean__search_issues"],
                "{case}"
            );
        }
    }
}

#[test]
fn mcp_add_refuses_a_hidden_character_before_writing_anything() {
    let sandbox = Sandbox::new();
    for scope in ["user", "project", "local"] {
        let (code, _, stderr) = sandbox.run(&[
            "mcp",
            "add",
            "-s",
            scope,
            "--env",
            "MODE=a\u{202e}b",
            "tricky",
            "--",
            "python3",
            "check\u{200b}.py",
        ]);
        assert_eq!(code, 2, "{scope}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{scope}: {stderr}");
        assert!(
            stderr.contains("server \"tricky\" was not added")
                && (stderr.contains("⟦U+200B⟧") || stderr.contains("⟦U+202E⟧"))
                && stderr.contains("nothing was written"),
            "{scope}: {stderr}"
        );
    }
    assert!(!sandbox.config().join("settings.json").exists());
    assert!(!sandbox.project().join(".earshot/settings.json").exists());
    assert!(
        !sandbox
            .project()
            .join(".earshot/settings.local.json")
            .exists()
    );
}
