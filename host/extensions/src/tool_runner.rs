//! An extension's tools behind the dispatch seam: calls and `describe` go to its JS thread.

use crate::names::ToolId;
use crate::runner::{BoxFuture, CallError, PromptText, ToolOutput, ToolRunner};

use super::ExtensionWorker;

impl ToolRunner for ExtensionWorker {
    fn call<'a>(
        &'a self,
        tool: &'a ToolId,
        input_json: &'a str,
    ) -> BoxFuture<'a, Result<ToolOutput, CallError>> {
        Box::pin(async move {
            ExtensionWorker::call(self, tool.tool(), input_json)
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
        Box::pin(ExtensionWorker::describe(self, tool.tool(), input_json))
    }
}
