//! The MCP output parser sandbox against every content type, error flags, output schemas,
//! truncation, escape sequences, and hostile payloads (malformed, huge, deeply nested).

use earshot_host::sandbox::{McpOutputParser, OutputError, SandboxEngine};
use serde_json::json;

fn parser() -> McpOutputParser {
    McpOutputParser::new(&SandboxEngine::shared(), &crate::common::shared_cache())
        .expect("parser loads")
}

fn normalise(
    parser: &McpOutputParser,
    result: serde_json::Value,
) -> earshot_host::sandbox::NormalisedOutput {
    parser
        .normalise(&result.to_string(), None)
        .expect("normalises")
}

/// 12 bytes of PNG signature and padding, base64.
const TWELVE_BYTES: &str = "iVBORw0KGgoAAAAN";

#[test]
fn text_blocks_are_joined_with_newlines() {
    let parser = parser();
    let out = normalise(
        &parser,
        json!({"content": [
            {"type": "text", "text": "first"},
            {"type": "text", "text": "second"}
        ]}),
    );
    assert_eq!(out.output, "first\nsecond");
    assert!(!out.is_error);
    assert_eq!(out.truncated_chars, 0);
    assert!(out.attachments.is_empty());
}

#[test]
fn images_and_audio_are_summarised_and_kept_as_attachments() {
    let parser = parser();
    let out = normalise(
        &parser,
        json!({"content": [
            {"type": "image", "data": TWELVE_BYTES, "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "image", "data": "not base64!", "mimeType": "image/png"}
        ]}),
    );
    assert_eq!(
        out.output,
        "[image: image/png, 12 bytes]\n[audio: audio/wav, 3 bytes]\n[image: image/png, data is not valid base64; dropped]"
    );
    assert_eq!(out.attachments.len(), 2);
    assert_eq!(out.attachments[0].kind, "image");
    assert_eq!(out.attachments[0].size, 12);
    assert_eq!(out.attachments[0].data_base64, TWELVE_BYTES);
    assert_eq!(out.attachments[1].kind, "audio");
    assert_eq!(out.attachments[1].mime_type, "audio/wav");
}

#[test]
fn resource_links_and_embedded_resources_are_rendered() {
    let parser = parser();
    let out = normalise(
        &parser,
        json!({"content": [
            {"type": "resource_link", "uri": "file:///repo/README.md", "name": "README.md",
             "mimeType": "text/markdown", "description": "The readme"},
            {"type": "resource", "resource": {"uri": "file:///repo/a.txt", "mimeType": "text/plain", "text": "alpha"}},
            {"type": "resource", "resource": {"uri": "file:///repo/logo.png", "mimeType": "image/png", "blob": TWELVE_BYTES}}
        ]}),
    );
    assert_eq!(
        out.output,
        "[resource link: README.md <file:///repo/README.md> (text/markdown)]\nThe readme\n\
         [resource file:///repo/a.txt (text/plain)]\nalpha\n\
         [resource file:///repo/logo.png: image/png, 12 bytes]"
    );
    assert_eq!(out.attachments.len(), 1);
    assert_eq!(
        out.attachments[0].uri.as_deref(),
        Some("file:///repo/logo.png")
    );
}

#[test]
fn an_unknown_content_type_is_named_not_dropped() {
    let parser = parser();
    let out = normalise(
        &parser,
        json!({"content": [{"type": "hologram", "beams": 3}]}),
    );
    assert_eq!(out.output, "[unsupported content type \"hologram\"]");
}

#[test]
fn is_error_is_carried() {
    let parser = parser();
    let out = normalise(
        &parser,
        json!({"content": [{"type": "text", "text": "rate limited"}], "isError": true}),
    );
    assert!(out.is_error);
    assert_eq!(out.output, "rate limited");
}

const WEATHER_SCHEMA: &str =
    r#"{"type":"object","properties":{"celsius":{"type":"number"}},"required":["celsius"]}"#;

#[test]
fn structured_content_is_the_output_when_there_is_no_text_and_passes_its_schema() {
    let parser = parser();
    let result = json!({"content": [], "structuredContent": {"celsius": 21.5}}).to_string();
    let out = parser
        .normalise(&result, Some(WEATHER_SCHEMA))
        .expect("normalises");
    assert!(!out.is_error);
    assert_eq!(out.output, r#"{"celsius":21.5}"#);
    assert_eq!(
        out.structured_content.as_deref(),
        Some(r#"{"celsius":21.5}"#)
    );

    // With text present, the text is the output and structuredContent is kept aside.
    let result = json!({"content": [{"type":"text","text":"21.5 °C"}], "structuredContent": {"celsius": 21.5}});
    let out = parser
        .normalise(&result.to_string(), Some(WEATHER_SCHEMA))
        .expect("normalises");
    assert_eq!(out.output, "21.5 °C");
}

#[test]
fn structured_content_that_breaks_the_output_schema_is_an_error() {
    let parser = parser();
    let result =
        json!({"content": [{"type":"text","text":"hot"}], "structuredContent": {"celsius": "hot"}});
    let out = parser
        .normalise(&result.to_string(), Some(WEATHER_SCHEMA))
        .expect("normalises");
    assert!(out.is_error);
    assert_eq!(
        out.output,
        "structuredContent does not match the tool's outputSchema: /celsius: \"hot\" is not of type \"number\"\nhot"
    );

    let missing = json!({"content": [{"type":"text","text":"no data"}]}).to_string();
    let out = parser
        .normalise(&missing, Some(WEATHER_SCHEMA))
        .expect("normalises");
    assert!(out.is_error);
    assert!(
        out.output
            .starts_with("the tool declared an outputSchema but returned no structuredContent")
    );
}

#[test]
fn output_over_25000_characters_is_cut_with_a_note() {
    let parser = parser();
    let out = normalise(
        &parser,
        json!({"content": [{"type": "text", "text": "é".repeat(30_000)}]}),
    );
    assert_eq!(out.truncated_chars, 5_000);
    assert!(out.output.starts_with(&"é".repeat(25_000)));
    assert!(
        out.output
            .ends_with("\n[output truncated: 5000 of 30000 characters cut]"),
        "{}",
        &out.output[out.output.len() - 80..]
    );
}

#[test]
fn control_characters_and_escape_sequences_are_removed() {
    let parser = parser();
    let out = normalise(
        &parser,
        json!({"content": [{"type": "text",
        "text": "\u{1b}[31mred\u{1b}[0m\u{7}\r\n\ttab\u{0}\u{1b}]0;title\u{7}done\u{202e}"}]}),
    );
    assert_eq!(out.output, "red\n\ttabdone");
}

#[test]
fn malformed_results_are_clear_errors() {
    let parser = parser();
    let cases: &[(&str, &str)] = &[
        (
            "{\"content\": [",
            "the result is not valid JSON: EOF while parsing",
        ),
        (
            "[1,2,3]",
            "the result is not a CallToolResult object (found an array)",
        ),
        (
            r#"{"content": "hi"}"#,
            "content must be an array (found a string)",
        ),
        (
            r#"{"content": [42]}"#,
            "content[0] must be an object (found a number)",
        ),
        (
            r#"{"content": [{"text": "x"}]}"#,
            "content[0] has no \"type\"",
        ),
        (
            r#"{"content": [{"type": "text"}]}"#,
            "content[0] is a text block without a \"text\" string",
        ),
        (
            r#"{"content": [], "isError": "yes"}"#,
            "isError must be a boolean (found a string)",
        ),
        (
            r#"{"content": [], "structuredContent": [1]}"#,
            "structuredContent must be an object (found an array)",
        ),
    ];
    for (input, expected) in cases {
        match parser.normalise(input, None) {
            Err(OutputError::Malformed(reason)) => {
                assert!(reason.starts_with(expected), "{input}: {reason}")
            }
            other => panic!("{input}: expected a malformed-result error, got {other:?}"),
        }
    }
    // Still answering.
    assert_eq!(
        normalise(&parser, json!({"content": [{"type":"text","text":"ok"}]})).output,
        "ok"
    );
}

#[test]
fn a_one_megabyte_result_is_normalised_and_cut() {
    let parser = parser();
    let text = "0123456789abcdef".repeat(65_536);
    let out = normalise(
        &parser,
        json!({"content": [{"type": "text", "text": text}]}),
    );
    assert_eq!(out.truncated_chars, (1 << 20) - 25_000);
}

#[test]
fn a_fifty_megabyte_result_is_refused_with_the_limit() {
    let parser = parser();
    let text = "x".repeat(50 << 20);
    let result = format!(r#"{{"content":[{{"type":"text","text":"{text}"}}]}}"#);
    match parser.normalise(&result, None) {
        Err(OutputError::Malformed(reason)) => {
            assert_eq!(
                reason,
                format!(
                    "the result is {} bytes, over the limit of 16777216 bytes",
                    result.len()
                )
            );
        }
        other => panic!("expected a size error, got {other:?}"),
    }
    assert_eq!(
        normalise(&parser, json!({"content": [{"type":"text","text":"ok"}]})).output,
        "ok"
    );
}

#[test]
fn ten_thousand_levels_of_nesting_are_refused_not_a_crash() {
    let parser = parser();
    let nested = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let result = format!(r#"{{"content":[],"structuredContent":{{"deep":{nested}}}}}"#);
    match parser.normalise(&result, None) {
        Err(OutputError::Malformed(reason)) => {
            assert!(reason.contains("recursion limit exceeded"), "{reason}")
        }
        other => panic!("expected a nesting error, got {other:?}"),
    }
    assert_eq!(
        normalise(&parser, json!({"content": [{"type":"text","text":"ok"}]})).output,
        "ok"
    );
}

#[test]
fn a_fifty_megabyte_result_admitted_by_a_raised_limit_finishes_inside_the_sandbox() {
    use earshot_host::sandbox::{OutputLimits, SandboxLimits};
    let limits = OutputLimits {
        max_input_bytes: 64 << 20,
        ..OutputLimits::default()
    };
    let parser = McpOutputParser::with_limits(
        &SandboxEngine::shared(),
        &crate::common::shared_cache(),
        limits,
        SandboxLimits::OUTPUT_PARSER,
    )
    .expect("parser loads");
    let text = "y".repeat(50 << 20);
    let result = format!(r#"{{"content":[{{"type":"text","text":"{text}"}}]}}"#);
    let out = parser
        .normalise(&result, None)
        .expect("50 MB fits the raised limits");
    assert_eq!(out.truncated_chars, (50 << 20) - 25_000);
    assert!(out.output.ends_with(&format!(
        "[output truncated: {} of {} characters cut]",
        (50 << 20) - 25_000,
        50 << 20
    )));
}
