//! The schema-validator sandbox as a tool author sees it: located errors, invalid schemas refused
//! with the reason, draft 7 by `$schema`, no network, and recovery after the sandbox fails.

use std::time::Duration;

use earshot_host::sandbox::{
    Remote, SandboxEngine, SandboxError, SandboxLimits, SchemaError, SchemaValidator, Verdict,
};

fn validator() -> SchemaValidator {
    SchemaValidator::new(&SandboxEngine::shared(), &crate::common::shared_cache())
        .expect("validator loads")
}

const ISSUE_SCHEMA: &str = r#"{
    "type": "object",
    "properties": {
        "title": { "type": "string", "minLength": 1 },
        "labels": { "type": "array", "items": { "type": "string" } }
    },
    "required": ["title"],
    "additionalProperties": false
}"#;

#[test]
fn a_valid_input_passes_and_a_compiled_schema_is_reused() {
    let validator = validator();
    let schema = validator.compile(ISSUE_SCHEMA).expect("schema compiles");
    for _ in 0..3 {
        let verdict = validator
            .validate(&schema, r#"{"title":"bug","labels":["a"]}"#)
            .expect("validates");
        assert_eq!(verdict, Verdict::Valid);
    }
}

#[test]
fn errors_carry_instance_path_schema_path_and_message() {
    let validator = validator();
    let schema = validator.compile(ISSUE_SCHEMA).expect("schema compiles");
    let verdict = validator
        .validate(&schema, r#"{"title":"","labels":["ok",7]}"#)
        .expect("validates");
    let Verdict::Invalid(issues) = verdict else {
        panic!("expected invalid, got {verdict:?}")
    };
    let located: Vec<(&str, &str)> = issues
        .iter()
        .map(|issue| (issue.instance_path.as_str(), issue.schema_path.as_str()))
        .collect();
    assert!(
        located.contains(&("/title", "/properties/title/minLength")),
        "{issues:?}"
    );
    assert!(
        located.contains(&("/labels/1", "/properties/labels/items/type")),
        "{issues:?}"
    );
    let labels = issues
        .iter()
        .find(|issue| issue.instance_path == "/labels/1")
        .expect("labels issue");
    assert_eq!(labels.message, r#"7 is not of type "string""#);
    assert_eq!(
        labels.to_string(),
        r#"/labels/1: 7 is not of type "string" (schema /properties/labels/items/type)"#
    );
}

#[test]
fn an_instance_that_is_not_json_is_reported() {
    let validator = validator();
    let verdict = validator
        .validate_once(ISSUE_SCHEMA, "{title:")
        .expect("validates");
    let Verdict::NotJson(reason) = verdict else {
        panic!("expected not-json, got {verdict:?}")
    };
    assert!(reason.contains("line 1 column 2"), "{reason}");
}

#[test]
fn a_schema_that_is_not_a_schema_is_refused_with_the_reason() {
    let validator = validator();
    let error = validator
        .compile(r#"{"type": 12}"#)
        .expect_err("type must be a string or array");
    let SchemaError::Invalid(reason) = &error else {
        panic!("expected invalid schema, got {error:?}")
    };
    assert!(reason.contains("12"), "{reason}");
    assert!(
        error
            .to_string()
            .starts_with("the schema is not a valid JSON Schema: "),
        "{error}"
    );

    let error = validator
        .compile(r#"{"type": "object""#)
        .expect_err("truncated JSON");
    assert!(matches!(error, SchemaError::NotJson(_)), "{error:?}");
}

#[test]
fn draft_2020_12_is_the_default_and_draft_7_is_chosen_by_dollar_schema() {
    let validator = validator();
    // In 2020-12 `items` takes one schema, so an array of schemas is not a valid schema.
    let tuple = r#"{"items": [{"type": "integer"}, {"type": "string"}]}"#;
    assert!(matches!(
        validator.compile(tuple),
        Err(SchemaError::Invalid(_))
    ));

    // In draft 7 the same keyword is a tuple.
    let draft7 = r#"{"$schema": "http://json-schema.org/draft-07/schema#",
                     "items": [{"type": "integer"}, {"type": "string"}]}"#;
    let schema = validator.compile(draft7).expect("valid draft 7");
    assert_eq!(
        validator
            .validate(&schema, r#"[1, "a", true]"#)
            .expect("ok"),
        Verdict::Valid
    );
    assert!(
        !validator
            .validate(&schema, r#"["a", 1]"#)
            .expect("ok")
            .is_valid()
    );
}

#[test]
fn a_remote_ref_resolves_only_against_documents_handed_in() {
    let validator = validator();
    let schema = r#"{"$ref": "https://schemas.example.com/name.json"}"#;
    let error = validator.compile(schema).expect_err("nothing is fetched");
    assert!(
        error
            .to_string()
            .contains("https://schemas.example.com/name.json"),
        "{error}"
    );

    let remotes = [Remote {
        uri: "https://schemas.example.com/name.json".into(),
        schema_json: r#"{"type": "string", "maxLength": 3}"#.into(),
    }];
    let compiled = validator
        .compile_with_remotes(schema, &remotes)
        .expect("resolves locally");
    assert!(
        validator
            .validate(&compiled, r#""abc""#)
            .expect("ok")
            .is_valid()
    );
    assert!(
        !validator
            .validate(&compiled, r#""abcd""#)
            .expect("ok")
            .is_valid()
    );
}

#[test]
fn after_the_sandbox_fails_earlier_schemas_keep_working() {
    let limits = SandboxLimits {
        memory_bytes: 48 << 20,
        cpu_deadline: Duration::from_secs(2),
        stderr_bytes: 16 << 10,
    };
    let validator = SchemaValidator::with_limits(
        &SandboxEngine::shared(),
        &crate::common::shared_cache(),
        limits,
    )
    .expect("loads");
    let schema = validator.compile(ISSUE_SCHEMA).expect("compiles");

    // A 64 MiB schema cannot even be copied into a 48 MiB sandbox.
    let huge = format!(r#"{{"description": "{}"}}"#, "x".repeat(64 << 20));
    let error = validator.compile(&huge).expect_err("over the memory cap");
    assert!(
        matches!(
            error,
            SchemaError::Sandbox(SandboxError::MemoryLimit { .. })
        ),
        "{error:?}"
    );

    // The earlier schema is compiled again in the fresh store, transparently.
    assert!(
        validator
            .validate(&schema, r#"{"title":"still here"}"#)
            .expect("ok")
            .is_valid()
    );
    assert!(!validator.validate(&schema, r#"{}"#).expect("ok").is_valid());
}

#[test]
fn a_prepared_schema_is_checked_now_and_compiled_on_first_use() {
    let validator = validator();
    // Checked at once: a schema that fails its meta-schema is refused by `prepare`, with where.
    let refused = validator
        .prepare(r#"{"type": "no-such-type"}"#)
        .expect_err("refused");
    assert!(
        matches!(&refused, SchemaError::Invalid(reason) if reason.contains("no-such-type")),
        "{refused}"
    );
    assert!(matches!(
        validator.prepare("{not json"),
        Err(SchemaError::NotJson(_))
    ));
    // Compiled on its first validation, with the same verdicts as a compiled schema.
    let schema = validator.prepare(ISSUE_SCHEMA).expect("checks");
    assert_eq!(
        validator.validate(&schema, r#"{"title":"bug"}"#).unwrap(),
        Verdict::Valid
    );
    let Verdict::Invalid(issues) = validator.validate(&schema, r#"{"title":""}"#).unwrap() else {
        panic!("an empty title is invalid");
    };
    assert_eq!(issues[0].instance_path, "/title");
    // A `$ref` that cannot resolve passes the meta-schema check and is found at first use.
    let dangling = validator
        .prepare(r#"{"$ref": "https://example.com/missing.json"}"#)
        .expect("the meta-schema allows it");
    let error = validator
        .validate(&dangling, "{}")
        .expect_err("cannot compile");
    assert!(
        matches!(&error, SchemaError::Invalid(reason) if reason.contains("missing.json")),
        "{error}"
    );
}
