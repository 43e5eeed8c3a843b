//! One extension's data or load costs only that extension (issue 54, class C).
//!
//! * What an extension returns is turned into JSON without recursion and within the MCP result
//!   reader's limits (125 levels of nesting, 16 MiB): `structuredContent` or `content` 30,000
//!   levels deep used to abort `earshot mcp serve` and `earshot acp` with a stack overflow. Now
//!   the call fails with one line naming the extension and the limit, through `tools call`, the
//!   library and `mcp serve` alike, and the next call (to it, or to another tool) answers.
//! * The WebCrypto pool gives each extension a share: one extension flooding it with PBKDF2
//!   derivations of 2^31 iterations no longer starves another's `generateKey`, and when the
//!   flooding call times out its derivations stop (its next call's derivations run at once).

use std::path::Path;

use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use serde_json::{Value, json};

use crate::common::{Sandbox, TestHost, block_on};
use earshot_host::gate::NonInteractivePrompter;

/// The deepest nesting the host takes from a tool: what an MCP server's result may nest inside
/// its JSON-RPC message (serde_json refuses a 128th level).
const MAX_DEPTH: usize = 125;

/// An extension that returns what its input asks for: nesting of any depth in
/// `structuredContent` or in a `content` block, wide values, long output, a cycle.
const DEEP: &str = r#"
const build = (depth: number, kind: string): any => {
  let value: any = 1;
  for (let i = 0; i < depth; i++) value = kind === "array" ? [value] : { a: value };
  return value;
};
const tool = (name: string, execute: (input: any) => any) => ({
  name, description: `returns ${name}`, inputSchema: { type: "object" }, readOnly: true, execute,
});
export default {
  tools: [
    // `depth` levels in all, the outermost counted.
    tool("nested", (input) => {
      const kind = input.kind ?? "object";
      if (input.field === "content") {
        return { output: "deep content", content: [{ type: "text", text: "x", extra: build(input.depth - 2, kind) }] };
      }
      const structuredContent = kind === "array" ? { a: build(input.depth - 1, "array") } : build(input.depth, "object");
      return { output: "deep", structuredContent };
    }),
    tool("wide", (input) => ({ output: "wide", structuredContent: { items: new Array(input.count).fill("x".repeat(input.size ?? 1)) } })),
    tool("long", (input) => "x".repeat(input.bytes)),
    tool("cycle", () => { const o: any = { n: 1 }; o.self = o; return { output: "cycle", structuredContent: o }; }),
    tool("ping", () => "pong"),
  ],
};
"#;

/// A sandbox with `deep.ts` and the `jira` example beside it.
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_user_extension("deep.ts", DEEP);
    let jira = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/extensions/jira.ts");
    sandbox.write_user_extension("jira.ts", &std::fs::read_to_string(jira).unwrap());
    sandbox
}

/// The one line a refused result fails with, through the library.
fn refused(host: &TestHost, tool: &str, input: Value) -> String {
    match host.call(tool, &input.to_string(), &NonInteractivePrompter) {
        Err(error) => {
            let line = error.to_string();
            assert!(!line.contains('\n'), "{line}");
            assert!(
                line.starts_with(&format!("{tool} failed: extension \"deep\" returned ")),
                "{line}"
            );
            line
        }
        Ok(output) => panic!("{tool} {input} answered: {:.200}", output.output),
    }
}

/// The extension that returned too much, and the one beside it, both answer their next calls.
fn both_answer(host: &TestHost, after: &str) {
    let pong = host.call("deep__ping", "{}", &NonInteractivePrompter);
    assert_eq!(pong.expect(after).output, "pong", "{after}");
    let ticket = host.call("jira__ticket", r#"{"key":"K-1"}"#, &NonInteractivePrompter);
    assert_eq!(ticket.expect(after).output, "ticket K-1", "{after}");
}

/// How deep a JSON value nests (the outermost array or object is level 1).
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

#[test]
fn thirty_thousand_levels_fail_the_call_with_one_line_and_nothing_else() {
    let sandbox = sandbox();
    let host = sandbox.host();
    for (kind, field) in [
        ("object", "structuredContent"),
        ("array", "structuredContent"),
        ("object", "content"),
        ("array", "content"),
    ] {
        let line = refused(
            &host,
            "deep__nested",
            json!({"depth": 30_000, "kind": kind, "field": field}),
        );
        assert!(
            line.contains(&format!(
                "a `{field}` that nests deeper than 125 levels of arrays and objects"
            )) && line.contains("as an MCP server's: 125 levels, 16 MiB"),
            "{line}"
        );
        both_answer(&host, &format!("{kind} {field}"));
    }
    // At the limit, the value comes back whole.
    let output = host
        .call(
            "deep__nested",
            &json!({"depth": MAX_DEPTH}).to_string(),
            &NonInteractivePrompter,
        )
        .expect("125 levels are taken");
    assert_eq!(
        output.structured_content.as_ref().map(depth),
        Some(MAX_DEPTH)
    );
}

#[test]
fn too_wide_or_too_long_fails_the_call_and_a_cycle_is_named() {
    let sandbox = sandbox();
    let host = sandbox.host();
    // 17,000 strings of 1,000 bytes are over 16 MiB as JSON; so is a 17 MiB output.
    let line = refused(&host, "deep__wide", json!({"count": 17_000, "size": 1000}));
    assert!(
        line.contains("a `structuredContent` that is larger than 16 MiB as JSON"),
        "{line}"
    );
    both_answer(&host, "wide");
    let line = refused(&host, "deep__long", json!({"bytes": 17 << 20}));
    assert!(
        line.contains("an output that is larger than 16 MiB as JSON"),
        "{line}"
    );
    both_answer(&host, "long");
    // Under the limit, all of it.
    let wide = host
        .call(
            "deep__wide",
            r#"{"count": 100000}"#,
            &NonInteractivePrompter,
        )
        .expect("100,000 strings are taken");
    assert_eq!(
        wide.structured_content.unwrap()["items"]
            .as_array()
            .unwrap()
            .len(),
        100_000
    );
    // A cycle is a value JSON cannot hold: the tool's error output says so, as JSON.stringify would.
    let cycle = host
        .call("deep__cycle", "{}", &NonInteractivePrompter)
        .expect("an error output");
    assert!(cycle.is_error);
    assert!(
        cycle.output.starts_with("execute returned an object whose `structuredContent` cannot be read as JSON (it holds itself (a cycle), which JSON cannot)"),
        "{}",
        cycle.output
    );
    both_answer(&host, "cycle");
}

#[test]
fn through_tools_call_the_process_lives_and_says_one_line() {
    let sandbox = sandbox();
    for field in ["structuredContent", "content"] {
        let input = json!({"depth": 30_000, "field": field}).to_string();
        let (code, stdout, stderr) = sandbox.run(&["tools", "call", "deep__nested", &input]);
        // An exit code, not a signal (a stack overflow aborts with SIGABRT, no code).
        assert_eq!(code, 1, "{stdout}\n{stderr}");
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert!(
            lines[0].contains("deep__nested failed: extension \"deep\" returned")
                && lines[0].contains("nests deeper than 125 levels"),
            "{stderr}"
        );
    }
    let (code, stdout, stderr) = sandbox.run(&["tools", "call", "deep__ping", "{}"]);
    assert_eq!((code, stdout.trim()), (0, "pong"), "{stderr}");
}

/// `earshot mcp serve` under the PyPI `mcp` client: the call is an error result, the server
/// lives, and the next calls (to the same extension, to another) answer.
#[cfg(feature = "mcp")]
#[test]
fn through_mcp_serve_the_call_is_an_error_and_the_server_lives() {
    use crate::common::mcp_python;
    use std::process::Command;

    let sandbox = sandbox();
    sandbox.user_settings(json!({}));
    let steps = json!([
        {"op": "call", "name": "deep__nested", "args": {"depth": 30_000}},
        {"op": "call", "name": "jira__ticket", "args": {"key": "OK-1"}},
        {"op": "call", "name": "deep__nested", "args": {"depth": 30_000, "field": "content", "kind": "array"}},
        {"op": "call", "name": "deep__ping"},
        {"op": "call", "name": "deep__nested", "args": {"depth": MAX_DEPTH}},
    ]);
    let output = Command::new(mcp_python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/mcp/clients/serve_client.py"))
        .arg(env!("CARGO_BIN_EXE_earshot"))
        .arg(sandbox.project())
        .arg(sandbox.config())
        .arg(steps.to_string())
        .arg("--no-elicitation")
        .output()
        .expect("the client runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the client failed (did the server die?): {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let out: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(out.len(), 5, "{stdout}");
    for step in [0, 2] {
        assert_eq!(out[step]["is_error"], json!(true), "{}", out[step]);
        let text = out[step]["text"].as_str().unwrap();
        assert!(
            text.contains("extension \"deep\" returned")
                && text.contains("nests deeper than 125 levels"),
            "{text}"
        );
        assert_eq!(out[step]["structured"], Value::Null, "{}", out[step]);
    }
    assert!(
        out[1]["text"].as_str().unwrap().contains("OK-1"),
        "{}",
        out[1]
    );
    assert_eq!(out[3]["text"], json!("pong"), "{}", out[3]);
    assert_eq!(out[4]["is_error"], json!(false), "{}", out[4]);
    assert_eq!(depth(&out[4]["structured"]), MAX_DEPTH, "{}", out[4]);
}

/// Any depth, either kind, either field: taken whole up to the limit, refused past it with the
/// one line; the extension answers after each.
#[test]
fn depths_around_the_limit_are_taken_or_refused_exactly() {
    let sandbox = sandbox();
    let host = sandbox.host();
    let levels = prop_oneof![MAX_DEPTH - 4..=MAX_DEPTH + 4, 3usize..3_000];
    let mut runner = TestRunner::new(ProptestConfig {
        cases: 40,
        ..ProptestConfig::default()
    });
    runner
        .run(
            &(levels, any::<bool>(), any::<bool>()),
            |(levels, array, content)| {
                let kind = if array { "array" } else { "object" };
                let field = if content {
                    "content"
                } else {
                    "structuredContent"
                };
                let input = json!({"depth": levels, "kind": kind, "field": field});
                let answer = host.call("deep__nested", &input.to_string(), &NonInteractivePrompter);
                if levels <= MAX_DEPTH {
                    let output = answer.unwrap_or_else(|error| panic!("{input}: {error}"));
                    if content {
                        assert_eq!(output.content.len(), 2, "{input}");
                    } else {
                        let got = output.structured_content.as_ref().map(depth);
                        assert_eq!(got, Some(levels), "{input}");
                    }
                } else {
                    let line = answer.expect_err(&input.to_string()).to_string();
                    assert!(
                        line.contains("nests deeper than 125 levels") && !line.contains('\n'),
                        "{input}: {line}"
                    );
                }
                let pong = host.call("deep__ping", "{}", &NonInteractivePrompter);
                assert_eq!(pong.expect("ping").output, "pong");
                Ok(())
            },
        )
        .unwrap();
}

/// Wide values: taken under 16 MiB, refused over it.
#[test]
fn widths_are_taken_or_refused_by_their_size() {
    let sandbox = sandbox();
    let host = sandbox.host();
    let count = prop_oneof![0usize..16_000, 17_000usize..24_000];
    let mut runner = TestRunner::new(ProptestConfig {
        cases: 8,
        ..ProptestConfig::default()
    });
    runner
        .run(&count, |count| {
            // `{"items":["xxx…",…]}`: each string of 1,000 with its quotes and comma, and "wide"
            // (the output).
            let bytes: usize = 16 + count * 1003;
            let input = json!({"count": count, "size": 1000}).to_string();
            let answer = host.call("deep__wide", &input, &NonInteractivePrompter);
            if bytes + 64 < 16 << 20 {
                let output = answer.unwrap_or_else(|error| panic!("{count}: {error}"));
                let items = output.structured_content.unwrap()["items"].clone();
                assert_eq!(items.as_array().map(Vec::len), Some(count));
            } else if bytes > (16 << 20) + 64 {
                let line = answer.expect_err("over 16 MiB").to_string();
                assert!(line.contains("larger than 16 MiB as JSON"), "{line}");
            }
            Ok(())
        })
        .unwrap();
}

/// Two extensions in one session: `flood` starts 70 PBKDF2 derivations of 2^31 iterations (hours
/// of CPU each) and awaits them; `keys`, meanwhile, generates a key, digests and derives.
fn crypto_sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    let derive = r#"
const enc = new TextEncoder();
async function derive(iterations: number) {
  const key = await crypto.subtle.importKey("raw", enc.encode("pw"), "PBKDF2", false, ["deriveBits"]);
  return crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt: enc.encode("salt"), iterations }, key, 256);
}
"#;
    sandbox.write_user_extension(
        "flood.ts",
        &format!(
            r#"{derive}
export default {{ tools: [
  {{ name: "flood", description: "floods the pool", inputSchema: {{ type: "object" }}, readOnly: true,
    async execute() {{
      const jobs = [];
      for (let i = 0; i < 70; i++) jobs.push(derive(2 ** 31));
      await Promise.all(jobs);
      return "flooded";
    }} }},
  {{ name: "small", description: "derives a little", inputSchema: {{ type: "object" }}, readOnly: true,
    async execute() {{
      const bits = await Promise.all([1, 2, 3, 4, 5, 6].map(() => derive(1000)));
      return `derived ${{bits.length}}`;
    }} }},
] }};
"#
        ),
    );
    sandbox.write_user_extension(
        "keys.ts",
        &format!(
            r#"{derive}
export default {{ tools: [
  {{ name: "make", description: "makes a key", inputSchema: {{ type: "object" }}, readOnly: true,
    async execute() {{
      // Started well after the flood, so that the pool is full when it asks.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const key = await crypto.subtle.generateKey({{ name: "HMAC", hash: "SHA-256" }}, true, ["sign"]);
      const pair = await crypto.subtle.generateKey({{ name: "Ed25519" }}, false, ["sign", "verify"]);
      const digest = await crypto.subtle.digest("SHA-256", enc.encode("x"));
      const bits = await derive(1000);
      return `${{key.type}} ${{pair.privateKey.type}} ${{digest.byteLength}} ${{bits.byteLength}}`;
    }} }},
] }};
"#
        ),
    );
    sandbox.user_settings(json!({"extensions": {"callTimeoutSeconds": 6}}));
    sandbox
}

#[test]
fn one_extension_flooding_the_crypto_pool_costs_only_itself_and_stops_with_its_call() {
    let sandbox = crypto_sandbox();
    let host = sandbox.host();
    let prompter = NonInteractivePrompter;
    let (flood, keys) = block_on(async {
        tokio::join!(
            host.0.call("flood__flood", "{}", &prompter),
            host.0.call("keys__make", "{}", &prompter),
        )
    });
    // The other extension's key generation, digest and derivation all completed meanwhile.
    let keys = keys.expect("keys answers while the pool is flooded");
    assert_eq!(keys.output, "secret private 32 32");
    // The flood ran until its call's time limit.
    let flood = flood.expect_err("the flood cannot finish");
    assert!(
        flood.to_string().contains("flood did not settle within 6s"),
        "{flood}"
    );
    // Its derivations were cancelled with the call: its own next derivations (more than its
    // share of the pool at once) run to their end instead of waiting behind them.
    let small = host
        .call("flood__small", "{}", &NonInteractivePrompter)
        .expect("the flooding extension's next call answers");
    assert_eq!(small.output, "derived 6");
    let keys = host
        .call("keys__make", "{}", &NonInteractivePrompter)
        .expect("keys answers again");
    assert_eq!(keys.output, "secret private 32 32");
}
