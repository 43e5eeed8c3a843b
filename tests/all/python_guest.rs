//! The contract is reusable outside Rust: a tool component written in Python with
//! componentize-py, from `wit/` alone, is loaded and called by earshot like any other.
//!
//! The component comes from `$EARSHOT_PY_GUEST_WASM` (built by `.ci/run`), or is built here with
//! `fixtures/components-py/build.sh` (which needs python3 and PyPI the first time).

use std::path::PathBuf;

use crate::common::{Sandbox, TIGHT};
use earshot_host::HostBuilder;
use earshot_host::gate::NonInteractivePrompter;
use earshot_host::sandbox::SandboxLimits;
use earshot_host::settings::{ProjectPaths, Settings};

fn python_component() -> PathBuf {
    if let Some(path) = std::env::var_os("EARSHOT_PY_GUEST_WASM") {
        return PathBuf::from(path);
    }
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("word_tools.wasm");
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/components-py/build.sh");
    let status = std::process::Command::new(&script)
        .arg(&out)
        .status()
        .expect("build.sh runs");
    assert!(
        status.success(),
        "{} failed; it needs python3 and PyPI",
        script.display()
    );
    out
}

#[test]
fn a_python_component_is_listed_and_called_through_the_gate() {
    let wasm = python_component();
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.config().join("plugins")).unwrap();
    std::fs::copy(&wasm, sandbox.config().join("plugins/word_tools.wasm")).unwrap();
    std::fs::write(
        sandbox.config().join("settings.json"),
        r#"{"permissions": {"deny": ["Plugin(word_tools__shout)"]}}"#,
    )
    .unwrap();
    let settings = Settings::load(
        Some(&sandbox.config()),
        Some(ProjectPaths::new(sandbox.project())),
    );
    // CPython needs more headroom than the hostile tests' tight limits.
    let limits = SandboxLimits {
        memory_bytes: 256 << 20,
        ..TIGHT
    };
    let limits = SandboxLimits {
        cpu_deadline: std::time::Duration::from_secs(5),
        ..limits
    };
    let host = crate::common::TestHost(
        crate::common::block_on(
            HostBuilder::new(settings)
                .cache(crate::common::shared_cache())
                .component_limits(limits)
                .build(),
        )
        .expect("host loads"),
    );
    assert!(
        host.registry().problems().is_empty(),
        "{:?}",
        host.registry().problems()
    );

    let names: Vec<String> = host
        .registry()
        .tools()
        .map(|tool| tool.model_name.clone())
        .collect();
    assert_eq!(names, ["word_tools__count_words", "word_tools__shout"]);
    assert!(
        host.registry()
            .find("word_tools__count_words")
            .unwrap()
            .read_only
    );

    // Read-only: runs without asking.
    let output = host
        .call(
            "word_tools__count_words",
            r#"{"text": "one two  three\nfour"}"#,
            &NonInteractivePrompter,
        )
        .expect("runs");
    assert_eq!(output.output, "4");
    assert_eq!(output.title.as_deref(), Some("word count"));

    // Its schema is enforced by the host before Python sees the input.
    let invalid = host
        .call(
            "word_tools__count_words",
            r#"{"text": 5}"#,
            &NonInteractivePrompter,
        )
        .expect_err("invalid");
    assert!(
        invalid
            .to_string()
            .contains("/text: 5 is not of type \"string\""),
        "{invalid}"
    );

    // Not read-only, and denied by the user's rule: the gate stops it.
    let denied = host
        .call(
            "word_tools__shout",
            r#"{"text": "hi"}"#,
            &NonInteractivePrompter,
        )
        .expect_err("denied");
    assert!(
        denied
            .to_string()
            .contains("denied by the rule \"Plugin(word_tools__shout)\""),
        "{denied}"
    );
}
