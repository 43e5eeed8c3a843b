//! What earshot changes in Boa's engine and built-ins beyond strings (issue 19), through the real
//! extension runtime: a `for…of` over an array steps without result objects (vendor/boa_engine)
//! and `sort((a, b) => a - b)` sorts natively (host/src/extensions/numeric_sort.rs). The same
//! JavaScript must give the same answers in earshot as in Node 22.

use std::path::PathBuf;

use crate::common::{Sandbox, host_with_json_tool, node_json, node22};
use earshot_host::gate::NonInteractivePrompter;

#[test]
fn array_iteration_and_numeric_sorts_answer_exactly_as_node_22() {
    let Some(node) = node22() else { return };
    let cases = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/engine/cases.js"),
    )
    .expect("fixtures/engine/cases.js");
    let sandbox = Sandbox::new();
    let host = host_with_json_tool(&sandbox, "engine", &cases, "engineCases()");
    let output = host
        .call("engine__run", "{}", &NonInteractivePrompter)
        .expect("the cases run");
    let earshot: serde_json::Value = serde_json::from_str(&output.output).expect("JSON");
    let node = node_json(
        &node,
        sandbox.dir.path(),
        &format!("{cases}\nprocess.stdout.write(JSON.stringify(engineCases()));\n"),
    );
    let (earshot, node) = (earshot.as_array().unwrap(), node.as_array().unwrap());
    assert!(earshot.len() > 200, "{} cases", earshot.len());
    assert_eq!(earshot.len(), node.len(), "the same cases ran");
    let differences: Vec<String> = earshot
        .iter()
        .zip(node)
        .filter(|(ours, theirs)| ours != theirs)
        .map(|(ours, theirs)| {
            let show = |v: &serde_json::Value| v.to_string().chars().take(300).collect::<String>();
            format!(
                "{}\n    earshot {}\n    node    {}",
                ours[0],
                show(&ours[1]),
                show(&theirs[1])
            )
        })
        .collect();
    assert!(
        differences.is_empty(),
        "{} of {} cases differ from Node 22:\n{}",
        differences.len(),
        node.len(),
        differences.join("\n")
    );
}
