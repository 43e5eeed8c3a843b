//! The session's MCP resources: listing and reading them (for an agent's `@` mentions and the
//! CLI), and the two host tools a model gets when a server offers any.

use std::sync::Arc;

use serde_json::Value;

use super::{Host, McpServers, ModelTool};
use crate::gate::{Effect, NonInteractivePrompter, Outcome, Prompter, ToolRequest};
use crate::mcp::{
    LIST_RESOURCES_TOOL, McpResource, McpResourceContents, READ_RESOURCE_TOOL, RESOURCES_RULE_TOOL,
    contents_of, listing_for_model, resources_of,
};
use crate::names::{SourceKind, ToolId};
use crate::runner::{BoxFuture, CallError, ToolOutput};

impl Host {
    /// The resources and resource templates of the running MCP servers that offer them (of
    /// `server` alone when given). A server under a deny rule for `Mcp(server__resources)` is
    /// left out, as is one that fails to list; each with the reason in the second list.
    pub async fn mcp_resources(&self, server: Option<&str>) -> (Vec<McpResource>, Vec<CallError>) {
        let Some(servers) = &self.mcp else {
            return (Vec::new(), Vec::new());
        };
        let names = match server {
            Some(server) => vec![server.to_string()],
            None => servers.servers_with_resources(),
        };
        let (mut found, mut failures) = (Vec::new(), Vec::new());
        for name in names {
            if let Err(denied) = self.refuse_if_denied(&name).await {
                failures.push(denied);
                continue;
            }
            match servers.list_resources(&name).await {
                Ok((resources, templates)) => {
                    found.extend(resources_of(&name, &resources, &templates));
                }
                Err(error) => failures.push(error),
            }
        }
        (found, failures)
    }

    /// Reads resource `uri` of `server`, gated as `Mcp(server__resources)` (asking `prompter`
    /// unless a rule decides), its contents normalised in the mcp-output sandbox.
    ///
    /// # Errors
    /// [`CallError::Denied`], [`CallError::UnknownTool`] for a server without resources, or a
    /// typed [`CallError::Failed`] from the server or the sandbox.
    pub async fn read_mcp_resource(
        &self,
        server: &str,
        uri: &str,
        prompter: &dyn Prompter,
    ) -> Result<McpResourceContents, CallError> {
        self.read_mcp_resource_raised(server, uri, prompter, false)
            .await
    }

    /// [`Host::read_mcp_resource`]; `raised` when a hook asked for approval (an allow rule is
    /// then asked too, and a deny rule still denies without asking).
    async fn read_mcp_resource_raised(
        &self,
        server: &str,
        uri: &str,
        prompter: &dyn Prompter,
        raised: bool,
    ) -> Result<McpResourceContents, CallError> {
        let unknown = || CallError::UnknownTool(format!("{server}__{RESOURCES_RULE_TOOL}"));
        let (Some(running), Some(parser)) = (&self.mcp, &self.parser) else {
            return Err(unknown());
        };
        let offers = |servers: &McpServers| {
            servers
                .servers_with_resources()
                .iter()
                .any(|name| name == server)
        };
        // A configured server this session did not start (a hook moved the read to it): the
        // gate decides on it first, and only an allowed read starts it.
        let late = !offers(running) && self.startable_late(server);
        if !offers(running) && !late {
            return Err(unknown());
        }
        let id = resources_id(server)?;
        let title = format!("read resource {uri}");
        let request = ToolRequest {
            tool: &id,
            read_only: true,
            title: Some(&title),
            detail: Some(uri),
        };
        let text = (title.clone(), uri.to_string());
        let decided = self
            .gate
            .authorize_raised(&request, || std::future::ready(text), prompter, raised)
            .await;
        if let Outcome::Denied(reason) = decided {
            return Err(CallError::Denied(reason));
        }
        let servers = if late {
            self.started_for_resources(server).await?
        } else {
            running.clone()
        };
        let outcome = servers.read_resource(server, uri).await?;
        contents_of(server, uri, &outcome.result, parser)
    }

    /// `server`, started now (see [`Host::start_late`]), when it connected and offers
    /// resources; why not otherwise (not connected: the reason, as a call of one of its tools
    /// would say; connected without resources: no such tool).
    #[cfg(feature = "mcp")]
    async fn started_for_resources(&self, server: &str) -> Result<Arc<McpServers>, CallError> {
        let servers = self.start_late(server).await;
        if servers
            .servers_with_resources()
            .iter()
            .any(|name| name == server)
        {
            return Ok(servers);
        }
        let down = servers
            .statuses()
            .into_iter()
            .find_map(|status| match status.state {
                crate::mcp::ServerState::Connected { .. } => None,
                crate::mcp::ServerState::NeedsLogin(reason)
                | crate::mcp::ServerState::AwaitingTrust(reason)
                | crate::mcp::ServerState::Failed(reason)
                | crate::mcp::ServerState::Died(reason) => Some(reason),
                _ => None,
            });
        Err(match down {
            Some(reason) => CallError::failed(
                format!(
                    "server \"{server}\" is not connected, so its resources cannot be read: {reason}"
                ),
                crate::FailureCause::ServerUnavailable {
                    server: server.to_string(),
                },
            ),
            None => CallError::UnknownTool(format!("{server}__{RESOURCES_RULE_TOOL}")),
        })
    }

    /// Without the MCP client no server runs, so there is nothing to start.
    #[cfg(not(feature = "mcp"))]
    async fn started_for_resources(&self, server: &str) -> Result<Arc<McpServers>, CallError> {
        Err(CallError::UnknownTool(format!(
            "{server}__{RESOURCES_RULE_TOOL}"
        )))
    }

    /// The two resource tools, when a running server offers resources.
    pub(super) fn resource_tools(&self) -> Vec<ModelTool> {
        let offered = self
            .mcp
            .as_ref()
            .is_some_and(|servers| !servers.servers_with_resources().is_empty());
        if !offered {
            return Vec::new();
        }
        vec![
            ModelTool {
                name: LIST_RESOURCES_TOOL.into(),
                identity: None,
                description: "Lists the resources (files, records, documents) that MCP servers offer, with their URIs and any URI templates.".into(),
                input_schema: crate::mcp::resources_list_schema(),
                read_only: true,
                kind: None,
                output_schema: None,
            },
            ModelTool {
                name: READ_RESOURCE_TOOL.into(),
                identity: None,
                description: "Reads one MCP resource by its server and URI (from list_mcp_resources; fill in a template's {placeholders}).".into(),
                input_schema: crate::mcp::resources_read_schema(),
                read_only: true,
                kind: None,
                output_schema: None,
            },
        ]
    }

    /// The call of `list_mcp_resources` or `read_mcp_resource` when `name` is one of them and a
    /// server offers resources; `None` otherwise. Boxed, so that its state (a resource read) is
    /// not part of every other call's future.
    pub(super) fn resource_tool_call<'a>(
        &'a self,
        name: &'a str,
        input_json: &'a str,
        prompter: &'a dyn Prompter,
        raised: bool,
    ) -> Option<BoxFuture<'a, Result<ToolOutput, CallError>>> {
        if name != LIST_RESOURCES_TOOL && name != READ_RESOURCE_TOOL {
            return None;
        }
        if self.resource_tools().is_empty() {
            return None;
        }
        Some(Box::pin(
            self.run_resource_tool(name, input_json, prompter, raised),
        ))
    }

    /// Runs `list_mcp_resources` (when `name` is it) or `read_mcp_resource`.
    async fn run_resource_tool(
        &self,
        name: &str,
        input_json: &str,
        prompter: &dyn Prompter,
        raised: bool,
    ) -> Result<ToolOutput, CallError> {
        let invalid = |issue: &str| CallError::InvalidInput {
            tool: name.to_string(),
            issues: vec![issue.to_string()],
        };
        let input: Value = match serde_json::from_str(input_json) {
            Ok(Value::Object(input)) => Value::Object(input),
            Ok(_) => return Err(invalid("it must be a JSON object")),
            Err(error) => return Err(invalid(&format!("it is not JSON: {error}"))),
        };
        let text = |key: &str| input.get(key).and_then(Value::as_str);
        let output = |output: String| ToolOutput {
            output,
            is_error: false,
            title: None,
            notice: None,
            ..ToolOutput::default()
        };
        if name == LIST_RESOURCES_TOOL {
            if input
                .get("server")
                .is_some_and(|server| !server.is_string())
            {
                return Err(invalid("\"server\" must be a string"));
            }
            let (found, failures) = self.mcp_resources(text("server")).await;
            return Ok(output(listing_for_model(&found, &failures)));
        }
        let (Some(server), Some(uri)) = (text("server"), text("uri")) else {
            return Err(invalid("\"server\" and \"uri\" must be strings"));
        };
        self.read_mcp_resource_raised(server, uri, prompter, raised)
            .await
            .map(|contents| output(contents.text))
    }

    /// `Err(Denied)` when a deny rule covers `server`'s resources.
    async fn refuse_if_denied(&self, server: &str) -> Result<(), CallError> {
        self.refuse_if_denied_as(&resources_id(server)?).await
    }

    /// `Err(Denied)` when a deny rule covers `id` (nothing is asked: a deny rule or nothing).
    pub(super) async fn refuse_if_denied_as(&self, id: &ToolId) -> Result<(), CallError> {
        let request = ToolRequest {
            tool: id,
            read_only: true,
            title: None,
            detail: None,
        };
        if self.gate.decide(&request).effect == Effect::Deny
            && let Outcome::Denied(reason) =
                self.gate.authorize(&request, &NonInteractivePrompter).await
        {
            return Err(CallError::Denied(reason));
        }
        Ok(())
    }
}

/// `Mcp(server__resources)`, the rule reading `server`'s resources is gated under.
fn resources_id(server: &str) -> Result<ToolId, CallError> {
    ToolId::new(SourceKind::Mcp, server, RESOURCES_RULE_TOOL)
        .map_err(|_| CallError::UnknownTool(format!("{server}__{RESOURCES_RULE_TOOL}")))
}
