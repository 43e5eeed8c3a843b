//! The editor as the prompter: an ask becomes `session/request_permission` with exactly three
//! options whose ids are made fresh for that request. Only those ids count; every other outcome
//! (a forged or stale id, `cancelled`, a JSON-RPC error, no answer before the turn is cancelled,
//! a closed connection, an outcome this version does not know) is a deny. The gate calls this
//! only on Ask, so the editor never sees a call a rule denies, and cannot turn one into an allow.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    Content, PermissionOption, PermissionOptionKind, RequestPermissionOutcome,
    RequestPermissionRequest, SessionId, SessionNotification, SessionUpdate, ToolCallContent,
    ToolCallId, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use tokio_util::sync::CancellationToken;

use crate::gate::{PermissionPrompt, PromptAnswer, Prompter};
use crate::runner::BoxFuture;

/// Asks one editor, for one tool call of one session.
pub struct AcpPrompter {
    connection: ConnectionTo<Client>,
    session: SessionId,
    tool_call: ToolCallId,
    cancelled: CancellationToken,
    announce_start: bool,
}

/// The three option ids of one request, unguessable before it is sent.
struct OfferedIds {
    allow_once: String,
    allow_always: String,
    reject_once: String,
}

impl OfferedIds {
    fn fresh() -> OfferedIds {
        let mut bytes = [0u8; 8];
        // Without the OS random source the ids are still unique per request, just guessable.
        if getrandom::fill(&mut bytes).is_err() {
            bytes = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|elapsed| elapsed.as_nanos() as u64)
                .unwrap_or_default()
                .to_le_bytes();
        }
        let nonce = hex::encode(bytes);
        OfferedIds {
            allow_once: format!("allow-once-{nonce}"),
            allow_always: format!("allow-always-{nonce}"),
            reject_once: format!("reject-once-{nonce}"),
        }
    }
}

impl AcpPrompter {
    /// A prompter for the tool call `tool_call` of `session`; an ask still open when `cancelled`
    /// fires (the editor sent `session/cancel`) is withdrawn and counts as a deny.
    pub fn new(
        connection: ConnectionTo<Client>,
        session: SessionId,
        tool_call: ToolCallId,
        cancelled: CancellationToken,
    ) -> AcpPrompter {
        AcpPrompter {
            connection,
            session,
            tool_call,
            cancelled,
            announce_start: false,
        }
    }

    /// Also tells the editor the call is `in_progress` when it answers with an allow.
    pub fn announcing_start(mut self) -> AcpPrompter {
        self.announce_start = true;
        self
    }

    fn announce_in_progress(&self) {
        let update = ToolCallUpdate::new(
            self.tool_call.clone(),
            ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
        );
        let _ = self.connection.send_notification(SessionNotification::new(
            self.session.clone(),
            SessionUpdate::ToolCallUpdate(update),
        ));
    }

    /// The request: the host-computed target and rule, the tool's sanitised title and detail.
    fn request(&self, prompt: &PermissionPrompt, ids: &OfferedIds) -> RequestPermissionRequest {
        let title = if prompt.title().is_empty() {
            format!("Run {}", prompt.target())
        } else {
            format!("Run {}: {}", prompt.target(), prompt.title())
        };
        let mut text = String::new();
        if !prompt.detail().is_empty() {
            text.push_str(prompt.detail());
            text.push('\n');
        }
        text.push_str(&format!("rule: {}", prompt.rule_name()));
        let fields = ToolCallUpdateFields::new()
            .title(title)
            .name(prompt.target().to_string())
            .content(vec![ToolCallContent::Content(Content::new(text))]);
        let options = vec![
            PermissionOption::new(
                ids.allow_once.clone(),
                "Allow once",
                PermissionOptionKind::AllowOnce,
            ),
            PermissionOption::new(
                ids.allow_always.clone(),
                format!("Always allow {} in this project", prompt.rule_name()),
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new(
                ids.reject_once.clone(),
                "Reject",
                PermissionOptionKind::RejectOnce,
            ),
        ];
        RequestPermissionRequest::new(
            self.session.clone(),
            ToolCallUpdate::new(self.tool_call.clone(), fields),
            options,
        )
    }
}

impl Prompter for AcpPrompter {
    fn ask<'a>(&'a self, prompt: &'a PermissionPrompt) -> BoxFuture<'a, PromptAnswer> {
        Box::pin(async move {
            let not_approved = |how: &str| {
                PromptAnswer::Deny(format!("{} was {how} in the editor", prompt.target()))
            };
            if self.cancelled.is_cancelled() {
                return not_approved("not approved (the turn was cancelled)");
            }
            let ids = OfferedIds::fresh();
            let sent = self.connection.send_request(self.request(prompt, &ids));
            let withdraw = sent.cancellation_handle();
            let answer = tokio::select! {
                answer = sent.block_task() => match answer {
                    Ok(response) => match response.outcome {
                        RequestPermissionOutcome::Selected(selected) => {
                            let chosen: &str = &selected.option_id.0;
                            if chosen == ids.allow_once {
                                PromptAnswer::AllowOnce
                            } else if chosen == ids.allow_always {
                                PromptAnswer::AllowAlwaysForProject
                            } else if chosen == ids.reject_once {
                                not_approved("rejected")
                            } else {
                                not_approved("not approved (the answer was not one of the options offered)")
                            }
                        }
                        RequestPermissionOutcome::Cancelled => not_approved("not approved (the request was cancelled)"),
                        _ => not_approved("not approved (an answer earshot does not know)"),
                    },
                    Err(error) => {
                        tracing::debug!(%error, "session/request_permission failed");
                        not_approved("not approved (no answer)")
                    }
                },
                _ = self.cancelled.cancelled() => {
                    let _ = withdraw.cancel();
                    not_approved("not approved (the turn was cancelled)")
                }
            };
            if self.announce_start && !matches!(answer, PromptAnswer::Deny(_)) {
                self.announce_in_progress();
            }
            answer
        })
    }
}
