//! MCP resources for the user (`earshot mcp resources`, `earshot mcp read`) and for a model (the
//! `list_mcp_resources` and `read_mcp_resource` host tools, gated as `Mcp(server__resources)`):
//! server-everything's static resources and templates, and a hostile server's.

use earshot_host::CallError;
use earshot_host::gate::NonInteractivePrompter;
use serde_json::{Value, json};

use crate::common::{Sandbox, block_on, fixture_server, mcp_parts};

fn everything_stdio() -> Value {
    let bin = mcp_parts().join("node_modules/.bin/mcp-server-everything");
    json!({"command": bin.display().to_string(), "args": ["stdio"]})
}

const ARCHITECTURE: &str = "demo://resource/static/document/architecture.md";

#[test]
fn server_everything_resources_are_listed_and_read_from_the_cli() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {"every": everything_stdio()}}));

    let (code, stdout, stderr) = sandbox.run(&["mcp", "resources", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    let listed = listed.as_array().unwrap();
    let architecture = listed.iter().find(|r| r["uri"] == ARCHITECTURE);
    assert_eq!(
        architecture.map(|r| r["mimeType"].clone()),
        Some(json!("text/markdown")),
        "{listed:?}"
    );
    let template = listed
        .iter()
        .find(|r| r["uri"] == "demo://resource/dynamic/text/{resourceId}")
        .expect("the text template is listed");
    assert_eq!(template["template"], true);

    let (code, stdout, stderr) = sandbox.run(&["mcp", "read", "every", ARCHITECTURE]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with(&format!("[resource {ARCHITECTURE} (text/markdown)]"))
            && stdout.contains("Architecture"),
        "{stdout}"
    );
    // A template filled in, and a blob (summarised, never dumped as base64).
    let (code, stdout, _) =
        sandbox.run(&["mcp", "read", "every", "demo://resource/dynamic/text/3"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("Resource 3: This is a plaintext resource"),
        "{stdout}"
    );
    let (code, stdout, _) =
        sandbox.run(&["mcp", "read", "every", "demo://resource/dynamic/blob/2"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("[resource demo://resource/dynamic/blob/2: text/plain,")
            && stdout.contains("bytes]"),
        "{stdout}"
    );
}

#[test]
fn a_model_reads_resources_only_through_the_gate() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {"every": everything_stdio()}}));
    let host = sandbox.host();
    let names: Vec<String> = host
        .model_tools()
        .into_iter()
        .map(|tool| tool.name)
        .collect();
    assert!(
        names.contains(&"list_mcp_resources".to_string())
            && names.contains(&"read_mcp_resource".to_string()),
        "{names:?}"
    );
    let listing = host
        .call("list_mcp_resources", "{}", &NonInteractivePrompter)
        .expect("listing is not gated");
    assert!(
        listing
            .output
            .contains(&format!("every resource {ARCHITECTURE}")),
        "{}",
        listing.output
    );
    // No rule and no one to ask: denied, with the one rule that would allow it.
    let input = json!({"server": "every", "uri": ARCHITECTURE}).to_string();
    let denied = host.call("read_mcp_resource", &input, &NonInteractivePrompter);
    match denied {
        Err(CallError::Denied(reason)) => assert!(
            reason.contains("every__resources needs approval")
                && reason.contains("earshot permissions allow 'Mcp(every__resources)'"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    let bad = host.call(
        "read_mcp_resource",
        r#"{"server": "every"}"#,
        &NonInteractivePrompter,
    );
    assert!(
        matches!(bad, Err(CallError::InvalidInput { .. })),
        "{bad:?}"
    );

    // With the rule, the model reads it.
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {"every": everything_stdio()},
        "permissions": {"allow": ["Mcp(every__resources)"]}}));
    let host = sandbox.host();
    let read = host
        .call("read_mcp_resource", &input, &NonInteractivePrompter)
        .expect("allowed by the rule");
    assert!(read.output.contains("Architecture"), "{}", read.output);
}

#[test]
fn a_deny_rule_over_a_server_hides_and_refuses_its_resources_even_when_the_user_asks() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({
        "mcpServers": {"every": everything_stdio()},
        "permissions": {"deny": ["Mcp(every__*)"]},
    }));
    let (code, stdout, stderr) = sandbox.run(&["mcp", "read", "every", ARCHITECTURE]);
    assert_eq!(code, 3, "{stdout}");
    assert!(
        stderr.contains("every__resources is denied by the rule \"Mcp(every__*)\""),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "{stdout}");
    let (code, stdout, stderr) = sandbox.run(&["mcp", "resources", "every", "--json"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stderr.contains("denied by the rule"), "{stderr}");
}

#[test]
fn a_hostile_servers_resources_cost_only_themselves() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({
        "mcpServers": {
            "bad": fixture_server("hostile_resources.py", &[]),
            "endless": fixture_server("hostile_resources.py", &["--endless"]),
            "clock": fixture_server("clock.py", &[]),
        },
        "permissions": {"allow": ["Mcp(*)"]},
    }));
    let host = sandbox.host();

    // Three pages are followed; malformed items are skipped; endless paging stops at the cap
    // and costs only that server.
    let (found, failures) = block_on(host.0.mcp_resources(None));
    let mut uris: Vec<&str> = found.iter().map(|r| r.uri.as_str()).collect();
    uris.sort();
    assert_eq!(
        uris,
        ["demo://escapes", "demo://huge", "demo://many", "demo://ok"]
    );
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0]
            .to_string()
            .contains("server \"endless\" kept paging resources/list past 50 pages"),
        "{}",
        failures[0]
    );

    let read = |uri: &str| {
        block_on(
            host.0
                .read_mcp_resource("bad", uri, &NonInteractivePrompter),
        )
    };
    // The list changes (and the server says so): the next listing shows it.
    let ok = read("demo://ok").expect("ok reads");
    assert_eq!(ok.text, "[resource demo://ok (text/plain)]\nall good");
    let (found, _) = block_on(host.0.mcp_resources(Some("bad")));
    assert!(found.iter().any(|r| r.uri == "demo://added"), "{found:?}");
    let escapes = read("demo://escapes").expect("usable once cleaned");
    assert!(escapes.text.contains("before") && escapes.text.contains("after"));
    assert!(
        !escapes.text.contains('\u{1b}')
            && !escapes.text.contains('\u{7}')
            && !escapes.text.contains('\u{202e}'),
        "{:?}",
        escapes.text
    );
    match read("demo://many") {
        Err(CallError::Failed { message, .. }) => {
            assert!(message.contains("5000 contents"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    // 20 MB in one message: the connection is stopped, the error says so.
    match read("demo://huge") {
        Err(CallError::Failed { message, .. }) => {
            assert!(message.starts_with("server \"bad\""), "{message}")
        }
        other => panic!("{other:?}"),
    }
    // Its tool named `resources` would share the reading rule (allowed here by Mcp(*)): skipped.
    let tool = host.call("bad__resources", "{}", &NonInteractivePrompter);
    // (Its server has just been stopped, so the call says that instead; either way it never runs.)
    assert!(
        matches!(&tool, Err(CallError::UnknownTool(_)))
            || matches!(&tool, Err(CallError::Failed { message, .. }) if message.contains("is not connected")),
        "{tool:?}"
    );
    assert!(
        host.registry()
            .problems()
            .iter()
            .any(|problem| problem.contains("reserved for reading the server's resources")),
        "{:?}",
        host.registry().problems()
    );
    // The other servers are unaffected.
    let echoed = host
        .call("clock__echo", r#"{"text":"fine"}"#, &NonInteractivePrompter)
        .expect("clock still answers");
    assert_eq!(echoed.output, "fine");
}
