//! Reading what one hook answered, fail-closed.
//!
//! Exit code 0: stdout is empty (no decision) or one JSON object in Claude Code's shape. Exit
//! code 2: blocked, stderr is the reason. Anything else (another code, a crash, a timeout, a
//! program that is not there, stdout past 1 MiB, stdout that is not a JSON object, a decision
//! that is not one of the known words) is a failure, one line naming the hook.

use serde_json::Value;

use super::config::{HookDefinition, HookEvent};
use super::process::{Ended, Finished};
use super::{MESSAGE_CAP, sanitised};

/// What one hook said, read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    /// It blocked, with this reason.
    pub block: Option<String>,
    /// It asked for approval, with this reason.
    pub ask: Option<String>,
    /// Context for the model.
    pub context: Option<String>,
    /// The tool input to use instead (`PreToolUse`).
    pub updated_input: Option<Value>,
    /// The prompt to send instead (`UserPromptSubmit`).
    pub updated_prompt: Option<String>,
    /// A message for the user (`systemMessage`).
    pub message: Option<String>,
    /// It said `allow` (read as no decision).
    pub said_allow: bool,
    /// It failed: one line naming the hook, what happened and how its stderr ended.
    pub failure: Option<String>,
}

impl Answer {
    /// This answer and a later one by the same hook, on a rewritten input: the later one's
    /// rewrite and context, and whatever either said that narrows (a block, an ask, a failure
    /// is never taken back).
    pub fn narrowed_by(self, later: Answer) -> Answer {
        Answer {
            block: later.block.or(self.block),
            ask: later.ask.or(self.ask),
            failure: later.failure.or(self.failure),
            said_allow: later.said_allow || self.said_allow,
            ..later
        }
    }

    /// One short line for `hooks list`'s last result.
    pub fn summary(&self) -> String {
        if let Some(failure) = &self.failure {
            return format!(
                "failed: {}",
                crate::gate::sanitise_for_terminal(failure, 200)
            );
        }
        let mut parts = Vec::new();
        if self.block.is_some() {
            parts.push("blocked");
        }
        if self.ask.is_some() {
            parts.push("asked");
        }
        if self.updated_input.is_some() || self.updated_prompt.is_some() {
            parts.push("rewrote");
        }
        if self.context.is_some() {
            parts.push("added context");
        }
        if self.said_allow {
            parts.push("said allow (no decision)");
        }
        if parts.is_empty() {
            "ok".into()
        } else {
            parts.join(", ")
        }
    }
}

/// One line of a reason or message: control characters and escapes gone, capped.
fn one_line(text: &str) -> String {
    crate::gate::sanitise_for_terminal(text.trim(), MESSAGE_CAP)
}

/// How `stderr` ended, for a failure line (`; its stderr ended: …`), or nothing.
fn stderr_ending(stderr: &str) -> String {
    let trimmed = stderr.trim();
    if trimmed.is_empty() {
        return String::new();
    }
    let tail: String = {
        let chars: Vec<char> = trimmed.chars().collect();
        chars[chars.len().saturating_sub(300)..].iter().collect()
    };
    format!(
        "; its stderr ended: {}",
        crate::gate::sanitise_for_terminal(&tail, 300)
    )
}

/// Reads `finished`, the run of `definition`.
pub fn read_answer(definition: &HookDefinition, finished: &Finished) -> Answer {
    let who = format!(
        "hook \"{}\" ({}, {})",
        definition.name,
        definition.layer.as_str(),
        definition.event
    );
    let fail = |what: String| Answer {
        failure: Some(format!("{who} {what}{}", stderr_ending(&finished.stderr))),
        ..Answer::default()
    };
    match &finished.ended {
        Ended::Exited(0) => {}
        Ended::Exited(2) => {
            let reason = one_line(&finished.stderr);
            return Answer {
                block: Some(if reason.is_empty() {
                    format!("{who} exited with code 2")
                } else {
                    reason
                }),
                ..Answer::default()
            };
        }
        Ended::Exited(code) => return fail(format!("exited with code {code}")),
        Ended::Crashed(how) => return fail(how.clone()),
        Ended::TimedOut(after) => {
            return fail(format!(
                "did not finish within {}s and was killed",
                after.as_secs_f64()
            ));
        }
        Ended::NotStarted(why) => return fail(why.clone()),
        Ended::TooMuchOutput => {
            return fail(format!(
                "wrote more than {} MiB on stdout and was killed",
                super::process::OUTPUT_CAP >> 20
            ));
        }
    }
    let text = String::from_utf8_lossy(&finished.stdout);
    let text = text.trim();
    if text.is_empty() {
        return Answer::default();
    }
    let value: Value = match crate::settings::from_str_refusing_duplicates(text) {
        Ok(value) => value,
        Err(error) => {
            return fail(format!(
                "printed something that is not JSON on stdout ({}): {}",
                crate::gate::sanitise_for_terminal(&error.to_string(), 120),
                crate::gate::sanitise_for_terminal(text, 80)
            ));
        }
    };
    match read_json(definition.event, &value) {
        Ok(answer) => answer,
        Err(why) => fail(format!("answered {why}")),
    }
}

/// Reads the JSON answer of a hook on `event`.
fn read_json(event: HookEvent, value: &Value) -> Result<Answer, String> {
    let object = value.as_object().ok_or("with JSON that is not an object")?;
    let string = |value: Option<&Value>, key: &str| -> Result<Option<String>, String> {
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(format!("with \"{key}\" that is not a string")),
        }
    };
    let mut answer = Answer::default();
    let reason = string(object.get("reason"), "reason")?;
    match object.get("continue") {
        None | Some(Value::Null) | Some(Value::Bool(true)) => {}
        Some(Value::Bool(false)) => {
            let stop = string(object.get("stopReason"), "stopReason")?;
            answer.block = Some(one_line(
                stop.or(reason.clone())
                    .as_deref()
                    .unwrap_or("the hook said continue: false"),
            ));
        }
        Some(_) => return Err("with \"continue\" that is not true or false".into()),
    }
    match string(object.get("decision"), "decision")?.as_deref() {
        None => {}
        Some("block" | "deny") => {
            answer.block.get_or_insert_with(|| {
                one_line(reason.as_deref().unwrap_or("the hook blocked it"))
            });
        }
        Some("ask") => answer.ask = Some(one_line(reason.as_deref().unwrap_or(""))),
        Some("approve" | "allow") => answer.said_allow = true,
        Some(other) => {
            return Err(format!(
                "with the unknown decision \"{}\" (block, deny, ask)",
                crate::gate::sanitise_for_terminal(other, 40)
            ));
        }
    }
    if let Some(message) = string(object.get("systemMessage"), "systemMessage")? {
        // One line: a message must not pose as a line of earshot's own.
        answer.message = Some(one_line(&message));
    }
    let specific = match object.get("hookSpecificOutput") {
        None | Some(Value::Null) => return Ok(answer),
        Some(Value::Object(specific)) => specific,
        Some(_) => return Err("with \"hookSpecificOutput\" that is not an object".into()),
    };
    if let Some(name) = string(specific.get("hookEventName"), "hookEventName")?
        && name != event.as_str()
    {
        return Err(format!(
            "for another event (hookEventName \"{}\")",
            crate::gate::sanitise_for_terminal(&name, 40)
        ));
    }
    let why = string(
        specific.get("permissionDecisionReason"),
        "permissionDecisionReason",
    )?;
    match string(specific.get("permissionDecision"), "permissionDecision")?.as_deref() {
        None | Some("defer") => {}
        Some("deny") => {
            answer
                .block
                .get_or_insert_with(|| one_line(why.as_deref().unwrap_or("the hook denied it")));
        }
        Some("ask") => answer.ask = Some(one_line(why.as_deref().unwrap_or(""))),
        Some("allow") => answer.said_allow = true,
        Some(other) => {
            return Err(format!(
                "with the unknown permissionDecision \"{}\" (deny, ask, defer)",
                crate::gate::sanitise_for_terminal(other, 40)
            ));
        }
    }
    if let Some(context) = string(specific.get("additionalContext"), "additionalContext")? {
        answer.context = Some(sanitised(&context));
    }
    match specific.get("updatedInput") {
        None | Some(Value::Null) => {}
        Some(input @ Value::Object(_)) if event == HookEvent::PreToolUse => {
            answer.updated_input = Some(input.clone());
        }
        Some(Value::Object(_)) => {
            return Err(format!(
                "with \"updatedInput\", which {event} cannot change"
            ));
        }
        Some(_) => return Err("with \"updatedInput\" that is not an object".into()),
    }
    if let Some(prompt) = string(specific.get("updatedPrompt"), "updatedPrompt")? {
        if event != HookEvent::UserPromptSubmit {
            return Err(format!(
                "with \"updatedPrompt\", which {event} cannot change"
            ));
        }
        answer.updated_prompt = Some(earshot_terminal_text::strip_controls(&prompt));
    }
    Ok(answer)
}
