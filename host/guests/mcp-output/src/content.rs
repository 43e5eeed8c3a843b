//! Rendering MCP content blocks (text, image, audio, resource_link, resource) to text.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::Attachment;

/// The text parts and attachments of a result's `content` array.
pub(crate) struct RenderedBlocks {
    pub parts: Vec<String>,
    pub attachments: Vec<Attachment>,
    /// True when at least one block carried text for the model (text or a text resource).
    pub had_text: bool,
}

/// The JSON type of a value, for error messages.
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Renders every block of `content` (absent means empty).
pub(crate) fn render_blocks(content: Option<&Value>) -> Result<RenderedBlocks, String> {
    let blocks: &[Value] = match content {
        None | Some(Value::Null) => &[],
        Some(Value::Array(blocks)) => blocks,
        Some(other) => {
            return Err(format!(
                "content must be an array (found {})",
                json_kind(other)
            ));
        }
    };
    let mut rendered = RenderedBlocks {
        parts: Vec::with_capacity(blocks.len()),
        attachments: Vec::new(),
        had_text: false,
    };
    for (index, block) in blocks.iter().enumerate() {
        let Value::Object(block) = block else {
            return Err(format!(
                "content[{index}] must be an object (found {})",
                json_kind(block)
            ));
        };
        render_block(index, block, &mut rendered)?;
    }
    Ok(rendered)
}

fn render_block(
    index: usize,
    block: &Map<String, Value>,
    into: &mut RenderedBlocks,
) -> Result<(), String> {
    let kind =
        string_field(block, "type").ok_or_else(|| format!("content[{index}] has no \"type\""))?;
    match kind {
        "text" => {
            let text = string_field(block, "text").ok_or_else(|| {
                format!("content[{index}] is a text block without a \"text\" string")
            })?;
            into.parts.push(text.to_string());
            into.had_text = true;
        }
        "image" | "audio" => {
            let data = string_field(block, "data").ok_or_else(|| {
                format!("content[{index}] is an {kind} block without a \"data\" string")
            })?;
            let mime_type = string_field(block, "mimeType").unwrap_or("");
            let mime_shown = if mime_type.is_empty() {
                "no MIME type"
            } else {
                mime_type
            };
            match decoded_len(data) {
                Some(size) => {
                    into.parts
                        .push(format!("[{kind}: {mime_shown}, {size} bytes]"));
                    into.attachments.push(Attachment {
                        kind: kind.to_string(),
                        mime_type: mime_type.to_string(),
                        size,
                        data_base64: data.to_string(),
                        uri: None,
                    });
                }
                None => into.parts.push(format!(
                    "[{kind}: {mime_shown}, data is not valid base64; dropped]"
                )),
            }
        }
        "resource_link" => {
            let uri = string_field(block, "uri")
                .ok_or_else(|| format!("content[{index}] is a resource_link without a \"uri\""))?;
            let name = string_field(block, "title")
                .or_else(|| string_field(block, "name"))
                .unwrap_or(uri);
            let mut line = format!("[resource link: {name} <{uri}>");
            if let Some(mime) = string_field(block, "mimeType") {
                line.push_str(&format!(" ({mime})"));
            }
            line.push(']');
            if let Some(description) = string_field(block, "description") {
                line.push_str(&format!("\n{description}"));
            }
            into.parts.push(line);
        }
        "resource" => {
            let Some(Value::Object(resource)) = block.get("resource") else {
                return Err(format!(
                    "content[{index}] is a resource block without a \"resource\" object"
                ));
            };
            let uri = string_field(resource, "uri")
                .ok_or_else(|| format!("content[{index}].resource has no \"uri\""))?;
            let mime_type = string_field(resource, "mimeType").unwrap_or("");
            if let Some(text) = string_field(resource, "text") {
                let mime = if mime_type.is_empty() {
                    String::new()
                } else {
                    format!(" ({mime_type})")
                };
                into.parts.push(format!("[resource {uri}{mime}]\n{text}"));
                into.had_text = true;
            } else if let Some(blob) = string_field(resource, "blob") {
                let mime_shown = if mime_type.is_empty() {
                    "no MIME type"
                } else {
                    mime_type
                };
                match decoded_len(blob) {
                    Some(size) => {
                        into.parts
                            .push(format!("[resource {uri}: {mime_shown}, {size} bytes]"));
                        into.attachments.push(Attachment {
                            kind: "resource".to_string(),
                            mime_type: mime_type.to_string(),
                            size,
                            data_base64: blob.to_string(),
                            uri: Some(uri.to_string()),
                        });
                    }
                    None => into.parts.push(format!(
                        "[resource {uri}: {mime_shown}, blob is not valid base64; dropped]"
                    )),
                }
            } else {
                return Err(format!(
                    "content[{index}].resource has neither \"text\" nor \"blob\""
                ));
            }
        }
        other => {
            let shown: String = other.chars().take(40).collect();
            into.parts
                .push(format!("[unsupported content type \"{shown}\"]"));
        }
    }
    Ok(())
}

fn string_field<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str)
}

/// The decoded length of standard base64 (whitespace ignored), or `None` when it is not base64.
fn decoded_len(data: &str) -> Option<u64> {
    let mut symbols = 0u64;
    let mut padding = 0u64;
    for byte in data.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'+' | b'/' if padding == 0 => symbols += 1,
            b'=' => padding += 1,
            b' ' | b'\n' | b'\r' | b'\t' => {}
            _ => return None,
        }
    }
    let total = symbols + padding;
    if !total.is_multiple_of(4) || padding > 2 {
        return None;
    }
    Some(total / 4 * 3 - padding)
}

thread_local! {
    /// Output schemas compiled before, so that a tool called many times compiles its schema once.
    static COMPILED_SCHEMAS: RefCell<HashMap<String, jsonschema::Validator>> = RefCell::new(HashMap::new());
}

/// The most output schemas kept compiled at once.
const SCHEMA_CACHE_CAPACITY: usize = 64;

/// Checks `structured` against `schema`: `Ok(None)` when it matches, `Ok(Some(explanation))` when
/// it does not, `Err` when the schema itself is broken.
pub(crate) fn check_output_schema(
    schema: &str,
    structured: &Value,
) -> Result<Option<String>, String> {
    COMPILED_SCHEMAS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if !cache.contains_key(schema) {
            let parsed: Value = serde_json::from_str(schema)
                .map_err(|error| format!("the tool's outputSchema is not JSON: {error}"))?;
            let validator = jsonschema::options().build(&parsed).map_err(|error| {
                format!("the tool's outputSchema is not a valid schema: {error}")
            })?;
            if cache.len() >= SCHEMA_CACHE_CAPACITY {
                cache.clear();
            }
            cache.insert(schema.to_string(), validator);
        }
        let validator = &cache[schema];
        let problems: Vec<String> = validator
            .iter_errors(structured)
            .take(5)
            .map(|error| {
                let at = error.instance_path().as_str();
                if at.is_empty() {
                    error.to_string()
                } else {
                    format!("{at}: {error}")
                }
            })
            .collect();
        if problems.is_empty() {
            Ok(None)
        } else {
            Ok(Some(format!(
                "structuredContent does not match the tool's outputSchema: {}",
                problems.join("; ")
            )))
        }
    })
}
