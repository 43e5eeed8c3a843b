//! MCP servers in a build without the MCP client (the `mcp` feature off): each server the
//! settings (or the embedder's session) would start is reported, by name, as one that this build
//! cannot start, so that a user sees why its tools are missing instead of an empty list.
//!
//! [`McpServers`] stands in for the client's type so that the host's MCP paths compile: it has no
//! values, so a session never holds one and every one of those paths is provably never taken.

use std::sync::Arc;

use serde_json::Value;

use crate::mcp::{
    CallOutcome, CallProgressCallback, Elicitor, ServerStatus, SessionServer, read_servers,
};
use crate::names::SourceKind;
use crate::registry::ToolRegistry;
use crate::runner::CallError;
use crate::sandbox::{McpOutputParser, SchemaValidator};
use crate::settings::Settings;

/// What a user sees for each MCP server in a build without the MCP client.
pub const NO_MCP_CLIENT: &str = "not started: this build of earshot-host has no MCP client (built without its `mcp` feature); rebuild with the default features to use MCP servers";

/// The MCP servers of a session in a build without the MCP client: a type with no values.
#[derive(Debug)]
pub enum McpServers {}

impl McpServers {
    /// Never called: there is no value to call it on.
    pub fn set_elicitor(&self, _elicitor: Arc<dyn Elicitor>) {
        match *self {}
    }

    /// Never called: there is no value to call it on.
    pub fn set_call_progress(&self, _callback: CallProgressCallback) {
        match *self {}
    }

    /// Never called: there is no value to call it on.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        match *self {}
    }

    /// Never called: there is no value to call it on.
    pub async fn refresh_changed(&self) -> Vec<String> {
        match *self {}
    }

    /// Never called: there is no value to call it on.
    pub async fn list_prompts(&self, _server: &str) -> Result<Vec<Value>, CallError> {
        match *self {}
    }

    /// Never called: there is no value to call it on.
    pub async fn get_prompt(
        &self,
        _server: &str,
        _name: &str,
        _arguments: serde_json::Map<String, Value>,
    ) -> Result<CallOutcome, CallError> {
        match *self {}
    }

    /// Never called: there is no value to call it on.
    pub fn servers_with_resources(&self) -> Vec<String> {
        match *self {}
    }

    /// Never called: there is no value to call it on.
    pub async fn list_resources(
        &self,
        _server: &str,
    ) -> Result<(Vec<Value>, Vec<Value>), CallError> {
        match *self {}
    }

    /// Never called: there is no value to call it on.
    pub async fn read_resource(&self, _server: &str, _uri: &str) -> Result<CallOutcome, CallError> {
        match *self {}
    }

    /// Never called: there is no value to call it on.
    pub async fn shut_down(&self) {
        match *self {}
    }
}

/// Never called: there are no servers to reload.
pub fn reload_server_tools(
    servers: &Arc<McpServers>,
    _server: &str,
    _validator: &SchemaValidator,
    _parser: &Arc<McpOutputParser>,
    _registry: &mut ToolRegistry,
) {
    match **servers {}
}

/// Reports every server the session would start (those `selected` of the settings' servers and
/// the embedder's session servers) as not startable in this build.
pub fn report_servers(
    settings: &Settings,
    env: &dyn Fn(&str) -> Option<String>,
    selected: &dyn Fn(&str) -> bool,
    session_servers: &[SessionServer],
    registry: &mut ToolRegistry,
) {
    let mut reported = std::collections::HashSet::new();
    let names = read_servers(settings, env)
        .into_iter()
        .map(|entry| entry.name)
        .chain(session_servers.iter().map(|server| server.name.clone()));
    for name in names {
        if selected(&name) && reported.insert(name.clone()) {
            registry.report(SourceKind::Mcp, &name, NO_MCP_CLIENT.to_string());
        }
    }
}
