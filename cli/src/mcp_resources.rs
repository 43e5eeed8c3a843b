//! `earshot mcp resources [SERVER]` (every resource and template the running servers offer) and
//! `earshot mcp read SERVER URI` (one resource's contents, normalised). Reading here is the
//! user's own request, so it is not asked again; a deny rule still refuses it.

use serde_json::json;

use earshot_host::BoxFuture;
use earshot_host::CallError;
use earshot_host::gate::{PermissionPrompt, PromptAnswer, Prompter, strip_for_terminal};
use earshot_host::mcp::shown_name;
use earshot_host::settings::Settings;

use super::tools::load_host;
use super::{CommandResult, Failure, exit, output};

/// The user typed the command: an ask is answered yes for this one read. A deny rule is decided
/// before any ask, so this never turns a deny into an allow.
struct UserAsked;

impl Prompter for UserAsked {
    fn ask<'a>(&'a self, _prompt: &'a PermissionPrompt) -> BoxFuture<'a, PromptAnswer> {
        Box::pin(std::future::ready(PromptAnswer::AllowOnce))
    }

    fn shows_prompt_text(&self) -> bool {
        false
    }
}

/// Lists the resources of every running server that offers them, or of `server`.
pub(crate) async fn list(settings: Settings, server: Option<&str>, as_json: bool) -> CommandResult {
    let start = super::mcp_servers::start_for(&settings, server)?;
    let host = load_host(settings, start).await?;
    let (resources, failures) = host.mcp_resources(server).await;
    host.shutdown().await;
    for failure in &failures {
        output::warning_line(&failure.to_string());
    }
    if as_json {
        output::json(&json!(
            resources
                .iter()
                .map(|resource| json!({
                    "server": resource.server,
                    "uri": resource.uri,
                    "name": resource.name,
                    "title": resource.title,
                    "description": resource.description,
                    "mimeType": resource.mime_type,
                    "template": resource.template,
                }))
                .collect::<Vec<_>>()
        ));
    } else if resources.is_empty() {
        output::say("no resources: no running server offers any");
    } else {
        let rows: Vec<Vec<String>> = resources
            .iter()
            .map(|resource| {
                vec![
                    shown_name(&resource.server),
                    shown_name(&resource.uri),
                    shown_name(&resource.name),
                    if resource.template { "template" } else { "" }.to_string(),
                    shown_name(resource.mime_type.as_deref().unwrap_or("")),
                ]
            })
            .collect();
        output::table(&["SERVER", "URI", "NAME", "KIND", "TYPE"], &rows);
    }
    if server.is_some() && !failures.is_empty() {
        return Err(Failure::new(format!(
            "could not list the resources of {}",
            server.unwrap_or_default()
        )));
    }
    Ok(exit::OK)
}

/// Prints resource `uri` of `server`.
pub(crate) async fn read(settings: Settings, server: &str, uri: &str) -> CommandResult {
    let start = super::mcp_servers::start_for(&settings, Some(server))?;
    let host = load_host(settings, start).await?;
    let answer = host.read_mcp_resource(server, uri, &UserAsked).await;
    host.shutdown().await;
    match answer {
        Ok(contents) => {
            output::out(&strip_for_terminal(&contents.text));
            Ok(exit::OK)
        }
        Err(error @ CallError::Denied(_)) => {
            Err(Failure::new(error.to_string()).code(exit::DENIED))
        }
        Err(CallError::UnknownTool(_)) => Err(Failure::new(format!(
            "no MCP server named \"{server}\" offers resources; `earshot mcp resources` lists them"
        ))),
        Err(error) => Err(Failure::new(error.to_string())),
    }
}
