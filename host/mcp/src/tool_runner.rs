//! An MCP tool behind the dispatch seam: the call goes to its server (serialised with every
//! other MCP call) and what comes back is normalised in the mcp-output sandbox.

use std::sync::Arc;

use crate::names::ToolId;
use crate::runner::{BoxFuture, CallError, FailureCause, ToolOutput, ToolRunner, parse_input};
use crate::sandbox::McpOutputParser;

use super::McpServers;

/// What an MCP tool needs to run: the session's servers, the output sandbox, and what the
/// server declared about the tool's output.
pub struct McpRunner {
    /// The session's servers (calls are serialised there).
    pub servers: Arc<McpServers>,
    /// The mcp-output sandbox.
    pub parser: Arc<McpOutputParser>,
    /// The tool's `outputSchema`, which `structuredContent` must match.
    pub output_schema: Option<String>,
    /// The tool's title, shown to the user.
    pub title: Option<String>,
}

impl ToolRunner for McpRunner {
    fn call<'a>(
        &'a self,
        id: &'a ToolId,
        input_json: &'a str,
    ) -> BoxFuture<'a, Result<ToolOutput, CallError>> {
        Box::pin(async move {
            let input = parse_input(id, input_json)?;
            let outcome = self.servers.call(id.source(), id.tool(), input).await?;
            // The sandbox runs inline: it is bounded by its own CPU deadline and memory cap, and
            // a hand-off to another thread would cost more than the normalisation itself.
            let normalised = self
                .parser
                .normalise(&outcome.result.to_string(), self.output_schema.as_deref())
                .map_err(|error| {
                    CallError::failed(
                        format!(
                            "server \"{}\" answered {id} with a result earshot cannot use: {error}",
                            id.source()
                        ),
                        FailureCause::UnusableResult {
                            server: id.source().to_string(),
                        },
                    )
                })?;
            let structured_content = normalised
                .structured_content
                .as_deref()
                .and_then(|text| serde_json::from_str(text).ok());
            Ok(ToolOutput {
                output: normalised.output,
                is_error: normalised.is_error,
                title: self.title.clone(),
                notice: outcome.notice,
                content: normalised.content,
                structured_content,
            })
        })
    }

    fn output_schema(&self) -> Option<&str> {
        self.output_schema.as_deref()
    }

    fn search_text(&self, tool: &ToolId, description: &str) -> String {
        format!(
            "{} {} {description}",
            tool.tool(),
            self.title.as_deref().unwrap_or("")
        )
    }
}
