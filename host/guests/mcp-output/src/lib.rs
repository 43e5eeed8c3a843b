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
    /// The most decoded bytes of one binary part; a larger one is replaced by a line saying so.
    pub max_attachment_bytes: u64,
    /// The most decoded bytes of all of one result's binary parts together.
    pub max_total_attachment_bytes: u64,
}

impl Default for Limits {
    /// 25,000 characters of output (what Claude Code keeps of an MCP result) and 16 MiB of input
    /// (rmcp's default cap on one message); 5 MiB a binary part (the largest image the common
    /// model APIs take) and 10 MiB for all of them.
    fn default() -> Self {
        Limits {
            max_output_chars: 25_000,
            max_input_bytes: 16 * 1024 * 1024,
            max_attachment_bytes: 5 << 20,
            max_total_attachment_bytes: 10 << 20,
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

/// One block of a result, in order, for clients that show more than text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    /// Text, sanitised and within the output budget.
    Text(String),
    /// An image (`audio` false) or an audio clip (`audio` true).
    Media {
        /// True for audio.
        audio: bool,
        /// The declared MIME type (empty when none).
        mime_type: String,
        /// The base64 data as sent (checked to be base64).
        data_base64: String,
    },
    /// A link to a resource.
    ResourceLink {
        /// Its URI.
        uri: String,
        /// Its name (the URI when the server gave none).
        name: String,
        /// Its title.
        title: Option<String>,
        /// Its description.
        description: Option<String>,
        /// Its MIME type.
        mime_type: Option<String>,
    },
    /// An embedded resource with text contents.
    ResourceText {
        /// Its URI.
        uri: String,
        /// Its MIME type.
        mime_type: Option<String>,
        /// The text, sanitised and within the output budget.
        text: String,
    },
    /// An embedded resource with binary contents.
    ResourceBlob {
        /// Its URI.
        uri: String,
        /// Its MIME type.
        mime_type: Option<String>,
        /// The base64 data as sent (checked to be base64).
        data_base64: String,
    },
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
    /// Every block, in order: text sanitised and sharing `output`'s budget, binary parts within
    /// the limits.
    pub blocks: Vec<Block>,
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
    let rendered = content::render_blocks(result.get("content"), limits)?;
    let mut parts = rendered.parts;
    let mut blocks = rendered.blocks;

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
                    blocks.insert(0, Block::Text(problem.clone()));
                    parts.insert(0, problem);
                }
            }
            (None, false) => {
                is_error = true;
                let problem = "the tool declared an outputSchema but returned no structuredContent";
                blocks.insert(0, Block::Text(problem.into()));
                parts.insert(0, problem.into());
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
        blocks: within_budget(blocks, limits.max_output_chars as usize),
        structured_content: structured_text,
        truncated_chars,
    })
}

/// Sanitises the text of `blocks` and caps it at `budget` characters in all, as `output` is: the
/// block that crosses the budget is cut with a note, and the text blocks after it are dropped.
fn within_budget(blocks: Vec<Block>, budget: usize) -> Vec<Block> {
    let mut left = Some(budget);
    let mut take = |text: &str| {
        let room = left?;
        let (text, cut) = truncate(sanitise(text), room);
        let used = text.chars().count();
        left = (cut == 0 && used < room).then(|| room - used);
        Some(text)
    };
    blocks
        .into_iter()
        .filter_map(|block| match block {
            Block::Text(text) => take(&text).map(Block::Text),
            Block::ResourceText {
                uri,
                mime_type,
                text,
            } => take(&text).map(|text| Block::ResourceText {
                uri,
                mime_type,
                text,
            }),
            other => Some(other),
        })
        .collect()
}
