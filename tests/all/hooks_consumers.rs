//! The same PreToolUse hook fires on a call made through `earshot tools call` and through the
//! embedding API (`earshot acp` and `earshot mcp serve` have theirs in `acp.rs` and
//! `mcp_serve.rs`): a block is a denial like the gate's everywhere.

// Its MCP tests are compiled out without the MCP client; what only they use goes with them.
#![cfg_attr(not(feature = "mcp"), allow(dead_code, unused_imports))]

use earshot_host::{CallError, HookTool, NonInteractivePrompter};
use serde_json::json;

use crate::common::block_on;
use crate::hooks::{handler, on, project};

#[cfg(feature = "mcp")]
#[test]
fn a_blocked_call_exits_3_from_tools_call_and_is_call_error_denied_to_an_embedder() {
    let (sandbox, sentinel) = project(json!({
        "permissions": {"allow": ["Mcp(sentinel__touch)"]},
        "hooks": on("PreToolUse", "Mcp(sentinel__touch)", vec![handler("guard", &["exit", "2", "blocked for everyone"])]),
    }));
    let (code, stdout, stderr) = sandbox.run(&["tools", "call", "sentinel__touch", "{}"]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(
        stderr.contains("sentinel__touch was blocked by hook \"guard\": blocked for everyone"),
        "{stderr}"
    );
    assert!(!sentinel.exists());
    let host = sandbox.host();
    match host.call("sentinel__touch", "{}", &NonInteractivePrompter) {
        Err(CallError::Denied(reason)) => assert!(reason.contains("hook \"guard\""), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(!sentinel.exists());
}

#[test]
fn an_embedders_own_tool_is_matched_by_its_rule_and_a_rewrite_comes_back_to_be_gated() {
    let (sandbox, _) = project(json!({
        "hooks": on("PreToolUse", "Bash(git *)", vec![
            handler("no-force", &["print", r#"{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no force pushes"}}"#]),
        ]),
    }));
    let host = sandbox.host();
    let (report, _) = block_on(host.fire_pre_tool_use(
        &HookTool::embedder("Bash", "git push --force"),
        json!({"command": "git push --force"}),
        json!({"decision": "allow", "rule": "Bash(git *)", "source": "user"}),
    ));
    assert_eq!(report.blocked(), Some(("no-force", "no force pushes")));
    let (report, rewritten) = block_on(host.fire_pre_tool_use(
        &HookTool::embedder("Bash", "ls"),
        json!({"command": "ls"}),
        json!(null),
    ));
    assert!(
        report.outcomes.is_empty() && rewritten.is_none(),
        "{report:?}"
    );
}
