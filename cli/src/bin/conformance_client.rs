//! A small MCP client on the host library, for the official MCP conformance suite
//! (`@modelcontextprotocol/conformance client --command "exec earshot-conformance-client"`).
//!
//! The harness appends the server URL as the last argument and names the scenario in
//! `MCP_CONFORMANCE_SCENARIO`. The client configures that URL as the streamable HTTP server
//! `conformance` in a throwaway config dir (allowing its tools), loads a session exactly as
//! `earshot` does, and for `tools_call` calls `add_numbers` through the gate and both sandboxes;
//! for `elicitation-sep1034-client-defaults` it calls the scenario's tool and accepts the form
//! with its defaults.
//!
//! For the `auth/*` scenarios it logs in through the product's own path (`McpServers::login`:
//! discovery, registration or the configured client, PKCE, the browser in `EARSHOT_BROWSER`, the
//! loopback listener, the exchange, the token store), with step-up allowed, then calls the first
//! tool the server lists. `MCP_CONFORMANCE_CONTEXT` (pre-registration) becomes the entry's
//! `oauth.clientId` and `oauth.clientSecret`.

use std::process::ExitCode;
use std::sync::Arc;

use earshot_host::BoxFuture;
use earshot_host::gate::NonInteractivePrompter;
use earshot_host::host::HostBuilder;
use earshot_host::mcp::oauth::{BROWSER_VARIABLE, Browser};
use earshot_host::mcp::{ElicitationAnswer, ElicitationRequest, Elicitor, ServerState};
use earshot_host::settings::Settings;

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: earshot-conformance-client URL (the harness appends it)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&url, &scenario).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(url: &str, scenario: &str) -> Result<(), String> {
    let config = tempfile::tempdir().map_err(|error| error.to_string())?;
    let mut oauth = serde_json::json!({
        "clientMetadataUrl": "https://conformance-test.local/client-metadata.json"
    });
    if let Some(context) = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
    {
        for (from, to) in [("client_id", "clientId"), ("client_secret", "clientSecret")] {
            if let Some(value) = context.get(from) {
                oauth[to] = value.clone();
            }
        }
    }
    let settings = serde_json::json!({
        "mcpServers": { "conformance": { "type": "http", "url": url, "oauth": oauth } },
        "permissions": { "allow": ["Mcp(conformance__*)"] },
    });
    std::fs::write(config.path().join("settings.json"), settings.to_string())
        .map_err(|error| error.to_string())?;
    let host = HostBuilder::new(Settings::load(Some(config.path()), None))
        .elicitor(Arc::new(AcceptDefaults))
        .build()
        .await
        .map_err(|e| e.to_string())?;
    let servers = host.mcp().ok_or("the server is not configured")?;
    let browser = Browser::choose(std::env::var(BROWSER_VARIABLE).ok(), None);
    servers.allow_step_up(browser.clone());
    for status in servers.statuses() {
        if let ServerState::NeedsLogin(reason) = &status.state {
            eprintln!("{}: {reason}; logging in", status.name);
            let scopes = servers.login(&status.name, &browser).await?;
            eprintln!("logged in with scopes {scopes:?}");
        }
    }
    for status in servers.statuses() {
        match &status.state {
            ServerState::Connected { tools, took } => {
                eprintln!("connected: {tools} tool(s) in {took:?}")
            }
            other => return Err(format!("server \"{}\": {other:?}", status.name)),
        }
    }
    // Scenarios whose server checks what happens around one call of its tool.
    host.refresh_changed_tools().await;
    let first_tool = host
        .registry()
        .tools()
        .map(|tool| tool.id.namespaced())
        .find_map(|name| name.strip_prefix("conformance__").map(str::to_string));
    let scenario_tool = match scenario {
        "elicitation-sep1034-client-defaults" => {
            Some("test_client_elicitation_defaults".to_string())
        }
        "sse-retry" => Some("test_reconnection".to_string()),
        auth if auth.starts_with("auth/") => first_tool,
        _ => None,
    };
    if let Some(tool) = scenario_tool {
        let output = host
            .call(
                &format!("conformance__{tool}"),
                "{}",
                &NonInteractivePrompter,
            )
            .await
            .map_err(|error| error.to_string())?;
        eprintln!("{}", output.output);
    }
    if scenario == "tools_call" {
        let output = host
            .call(
                "conformance__add_numbers",
                r#"{"a": 2, "b": 3}"#,
                &NonInteractivePrompter,
            )
            .await
            .map_err(|error| error.to_string())?;
        println!("{}", output.output);
        if output.is_error {
            return Err("add_numbers reported an error".into());
        }
    }
    Ok(())
}

/// Accepts every form as it comes, with the server's defaults: a user pressing Enter on every
/// pre-filled field.
struct AcceptDefaults;

impl Elicitor for AcceptDefaults {
    fn elicit<'a>(&'a self, request: &'a ElicitationRequest) -> BoxFuture<'a, ElicitationAnswer> {
        Box::pin(std::future::ready(ElicitationAnswer::Accept(
            request.defaults(),
        )))
    }
}
