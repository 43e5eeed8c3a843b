//! A build without the JS runtime (earshot-host's `js` feature off; run by `.ci/run` with
//! `--no-default-features`): every extension the settings would load is reported by name as one
//! this build cannot run, and everything else (components, the gate) works as in a full build.

use crate::common::{Sandbox, hello_wasm};
use earshot_host::gate::NonInteractivePrompter;
use earshot_host::loaders::no_extensions::NO_JS_RUNTIME;

const EXTENSION: &str = r#"export default { tools: [{ name: "ping", description: "p",
  inputSchema: { type: "object" }, readOnly: true, execute: () => "pong" }] };"#;

fn with_extension_and_component() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_user_extension("notes.ts", EXTENSION);
    std::fs::create_dir_all(sandbox.config().join("plugins")).unwrap();
    std::fs::copy(hello_wasm(), sandbox.config().join("plugins/hello.wasm")).unwrap();
    sandbox
}

#[test]
fn an_extension_is_reported_as_not_loadable_and_a_component_still_runs() {
    let sandbox = with_extension_and_component();
    let host = sandbox.host();
    let registry = host.registry();
    let names: Vec<String> = registry
        .tools()
        .map(|tool| tool.model_name.clone())
        .collect();
    assert_eq!(names, ["hello__greet"], "no extension tool is registered");
    let problems = registry.problems();
    assert!(
        problems
            .iter()
            .any(|line| line.contains("notes") && line.contains(NO_JS_RUNTIME)),
        "the extension is named with the reason: {problems:?}"
    );
    drop(registry);
    let output = host
        .call("hello__greet", r#"{"name":"Ada"}"#, &NonInteractivePrompter)
        .expect("the component's read-only tool runs");
    assert!(output.output.contains("Ada"), "{}", output.output);
}

#[test]
fn the_command_lists_the_extension_with_the_reason_and_its_tools_as_none() {
    let sandbox = with_extension_and_component();
    let (code, out, err) = sandbox.run(&["tools", "list"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("hello__greet"), "{out}");
    assert!(!out.contains("notes__ping"), "{out}");
    assert!(
        err.contains("notes") && err.contains("no TypeScript/JavaScript runtime"),
        "stderr names the extension and why: {err}"
    );
}
