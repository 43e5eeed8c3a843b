//! MCP servers inside one session, through the library an embedder uses: restarts after a
//! death, list_changed, what tool_search surfaced staying listed, concurrent start-up, a hung
//! call not harming the next, a stderr flood, and the process group ended at shutdown.

use std::time::{Duration, Instant};

use crate::common::{Sandbox, fixture_server};
use earshot_host::gate::NonInteractivePrompter;
use earshot_host::mcp::{McpOptions, McpServers, ServerState};
use earshot_host::settings::{ProjectPaths, Settings};
use serde_json::json;

fn settings(sandbox: &Sandbox) -> Settings {
    Settings::load(
        Some(&sandbox.config()),
        Some(ProjectPaths::new(sandbox.project())),
    )
}

/// How many times the server started (its count file also logs calls).
fn starts_in(log: &std::path::Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter(|line| line.starts_with("start "))
        .count()
}

fn call(
    host: &crate::common::TestHost,
    name: &str,
    input: &str,
) -> Result<earshot_host::ToolOutput, String> {
    host.call(name, input, &NonInteractivePrompter)
        .map_err(|error| error.to_string())
}

#[test]
fn a_server_that_died_is_restarted_once_by_the_next_call_which_says_so() {
    let sandbox = Sandbox::new();
    let starts = sandbox.dir.path().join("starts.log");
    let starts_arg = starts.display().to_string();
    sandbox.user_settings(json!({"mcpServers": {"bad": fixture_server("misbehaving.py", &["--count-file", &starts_arg])},
        "permissions": {"allow": ["Mcp(bad__*)"]}}));
    let host = sandbox.host();
    assert_eq!(
        call(&host, "bad__echo", r#"{"text":"one"}"#)
            .unwrap()
            .output,
        "one"
    );
    let died = call(&host, "bad__die", "{}").unwrap_err();
    assert!(
        died.contains("exited with code 1 during the call to die"),
        "{died}"
    );

    let again = call(&host, "bad__echo", r#"{"text":"two"}"#).expect("restarted");
    assert_eq!(again.output, "two");
    let notice = again.notice.expect("the restart is reported");
    assert!(notice.starts_with("server \"bad\" had stopped (exited with code 1; its stderr ended: panic: lost my mind); restarted it"), "{notice}");
    assert_eq!(starts_in(&starts), 2);

    // A second death: no second restart in this session.
    call(&host, "bad__die", "{}").unwrap_err();
    let down = call(&host, "bad__echo", r#"{"text":"three"}"#).unwrap_err();
    assert!(
        down.contains("already restarted once in this session"),
        "{down}"
    );
    assert_eq!(starts_in(&starts), 2);
}

#[test]
fn a_hung_call_times_out_and_the_server_keeps_answering() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {"bad": {"command": "python3", "args": [crate::common::mcp_fixture("misbehaving.py")], "callTimeout": 500}},
        "permissions": {"allow": ["Mcp(bad__*)"]}}));
    let host = sandbox.host();
    let hung = call(&host, "bad__hang", "{}").unwrap_err();
    assert!(
        hung.contains("did not answer within 500ms to hang"),
        "{hung}"
    );
    assert_eq!(
        call(&host, "bad__echo", r#"{"text":"still here"}"#)
            .unwrap()
            .output,
        "still here"
    );
}

#[test]
fn a_stderr_flood_is_drained_into_a_bounded_tail_and_calls_go_on() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(
        json!({"mcpServers": {"loud": fixture_server("misbehaving.py", &["--stderr-flood"])},
        "permissions": {"allow": ["Mcp(loud__*)"]}}),
    );
    let host = sandbox.host();
    // The flood is 200 MiB; a server whose stderr nobody reads blocks within 64 KiB.
    for round in 0..20 {
        let text = format!("round {round}");
        assert_eq!(
            call(&host, "loud__echo", &json!({"text": text}).to_string())
                .unwrap()
                .output,
            text
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let died = call(&host, "loud__die", "{}").unwrap_err();
    // The report quotes the end of stderr, not 200 MiB of it.
    assert!(died.len() < 2_000, "{} bytes", died.len());
    assert!(died.contains("panic: lost my mind"), "{died}");
}

#[test]
fn list_changed_refreshes_the_tools_a_model_sees() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(
        json!({"mcpServers": {"lc": fixture_server("list_changed.py", &[])},
        "permissions": {"allow": ["Mcp(lc__*)"]}}),
    );
    let host = sandbox.host();
    let names = |host: &crate::common::TestHost| -> Vec<String> {
        host.model_tools()
            .into_iter()
            .map(|tool| tool.name)
            .collect()
    };
    assert!(!names(&host).contains(&"lc__fresh".to_string()));
    call(&host, "lc__add_tool", r#"{"name":"fresh"}"#).unwrap();
    assert!(
        names(&host).contains(&"lc__fresh".to_string()),
        "{:?}",
        names(&host)
    );
    assert!(!call(&host, "lc__fresh", "{}").unwrap().is_error);
    call(&host, "lc__remove_all", "{}").unwrap();
    assert!(!names(&host).contains(&"lc__fresh".to_string()));
    assert!(
        call(&host, "lc__fresh", "{}")
            .unwrap_err()
            .contains("no tool named")
    );
}

#[test]
fn list_changed_past_25_tools_switches_to_tool_search_and_surfaced_tools_stay_listed() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {
        "t": fixture_server("thirty_tools.py", &["--count", "23"]),
        "lc": fixture_server("list_changed.py", &[]),
    }, "permissions": {"allow": ["Mcp(lc__*)"]}}));
    let host = sandbox.host();
    // 23 + add_tool + remove_all = 25: all listed.
    assert!(!host.tool_search_active(), "25 tools are listed");
    call(&host, "lc__add_tool", r#"{"name":"weather_radar"}"#).unwrap();
    assert!(
        host.tool_search_active(),
        "26 tools: tool_search takes over"
    );
    let listed: Vec<String> = host.model_tools().into_iter().map(|t| t.name).collect();
    assert_eq!(listed, ["tool_search"]);
    call(
        &host,
        "tool_search",
        r#"{"query":"weather forecast for a city","limit":2}"#,
    )
    .unwrap();
    let listed: Vec<String> = host.model_tools().into_iter().map(|t| t.name).collect();
    assert!(
        listed.contains(&"t__get_weather_forecast".to_string()),
        "{listed:?}"
    );
    assert!(listed.len() <= 3, "{listed:?}");
    // Still listed after another, unrelated search.
    call(&host, "tool_search", r#"{"query":"send an email"}"#).unwrap();
    let listed: Vec<String> = host.model_tools().into_iter().map(|t| t.name).collect();
    assert!(
        listed.contains(&"t__get_weather_forecast".to_string()),
        "{listed:?}"
    );
    // Surfaced, but no rule allows it: tool_search granted nothing.
    let denied = call(
        &host,
        "t__get_weather_forecast",
        r#"{"city":"Oslo","days":3}"#,
    )
    .unwrap_err();
    assert!(denied.contains("Mcp(t__get_weather_forecast)"), "{denied}");
}

#[test]
fn servers_start_concurrently_and_a_slow_one_only_costs_its_own_timeout() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {
        "a": fixture_server("slow_start.py", &["--delay", "1"]),
        "b": fixture_server("slow_start.py", &["--delay", "1"]),
        "c": fixture_server("slow_start.py", &["--delay", "1"]),
        "stuck": {"command": "python3", "args": [crate::common::mcp_fixture("slow_start.py"), "--delay", "600"], "timeout": 1500},
    }}));
    let started = Instant::now();
    let servers = crate::common::block_on(McpServers::start(
        &settings(&sandbox),
        &|_| None,
        McpOptions::default(),
        None,
        &mut |_| {},
    ));
    let whole = started.elapsed();
    let mut sum = Duration::ZERO;
    for status in servers.statuses() {
        match status.state {
            ServerState::Connected { took, .. } => sum += took,
            ServerState::Failed(reason) => {
                assert_eq!(status.name, "stuck");
                assert_eq!(reason, "did not answer initialize within 1.5s");
                sum += Duration::from_millis(1500);
            }
            other => panic!("{}: {other:?}", status.name),
        }
    }
    // Each took its own time; together they took about the longest, not the sum.
    assert!(whole < sum, "whole {whole:?} vs sum {sum:?}");
}

#[test]
fn shutdown_ends_the_whole_process_group_even_when_the_server_ignores_stdin_and_sigterm() {
    let sandbox = Sandbox::new();
    let pids = sandbox.dir.path().join("pids");
    let pids_arg = pids.display().to_string();
    sandbox.user_settings(json!({"mcpServers": {"stubborn": fixture_server("ignores_stdin_close.py", &["--pid-file", &pids_arg])}}));
    let servers = crate::common::block_on(McpServers::start(
        &settings(&sandbox),
        &|_| None,
        McpOptions::default(),
        None,
        &mut |_| {},
    ));
    assert!(matches!(
        servers.statuses()[0].state,
        ServerState::Connected { .. }
    ));
    let pids: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "the server and its grandchild");
    assert_eq!(servers.pid_of("stubborn"), Some(pids[0]));
    assert!(pids.iter().all(|pid| crate::common::alive(*pid)));
    drop(servers);
    for pid in pids {
        assert!(
            crate::common::wait_dead(pid),
            "process {pid} outlived the session"
        );
    }
}

#[test]
fn mcp_calls_are_serialised_never_two_at_once() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {
        "a": fixture_server("slow_start.py", &["--delay", "0"]),
        "b": fixture_server("slow_start.py", &["--delay", "0"]),
    }, "permissions": {"allow": ["Mcp(*)"]}}));
    let host = std::sync::Arc::new(sandbox.host());
    let spans = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let threads: Vec<_> = ["a__ping_me", "b__ping_me", "a__ping_me", "b__ping_me"]
        .into_iter()
        .map(|name| {
            let (host, spans) = (host.clone(), spans.clone());
            std::thread::spawn(move || {
                let output = host
                    .call(name, r#"{"sleep": 0.3}"#, &NonInteractivePrompter)
                    .unwrap();
                let (start, end): (f64, f64) = serde_json::from_str(&output.output).unwrap();
                spans.lock().unwrap().push((start, end));
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let mut spans = spans.lock().unwrap().clone();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    for pair in spans.windows(2) {
        assert!(
            pair[0].1 <= pair[1].0,
            "two calls overlapped on the servers' clocks: {spans:?}"
        );
    }
}

#[test]
fn a_server_that_stops_reading_its_stdin_is_given_up_on_and_calls_still_return() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {"bad": {"command": "python3", "args": [crate::common::mcp_fixture("misbehaving.py")], "callTimeout": 1000}},
        "permissions": {"allow": ["Mcp(bad__*)"]}}));
    let host = sandbox.host();
    let stalled = call(&host, "bad__stall", "{}").unwrap_err();
    assert!(stalled.contains("did not answer within 1s"), "{stalled}");
    // A server whose call timed out and that answers no ping is ended, not sent the next call
    // (1 MiB of input would not fit in the pipe of a server that reads nothing)...
    let big = json!({"text": "x".repeat(1 << 20)}).to_string();
    let blocked = call(&host, "bad__echo", &big).unwrap_err();
    assert!(
        blocked.contains("is not answering: its call to stall timed out after 1s")
            && blocked.contains("the next call restarts it once"),
        "{blocked}"
    );
    // ... and never a hang: the next call restarts it, and says why.
    let output = call(&host, "bad__echo", r#"{"text":"hi"}"#).expect("restarted");
    assert_eq!(output.output, "hi");
    let notice = output.notice.unwrap_or_default();
    assert!(notice.contains("stopped answering"), "{notice}");
}

#[test]
fn tool_search_finds_a_tool_a_server_added_after_the_first_search() {
    // Past 25 MCP tools, so tool_search is on; its index is built at the first search and must
    // not outlive a server's announced change.
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {
        "thirty": fixture_server("thirty_tools.py", &[]),
        "lc": fixture_server("list_changed.py", &[]),
    }, "permissions": {"allow": ["Mcp(lc__*)"]}}));
    let host = sandbox.host();
    assert!(host.tool_search_active());
    let search = |query: &str| {
        call(&host, "tool_search", &json!({ "query": query }).to_string())
            .unwrap()
            .output
    };
    assert!(search("zebra").starts_with("no MCP tool matches"));
    assert!(search("register a new tool").contains("lc__add_tool"));
    call(&host, "lc__add_tool", r#"{"name":"zebra_counter"}"#).unwrap();
    assert!(search("zebra").contains("lc__zebra_counter"));
}

/// The state of `server` as `mcp list` would show it.
fn state_of(host: &crate::common::TestHost, server: &str) -> ServerState {
    host.mcp()
        .expect("servers")
        .statuses()
        .into_iter()
        .find(|status| status.name == server)
        .expect("the server")
        .state
}

#[test]
fn a_server_whose_call_timed_out_fails_at_once_without_the_queue_until_it_answers_a_ping() {
    let sandbox = Sandbox::new();
    let log = sandbox.dir.path().join("late.log");
    let log_arg = log.display().to_string();
    sandbox.user_settings(json!({"mcpServers": {
            "late": {"command": "python3", "args": [crate::common::mcp_fixture("answers_late.py"), "--sleep", "4", "--log", &log_arg], "callTimeout": 700},
            "ok": fixture_server("misbehaving.py", &[]),
        },
        "permissions": {"allow": ["Mcp(late__*)", "Mcp(ok__*)"]}}));
    let host = sandbox.host();

    let timed_out = call(&host, "late__late", "{}").unwrap_err();
    assert!(
        timed_out.contains("server \"late\" did not answer within 700ms to late"),
        "{timed_out}"
    );
    let ServerState::Unresponsive(reason) = state_of(&host, "late") else {
        panic!(
            "late is reported unresponsive: {:?}",
            state_of(&host, "late")
        );
    };
    assert_eq!(reason, "its call to late timed out after 700ms");

    // Its next call is refused on a ping it does not answer: never sent, one line; the hung
    // server is ended so that the next call restarts it once.
    let refused = call(&host, "late__echo", r#"{"text":"hi"}"#).unwrap_err();
    assert_eq!(
        refused,
        "server \"late\" is not answering: its call to late timed out after 700ms, and it did not answer a ping within 700ms; it was ended, and the next call restarts it once"
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        !logged.contains("call echo"),
        "the call was never sent: {logged}"
    );

    // The other server's calls go on.
    assert_eq!(
        call(&host, "ok__echo", r#"{"text":"others"}"#)
            .unwrap()
            .output,
        "others"
    );
    assert!(matches!(
        state_of(&host, "ok"),
        ServerState::Connected { .. }
    ));

    let restarted = call(&host, "late__echo", r#"{"text":"again"}"#).expect("restarted");
    assert_eq!(restarted.output, "again");
    let notice = restarted.notice.unwrap_or_default();
    assert!(
        notice.contains("had stopped (stopped answering: its call to late timed out after 700ms")
            && notice.contains("restarted it"),
        "{notice}"
    );

    // Hung again after its one restart: it stays up, and its calls fail at once until it
    // answers a ping.
    call(&host, "late__late", "{}").unwrap_err();
    let refused = call(&host, "late__echo", r#"{"text":"hi"}"#).unwrap_err();
    assert_eq!(
        refused,
        "server \"late\" is not answering: its call to late timed out after 700ms, and it did not answer a ping within 700ms; its calls fail at once until it answers one"
    );
    assert!(matches!(
        state_of(&host, "late"),
        ServerState::Unresponsive(_)
    ));
    assert_eq!(
        call(&host, "ok__echo", r#"{"text":"still"}"#)
            .unwrap()
            .output,
        "still"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&log).unwrap().contains("woke") {
        assert!(Instant::now() < deadline, "the server never woke");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        call(&host, "late__echo", r#"{"text":"back"}"#)
            .unwrap()
            .output,
        "back"
    );
    assert!(matches!(
        state_of(&host, "late"),
        ServerState::Connected { .. }
    ));
}

/// A project server's script: an MCP server on the fixtures' `mcpfake` with `echo` and `die`.
fn project_server_script() -> String {
    let fixtures = std::path::Path::new(&crate::common::mcp_fixture("mcpfake.py"))
        .parent()
        .unwrap()
        .display()
        .to_string();
    format!(
        r#"import os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, {fixtures:?})
import mcpfake
from mcpfake import EMPTY_SCHEMA, object_schema, text
srv = mcpfake.Server("repo")
srv.tool("echo", "Echo.", object_schema(text="Text"), lambda a, _: text(str(a.get("text", ""))))
srv.tool("die", "Exit.", EMPTY_SCHEMA, lambda a, _: os._exit(1))
srv.run()
"#
    )
}

#[test]
fn a_restart_admits_the_server_again_so_a_pull_during_the_session_lapses_its_trust() {
    let sandbox = Sandbox::new();
    sandbox.write("tools/srv.py", project_server_script());
    sandbox.write(
        ".earshot/settings.json",
        serde_json::to_string(
            &json!({"mcpServers": {"repo": {"command": "python3", "args": ["tools/srv.py"]}}}),
        )
        .unwrap(),
    );
    sandbox.user_settings(
        json!({"mcpServers": {"ok": fixture_server("misbehaving.py", &[])},
        "permissions": {"allow": ["Mcp(repo__*)", "Mcp(ok__*)"]}}),
    );
    let (code, _, stderr) = sandbox.run(&["mcp", "trust", "repo"]);
    assert_eq!(code, 0, "{stderr}");
    let host = sandbox.host();
    assert_eq!(
        call(&host, "repo__echo", r#"{"text":"one"}"#)
            .unwrap()
            .output,
        "one"
    );

    // A pull in another terminal changes the script; then the server exits.
    let side_effect = sandbox.dir.path().join("pulled-code-ran");
    sandbox.write(
        "tools/srv.py",
        format!(
            "open({:?}, 'w').write('ran')\n{}",
            side_effect.display().to_string(),
            project_server_script()
        ),
    );
    let pid = host.mcp().unwrap().pid_of("repo").expect("running");
    assert!(
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    assert!(crate::common::wait_dead(pid));

    // What a new session says about it, word for word.
    let (_, stdout, _) = sandbox.run(&["mcp", "list", "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let fresh = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|server| server["name"] == "repo")
        .unwrap()["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        fresh.contains("changed since you trusted it") && fresh.contains("earshot mcp trust repo"),
        "{fresh}"
    );

    let refused = call(&host, "repo__echo", r#"{"text":"two"}"#).unwrap_err();
    assert_eq!(refused, format!("server \"repo\" is not started: {fresh}"));
    assert!(!side_effect.exists(), "the pulled code never ran");
    // And it stays refused, without a second look starting it.
    let again = call(&host, "repo__echo", r#"{"text":"three"}"#).unwrap_err();
    assert_eq!(again, refused);
    assert!(!side_effect.exists());
    assert!(matches!(
        state_of(&host, "repo"),
        ServerState::AwaitingTrust(_)
    ));

    // The other server is not affected.
    assert_eq!(
        call(&host, "ok__echo", r#"{"text":"fine"}"#)
            .unwrap()
            .output,
        "fine"
    );
}

#[test]
fn a_restart_of_an_unchanged_trusted_server_still_runs() {
    let sandbox = Sandbox::new();
    sandbox.write("tools/srv.py", project_server_script());
    sandbox.write(
        ".earshot/settings.json",
        serde_json::to_string(
            &json!({"mcpServers": {"repo": {"command": "python3", "args": ["tools/srv.py"]}}}),
        )
        .unwrap(),
    );
    sandbox.user_settings(json!({"permissions": {"allow": ["Mcp(repo__*)"]}}));
    assert_eq!(sandbox.run(&["mcp", "trust", "repo"]).0, 0);
    let host = sandbox.host();
    let died = call(&host, "repo__die", "{}").unwrap_err();
    assert!(died.contains("the next call restarts it once"), "{died}");
    let again = call(&host, "repo__echo", r#"{"text":"back"}"#).expect("restarted");
    assert_eq!(again.output, "back");
    assert!(again.notice.unwrap().contains("restarted it"));
}
