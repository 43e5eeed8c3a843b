//! The MCP server side of a session: `tools/list` is exactly what a model is shown, `tools/call`
//! goes through [`Host::call`] (the gate first) with the client as the prompter, and the client
//! hears `notifications/tools/list_changed` when that list changes (a `tool_search` surfaced
//! tools, or a server behind changed its own). The session's commands and skills are its prompts:
//! `prompts/list` is [`Host::slash_commands`], and `prompts/get` expands one through the gate
//! ([`Host::expand_command`]) with the client as the prompter, as a call would.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListToolsResult,
    PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ProtocolVersion, Role,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use crate::host::{Host, ModelTool};
use crate::names::SourceKind;
use crate::skills::{ExpandError, SlashEntry};

use super::elicit_forward::ForwardElicitor;
use super::elicit_prompter::ElicitPrompter;

/// How often the tools of the servers behind are checked for `list_changed` between requests.
const WATCH_EVERY: Duration = Duration::from_secs(2);

/// An rmcp server handler over one [`Host`]: serve it on any rmcp transport (`earshot mcp serve`
/// uses stdio). Cheap to clone: clones share the host and what the client was last shown.
#[derive(Clone)]
pub struct EarshotServer {
    host: Arc<Host>,
    /// The host's listing version the client was last shown or told about.
    shown: Arc<AtomicU64>,
}

impl EarshotServer {
    /// A handler serving `host`'s tools.
    pub fn new(host: Arc<Host>) -> EarshotServer {
        EarshotServer {
            host,
            shown: Arc::default(),
        }
    }

    /// What the client is shown now, remembered as shown.
    async fn current_tools(&self) -> Vec<Tool> {
        let tools = self.host.model_tools().await;
        self.shown
            .store(self.host.listing_version(), Ordering::SeqCst);
        tools.iter().map(mcp_tool).collect()
    }

    /// Tells the client its tool list changed, when it may have since it was last shown or told.
    async fn announce_changes(host: &Host, shown: &AtomicU64, peer: &Peer<RoleServer>) {
        let now = host.listing_version();
        if shown.swap(now, Ordering::SeqCst) != now
            && let Err(error) = peer.notify_tool_list_changed().await
        {
            tracing::debug!(%error, "could not send tools/list_changed");
        }
    }
}

/// The one argument every command and skill takes as a prompt: what would follow `/name`.
const ARGUMENTS: &str = "arguments";

/// One command or skill as an MCP prompt: its name without `/` (`git:commit`), its description,
/// and one optional string argument, [`ARGUMENTS`], described by its argument hint.
fn mcp_prompt(entry: SlashEntry) -> Prompt {
    let hint = entry
        .argument_hint
        .filter(|hint| !hint.is_empty())
        .unwrap_or_else(|| "what follows the command when it is typed".into());
    let argument = PromptArgument::new(ARGUMENTS)
        .with_description(hint)
        .with_required(false);
    let description = (!entry.description.is_empty()).then_some(entry.description);
    Prompt::new(entry.name, description, Some(vec![argument]))
}

/// Why a prompt was not expanded, as an MCP error with the one line: the name or the arguments
/// are at fault (invalid params), or the expansion was refused or failed (internal error).
fn expand_error(error: &ExpandError) -> ErrorData {
    let line = error.to_string();
    match error {
        ExpandError::Unknown(_) | ExpandError::Arguments { .. } => {
            ErrorData::invalid_params(line, None)
        }
        _ => ErrorData::internal_error(line, None),
    }
}

/// One tool as MCP shows it: `readOnlyHint` only where earshot honours the claim (an extension's
/// or a component's, and `tool_search`), never for an MCP tool behind it.
fn mcp_tool(tool: &ModelTool) -> Tool {
    let schema = match &tool.input_schema {
        Value::Object(schema) => schema.clone(),
        _ => serde_json::Map::from_iter([("type".to_string(), Value::from("object"))]),
    };
    let mut shown = Tool::new(tool.name.clone(), tool.description.clone(), schema);
    let honoured = tool.read_only && tool.kind != Some(SourceKind::Mcp);
    if honoured {
        shown = shown.annotate(ToolAnnotations::new().read_only(true));
    }
    if let Some(Value::Object(schema)) = &tool.output_schema {
        shown = shown.with_raw_output_schema(Arc::new(schema.clone()));
    }
    shown
}

/// A tool output as an MCP result: every block (images, audio, resource links, embedded
/// resources) and the structured content, as the tool behind produced them.
fn mcp_result(output: crate::ToolOutput) -> CallToolResult {
    let content: Vec<ContentBlock> = output
        .blocks()
        .iter()
        .map(|block| {
            serde_json::from_value(block.to_mcp_json()).unwrap_or_else(|error| {
                // Every block the host holds is a valid MCP block; should rmcp disagree, the
                // client still learns what was there.
                ContentBlock::text(format!(
                    "{} (not passed on: {error})",
                    block.summary().unwrap_or_default()
                ))
            })
        })
        .collect();
    let mut result = if output.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = output.structured_content;
    result
}

impl ServerHandler for EarshotServer {
    // The 2026 protocol forbids server-to-client requests, and asks are elicitation requests.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    // Logging is deprecated by SEP-2577 in later protocol versions; the versions served here
    // (up to 2025-11-25) carry it, and it is where a client shows what did not load.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_logging()
                .enable_prompts()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("earshot", env!("CARGO_PKG_VERSION")))
    }

    #[allow(deprecated)]
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // What did not load goes to the client's log too (stdout carries only the protocol).
        let problems = self.host.registry().problems();
        for problem in problems {
            let _ = context
                .peer
                .notify_logging_message(
                    LoggingMessageNotificationParam::new(
                        LoggingLevel::Warning,
                        Value::from(problem),
                    )
                    .with_logger("earshot"),
                )
                .await;
        }
        // Servers behind may change their tools between requests: look every few seconds, for as
        // long as the host and the connection live.
        let host: Weak<Host> = Arc::downgrade(&self.host);
        let shown = self.shown.clone();
        let peer = context.peer.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(WATCH_EVERY).await;
                let Some(host) = host.upgrade() else { break };
                if peer.is_transport_closed() {
                    break;
                }
                if !host.refresh_changed_tools().await.is_empty() {
                    EarshotServer::announce_changes(&host, &shown, &peer).await;
                }
            }
        });
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.current_tools().await))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts = self
            .host
            .slash_commands()
            .into_iter()
            .map(mcp_prompt)
            .collect();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let arguments = match request
            .arguments
            .as_ref()
            .and_then(|arguments| arguments.get(ARGUMENTS))
        {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(arguments)) => arguments.clone(),
            Some(_) => {
                return Err(ErrorData::invalid_params(
                    format!("the prompt argument \"{ARGUMENTS}\" is a string"),
                    None,
                ));
            }
        };
        let can_elicit = context
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.elicitation.is_some());
        let prompter = ElicitPrompter {
            peer: context.peer.clone(),
            can_elicit,
            cancelled: context.ct.clone(),
        };
        let expanded = tokio::select! {
            expanded = self.host.expand_command(&request.name, &arguments, &prompter) => expanded,
            _ = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("the prompt was cancelled", None));
            }
        };
        let expansion = expanded.map_err(|error| expand_error(&error))?;
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, expansion.text)]).into())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let input = Value::Object(request.arguments.unwrap_or_default()).to_string();
        let can_elicit = context
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.elicitation.is_some());
        let prompter = ElicitPrompter {
            peer: context.peer.clone(),
            can_elicit,
            cancelled: context.ct.clone(),
        };
        // The servers behind ask this client for data (one client per `mcp serve` process).
        self.host.set_elicitor(std::sync::Arc::new(ForwardElicitor {
            peer: context.peer.clone(),
            can_elicit,
        }));
        let result = tokio::select! {
            result = self.host.call(&request.name, &input, &prompter) => result,
            // The client cancelled: the call stops here (rmcp discards any answer to it).
            _ = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("the call was cancelled", None));
            }
        };
        let answer = match result {
            Ok(output) => {
                if let Some(notice) = &output.notice {
                    tracing::warn!("{notice}");
                }
                mcp_result(output)
            }
            // A denial, an invalid input or a failure is a result the model reads, never a crash.
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error.to_string())]),
        };
        EarshotServer::announce_changes(&self.host, &self.shown, &context.peer).await;
        Ok(answer.into())
    }
}
