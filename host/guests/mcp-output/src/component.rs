//! The `mcp-output` world's export: WIT types in, [`crate::normalise`] out.

use earshot_guest_sdk::bindings::mcp_output::exports::earshot::plugin::normalise::{
    Attachment, Guest, Limits, ToolResult,
};

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
        };
        let result = crate::normalise(&result_json, output_schema.as_deref(), limits)?;
        Ok(ToolResult {
            output: result.output,
            is_error: result.is_error,
            attachments: result
                .attachments
                .into_iter()
                .map(|a| Attachment {
                    kind: a.kind,
                    mime_type: a.mime_type,
                    size: a.size,
                    data_base64: a.data_base64,
                    uri: a.uri,
                })
                .collect(),
            structured_content: result.structured_content,
            truncated_chars: result.truncated_chars,
        })
    }
}

earshot_guest_sdk::bindings::mcp_output::export_mcp_output!(Component);
