//! The official JSON-Schema-Test-Suite (draft 2020-12 and draft 7, required tests, remotes
//! preloaded, no network) through the validator sandbox, with the jsonschema crate called
//! natively on the same cases as the yardstick.
//!
//! Prints passed/total per draft for both. Fails if the sandbox passes fewer cases than the
//! recorded figure, passes fewer than native jsonschema, or fails a case not listed in
//! `KNOWN_FAILURES` with its reason.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use earshot_host::sandbox::{ComponentCache, Remote, SandboxEngine, SchemaValidator, Verdict};
use serde_json::Value;

/// (draft folder, the `$schema` that selects it, the recorded count of passing tests).
const DRAFTS: &[(&str, &str, usize)] = &[
    (
        "draft2020-12",
        "https://json-schema.org/draft/2020-12/schema",
        RECORDED_2020_12,
    ),
    (
        "draft7",
        "http://json-schema.org/draft-07/schema#",
        RECORDED_DRAFT7,
    ),
];
const RECORDED_2020_12: usize = 1299;
const RECORDED_DRAFT7: usize = 927;

/// Cases the sandbox is allowed to fail: (draft, file, case, test, reason).
const KNOWN_FAILURES: &[(&str, &str, &str, &str, &str)] = &[];

struct Case {
    file: String,
    description: String,
    schema: Value,
    tests: Vec<(String, Value, bool)>,
}

fn load_cases(draft: &str, dollar_schema: &str) -> Vec<Case> {
    let dir = crate::common::suite_dir().join("tests").join(draft);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()))
        .map(|entry| entry.expect("dir entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for group in groups {
            let mut schema = group["schema"].clone();
            // The suite's files assume their draft; a user picks draft 7 with `$schema`.
            if let Value::Object(map) = &mut schema {
                map.entry("$schema")
                    .or_insert_with(|| Value::String(dollar_schema.into()));
            }
            let tests = group["tests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    (
                        t["description"].as_str().unwrap().to_string(),
                        t["data"].clone(),
                        t["valid"].as_bool().unwrap(),
                    )
                })
                .collect();
            cases.push(Case {
                file: file.clone(),
                description: group["description"].as_str().unwrap().to_string(),
                schema,
                tests,
            });
        }
    }
    cases
}

/// The same remotes for native jsonschema.
struct NativeRemotes(Arc<HashMap<String, Value>>);

impl jsonschema::Retrieve for NativeRemotes {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let wanted = uri.as_str();
        let key = wanted.split('#').next().unwrap_or(wanted);
        self.0
            .get(key)
            .cloned()
            .ok_or_else(|| format!("{wanted} not found").into())
    }
}

type CaseId = (String, String, String);

fn run_sandboxed(
    validator: &SchemaValidator,
    cases: &[Case],
    remotes: &[Remote],
) -> (usize, usize, BTreeSet<CaseId>) {
    let (mut passed, mut total, mut failed) = (0, 0, BTreeSet::new());
    for case in cases {
        let compiled = validator.compile_with_remotes(&case.schema.to_string(), remotes);
        for (test, data, valid) in &case.tests {
            total += 1;
            let verdict = match &compiled {
                Ok(schema) => validator.validate(schema, &data.to_string()).ok(),
                Err(_) => None,
            };
            let ok = match verdict {
                Some(Verdict::Valid) => *valid,
                Some(Verdict::Invalid(_)) => !*valid,
                _ => false,
            };
            if ok {
                passed += 1;
            } else {
                failed.insert((case.file.clone(), case.description.clone(), test.clone()));
            }
        }
    }
    (passed, total, failed)
}

fn run_native(cases: &[Case], remotes: &Arc<HashMap<String, Value>>) -> (usize, BTreeSet<CaseId>) {
    let (mut passed, mut failed) = (0, BTreeSet::new());
    for case in cases {
        let compiled = jsonschema::options()
            .with_retriever(NativeRemotes(remotes.clone()))
            .build(&case.schema);
        for (test, data, valid) in &case.tests {
            let ok = match &compiled {
                Ok(validator) => validator.is_valid(data) == *valid,
                Err(_) => false,
            };
            if ok {
                passed += 1;
            } else {
                failed.insert((case.file.clone(), case.description.clone(), test.clone()));
            }
        }
    }
    (passed, failed)
}

#[test]
fn the_json_schema_test_suite_passes_in_the_sandbox_as_natively() {
    let validator = SchemaValidator::new(&SandboxEngine::shared(), &ComponentCache::disabled())
        .expect("validator loads");
    let remotes = crate::common::suite_remotes();
    let native_remotes: Arc<HashMap<String, Value>> = Arc::new(
        remotes
            .iter()
            .map(|r| (r.uri.clone(), serde_json::from_str(&r.schema_json).unwrap()))
            .collect(),
    );
    assert!(remotes.len() > 20, "the suite's remotes are missing");

    let mut problems = Vec::new();
    for (draft, dollar_schema, recorded) in DRAFTS {
        let cases = load_cases(draft, dollar_schema);
        let (passed, total, failed) = run_sandboxed(&validator, &cases, &remotes);
        let (native_passed, native_failed) = run_native(&cases, &native_remotes);
        println!("{draft}: sandboxed {passed}/{total}, native jsonschema {native_passed}/{total}");
        for (file, case, test) in &failed {
            let known = KNOWN_FAILURES
                .iter()
                .find(|k| k.0 == *draft && k.1 == file && k.2 == case && k.3 == test);
            match known {
                Some(k) => println!("  known failure: {file} / {case} / {test}: {}", k.4),
                None => problems.push(format!(
                    "{draft}: {file} / {case} / {test} failed in the sandbox (native: {})",
                    if native_failed.contains(&(file.clone(), case.clone(), test.clone())) {
                        "fails too"
                    } else {
                        "passes"
                    }
                )),
            }
        }
        if passed < *recorded {
            problems.push(format!(
                "{draft}: {passed} passed, below the recorded {recorded}"
            ));
        }
        if passed < native_passed {
            problems.push(format!(
                "{draft}: sandbox passed {passed}, native jsonschema {native_passed}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
