//! `earshot acp`: an ACP agent on stdin/stdout for an editor (Zed's `agent_servers`). Each
//! session's `cwd` is its project: that project's trust, rules and settings apply. stdout
//! carries only the protocol; logs go to stderr.

use std::sync::Arc;

use earshot_host::acp::{AcpAgent, AcpConfig, ConsoleDriver, serve_stdio};
use earshot_host::paths::user_config_dir;
use earshot_host::sandbox::ComponentCache;

use super::{CommandResult, Failure, exit};

/// Serves until the editor closes stdin, then ends every session's servers.
pub(crate) async fn run() -> CommandResult {
    let agent = AcpAgent::new(AcpConfig {
        user_config_dir: user_config_dir(),
        cache: ComponentCache::user(),
        driver: Arc::new(ConsoleDriver),
        end_servers_on_signals: true,
        hooks: super::hooks_enabled(),
    });
    serve_stdio(agent)
        .await
        .map_err(|error| Failure::new(error.to_string()))?;
    Ok(exit::OK)
}
