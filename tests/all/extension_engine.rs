//! What earshot changes in Boa's engine and built-ins beyond strings (issue 19), through the real
//! extension runtime: a `for…of` over an array steps without result objects (vendor/boa_engine)
//! and `sort((a, b) => a - b)` sorts natively (host/src/extensions/numeric_sort.rs). The same
//! JavaScript must give the same answers in earshot as in Node 22.

use crate::common::assert_cases_match_node;

#[test]
fn array_iteration_and_numeric_sorts_answer_exactly_as_node_22() {
    assert_cases_match_node("engine/cases.js", "engineCases", 200);
}
