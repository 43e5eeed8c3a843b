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
    // 1 MiB of input cannot fit in the pipe of a server that reads nothing.
    let big = json!({"text": "x".repeat(1 << 20)}).to_string();
    let blocked = call(&host, "bad__echo", &big).unwrap_err();
    assert!(
        blocked.contains("did not answer within 1s")
            || blocked.contains("stopped reading its stdin"),
        "{blocked}"
    );
    // Never a hang: the stalled server was given up on, and the next call restarts it (and says
    // why) or is refused with the reason.
    match call(&host, "bad__echo", r#"{"text":"hi"}"#) {
        Ok(output) => {
            let notice = output.notice.unwrap_or_default();
            assert!(notice.contains("stopped reading its stdin"), "{notice}");
        }
        Err(error) => assert!(error.contains("stopped reading its stdin"), "{error}"),
    }
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
