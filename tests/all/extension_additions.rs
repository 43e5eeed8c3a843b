//! `Array.fromAsync` and `structuredClone`'s `DataCloneError`, compared with what Node 22 prints
//! for the same cases, and `extensions.env` narrowing `process.env`.

use earshot_host::NonInteractivePrompter;
use serde_json::json;

use crate::common::{Sandbox, host_with_json_tool, node_json, node22};

/// The cases, as one expression whose value is printed as JSON.
const CASES: &str = r#"(async () => {
  const out = {};
  async function* gen() { yield 1; yield Promise.resolve(2); yield 3; }
  out.asyncIterable = await Array.fromAsync(gen());
  out.syncOfPromises = await Array.fromAsync([Promise.resolve("a"), "b"]);
  out.arrayLike = await Array.fromAsync({ length: 2, 0: "x", 1: Promise.resolve("y") });
  out.mapped = await Array.fromAsync([1, 2], async (v, i) => v * 10 + i);
  out.length = Array.fromAsync.length;
  try { await Array.fromAsync([1], 5); out.badMap = "no error"; } catch (e) { out.badMap = e.constructor.name; }
  try { await Array.fromAsync(null); out.nullItems = "no error"; } catch (e) { out.nullItems = e.constructor.name; }
  for (const [key, value] of [["fn", () => 1], ["symbol", Symbol("s")], ["nested", { f() {} }],
      ["weakMap", new WeakMap()], ["weakSetInArray", [1, new WeakSet()]], ["promiseInMap", new Map([["p", Promise.resolve(1)]])],
      ["weakRefInSet", new Set([new WeakRef({})])]]) {
    try { structuredClone(value); out[key] = "cloned"; }
    catch (e) { out[key] = [e instanceof DOMException, e.name, e.code, e.message]; }
  }
  const cyclic = { list: [1, 2] }; cyclic.self = cyclic;
  const copy = structuredClone(cyclic);
  out.cyclic = [copy.self === copy, copy !== cyclic, copy.list];
  out.plain = structuredClone({ a: [1, { b: 2 }] });
  return out;
})()"#;

#[test]
fn array_from_async_and_data_clone_error_behave_as_in_node() {
    let sandbox = Sandbox::new();
    let host = host_with_json_tool(&sandbox, "cases", "", CASES);
    let output = host
        .call("cases__run", "{}", &NonInteractivePrompter)
        .expect("runs");
    assert!(!output.is_error, "{}", output.output);
    let ours: serde_json::Value = serde_json::from_str(&output.output).unwrap();
    assert_eq!(ours["asyncIterable"], json!([1, 2, 3]), "{ours}");
    assert_eq!(
        ours["fn"],
        json!([true, "DataCloneError", 25, "() => 1 could not be cloned."]),
        "{ours}"
    );
    assert_eq!(
        ours["weakMap"],
        json!([
            true,
            "DataCloneError",
            25,
            "#<WeakMap> could not be cloned."
        ]),
        "{ours}"
    );
    let Some(node) = node22() else { return };
    let theirs = node_json(
        &node,
        sandbox.dir.path(),
        &format!("console.log(JSON.stringify(await {CASES}));"),
    );
    assert_eq!(ours, theirs);
}

#[test]
fn extensions_env_narrows_process_env_and_a_project_cannot_widen_it() {
    let sandbox = Sandbox::new();
    let extensions = sandbox.config().join("extensions");
    std::fs::create_dir_all(&extensions).unwrap();
    std::fs::write(
        extensions.join("envs.ts"),
        "export default { tools: [{ name: 'show', description: 'Shows env names', inputSchema: { type: 'object' }, readOnly: true,\n\
           execute: () => JSON.stringify(Object.keys(process.env).filter((k) => k.startsWith('EARSHOT_T_')).sort()) }] };\n",
    )
    .unwrap();
    let run = |user: serde_json::Value, project: Option<serde_json::Value>| -> String {
        std::fs::write(sandbox.config().join("settings.json"), user.to_string()).unwrap();
        if let Some(project) = &project {
            std::fs::create_dir_all(sandbox.project().join(".earshot")).unwrap();
            std::fs::write(
                sandbox.project().join(".earshot/settings.json"),
                project.to_string(),
            )
            .unwrap();
        }
        let (code, stdout, stderr) = {
            let output = sandbox
                .earshot()
                .args(["tools", "call", "envs__show", "{}"])
                .env("EARSHOT_T_ONE", "1")
                .env("EARSHOT_T_TWO", "2")
                .output()
                .unwrap();
            (
                output.status.code(),
                String::from_utf8_lossy(&output.stdout).into_owned(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            )
        };
        assert_eq!(code, Some(0), "{stderr}");
        stdout.trim().to_string()
    };
    assert_eq!(
        run(json!({}), None),
        r#"["EARSHOT_T_ONE","EARSHOT_T_TWO"]"#,
        "off by default"
    );
    assert_eq!(
        run(json!({"extensions": {"env": ["EARSHOT_T_ONE"]}}), None),
        r#"["EARSHOT_T_ONE"]"#
    );
    assert_eq!(
        run(
            json!({"extensions": {"env": ["EARSHOT_T_ONE"]}}),
            Some(json!({"extensions": {"env": ["EARSHOT_T_ONE", "EARSHOT_T_TWO"]}}))
        ),
        r#"["EARSHOT_T_ONE"]"#,
        "a project's list cannot show what the user's hides"
    );
}
