//! The web platform in extensions (WinterTC Minimum Common API): every name is there, the same
//! snippets give the same JSON in Node 22 and in an extension (or the difference is listed with
//! its reason in fixtures/web/known-differences.json), and URL and URLSearchParams pass the
//! web-platform-tests data at least as well as recorded.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use crate::common::{Sandbox, TestHost, host_with_json_tool, node_json, node22};
use earshot_host::gate::NonInteractivePrompter;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/web")
        .join(name)
}

/// A host with one user extension `web` whose tool `run` returns `body` (a JS expression over
/// `input`, awaited) as JSON, after `prelude`.
fn host_with_tool(sandbox: &Sandbox, prelude: &str, body: &str) -> TestHost {
    host_with_json_tool(sandbox, "web", prelude, body)
}

fn run(host: &TestHost, input: &serde_json::Value) -> serde_json::Value {
    let output = host
        .call("web__run", &input.to_string(), &NonInteractivePrompter)
        .expect("the cases run");
    serde_json::from_str(&output.output).expect("the tool returns JSON")
}

/// fixtures/web/echo_server.mjs under Node 22, on a loopback port; ended when dropped.
struct EchoServer {
    child: Child,
    base: String,
}

impl EchoServer {
    fn start(node: &std::path::Path) -> EchoServer {
        let mut child = Command::new(node)
            .arg(fixture("echo_server.mjs"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("node starts the echo server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port: u16 = line.trim().parse().expect("the server prints its port");
        EchoServer {
            child,
            base: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for EchoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn every_web_platform_case_answers_as_node_22_or_is_a_listed_difference() {
    let Some(node) = node22() else { return };
    let server = EchoServer::start(&node);
    let cases = std::fs::read_to_string(fixture("cases.js")).unwrap();
    let known: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(fixture("known-differences.json")).unwrap())
            .unwrap();
    let sandbox = Sandbox::new();
    let input = serde_json::json!({ "base": server.base });
    let host = host_with_tool(&sandbox, &cases, "webCases(input)");
    let earshot = run(&host, &input);
    let node = node_json(
        &node,
        sandbox.dir.path(),
        &format!("{cases}\nprocess.stdout.write(JSON.stringify(await webCases({input})));\n"),
    );
    let (earshot, node) = (earshot.as_array().unwrap(), node.as_array().unwrap());
    assert!(node.len() >= 60, "{} cases", node.len());
    assert_eq!(earshot.len(), node.len(), "the same cases ran");
    let mut unexpected = Vec::new();
    let mut listed_but_equal = Vec::new();
    for (ours, theirs) in earshot.iter().zip(node) {
        let name = ours[0].as_str().unwrap();
        assert_eq!(name, theirs[0].as_str().unwrap(), "cases in the same order");
        let listed = known.contains_key(name);
        if ours[1] != theirs[1] && !listed {
            let show = |v: &serde_json::Value| v.to_string().chars().take(400).collect::<String>();
            unexpected.push(format!(
                "{name}\n    earshot {}\n    node    {}",
                show(&ours[1]),
                show(&theirs[1])
            ));
        }
        if ours[1] == theirs[1] && listed {
            listed_but_equal.push(name.to_string());
        }
    }
    let missing: Vec<&String> = known
        .keys()
        .filter(|name| !node.iter().any(|case| case[0] == name.as_str()))
        .collect();
    eprintln!(
        "{} of {} cases answer exactly as Node 22; {} listed differences",
        node.len() - known.len(),
        node.len(),
        known.len()
    );
    assert!(
        unexpected.is_empty(),
        "{} cases differ from Node 22 without a listed reason:\n{}",
        unexpected.len(),
        unexpected.join("\n")
    );
    assert!(
        listed_but_equal.is_empty() && missing.is_empty(),
        "known-differences.json lists cases that now agree ({listed_but_equal:?}) or no longer exist ({missing:?}): remove them"
    );
}

/// The WinterTC Minimum Common API's interfaces and global members.
const WINTERTC: &[&str] = &[
    "AbortController",
    "AbortSignal",
    "Blob",
    "ByteLengthQueuingStrategy",
    "CompressionStream",
    "CountQueuingStrategy",
    "Crypto",
    "CryptoKey",
    "DecompressionStream",
    "DOMException",
    "Event",
    "EventTarget",
    "File",
    "FormData",
    "Headers",
    "ReadableByteStreamController",
    "ReadableStream",
    "ReadableStreamBYOBReader",
    "ReadableStreamBYOBRequest",
    "ReadableStreamDefaultController",
    "ReadableStreamDefaultReader",
    "Request",
    "Response",
    "SubtleCrypto",
    "TextDecoder",
    "TextDecoderStream",
    "TextEncoder",
    "TextEncoderStream",
    "TransformStream",
    "TransformStreamDefaultController",
    "URL",
    "URLSearchParams",
    "WritableStream",
    "WritableStreamDefaultController",
    "WritableStreamDefaultWriter",
    "globalThis",
    "atob",
    "btoa",
    "console",
    "crypto",
    "fetch",
    "navigator",
    "performance",
    "queueMicrotask",
    "reportError",
    "self",
    "setTimeout",
    "clearTimeout",
    "setInterval",
    "clearInterval",
    "structuredClone",
    "WebAssembly",
];

/// Not offered, on purpose: an extension is trusted JS, and components are the wasm path.
const NOT_OFFERED: &[&str] = &["WebAssembly"];

#[test]
fn every_wintertc_global_is_present_and_loaded_only_when_used() {
    assert_eq!(WINTERTC.len(), 52);
    let sandbox = Sandbox::new();
    let names = serde_json::to_string(WINTERTC).unwrap();
    let prelude = format!(
        "const NAMES: string[] = {names};\n\
         // Read before anything touches them: the lazy ones are not defined yet.\n\
         const own = (n: string) => Object.prototype.hasOwnProperty.call(globalThis, n);\n\
         const lazyAtLoad = NAMES.filter((n) => !own(n));\n\
         async function presence() {{\n\
           const types = Object.fromEntries(NAMES.map((n) => [n, typeof (globalThis as any)[n]]));\n\
           const members = [typeof performance.now, typeof performance.timeOrigin, typeof navigator.userAgent,\n\
             typeof crypto.getRandomValues, typeof crypto.randomUUID, typeof crypto.subtle.digest,\n\
             typeof AbortSignal.timeout, typeof AbortSignal.any, typeof Intl.NumberFormat];\n\
           await new Promise((resolve) => setTimeout(resolve, 0));\n\
           const lazyAfterUse = NAMES.filter((n) => n !== 'WebAssembly' && !own(n));\n\
           return {{ types, members, lazyAtLoad, lazyAfterUse }};\n\
         }}"
    );
    let host = host_with_tool(&sandbox, &prelude, "presence()");
    let result = run(&host, &serde_json::json!({}));
    let missing: Vec<&str> = WINTERTC
        .iter()
        .copied()
        .filter(|name| !NOT_OFFERED.contains(name))
        .filter(|name| result["types"][name] == "undefined")
        .collect();
    assert!(missing.is_empty(), "missing in an extension: {missing:?}");
    for name in NOT_OFFERED {
        assert_eq!(result["types"][name], "undefined", "{name} is not offered");
    }
    assert!(
        result["members"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t == "function" || t == "number" || t == "string"),
        "{}",
        result["members"]
    );
    // Until used, the web platform's globals are not even defined (nor their scripts evaluated).
    let lazy_at_load = result["lazyAtLoad"].as_array().unwrap();
    for name in ["ReadableStream", "Blob", "fetch", "crypto", "DOMException"] {
        assert!(
            lazy_at_load.iter().any(|n| n == name),
            "{name} was evaluated before use: {lazy_at_load:?}"
        );
    }
    assert_eq!(
        result["lazyAfterUse"],
        serde_json::json!([]),
        "once read, each is a plain data property"
    );
}

/// The url crate's package (as Cargo.lock pins it) in the cargo registry: it ships the WPT URL
/// data, urltestdata.json and setters_tests.json.
fn url_crate_tests() -> PathBuf {
    let lock =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock"))
            .unwrap();
    let version = lock
        .split("[[package]]")
        .find(|package| package.contains("\nname = \"url\"\n"))
        .and_then(|package| package.lines().find(|l| l.starts_with("version = ")))
        .map(|line| {
            line.trim_start_matches("version = ")
                .trim_matches('"')
                .to_string()
        })
        .expect("url is in Cargo.lock");
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    let registry = cargo_home.join("registry/src");
    std::fs::read_dir(&registry)
        .unwrap()
        .map(|entry| entry.unwrap().path().join(format!("url-{version}/tests")))
        .find(|path| path.join("urltestdata.json").exists())
        .unwrap_or_else(|| panic!("url-{version}/tests in {}", registry.display()))
}

const WPT_RUNNER: &str = r#"
function wpt(input: any) {
  const fields = ["href", "origin", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash"];
  const report = (name: string) => ({ name, pass: 0, total: 0, failures: [] as string[] });
  const url = report("urltestdata");
  for (const test of input.urltestdata) {
    if (typeof test === "string") continue;
    url.total++;
    let parsed: any;
    try { parsed = test.base === null ? new URL(test.input) : new URL(test.input, test.base); } catch { parsed = null; }
    const ok = test.failure ? parsed === null
      : parsed !== null && fields.every((f) => test[f] === undefined || parsed[f] === test[f]);
    if (ok) url.pass++; else if (url.failures.length < 15) url.failures.push(JSON.stringify(test.input));
  }
  const setters = report("setters_tests");
  for (const [setter, tests] of Object.entries(input.setters)) {
    if (setter === "comment") continue;
    for (const test of tests as any[]) {
      setters.total++;
      let ok = false;
      try {
        const u: any = new URL(test.href);
        u[setter] = test.new_value;
        ok = Object.entries(test.expected).every(([f, v]) => u[f] === v);
      } catch {}
      if (ok) setters.pass++; else if (setters.failures.length < 15) setters.failures.push(`${setter} ${JSON.stringify(test.href)} = ${JSON.stringify(test.new_value)}`);
    }
  }
  const params = report("urlencoded-parser");
  for (const test of input.urlencoded) {
    params.total++;
    const got = JSON.stringify([...new URLSearchParams(test.input)]);
    if (got === JSON.stringify(test.output)) params.pass++; else params.failures.push(JSON.stringify(test.input));
  }
  return [url, setters, params];
}
"#;

/// The pass counts recorded when this test was written (Boa's URL is the `url` crate's): a run
/// below any of them fails.
const RECORDED_PASSES: [(&str, u64); 3] = [
    ("urltestdata", 770),
    ("setters_tests", 244),
    ("urlencoded-parser", 35),
];

#[test]
fn url_and_url_search_params_pass_the_web_platform_tests_as_recorded() {
    let tests = url_crate_tests();
    let read = |path: PathBuf| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let input = serde_json::json!({
        "urltestdata": read(tests.join("urltestdata.json")),
        "setters": read(tests.join("setters_tests.json")),
        "urlencoded": read(fixture("wpt/urlencoded-parser-data.json")),
    });
    let sandbox = Sandbox::new();
    let host = host_with_tool(&sandbox, WPT_RUNNER, "wpt(input)");
    let reports = run(&host, &input);
    for ((name, floor), report) in RECORDED_PASSES.iter().zip(reports.as_array().unwrap()) {
        assert_eq!(report["name"], *name);
        let (pass, total) = (
            report["pass"].as_u64().unwrap(),
            report["total"].as_u64().unwrap(),
        );
        eprintln!(
            "WPT {name}: {pass}/{total} pass; first failures: {}",
            report["failures"]
        );
        assert!(total > 0, "{name} ran no tests");
        assert!(
            pass >= *floor,
            "WPT {name}: {pass}/{total}, below the recorded {floor}"
        );
    }
}

#[test]
fn a_decompression_bomb_fails_its_stream_and_nothing_else() {
    let Some(node) = node22() else { return };
    let server = EchoServer::start(&node);
    let sandbox = Sandbox::new();
    let prelude = "async function inflate(base: string) {\n\
         const response = await fetch(`${base}/bomb`);\n\
         const reader = response.body!.pipeThrough(new DecompressionStream('gzip')).getReader();\n\
         let total = 0, largest = 0;\n\
         try {\n\
           for (;;) { const { value, done } = await reader.read(); if (done) break;\n\
             total += value.byteLength; largest = Math.max(largest, value.byteLength); }\n\
         } catch (e: any) { return { error: `${e.name}: ${e.message}`, total, largest }; }\n\
         return { error: null, total, largest };\n\
       }";
    let host = host_with_tool(
        &sandbox,
        prelude,
        "input.again ? 'still here' : inflate(input.base)",
    );
    let result = run(&host, &serde_json::json!({ "base": server.base }));
    let error = result["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with("TypeError") && error.contains("larger than 256 MiB"),
        "{result}"
    );
    // What came out before the cap, in pieces of bounded size (one input slice's worth each).
    let (total, largest) = (
        result["total"].as_u64().unwrap(),
        result["largest"].as_u64().unwrap(),
    );
    assert!(total <= 256 << 20, "{result}");
    assert!(largest <= 17 << 20, "{result}");
    // The extension (and the host) go on.
    assert_eq!(
        run(&host, &serde_json::json!({ "again": true })),
        "still here"
    );
}

#[test]
fn a_response_past_32_mib_errors_its_body_and_nothing_else() {
    let Some(node) = node22() else { return };
    let server = EchoServer::start(&node);
    let sandbox = Sandbox::new();
    let prelude = "async function huge(base: string) {\n\
         const response = await fetch(`${base}/huge`);\n\
         try { return { read: (await response.arrayBuffer()).byteLength }; }\n\
         catch (e: any) { return { error: `${e.name}: ${e.message}`, cause: String(e.cause?.message ?? '') }; }\n\
       }";
    let host = host_with_tool(
        &sandbox,
        prelude,
        "input.again ? 'still here' : huge(input.base)",
    );
    let result = run(&host, &serde_json::json!({ "base": server.base }));
    assert_eq!(result["error"], "TypeError: terminated", "{result}");
    assert!(
        result["cause"]
            .as_str()
            .is_some_and(|cause| cause.contains("the response is larger than 32 MiB")),
        "{result}"
    );
    assert_eq!(
        run(&host, &serde_json::json!({ "again": true })),
        "still here"
    );
}
