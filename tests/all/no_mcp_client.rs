//! A build without the MCP client (earshot-host's `mcp` and `serve` features off; run by
//! `.ci/run` with `--no-default-features --features js`): every MCP server the settings name is
//! reported by name as one this build cannot start, and is never started; everything else
//! (components, the gate, the settings commands) works as in a full build.

use crate::common::{Sandbox, hello_wasm};
use earshot_host::gate::NonInteractivePrompter;
use earshot_host::loaders::no_mcp::NO_MCP_CLIENT;

/// A user server that would leave a mark if anything ever started it, and a component.
fn with_server_and_component() -> Sandbox {
    let sandbox = Sandbox::new();
    let marker = sandbox.project().join("started");
    sandbox.user_settings(serde_json::json!({
        "mcpServers": {
            "notes": {
                "command": "sh",
                "args": ["-c", format!("touch '{}'; sleep 5", marker.display())]
            }
        }
    }));
    std::fs::create_dir_all(sandbox.config().join("plugins")).unwrap();
    std::fs::copy(hello_wasm(), sandbox.config().join("plugins/hello.wasm")).unwrap();
    sandbox
}

#[test]
fn a_server_is_reported_as_not_started_and_a_component_still_runs() {
    let sandbox = with_server_and_component();
    let host = sandbox.host();
    let registry = host.registry();
    let names: Vec<String> = registry
        .tools()
        .map(|tool| tool.model_name.clone())
        .collect();
    assert_eq!(names, ["hello__greet"], "no MCP tool is registered");
    let problems = registry.problems();
    assert!(
        problems
            .iter()
            .any(|line| line.contains("notes") && line.contains(NO_MCP_CLIENT)),
        "the server is named with the reason: {problems:?}"
    );
    drop(registry);
    assert!(
        host.mcp().is_none(),
        "a session holds no MCP client in this build"
    );
    let output = host
        .call("hello__greet", r#"{"name":"Ada"}"#, &NonInteractivePrompter)
        .expect("the component's read-only tool runs");
    assert!(output.output.contains("Ada"), "{}", output.output);
    assert!(
        !sandbox.project().join("started").exists(),
        "the server's command never ran"
    );
}

#[test]
fn the_command_lists_the_server_with_the_reason_and_refuses_what_needs_the_client() {
    let sandbox = with_server_and_component();
    let (code, out, err) = sandbox.run(&["mcp", "list"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("notes") && out.contains("no MCP client"),
        "the server is listed with why it did not start: {out}"
    );
    let (code, out, err) = sandbox.run(&["tools", "list"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("hello__greet"), "{out}");
    assert!(
        err.contains("notes") && err.contains("no MCP client"),
        "stderr names the server and why: {err}"
    );
    for args in [&["mcp", "serve"][..], &["mcp", "login", "notes"][..]] {
        let (code, out, err) = sandbox.run(args);
        assert_ne!(code, 0, "{args:?} fails: {out}{err}");
        assert!(
            err.contains("no MCP client") && err.contains("`mcp` feature"),
            "{args:?} says why in one line: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    // Editing the settings needs no client.
    let (code, out, err) = sandbox.run(&["mcp", "add", "-s", "user", "other", "--", "true"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        std::fs::read_to_string(sandbox.config().join("settings.json"))
            .unwrap()
            .contains("\"other\""),
        "the server was added"
    );
    assert!(
        !sandbox.project().join("started").exists(),
        "no command started the server"
    );
}
