//! `earshot mcp login NAME` and `earshot mcp logout NAME`: OAuth for an HTTP server, only once
//! the server is admitted (a project server that is not trusted gets no request at all).

use earshot_host::mcp::oauth::{
    BROWSER_VARIABLE, Browser, CALLBACK_TIMEOUT, LoginRequest, OAuthTarget, login,
    oauth_settings_of,
};
use earshot_host::mcp::{ServerEntry, ServerState, Transport, effective_entry};
use earshot_host::settings::{Layer, Settings};

use super::{CommandResult, Context, Failure, exit, output};

/// The browser: `EARSHOT_BROWSER`, else the user's own `mcp.oauth.browser` (a repository's
/// settings never choose a program to run), else the platform's opener.
pub(crate) fn browser(settings: &Settings) -> Browser {
    let setting = settings
        .file(Layer::User)
        .and_then(|file| file.get("mcp"))
        .and_then(|mcp| mcp.get("oauth"))
        .and_then(|oauth| oauth.get("browser"))
        .and_then(serde_json::Value::as_str);
    Browser::choose(Context::env(BROWSER_VARIABLE), setting)
}

fn entry_named(context: &Context, name: &str) -> Result<ServerEntry, Failure> {
    super::mcp_servers::find(super::mcp_servers::servers(context), name)
}

/// The server's OAuth target, or why it has none.
fn target_of(
    context: &Context,
    entry: &ServerEntry,
) -> Result<
    (
        OAuthTarget,
        String,
        std::collections::BTreeMap<String, String>,
    ),
    Failure,
> {
    let name = &entry.name;
    let definition = entry.definition.as_ref().map_err(|reason| {
        Failure::new(format!("server \"{name}\" cannot start: {reason}"))
            .hint("fix its entry in the settings file first")
    })?;
    let Transport::Http { url, headers, .. } = &definition.transport else {
        return Err(Failure::new(format!(
            "server \"{name}\" runs as a command (stdio); only HTTP servers log in"
        )));
    };
    if oauth_settings_of(&definition.transport).is_none() {
        return Err(Failure::new(format!(
            "server \"{name}\" does not use OAuth: its entry sends its own Authorization header or sets \"oauth\": false"
        )));
    }
    let target = OAuthTarget::of(&context.settings, name, entry.layer, &definition.transport)
        .ok_or_else(|| {
            Failure::new("there is no config dir for tokens (set EARSHOT_CONFIG_DIR or HOME)")
        })?;
    Ok((target, url.clone(), headers.clone()))
}

pub(crate) async fn login_command(context: &Context, name: &str) -> CommandResult {
    let (entry, admitted) = effective_entry(&context.settings, entry_named(context, name)?);
    // Trust first: no discovery, registration, browser or token for a server not admitted.
    if let Err(why) = admitted {
        return Err(Failure::new(format!(
            "server \"{name}\" is not started: {why}"
        )));
    }
    let (target, url, headers) = target_of(context, &entry)?;
    let browser = browser(&context.settings);
    let request = LoginRequest {
        server: name,
        url: &url,
        headers: &headers,
        settings: &target.settings,
        store: &target.store,
        key: &target.key,
        challenge: None,
        browser: &browser,
        timeout: CALLBACK_TIMEOUT,
    };
    let scopes = login(request)
        .await
        .map_err(|error| Failure::new(format!("could not log in to \"{name}\": {error}")))?;
    let granted = if scopes.is_empty() {
        String::new()
    } else {
        format!(" (scopes: {})", scopes.join(" "))
    };
    output::out(&format!(
        "logged in to \"{name}\"{granted}; tokens are in {}",
        target.store.path_of(&target.key).display()
    ));
    // Prove it: connect once with the new token.
    let servers = super::mcp_servers::connect(context, Some(name)).await;
    let state = servers
        .statuses()
        .into_iter()
        .next()
        .map(|status| status.state);
    servers.shut_down().await;
    match state {
        Some(ServerState::Connected { tools, .. }) => {
            output::out(&format!("server \"{name}\" connected: {tools} tool(s)"));
            Ok(exit::OK)
        }
        Some(ServerState::NeedsLogin(_)) => Err(Failure::new(format!(
            "server \"{name}\" still refuses the new token"
        ))),
        Some(ServerState::Failed(reason) | ServerState::Died(reason)) => Err(Failure::new(
            format!("logged in, but server \"{name}\" failed: {reason}"),
        )),
        _ => Ok(exit::OK),
    }
}

pub(crate) async fn logout_command(context: &Context, name: &str) -> CommandResult {
    let entry = entry_named(context, name)?;
    let (target, _, _) = target_of(context, &entry)?;
    // Under the lock: a refresh in flight elsewhere finishes first and never writes back.
    let removed = target
        .store
        .locked(&target.key, |store, key| store.remove(key))
        .await
        .map_err(Failure::new)?;
    if removed {
        output::out(&format!(
            "logged out of \"{name}\": its stored tokens are deleted"
        ));
        Ok(exit::OK)
    } else {
        Err(Failure::new(format!(
            "server \"{name}\" has no stored login"
        )))
    }
}
