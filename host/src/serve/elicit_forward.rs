//! A server behind `earshot mcp serve` asking the user for data: the form goes on to the MCP
//! client in front (an editor, another agent), introduced as that server speaking, and the
//! client's answer comes back. A client that declared no elicitation declines. The answer goes
//! only to the server that asked: it is data, never a permission answer (the permission forms
//! are `ElicitPrompter`'s, and nothing forwarded here reaches the gate).

use rmcp::RoleServer;
use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitationAction, ElicitationSchema,
    ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions};
use serde_json::Value;

use crate::mcp::{ElicitationAnswer, ElicitationRequest, Elicitor};
use crate::runner::BoxFuture;

/// Passes the servers' elicitations on to one MCP client.
pub(crate) struct ForwardElicitor {
    pub peer: Peer<RoleServer>,
    /// The client declared form elicitation.
    pub can_elicit: bool,
}

impl Elicitor for ForwardElicitor {
    fn elicit<'a>(&'a self, request: &'a ElicitationRequest) -> BoxFuture<'a, ElicitationAnswer> {
        Box::pin(async move {
            if !self.can_elicit {
                return ElicitationAnswer::Decline;
            }
            let Some(schema) = request
                .schema
                .as_object()
                .and_then(|object| ElicitationSchema::from_json_schema(object.clone()).ok())
            else {
                return ElicitationAnswer::Decline;
            };
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: format!(
                    "MCP server \"{}\" asks (the server is asking, not earshot):\n{}",
                    request.server, request.message
                ),
                requested_schema: schema,
            };
            let sent = self
                .peer
                .send_request_with_option(
                    ServerRequest::ElicitRequest(ElicitRequest::new(params)),
                    PeerRequestOptions::no_options(),
                )
                .await;
            let Ok(handle) = sent else {
                return ElicitationAnswer::Cancel;
            };
            match handle.await_response().await {
                Ok(ClientResult::ElicitResult(result)) => match result.action {
                    ElicitationAction::Accept => match result.content {
                        Some(Value::Object(content)) => ElicitationAnswer::Accept(content),
                        _ => ElicitationAnswer::Decline,
                    },
                    ElicitationAction::Decline => ElicitationAnswer::Decline,
                    _ => ElicitationAnswer::Cancel,
                },
                _ => ElicitationAnswer::Cancel,
            }
        })
    }
}
