//! The host's MCP output parser.
//!
//! An MCP server is untrusted: its `CallToolResult` may be huge, deeply nested, full of escape
//! sequences or simply wrong. [`normalise`] turns it into the text the model sees, with binary
//! parts kept aside as attachments. The host runs this crate as a wasm component (the
//! `mcp-output` world) so that a result that trips a bug here costs one call, not the process;
//! the rlib is the same code, called natively only as the benchmark's baseline.
#![deny(missing_docs)]

mod content;
mod sanitise;

#[cfg(target_arch = "wasm32")]
mod component;

use serde_json::Value;

pub use sanitise::{sanitise, truncate};

/// Bounds on what one result may produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most characters of output kept.
    pub max_output_chars: u32,
    /// The most bytes of input accepted.
    pub max_input_bytes: u32,
}

impl Default for Limits {
    /// 25,000 characters of output (what Claude Code keeps of an MCP result) and 16 MiB of input
    /// (rmcp's default cap on one message).
    fn default() -> Self {
        Limits {
            max_output_chars: 25_000,
            max_input_bytes: 16 * 1024 * 1024,
        }
    }
}

/// A binary part of a result, kept aside for the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// `image`, `audio` or `resource`.
    pub kind: String,
    /// The MIME type the server declared (empty when none).
    pub mime_type: String,
    /// Decoded size in bytes.
    pub size: u64,
    /// The base64 data as the server sent it.
    pub data_base64: String,
    /// The resource URI, for `resource` attachments.
    pub uri: Option<String>,
}

/// A normalised result: what the model sees, plus what the host keeps aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// The text for the model.
    pub output: String,
    /// True when the server said `isError` or the result broke the tool's `outputSchema`.
    pub is_error: bool,
    /// Binary parts, in order.
    pub attachments: Vec<Attachment>,
    /// `structuredContent` as JSON text, when present.
    pub structured_content: Option<String>,
    /// Characters cut from `output`.
    pub truncated_chars: u64,
}

/// Normalises `result_json`, an MCP `CallToolResult`, checking `structuredContent` against
/// `output_schema` when the tool declared one.
///
/// # Errors
/// A one-line description when the input is over `limits.max_input_bytes`, is not JSON (including
/// nesting deeper than 128 levels), is not a `CallToolResult`, or when `output_schema` is not a
/// valid schema.
pub fn normalise(
    result_json: &str,
    output_schema: Option<&str>,
    limits: Limits,
) -> Result<ToolResult, String> {
    if result_json.len() as u64 > u64::from(limits.max_input_bytes) {
        return Err(format!(
            "the result is {} bytes, over the limit of {} bytes",
            result_json.len(),
            limits.max_input_bytes
        ));
    }
    let result: Value = serde_json::from_str(result_json)
        .map_err(|error| format!("the result is not valid JSON: {error}"))?;
    let Value::Object(result) = result else {
        return Err(format!(
            "the result is not a CallToolResult object (found {})",
            content::json_kind(&result)
        ));
    };
    let mut is_error = match result.get("isError") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(flag)) => *flag,
        Some(other) => {
            return Err(format!(
                "isError must be a boolean (found {})",
                content::json_kind(other)
            ));
        }
    };
    let rendered = content::render_blocks(result.get("content"))?;
    let mut parts = rendered.parts;

    let structured = result.get("structuredContent").filter(|v| !v.is_null());
    if let Some(structured) = structured
        && !structured.is_object()
    {
        return Err(format!(
            "structuredContent must be an object (found {})",
            content::json_kind(structured)
        ));
    }
    let structured_text = structured.map(Value::to_string);

    if let Some(schema) = output_schema {
        match (structured, is_error) {
            (Some(structured), _) => {
                if let Some(problem) = content::check_output_schema(schema, structured)? {
                    is_error = true;
                    parts.insert(0, problem);
                }
            }
            (None, false) => {
                is_error = true;
                parts.insert(
                    0,
                    "the tool declared an outputSchema but returned no structuredContent".into(),
                );
            }
            (None, true) => {}
        }
    }
    if !rendered.had_text
        && let Some(text) = &structured_text
    {
        parts.push(text.clone());
    }

    let joined = sanitise(&parts.join("\n"));
    let (output, truncated_chars) = truncate(joined, limits.max_output_chars as usize);
    Ok(ToolResult {
        output,
        is_error,
        attachments: rendered.attachments,
        structured_content: structured_text,
        truncated_chars,
    })
}
