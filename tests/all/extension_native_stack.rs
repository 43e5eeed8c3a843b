//! One extension cannot abort the process through the native stack (issue 32): built-ins that
//! recurse in Rust instead of in JavaScript frames (`fixtures/extensions/deep_natives.ts`) throw
//! `RangeError: Maximum call stack size exceeded` into that one call, as Node does, and the same
//! extension and the one beside it answer their next calls. Without the vendored engine's check
//! each of these overflowed the JS thread's stack, which aborts the whole process (this test
//! binary with it).

use std::path::PathBuf;

use crate::common::{Sandbox, TestHost};
use earshot_host::gate::NonInteractivePrompter;

/// What the user sees when a built-in runs out of native stack, up to its position.
const RANGE_ERROR: &str = "execute threw: RangeError: Maximum call stack size exceeded (at ";

/// A host with the hostile `deep_natives` extension and, beside it, the `jira` example.
fn host() -> (Sandbox, TestHost) {
    let sandbox = Sandbox::new();
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/extensions");
    for file in ["deep_natives.ts", "jira.ts"] {
        sandbox.write_user_extension(file, &std::fs::read_to_string(fixtures.join(file)).unwrap());
    }
    std::fs::write(
        sandbox.config().join("settings.json"),
        r#"{"extensions": {"callTimeoutSeconds": 1200}}"#,
    )
    .unwrap();
    let host = sandbox.host();
    (sandbox, host)
}

/// Calls `deep_natives__TOOL`: it must fail with `expected` in the one line the user sees, at a
/// line of the fixture; then the same extension and the other one must still answer.
fn contained(host: &TestHost, tool: &str, expected: &str) {
    let name = format!("deep_natives__{tool}");
    let error = match host.call(&name, "{}", &NonInteractivePrompter) {
        Err(error) => error.to_string(),
        Ok(output) => panic!("{tool} answered: {}", output.output),
    };
    assert!(
        error.starts_with(&format!("{name} failed: ")) && error.contains(expected),
        "{tool}: {error}"
    );
    assert!(error.contains("deep_natives.ts:"), "{tool}: {error}");
    answers(host, tool);
}

/// The hostile extension and the one beside it both answer.
fn answers(host: &TestHost, after: &str) {
    let pong = host
        .call("deep_natives__ping", "{}", &NonInteractivePrompter)
        .unwrap_or_else(|error| panic!("ping after {after}: {error}"));
    assert_eq!(
        (pong.is_error, pong.output.as_str()),
        (false, "pong"),
        "{after}"
    );
    let ticket = host
        .call("jira__ticket", r#"{"key":"K-1"}"#, &NonInteractivePrompter)
        .unwrap_or_else(|error| panic!("jira after {after}: {error}"));
    assert_eq!(ticket.output, "ticket K-1", "{after}");
}

#[test]
fn array_built_ins_on_deep_nesting_throw_a_range_error_into_their_call_only() {
    let (_sandbox, host) = host();
    for tool in ["join", "to_string", "flat", "to_sorted", "with"] {
        contained(&host, tool, RANGE_ERROR);
    }
}

#[test]
fn serialising_deep_nesting_throws_a_range_error_into_its_call_only() {
    let (_sandbox, host) = host();
    for tool in [
        "json_stringify",
        "structured_clone_arrays",
        "structured_clone_objects",
        "structured_clone_maps",
    ] {
        contained(&host, tool, RANGE_ERROR);
    }
}

#[test]
fn every_internal_method_through_a_proxy_chain_throws_a_range_error_into_its_call_only() {
    let (_sandbox, host) = host();
    for tool in [
        "proxy_get",
        "proxy_set",
        "proxy_has",
        "proxy_own_keys",
        "proxy_define",
        "proxy_get_prototype_of",
        "object_to_string",
    ] {
        contained(&host, tool, RANGE_ERROR);
    }
}

#[test]
fn conversion_and_call_chains_end_in_an_error_of_their_own_call_or_answer() {
    let (_sandbox, host) = host();
    // `toString` as `Array.prototype.join` on array-likes: native all the way down.
    contained(&host, "array_like_join", RANGE_ERROR);
    // `instanceof` a bound function asks its target, through [[Get]] each time.
    contained(&host, "bound_instanceof", RANGE_ERROR);
    // `valueOf` written in JavaScript: each level is a call from Rust, which the recursion limit
    // counts first.
    contained(
        &host,
        "value_of_chain",
        "RuntimeLimitError: reached the maximum number of recursive calls",
    );
    // Chains of bound functions and of trapless proxies are called in a loop: they answer.
    let output = host
        .call("deep_natives__call_chains", "{}", &NonInteractivePrompter)
        .expect("call_chains");
    assert_eq!(output.output, "called true proxied");
    answers(&host, "call_chains");
}

/// Boa's parser recurses once per level of nesting: `eval` and `new Function` pass the nesting
/// check the extension's own files pass (also when the nesting is split across parameters).
#[test]
fn code_compiled_at_run_time_nested_too_deep_is_a_syntax_error_of_its_call_only() {
    let (_sandbox, host) = host();
    for tool in ["eval", "function_parameters"] {
        contained(
            &host,
            tool,
            "execute threw: SyntaxError: code compiled at run time: nests deeper than 1000 levels",
        );
    }
}

#[test]
fn the_range_error_can_be_caught_by_the_extension_as_in_node() {
    let (_sandbox, host) = host();
    let output = host
        .call("deep_natives__caught", "{}", &NonInteractivePrompter)
        .expect("caught");
    assert_eq!(
        (output.is_error, output.output.as_str()),
        (false, "caught RangeError: Maximum call stack size exceeded")
    );
    answers(&host, "caught");
}
