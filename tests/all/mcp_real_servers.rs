//! Real MCP servers from npm and PyPI, through `earshot`: `@modelcontextprotocol/server-everything`
//! over stdio and over streamable HTTP (loopback), and a Python server on the PyPI `mcp` package.

use std::time::Duration;

use crate::common::{Sandbox, free_port, mcp_parts, mcp_python};
use serde_json::{Value, json};

fn everything_stdio() -> Value {
    let bin = mcp_parts().join("node_modules/.bin/mcp-server-everything");
    json!({"command": bin.display().to_string(), "args": ["stdio"]})
}

#[test]
fn server_everything_over_stdio_lists_and_calls_through_the_gate() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {"every": everything_stdio()},
        "permissions": {"allow": ["Mcp(every__echo)", "Mcp(every__get-sum)", "Mcp(every__get-env)", "Mcp(every__get-roots-list)"]}}));
    let (code, stdout, stderr) = sandbox.run(&["mcp", "list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(listed["servers"][0]["state"], "connected", "{listed}");
    assert!(
        listed["servers"][0]["tools"].as_u64().unwrap() >= 10,
        "{listed}"
    );

    let (code, stdout, stderr) = sandbox.run(&["tools", "list"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("every__echo"), "{stdout}");
    assert!(
        stdout.contains("claims read-only (not believed)"),
        "{stdout}"
    );

    let (code, stdout, stderr) = sandbox.run(&[
        "tools",
        "call",
        "every__echo",
        r#"{"message":"hello there"}"#,
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("hello there"), "{stdout}");
    let (code, stdout, _) =
        sandbox.run(&["tools", "call", "every__get-sum", r#"{"a": 2, "b": 40}"#]);
    assert_eq!(code, 0);
    assert!(stdout.contains("42"), "{stdout}");

    // The project is the server's one MCP root, though the server (the user's own) starts
    // outside it.
    let (code, stdout, stderr) = sandbox.run(&["tools", "call", "every__get-roots-list", "{}"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(&format!("URI: file://{}", sandbox.project().display())),
        "{stdout}"
    );

    // Its get-env prints its whole environment: only the minimal set reaches it.
    let output = sandbox
        .earshot()
        .env("EARSHOT_TEST_SECRET_TOKEN", "hunter2")
        .args(["tools", "call", "every__get-env", "{}"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(stdout.contains("PATH"), "{stdout}");
    assert!(!stdout.contains("hunter2"), "{stdout}");

    // readOnlyHint is not believed: no rule, not interactive, denied.
    let (code, _, stderr) = sandbox.run(&["tools", "call", "every__get-tiny-image", "{}"]);
    assert_eq!(code, 3, "{stderr}");
}

#[test]
fn server_everything_over_streamable_http_on_loopback() {
    let (mut server, port) = crate::common::everything_over_http();
    let sandbox = Sandbox::new();
    sandbox.user_settings(
        json!({"mcpServers": {"web": {"type": "http", "url": format!("http://127.0.0.1:{port}/mcp"),
        "headers": {"X-Earshot-Test": "${EARSHOT_TEST_HEADER:-yes}"}}},
        "permissions": {"allow": ["Mcp(web__*)"]}}),
    );
    let (code, stdout, stderr) =
        sandbox.run(&["tools", "call", "web__echo", r#"{"message":"over http"}"#]);
    let (list_code, listed, _) = sandbox.run(&["mcp", "list"]);
    server.kill().ok();
    server.wait().ok();
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("over http"), "{stdout}");
    assert_eq!(list_code, 0);
    assert!(
        listed.contains("web   user   http       connected"),
        "{listed}"
    );
}

#[test]
fn a_python_server_on_the_pypi_mcp_package_over_stdio() {
    let sandbox = Sandbox::new();
    let script = mcp_parts().join("python_server.py");
    sandbox.user_settings(json!({"mcpServers": {"py": {"command": mcp_python(), "args": [script.display().to_string()]}},
        "permissions": {"allow": ["Mcp(py__*)"]}}));
    let (code, stdout, stderr) =
        sandbox.run(&["tools", "call", "py__add", r#"{"a": 20, "b": 22}"#]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("42"), "{stdout}");
    let (code, stdout, _) = sandbox.run(&["tools", "call", "py__shout", r#"{"text": "quiet"}"#]);
    assert_eq!(code, 0);
    assert!(stdout.contains("QUIET"), "{stdout}");
    let (code, _, stderr) = sandbox.run(&["tools", "call", "py__add", r#"{"a": "x", "b": 1}"#]);
    assert_eq!(code, 4, "refused before it reached the server: {stderr}");
}

#[test]
fn ctrl_c_during_a_call_cancels_it_on_a_remote_server_before_earshot_exits() {
    // A Python server on the PyPI `mcp` package over streamable HTTP: it is not one of earshot's
    // process groups, so only notifications/cancelled can stop its work.
    let port = free_port();
    let mut server = std::process::Command::new(mcp_python())
        .arg(mcp_parts().join("python_server.py"))
        .args(["--http", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the python server starts");
    crate::common::wait_listening(port, Duration::from_secs(30));

    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({
        "mcpServers": {"py": {"type": "http", "url": format!("http://127.0.0.1:{port}/mcp")}},
        "permissions": {"allow": ["Mcp(py__wait)"]},
    }));
    let note = sandbox.dir.path().join("wait-note.txt");
    let input = json!({"seconds": 60, "note": note.display().to_string()}).to_string();
    let earshot = sandbox
        .earshot()
        .args(["tools", "call", "py__wait", &input])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("earshot runs");
    let read_note = || std::fs::read_to_string(&note).unwrap_or_default();
    let started = (0..300).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        read_note().contains("started")
    });
    assert!(started, "the call never reached the server");
    // SAFETY: kill only sends a signal to the child we spawned.
    unsafe {
        libc::kill(earshot.id() as i32, libc::SIGINT);
    }
    let output = earshot.wait_with_output().expect("earshot exits");
    assert_eq!(output.status.code(), Some(130), "{output:?}");
    let cancelled = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        read_note().contains("cancelled")
    });
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        cancelled,
        "the server never heard the cancellation: {}",
        read_note()
    );
}
