//! Trusted project code runs what was hashed, not what its path names now (issue 54, class A):
//! a project hook or stdio server runs from a private, read-only snapshot of the files its trust
//! digest covered, under the user's cache dir, with the project as its working directory and
//! `EARSHOT_PROJECT_DIR`. A script swapped after the check never runs; Python's working directory
//! is off its path (a `json.py` a pull adds at the project root never shadows the stdlib), while
//! a script's sibling imports and `-m pkg` still work from the snapshot; Node resolves a
//! package from the project's `node_modules` beside the snapshot.

// Its MCP tests are compiled out without the MCP client; what only they use goes with them.
#![cfg_attr(not(feature = "mcp"), allow(dead_code, unused_imports))]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::Sandbox;

/// Where snapshots are kept for this sandbox's user.
fn snapshots(sandbox: &Sandbox) -> PathBuf {
    sandbox.config().join("cache/snapshots")
}

/// A project hook `name` on `UserPromptSubmit` running `handler` (a command handler's fields).
fn prompt_hook(sandbox: &Sandbox, name: &str, handler: Value) {
    let mut handler = handler;
    handler["type"] = json!("command");
    handler["name"] = json!(name);
    sandbox.write(
        ".earshot/settings.json",
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [handler]}]}}).to_string(),
    );
}

/// Fires `UserPromptSubmit` through `earshot hooks run`: (exit code, stdout, stderr).
fn fire(sandbox: &Sandbox) -> (i32, String, String) {
    let input = sandbox.dir.path().join("input.json");
    std::fs::write(&input, r#"{"prompt": "hello"}"#).unwrap();
    sandbox.run(&[
        "hooks",
        "run",
        "UserPromptSubmit",
        "--input",
        input.to_str().unwrap(),
    ])
}

/// A script that appends `version` to `ran.txt`, its own path to `where.txt` and its working
/// directory to `cwd.txt`, all in the project.
fn script(version: &str) -> String {
    format!(
        "#!/bin/sh\ncat >/dev/null\necho {version} >> \"$EARSHOT_PROJECT_DIR/ran.txt\"\n\
         echo \"$0\" > \"$EARSHOT_PROJECT_DIR/where.txt\"\npwd > \"$EARSHOT_PROJECT_DIR/cwd.txt\"\n"
    )
}

fn trust_hook(sandbox: &Sandbox, name: &str, partial: bool) {
    let mut args = vec!["hooks", "trust", name];
    if partial {
        args.push("--partial");
    }
    let (code, _, stderr) = sandbox.run(&args);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_trusted_hook_runs_the_hashed_bytes_from_a_read_only_snapshot_in_the_project() {
    let sandbox = Sandbox::new();
    sandbox.write(".earshot/hooks/g.sh", script("trusted"));
    prompt_hook(
        &sandbox,
        "guard",
        json!({"command": "sh", "args": [".earshot/hooks/g.sh"]}),
    );
    trust_hook(&sandbox, "guard", false);
    let (code, _, stderr) = fire(&sandbox);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(sandbox.read("ran.txt"), "trusted\n");
    let project = sandbox.project();
    let ran_from = PathBuf::from(sandbox.read("where.txt").trim());
    assert!(
        ran_from.starts_with(snapshots(&sandbox).canonicalize().unwrap())
            || ran_from.starts_with(snapshots(&sandbox)),
        "ran from {}",
        ran_from.display()
    );
    assert!(ran_from.ends_with(".earshot/hooks/g.sh"));
    assert!(!ran_from.starts_with(&project));
    assert_eq!(
        sandbox.read("cwd.txt").trim(),
        project.display().to_string()
    );
    assert!(
        std::fs::metadata(&ran_from)
            .unwrap()
            .permissions()
            .readonly()
    );
    assert_eq!(
        std::fs::read_to_string(&ran_from).unwrap(),
        script("trusted")
    );

    // A pull rewrites the script: the trust lapses, nothing runs, and the copy stays as it was.
    sandbox.write(".earshot/hooks/g.sh", script("swapped"));
    let (_, _, stderr) = fire(&sandbox);
    assert!(stderr.contains("changed since you trusted it"), "{stderr}");
    assert_eq!(sandbox.read("ran.txt"), "trusted\n", "the new script ran");
    assert_eq!(
        std::fs::read_to_string(&ran_from).unwrap(),
        script("trusted")
    );
    // Trusted again, the new bytes run, from a new snapshot.
    trust_hook(&sandbox, "guard", false);
    fire(&sandbox);
    assert_eq!(sandbox.read("ran.txt"), "trusted\nswapped\n");
    assert_ne!(PathBuf::from(sandbox.read("where.txt").trim()), ran_from);
}

#[test]
fn a_script_swapped_between_the_check_and_the_run_never_runs() {
    let sandbox = Sandbox::new();
    sandbox.write(".earshot/hooks/g.sh", script("trusted"));
    prompt_hook(
        &sandbox,
        "guard",
        json!({"command": "sh", "args": [".earshot/hooks/g.sh"]}),
    );
    trust_hook(&sandbox, "guard", false);
    // The first run makes the snapshot.
    fire(&sandbox);
    assert_eq!(sandbox.read("ran.txt"), "trusted\n");

    // A pull (or a tool) swaps the script back and forth while hooks fire: each run either
    // refuses (the check saw the new bytes) or runs the trusted copy.
    let path = sandbox.project().join(".earshot/hooks/g.sh");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let stop = stop.clone();
        let path = path.clone();
        std::thread::spawn(move || {
            let staged = path.with_extension("staged");
            let mut swapped = false;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let text = if swapped {
                    script("trusted")
                } else {
                    script("swapped")
                };
                std::fs::write(&staged, text).unwrap();
                std::fs::rename(&staged, &path).unwrap();
                swapped = !swapped;
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        })
    };
    for _ in 0..25 {
        fire(&sandbox);
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    swapper.join().unwrap();
    let ran = sandbox.read("ran.txt");
    assert!(!ran.contains("swapped"), "the swapped script ran: {ran}");
}

#[test]
fn a_shell_hook_naming_its_script_through_the_project_dir_runs_the_snapshot() {
    for (form, command) in [
        ("pwd-var", "sh \"$PWD/.earshot/hooks/g.sh\""),
        (
            "default",
            "sh \"${EARSHOT_PROJECT_DIR:-.}/.earshot/hooks/g.sh\"",
        ),
        ("pwd-command", "sh \"$(pwd)/.earshot/hooks/g.sh\""),
        ("claude", "sh \"$CLAUDE_PROJECT_DIR\"/.earshot/hooks/g.sh"),
    ] {
        let sandbox = Sandbox::new();
        sandbox.write(".earshot/hooks/g.sh", script("trusted"));
        prompt_hook(&sandbox, "guard", json!({"command": command}));
        trust_hook(&sandbox, "guard", true);
        let (code, _, stderr) = fire(&sandbox);
        assert_eq!(code, 0, "{form}: {stderr}");
        assert_eq!(sandbox.read("ran.txt"), "trusted\n", "{form}: {stderr}");
        let ran_from = sandbox.read("where.txt");
        assert!(
            ran_from.contains("/cache/snapshots/"),
            "{form}: ran from {ran_from}"
        );
        assert_eq!(
            sandbox.read("cwd.txt").trim(),
            sandbox.project().display().to_string(),
            "{form}"
        );
    }
}

/// A `json.py` at the project root that, imported, leaves a marker beside the project.
fn hostile_json(sandbox: &Sandbox) -> PathBuf {
    let marker = sandbox.dir.path().join("json-ran");
    sandbox.write(
        "json.py",
        format!(
            "open({:?}, 'w').write('ran')\nraise SystemExit('shadowed')\n",
            marker.display().to_string()
        ),
    );
    marker
}

#[test]
fn a_python_hook_imports_its_siblings_from_the_snapshot_and_never_the_projects_json() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/hooks/check.py",
        "import json, os, sys\nimport helper\n\
         out = {'file': __file__, 'helper': helper.__file__, 'json': json.__file__, 'cwd': os.getcwd()}\n\
         open(os.path.join(os.environ['EARSHOT_PROJECT_DIR'], 'out.json'), 'w').write(json.dumps(out))\n",
    );
    sandbox.write(".earshot/hooks/helper.py", "VALUE = 1\n");
    sandbox.write("pkg/__init__.py", "");
    sandbox.write(
        "pkg/__main__.py",
        "import json, os\n\
         open(os.path.join(os.environ['EARSHOT_PROJECT_DIR'], 'module.json'), 'w').write(json.dumps({'file': __file__, 'json': json.__file__}))\n",
    );
    sandbox.write(
        ".earshot/settings.json",
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "name": "check", "command": "python3", "args": [".earshot/hooks/check.py"]},
            {"type": "command", "name": "module", "command": "python3", "args": ["-m", "pkg"]},
        ]}]}})
        .to_string(),
    );
    trust_hook(&sandbox, "check", false);
    trust_hook(&sandbox, "module", false);
    // A pull adds json.py at the project root: neither digest covers the root, so both stay
    // trusted; neither may import it.
    let marker = hostile_json(&sandbox);
    let (code, _, stderr) = fire(&sandbox);
    assert_eq!(code, 0, "{stderr}");
    assert!(!marker.exists(), "the project's json.py ran: {stderr}");
    let out: Value = serde_json::from_str(&sandbox.read("out.json")).expect("check ran");
    let snapshots = snapshots(&sandbox).display().to_string();
    assert!(
        out["file"].as_str().unwrap().starts_with(&snapshots),
        "{out}"
    );
    assert!(
        out["helper"].as_str().unwrap().starts_with(&snapshots),
        "{out}"
    );
    assert!(
        !out["json"].as_str().unwrap().contains("/project/"),
        "{out}"
    );
    assert_eq!(out["cwd"], sandbox.project().display().to_string());
    let module: Value = serde_json::from_str(&sandbox.read("module.json")).expect("-m ran");
    assert!(
        module["file"].as_str().unwrap().starts_with(&snapshots),
        "{module}"
    );
    assert!(
        !module["json"].as_str().unwrap().contains("/project/"),
        "{module}"
    );
}

#[test]
fn a_node_hook_requires_its_package_from_the_projects_node_modules_beside_the_snapshot() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "node_modules/dep/index.js",
        "module.exports = 'from dep';\n",
    );
    sandbox.write(".earshot/hooks/lib/util.js", "module.exports = 'util';\n");
    sandbox.write(
        ".earshot/hooks/n.js",
        "const fs = require('fs'); const path = require('path');\n\
         const out = {file: __filename, dep: require('dep'), util: require('./lib/util'), cwd: process.cwd()};\n\
         fs.writeFileSync(path.join(process.env.EARSHOT_PROJECT_DIR, 'node.json'), JSON.stringify(out));\n",
    );
    prompt_hook(
        &sandbox,
        "n",
        json!({"command": "node", "args": [".earshot/hooks/n.js"]}),
    );
    // node_modules is not hashed: trusted as partial when the digest says so.
    trust_hook(&sandbox, "n", true);
    let (code, _, stderr) = fire(&sandbox);
    assert_eq!(code, 0, "{stderr}");
    let out: Value = serde_json::from_str(&sandbox.read("node.json")).expect("node ran");
    let snapshots = snapshots(&sandbox).display().to_string();
    assert!(
        out["file"].as_str().unwrap().starts_with(&snapshots),
        "{out}"
    );
    assert_eq!(out["dep"], "from dep");
    assert_eq!(out["util"], "util");
    assert_eq!(out["cwd"], sandbox.project().display().to_string());
}

/// A project stdio server on the PyPI `mcp` package: its tool `where` answers where its code,
/// its sibling module and `json` came from, its working directory and `EARSHOT_PROJECT_DIR`.
const SERVER: &str = r#"import json, os, sys
from mcp.server.mcpserver import MCPServer
import SIBLING as sibling

app = MCPServer("notes")


@app.tool(description="Where this server runs from")
def where() -> str:
    return json.dumps({"file": __file__, "sibling": sibling.__file__, "json": json.__file__,
                       "cwd": os.getcwd(), "project": os.environ.get("EARSHOT_PROJECT_DIR")})


if __name__ == "__main__":
    app.run()
"#;

#[cfg(feature = "mcp")]
fn where_server_answers(sandbox: &Sandbox, server: &str) -> Value {
    let (code, stdout, stderr) = sandbox.run(&["tools", "call", &format!("{server}__where"), "{}"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let start = stdout.find('{').expect("an answer");
    let end = stdout.rfind('}').unwrap();
    serde_json::from_str(&stdout[start..=end]).unwrap_or_else(|_| panic!("{stdout}"))
}

#[cfg(feature = "mcp")]
#[test]
fn project_python_servers_run_as_a_module_and_as_a_script_from_the_snapshot() {
    use crate::common::mcp_python;
    let sandbox = Sandbox::new();
    let python = mcp_python();
    sandbox.write("notes/__init__.py", "");
    sandbox.write("notes/tools.py", "VALUE = 1\n");
    sandbox.write(
        "notes/__main__.py",
        SERVER.replace("import SIBLING", "import notes.tools"),
    );
    sandbox.write("server/helpers.py", "VALUE = 2\n");
    sandbox.write("server/main.py", SERVER.replace("SIBLING", "helpers"));
    sandbox.write(
        ".earshot/settings.json",
        json!({"mcpServers": {
            "module": {"command": python, "args": ["-m", "notes"]},
            "script": {"command": python, "args": ["server/main.py"]},
        }})
        .to_string(),
    );
    sandbox.user_settings(json!({"permissions": {"allow": ["Mcp(module__*)", "Mcp(script__*)"]}}));
    for name in ["module", "script"] {
        let (code, _, stderr) = sandbox.run(&["mcp", "trust", name]);
        assert_eq!(code, 0, "{stderr}");
    }
    let marker = hostile_json(&sandbox);
    let snapshots = snapshots(&sandbox).display().to_string();
    let project = sandbox.project().display().to_string();
    for name in ["module", "script"] {
        let answer = where_server_answers(&sandbox, name);
        assert!(!marker.exists(), "{name}: the project's json.py ran");
        assert!(
            answer["file"].as_str().unwrap().starts_with(&snapshots),
            "{name}: {answer}"
        );
        assert!(
            answer["sibling"].as_str().unwrap().starts_with(&snapshots),
            "{name}: {answer}"
        );
        assert!(
            !answer["json"].as_str().unwrap().starts_with(&project),
            "{name}: {answer}"
        );
        assert_eq!(answer["cwd"], project.as_str(), "{name}");
        assert_eq!(answer["project"], project.as_str(), "{name}");
    }
    // A change to the module's code lapses its trust as before; the other runs on.
    sandbox.write("notes/tools.py", "VALUE = 3\n");
    let (code, _, stderr) = sandbox.run(&["tools", "call", "module__where", "{}"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("changed since you trusted it"), "{stderr}");
    where_server_answers(&sandbox, "script");
    assert!(!marker.exists());
}

/// Every snapshot file is outside the project and read-only.
#[test]
fn snapshots_are_private_and_read_only() {
    let sandbox = Sandbox::new();
    sandbox.write(".earshot/hooks/g.sh", script("trusted"));
    prompt_hook(
        &sandbox,
        "guard",
        json!({"command": "sh", "args": [".earshot/hooks/g.sh"]}),
    );
    trust_hook(&sandbox, "guard", false);
    fire(&sandbox);
    fn walk(path: &Path, files: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(path).unwrap().flatten() {
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                walk(&entry.path(), files);
            } else if kind.is_file() {
                files.push(entry.path());
            }
        }
    }
    let mut files = Vec::new();
    walk(&snapshots(&sandbox), &mut files);
    assert!(!files.is_empty());
    for file in files {
        assert!(
            std::fs::metadata(&file).unwrap().permissions().readonly(),
            "{}",
            file.display()
        );
    }
    // Nothing was written into the project but what the hook itself wrote.
    let mut listed: Vec<String> = std::fs::read_dir(sandbox.project())
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name != ".gitignore")
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        [".earshot", ".git", "cwd.txt", "ran.txt", "where.txt"]
    );
}
