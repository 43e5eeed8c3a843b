//! The contract is reusable by another host: `jco transpile` turns our schema-validator component
//! into JavaScript, Node runs it from the WIT alone, and its verdicts on JSON-Schema-Test-Suite
//! files are the same as our host's.
//!
//! Needs Node.js and `npm ci` in `fixtures/jco-host` (done by `.ci/run`; done here if missing).

use std::path::{Path, PathBuf};

use earshot_host::sandbox::{Remote, SandboxEngine, SchemaValidator, Verdict};
use serde_json::Value;

fn jco_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/jco-host")
}

fn ensure_npm_packages() {
    if jco_dir()
        .join("node_modules/@bytecodealliance/jco")
        .is_dir()
    {
        return;
    }
    let status = std::process::Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--silent"])
        .current_dir(jco_dir())
        .status()
        .expect("npm runs");
    assert!(status.success(), "npm ci in fixtures/jco-host failed");
}

/// (case, test, verdict) from Node running the transpiled component.
fn jco_verdicts(file: &Path, remotes: &Path, dollar_schema: &str) -> Vec<(String, String, String)> {
    let output = std::process::Command::new("node")
        .arg(jco_dir().join("run.mjs"))
        .arg(crate::common::VALIDATOR_WASM)
        .arg(file)
        .arg(remotes)
        .arg(dollar_schema)
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "run.mjs failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let parsed: Value = serde_json::from_slice(&output.stdout).expect("run.mjs prints JSON");
    parsed["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .map(|v| {
            (
                v[0].as_str().unwrap().into(),
                v[1].as_str().unwrap().into(),
                v[2].as_str().unwrap().into(),
            )
        })
        .collect()
}

/// The same, from our host.
fn our_verdicts(
    validator: &SchemaValidator,
    file: &Path,
    remotes: &[Remote],
    dollar_schema: &str,
) -> Vec<(String, String, String)> {
    let groups: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let mut verdicts = Vec::new();
    for group in groups {
        let mut schema = group["schema"].clone();
        if let Value::Object(map) = &mut schema {
            map.entry("$schema")
                .or_insert_with(|| Value::String(dollar_schema.into()));
        }
        let compiled = validator.compile_with_remotes(&schema.to_string(), remotes);
        for test in group["tests"].as_array().unwrap() {
            let verdict = match &compiled {
                Ok(schema) => match validator.validate(schema, &test["data"].to_string()) {
                    Ok(Verdict::Valid) => "valid",
                    Ok(Verdict::Invalid(_)) => "invalid",
                    _ => "error",
                },
                Err(_) => "error",
            };
            verdicts.push((
                group["description"].as_str().unwrap().to_string(),
                test["description"].as_str().unwrap().to_string(),
                verdict.to_string(),
            ));
        }
    }
    verdicts
}

#[test]
fn node_running_the_transpiled_validator_agrees_with_our_host() {
    ensure_npm_packages();
    let suite = crate::common::suite_dir();
    let remotes_dir = suite.join("remotes");
    let remotes = crate::common::suite_remotes();
    let validator = SchemaValidator::new(&SandboxEngine::shared(), &crate::common::shared_cache())
        .expect("validator");
    let cases = [
        (
            "draft2020-12",
            "https://json-schema.org/draft/2020-12/schema",
            "ref.json",
        ),
        (
            "draft2020-12",
            "https://json-schema.org/draft/2020-12/schema",
            "refRemote.json",
        ),
        (
            "draft2020-12",
            "https://json-schema.org/draft/2020-12/schema",
            "unevaluatedProperties.json",
        ),
        (
            "draft7",
            "http://json-schema.org/draft-07/schema#",
            "type.json",
        ),
        (
            "draft7",
            "http://json-schema.org/draft-07/schema#",
            "items.json",
        ),
    ];
    for (draft, dollar_schema, file) in cases {
        let path = suite.join("tests").join(draft).join(file);
        let theirs = jco_verdicts(&path, &remotes_dir, dollar_schema);
        let ours = our_verdicts(&validator, &path, &remotes, dollar_schema);
        assert!(!ours.is_empty());
        assert_eq!(theirs, ours, "{draft}/{file}: Node and earshot disagree");
        println!("{draft}/{file}: {} verdicts, identical", ours.len());
    }
}
