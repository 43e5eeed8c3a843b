//! Hostile guests: each attack gets its own clear, typed error, and the same sandbox answers
//! the next call. Nothing is granted: no files, no environment, no sockets.

use crate::common::{TIGHT, hostile_wasm, load_tool};
use earshot_host::sandbox::{SandboxError, SandboxLimits, ToolComponent};

fn hostile() -> ToolComponent {
    load_tool("hostile", hostile_wasm(), TIGHT)
}

/// The component still answers after a failure: proves the store was replaced.
fn assert_still_answers(component: &ToolComponent) {
    let echoed = component
        .call("echo", r#"{"after":"failure"}"#)
        .expect("echo after failure");
    assert_eq!(echoed.output, r#"{"after":"failure"}"#);
    assert!(!echoed.is_error);
}

#[test]
fn an_infinite_loop_is_stopped_at_the_cpu_deadline() {
    let component = hostile();
    let error = component
        .call("spin", "{}")
        .expect_err("spin never returns");
    match &error {
        SandboxError::Timeout {
            component,
            deadline,
        } => {
            assert_eq!(component, "hostile");
            assert_eq!(*deadline, TIGHT.cpu_deadline);
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert_eq!(
        error.to_string(),
        "component \"hostile\" ran past its 300ms CPU deadline and was stopped; its next call starts fresh"
    );
    assert_still_answers(&component);
}

#[test]
fn a_memory_hog_hits_the_memory_cap() {
    // The memory cap is under test, not the clock: filling 64 MiB on a loaded 2-core machine
    // (the whole suite runs in parallel) can outlast the tight 300 ms deadline, so this one gets
    // a deadline it cannot reach first.
    let component = load_tool(
        "hostile",
        hostile_wasm(),
        SandboxLimits {
            cpu_deadline: std::time::Duration::from_secs(30),
            ..TIGHT
        },
    );
    let error = component.call("hog", "{}").expect_err("hog never returns");
    match &error {
        SandboxError::MemoryLimit {
            component,
            limit,
            requested,
        } => {
            assert_eq!(component, "hostile");
            assert_eq!(*limit, TIGHT.memory_bytes);
            assert!(
                requested > limit,
                "requested {requested} should exceed the cap {limit}"
            );
        }
        other => panic!("expected a memory-limit error, got {other:?}"),
    }
    assert!(
        error.to_string().contains("over its cap of 67108864 bytes"),
        "{error}"
    );
    assert_still_answers(&component);
}

#[test]
fn a_panic_is_reported_with_its_message() {
    let component = hostile();
    let error = component
        .call("panic", "{}")
        .expect_err("panic fails the call");
    match &error {
        SandboxError::Panic { component, message } => {
            assert_eq!(component, "hostile");
            assert!(
                message.starts_with("hostile-tool panicked on purpose (at "),
                "{message}"
            );
            assert!(message.contains("src/lib.rs:"), "{message}");
        }
        other => panic!("expected a panic error, got {other:?}"),
    }
    assert_still_answers(&component);
}

#[test]
fn failures_in_a_row_each_cost_one_call() {
    let component = hostile();
    for tool in ["spin", "hog", "panic", "spin"] {
        assert!(component.call(tool, "{}").is_err(), "{tool} should fail");
        assert_still_answers(&component);
    }
}

#[test]
fn a_guest_cannot_read_files() {
    let component = hostile();
    let output = component
        .call("read_file", "{}")
        .expect("call returns")
        .output;
    assert!(
        output.starts_with("passwd: Err("),
        "read /etc/passwd: {output}"
    );
    assert!(
        output.contains("cwd: Err("),
        "read the current directory: {output}"
    );
}

#[test]
fn a_guest_sees_no_environment_and_no_arguments() {
    let component = hostile();
    let output = component
        .call("read_env", "{}")
        .expect("call returns")
        .output;
    assert_eq!(output, "vars: 0; HOME: Err(NotPresent); args: 0");
}

#[test]
fn a_guest_cannot_open_sockets() {
    // A listener proves there was something to connect to on loopback.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let _ = listener.local_addr();
    let component = hostile();
    let output = component
        .call("open_socket", "{}")
        .expect("call returns")
        .output;
    assert!(output.starts_with("connect: Err("), "{output}");
}

#[test]
fn a_file_that_is_not_a_component_is_refused_at_load() {
    let (_dir, cache) = crate::common::temp_cache();
    let error = ToolComponent::load(
        &earshot_host::sandbox::SandboxEngine::shared(),
        &cache,
        "notes",
        b"this is a text file, not wasm",
        TIGHT,
    )
    .err()
    .expect("text is not a component");
    assert!(matches!(error, SandboxError::Compile { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with("component \"notes\" could not be compiled: "),
        "{error}"
    );
}

#[test]
fn a_component_of_another_world_is_refused_at_load() {
    let (_dir, cache) = crate::common::temp_cache();
    let bytes = std::fs::read(crate::common::VALIDATOR_WASM).expect("validator component");
    let error = ToolComponent::load(
        &earshot_host::sandbox::SandboxEngine::shared(),
        &cache,
        "validator",
        &bytes,
        TIGHT,
    )
    .err()
    .expect("the validator is not a tool provider");
    match &error {
        SandboxError::WrongShape {
            component,
            expected,
            ..
        } => {
            assert_eq!(component, "validator");
            assert_eq!(expected, "earshot:plugin/tool-provider@0.2.0 (or @0.1.0)");
        }
        other => panic!("expected a wrong-shape error, got {other:?}"),
    }
}

#[test]
fn a_guest_that_keeps_writing_to_stderr_keeps_working() {
    let component = hostile();
    // 10 KB a call against a 16 KiB stderr buffer: without a fresh store in time, the third
    // call's write would fail inside the guest.
    for call in 0..12 {
        let output = component
            .call("chatty", "{}")
            .unwrap_or_else(|error| panic!("call {call}: {error}"));
        assert_eq!(output.output, "chatted");
    }
}
