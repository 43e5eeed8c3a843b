//! One prompt turn: the embedder's model loop ([`TurnDriver`]) and the handle it calls tools
//! through ([`SessionTools`]), which tells the editor about every call (`tool_call`, then
//! `tool_call_update`s) and asks it through [`AcpPrompter`] — always via [`Host::call`], so the
//! gate decides first. A prompt naming a command or skill (`/name ARGS`) is expanded first
//! ([`Host::expand_prompt`]), its `@path` and `` !`cmd` `` asks going to the editor the same way.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    Content, ContentBlock, ContentChunk, SessionId, SessionNotification, SessionUpdate, ToolCall,
    ToolCallContent, ToolCallId, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::gate::{
    Effect, PermissionPrompt, PromptAnswer, Prompter, ToolRequest, sanitise_for_terminal,
};
use crate::host::{Caller, Host};
use crate::names::SourceKind;
use crate::runner::{BoxFuture, CallError, ToolOutput};
use crate::skills::{ExpandError, Expansion};

use super::prompter::AcpPrompter;

/// The model loop behind `earshot acp`: given one prompt's text and the session's tools, it
/// decides what to call and what to say. The earshot agent loop implements it; this crate ships
/// [`super::ConsoleDriver`]. A turn that is cancelled is dropped at its next await.
pub trait TurnDriver: Send + Sync {
    /// Runs one turn of `session` for the prompt `text`.
    fn run_turn<'a>(&'a self, text: &'a str, session: &'a SessionTools) -> BoxFuture<'a, ()>;
}

/// How a call made through [`SessionTools::call`] ended.
#[derive(Debug)]
#[non_exhaustive]
pub enum TurnCall {
    /// It ran; the output (which may be the tool's own error result).
    Ran(ToolOutput),
    /// It did not run or did not finish: denied, invalid, failed (the editor saw `failed`).
    Refused(CallError),
    /// The editor cancelled the turn first.
    Cancelled,
}

/// One session's tools for the turn in progress: calls go through the host's gate with the
/// editor as the prompter, and each is reported to the editor.
pub struct SessionTools {
    host: Arc<Host>,
    connection: ConnectionTo<Client>,
    session: SessionId,
    cancelled: CancellationToken,
    calls: Arc<AtomicU64>,
}

impl SessionTools {
    pub(super) fn new(
        host: Arc<Host>,
        connection: ConnectionTo<Client>,
        session: SessionId,
        cancelled: CancellationToken,
        calls: Arc<AtomicU64>,
    ) -> SessionTools {
        SessionTools {
            host,
            connection,
            session,
            cancelled,
            calls,
        }
    }

    /// The session's host: what a model is shown ([`Host::model_tools`]) and the rest.
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// Whether the editor cancelled this turn.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.is_cancelled()
    }

    /// Sends `text` to the editor as the agent's message.
    pub fn say(&self, text: &str) {
        self.notify(SessionUpdate::AgentMessageChunk(ContentChunk::new(
            ContentBlock::from(text.to_string()),
        )));
    }

    fn notify(&self, update: SessionUpdate) {
        if let Err(error) = self
            .connection
            .send_notification(SessionNotification::new(self.session.clone(), update))
        {
            tracing::debug!(%error, "could not send session/update");
        }
    }

    fn update(&self, id: &ToolCallId, fields: ToolCallUpdateFields) {
        self.notify(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id.clone(),
            fields,
        )));
    }

    /// Calls `name` with `input_json` through the gate (asking the editor only on ask), and tells
    /// the editor: `tool_call` (pending), `in_progress` once it may run, then `completed` with the
    /// output or `failed` with the one line saying why. A denied call is never shown to the
    /// editor as a question.
    pub async fn call(&self, name: &str, input_json: &str) -> TurnCall {
        self.call_from(Caller::Model, name, input_json).await
    }

    /// [`SessionTools::call`] for a tool whose exact name the person typed (the console's
    /// `/call`): an MCP tool behind `tool_search` is called without a search first
    /// ([`Host::call_by_user`](crate::Host::call_by_user)); the gate decides as always.
    pub async fn call_by_user(&self, name: &str, input_json: &str) -> TurnCall {
        self.call_from(Caller::User, name, input_json).await
    }

    async fn call_from(&self, caller: Caller, name: &str, input_json: &str) -> TurnCall {
        let number = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let id = ToolCallId::new(format!("earshot-call-{number}"));
        let raw_input =
            serde_json::from_str::<Value>(input_json).unwrap_or_else(|_| Value::from(input_json));
        let (kind, start) = self.kind_and_start(name);
        self.notify(SessionUpdate::ToolCall(
            ToolCall::new(id.clone(), name.to_string())
                .name(name.to_string())
                .kind(kind)
                .status(ToolCallStatus::Pending)
                .raw_input(raw_input),
        ));
        if start == Start::Now {
            self.update(
                &id,
                ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
            );
        }
        let prompter = AcpPrompter::new(
            self.connection.clone(),
            self.session.clone(),
            id.clone(),
            self.cancelled.clone(),
        )
        .announcing_start();
        let result = tokio::select! {
            result = async {
                match caller {
                    Caller::Model => self.host.call(name, input_json, &prompter).await,
                    Caller::User => self.host.call_by_user(name, input_json, &prompter).await,
                }
            } => result,
            _ = self.cancelled.cancelled() => {
                self.update(&id, failed_fields("cancelled by the editor"));
                return TurnCall::Cancelled;
            }
        };
        match result {
            Ok(output) => {
                let status = if output.is_error {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                };
                let raw_output = output
                    .structured_content
                    .clone()
                    .unwrap_or_else(|| Value::from(output.output.clone()));
                self.update(
                    &id,
                    ToolCallUpdateFields::new()
                        .status(status)
                        .content(output_content(&output))
                        .raw_output(raw_output),
                );
                TurnCall::Ran(output)
            }
            Err(error) => {
                self.update(&id, failed_fields(&error.to_string()));
                TurnCall::Refused(error)
            }
        }
    }

    /// When `text` starts with `/name` of a command or skill, its expansion through the gate
    /// ([`Host::expand_prompt`]); `None` when it names none. Each `@path` or `` !`cmd` `` the
    /// rules leave to ask is asked of the editor (a deny stays a deny); the first ask shows the
    /// expansion to the editor as a tool call, which then ends `completed` or `failed`.
    pub(super) async fn expand(&self, text: &str) -> Option<Result<Expansion, ExpandError>> {
        let number = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let id = ToolCallId::new(format!("earshot-expand-{number}"));
        let name = text
            .trim_start()
            .split(char::is_whitespace)
            .next()
            .unwrap_or_default();
        let asks = ExpansionAsks {
            tools: self,
            id: id.clone(),
            title: format!("expand {}", sanitise_for_terminal(name, 200)),
            editor: AcpPrompter::new(
                self.connection.clone(),
                self.session.clone(),
                id.clone(),
                self.cancelled.clone(),
            )
            .announcing_start(),
            announced: AtomicBool::new(false),
        };
        let expanded = self.host.expand_prompt(text, &asks).await;
        if asks.announced.load(Ordering::SeqCst) {
            match &expanded {
                Some(Ok(_)) => self.update(
                    &id,
                    ToolCallUpdateFields::new().status(ToolCallStatus::Completed),
                ),
                Some(Err(error)) => self.update(&id, failed_fields(&error.to_string())),
                None => {}
            }
        }
        expanded
    }

    /// How the editor should draw the call, and when it will start (only to order the
    /// notifications: [`Host::call`] decides again, and its decision is the one that counts).
    fn kind_and_start(&self, name: &str) -> (ToolKind, Start) {
        let registry = self.host.registry();
        let Some(tool) = registry.find(name) else {
            return (ToolKind::Other, Start::Never);
        };
        let honoured_read_only = tool.read_only && tool.id.kind() != SourceKind::Mcp;
        let kind = if honoured_read_only {
            ToolKind::Read
        } else {
            ToolKind::Other
        };
        let request = ToolRequest {
            tool: &tool.id,
            read_only: tool.read_only,
            title: None,
            detail: None,
        };
        let start = match self.host.gate().effect_now(&request) {
            Effect::Deny => Start::Never,
            Effect::Ask => Start::AfterTheAsk,
            Effect::Allow => Start::Now,
        };
        (kind, start)
    }
}

/// The editor as the prompter of one expansion: the first ask announces the expansion as a
/// tool call (a permission request belongs to one), then every ask goes to [`AcpPrompter`].
struct ExpansionAsks<'a> {
    tools: &'a SessionTools,
    id: ToolCallId,
    title: String,
    editor: AcpPrompter,
    announced: AtomicBool,
}

impl Prompter for ExpansionAsks<'_> {
    fn ask<'a>(&'a self, prompt: &'a PermissionPrompt) -> BoxFuture<'a, PromptAnswer> {
        Box::pin(async move {
            if !self.announced.swap(true, Ordering::SeqCst) {
                self.tools.notify(SessionUpdate::ToolCall(
                    ToolCall::new(self.id.clone(), self.title.clone())
                        .kind(ToolKind::Other)
                        .status(ToolCallStatus::Pending),
                ));
            }
            self.editor.ask(prompt).await
        })
    }

    fn shows_prompt_text(&self) -> bool {
        self.editor.shows_prompt_text()
    }
}

/// When a call is reported `in_progress`.
#[derive(Debug, PartialEq, Eq)]
enum Start {
    /// Now: a rule or an earlier "always" allows it.
    Now,
    /// When the editor allows it.
    AfterTheAsk,
    /// Never: denied, or not a tool.
    Never,
}

/// A tool output as ACP content: every block (images, audio, resource links, embedded resources)
/// as the tool produced it; ACP's content blocks have MCP's shape.
fn output_content(output: &ToolOutput) -> Vec<ToolCallContent> {
    output
        .blocks()
        .iter()
        .map(
            |block| match serde_json::from_value::<ContentBlock>(block.to_mcp_json()) {
                Ok(block) => ToolCallContent::Content(Content::new(block)),
                Err(error) => text_content(&format!(
                    "{} (not passed on: {error})",
                    block.summary().unwrap_or_default()
                )),
            },
        )
        .collect()
}

fn text_content(text: &str) -> ToolCallContent {
    ToolCallContent::Content(Content::new(text.to_string()))
}

fn failed_fields(why: &str) -> ToolCallUpdateFields {
    ToolCallUpdateFields::new()
        .status(ToolCallStatus::Failed)
        .content(vec![text_content(why)])
}
