//! The MCP client as the prompter: an ask becomes an `elicitation/create` form (allow once /
//! always for this project / deny) showing the host-computed rule and the sanitised title and
//! detail. Anything but an explicit allow is a deny: decline, cancel, an unknown answer, an error,
//! a closed connection, or the call being cancelled while the form is open. A client that did not
//! declare elicitation is never asked: the call is denied with the line naming the rule to add.

use rmcp::RoleServer;
use rmcp::model::{
    CancelledNotificationParam, ClientResult, ElicitRequest, ElicitRequestParams,
    ElicitationAction, ElicitationSchema, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::gate::{PermissionPrompt, PromptAnswer, Prompter, deny_naming_the_rule};
use crate::runner::BoxFuture;

/// The answers the form offers, as the client returns them.
const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const DENY: &str = "deny";

/// Asks one MCP client, for the calls of one request.
pub(crate) struct ElicitPrompter {
    pub peer: Peer<RoleServer>,
    /// The client declared form elicitation.
    pub can_elicit: bool,
    /// Fires when the client cancels the call (an open form then counts as a deny).
    pub cancelled: CancellationToken,
}

impl Prompter for ElicitPrompter {
    fn ask<'a>(&'a self, prompt: &'a PermissionPrompt) -> BoxFuture<'a, PromptAnswer> {
        Box::pin(async move {
            if !self.can_elicit {
                return deny_naming_the_rule(
                    prompt,
                    "this MCP client cannot be asked (it declared no elicitation)",
                    true,
                );
            }
            let not_approved = |how: &str| {
                PromptAnswer::Deny(format!("{} was {how} in the MCP client", prompt.target()))
            };
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: message(prompt),
                requested_schema: form(prompt),
            };
            let sent = self
                .peer
                .send_request_with_option(
                    ServerRequest::ElicitRequest(ElicitRequest::new(params)),
                    PeerRequestOptions::no_options(),
                )
                .await;
            let Ok(handle) = sent else {
                return not_approved("not approved (the form could not be sent)");
            };
            let id = handle.id.clone();
            tokio::select! {
                answer = handle.await_response() => match answer {
                    Ok(ClientResult::ElicitResult(result)) => match result.action {
                        ElicitationAction::Accept => match decision(result.content.as_ref()) {
                            Some(ALLOW_ONCE) => PromptAnswer::AllowOnce,
                            Some(ALLOW_ALWAYS) => PromptAnswer::AllowAlwaysForProject,
                            Some(DENY) => not_approved("denied"),
                            _ => not_approved("not approved (the answer was not one of the choices)"),
                        },
                        ElicitationAction::Decline => not_approved("declined"),
                        _ => not_approved("not approved (the form was cancelled)"),
                    },
                    _ => not_approved("not approved (no answer)"),
                },
                _ = self.cancelled.cancelled() => {
                    let _ = self
                        .peer
                        .notify_cancelled(CancelledNotificationParam::new(
                            Some(id),
                            Some("the tool call was cancelled".into()),
                        ))
                        .await;
                    not_approved("not approved (the call was cancelled)")
                }
            }
        })
    }

    fn shows_prompt_text(&self) -> bool {
        self.can_elicit
    }
}

/// The form's text: what would run, the tool's own title and detail, and the rule an "always"
/// answer writes.
fn message(prompt: &PermissionPrompt) -> String {
    let mut text = format!("earshot wants to run {}", prompt.target());
    for line in [prompt.title(), prompt.detail()] {
        if !line.is_empty() {
            text.push('\n');
            text.push_str(line);
        }
    }
    text.push_str(&format!("\nrule: {}", prompt.rule_name()));
    text
}

/// One required choice with three values.
fn form(prompt: &PermissionPrompt) -> ElicitationSchema {
    let schema = json!({
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": format!("Run {}?", prompt.target()),
                "oneOf": [
                    {"const": ALLOW_ONCE, "title": "Allow once"},
                    {"const": ALLOW_ALWAYS, "title": format!("Always allow {} in this project", prompt.rule_name())},
                    {"const": DENY, "title": "Deny"},
                ],
            }
        },
        "required": ["decision"],
    });
    let Value::Object(object) = schema else {
        unreachable!("a JSON object literal")
    };
    ElicitationSchema::from_json_schema(object)
        .expect("the form schema is a valid elicitation schema")
}

/// The chosen value, when the content is `{"decision": "<string>"}`.
fn decision(content: Option<&Value>) -> Option<&str> {
    content?.get("decision")?.as_str()
}
