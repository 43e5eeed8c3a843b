//! A component's tools behind the dispatch seam. A call may take up to the component's CPU
//! deadline, so it must not hold up the caller's other async tasks for long:
//! * on a current-thread runtime it runs on the blocking pool;
//! * on a multi-thread runtime, a component whose last call finished within [`QUICK`] runs in
//!   place on the worker (a quick call costs less than any hand-off); otherwise (its first call,
//!   or after a slow one) it runs after handing this worker's other tasks to another thread
//!   (`block_in_place`). A component that turns slow holds one worker for that one call at most
//!   (up to its CPU deadline); its next call is handed off again.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::content::{ContentBlock, ContentLimits};
use crate::names::ToolId;
use crate::runner::{BoxFuture, CallError, FailureCause, ToolOutput, ToolRunner};

use super::{SandboxError, ToolComponent};

/// A call that took less than this lets the component's next call run in place.
pub const QUICK: Duration = Duration::from_millis(1);

/// A loaded component as the registry holds it.
pub struct ComponentRunner {
    component: Arc<ToolComponent>,
    /// Its last call finished within [`QUICK`].
    last_was_quick: AtomicBool,
}

impl ComponentRunner {
    /// The runner of `component`; its first call is handed off.
    pub fn new(component: Arc<ToolComponent>) -> ComponentRunner {
        ComponentRunner {
            component,
            last_was_quick: AtomicBool::new(false),
        }
    }
}

impl ToolRunner for ComponentRunner {
    fn call<'a>(
        &'a self,
        tool: &'a ToolId,
        input_json: &'a str,
    ) -> BoxFuture<'a, Result<ToolOutput, CallError>> {
        let component = self.component.clone();
        let name = tool.tool().to_string();
        let input = input_json.to_string();
        Box::pin(async move {
            let multi_thread = tokio::runtime::Handle::try_current().is_ok_and(|runtime| {
                runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
            });
            let started = Instant::now();
            let output = if !multi_thread {
                tokio::task::spawn_blocking(move || component.call(&name, &input)).await
            } else if self.last_was_quick.load(Ordering::Relaxed) {
                Ok(component.call(&name, &input))
            } else {
                Ok(tokio::task::block_in_place(|| {
                    component.call(&name, &input)
                }))
            };
            self.last_was_quick
                .store(started.elapsed() < QUICK, Ordering::Relaxed);
            let output = output
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
            Ok(component_output(tool, output))
        })
    }
}

/// What a component returned as a tool output: its blocks checked and capped as an extension's
/// are (a block that is not usable, or structured content that is not an object, makes the
/// result an error naming it).
fn component_output(tool: &ToolId, output: super::ComponentOutput) -> ToolOutput {
    let refused = |why: String| ToolOutput {
        output: format!("{tool} returned a result earshot cannot use: {why}"),
        is_error: true,
        title: output.title.clone(),
        ..ToolOutput::default()
    };
    let mut blocks = Vec::with_capacity(output.content.len());
    for (index, block) in output.content.iter().enumerate() {
        match ContentBlock::from_mcp_json(block) {
            Ok(block) => blocks.push(block),
            Err(why) => return refused(format!("content[{index}]: {why}")),
        }
    }
    let structured_content = match output
        .structured_content
        .as_deref()
        .map(serde_json::from_str)
    {
        None => None,
        Some(Ok(value @ serde_json::Value::Object(_))) => Some(value),
        Some(Ok(_)) => return refused("its structured content is not a JSON object".into()),
        Some(Err(error)) => {
            return refused(format!("its structured content is not JSON: {error}"));
        }
    };
    ToolOutput {
        output: output.output,
        is_error: output.is_error,
        title: output.title,
        structured_content,
        ..ToolOutput::default()
    }
    .with_extra_blocks(blocks, ContentLimits::default())
}
