//! The `mcp-output` world's export: WIT types in, [`crate::normalise`] out.

use earshot_guest_sdk::bindings::mcp_output::earshot::plugin::types::{
    ContentBlock, EmbeddedResource, Media, ResourceContents, ResourceLink,
};
use earshot_guest_sdk::bindings::mcp_output::exports::earshot::plugin::normalise::{
    Guest, Limits, ToolResult,
};

use crate::Block;

struct Component;

impl Guest for Component {
    fn normalise(
        result_json: String,
        output_schema: Option<String>,
        limits: Limits,
    ) -> Result<ToolResult, String> {
        let limits = crate::Limits {
            max_output_chars: limits.max_output_chars,
            max_input_bytes: limits.max_input_bytes,
            max_attachment_bytes: limits.max_attachment_bytes,
            max_total_attachment_bytes: limits.max_total_attachment_bytes,
        };
        let result = crate::normalise(&result_json, output_schema.as_deref(), limits)?;
        Ok(ToolResult {
            output: result.output,
            is_error: result.is_error,
            content: result.blocks.into_iter().map(content_block).collect(),
            structured_content: result.structured_content,
            truncated_chars: result.truncated_chars,
        })
    }
}

/// One block in the contract's shape.
fn content_block(block: Block) -> ContentBlock {
    match block {
        Block::Text(text) => ContentBlock::Text(text),
        Block::Media {
            audio,
            mime_type,
            data_base64,
        } => {
            let media = Media {
                mime_type,
                data_base64,
            };
            if audio {
                ContentBlock::Audio(media)
            } else {
                ContentBlock::Image(media)
            }
        }
        Block::ResourceLink {
            uri,
            name,
            title,
            description,
            mime_type,
        } => ContentBlock::ResourceLink(ResourceLink {
            uri,
            name,
            title,
            description,
            mime_type,
        }),
        Block::ResourceText {
            uri,
            mime_type,
            text,
        } => ContentBlock::Resource(EmbeddedResource {
            uri,
            mime_type,
            contents: ResourceContents::Text(text),
        }),
        Block::ResourceBlob {
            uri,
            mime_type,
            data_base64,
        } => ContentBlock::Resource(EmbeddedResource {
            uri,
            mime_type,
            contents: ResourceContents::BlobBase64(data_base64),
        }),
    }
}

earshot_guest_sdk::bindings::mcp_output::export_mcp_output!(Component);
