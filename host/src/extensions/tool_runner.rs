//! An extension's tools behind the dispatch seam: calls and `describe` go to its JS thread.

use crate::names::ToolId;
use crate::runner::{BoxFuture, CallError, PromptText, ToolOutput, ToolRunner, parse_input};

use super::ExtensionWorker;

impl ToolRunner for ExtensionWorker {
    fn call<'a>(
        &'a self,
        tool: &'a ToolId,
        input_json: &'a str,
    ) -> BoxFuture<'a, Result<ToolOutput, CallError>> {
        Box::pin(async move {
            let input = parse_input(tool, input_json)?;
            ExtensionWorker::call(self, tool.tool(), input)
                .await
                .map_err(|error| match error {
                    CallError::Failed { message, cause } => {
                        CallError::failed(format!("{tool} failed: {message}"), cause)
                    }
                    other => other,
                })
        })
    }

    fn describe<'a>(&'a self, tool: &'a ToolId, input_json: &'a str) -> BoxFuture<'a, PromptText> {
        Box::pin(async move {
            match serde_json::from_str(input_json) {
                Ok(input) => ExtensionWorker::describe(self, tool.tool(), input).await,
                Err(_) => PromptText::default(),
            }
        })
    }
}
