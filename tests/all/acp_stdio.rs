//! The real `earshot acp` binary driven over stdio by an independent editor: the official ACP
//! TypeScript SDK (`fixtures/acp-client/drive.mjs`, installed by `.ci/run`). The same promises as
//! `acp.rs`, across a real process boundary and another implementation of the protocol.

// Its MCP tests are compiled out without the MCP client; what only they use goes with them.
#![cfg_attr(not(feature = "mcp"), allow(dead_code, unused_imports))]

use serde_json::{Value, json};

use crate::common::{Sandbox, fixture_server};

fn client_dir() -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/acp-client");
    assert!(
        dir.join("node_modules/@agentclientprotocol/sdk").exists(),
        "the ACP client is not installed: run `npm ci --prefix fixtures/acp-client` (as .ci/run does)"
    );
    dir
}

#[cfg(feature = "mcp")]
#[test]
fn an_independent_editor_that_allows_everything_cannot_run_a_denied_tool_or_spawn_a_process() {
    let sandbox = Sandbox::new();
    let sentinel = sandbox.dir.path().join("sentinel");
    let spawned = sandbox.dir.path().join("spawned-by-editor");
    sandbox.user_settings(json!({
        "mcpServers": {"sentinel": fixture_server("sentinel.py", &["--path", sentinel.to_str().unwrap()])},
        "permissions": {"deny": ["Mcp(sentinel__touch)"]},
    }));
    let output = std::process::Command::new("node")
        .arg(client_dir().join("drive.mjs"))
        .arg(env!("CARGO_BIN_EXE_earshot"))
        .arg(sandbox.project())
        .arg(&spawned)
        .env("EARSHOT_CONFIG_DIR", sandbox.config())
        .env_remove("RUST_LOG")
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let seen: Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(seen["asks"], 0, "a denied call reached the editor: {seen}");
    assert_eq!(seen["statuses"], json!(["failed"]), "{seen}");
    assert_eq!(seen["stop"], "end_turn");
    assert_eq!(
        seen["exitCode"], 0,
        "earshot acp ends when the editor closes stdin"
    );
    assert!(!sentinel.exists(), "the denied tool ran");
    assert!(
        !spawned.exists(),
        "an editor's stdio definition was started"
    );
    let kinds: Vec<&str> = seen["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["stdio", "stdio", "stdio", "sse"]);
    let messages = seen["messages"].to_string();
    assert!(messages.contains("is denied by the rule"), "{messages}");
    assert!(
        !sandbox
            .project()
            .join(".earshot/settings.local.json")
            .exists(),
        "a rule was written"
    );
}

#[test]
fn a_call_with_bad_json_is_refused_before_any_tool_call_is_reported() {
    let sandbox = Sandbox::new();
    let sentinel = sandbox.dir.path().join("sentinel");
    sandbox.user_settings(json!({
        "mcpServers": {"sentinel": fixture_server("sentinel.py", &["--path", sentinel.to_str().unwrap()])},
        "permissions": {"allow": ["Mcp(sentinel__touch)"]},
    }));
    let run = |prompt: &str| -> Value {
        let output = std::process::Command::new("node")
            .arg(client_dir().join("drive.mjs"))
            .arg(env!("CARGO_BIN_EXE_earshot"))
            .arg(sandbox.project())
            .arg(sandbox.dir.path().join("spawned-by-editor"))
            .arg(prompt)
            .env("EARSHOT_CONFIG_DIR", sandbox.config())
            .env_remove("RUST_LOG")
            .output()
            .expect("node runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{stdout}");
        serde_json::from_str(stdout.trim()).expect("one JSON line")
    };
    let seen = run("/call sentinel__touch {not json");
    assert_eq!(
        seen["statuses"],
        json!([]),
        "no tool call is reported: {seen}"
    );
    let messages = seen["messages"].to_string();
    assert!(
        messages.contains("the input for sentinel__touch is not JSON")
            && messages.contains("nothing was called"),
        "{messages}"
    );
    assert!(!sentinel.exists(), "the tool ran");

    let help = run("what can you do?")["messages"].to_string();
    assert!(help.contains("/call NAME"), "{help}");
    assert!(
        !help.contains("demo__greet"),
        "the example names no tool a project lacks: {help}"
    );
}
