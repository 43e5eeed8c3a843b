//! Dispatch: the only code that runs a tool. Gate first, then the input is validated in the
//! validator sandbox, then the tool's runner (its source kind's runtime, behind
//! [`ToolRunner`](crate::runner::ToolRunner)) runs it.

use crate::gate::{Gate, Outcome, Prompter, ToolRequest, sanitise_for_terminal};
use crate::registry::RegisteredTool;
use crate::runner::{CallError, FailureCause, ToolOutput};
use crate::sandbox::{SchemaError, SchemaValidator, ValidationIssue, Verdict};

/// Runs one registered tool: gate (prompting only on ask), input validation, then the tool.
///
/// # Errors
/// A [`CallError`] saying why the tool did not run or did not finish.
pub(crate) async fn call_registered(
    tool: &RegisteredTool,
    gate: &Gate,
    validator: &SchemaValidator,
    prompter: &dyn Prompter,
    input_json: &str,
) -> Result<ToolOutput, CallError> {
    let request = ToolRequest {
        tool: &tool.id,
        read_only: tool.read_only,
        title: None,
        detail: None,
    };
    // The host's own title and detail, unless the runner's `describe` writes them (only an
    // extension's does; it may not write the rule name or target); computed only when the gate
    // asks someone who will see them.
    let prompt_text = || async {
        let written = tool.runner.describe(&tool.id, input_json).await;
        (
            written.title.unwrap_or_else(|| tool.description.clone()),
            written
                .detail
                .unwrap_or_else(|| format!("input: {}", sanitise_for_terminal(input_json, 800))),
        )
    };
    if let Outcome::Denied(reason) = gate.authorize_with(&request, prompt_text, prompter).await {
        return Err(CallError::Denied(reason));
    }
    // The validator runs inline: its sandbox has its own CPU deadline and memory cap, and a
    // validation takes microseconds, less than a hand-off to another thread.
    let verdict = validator
        .validate(&tool.compiled_schema, input_json)
        .map_err(|error| {
            let message = format!("could not validate the input of {}: {error}", tool.id);
            let cause = match error {
                SchemaError::Sandbox(error) => FailureCause::Sandbox(error),
                SchemaError::NotJson(_) | SchemaError::Invalid(_) => FailureCause::ToolSchema,
            };
            CallError::failed(message, cause)
        })?;
    match verdict {
        Verdict::Valid => {}
        Verdict::NotJson(reason) => return Err(CallError::not_json(&tool.id, reason)),
        Verdict::Invalid(issues) => {
            return Err(CallError::InvalidInput {
                tool: tool.id.namespaced(),
                issues: issues.iter().map(ValidationIssue::to_string).collect(),
            });
        }
    }
    tool.runner.call(&tool.id, input_json).await
}
