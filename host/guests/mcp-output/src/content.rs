//! Rendering MCP content blocks (text, image, audio, resource_link, resource) to text.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::{Attachment, Block, Limits};

/// The text parts, attachments and blocks of a result's `content` array.
pub(crate) struct RenderedBlocks {
    pub parts: Vec<String>,
    pub attachments: Vec<Attachment>,
    /// Every block in order, binary parts within the limits (text not yet sanitised or capped).
    pub blocks: Vec<Block>,
    /// Decoded bytes of the binary parts kept so far.
    kept_bytes: u64,
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

/// Renders every block of `content` (absent means empty); a binary part over `limits` becomes a
/// line saying what was left out.
pub(crate) fn render_blocks(
    content: Option<&Value>,
    limits: Limits,
) -> Result<RenderedBlocks, String> {
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
        blocks: Vec::with_capacity(blocks.len()),
        kept_bytes: 0,
        had_text: false,
    };
    for (index, block) in blocks.iter().enumerate() {
        let Value::Object(block) = block else {
            return Err(format!(
                "content[{index}] must be an object (found {})",
                json_kind(block)
            ));
        };
        render_block(index, block, limits, &mut rendered)?;
    }
    Ok(rendered)
}

/// Whether a binary part of `size` bytes fits the limits; when it does not, the line that takes
/// its place.
fn over_limit(into: &RenderedBlocks, size: u64, limits: Limits) -> Option<String> {
    let shown = |cap: u64| {
        if cap > 0 && cap.is_multiple_of(1 << 20) {
            format!("{} MiB", cap >> 20)
        } else {
            format!("{cap}-byte")
        }
    };
    if size > limits.max_attachment_bytes {
        Some(format!(
            "over the {} limit for one image, audio clip or blob; left out",
            shown(limits.max_attachment_bytes)
        ))
    } else if into.kept_bytes + size > limits.max_total_attachment_bytes {
        Some(format!(
            "over the {} limit for all of one result's images, audio and blobs; left out",
            shown(limits.max_total_attachment_bytes)
        ))
    } else {
        None
    }
}

/// Records a text line standing for a binary part (in `output` and in the blocks).
fn push_summary(into: &mut RenderedBlocks, line: String) {
    into.blocks.push(Block::Text(line.clone()));
    into.parts.push(line);
}

fn render_block(
    index: usize,
    block: &Map<String, Value>,
    limits: Limits,
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
            into.blocks.push(Block::Text(text.to_string()));
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
                    if let Some(why) = over_limit(into, size, limits) {
                        push_summary(into, format!("[{kind}: {mime_shown}, {size} bytes: {why}]"));
                        return Ok(());
                    }
                    into.kept_bytes += size;
                    into.parts
                        .push(format!("[{kind}: {mime_shown}, {size} bytes]"));
                    into.attachments.push(Attachment {
                        kind: kind.to_string(),
                        mime_type: mime_type.to_string(),
                        size,
                        data_base64: data.to_string(),
                        uri: None,
                    });
                    into.blocks.push(Block::Media {
                        audio: kind == "audio",
                        mime_type: crate::sanitise(mime_type),
                        data_base64: data.to_string(),
                    });
                }
                None => push_summary(
                    into,
                    format!("[{kind}: {mime_shown}, data is not valid base64; dropped]"),
                ),
            }
        }
        "resource_link" => {
            let uri = string_field(block, "uri")
                .ok_or_else(|| format!("content[{index}] is a resource_link without a \"uri\""))?;
            let name = string_field(block, "title")
                .or_else(|| string_field(block, "name"))
                .unwrap_or(uri);
            into.blocks.push(Block::ResourceLink {
                uri: crate::sanitise(uri),
                name: crate::sanitise(string_field(block, "name").unwrap_or(uri)),
                title: string_field(block, "title").map(crate::sanitise),
                description: string_field(block, "description").map(crate::sanitise),
                mime_type: string_field(block, "mimeType").map(crate::sanitise),
            });
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
                into.blocks.push(Block::ResourceText {
                    uri: crate::sanitise(uri),
                    mime_type: (!mime_type.is_empty()).then(|| crate::sanitise(mime_type)),
                    text: text.to_string(),
                });
                into.had_text = true;
            } else if let Some(blob) = string_field(resource, "blob") {
                let mime_shown = if mime_type.is_empty() {
                    "no MIME type"
                } else {
                    mime_type
                };
                match decoded_len(blob) {
                    Some(size) => {
                        if let Some(why) = over_limit(into, size, limits) {
                            push_summary(
                                into,
                                format!("[resource {uri}: {mime_shown}, {size} bytes: {why}]"),
                            );
                            return Ok(());
                        }
                        into.kept_bytes += size;
                        into.blocks.push(Block::ResourceBlob {
                            uri: crate::sanitise(uri),
                            mime_type: (!mime_type.is_empty()).then(|| crate::sanitise(mime_type)),
                            data_base64: blob.to_string(),
                        });
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
                    None => push_summary(
                        into,
                        format!(
                            "[resource {uri}: {mime_shown}, blob is not valid base64; dropped]"
                        ),
                    ),
                }
            } else {
                return Err(format!(
                    "content[{index}].resource has neither \"text\" nor \"blob\""
                ));
            }
        }
        other => {
            let shown: String = other.chars().take(40).collect();
            push_summary(into, format!("[unsupported content type \"{shown}\"]"));
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
