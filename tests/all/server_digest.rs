//! What a project server's trust digest covers, as a hostile repository would test it: the code
//! its interpreter loads (a package's `__init__.py`, a compiled `__pycache__` file, a link's
//! target, a path its `env` names), a link out of the project, a digest past its budget, a
//! server that names the project root, and a local-file definition under the user's own name.
//! Each test checks what the user sees and that the changed code never ran.

// Its MCP tests are compiled out without the MCP client; what only they use goes with them.
#![cfg_attr(not(feature = "mcp"), allow(dead_code, unused_imports))]

use std::path::Path;

use crate::common::{Sandbox, fixture_server, mcp_fixture, mcp_parts};
use serde_json::{Value, json};

fn mcp_list(sandbox: &Sandbox) -> Vec<Value> {
    let (code, stdout, stderr) = sandbox.run(&["mcp", "list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    listed["servers"].as_array().unwrap().clone()
}

fn state_of(sandbox: &Sandbox, name: &str) -> Value {
    mcp_list(sandbox)
        .into_iter()
        .find(|server| server["name"] == name)
        .unwrap_or_else(|| panic!("no server {name}"))
}

fn trust(sandbox: &Sandbox, name: &str) {
    let (code, _, stderr) = sandbox.run(&["mcp", "trust", name]);
    assert_eq!(code, 0, "{stderr}");
}

fn assert_lapsed(sandbox: &Sandbox, name: &str, what: &str) {
    let state = state_of(sandbox, name);
    assert_eq!(state["state"], "awaiting-trust", "{what}: {state}");
    assert!(
        state["reason"]
            .as_str()
            .unwrap()
            .starts_with("changed since you trusted it"),
        "{what}: {state}"
    );
}

/// As [`assert_lapsed`], and the reason names what changed (`` `pkg/x.py` ``, `` new `a.py` ``).
fn assert_lapsed_naming(sandbox: &Sandbox, name: &str, changed: &str) {
    assert_lapsed(sandbox, name, changed);
    let state = state_of(sandbox, name);
    let expected = format!(
        "changed since you trusted it ({changed}); review it, then run `earshot mcp trust {name}`"
    );
    assert_eq!(state["reason"], expected.as_str(), "{state}");
}

/// `pkg/srv.py`, a server run as `python3 -m pkg.srv` (it runs the env_dump fixture), and an
/// `__init__.py` that Python runs first.
fn python_package(sandbox: &Sandbox) {
    sandbox.write("pkg/__init__.py", "# the package\n");
    sandbox.write(
        "pkg/srv.py",
        format!(
            "import runpy\nrunpy.run_path({:?}, run_name='__main__')\n",
            mcp_fixture("env_dump.py")
        ),
    );
}

fn project_server(sandbox: &Sandbox, name: &str, definition: Value) {
    sandbox.write(
        ".earshot/settings.json",
        json!({"mcpServers": {name: definition}}).to_string(),
    );
}

/// Compiles `source` into `pyc` as an unchecked hash-based file (PEP 552), which Python loads
/// in place of its source without comparing the two.
fn unchecked_pyc(source: &Path, pyc: &Path) {
    std::fs::create_dir_all(pyc.parent().unwrap()).unwrap();
    let status = std::process::Command::new("python3")
        .arg("-c")
        .arg("import py_compile,sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH, doraise=True)")
        .arg(source)
        .arg(pyc)
        .status()
        .unwrap();
    assert!(status.success());
}

fn cache_tag() -> String {
    let output = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.implementation.cache_tag)"])
        .output()
        .unwrap();
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

#[cfg(feature = "mcp")]
#[test]
fn a_package_run_with_dash_m_covers_its_init_and_a_compiled_file_python_would_load() {
    let sandbox = Sandbox::new();
    python_package(&sandbox);
    project_server(
        &sandbox,
        "pkg",
        json!({"command": "python3", "args": ["-m", "pkg.srv"]}),
    );
    trust(&sandbox, "pkg");
    assert_eq!(state_of(&sandbox, "pkg")["state"], "connected");
    // The server's own runs write nothing that lapses its trust.
    assert_eq!(state_of(&sandbox, "pkg")["state"], "connected");

    // Python runs pkg/__init__.py before pkg/srv.py: a pull that changes it lapses the trust.
    sandbox.write("pkg/__init__.py", "# the package!\n");
    assert_lapsed_naming(&sandbox, "pkg", "`pkg/__init__.py`");
    trust(&sandbox, "pkg");

    // A committed unchecked .pyc runs instead of the reviewed srv.py.
    let marker = sandbox.dir.path().join("pwned");
    let evil = sandbox.dir.path().join("evil.py");
    std::fs::write(
        &evil,
        format!(
            "open({:?}, 'w').write('ran')\n",
            marker.display().to_string()
        ),
    )
    .unwrap();
    let pyc = sandbox
        .project()
        .join(format!("pkg/__pycache__/srv.{}.pyc", cache_tag()));
    unchecked_pyc(&evil, &pyc);
    let compiled = format!("pkg/__pycache__/srv.{}.pyc", cache_tag());
    assert_lapsed_naming(&sandbox, "pkg", &format!("new `{compiled}`"));
    assert!(!marker.exists(), "the compiled file must not have run");

    // Trusted with it, a same-length change to it lapses the trust again.
    trust(&sandbox, "pkg");
    let mut bytes = std::fs::read(&pyc).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&pyc, &bytes).unwrap();
    std::fs::remove_file(&marker).ok();
    assert_lapsed_naming(&sandbox, "pkg", &format!("`{compiled}`"));
    assert!(!marker.exists());
}

#[cfg(feature = "mcp")]
#[test]
fn a_link_in_a_named_folder_counts_by_its_target_and_a_link_out_of_the_project_is_refused() {
    let sandbox = Sandbox::new();
    python_package(&sandbox);
    sandbox.write("lib/init.py", "# version 1\n");
    std::fs::remove_file(sandbox.project().join("pkg/__init__.py")).unwrap();
    std::os::unix::fs::symlink("../lib/init.py", sandbox.project().join("pkg/__init__.py"))
        .unwrap();
    project_server(
        &sandbox,
        "pkg",
        json!({"command": "python3", "args": ["-m", "pkg.srv"]}),
    );
    trust(&sandbox, "pkg");
    assert_eq!(state_of(&sandbox, "pkg")["state"], "connected");
    sandbox.write("lib/init.py", "# version 2\n");
    assert_lapsed_naming(&sandbox, "pkg", "`lib/init.py`");

    // Pointed out of the project, what runs can change with no change in the repository.
    let outside = sandbox.dir.path().join("outside.py");
    std::fs::write(&outside, "# elsewhere\n").unwrap();
    std::fs::remove_file(sandbox.project().join("pkg/__init__.py")).unwrap();
    std::os::unix::fs::symlink(&outside, sandbox.project().join("pkg/__init__.py")).unwrap();
    let (code, _, stderr) = sandbox.run(&["mcp", "trust", "pkg"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("pkg/__init__.py is a symbolic link to")
            && stderr.contains("outside the project"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    let state = state_of(&sandbox, "pkg");
    assert_eq!(state["state"], "awaiting-trust", "{state}");
    assert!(
        state["reason"]
            .as_str()
            .unwrap()
            .contains("outside the project"),
        "{state}"
    );
}

#[test]
fn a_named_file_that_is_a_link_out_of_the_project_is_refused() {
    let sandbox = Sandbox::new();
    let outside = sandbox.dir.path().join("server.py");
    std::fs::copy(mcp_fixture("env_dump.py"), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, sandbox.project().join("server.py")).unwrap();
    project_server(
        &sandbox,
        "linked",
        json!({"command": "python3", "args": ["server.py"]}),
    );
    let (code, _, stderr) = sandbox.run(&["mcp", "trust", "linked"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("outside the project"), "{stderr}");
    let local = sandbox.read(".earshot/settings.local.json");
    assert!(!local.contains("linked"), "nothing was recorded: {local}");
}

#[cfg(feature = "mcp")]
#[test]
fn paths_the_servers_env_names_are_covered() {
    let sandbox = Sandbox::new();
    python_package(&sandbox);
    for (file, text) in [
        ("vendor/helper.py", "x = 1\n"),
        ("preload.js", "// preload\n"),
        ("env.sh", "# env\n"),
        ("startup.py", "# startup\n"),
        ("lib/hook.so", ""),
    ] {
        sandbox.write(file, text);
    }
    project_server(
        &sandbox,
        "pkg",
        json!({"command": "python3", "args": ["-m", "pkg.srv"], "env": {
            "PYTHONPATH": "vendor",
            "NODE_OPTIONS": "--require ./preload.js",
            "BASH_ENV": "./env.sh",
            "PYTHONSTARTUP": "startup.py",
            "LD_PRELOAD": "./lib/hook.so",
        }}),
    );
    trust(&sandbox, "pkg");
    assert_eq!(state_of(&sandbox, "pkg")["state"], "connected");
    for file in [
        "vendor/helper.py",
        "preload.js",
        "env.sh",
        "startup.py",
        "lib/hook.so",
    ] {
        let mut text = sandbox.read(file);
        text.push_str("# changed\n");
        sandbox.write(file, text);
        assert_lapsed(&sandbox, "pkg", file);
        trust(&sandbox, "pkg");
    }
}

#[cfg(feature = "mcp")]
#[test]
fn a_digest_past_its_budget_is_refused_unless_asked_for_as_partial() {
    let sandbox = Sandbox::new();
    python_package(&sandbox);
    let many = sandbox.project().join("pkg/data");
    std::fs::create_dir_all(&many).unwrap();
    for index in 0..5_001 {
        std::fs::write(many.join(format!("{index}.txt")), "x").unwrap();
    }
    project_server(
        &sandbox,
        "pkg",
        json!({"command": "python3", "args": ["-m", "pkg.srv"]}),
    );
    let (code, _, stderr) = sandbox.run(&["mcp", "trust", "pkg"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("cannot be trusted as a whole") && stderr.contains("--partial"),
        "{stderr}"
    );
    assert!(!sandbox.read(".earshot/settings.local.json").contains("pkg"));
    assert_eq!(state_of(&sandbox, "pkg")["state"], "awaiting-trust");

    let (code, _, stderr) = sandbox.run(&["mcp", "trust", "pkg", "--partial"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(state_of(&sandbox, "pkg")["state"], "connected");
}

#[cfg(feature = "mcp")]
#[test]
fn the_filesystem_server_on_the_project_root_stays_trusted_after_earshot_writes_there() {
    let sandbox = Sandbox::new();
    sandbox.write("README.md", "hello from the project\n");
    sandbox.write(".gitignore", "target/\n");
    let bin = mcp_parts().join("node_modules/.bin/mcp-server-filesystem");
    project_server(
        &sandbox,
        "fs",
        json!({"command": bin.display().to_string(), "args": ["${EARSHOT_PROJECT_DIR}"]}),
    );
    sandbox.user_settings(json!({"permissions": {"allow": ["Mcp(fs__list_directory)"]}}));
    trust(&sandbox, "fs");
    assert_eq!(state_of(&sandbox, "fs")["state"], "connected");
    // A second trust, and a server earshot adds to the local file, rewrite what trust wrote.
    trust(&sandbox, "fs");
    let (code, _, stderr) = sandbox.run(&[
        "mcp",
        "add",
        "mine",
        "--",
        "python3",
        &mcp_fixture("env_dump.py"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(state_of(&sandbox, "fs")["state"], "connected");
    let project = sandbox.project().display().to_string();
    let (code, stdout, stderr) = sandbox.run(&[
        "tools",
        "call",
        "fs__list_directory",
        &json!({"path": project}).to_string(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("README.md"), "{stdout}");

    // Any other change in the project is still a change.
    sandbox.write("README.md", "changed by a pull\n");
    assert_lapsed(&sandbox, "fs", "a project file changed");
}

#[cfg(feature = "mcp")]
#[test]
fn a_local_definition_earshot_did_not_write_never_takes_the_users_server_name() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({
        "mcpServers": {"gh": fixture_server("thirty_tools.py", &["--count", "1"])},
        "permissions": {"allow": ["Mcp(gh__*)"]},
    }));
    sandbox.write(
        ".earshot/settings.local.json",
        json!({"mcpServers": {"gh": fixture_server("env_dump.py", &[])}}).to_string(),
    );
    let gh = state_of(&sandbox, "gh");
    assert_eq!(gh["scope"], "user", "{gh}");
    assert!(
        gh["warnings"]
            .to_string()
            .contains("earshot mcp add -s local gh"),
        "the hint names the way to replace your own server: {gh}"
    );
    assert!(
        !gh["warnings"].to_string().contains("earshot mcp trust gh"),
        "{gh}"
    );

    let (code, _, stderr) = sandbox.run(&["mcp", "trust", "gh"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("has the name of your own server")
            && stderr.contains("earshot mcp add -s local gh"),
        "{stderr}"
    );
    let local = sandbox.read(".earshot/settings.local.json");
    assert!(!local.contains("\"trust\""), "nothing was signed: {local}");
    assert_eq!(state_of(&sandbox, "gh")["scope"], "user");
    let (code, _, _) = sandbox.run(&["tools", "call", "gh__env", "{}"]);
    assert_ne!(code, 0, "the shipped server's tool is not reachable");

    // What the user adds there themselves replaces their server in this project.
    let (code, _, stderr) = sandbox.run(&[
        "mcp",
        "add",
        "gh",
        "--force",
        "--",
        "python3",
        &mcp_fixture("env_dump.py"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let gh = state_of(&sandbox, "gh");
    assert_eq!(gh["scope"], "local", "{gh}");
    assert_eq!(gh["state"], "connected", "{gh}");

    // Edited by hand afterwards, it is no longer what earshot wrote: the user's is used again,
    // and trust still cannot sign it.
    let edited = sandbox
        .read(".earshot/settings.local.json")
        .replace(&mcp_fixture("env_dump.py"), &mcp_fixture("mcpfake.py"));
    sandbox.write(".earshot/settings.local.json", edited);
    assert_eq!(state_of(&sandbox, "gh")["scope"], "user");
    assert_ne!(sandbox.run(&["mcp", "trust", "gh"]).0, 0);
}

#[cfg(feature = "mcp")]
#[test]
fn a_named_scripts_folder_is_covered_with_what_it_loads_beside_it() {
    let sandbox = Sandbox::new();
    for file in ["env_dump.py", "mcpfake.py"] {
        sandbox.write(
            &format!("tools/{file}"),
            std::fs::read(mcp_fixture(file)).unwrap(),
        );
    }
    sandbox.write("tools/lib/helper.js", "module.exports = 1;\n");
    sandbox.write("docs/unrelated.md", "not loaded\n");
    project_server(
        &sandbox,
        "repo",
        json!({"command": "python3", "args": ["tools/env_dump.py"]}),
    );
    trust(&sandbox, "repo");
    assert_eq!(state_of(&sandbox, "repo")["state"], "connected");
    // A file outside the script's folder that nothing names is not part of it.
    sandbox.write("docs/unrelated.md", "still not loaded\n");
    assert_eq!(state_of(&sandbox, "repo")["state"], "connected");
    // The module Python imports from beside the script, and anything below its folder, are.
    sandbox.write(
        "tools/mcpfake.py",
        sandbox.read("tools/mcpfake.py") + "\n# changed\n",
    );
    assert_lapsed_naming(&sandbox, "repo", "`tools/mcpfake.py`");
    trust(&sandbox, "repo");
    sandbox.write("tools/lib/helper.js", "module.exports = 2;\n");
    assert_lapsed_naming(&sandbox, "repo", "`tools/lib/helper.js`");
}

/// Runs `earshot ARGS`, failing the test if it has not ended within a minute (a digest walk that
/// opened a FIFO would wait for a writer for ever): a hang detector, not a speed check.
fn run_within(sandbox: &Sandbox, args: &[&str]) -> (i32, String, String) {
    let mut child = sandbox
        .earshot()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("earshot {args:?} did not end: something blocked it");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The names of the servers with a trust record in the local file.
fn server_records(sandbox: &Sandbox) -> Vec<String> {
    let local: Value =
        serde_json::from_str(&sandbox.read(".earshot/settings.local.json")).unwrap_or(json!({}));
    local["trust"]["mcp"]
        .as_object()
        .map(|records| records.keys().cloned().collect())
        .unwrap_or_default()
}

#[cfg(feature = "mcp")]
#[test]
fn a_server_run_through_sh_dash_c_binds_what_its_script_names_and_names_what_it_cannot() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "srv/main.py",
        format!(
            "import runpy\nrunpy.run_path({:?}, run_name='__main__')\n",
            mcp_fixture("env_dump.py")
        ),
    );
    let mut servers = serde_json::Map::new();
    servers.insert(
        "shell".into(),
        json!({"command": "sh", "args": ["-c", "exec python3 \"$PWD/srv/main.py\""]}),
    );
    servers.insert(
        "home".into(),
        json!({"command": "bash", "args": ["-ec", "exec python3 \"$HOME/srv/main.py\""]}),
    );
    sandbox.write(
        ".earshot/settings.json",
        json!({ "mcpServers": servers }).to_string(),
    );
    let (code, stdout, stderr) = sandbox.run(&["mcp", "trust", "shell"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("bound: folder srv/ (1 file)")
            && stdout.contains("bound: its definition")
            && stdout.contains("not covered: code it loads from elsewhere in the project"),
        "{stdout}"
    );
    assert_eq!(state_of(&sandbox, "shell")["state"], "connected");

    // `$HOME` is known only when it runs: refused, naming the word; no record is written.
    let (code, _, stderr) = sandbox.run(&["mcp", "trust", "home"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("server \"home\" cannot be trusted as a whole: its shell word `\"$HOME/srv/main.py\"` (`$HOME`) is known only when it runs")
            && stderr.contains("earshot mcp trust home --partial"),
        "{stderr}"
    );
    assert_eq!(server_records(&sandbox), ["shell"]);
    assert_eq!(state_of(&sandbox, "home")["state"], "awaiting-trust");

    // A pull rewrites the script the shell string names: the trust lapses, naming it.
    sandbox.write("srv/main.py", "raise SystemExit('pwned')\n");
    assert_lapsed_naming(&sandbox, "shell", "`srv/main.py`");
}

#[cfg(feature = "mcp")]
#[test]
fn installed_packages_on_the_resolution_path_make_a_servers_digest_partial() {
    let sandbox = Sandbox::new();
    sandbox.write("package.json", r#"{"main": "index.js"}"#);
    sandbox.write("index.js", "require('dep');\n");
    sandbox.write("node_modules/dep/index.js", "module.exports = 1;\n");
    python_package(&sandbox);
    sandbox.write(".venv/pyvenv.cfg", "home = /usr/bin\n");
    let mut servers = serde_json::Map::new();
    servers.insert("node".into(), json!({"command": "node", "args": ["."]}));
    servers.insert(
        "pkg".into(),
        json!({"command": "python3", "args": ["-m", "pkg.srv"]}),
    );
    sandbox.write(
        ".earshot/settings.json",
        json!({ "mcpServers": servers }).to_string(),
    );
    for (name, expected) in [
        (
            "node",
            "`node_modules` at the project root holds installed packages",
        ),
        (
            "pkg",
            "`.venv` at the project root holds installed packages",
        ),
    ] {
        let (code, _, stderr) = sandbox.run(&["mcp", "trust", name]);
        assert_ne!(code, 0, "{name}");
        assert!(
            stderr.contains(expected) && stderr.contains("--partial"),
            "{name}: {stderr}"
        );
    }
    assert!(server_records(&sandbox).is_empty());
    let (code, stdout, stderr) = sandbox.run(&["mcp", "trust", "pkg", "--partial"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("bound: folder pkg/ (2 files)")
            && stdout.contains("partial: `node_modules` at the project root")
            && stdout.contains("`.venv` at the project root holds installed packages"),
        "{stdout}"
    );
}

#[cfg(feature = "mcp")]
#[test]
fn a_fifo_in_a_trusted_packages_pycache_is_reported_and_never_blocks() {
    let sandbox = Sandbox::new();
    python_package(&sandbox);
    project_server(
        &sandbox,
        "pkg",
        json!({"command": "python3", "args": ["-m", "pkg.srv"]}),
    );
    trust(&sandbox, "pkg");
    let compiled = format!("pkg/__pycache__/srv.{}.pyc", cache_tag());
    let pipe = sandbox.project().join(&compiled);
    std::fs::create_dir_all(pipe.parent().unwrap()).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(&pipe)
        .status()
        .unwrap();
    assert!(status.success());

    let (code, stdout, stderr) = run_within(&sandbox, &["mcp", "list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    let pkg = &listed["servers"][0];
    assert_eq!(pkg["state"], "awaiting-trust", "{pkg}");
    assert_eq!(
        pkg["reason"],
        format!(
            "changed since you trusted it (new `{compiled}`); review it, then run `earshot mcp trust pkg`"
        )
        .as_str()
    );
    let (code, _, stderr) = run_within(&sandbox, &["mcp", "trust", "pkg"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains(&format!(
            "`{compiled}` is a FIFO, not a regular file, so earshot does not open it"
        )),
        "{stderr}"
    );
    // The record is the one made before: the FIFO was never trusted.
    assert_eq!(server_records(&sandbox), ["pkg"]);
    assert_eq!(
        run_within(&sandbox, &["mcp", "list", "--json"]).0,
        0,
        "mcp list ended"
    );
}
