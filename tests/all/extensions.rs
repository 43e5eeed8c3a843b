//! TypeScript/JavaScript extensions end to end, as a user sees them through `earshot`: real
//! `.ts` files from `fixtures/extensions/` in a throwaway project and config dir.

use std::path::PathBuf;

use crate::common::Sandbox;

fn fixture(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/extensions")
        .join(relative)
}

/// Copies fixture files into the user's extensions folder (their own code: loads untrusted).
fn user_extensions(sandbox: &Sandbox, files: &[&str]) {
    for file in files {
        let target = sandbox.config().join("extensions").join(file);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(fixture(file), target).unwrap();
    }
}

/// Copies fixture files into the project's `.earshot/extensions/` (the repository's choice).
fn project_extensions(sandbox: &Sandbox, files: &[&str]) {
    for file in files {
        sandbox.write(
            &format!(".earshot/extensions/{file}"),
            std::fs::read(fixture(file)).unwrap(),
        );
    }
}

/// User settings: short limits so hostile fixtures fail fast, and any extra JSON keys.
fn user_settings(sandbox: &Sandbox, permissions: &str) {
    std::fs::write(
        sandbox.config().join("settings.json"),
        format!(
            r#"{{"extensions": {{"callTimeoutSeconds": 2, "loadTimeoutSeconds": 5, "loopIterationLimit": 100000}},
                "permissions": {permissions}}}"#
        ),
    )
    .unwrap();
}

fn call(sandbox: &Sandbox, tool: &str, input: &str) -> (i32, String, String) {
    sandbox.run(&["tools", "call", tool, input])
}

#[test]
fn the_spec_jira_example_loads_and_its_read_only_tool_runs_without_a_rule() {
    let sandbox = Sandbox::new();
    user_extensions(&sandbox, &["jira.ts"]);
    let (code, listed, _) = sandbox.run(&["tools", "list"]);
    assert_eq!(code, 0);
    assert!(
        listed.contains("jira__ticket") && listed.contains("read-only"),
        "{listed}"
    );
    let (code, out, err) = call(&sandbox, "jira__ticket", r#"{"key":"ABC-123"}"#);
    assert_eq!((code, out.trim()), (0, "ticket ABC-123"), "{err}");
}

#[test]
fn every_typescript_construct_is_stripped_or_lowered_and_runs() {
    let sandbox = Sandbox::new();
    user_extensions(&sandbox, &["constructs.ts", "lib/types.ts"]);
    let (code, out, err) = call(&sandbox, "constructs__report", "{}");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.trim(),
        "enum=1,2,4,Green const-enum=UP namespace=5 parameter-properties=3x4 generic=a \
         satisfies=strict helper=true declare=absent"
    );
}

/// The input crosses into JavaScript as `JSON.parse` would read its text: keys in the text's
/// order, numbers as doubles, strings with every character (the host parses it on the JS thread
/// straight into the argument).
#[test]
fn the_input_reaches_execute_as_json_parse_reads_its_text() {
    let sandbox = Sandbox::new();
    sandbox.write_user_extension(
        "mirror.ts",
        "export default { tools: [{ name: 'echo', description: 'Echoes its input', \
         inputSchema: { type: 'object' }, readOnly: true, \
         execute(input: Record<string, unknown>): string { \
           return JSON.stringify(input) + ' ' + Object.keys(input).join(','); } }] };\n",
    );
    let input = r#"{"zeta":1,"alpha":[1,2.5,-0.125,"é\u0000😀"],"mid":{"x":null,"t":true},"zeta":3,"big":9007199254740993}"#;
    let (code, out, err) = call(&sandbox, "mirror__echo", input);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.trim(),
        r#"{"zeta":3,"alpha":[1,2.5,-0.125,"é\u0000😀"],"mid":{"x":null,"t":true},"big":9007199254740992} zeta,alpha,mid,big"#
    );
}

#[test]
fn the_input_is_validated_against_the_input_schema_before_execute() {
    let sandbox = Sandbox::new();
    user_extensions(&sandbox, &["jira.ts"]);
    let (code, _, err) = call(&sandbox, "jira__ticket", r#"{"key": 7}"#);
    assert_eq!(code, 4);
    assert!(
        err.contains("does not match its schema") && err.contains("/key"),
        "{err}"
    );
}

#[test]
fn relative_imports_work_when_the_extensions_folder_is_a_link() {
    let sandbox = Sandbox::new();
    let real = sandbox.dir.path().join("real-extensions");
    std::fs::create_dir_all(real.join("lib")).unwrap();
    std::fs::copy(fixture("with_helper.ts"), real.join("with_helper.ts")).unwrap();
    std::fs::copy(fixture("lib/format.ts"), real.join("lib/format.ts")).unwrap();
    std::os::unix::fs::symlink(&real, sandbox.config().join("extensions")).unwrap();
    let (code, out, err) = call(&sandbox, "with_helper__shout", r#"{"text":"hi"}"#);
    assert_eq!((code, out.trim()), (0, "HI!"), "{err}");
}

#[test]
fn a_helper_file_in_the_extensions_folder_is_imported_and_stripped() {
    let sandbox = Sandbox::new();
    user_extensions(&sandbox, &["with_helper.ts", "lib/format.ts"]);
    let (code, out, err) = call(&sandbox, "with_helper__shout", r#"{"text":"hi"}"#);
    assert_eq!((code, out.trim()), (0, "HI!"), "{err}");
}

/// The `extensions list` row of `name`.
fn row(sandbox: &Sandbox, name: &str) -> String {
    let (code, out, err) = sandbox.run(&["extensions", "list"]);
    assert_eq!(code, 0, "{err}");
    out.lines()
        .find(|line| line.starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no row for {name} in\n{out}"))
        .to_string()
}

#[test]
fn each_broken_module_costs_its_own_tools_with_a_precise_reason() {
    let sandbox = Sandbox::new();
    user_settings(&sandbox, "{}");
    let broken = [
        (
            "throws_on_import",
            "throws_on_import.ts:3:9: threw while loading: Error: configuration missing",
            "",
        ),
        (
            "no_default",
            "it has no default export; write `export default { tools: [...] }`",
            "",
        ),
        (
            "default_not_object",
            "its default export is a number (42), not an object with a `tools` array",
            "",
        ),
        (
            "top_level_loop",
            "RuntimeLimitError",
            "`extensions.loopIterationLimit` in settings raises it",
        ),
        (
            "decorator",
            "decorator.ts:5:1: decorators are not supported in extensions",
            "",
        ),
        (
            "import_equals",
            "import_equals.ts:1:1: `import x = require(...)` is CommonJS and not supported",
            "",
        ),
        (
            "bare_import",
            "import \"lodash\" is not supported",
            "bare and node: specifiers do not resolve",
        ),
        (
            "escape_import",
            "import \"../outside/secret.ts\" leaves the extension's folder",
            "",
        ),
    ];
    let mut files: Vec<String> = broken.iter().map(|(n, _, _)| format!("{n}.ts")).collect();
    files.push("jira.ts".into());
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    user_extensions(&sandbox, &files);
    std::fs::create_dir_all(sandbox.config().join("outside")).unwrap();
    std::fs::copy(
        fixture("outside/secret.ts"),
        sandbox.config().join("outside/secret.ts"),
    )
    .unwrap();

    let listed = states(&sandbox);
    for (name, first, second) in broken {
        let line = &listed.iter().find(|(found, _)| found == name).unwrap().1;
        assert!(line.starts_with("failed: "), "{line}");
        assert!(line.contains(first), "{name}: {line}");
        assert!(line.contains(second), "{name}: {line}");
    }
    // The working extension beside them is untouched, in the list and in a call.
    assert!(row(&sandbox, "jira").contains("loaded (your own file)"));
    let (code, listed, warnings) = sandbox.run(&["tools", "list"]);
    assert_eq!(code, 0);
    assert!(listed.contains("jira__ticket"), "{listed}");
    assert_eq!(
        listed.lines().filter(|l| l.contains("extension")).count(),
        1,
        "{listed}"
    );
    assert!(
        warnings.contains("extension \"throws_on_import\""),
        "{warnings}"
    );
    let (code, out, _) = call(&sandbox, "jira__ticket", r#"{"key":"K-1"}"#);
    assert_eq!((code, out.trim()), (0, "ticket K-1"));
}

/// Every extension's full state from `extensions list --json` (the table shortens it).
fn states(sandbox: &Sandbox) -> Vec<(String, String)> {
    let (code, out, err) = sandbox.run(&["extensions", "list", "--json"]);
    assert_eq!(code, 0, "{err}");
    let listed: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    listed["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            (
                item["name"].as_str().unwrap().to_string(),
                item["state"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The full state of extension `name`.
fn state(sandbox: &Sandbox, name: &str) -> String {
    states(sandbox)
        .into_iter()
        .find(|(found, _)| found == name)
        .unwrap_or_else(|| panic!("no extension {name}"))
        .1
}

#[test]
fn every_bad_tool_field_is_named_with_its_tool_and_what_was_found() {
    let sandbox = Sandbox::new();
    user_extensions(&sandbox, &["bad_fields.ts", "bad_schema.ts"]);
    let line = state(&sandbox, "bad_fields");
    for expected in [
        "tool 0: is a string (\"not an object\"), not an object",
        "tool 1: `name` must be a string, found undefined",
        "tool 2 (\"bad name!\"): invalid `name`",
        "tool 3 (\"no_description\"): `description` must be a string, found undefined",
        "tool 4 (\"schema_string\"): `inputSchema` must be an object (a JSON Schema), found a string (\"object\")",
        "tool 5 (\"read_only_string\"): `readOnly` must be a boolean when present, found a string (\"yes\")",
        "tool 6 (\"no_execute\"): `execute` must be a function, found undefined",
        "tool 8 (\"twice\"): the name is used by an earlier tool",
        "tool 9 (\"describe_string\"): `describe` must be a function when present, found a string (\"x\")",
    ] {
        assert!(line.contains(expected), "missing {expected:?} in {line}");
    }
    let line = state(&sandbox, "bad_schema");
    assert!(
        line.contains("tool 0 (\"broken\"): `inputSchema` is not a valid JSON Schema"),
        "{line}"
    );
}

#[test]
fn hostile_calls_each_end_in_an_error_pointing_at_the_original_typescript() {
    let sandbox = Sandbox::new();
    user_settings(&sandbox, "{}");
    user_extensions(&sandbox, &["hostile_calls.ts"]);

    let (code, out, _) = call(&sandbox, "hostile_calls__throws", "{}");
    assert_eq!(code, 4);
    assert!(
        out.contains("execute threw: Error: the ticket service is down (at ")
            && out.contains("hostile_calls.ts:27:15)"),
        "{out}"
    );

    let (code, out, _) = call(&sandbox, "hostile_calls__rejects", "{}");
    assert_eq!(code, 4);
    assert!(
        out.contains("execute rejected: TypeError: rejected on purpose (at ")
            && out.contains("hostile_calls.ts:37:15)"),
        "{out}"
    );

    let (code, out, _) = call(&sandbox, "hostile_calls__returns_number", "{}");
    assert_eq!(code, 4);
    assert!(
        out.contains(
            "execute returned a number (42); it must return a string or { output, isError?, title?, content?, structuredContent? }"
        ),
        "{out}"
    );

    let (code, out, _) = call(&sandbox, "hostile_calls__tight_loop", "{}");
    assert_eq!(code, 4);
    assert!(
        out.contains("RuntimeLimitError") && out.contains("hostile_calls.ts:"),
        "{out}"
    );

    let (code, _, err) = call(&sandbox, "hostile_calls__never_settles", "{}");
    assert_eq!(code, 1);
    assert!(
        err.contains("returned a promise that can never settle"),
        "{err}"
    );

    let (code, _, err) = call(&sandbox, "hostile_calls__slow_timer", "{}");
    assert_eq!(code, 1);
    assert!(err.contains("did not settle within 2s"), "{err}");

    // Work that never stops coming (a zero-delay interval, promise reactions that requeue
    // themselves) still ends at the deadline, as an ordinary timeout, not a stuck thread.
    for busy in [
        "hostile_calls__busy_timers",
        "hostile_calls__busy_microtasks",
    ] {
        let (code, _, err) = call(&sandbox, busy, "{}");
        assert_eq!(code, 1, "{busy}: {err}");
        assert!(err.contains("did not settle within 2s"), "{busy}: {err}");
    }

    let (code, out, err) = call(&sandbox, "hostile_calls__structured", "{}");
    assert_eq!(code, 4);
    assert_eq!(out.trim(), "partly done");
    assert!(err.contains("title: Structured"), "{err}");
}

#[test]
fn the_runtime_offers_timers_encoders_url_clone_base64_and_a_read_only_env() {
    let sandbox = Sandbox::new();
    user_extensions(&sandbox, &["runtime.ts"]);
    let output = sandbox
        .earshot()
        .args(["tools", "call", "runtime__apis", "{}"])
        .env("EARSHOT_EXT_VISIBLE", "seen")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        out.trim(),
        "order=microtask,timeout ticks=3 bytes=6 text=héllo url=example.com/a/b?q=1 clone=1+2 \
         base64=ZWFyc2hvdA==/earshot env=seen envWritable=false",
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn fetch_reaches_a_loopback_server() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = [0u8; 4096];
        let read = stream.read(&mut request).unwrap();
        let request = String::from_utf8_lossy(&request[..read]).into_owned();
        stream
            .write_all(
                b"HTTP/1.1 201 Created\r\ncontent-length: 14\r\nconnection: close\r\n\r\nhello, earshot",
            )
            .unwrap();
        request
    });
    let sandbox = Sandbox::new();
    user_extensions(&sandbox, &["runtime.ts"]);
    let input = format!(r#"{{"url":"http://{address}/greeting"}}"#);
    let (code, out, err) = call(&sandbox, "runtime__get", &input);
    assert_eq!((code, out.trim()), (0, "201 hello, earshot"), "{err}");
    let request = server.join().unwrap();
    assert!(request.starts_with("GET /greeting HTTP/1.1"), "{request}");
}

#[test]
fn console_output_goes_to_tracing_and_not_to_stdout() {
    let sandbox = Sandbox::new();
    user_extensions(&sandbox, &["noisy.ts"]);
    user_settings(&sandbox, r#"{"allow": ["Extension(noisy__hello)"]}"#);
    let output = sandbox
        .earshot()
        .args(["tools", "call", "noisy__hello", "{}"])
        .env("RUST_LOG", "earshot::extension=info")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&output.stdout);
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(out.trim(), "hello from noisy");
    assert!(
        err.contains("noisy extension evaluated") && err.contains("noisy hello called"),
        "{err}"
    );
}

#[test]
fn an_untrusted_project_extension_is_listed_but_never_evaluated() {
    let sandbox = Sandbox::new();
    project_extensions(&sandbox, &["noisy.ts"]);
    let logged = |args: &[&str]| {
        let output = sandbox
            .earshot()
            .args(args)
            .env("RUST_LOG", "earshot::extension=info")
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (listed, err) = logged(&["extensions", "list"]);
    assert!(
        listed.contains("not trusted") && listed.contains("earshot extensions trust noisy"),
        "{listed}"
    );
    assert!(!err.contains("noisy extension evaluated"), "{err}");
    let (tools, err) = logged(&["tools", "list"]);
    assert!(!tools.contains("noisy__hello"), "{tools}");
    assert!(!err.contains("noisy extension evaluated"), "{err}");

    // Trusting it is what makes it run: the same observation now sees the evaluation.
    let (code, _, _) = sandbox.run(&["extensions", "trust", "noisy"]);
    assert_eq!(code, 0);
    let (tools, err) = logged(&["tools", "list"]);
    assert!(tools.contains("noisy__hello"), "{tools}");
    assert!(err.contains("noisy extension evaluated"), "{err}");
}

#[test]
fn changing_a_trusted_extensions_helper_file_lapses_its_trust() {
    let sandbox = Sandbox::new();
    project_extensions(&sandbox, &["with_helper.ts", "lib/format.ts"]);
    assert_eq!(sandbox.run(&["extensions", "trust", "with_helper"]).0, 0);
    assert!(row(&sandbox, "with_helper").contains("loaded (trusted)"));
    sandbox.write(
        ".earshot/extensions/lib/format.ts",
        "export function shout(text: string): string { return text; }\n",
    );
    let line = row(&sandbox, "with_helper");
    assert!(line.contains("changed since"), "{line}");
    let (code, _, err) = call(&sandbox, "with_helper__shout", r#"{"text":"x"}"#);
    assert_eq!(code, 5, "no such tool");
    assert!(
        err.contains("no tool named \"with_helper__shout\""),
        "{err}"
    );
}

#[test]
fn a_tool_that_is_not_read_only_goes_through_the_gate_as_extension_rule() {
    let sandbox = Sandbox::new();
    user_extensions(&sandbox, &["writer.ts"]);
    let (code, _, err) = call(&sandbox, "writer__note", r#"{"text":"a"}"#);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("writer__note"), "{err}");
    let (_, decided, _) = sandbox.run(&["permissions", "check", "writer__note"]);
    assert!(decided.contains("Extension(writer__note)"), "{decided}");

    user_settings(&sandbox, r#"{"allow": ["Extension(writer__*)"]}"#);
    let (code, out, err) = call(&sandbox, "writer__note", r#"{"text":"a"}"#);
    assert_eq!((code, out.trim()), (0, "1 notes"), "{err}");
    assert!(err.contains("title: Noted"), "{err}");

    user_settings(
        &sandbox,
        r#"{"allow": ["Extension(writer__*)"], "deny": ["Extension(writer__note)"]}"#,
    );
    assert_eq!(call(&sandbox, "writer__note", r#"{"text":"a"}"#).0, 3);
}

#[test]
fn the_same_name_in_the_user_and_project_folders_uses_the_users_and_reports_both() {
    let sandbox = Sandbox::new();
    user_extensions(&sandbox, &["jira.ts"]);
    sandbox.write(
        ".earshot/extensions/jira.ts",
        "export default { tools: [{ name: 'other', description: 'x', inputSchema: {}, execute: () => 'project' }] };\n",
    );
    let (code, out, err) = sandbox.run(&["extensions", "list"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("jira ")).collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert!(
        rows[0].contains("user") && rows[0].contains("loaded"),
        "{out}"
    );
    assert!(
        rows[1].contains("project") && rows[1].contains("shadowed"),
        "{out}"
    );
    let (_, tools, warnings) = sandbox.run(&["tools", "list"]);
    assert!(
        tools.contains("jira__ticket") && !tools.contains("jira__other"),
        "{tools}"
    );
    assert!(
        warnings.contains("your own extension of the same name is used instead"),
        "{warnings}"
    );
}

#[test]
fn an_invalid_extension_name_is_reported() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.config().join("extensions")).unwrap();
    std::fs::copy(
        fixture("jira.ts"),
        sandbox.config().join("extensions/my__jira.ts"),
    )
    .unwrap();
    let line = row(&sandbox, "my__jira");
    assert!(line.contains("invalid name"), "{line}");
    let (_, tools, _) = sandbox.run(&["tools", "list"]);
    assert!(!tools.contains("ticket"), "{tools}");
}

#[test]
fn an_extension_tool_colliding_with_a_component_tool_is_reported_and_neither_loads() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.config().join("plugins")).unwrap();
    std::fs::copy(
        crate::common::hello_wasm(),
        sandbox.config().join("plugins/hello.wasm"),
    )
    .unwrap();
    std::fs::create_dir_all(sandbox.config().join("extensions")).unwrap();
    std::fs::write(
        sandbox.config().join("extensions/hello.ts"),
        "export default { tools: [{ name: 'greet', description: 'x', inputSchema: {}, readOnly: true, execute: () => 'ts' }] };\n",
    )
    .unwrap();
    let (_, tools, warnings) = sandbox.run(&["tools", "list"]);
    assert!(!tools.contains("hello__greet"), "{tools}");
    assert!(
        warnings.contains("hello__greet is contributed by") && warnings.contains("extension hello"),
        "{warnings}"
    );
}

#[test]
fn one_extension_cannot_see_anothers_globals() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.config().join("extensions")).unwrap();
    std::fs::write(
        sandbox.config().join("extensions/leaky.ts"),
        "(globalThis as any).leaked = 'secret';\nexport default { tools: [] };\n",
    )
    .unwrap();
    std::fs::write(
        sandbox.config().join("extensions/peek.ts"),
        "export default { tools: [{ name: 'look', description: 'x', inputSchema: {}, readOnly: true, \
         execute: () => `leaked is ${typeof (globalThis as any).leaked}` }] };\n",
    )
    .unwrap();
    let (code, out, err) = call(&sandbox, "peek__look", "{}");
    assert_eq!((code, out.trim()), (0, "leaked is undefined"), "{err}");
}

#[test]
fn a_tools_array_with_billions_of_entries_is_refused_without_walking_it() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.config().join("extensions")).unwrap();
    std::fs::write(
        sandbox.config().join("extensions/huge.ts"),
        "const tools: unknown[] = [];\ntools.length = 2 ** 32 - 1;\nexport default { tools };\n",
    )
    .unwrap();
    let line = state(&sandbox, "huge");
    assert!(
        line.contains(
            "its `tools` array has 4294967295 entries; an extension may have at most 256"
        ),
        "{line}"
    );
}

#[test]
fn a_file_imported_only_at_run_time_is_refused_because_no_trust_covers_it() {
    let sandbox = Sandbox::new();
    user_extensions(&sandbox, &["lib/format.ts"]);
    std::fs::write(
        sandbox.config().join("extensions/sneaky.ts"),
        "const path = ['.', 'lib', 'format.ts'].join('/');\n\
         export default { tools: [{ name: 'run', description: 'x', inputSchema: {}, readOnly: true,\n\
         async execute() { const m = await (0, eval)(`import('${path}')`); return m.shout('x'); } }] };\n",
    )
    .unwrap();
    let (code, out, err) = call(&sandbox, "sneaky__run", "{}");
    assert_eq!(code, 4, "{out} {err}");
    assert!(out.contains("is not part of what was trusted"), "{out}");
}

/// Copies a fixture file to `relative` under the project's `.earshot/extensions/`.
fn project_file(sandbox: &Sandbox, fixture_path: &str, relative: &str) {
    sandbox.write(
        &format!(".earshot/extensions/{relative}"),
        std::fs::read(fixture(fixture_path)).unwrap(),
    );
}

/// The user's own jira extension works: `tools list` lists it and a call answers.
fn users_own_tool_still_works(sandbox: &Sandbox) {
    let (code, listed, err) = sandbox.run(&["tools", "list"]);
    assert_eq!(code, 0, "{err}");
    assert!(listed.contains("jira__ticket"), "{listed}");
    let (code, out, err) = call(sandbox, "jira__ticket", r#"{"key":"K-9"}"#);
    assert_eq!((code, out.trim()), (0, "ticket K-9"), "{err}");
}

#[test]
fn a_file_nested_a_hundred_thousand_levels_deep_fails_alone_and_earshot_goes_on() {
    let sandbox = Sandbox::new();
    user_extensions(&sandbox, &["jira.ts"]);
    let n = 100_000;
    // Untrusted, in the repository: only parsed for its trust digest.
    sandbox.write(
        ".earshot/extensions/deep.ts",
        format!("export default {}1{};\n", "[".repeat(n), "]".repeat(n)),
    );
    // The user's own (so loaded and stripped), nested another way, and a trusted project
    // extension whose helper is the deep file.
    std::fs::write(
        sandbox.config().join("extensions/bang.ts"),
        format!("export default {{ tools: [], x: {}1 }};\n", "!".repeat(n)),
    )
    .unwrap();
    sandbox.write(
        ".earshot/extensions/uses_deep.ts",
        "import './lib/chain.ts';\nexport default { tools: [] };\n",
    );
    sandbox.write(
        ".earshot/extensions/lib/chain.ts",
        format!("export const x = a{};\n", ".b".repeat(n)),
    );

    let deep = state(&sandbox, "deep");
    assert!(
        deep.starts_with("failed: ")
            && deep.contains("deep.ts:1:")
            && deep.contains("nests deeper than 1000 levels")
            && deep.contains("earshot does not parse it"),
        "{deep}"
    );
    let bang = state(&sandbox, "bang");
    assert!(
        bang.contains("bang.ts:1:") && bang.contains("nests deeper than"),
        "{bang}"
    );
    let uses_deep = state(&sandbox, "uses_deep");
    assert!(
        uses_deep.contains("lib/chain.ts:1:") && uses_deep.contains("nests deeper than"),
        "{uses_deep}"
    );
    assert!(row(&sandbox, "jira").contains("loaded (your own file)"));

    let (code, _, err) = sandbox.run(&["extensions", "trust", "deep"]);
    assert_eq!(code, 1);
    assert!(err.contains("nests deeper than 1000 levels"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");

    // tools list and call survive it, and report the broken one as a warning.
    users_own_tool_still_works(&sandbox);
    let (_, _, warnings) = sandbox.run(&["tools", "list"]);
    assert!(warnings.contains("bang.ts:1:"), "{warnings}");
}

#[test]
fn nesting_just_under_the_limit_loads_and_runs_without_crashing() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.config().join("extensions")).unwrap();
    // Just under the scan's limit of 1000 levels, in the ways that cost a parser most: each is
    // parsed by oxc (digest, then stripping), then parsed, compiled and run by Boa.
    let constructs = [
        (
            "arrays",
            format!("const v: any = {}0{};", "[".repeat(990), "]".repeat(990)),
        ),
        (
            "objects",
            format!("const v: any = {}0{};", "{a:".repeat(490), "}".repeat(490)),
        ),
        ("nots", format!("const v: any = {}0;", "!".repeat(990))),
        (
            "chains",
            format!(
                "const o: any = {{}};\no.o = o;\nconst v: any = o{};",
                ".o".repeat(900)
            ),
        ),
        (
            "functions",
            format!(
                "const v: any = {}0{};",
                "(() => ".repeat(200),
                ")".repeat(200)
            ),
        ),
        (
            "templates",
            format!("const v: any = {}0{};", "`${".repeat(490), "}`".repeat(490)),
        ),
        (
            "ifs",
            format!("let v: any = 0;\n{}v = 1;", "if (v === 0)\n".repeat(490)),
        ),
    ];
    for (name, body) in &constructs {
        std::fs::write(
            sandbox.config().join(format!("extensions/{name}.ts")),
            format!(
                "{body}\nexport default {{ tools: [{{ name: 'ok', description: 'x', inputSchema: {{}}, readOnly: true, execute: () => typeof v }}] }};\n"
            ),
        )
        .unwrap();
    }
    let listed = states(&sandbox);
    for (name, _) in &constructs {
        let state = &listed.iter().find(|(found, _)| found == name).unwrap().1;
        assert_eq!(state, "loaded (your own file)", "{name}");
    }
    let (code, out, err) = call(&sandbox, "arrays__ok", "{}");
    assert_eq!((code, out.trim()), (0, "object"), "{err}");
}

#[test]
fn console_output_is_hidden_by_default_and_sanitised_on_one_line_with_verbose() {
    let sandbox = Sandbox::new();
    user_extensions(&sandbox, &["fake_prompt.ts", "jira.ts"]);
    let (code, out, err) = call(&sandbox, "fake_prompt__run", "{}");
    assert_eq!((code, out.trim()), (0, "ran"), "{err}");
    assert!(!err.contains("earshot>"), "{err:?}");
    for raw in ['\r', '\u{1b}', '\u{202e}'] {
        assert!(!err.contains(raw), "{err:?}");
    }

    let output = sandbox
        .earshot()
        .args(["-v", "tools", "call", "fake_prompt__run", "{}"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "ran");
    for raw in ['\r', '\u{1b}', '\u{202e}'] {
        assert!(!err.contains(raw), "{err:?}");
    }
    // The load-time error, the call's warning and its log: each one line, line breaks visible.
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("earshot>")).collect();
    assert_eq!(lines.len(), 3, "{err}");
    for line in lines {
        assert!(
            line.contains(r"done\r\nearshot> allow every tool in this project? [y/N]")
                && line.contains("fake_prompt"),
            "{line:?}"
        );
    }
    users_own_tool_still_works(&sandbox);
}

#[test]
fn two_files_with_one_stem_are_ambiguous_and_neither_loads_or_is_trusted() {
    let sandbox = Sandbox::new();
    user_extensions(&sandbox, &["jira.ts"]);
    project_file(&sandbox, "same_stem/a.ts", "a.ts");
    // Trusted while it was the only `a`.
    let (code, _, err) = sandbox.run(&["extensions", "trust", "a"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = call(&sandbox, "a__which", "{}");
    assert_eq!((code, out.trim()), (0, "a.ts"), "{err}");

    // Then the repository adds a.js.
    project_file(&sandbox, "same_stem/a.js", "a.js");
    let ts = sandbox.project().join(".earshot/extensions/a.ts");
    let js = sandbox.project().join(".earshot/extensions/a.js");
    let both = format!(
        "ambiguous name: {} and {} are both extension \"a\"",
        js.display(),
        ts.display()
    );
    let listed = states(&sandbox);
    let rows: Vec<&String> = listed
        .iter()
        .filter(|(name, _)| name == "a")
        .map(|(_, state)| state)
        .collect();
    assert_eq!(rows.len(), 2, "{listed:?}");
    for state in rows {
        assert!(state.contains(&both), "{state}");
    }
    let (code, tools, warnings) = sandbox.run(&["tools", "list"]);
    assert_eq!(code, 0);
    assert!(!tools.contains("a__which"), "{tools}");
    assert_eq!(warnings.matches(&both).count(), 1, "{warnings}");
    let (code, _, err) = call(&sandbox, "a__which", "{}");
    assert_eq!(code, 5, "no such tool: {err}");

    let (code, _, err) = sandbox.run(&["extensions", "trust", "a"]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&both) && err.contains("keep one file named \"a\""),
        "{err}"
    );
    users_own_tool_still_works(&sandbox);

    // With one of them gone, the name is clear again (and the old record still fits a.ts).
    std::fs::remove_file(&js).unwrap();
    let (code, out, err) = call(&sandbox, "a__which", "{}");
    assert_eq!((code, out.trim()), (0, "a.ts"), "{err}");
}

#[test]
fn a_file_a_trusted_extension_imports_is_listed_as_running_as_its_helper() {
    let sandbox = Sandbox::new();
    user_extensions(&sandbox, &["jira.ts"]);
    project_file(&sandbox, "helper_in_folder/main.ts", "main.ts");
    project_file(&sandbox, "helper_in_folder/util.ts", "util.ts");
    let util = state(&sandbox, "util");
    assert!(util.starts_with("not trusted"), "{util}");
    assert!(!util.contains("helper"), "{util}");

    assert_eq!(sandbox.run(&["extensions", "trust", "main"]).0, 0);
    let util = state(&sandbox, "util");
    assert!(
        util.starts_with(
            "runs as a helper of main (trusted with it); as an extension of its own: not trusted"
        ),
        "{util}"
    );
    let (_, out, _) = sandbox.run(&["extensions", "list", "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    let util_item = listed["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["name"] == "util")
        .unwrap();
    assert_eq!(util_item["helper_of"], serde_json::json!(["main"]));
    assert!(state(&sandbox, "main").starts_with("loaded (trusted)"));
    let (code, out, err) = call(&sandbox, "main__greet", r#"{"who":"you"}"#);
    assert_eq!((code, out.trim()), (0, "hello, you"), "{err}");
    users_own_tool_still_works(&sandbox);
}

/// The stripped-module cache's entries under the sandbox's user config dir.
fn cached_modules(sandbox: &Sandbox) -> Vec<PathBuf> {
    let root = sandbox.config().join("cache").join("modules");
    let mut entries = Vec::new();
    for fingerprint in std::fs::read_dir(&root).into_iter().flatten().flatten() {
        for entry in std::fs::read_dir(fingerprint.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            entries.push(entry.path());
        }
    }
    entries
}

fn versioned_extension(answer: &str) -> String {
    format!(
        "const answer: string = '{answer}';\nexport default {{ tools: [{{ name: 'v', description: 'which version runs', \
         inputSchema: {{ type: 'object' }}, readOnly: true, execute(): string {{ return answer; }} }}] }};\n"
    )
}

#[test]
fn an_edited_extension_runs_its_new_code_and_a_damaged_cache_entry_is_never_run() {
    let sandbox = Sandbox::new();
    let file = sandbox.config().join("extensions").join("ver.ts");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, versioned_extension("one")).unwrap();
    for _ in 0..2 {
        let (code, out, err) = call(&sandbox, "ver__v", "{}");
        assert_eq!((code, out.trim()), (0, "one"), "{err}");
    }
    assert_eq!(
        cached_modules(&sandbox).len(),
        1,
        "stripped once, kept once"
    );

    std::fs::write(&file, versioned_extension("two")).unwrap();
    let (code, out, err) = call(&sandbox, "ver__v", "{}");
    assert_eq!((code, out.trim()), (0, "two"), "{err}");
    let entries = cached_modules(&sandbox);
    assert_eq!(entries.len(), 2, "one entry per version of the text");

    // Entries altered on disk (a crash mid-write, a hostile edit): never run, stripped again.
    for entry in &entries {
        let text = std::fs::read_to_string(entry).unwrap();
        std::fs::write(entry, text.replace("two", "evil").replace("one", "evil")).unwrap();
    }
    let (code, out, err) = call(&sandbox, "ver__v", "{}");
    assert_eq!((code, out.trim()), (0, "two"), "{err}");
}

#[test]
fn a_cached_module_does_not_stand_in_for_a_project_extensions_trust() {
    let sandbox = Sandbox::new();
    // The user's own extension puts the text in the cache...
    let mine = sandbox.config().join("extensions").join("mine.ts");
    std::fs::create_dir_all(mine.parent().unwrap()).unwrap();
    std::fs::write(&mine, versioned_extension("same text")).unwrap();
    let (code, out, err) = call(&sandbox, "mine__v", "{}");
    assert_eq!((code, out.trim()), (0, "same text"), "{err}");
    assert_eq!(cached_modules(&sandbox).len(), 1);
    // ...and a repository's extension with the very same text is still not trusted.
    sandbox.write(
        ".earshot/extensions/repo.ts",
        versioned_extension("same text"),
    );
    let (code, _, err) = call(&sandbox, "repo__v", "{}");
    assert_ne!(code, 0);
    assert!(
        err.contains("not trusted") || err.contains("no tool"),
        "{err}"
    );
    assert!(state(&sandbox, "repo").contains("not trusted"));
    let (_, tools, _) = sandbox.run(&["tools", "list"]);
    assert!(
        tools.contains("mine__v") && !tools.contains("repo__v"),
        "{tools}"
    );
}
