//! Settings files: malformed ones are reported with line and column while the rest load; writes
//! are atomic, keep what they do not own, refuse files that do not parse, and do not lose
//! concurrent edits.

use crate::common::{Sandbox, hello_wasm};

#[test]
fn a_malformed_file_is_reported_with_line_and_column_and_the_others_still_load() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/settings.json",
        "{\n  \"permissions\": {\n    \"deny\": [\"Mcp(x__*)\",]\n  }\n}\n",
    );
    std::fs::write(
        sandbox.config().join("settings.json"),
        r#"{"permissions": {"allow": ["Mcp(gh__*)"]}}"#,
    )
    .unwrap();
    let (code, stdout, stderr) = sandbox.run(&["permissions", "list"]);
    assert_eq!(code, 0);
    let path = sandbox.project().join(".earshot/settings.json");
    assert!(
        stderr.starts_with(&format!("warning: {}:3:26: does not parse: trailing comma; its settings are ignored until it is fixed", path.display())),
        "{stderr}"
    );
    assert!(
        stdout.contains("Mcp(gh__*)"),
        "the user file still loads: {stdout}"
    );
}

#[test]
fn trust_keeps_every_key_it_does_not_own_in_order() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/plugins/hello.wasm",
        std::fs::read(hello_wasm()).unwrap(),
    );
    sandbox.write(
        ".earshot/settings.local.json",
        r#"{"zeta": 1, "permissions": {"allow": ["Mcp(a__b)"]}, "alpha": {"nested": [1, 2]}}"#,
    );
    assert_eq!(sandbox.run(&["plugins", "trust", "hello"]).0, 0);
    let written: serde_json::Value =
        serde_json::from_str(&sandbox.read(".earshot/settings.local.json")).unwrap();
    let keys: Vec<&String> = written.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["zeta", "permissions", "alpha", "trust"]);
    assert_eq!(written["alpha"], serde_json::json!({"nested": [1, 2]}));
    assert_eq!(
        written["permissions"]["allow"],
        serde_json::json!(["Mcp(a__b)"])
    );
}

#[test]
fn a_file_that_does_not_parse_is_never_overwritten() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/plugins/hello.wasm",
        std::fs::read(hello_wasm()).unwrap(),
    );
    let broken = "{\"permissions\": {\"allow\": [\"Mcp(a__b)\"\n";
    sandbox.write(".earshot/settings.local.json", broken);
    let (code, _, stderr) = sandbox.run(&["plugins", "trust", "hello"]);
    assert_eq!(code, 1);
    let path = sandbox.project().join(".earshot/settings.local.json");
    assert!(
        stderr.contains(&format!(
            "{}: refusing to rewrite it: {}:2:0: does not parse",
            path.display(),
            path.display()
        )),
        "{stderr}"
    );
    assert_eq!(sandbox.read(".earshot/settings.local.json"), broken);
}

#[test]
fn a_writer_killed_before_it_renames_leaves_the_old_file_intact() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/plugins/hello.wasm",
        std::fs::read(hello_wasm()).unwrap(),
    );
    let original = r#"{"permissions": {"allow": ["Mcp(a__b)"]}}"#;
    sandbox.write(".earshot/settings.local.json", original);
    let mut writer = sandbox
        .earshot()
        .args(["plugins", "trust", "hello"])
        .env("EARSHOT_TEST_PAUSE_BEFORE_RENAME_MS", "30000")
        .spawn()
        .expect("earshot starts");
    // Wait until the temp file exists: the writer is mid-write.
    let earshot_dir = sandbox.project().join(".earshot");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_dir(&earshot_dir).unwrap().any(|entry| {
        entry
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(".settings-")
    }) {
        assert!(
            std::time::Instant::now() < deadline,
            "the writer never wrote its temp file"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    writer.kill().unwrap();
    writer.wait().unwrap();
    assert_eq!(sandbox.read(".earshot/settings.local.json"), original);
    // The next write succeeds.
    assert_eq!(sandbox.run(&["plugins", "trust", "hello"]).0, 0);
    let written: serde_json::Value =
        serde_json::from_str(&sandbox.read(".earshot/settings.local.json")).unwrap();
    assert!(written["trust"]["plugins"]["hello"].is_object());
    assert_eq!(
        written["permissions"]["allow"],
        serde_json::json!(["Mcp(a__b)"])
    );
}

#[test]
fn concurrent_trusts_both_land() {
    let sandbox = Sandbox::new();
    for name in ["one", "two", "three", "four"] {
        sandbox.write(
            &format!(".earshot/plugins/{name}.wasm"),
            std::fs::read(hello_wasm()).unwrap(),
        );
    }
    let children: Vec<_> = ["one", "two", "three", "four"]
        .iter()
        .map(|name| {
            sandbox
                .earshot()
                .args(["plugins", "trust", name])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let written: serde_json::Value =
        serde_json::from_str(&sandbox.read(".earshot/settings.local.json")).unwrap();
    let trusted: Vec<&String> = written["trust"]["plugins"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(trusted.len(), 4, "{trusted:?}");
}

#[test]
fn the_project_is_found_by_walking_up_but_not_into_the_user_config_dir() {
    use earshot_host::settings::find_project_root;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(home.join(".earshot")).unwrap(); // the user config dir
    std::fs::create_dir_all(home.join("work/app/.earshot")).unwrap();
    std::fs::create_dir_all(home.join("work/app/src/deep")).unwrap();
    std::fs::create_dir_all(home.join("scratch/x")).unwrap();
    let config = home.join(".earshot");
    assert_eq!(
        find_project_root(&home.join("work/app/src/deep"), Some(&config)),
        home.join("work/app")
    );
    assert_eq!(
        find_project_root(&home.join("scratch/x"), Some(&config)),
        home.join("scratch/x")
    );
}

#[test]
fn trust_never_replaces_a_value_of_the_wrong_type() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/plugins/hello.wasm",
        std::fs::read(hello_wasm()).unwrap(),
    );
    let original = r#"{"trust": "my notes, not an object"}"#;
    sandbox.write(".earshot/settings.local.json", original);
    let (code, _, stderr) = sandbox.run(&["plugins", "trust", "hello"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("\"trust\" or \"trust.plugins\" there is not an object; fix it by hand"),
        "{stderr}"
    );
    let after: serde_json::Value =
        serde_json::from_str(&sandbox.read(".earshot/settings.local.json")).unwrap();
    assert_eq!(
        after,
        serde_json::json!({"trust": "my notes, not an object"})
    );
}

#[test]
fn a_settings_path_that_is_not_a_regular_file_is_reported_not_read() {
    let sandbox = Sandbox::new();
    std::os::unix::fs::symlink(
        "/dev/zero",
        sandbox.project().join(".earshot/settings.json"),
    )
    .unwrap();
    let (code, _, stderr) = sandbox.run(&["permissions", "list"]);
    assert_eq!(code, 0);
    assert!(
        stderr.contains("settings.json: cannot be read: it is a symbolic link"),
        "{stderr}"
    );
    // A FIFO in its place is not read either (reading it would hang the command).
    std::fs::remove_file(sandbox.project().join(".earshot/settings.json")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(sandbox.project().join(".earshot/settings.json"))
        .status()
        .unwrap();
    assert!(status.success());
    let (code, _, stderr) = sandbox.run(&["permissions", "list"]);
    assert_eq!(code, 0);
    assert!(
        stderr.contains("settings.json: cannot be read: it is not a regular file"),
        "{stderr}"
    );
}

/// The same deny list written twice in one object, or a second `permissions` block, at the top
/// and deeper: each a way JSON would keep only the last and drop the first one's deny rules.
const REPEATS: &[(&str, &str, usize)] = &[
    (
        "{\n  \"permissions\": {\"deny\": [\"Mcp(gh__delete_repo)\"]},\n  \"permissions\": {\"ask\": []}\n}\n",
        "permissions",
        3,
    ),
    (
        "{\"permissions\": {\n  \"deny\": [\"Mcp(gh__delete_repo)\"],\n  \"deny\": []\n}}\n",
        "permissions.deny",
        3,
    ),
    (
        "{\"permissions\": {\"deny\": [\"Mcp(gh__delete_repo)\"]},\n \"mcpServers\": {\"x\": {\"env\": {\"A\": \"1\", \"A\": \"2\"}}}}\n",
        "mcpServers.x.env.A",
        2,
    ),
];

#[test]
fn a_repeated_key_in_any_settings_file_is_refused_like_a_parse_error() {
    for file in ["user", "project", "local"] {
        for (text, key, line) in REPEATS {
            let sandbox = Sandbox::new();
            let path = match file {
                "user" => sandbox.config().join("settings.json"),
                "project" => sandbox.project().join(".earshot/settings.json"),
                _ => sandbox.project().join(".earshot/settings.local.json"),
            };
            std::fs::write(&path, text).unwrap();
            // Another file's rules still load; the allow rule the repeat could have denied is
            // suspended.
            let other = if file == "user" {
                sandbox.project().join(".earshot/settings.json")
            } else {
                sandbox.config().join("settings.json")
            };
            std::fs::write(&other, r#"{"permissions": {"deny": ["Mcp(gh__other)"]}}"#).unwrap();
            let (code, _, _) = sandbox.run(&["permissions", "allow", "-s", "user", "Mcp(gh__*)"]);
            if file == "user" {
                // The user's own file is never rewritten while it repeats a key.
                assert_eq!(code, 1, "{file} {key}");
                assert_eq!(&std::fs::read_to_string(&path).unwrap(), text);
                std::fs::write(sandbox.config().join("settings.json"), text).unwrap();
            } else {
                assert_eq!(code, 0, "{file} {key}");
            }
            let expected = format!("{}:{line}:", path.display());
            let (code, stdout, stderr) = sandbox.run(&["permissions", "list"]);
            assert_eq!(code, 0, "{stderr}");
            let report = format!("the key \"{key}\" appears twice");
            for shown in [&stdout, &stderr] {
                assert!(
                    shown
                        .lines()
                        .any(|row| row.contains(&expected) && row.contains(&report)),
                    "{file} {key}: {shown}"
                );
            }
            assert!(
                stdout.contains("Mcp(gh__other)"),
                "{file}: the other file loads: {stdout}"
            );
            assert!(!stdout.contains("Mcp(gh__delete_repo)"), "{file}: {stdout}");
            let (_, stdout, stderr) =
                sandbox.run(&["permissions", "check", "Mcp(gh__delete_repo)"]);
            assert!(
                stdout.starts_with("Mcp(gh__delete_repo): ask by default"),
                "{file} {key}: not allowed while the deny may be lost: {stdout}"
            );
            assert!(stderr.contains("allow rules are suspended"), "{stderr}");
        }
    }
}

#[test]
fn a_local_file_with_a_repeated_key_is_never_rewritten_and_add_json_refuses_one() {
    let sandbox = Sandbox::new();
    let text = REPEATS[1].0;
    sandbox.write(".earshot/settings.local.json", text);
    let (code, _, stderr) = sandbox.run(&["permissions", "deny", "Mcp(x__y)"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("refusing to rewrite it") && stderr.contains("appears twice"),
        "{stderr}"
    );
    assert_eq!(sandbox.read(".earshot/settings.local.json"), text);

    let sandbox = Sandbox::new();
    let (code, _, stderr) = sandbox.run(&[
        "mcp",
        "add-json",
        "-s",
        "user",
        "x",
        r#"{"command": "python3", "env": {"TOKEN": "a"}, "env": {}}"#,
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("the key \"env\" appears twice"), "{stderr}");
    assert!(
        !sandbox.config().join("settings.json").exists(),
        "nothing was written"
    );
}

#[test]
fn a_deny_or_ask_rule_that_can_match_no_tool_is_a_warning_that_suspends_nothing() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(serde_json::json!({
        "mcpServers": {"demo": crate::common::fixture_server("env_dump.py", &[])},
        "permissions": {"allow": ["Mcp(demo__env)"]},
    }));
    sandbox.write(
        ".earshot/settings.json",
        serde_json::json!({"permissions": {
            "deny": ["Mcp(demo_echo)", "Mcp(Demo__*)", "Mcp(demo__cwd)"],
            "ask": ["Mcp(DEMO__env)"],
        }})
        .to_string(),
    );
    let (code, stdout, stderr) = sandbox.run(&["permissions", "list"]);
    assert_eq!(code, 0, "{stderr}");
    for rule in ["Mcp(demo_echo)", "Mcp(Demo__*)", "Mcp(DEMO__env)"] {
        let row = stdout.lines().find(|row| row.contains(rule)).unwrap();
        assert!(row.contains("in force, but can match no tool"), "{row}");
        assert!(
            stderr.lines().any(|line| line.starts_with("warning: ")
                && line.contains(rule)
                && line.contains("protects nothing")),
            "{rule}: {stderr}"
        );
    }
    assert!(
        stderr.contains("but \"demo\" is (rules are case-sensitive)"),
        "{stderr}"
    );
    assert!(stderr.contains("two underscores"), "{stderr}");
    let well_formed = stdout
        .lines()
        .find(|row| row.contains("Mcp(demo__cwd)"))
        .unwrap();
    assert!(well_formed.ends_with("in force"), "{well_formed}");
    let (_, json_out, _) = sandbox.run(&["permissions", "list", "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&json_out).unwrap();
    let warned = listed["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|rule| rule["warning"].is_string())
        .count();
    assert_eq!(warned, 3, "{listed}");
    // Nothing is suspended: the user's allow rule still decides, and the same warning is there
    // at the start of any other command.
    let (_, stdout, stderr) = sandbox.run(&["permissions", "check", "Mcp(demo__env)"]);
    assert!(stdout.starts_with("Mcp(demo__env): allow"), "{stdout}");
    assert!(!stderr.contains("suspended"), "{stderr}");
    assert!(stderr.contains("Mcp(demo_echo)"), "{stderr}");
}
