//! Dispatch: the only code that runs a tool. Gate first, then the input is validated in the
//! validator sandbox, then the tool's runner (its source kind's runtime, behind
//! [`ToolRunner`](crate::runner::ToolRunner)) runs it.

use crate::gate::{Gate, Outcome, Prompter, ToolRequest, sanitise_for_terminal};
use crate::registry::RegisteredTool;
use crate::runner::{CallError, FailureCause, ToolOutput};
use crate::sandbox::{SchemaError, SchemaValidator, ValidationIssue, Verdict};

/// What the `PreToolUse` hooks did to a call, for the gate and its prompt.
#[derive(Debug, Clone, Default)]
pub struct HookNote {
    /// A hook asked for approval: the call is asked even over an allow rule.
    pub ask: Option<crate::hooks::HookAsk>,
    /// The input before hooks rewrote it, and who rewrote it (the prompt shows both inputs).
    pub rewrite: Option<(String, Vec<String>)>,
}

impl HookNote {
    /// The lines the prompt's detail gets before the input: the hook's ask, then the rewrite.
    fn detail(&self) -> String {
        let mut lines = Vec::new();
        if let Some(ask) = &self.ask {
            lines.push(format!(
                "hook \"{}\" asks: {}",
                ask.hook,
                sanitise_for_terminal(&ask.reason, 300)
            ));
        }
        if let Some((original, by)) = &self.rewrite {
            lines.push(format!(
                "rewritten by hook {}; the original input: {}",
                by.iter()
                    .map(|name| format!("\"{name}\""))
                    .collect::<Vec<_>>()
                    .join(", "),
                sanitise_for_terminal(original, 300)
            ));
        }
        lines.join(" | ")
    }
}

/// Runs one registered tool: gate (prompting only on ask), input validation, then the tool.
///
/// # Errors
/// A [`CallError`] saying why the tool did not run or did not finish.
pub async fn call_registered(
    tool: &RegisteredTool,
    gate: &Gate,
    validator: &SchemaValidator,
    prompter: &dyn Prompter,
    input_json: &str,
    hooks: Option<&HookNote>,
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
        let mut detail = written
            .detail
            .unwrap_or_else(|| format!("input: {}", sanitise_for_terminal(input_json, 800)));
        // What hooks said goes first: the detail is capped, and a long input must not push it
        // out of sight.
        if let Some(hooks) = hooks
            .map(HookNote::detail)
            .filter(|lines| !lines.is_empty())
        {
            detail = format!("{hooks} | {detail}");
        }
        (
            written.title.unwrap_or_else(|| tool.description.clone()),
            detail,
        )
    };
    let raised = hooks.is_some_and(|hooks| hooks.ask.is_some());
    if let Outcome::Denied(reason) = gate
        .authorize_raised(&request, prompt_text, prompter, raised)
        .await
    {
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
