//! A component's tools behind the dispatch seam. A call runs on tokio's blocking pool: it may
//! take up to the component's CPU deadline, and must not hold up the caller's async tasks.

use std::sync::Arc;

use crate::names::ToolId;
use crate::runner::{BoxFuture, CallError, FailureCause, ToolOutput, ToolRunner};

use super::{SandboxError, ToolComponent};

/// A loaded component as the registry holds it.
pub(crate) struct ComponentRunner(pub Arc<ToolComponent>);

impl ToolRunner for ComponentRunner {
    fn call<'a>(
        &'a self,
        tool: &'a ToolId,
        input_json: &'a str,
    ) -> BoxFuture<'a, Result<ToolOutput, CallError>> {
        let component = self.0.clone();
        let name = tool.tool().to_string();
        let input = input_json.to_string();
        Box::pin(async move {
            let output = tokio::task::spawn_blocking(move || component.call(&name, &input))
                .await
                .map_err(|_| {
                    let error = SandboxError::Trap {
                        component: tool.source().to_string(),
                        reason: "its call ended inside earshot".into(),
                    };
                    CallError::failed(
                        format!("{tool} failed: {error}"),
                        FailureCause::Sandbox(error),
                    )
                })?
                .map_err(|error| {
                    CallError::failed(
                        format!("{tool} failed: {error}"),
                        FailureCause::Sandbox(error),
                    )
                })?;
            Ok(ToolOutput {
                output: output.output,
                is_error: output.is_error,
                title: output.title,
                notice: None,
            })
        })
    }
}
