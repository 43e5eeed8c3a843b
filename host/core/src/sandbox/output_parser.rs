//! The mcp-output sandbox: untrusted MCP `CallToolResult` JSON in, the host's tool output out.

use parking_lot::Mutex;

use super::bindings::mcp_output::McpOutput as OutputWorld;
use super::bindings::mcp_output::earshot::plugin::types as wit;
use super::bindings::mcp_output::exports::earshot::plugin::normalise::Limits as WitLimits;
use super::cache::ComponentCache;
use super::engine::SandboxEngine;
use super::limits::SandboxLimits;
use super::runner::Runner;
use crate::content::{
    ContentBlock, ContentLimits, EmbeddedResource, Media, ResourceContents, ResourceLink,
    base64_decoded_len,
};
use crate::sandbox_error::SandboxError;

/// The parser component, built from `host/guests/mcp-output` during the build.
const OUTPUT_WASM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/earshot_mcp_output.wasm"));

/// The same, compiled to native code at build time (see `host/core/build.rs`; the
/// `precompiled-guests` feature, on by default).
#[cfg(feature = "precompiled-guests")]
const OUTPUT_CWASM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/earshot_mcp_output.cwasm"));

/// What is tried before compiling on a cache miss: the build-time code, when the build made it.
#[cfg(feature = "precompiled-guests")]
const PRECOMPILED: Option<&[u8]> = Some(OUTPUT_CWASM);
#[cfg(not(feature = "precompiled-guests"))]
const PRECOMPILED: Option<&[u8]> = None;

/// The component's name in errors.
pub const OUTPUT_COMPONENT: &str = "mcp-output";

/// Bounds on one result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    /// Characters of output kept (the rest is cut, with a note).
    pub max_output_chars: u32,
    /// Bytes of input accepted.
    pub max_input_bytes: u32,
    /// The caps on binary parts (images, audio, blobs).
    pub content: ContentLimits,
}

impl Default for OutputLimits {
    /// 25,000 characters out, 16 MiB in, binary parts as [`ContentLimits::default`].
    fn default() -> Self {
        OutputLimits {
            max_output_chars: 25_000,
            max_input_bytes: 16 << 20,
            content: ContentLimits::default(),
        }
    }
}

/// A binary part of a result, kept aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// `image`, `audio` or `resource`.
    pub kind: String,
    /// Declared MIME type (empty when none).
    pub mime_type: String,
    /// Decoded size in bytes.
    pub size: u64,
    /// The base64 data as sent.
    pub data_base64: String,
    /// The resource URI, for resources.
    pub uri: Option<String>,
}

/// A normalised MCP result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormalisedOutput {
    /// The text for the model.
    pub output: String,
    /// The server said `isError`, or the result broke the tool's `outputSchema`.
    pub is_error: bool,
    /// Binary parts, in order.
    pub attachments: Vec<Attachment>,
    /// Every block of the result, in order: text sanitised and within the output budget, binary
    /// parts checked and within [`ContentLimits`] (a part over a cap is a text line saying so).
    pub content: Vec<ContentBlock>,
    /// `structuredContent` as JSON text, when present.
    pub structured_content: Option<String>,
    /// Characters cut from `output`.
    pub truncated_chars: u64,
}

/// Why a result could not be normalised.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The result is not a usable `CallToolResult`; the string says why.
    #[error("the server's result is malformed: {0}")]
    Malformed(String),
    /// The sandbox failed.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
}

/// Normalises MCP results inside the mcp-output component.
pub struct McpOutputParser {
    runner: Mutex<Runner<OutputWorld>>,
    limits: OutputLimits,
}

impl McpOutputParser {
    /// Loads the parser component (from `cache` when possible) with default limits.
    ///
    /// # Errors
    /// A [`SandboxError`] if the embedded component cannot be compiled or instantiated.
    pub fn new(engine: &SandboxEngine, cache: &ComponentCache) -> Result<Self, SandboxError> {
        Self::with_limits(
            engine,
            cache,
            OutputLimits::default(),
            SandboxLimits::OUTPUT_PARSER,
        )
    }

    /// Loads the parser component with explicit output and sandbox limits.
    ///
    /// # Errors
    /// As [`McpOutputParser::new`].
    pub fn with_limits(
        engine: &SandboxEngine,
        cache: &ComponentCache,
        limits: OutputLimits,
        sandbox: SandboxLimits,
    ) -> Result<Self, SandboxError> {
        let (component, _) = cache.load_with_precompiled(
            engine,
            OUTPUT_COMPONENT,
            OUTPUT_WASM,
            env!("EARSHOT_GUEST_EARSHOT_MCP_OUTPUT_SHA256"),
            PRECOMPILED,
        )?;
        let mut runner = Runner::<OutputWorld>::new(engine, OUTPUT_COMPONENT, &component, sandbox)?;
        runner.ensure_live()?;
        Ok(McpOutputParser {
            runner: Mutex::new(runner),
            limits,
        })
    }

    /// Normalises `result_json`; when the tool declared `output_schema`, `structuredContent` is
    /// checked against it.
    ///
    /// # Errors
    /// [`OutputError::Malformed`] for input over the size limit, non-JSON, or not a
    /// `CallToolResult`; [`OutputError::Sandbox`] if the parser itself failed.
    pub fn normalise(
        &self,
        result_json: &str,
        output_schema: Option<&str>,
    ) -> Result<NormalisedOutput, OutputError> {
        // Checked here as well as in the guest, so that an oversized result is never copied in.
        if result_json.len() as u64 > u64::from(self.limits.max_input_bytes) {
            return Err(OutputError::Malformed(format!(
                "the result is {} bytes, over the limit of {} bytes",
                result_json.len(),
                self.limits.max_input_bytes
            )));
        }
        let limits = WitLimits {
            max_output_chars: self.limits.max_output_chars,
            max_input_bytes: self.limits.max_input_bytes,
            max_attachment_bytes: self.limits.content.max_attachment_bytes,
            max_total_attachment_bytes: self.limits.content.max_total_attachment_bytes,
        };
        let mut runner = self.runner.lock();
        let result = runner.call(|world, store| {
            world.earshot_plugin_normalise().call_normalise(
                store,
                result_json,
                output_schema,
                limits,
            )
        })?;
        let result = result.map_err(OutputError::Malformed)?;
        let content: Vec<ContentBlock> = result.content.into_iter().map(host_block).collect();
        let attachments = content.iter().filter_map(attachment_of).collect();
        Ok(NormalisedOutput {
            output: result.output,
            is_error: result.is_error,
            attachments,
            content,
            structured_content: result.structured_content,
            truncated_chars: result.truncated_chars,
        })
    }
}

/// A block from the sandbox in the host's shape (the sandbox checked the base64; its size is
/// counted again here rather than trusted).
fn host_block(block: wit::ContentBlock) -> ContentBlock {
    let size = |data: &str| base64_decoded_len(data).unwrap_or(0);
    let media = |media: wit::Media| Media {
        size: size(&media.data_base64),
        mime_type: media.mime_type,
        data_base64: media.data_base64,
    };
    match block {
        wit::ContentBlock::Text(text) => ContentBlock::Text(text),
        wit::ContentBlock::Image(m) => ContentBlock::Image(media(m)),
        wit::ContentBlock::Audio(m) => ContentBlock::Audio(media(m)),
        wit::ContentBlock::ResourceLink(link) => ContentBlock::ResourceLink(ResourceLink {
            uri: link.uri,
            name: link.name,
            title: link.title,
            description: link.description,
            mime_type: link.mime_type,
        }),
        wit::ContentBlock::Resource(resource) => ContentBlock::Resource(EmbeddedResource {
            uri: resource.uri,
            mime_type: resource.mime_type,
            contents: match resource.contents {
                wit::ResourceContents::Text(text) => ResourceContents::Text(text),
                wit::ResourceContents::BlobBase64(data_base64) => ResourceContents::Blob {
                    size: size(&data_base64),
                    data_base64,
                },
            },
        }),
    }
}

/// The attachment a binary block is, for the callers that keep binary parts aside.
fn attachment_of(block: &ContentBlock) -> Option<Attachment> {
    let (kind, mime_type, data_base64, uri) = match block {
        ContentBlock::Image(media) => ("image", media.mime_type.clone(), &media.data_base64, None),
        ContentBlock::Audio(media) => ("audio", media.mime_type.clone(), &media.data_base64, None),
        ContentBlock::Resource(EmbeddedResource {
            uri,
            mime_type,
            contents: ResourceContents::Blob { data_base64, .. },
        }) => (
            "resource",
            mime_type.clone().unwrap_or_default(),
            data_base64,
            Some(uri.clone()),
        ),
        _ => return None,
    };
    Some(Attachment {
        kind: kind.to_string(),
        mime_type,
        size: block.binary_size(),
        data_base64: data_base64.clone(),
        uri,
    })
}
