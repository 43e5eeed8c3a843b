//! The component loader end to end: trusted components' tools are listed and called through the
//! gate and the validator; untrusted or changed ones never load; hostile, broken, foreign and
//! future components are reported at load or cost only their own call.

use crate::common::TestHost;
use crate::common::{Sandbox, VALIDATOR_WASM, future_wasm, hello_wasm, hostile_wasm};
use earshot_host::CallError;
use earshot_host::gate::{NonInteractivePrompter, PermissionPrompt, PromptAnswer};

/// Answers every ask with "once": used where a test is about what happens after the gate.
struct AllowOnce;
crate::sync_prompter!(AllowOnce);
impl AllowOnce {
    fn answer(&self, _prompt: &PermissionPrompt) -> PromptAnswer {
        PromptAnswer::AllowOnce
    }
}

fn user_plugin(sandbox: &Sandbox, name: &str, wasm: &str) {
    std::fs::create_dir_all(sandbox.config().join("plugins")).unwrap();
    std::fs::copy(wasm, sandbox.config().join(format!("plugins/{name}.wasm"))).unwrap();
}

fn names(host: &TestHost) -> Vec<String> {
    host.registry()
        .tools()
        .map(|tool| tool.model_name.clone())
        .collect()
}

#[test]
fn a_user_component_is_listed_and_its_read_only_tool_runs_without_asking() {
    let sandbox = Sandbox::new();
    user_plugin(&sandbox, "hello", hello_wasm());
    let host = sandbox.host();
    assert_eq!(names(&host), ["hello__greet"]);
    let registry = host.registry();
    let tool = registry.find("hello__greet").unwrap();
    assert_eq!(tool.id.rule(), "Plugin(hello__greet)");
    assert!(tool.read_only);
    let output = host
        .call("hello__greet", r#"{"name":"Ada"}"#, &NonInteractivePrompter)
        .expect("runs");
    assert_eq!(output.output, "Hello, Ada!");
    assert_eq!(output.title.as_deref(), Some("greeting"));
}

#[test]
fn a_tool_that_is_not_read_only_goes_through_the_gate() {
    let sandbox = Sandbox::new();
    user_plugin(&sandbox, "hostile", hostile_wasm());
    let host = sandbox.host();
    let denied = host
        .call("hostile__echo", "{}", &NonInteractivePrompter)
        .expect_err("needs approval");
    assert!(
        matches!(&denied, CallError::Denied(reason) if reason.contains("run `earshot permissions allow 'Plugin(hostile__echo)'")),
        "{denied}"
    );

    std::fs::write(sandbox.config().join("settings.json"), r#"{"permissions": {"allow": ["Plugin(hostile__echo)"], "deny": ["Plugin(hostile__read_*)"]}}"#).unwrap();
    let host = sandbox.host();
    assert_eq!(
        host.call("hostile__echo", r#"{"x":1}"#, &NonInteractivePrompter)
            .unwrap()
            .output,
        r#"{"x":1}"#
    );
    let denied = host
        .call("hostile__read_file", "{}", &AllowOnce)
        .expect_err("a deny rule wins over the prompt");
    assert!(matches!(denied, CallError::Denied(_)));
}

#[test]
fn input_is_validated_before_the_tool_runs() {
    let sandbox = Sandbox::new();
    user_plugin(&sandbox, "hello", hello_wasm());
    let host = sandbox.host();
    let error = host
        .call("hello__greet", r#"{"name": "", "extra": true}"#, &AllowOnce)
        .expect_err("invalid");
    let CallError::InvalidInput { tool, issues } = &error else {
        panic!("expected invalid input, got {error:?}")
    };
    assert_eq!(tool, "hello__greet");
    assert!(
        issues
            .iter()
            .any(|issue| issue.starts_with("/name: \"\" is shorter than 1 character")),
        "{issues:?}"
    );
    assert!(
        issues.iter().any(|issue| issue.contains("extra")),
        "{issues:?}"
    );
    let error = host
        .call("hello__greet", "{not json", &AllowOnce)
        .expect_err("not JSON");
    assert!(error.to_string().contains("it is not JSON"), "{error}");
    let error = host
        .call("hello__wave", "{}", &AllowOnce)
        .expect_err("unknown");
    assert_eq!(error, CallError::UnknownTool("hello__wave".into()));
}

#[test]
fn an_untrusted_project_component_is_not_loaded_until_trusted_and_a_change_lapses_it() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/plugins/hello.wasm",
        std::fs::read(hello_wasm()).unwrap(),
    );
    let host = sandbox.host();
    assert!(names(&host).is_empty());
    assert_eq!(
        host.registry().problems(),
        [
            "plugin \"hello\": not loaded: not trusted: the repository added it; run `earshot plugins trust hello` to load it"
        ]
    );

    assert_eq!(sandbox.run(&["plugins", "trust", "hello"]).0, 0);
    assert_eq!(names(&sandbox.host()), ["hello__greet"]);

    let mut changed = std::fs::read(hello_wasm()).unwrap();
    changed.extend_from_slice(b"\0appended");
    sandbox.write(".earshot/plugins/hello.wasm", changed);
    let host = sandbox.host();
    assert!(names(&host).is_empty());
    assert!(host.registry().problems()[0].contains("changed since you trusted it"));
}

#[test]
fn hostile_tools_cost_only_their_call_and_the_component_answers_the_next() {
    let sandbox = Sandbox::new();
    user_plugin(&sandbox, "hostile", hostile_wasm());
    let host = sandbox.host();
    let cases = [
        ("hostile__spin", "ran past its 300ms CPU deadline"),
        ("hostile__hog", "over its cap of 67108864 bytes"),
        (
            "hostile__panic",
            "panicked: hostile-tool panicked on purpose",
        ),
    ];
    for (tool, expected) in cases {
        let error = host.call(tool, "{}", &AllowOnce).expect_err("fails");
        let CallError::Failed { message, .. } = &error else {
            panic!("{tool}: expected a failure, got {error:?}")
        };
        assert!(
            message.starts_with(&format!("{tool} failed: component \"hostile\" ")),
            "{tool}: {message}"
        );
        assert!(message.contains(expected), "{tool}: {message}");
        let echoed = host
            .call("hostile__echo", r#"{"still":"here"}"#, &AllowOnce)
            .expect("next call works");
        assert_eq!(echoed.output, r#"{"still":"here"}"#);
    }
}

#[test]
fn bad_tool_declarations_are_reported_and_cost_only_themselves() {
    let sandbox = Sandbox::new();
    user_plugin(&sandbox, "hostile", hostile_wasm());
    let host = sandbox.host();
    let problems = host.registry().problems();
    assert!(problems.iter().any(|p| p.starts_with("plugin \"hostile\": tool \"bad_schema\" skipped: its input schema is rejected: the schema is not a valid JSON Schema:")), "{problems:?}");
    assert!(
        problems.iter().any(|p| p.starts_with(
            "plugin \"hostile\": tool 11 skipped: invalid name: \"_edge\" starts or ends with '_'"
        )),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(
            |p| p == "plugin \"hostile\": tool \"echo\" is listed twice; the second is skipped"
        ),
        "{problems:?}"
    );
    assert!(names(&host).contains(&"hostile__echo".to_string()));
    assert!(
        !names(&host)
            .iter()
            .any(|name| name.contains("bad_schema") || name.contains("edge"))
    );
}

#[test]
fn foreign_broken_and_future_components_are_reported_at_load() {
    let sandbox = Sandbox::new();
    user_plugin(&sandbox, "hello", hello_wasm());
    user_plugin(&sandbox, "validator", VALIDATOR_WASM);
    user_plugin(&sandbox, "future", future_wasm());
    std::fs::write(
        sandbox.config().join("plugins/notes.wasm"),
        "just some text",
    )
    .unwrap();
    // A core module, not a component.
    std::fs::write(
        sandbox.config().join("plugins/core.wasm"),
        b"\0asm\x01\0\0\0",
    )
    .unwrap();
    let host = sandbox.host();
    let problems = host.registry().problems();
    let find = |name: &str| {
        problems
            .iter()
            .find(|p| p.starts_with(&format!("plugin \"{name}\"")))
            .cloned()
            .unwrap_or_default()
    };
    assert!(
        find("notes").contains("could not be compiled"),
        "{problems:?}"
    );
    assert!(
        find("core").contains("could not be compiled"),
        "{problems:?}"
    );
    assert!(
        find("validator")
            .contains("does not implement earshot:plugin/tool-provider@0.2.0 (or @0.1.0)"),
        "{problems:?}"
    );
    assert!(
        find("future")
            .contains("does not implement earshot:plugin/tool-provider@0.2.0 (or @0.1.0)"),
        "{problems:?}"
    );
    assert_eq!(
        names(&host),
        ["hello__greet"],
        "the good component still loads"
    );
}

#[test]
fn the_cli_lists_and_calls_component_tools_with_the_documented_exit_codes() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/plugins/hello.wasm",
        std::fs::read(hello_wasm()).unwrap(),
    );
    sandbox.write(
        ".earshot/plugins/hostile.wasm",
        std::fs::read(hostile_wasm()).unwrap(),
    );
    let (code, stdout, _) = sandbox.run(&["plugins", "list"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("hello    project") && stdout.contains("not trusted"),
        "{stdout}"
    );
    assert_eq!(sandbox.run(&["plugins", "trust", "hello"]).0, 0);
    let (code, _, stderr) = sandbox.run(&["plugins", "trust", "hostile"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, _) = sandbox.run(&["plugins", "list", "--json"]);
    assert_eq!(code, 0);
    let listed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(listed["plugins"][0]["name"], "hello");
    assert_eq!(listed["plugins"][0]["state"], "trusted");
    assert_eq!(listed["plugins"][0]["tools"], serde_json::json!(["greet"]));

    let (code, stdout, _) = sandbox.run(&["tools", "list", "--json"]);
    assert_eq!(code, 0);
    let listed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(listed["tools"][0]["name"], "hello__greet");
    assert_eq!(
        listed["tools"][0]["input_schema"]["required"],
        serde_json::json!(["name"])
    );

    let (code, stdout, _) = sandbox.run(&["tools", "call", "hello__greet", r#"{"name":"Ada"}"#]);
    assert_eq!((code, stdout.as_str()), (0, "Hello, Ada!\n"));
    let (code, _, stderr) = sandbox.run(&["tools", "call", "hello__greet", r#"{"name":7}"#]);
    assert_eq!(code, 4, "{stderr}");
    let (code, _, stderr) = sandbox.run(&["tools", "call", "hostile__echo", "{}"]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("no terminal to ask on"), "{stderr}");
    // Escape sequences a tool returns never reach the terminal.
    std::fs::write(
        sandbox.config().join("settings.json"),
        r#"{"permissions": {"allow": ["Plugin(hostile__escape)"]}}"#,
    )
    .unwrap();
    let (code, stdout, _) = sandbox.run(&["tools", "call", "hostile__escape", "{}"]);
    assert_eq!((code, stdout.as_str()), (0, "clearedline\nnext\n"));
    let (code, _, stderr) = sandbox.run(&["tools", "call", "nope__x", "{}"]);
    assert_eq!(code, 5, "no such tool has its own exit code");
    assert_eq!(
        stderr.lines().last().unwrap(),
        "error: no tool named \"nope__x\"; `earshot tools list` shows what is available"
    );
}
