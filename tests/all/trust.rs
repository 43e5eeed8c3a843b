//! Trust records a repository cannot forge: only a record this user made, on this machine, for
//! this project, for exactly what is there now, lets repository-chosen code load.

// Its MCP tests are compiled out without the MCP client; what only they use goes with them.
#![cfg_attr(not(feature = "mcp"), allow(dead_code, unused_imports))]

use crate::common::{Sandbox, hello_wasm};

/// A project server: the stdlib fixture with one tool (`--count 1`).
fn server_settings(count: &str) -> String {
    serde_json::json!({"mcpServers": {"gh": crate::common::fixture_server("thirty_tools.py", &["--count", count])}})
        .to_string()
}

fn with_plugin() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/plugins/hello.wasm",
        std::fs::read(hello_wasm()).unwrap(),
    );
    sandbox
}

fn plugin_state(sandbox: &Sandbox) -> String {
    let (code, stdout, stderr) = sandbox.run(&["plugins", "list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let listed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    listed["plugins"][0]["state"].as_str().unwrap().to_string()
}

#[test]
fn untrusted_until_trusted_and_trust_is_recorded_signed_and_ignored_by_git() {
    let sandbox = with_plugin();
    assert_eq!(
        plugin_state(&sandbox),
        "not trusted: the repository added it; run `earshot plugins trust hello` to load it"
    );
    let (code, stdout, stderr) = sandbox.run(&["plugins", "trust", "hello"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("trusted plugin \"hello\""), "{stdout}");
    assert_eq!(plugin_state(&sandbox), "trusted");

    let local: serde_json::Value =
        serde_json::from_str(&sandbox.read(".earshot/settings.local.json")).unwrap();
    let record = &local["trust"]["plugins"]["hello"];
    assert!(record["digest"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(
        record["project"],
        sandbox.project().to_string_lossy().as_ref()
    );
    assert_eq!(record["signature"].as_str().unwrap().len(), 64);
    assert!(
        sandbox
            .read(".earshot/.gitignore")
            .lines()
            .any(|line| line == "/settings.local.json")
    );

    // The key was created for this user only.
    let key = sandbox.config().join("trust.key");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o600
    );

    let (code, _, _) = sandbox.run(&["plugins", "untrust", "hello"]);
    assert_eq!(code, 0);
    assert!(plugin_state(&sandbox).starts_with("not trusted"));
}

#[test]
fn a_changed_component_lapses_its_trust() {
    let sandbox = with_plugin();
    assert_eq!(sandbox.run(&["plugins", "trust", "hello"]).0, 0);
    let mut bytes = std::fs::read(hello_wasm()).unwrap();
    bytes.extend_from_slice(b"\0tampered");
    sandbox.write(".earshot/plugins/hello.wasm", bytes);
    assert_eq!(
        plugin_state(&sandbox),
        "changed since you trusted it; review it, then run `earshot plugins trust hello`"
    );
}

#[cfg(feature = "mcp")]
#[test]
fn a_changed_server_definition_lapses_its_trust() {
    let sandbox = Sandbox::new();
    sandbox.write(".earshot/settings.json", server_settings("1"));
    assert_eq!(sandbox.run(&["mcp", "trust", "gh"]).0, 0);
    let (_, stdout, _) = sandbox.run(&["mcp", "list"]);
    assert!(
        stdout.contains("gh    project  stdio      connected: 1 tool(s)"),
        "{stdout}"
    );
    sandbox.write(".earshot/settings.json", server_settings("2"));
    let (_, stdout, _) = sandbox.run(&["mcp", "list"]);
    assert!(
        stdout.contains(
            "changed since you trusted it (its definition); review it, then run `earshot mcp trust gh`"
        ),
        "{stdout}"
    );
}

#[test]
fn a_record_the_repository_wrote_does_not_count() {
    let sandbox = with_plugin();
    // Make a real key exist, so the check is against a key, not its absence.
    assert_eq!(sandbox.run(&["plugins", "trust", "hello"]).0, 0);
    let local: serde_json::Value =
        serde_json::from_str(&sandbox.read(".earshot/settings.local.json")).unwrap();
    let digest = local["trust"]["plugins"]["hello"]["digest"]
        .as_str()
        .unwrap()
        .to_string();
    let forged = serde_json::json!({"trust": {"plugins": {"hello": {
        "digest": digest,
        "project": sandbox.project().to_string_lossy(),
        "signature": "0".repeat(64),
    }}}});
    sandbox.write(".earshot/settings.local.json", forged.to_string());
    assert_eq!(
        plugin_state(&sandbox),
        "its trust record was not made by you on this machine (committed or copied); run `earshot plugins trust hello`"
    );
}

#[test]
fn a_record_copied_from_another_clone_does_not_count() {
    let original = with_plugin();
    assert_eq!(original.run(&["plugins", "trust", "hello"]).0, 0);
    // A second clone, same user and key, with the first clone's local file copied in.
    let clone = with_plugin();
    std::fs::copy(
        original.config().join("trust.key"),
        clone.config().join("trust.key"),
    )
    .unwrap();
    clone.write(
        ".earshot/settings.local.json",
        original.read(".earshot/settings.local.json"),
    );
    let state = plugin_state(&clone);
    assert_eq!(
        state,
        format!(
            "its trust record was made for another clone ({}); run `earshot plugins trust hello` here",
            original.project().display()
        )
    );
    // Editing the project field to match is a forgery, not a fix.
    let edited = clone.read(".earshot/settings.local.json").replace(
        &original.project().to_string_lossy().to_string(),
        &clone.project().to_string_lossy(),
    );
    clone.write(".earshot/settings.local.json", edited);
    assert!(plugin_state(&clone).starts_with("its trust record was not made by you"));
}

#[test]
fn a_missing_or_unreadable_key_means_no_record_counts() {
    let sandbox = with_plugin();
    assert_eq!(sandbox.run(&["plugins", "trust", "hello"]).0, 0);
    let key = sandbox.config().join("trust.key");
    let saved = std::fs::read(&key).unwrap();

    std::fs::remove_file(&key).unwrap();
    assert_eq!(
        plugin_state(&sandbox),
        "not trusted: there is no trust key on this machine, so this record was made elsewhere; then run `earshot plugins trust hello`"
    );

    std::fs::write(&key, "not a key").unwrap();
    let state = plugin_state(&sandbox);
    assert!(
        state.starts_with(&format!(
            "not trusted: the trust key at {} cannot be used (it is not 64 hex digits)",
            key.display()
        )),
        "{state}"
    );
    // trust does not overwrite a key it cannot read.
    let (code, _, stderr) = sandbox.run(&["plugins", "trust", "hello"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("cannot be used"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&key).unwrap(), "not a key");

    std::fs::write(&key, saved).unwrap();
    assert_eq!(plugin_state(&sandbox), "trusted");
}

#[test]
fn trusting_what_does_not_exist_or_needs_no_trust_is_a_clear_error() {
    let sandbox = Sandbox::new();
    let (code, _, stderr) = sandbox.run(&["plugins", "trust", "nothing"]);
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "error: no plugin named \"nothing\" in this project\nhint: `earshot plugins list` shows what is there\n"
    );

    let (code, _, stderr) = sandbox.run(&["mcp", "trust", "ghost"]);
    assert_eq!(code, 1);
    assert!(
        stderr.starts_with("error: no MCP server named \"ghost\" in any settings file"),
        "{stderr}"
    );

    // A user-level plugin and a user-level server are the user's own.
    std::fs::create_dir_all(sandbox.config().join("plugins")).unwrap();
    std::fs::copy(hello_wasm(), sandbox.config().join("plugins/mine.wasm")).unwrap();
    let (code, _, stderr) = sandbox.run(&["plugins", "trust", "mine"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("is in your own config dir") && stderr.contains("loads without trust"),
        "{stderr}"
    );
    std::fs::write(sandbox.config().join("settings.json"), server_settings("1")).unwrap();
    let (code, _, stderr) = sandbox.run(&["mcp", "trust", "gh"]);
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "error: server \"gh\" is defined in your user settings, which start without trust\n"
    );
    assert!(
        !sandbox
            .project()
            .join(".earshot/settings.local.json")
            .exists(),
        "nothing was written"
    );
}

// Its tool is a TypeScript extension.
#[cfg(feature = "js")]
#[test]
fn an_extensions_trust_covers_the_files_it_imports() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/extensions/jira.ts",
        "import { key } from './lib/keys.ts';\nexport default { tools: [] };\n",
    );
    sandbox.write(
        ".earshot/extensions/lib/keys.ts",
        "export const key: string = 'A';\n",
    );
    assert_eq!(sandbox.run(&["extensions", "trust", "jira"]).0, 0);
    let state = |sandbox: &Sandbox| {
        let (_, stdout, _) = sandbox.run(&["extensions", "list", "--json"]);
        let listed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        listed["extensions"][0]["state"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(state(&sandbox), "loaded (trusted)");
    // Changing only the imported file lapses the trust.
    sandbox.write(
        ".earshot/extensions/lib/keys.ts",
        "export const key: string = 'B';\n",
    );
    assert!(state(&sandbox).starts_with("changed since you trusted it (`lib/keys.ts`)"));
}

#[test]
fn a_record_whose_list_of_files_was_edited_names_nothing_and_still_refuses() {
    // Someone who can edit the local file rewrites what the record says it was made of, to send
    // the user to review the wrong file. The list is signed: a forged one is not believed.
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/extensions/jira.ts",
        "import { key } from './lib/keys.ts';\nexport default { tools: [] };\n",
    );
    sandbox.write(
        ".earshot/extensions/lib/keys.ts",
        "export const key: string = 'A';\n",
    );
    assert_eq!(sandbox.run(&["extensions", "trust", "jira"]).0, 0);
    let mut local: serde_json::Value =
        serde_json::from_str(&sandbox.read(".earshot/settings.local.json")).unwrap();
    let record = &mut local["trust"]["extensions"]["jira"];
    assert!(record["files"]["lib/keys.ts"].is_string(), "{record}");
    let real = record["files"]["lib/keys.ts"].clone();
    record["files"]["lib/keys.ts"] = record["files"]["jira.ts"].clone();
    record["files"]["jira.ts"] = real;
    sandbox.write(".earshot/settings.local.json", local.to_string());

    sandbox.write(
        ".earshot/extensions/lib/keys.ts",
        "export const key: string = 'B';\n",
    );
    let (code, stdout, _) = sandbox.run(&["extensions", "list", "--json"]);
    assert_eq!(code, 0);
    let listed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        listed["extensions"][0]["state"],
        "changed since you trusted it; review it, then run `earshot extensions trust jira`"
    );
}

#[test]
fn a_local_settings_file_that_is_a_link_is_refused() {
    // A repository commits a symbolic link where the user's local file goes, pointing at a file
    // it controls, full of allow rules and records.
    let sandbox = with_plugin();
    sandbox.write(
        "conf/local.json",
        r#"{"permissions": {"allow": ["Plugin(*)"]}}"#,
    );
    std::os::unix::fs::symlink(
        sandbox.project().join("conf/local.json"),
        sandbox.project().join(".earshot/settings.local.json"),
    )
    .unwrap();
    let (code, stdout, stderr) = sandbox.run(&["permissions", "check", "Plugin(hello__greet)"]);
    assert_eq!(code, 0);
    assert!(
        stderr.contains("settings.local.json is ignored: it is a symbolic link"),
        "{stderr}"
    );
    assert!(
        stdout.starts_with("Plugin(hello__greet): ask by default"),
        "{stdout}"
    );
    let (code, _, stderr) = sandbox.run(&["plugins", "trust", "hello"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("is a symbolic link or not your file"),
        "{stderr}"
    );
    assert_eq!(
        sandbox.read("conf/local.json"),
        r#"{"permissions": {"allow": ["Plugin(*)"]}}"#,
        "the link target was not written"
    );
}

#[test]
fn a_local_settings_folder_that_is_a_link_is_refused() {
    let sandbox = Sandbox::new();
    std::fs::remove_dir_all(sandbox.project().join(".earshot")).unwrap();
    sandbox.write(
        "conf/settings.local.json",
        r#"{"permissions": {"allow": ["Plugin(*)"]}}"#,
    );
    sandbox.write(
        "conf/plugins/hello.wasm",
        std::fs::read(hello_wasm()).unwrap(),
    );
    std::os::unix::fs::symlink(
        sandbox.project().join("conf"),
        sandbox.project().join(".earshot"),
    )
    .unwrap();
    let (_, stdout, stderr) = sandbox.run(&["permissions", "check", "Plugin(hello__greet)"]);
    assert!(
        stderr.contains("is ignored: its .earshot folder is a symbolic link"),
        "{stderr}"
    );
    assert!(
        stdout.starts_with("Plugin(hello__greet): ask by default"),
        "{stdout}"
    );
}
