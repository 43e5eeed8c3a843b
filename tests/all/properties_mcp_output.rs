//! Property tests of the mcp-output normaliser: whatever a server sends (arbitrary JSON values,
//! nesting hundreds of levels deep, huge strings, random bytes as text, an arbitrary output
//! schema), the sandbox answers within its deadline with a normalised output or a typed refusal
//! (`OutputError::Malformed`), never a panic, a trap or a timeout; the answer is the one the same
//! code gives natively; and a normalised output is safe for a terminal and within its cap.

use std::time::{Duration, Instant};

use earshot_host::sandbox::{
    McpOutputParser, NormalisedOutput, OutputError, OutputLimits, SandboxEngine, SandboxLimits,
};
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Value, json};

/// Small enough that truncation happens often.
const LIMITS: OutputLimits = OutputLimits {
    max_output_chars: 300,
    max_input_bytes: 4 << 20,
    content: earshot_host::ContentLimits {
        max_attachment_bytes: 5 << 20,
        max_total_attachment_bytes: 10 << 20,
    },
};

/// The sandbox's CPU deadline for one call, and what a call may take in all (a debug build on a
/// busy machine) before it counts as a hang.
const DEADLINE: Duration = Duration::from_secs(5);
const HANG: Duration = Duration::from_secs(15);

fn parser() -> &'static McpOutputParser {
    static PARSER: std::sync::OnceLock<McpOutputParser> = std::sync::OnceLock::new();
    PARSER.get_or_init(|| {
        McpOutputParser::with_limits(
            &SandboxEngine::shared(),
            &crate::common::shared_cache(),
            LIMITS,
            SandboxLimits {
                cpu_deadline: DEADLINE,
                ..SandboxLimits::OUTPUT_PARSER
            },
        )
        .expect("parser loads")
    })
}

/// Normalises in the sandbox and natively and checks every property; a failure says which.
fn check(result_json: &str, schema: Option<&str>) -> Result<(), TestCaseError> {
    let started = Instant::now();
    let sandboxed = parser().normalise(result_json, schema);
    let took = started.elapsed();
    prop_assert!(took < HANG, "took {took:?}");
    let native = std::panic::catch_unwind(|| {
        earshot_mcp_output::normalise(
            result_json,
            schema,
            earshot_mcp_output::Limits {
                max_output_chars: LIMITS.max_output_chars,
                max_input_bytes: LIMITS.max_input_bytes,
                max_attachment_bytes: LIMITS.content.max_attachment_bytes,
                max_total_attachment_bytes: LIMITS.content.max_total_attachment_bytes,
            },
        )
    });
    prop_assert!(native.is_ok(), "the normaliser panicked natively");
    let native = native.unwrap();
    match (sandboxed, native) {
        (Ok(out), Ok(expected)) => {
            prop_assert_eq!(&out.output, &expected.output);
            prop_assert_eq!(out.is_error, expected.is_error);
            prop_assert_eq!(out.truncated_chars, expected.truncated_chars);
            prop_assert_eq!(&out.structured_content, &expected.structured_content);
            prop_assert_eq!(out.attachments.len(), expected.attachments.len());
            prop_assert_eq!(out.content.len(), expected.blocks.len());
            safe_for_a_terminal(&out)?;
        }
        (Err(OutputError::Malformed(message)), Err(expected)) => {
            prop_assert_eq!(&message, &expected);
            prop_assert!(
                !message.contains('\n'),
                "a refusal is one line: {message:?}"
            );
        }
        (Err(OutputError::Sandbox(error)), _) => {
            prop_assert!(false, "the sandbox failed instead of refusing: {error}");
        }
        (sandboxed, native) => {
            prop_assert!(
                false,
                "the sandbox and the native code disagree: {sandboxed:?} vs {native:?}"
            );
        }
    }
    Ok(())
}

/// No escape sequence, control character (but newline and tab) or bidi override, and the text
/// within its cap plus the truncation note.
fn safe_for_a_terminal(out: &NormalisedOutput) -> Result<(), TestCaseError> {
    for c in out.output.chars() {
        prop_assert!(
            c == '\n' || c == '\t' || !c.is_control(),
            "control character {c:?} in {:?}",
            out.output
        );
        prop_assert!(
            !earshot_terminal_text::is_bidi_override(c),
            "bidi override in {:?}",
            out.output
        );
    }
    let note = "\n[output truncated:  of  characters cut]".len() + 40;
    prop_assert!(
        out.output.chars().count() <= LIMITS.max_output_chars as usize + note,
        "{} characters",
        out.output.chars().count()
    );
    Ok(())
}

/// Text with the characters servers get wrong: controls, escapes, bidi overrides, any Unicode.
fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-z \\n\\r\\t\\x1b\\[\\]0-9;\u{202e}\u{2066}\u{7}\u{0}]{0,200}",
        Just("\u{1b}]0;title\u{7}\u{1b}[2Kfake\rprompt\u{202e}".to_string()),
    ]
}

/// Any JSON value, a few levels deep, with MCP's own keys among the arbitrary ones.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        hostile_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        let key = prop_oneof![
            Just("type".to_string()),
            Just("text".to_string()),
            Just("content".to_string()),
            Just("data".to_string()),
            Just("mimeType".to_string()),
            Just("resource".to_string()),
            Just("uri".to_string()),
            Just("blob".to_string()),
            Just("isError".to_string()),
            Just("structuredContent".to_string()),
            any::<String>(),
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((key, inner), 0..8)
                // Keys in sorted order: the host's serde_json keeps insertion order (and so does
                // the native normaliser, built with the same features) while the guest's sorts, so
                // only sorted objects serialise alike in both.
                .prop_map(|pairs| {
                    let sorted: std::collections::BTreeMap<String, Value> =
                        pairs.into_iter().collect();
                    Value::Object(sorted.into_iter().collect())
                }),
        ]
    })
}

/// A content block, of a real type or not, with arbitrary fields.
fn content_block() -> impl Strategy<Value = Value> {
    let kind = prop_oneof![
        Just(json!("text")),
        Just(json!("image")),
        Just(json!("audio")),
        Just(json!("resource")),
        Just(json!("resource_link")),
        any_json(),
    ];
    (kind, hostile_text(), any_json(), any_json()).prop_map(|(kind, text, data, extra)| {
        json!({"type": kind, "text": text, "data": data, "mimeType": "image/png",
               "resource": {"uri": "file:///x", "text": extra, "blob": data}, "uri": "file:///y"})
    })
}

/// A result shaped like a `CallToolResult`, its fields arbitrary.
fn call_tool_result() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(content_block(), 0..6),
        prop_oneof![Just(Value::Null), any::<bool>().prop_map(Value::Bool), any_json()],
        prop_oneof![Just(Value::Null), any_json()],
    )
        .prop_map(|(content, is_error, structured)| {
            json!({"content": content, "isError": is_error, "structuredContent": structured})
        })
}

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config(96))]

    #[test]
    fn any_json_value_is_normalised_or_refused(value in prop_oneof![any_json(), call_tool_result()]) {
        check(&value.to_string(), None)?;
    }

    #[test]
    fn any_result_against_any_output_schema_is_normalised_or_refused(
        value in call_tool_result(),
        schema in prop_oneof![
            any_json().prop_map(|v| v.to_string()),
            Just(r#"{"type":"object","required":["x"]}"#.to_string()),
            hostile_text(),
        ],
    ) {
        check(&value.to_string(), Some(&schema))?;
    }

    #[test]
    fn random_bytes_as_text_are_refused_or_normalised(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        check(&String::from_utf8_lossy(&bytes), None)?;
    }
}

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn nesting_hundreds_of_levels_deep_is_refused_or_normalised(
        depth in 0usize..3_000,
        opener in prop_oneof![Just(("[", "]")), Just(("{\"a\":", "}"))],
        inside_content in any::<bool>(),
    ) {
        let nested = format!("{}1{}", opener.0.repeat(depth), opener.1.repeat(depth));
        let result = if inside_content {
            format!(r#"{{"content":[{{"type":"text","text":"x","extra":{nested}}}],"structuredContent":{{"v":{nested}}}}}"#)
        } else {
            nested
        };
        check(&result, None)?;
    }
}

proptest! {
    #![proptest_config(config(6))]

    #[test]
    fn huge_strings_are_capped(
        unit in hostile_text(),
        repeat in 1usize..200_000,
        blocks in 1usize..4,
    ) {
        let unit = if unit.is_empty() { "x".to_string() } else { unit };
        let text: String = unit.repeat(repeat.min((3 << 20) / unit.len().max(1) / blocks));
        let content: Vec<Value> = (0..blocks).map(|_| json!({"type": "text", "text": text})).collect();
        check(&json!({ "content": content }).to_string(), None)?;
    }
}
