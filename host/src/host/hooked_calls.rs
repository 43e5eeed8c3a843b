//! A call with hooks around it, and the events an embedder fires: `PreToolUse` before the gate
//! (a block is a denial, an ask raises the call to at least an ask, a rewrite is validated and
//! gated from scratch), `PermissionAsked` before anyone is asked, `PostToolUse` or
//! `PostToolUseFailure` after, their context appended to the output, labelled.

use serde_json::{Map, Value, json};

use crate::dispatch::HookNote;
use crate::gate::{DecidedBy, Prompter, ToolRequest};
use crate::mcp::READ_RESOURCE_TOOL;
use crate::runner::{CallError, ToolOutput};
use crate::skills::SKILL_TOOL_NAME;

use super::{Caller, HookAsk, HookEngine, HookEvent, HookReport, HookTool, HookedCall, Host};

impl Host {
    /// The session's hooks, when any run.
    pub fn hooks(&self) -> Option<&HookEngine> {
        self.hooks.as_deref()
    }

    /// What the user should know about the session's hooks, one line each: hooks that do not
    /// run and why (untrusted, changed, unreadable), and a change to the user's own hooks made
    /// outside earshot. Show them at start.
    pub fn hook_notices(&self) -> &[String] {
        &self.hook_notices
    }

    /// What the `SessionStart` hooks said (their context is for the model's first turn).
    pub fn session_start_report(&self) -> &HookReport {
        &self.session_start
    }

    /// Fires one of the agent loop's events (`UserPromptSubmit` with `prompt`, `Stop`,
    /// `SubagentStop`, `PreCompact`, `Notification`) with `fields` in the hooks' input. What
    /// comes back only narrows: [`HookReport::blocked`] (do not send the prompt, do not stop),
    /// [`HookReport::updated_prompt`], [`HookReport::context_for_model`]. A `Stop` block past
    /// the eighth in a row is let go. With no hook on the event it returns at once, empty.
    pub async fn fire_hook(&self, event: HookEvent, fields: Map<String, Value>) -> HookReport {
        match &self.hooks {
            Some(hooks) => hooks.fire(event, fields, None).await,
            None => HookReport::default(),
        }
    }

    /// [`Host::fire_hook`] for `UserPromptSubmit`: the prompt's `prompt` field is `prompt`.
    pub async fn user_prompt_submit(&self, prompt: &str) -> HookReport {
        let mut fields = Map::new();
        fields.insert("prompt".into(), Value::String(prompt.to_string()));
        self.fire_hook(HookEvent::UserPromptSubmit, fields).await
    }

    /// Fires `PreToolUse` for one of the embedder's own tools (`HookTool::embedder("Bash",
    /// "git status")`), whose gate is the embedder's. The report's block is a denial and its ask
    /// an ask even over the embedder's allow; a rewritten input must be checked and gated again
    /// from scratch by the embedder (the second value).
    pub async fn fire_pre_tool_use(
        &self,
        tool: &HookTool,
        input: Value,
        gate: Value,
    ) -> (HookReport, Option<Value>) {
        match &self.hooks {
            Some(hooks) => {
                let pre = hooks.pre_tool_use(tool, input, gate).await;
                (pre.report, pre.updated_input)
            }
            None => (HookReport::default(), None),
        }
    }

    /// The tool `name` as hooks see it, when it is one the session can call now: a host tool
    /// the model is offered ([`Host::host_tools`], the same list [`Host::model_tools`] shows:
    /// `tool_search`, the resource tools, `skill`), or a registered tool that is not behind
    /// `tool_search` for `caller`. No hook runs for a call that cannot run. A host tool whose
    /// gate decides on what its input names is matched as that: `read_mcp_resource` as
    /// `Mcp(server__resources)`, `skill` as `Skill(name)`.
    fn hook_tool(&self, caller: Caller, name: &str, input: &Value) -> Option<HookTool> {
        if self.host_tools().iter().any(|tool| tool.name == name) {
            return Some(match name {
                READ_RESOURCE_TOOL => HookTool::read_resource(input),
                SKILL_TOOL_NAME => crate::skills::tool::hook_tool(input),
                _ => HookTool {
                    name: name.to_string(),
                    keyword: None,
                    target: name.to_string(),
                },
            });
        }
        let registry = self.registry();
        let tool = registry.find(name)?;
        if self.behind_search(caller, tool) {
            return None;
        }
        Some(HookTool {
            name: tool.id.namespaced(),
            keyword: Some(tool.id.kind().rule_keyword().to_string()),
            target: tool.id.namespaced(),
        })
    }

    /// What the gate would decide about `name` before any hook: `gate` in `PreToolUse`'s input.
    fn gate_for_hooks(&self, name: &str) -> Value {
        let registry = self.registry();
        let Some(tool) = registry.find(name) else {
            return json!({"decision": null, "rule": null, "source": "host"});
        };
        let decision = self.gate.decide(&ToolRequest {
            tool: &tool.id,
            read_only: tool.read_only,
            title: None,
            detail: None,
        });
        let (rule, source) = match &decision.decided_by {
            DecidedBy::Rule { rule, layer, .. } => (Some(rule.clone()), layer.as_str()),
            DecidedBy::ReadOnly => (None, "read-only"),
            DecidedBy::Default => (None, "default"),
            // A kind of decision added to the core later: no rule to name.
            _ => (None, "host"),
        };
        json!({"decision": decision.effect.key(), "rule": rule, "source": source})
    }

    /// [`Host::call`] with the tool events' hooks around it.
    pub(super) async fn call_hooked(
        &self,
        hooks: &HookEngine,
        caller: Caller,
        name: &str,
        input_json: &str,
        prompter: &dyn Prompter,
    ) -> Result<ToolOutput, CallError> {
        self.refresh_changed_tools().await;
        let input: Value = serde_json::from_str(input_json)
            .unwrap_or_else(|_| Value::String(input_json.to_string()));
        let Some(tool) = self.hook_tool(caller, name, &input) else {
            // Not callable now: the same refusal as without hooks, from the tool lists just
            // refreshed (never a second refresh that could let a new tool past its hooks).
            let nothing = HookNote::default();
            return self
                .call_unhooked(caller, name, input_json, prompter, Some(&nothing))
                .await;
        };
        let mut pre = hooks
            .pre_tool_use(&tool, input.clone(), self.gate_for_hooks(name))
            .await;
        if let Some((hook, reason)) = pre.report.blocked() {
            return Err(CallError::Denied(format!(
                "{} was blocked by hook \"{hook}\": {reason}",
                tool.name
            )));
        }
        let (final_input, final_json) = match &pre.updated_input {
            Some(rewritten) => (rewritten.clone(), rewritten.to_string()),
            None => (input, input_json.to_string()),
        };
        // A rewrite that moves the call to another target (`read_mcp_resource` of another
        // server, `skill` of another skill) is that target's call from here on: its own hooks
        // run on it, and the gate decides on it (the call below gates the final input, and
        // starts a server this call needs that the session did not start).
        let mut tool = tool;
        if pre.updated_input.is_some()
            && let Some(moved) = self.hook_tool(caller, name, &final_input)
            && moved != tool
        {
            let again = hooks
                .pre_tool_use(&moved, final_input.clone(), self.gate_for_hooks(name))
                .await;
            if let Some((hook, reason)) = again.report.blocked() {
                return Err(CallError::Denied(format!(
                    "{} was blocked by hook \"{hook}\": {reason}",
                    moved.rule_form()
                )));
            }
            if let Some(changed) = again.updated_input.filter(|again| *again != final_input) {
                // Only the first chain rewrites; a second change needs a person's yes.
                let by = again.rewritten_by.last().cloned().unwrap_or_default();
                tracing::debug!(%changed, "a hook on the moved call would rewrite it again");
                pre.report.outcomes.push(crate::hooks::HookOutcome::Asked {
                    hook: by.clone(),
                    reason: format!(
                        "hook \"{by}\" would change the input that moved the call to {}",
                        moved.rule_form()
                    ),
                });
            }
            pre.report.outcomes.extend(again.report.outcomes);
            tool = moved;
        }
        let note = HookNote {
            ask: pre.report.asked().map(|(hook, reason)| HookAsk {
                hook: hook.to_string(),
                reason: reason.to_string(),
            }),
            rewrite: pre
                .updated_input
                .is_some()
                .then(|| (input_json.to_string(), pre.rewritten_by.clone())),
        };
        let hooked_prompter = HookedCall {
            engine: hooks,
            inner: prompter,
            tool: tool.clone(),
            input: final_input.clone(),
            ask: note.ask.clone(),
        };
        let result = self
            .call_unhooked(caller, name, &final_json, &hooked_prompter, Some(&note))
            .await;
        let mut fields = Map::new();
        fields.insert("tool_name".into(), Value::String(tool.name.clone()));
        fields.insert("tool_input".into(), final_input);
        let post = match &result {
            Ok(output) => {
                fields.insert(
                    "tool_response".into(),
                    json!({"output": output.output, "is_error": output.is_error}),
                );
                let event = if output.is_error {
                    HookEvent::PostToolUseFailure
                } else {
                    HookEvent::PostToolUse
                };
                hooks.fire(event, fields, Some(&tool)).await
            }
            Err(CallError::Failed { .. } | CallError::InvalidInput { .. }) => {
                let error = result.as_ref().err().map(ToString::to_string);
                fields.insert("error".into(), Value::from(error));
                hooks
                    .fire(HookEvent::PostToolUseFailure, fields, Some(&tool))
                    .await
            }
            Err(_) => HookReport::default(),
        };
        let context = [pre.report.context_for_model(), post.context_for_model()]
            .into_iter()
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        let lines: Vec<String> = pre
            .report
            .lines_for_user()
            .into_iter()
            .chain(post.lines_for_user())
            .collect();
        match result {
            Ok(output) => {
                // In a session with hooks, nothing a tool wrote can pose as a hook's label, in
                // any part of its result, and the context ends every reading of it.
                let mut output = output.with_hook_context(&context);
                if !lines.is_empty() {
                    let mut notice = output.notice.take().into_iter().collect::<Vec<_>>();
                    notice.extend(lines);
                    output.notice = Some(notice.join("\n"));
                }
                Ok(output)
            }
            Err(CallError::Failed { message, cause }) if !context.is_empty() => {
                for line in lines {
                    tracing::warn!("{line}");
                }
                Err(CallError::Failed {
                    message: format!("{}\n{context}", crate::hooks::without_labels(&message)),
                    cause,
                })
            }
            Err(error) => {
                // No output to carry them: the lines go to the log.
                for line in lines {
                    tracing::warn!("{line}");
                }
                Err(error)
            }
        }
    }
}
