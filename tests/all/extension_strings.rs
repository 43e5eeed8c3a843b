//! Strings and regular expressions in extensions, through the real extension runtime: the same
//! JavaScript gives the same answers in earshot as in Node 22, every operation grows linearly
//! with its input, and a regular expression that backtracks forever still ends at the deadline.

use std::path::PathBuf;

use crate::common::Sandbox;
use crate::common::TestHost;
use crate::common::{assert_cases_match_node, host_with_json_tool};
use earshot_host::CallError;
use earshot_host::gate::NonInteractivePrompter;

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/strings")
        .join(name);
    std::fs::read_to_string(path).expect("fixture")
}

/// A host with one user extension `name` whose tool `run` returns `body` (a JS expression over
/// `input`) as JSON, after the given script prelude.
fn host_with_tool(sandbox: &Sandbox, name: &str, prelude: &str, body: &str) -> TestHost {
    host_with_json_tool(sandbox, name, prelude, body)
}

#[test]
fn every_string_and_regexp_case_answers_exactly_as_node_22() {
    assert_cases_match_node("strings/cases.js", "stringCases", 4000);
}

/// Linear with slack: ten times the input may cost at most fifteen times the time (a quadratic
/// operation costs about a hundred times).
const MAX_GROWTH: f64 = 15.0;

/// One measurement of how an operation's time grows for ten times the input.
struct Growth {
    op: String,
    growth: f64,
    line: String,
}

/// Measures `ops` (every operation when `None`) at 50 KB and 500 KB in one call.
fn measure_growth(host: &TestHost, ops: Option<&[String]>) -> Vec<Growth> {
    let input = serde_json::json!({ "ops": ops }).to_string();
    let output = host
        .call("scaling__run", &input, &NonInteractivePrompter)
        .expect("the measurements run");
    let results: serde_json::Value = serde_json::from_str(&output.output).expect("JSON");
    results
        .as_array()
        .unwrap()
        .iter()
        .map(|result| {
            let (small, large) = (
                result["small"].as_f64().unwrap(),
                result["large"].as_f64().unwrap(),
            );
            let growth = large / small.max(1.0);
            let op = result["op"].as_str().unwrap().to_string();
            let line = format!(
                "{:<22} {:>6} -> {:>7} bytes x{:<4}: {small:>5} ms -> {large:>6} ms, x{growth:.1}",
                op, result["smallBytes"], result["largeBytes"], result["reps"]
            );
            Growth { op, growth, line }
        })
        .collect()
}

// A growth ratio measured in one process: run alone (`.ci/run` runs the ignored tests on one
// thread after the rest), so the other tests' load cannot stretch one side of a ratio.
#[test]
#[ignore = "timing-sensitive: run alone, after the suite (`-- --ignored --test-threads=1`)"]
fn every_string_and_regexp_operation_grows_linearly_with_its_input() {
    // 50 KB and 500 KB (570 and 5,700 lines): ten times apart, as 100 KB and 1 MB would be, but
    // cheap enough for the debug build `cargo test` uses.
    let sandbox = Sandbox::new();
    let host = host_with_tool(
        &sandbox,
        "scaling",
        &fixture("text.js"),
        "(input.ops ?? Object.keys(textOps)).map((op: string) => scaling(op, 570, 5700, 15, 2))",
    );
    let first = measure_growth(&host, None);
    eprintln!(
        "{}",
        first
            .iter()
            .map(|g| g.line.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(first.len(), 28, "every operation was measured");
    // A busy machine can stretch one large run; an operation over the bound is measured twice
    // more and judged by its best run. A quadratic one grows about x100 every time.
    let mut over: Vec<String> = first
        .iter()
        .filter(|g| g.growth > MAX_GROWTH)
        .map(|g| g.op.clone())
        .collect();
    let mut lines: Vec<String> = Vec::new();
    for _ in 0..2 {
        if over.is_empty() {
            break;
        }
        let again = measure_growth(&host, Some(&over));
        eprintln!(
            "again:\n{}",
            again
                .iter()
                .map(|g| g.line.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
        lines = again
            .iter()
            .filter(|g| g.growth > MAX_GROWTH)
            .map(|g| g.line.clone())
            .collect();
        over = again
            .into_iter()
            .filter(|g| g.growth > MAX_GROWTH)
            .map(|g| g.op)
            .collect();
    }
    assert!(
        over.is_empty(),
        "grew more than x{MAX_GROWTH} for x10 input, three times:\n{}",
        lines.join("\n")
    );
}

#[test]
fn a_regexp_that_backtracks_forever_in_split_ends_at_the_deadline_and_costs_only_its_extension() {
    let sandbox = Sandbox::new();
    // Long enough (and Latin1) that split and replace take the native paths.
    sandbox.write_user_extension(
        "backtrack.ts",
        "const text = 'a'.repeat(300) + 'b';\n\
         export default { tools: [\n\
           { name: 'split', description: 'splits', inputSchema: { type: 'object' }, readOnly: true,\n\
             execute() { return String(text.split(/(a+)+$/).length); } },\n\
         ] };\n",
    );
    std::fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/extensions/jira.ts"),
        sandbox.config().join("extensions/jira.ts"),
    )
    .unwrap();
    std::fs::write(
        sandbox.config().join("settings.json"),
        r#"{"extensions": {"callTimeoutSeconds": 1}}"#,
    )
    .unwrap();
    let host = sandbox.host();
    let started = std::time::Instant::now();
    let stuck = host
        .call("backtrack__split", "{}", &NonInteractivePrompter)
        .unwrap_err();
    assert!(
        matches!(&stuck, CallError::Failed { message, .. } if message.contains("stuck in a call to split")),
        "{stuck}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    let output = host
        .call("jira__ticket", r#"{"key":"OK-2"}"#, &NonInteractivePrompter)
        .expect("another extension still answers");
    assert_eq!(output.output, "ticket OK-2");
}
