//! MCP prompts as slash commands, through `earshot mcp prompts` / `earshot mcp prompt` and the
//! embedding API: server-everything's real prompts (none, optional and required arguments, an
//! embedded resource), deny rules, and a hostile server's prompts.

use std::collections::BTreeMap;

use earshot_host::CallError;
use serde_json::{Value, json};

use crate::common::{Sandbox, block_on, fixture_server, mcp_parts};

fn everything_stdio() -> Value {
    let bin = mcp_parts().join("node_modules/.bin/mcp-server-everything");
    json!({"command": bin.display().to_string(), "args": ["stdio"]})
}

#[test]
fn server_everything_prompts_are_slash_commands_that_print_their_messages() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {"every": everything_stdio()}}));

    let (code, stdout, stderr) = sandbox.run(&["mcp", "prompts", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    let find = |name: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} not listed: {listed}"))
    };
    assert_eq!(
        find("simple-prompt")["command"],
        "/mcp__every__simple-prompt"
    );
    let args = find("args-prompt");
    assert_eq!(args["arguments"][0]["name"], "city");
    assert_eq!(args["arguments"][0]["required"], true);
    assert_eq!(args["arguments"][1]["name"], "state");
    assert_eq!(args["arguments"][1]["required"], false);

    let (code, stdout, stderr) = sandbox.run(&["mcp", "prompts", "every"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("/mcp__every__args-prompt") && stdout.contains("city [state]"),
        "{stdout}"
    );

    let (code, stdout, stderr) = sandbox.run(&["mcp", "prompt", "every", "simple-prompt"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with("[user]\n") && stdout.contains("simple prompt"),
        "{stdout}"
    );

    let (code, stdout, stderr) = sandbox.run(&[
        "mcp",
        "prompt",
        "every",
        "args-prompt",
        "city=Paris",
        "state=Texas",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("What's weather in Paris, Texas?"),
        "{stdout}"
    );

    // A required argument left out: the line says which, and how to give it.
    let (code, stdout, stderr) = sandbox.run(&["mcp", "prompt", "every", "args-prompt"]);
    assert_eq!(code, 2, "{stdout}");
    assert!(
        stderr.contains("/mcp__every__args-prompt needs \"city\"; give city=VALUE"),
        "{stderr}"
    );
    let (code, _, stderr) = sandbox.run(&["mcp", "prompt", "every", "args-prompt", "Paris"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("\"Paris\" is not KEY=VALUE"), "{stderr}");

    // A prompt with an embedded resource: the resource is rendered for the model.
    let (code, stdout, stderr) = sandbox.run(&[
        "mcp",
        "prompt",
        "every",
        "resource-prompt",
        "resourceType=Text",
        "resourceId=3",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("demo://resource/dynamic/text/3"),
        "{stdout}"
    );

    let (code, _, stderr) = sandbox.run(&["mcp", "prompt", "every", "no-such-prompt"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("no prompt /mcp__every__no-such-prompt; `earshot mcp prompts every`"),
        "{stderr}"
    );
}

#[test]
fn a_deny_rule_over_a_server_refuses_its_prompts_before_anything_is_asked_of_it() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({
        "mcpServers": {"every": everything_stdio()},
        "permissions": {"deny": ["Mcp(every__*)"]},
    }));
    let (code, stdout, stderr) = sandbox.run(&["mcp", "prompt", "every", "simple-prompt"]);
    assert_eq!(code, 3, "{stdout}");
    assert!(
        stderr.contains("every__simple-prompt is denied by the rule \"Mcp(every__*)\""),
        "{stderr}"
    );
    assert!(
        stdout.is_empty(),
        "nothing of the prompt was printed: {stdout}"
    );
    // A denied prompt is not offered either.
    let (code, stdout, _) = sandbox.run(&["mcp", "prompts", "every"]);
    assert_eq!(code, 0);
    assert!(!stdout.contains("/mcp__every__simple-prompt"), "{stdout}");
}

#[test]
fn a_hostile_servers_prompts_cost_only_themselves() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {
        "bad": fixture_server("hostile_prompts.py", &[]),
        "clock": fixture_server("clock.py", &[]),
    }}));
    let host = sandbox.host();

    // Malformed items and a name with control characters are skipped; the rest is listed.
    let (prompts, failures) = block_on(host.0.mcp_prompts(None));
    assert!(failures.is_empty(), "{failures:?}");
    let mut names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["escapes", "flood", "ok", "wrong-role"]);

    // Escape sequences never reach the text: the normaliser removes control characters.
    let messages = block_on(host.0.get_mcp_prompt("bad", "escapes", &BTreeMap::new()))
        .expect("the prompt is usable once cleaned");
    let text = &messages[0].text;
    assert!(text.contains("before") && text.contains("after"), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{202e}'),
        "{text:?}"
    );

    // Too many messages, or a role that does not exist: a one-line error naming the server.
    let flood = block_on(host.0.get_mcp_prompt("bad", "flood", &BTreeMap::new()));
    match flood {
        Err(CallError::Failed { message, .. }) => assert!(
            message.contains("server \"bad\" answered prompt flood")
                && message.contains("5000 messages"),
            "{message}"
        ),
        other => panic!("{other:?}"),
    }
    let role = block_on(host.0.get_mcp_prompt("bad", "wrong-role", &BTreeMap::new()));
    assert!(
        matches!(&role, Err(CallError::Failed { message, .. }) if message.contains("neither user nor assistant")),
        "{role:?}"
    );

    // The same server's good prompt, and another server, are unaffected.
    let who = BTreeMap::from([("who".to_string(), "there".to_string())]);
    let ok = block_on(host.0.get_mcp_prompt("bad", "ok", &who)).expect("ok answers");
    assert_eq!(ok[0].text, "hello there");
    assert_eq!(ok[0].role, "user");
    let (clock_prompts, _) = block_on(host.0.mcp_prompts(Some("clock")));
    assert!(clock_prompts.is_empty(), "clock declares no prompts");
}
