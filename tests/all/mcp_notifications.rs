//! What servers say while they work: server-everything's progress during
//! `trigger-long-running-operation` reaches the session's progress callback; a server that
//! floods progress and log notifications costs only itself.

use std::sync::{Arc, Mutex};

use earshot_host::gate::NonInteractivePrompter;
use earshot_host::mcp::CallProgress;
use earshot_host::{HostBuilder, Settings};
use serde_json::json;

use crate::common::{Sandbox, block_on, fixture_server, mcp_parts, shared_cache};

/// Runs `tool` with `input` on a session of `servers`, collecting the progress it reports.
fn call_collecting_progress(
    servers: serde_json::Value,
    tool: &str,
    input: &str,
) -> (String, Vec<CallProgress>, String) {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": servers, "permissions": {"allow": ["Mcp(*)"]}}));
    let settings = Settings::load(
        Some(&sandbox.config()),
        Some(earshot_host::ProjectPaths::new(sandbox.project())),
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let (output, other) = block_on(async move {
        let host = HostBuilder::new(settings)
            .cache(shared_cache())
            .call_progress(Arc::new(move |progress: &CallProgress| {
                sink.lock().unwrap().push(progress.clone())
            }))
            .build()
            .await
            .expect("host loads");
        let output = host
            .call(tool, input, &NonInteractivePrompter)
            .await
            .expect("the call succeeds")
            .output;
        let other = match host
            .call("clock__echo", r#"{"text":"fine"}"#, &NonInteractivePrompter)
            .await
        {
            Ok(output) => output.output,
            Err(error) => error.to_string(),
        };
        host.shutdown().await;
        (output, other)
    });
    let seen = seen.lock().unwrap().clone();
    (output, seen, other)
}

#[test]
fn server_everything_reports_progress_during_a_long_running_operation() {
    let bin = mcp_parts().join("node_modules/.bin/mcp-server-everything");
    let (output, seen, _) = call_collecting_progress(
        json!({"every": {"command": bin.display().to_string(), "args": ["stdio"]}}),
        "every__trigger-long-running-operation",
        r#"{"duration": 1, "steps": 4}"#,
    );
    assert!(
        output.contains("Long running operation completed"),
        "{output}"
    );
    assert!(!seen.is_empty(), "no progress reached the callback");
    assert!(
        seen.iter()
            .all(|p| p.server == "every" && p.total == Some(4.0)),
        "{seen:?}"
    );
    assert_eq!(seen.last().unwrap().progress, 4.0, "{seen:?}");
}

#[test]
fn a_server_that_floods_progress_and_logs_costs_only_itself() {
    let (output, seen, other) = call_collecting_progress(
        json!({
            "flood": fixture_server("floods_notifications.py", &[]),
            "clock": fixture_server("clock.py", &[]),
        }),
        "flood__flood",
        "{}",
    );
    assert_eq!(output, "done");
    // 20,000 reports sent; the callback sees a rate-limited few, cleaned.
    assert!(
        !seen.is_empty() && seen.len() < 2_000,
        "{} reports",
        seen.len()
    );
    assert!(
        seen.iter()
            .all(|p| p.message.as_deref().is_none_or(|m| !m.contains('\u{1b}'))),
        "escape sequences reached the callback"
    );
    assert_eq!(other, "fine", "another server still answers");
}

#[test]
fn server_log_messages_show_with_v_only_and_at_most_a_hundred_a_minute() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({
        "mcpServers": {"flood": fixture_server("floods_notifications.py", &[])},
        "permissions": {"allow": ["Mcp(*)"]},
    }));
    let (code, stdout, stderr) = sandbox.run(&["tools", "call", "flood__flood"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "done");
    assert!(
        !stderr.contains("log 0"),
        "server logs are off by default: {stderr}"
    );

    let (code, _, stderr) = sandbox.run(&["-v", "tools", "call", "flood__flood"]);
    assert_eq!(code, 0);
    let shown = stderr
        .lines()
        .filter(|line| line.contains("log ") && !line.contains("more than 100"))
        .count();
    assert_eq!(shown, 100, "20,000 sent, 100 shown");
    assert!(
        stderr.contains(
            "more than 100 log messages in a minute; the rest of this minute's are dropped"
        ),
        "{}",
        stderr.lines().rev().take(5).collect::<Vec<_>>().join("\n")
    );
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains("pwned\u{7}"),
        "escapes removed"
    );
}
