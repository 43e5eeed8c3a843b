//! Dispatch: the only code that runs a tool. Gate first, then the input is validated in the
//! validator sandbox, then the tool runs.

use crate::gate::{Gate, Outcome, Prompter, ToolRequest, sanitise_for_terminal};
use crate::names::ToolId;
use crate::registry::{McpRunner, RegisteredTool, Runner, ToolRegistry};
use crate::sandbox::{SchemaValidator, ValidationIssue, Verdict};

/// What a tool call produced, for the model.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ToolOutput {
    /// The text for the model.
    pub output: String,
    /// The tool reported failure.
    pub is_error: bool,
    /// A title for the user's display.
    pub title: Option<String>,
    /// Something the user should know about how the call went (a server was restarted first).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// Why a call did not produce a tool output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// No registered tool has that name.
    #[error("no tool named \"{0}\"; `earshot tools list` shows what is available")]
    UnknownTool(String),
    /// An MCP tool that is neither listed nor surfaced by `tool_search` in this session.
    #[error(
        "{0} is not listed: with more than 25 MCP tools, MCP tools are found with tool_search first"
    )]
    NotListed(String),
    /// The gate denied it.
    #[error("{0}")]
    Denied(String),
    /// The input does not match the tool's schema.
    #[error("the input for {tool} does not match its schema: {}", issues.join("; "))]
    InvalidInput {
        /// The tool.
        tool: String,
        /// Each problem, located.
        issues: Vec<String>,
    },
    /// The tool could not run (its sandbox failed, or validation itself failed).
    #[error("{0}")]
    Failed(String),
}

/// Runs `name` with `input_json`: asks the gate (prompting only on ask), validates the input,
/// and runs the tool.
///
/// # Errors
/// A [`CallError`] saying why the tool did not run or did not finish.
pub fn call_tool(
    registry: &ToolRegistry,
    gate: &Gate,
    validator: &SchemaValidator,
    prompter: &dyn Prompter,
    name: &str,
    input_json: &str,
) -> Result<ToolOutput, CallError> {
    let tool = registry
        .find(name)
        .ok_or_else(|| CallError::UnknownTool(name.to_string()))?;
    call_registered(tool, gate, validator, prompter, input_json)
}

/// Runs one registered tool: gate (prompting only on ask), input validation, then the tool.
///
/// # Errors
/// A [`CallError`] saying why the tool did not run or did not finish.
pub fn call_registered(
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
    // The host's own title and detail, unless an extension's `describe` writes them (it may not
    // write the rule name or target); computed only when the gate asks.
    let prompt_text = || {
        let mut title = tool.description.clone();
        let mut detail = format!("input: {}", sanitise_for_terminal(input_json, 800));
        if let Runner::Extension(worker) = &tool.runner
            && let Ok(input) = serde_json::from_str(input_json)
        {
            let written = worker.describe(tool.id.tool(), input);
            title = written.title.unwrap_or(title);
            detail = written.detail.unwrap_or(detail);
        }
        (title, detail)
    };
    if let Outcome::Denied(reason) = gate.authorize_with(&request, prompt_text, prompter) {
        return Err(CallError::Denied(reason));
    }
    let verdict = validator
        .validate(&tool.compiled_schema, input_json)
        .map_err(|error| {
            CallError::Failed(format!(
                "could not validate the input of {}: {error}",
                tool.id
            ))
        })?;
    match verdict {
        Verdict::Valid => {}
        Verdict::NotJson(reason) => {
            return Err(CallError::InvalidInput {
                tool: tool.id.namespaced(),
                issues: vec![format!("it is not JSON: {reason}")],
            });
        }
        Verdict::Invalid(issues) => {
            return Err(CallError::InvalidInput {
                tool: tool.id.namespaced(),
                issues: issues.iter().map(ValidationIssue::to_string).collect(),
            });
        }
    }
    match &tool.runner {
        Runner::Component(component) => {
            let output = component
                .call(tool.id.tool(), input_json)
                .map_err(|error| CallError::Failed(format!("{} failed: {error}", tool.id)))?;
            Ok(ToolOutput {
                output: output.output,
                is_error: output.is_error,
                title: output.title,
                notice: None,
            })
        }
        Runner::Extension(worker) => {
            let input: serde_json::Value = serde_json::from_str(input_json)
                .map_err(|error| CallError::Failed(format!("the input is not JSON: {error}")))?;
            worker
                .call(tool.id.tool(), input)
                .map_err(|error| CallError::Failed(format!("{} failed: {error}", tool.id)))
        }
        Runner::Mcp(runner) => call_mcp_tool(runner, &tool.id, input_json),
    }
}

/// Sends the call to the server (serialised with every other MCP call) and normalises what comes
/// back in the mcp-output sandbox.
fn call_mcp_tool(
    runner: &McpRunner,
    id: &ToolId,
    input_json: &str,
) -> Result<ToolOutput, CallError> {
    let input: serde_json::Value = serde_json::from_str(input_json)
        .map_err(|error| CallError::Failed(format!("the input is not JSON: {error}")))?;
    let outcome = runner
        .servers
        .call(id.source(), id.tool(), input)
        .map_err(CallError::Failed)?;
    let normalised = runner
        .parser
        .normalise(&outcome.result.to_string(), runner.output_schema.as_deref())
        .map_err(|error| {
            CallError::Failed(format!(
                "server \"{}\" answered {id} with a result earshot cannot use: {error}",
                id.source()
            ))
        })?;
    Ok(ToolOutput {
        output: normalised.output,
        is_error: normalised.is_error,
        title: runner.title.clone(),
        notice: outcome.notice,
    })
}
