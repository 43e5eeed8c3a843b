//! MCP servers: their configuration as written in `mcpServers` (the shape Claude Code uses), the
//! connections to them (rmcp over a child's stdio or streamable HTTP), and `tool_search`.
//!
//! * [`config`](read_servers) — entries from every settings layer, `${VAR}` expanded.
//! * `admission` — which servers may start (trust), where (the user's own start outside the
//!   project), and what a trust record binds to (a keyed digest covering named project files).
//! * `servers` — one session's servers: concurrent start-up, serialised calls, restarts.
//! * `connection` — one rmcp session: initialize, tools/list, tools/call, close.
//! * `elicitation` / `terminal_elicitor` — a server asking the user for data: the form, the
//!   `Elicitor` that answers, and the terminal one.
//! * `stdio` / `process_group` / `child_env` / `stderr_tail` — the child process and its pipes.
//! * `spawner` — the one long-lived thread that forks every stdio server.
//! * `tool_runner` — an MCP tool behind the dispatch seam; its result normalised in the
//!   mcp-output sandbox.
//! * `prompts` — prompts as slash commands, their messages normalised in the mcp-output sandbox.
//! * `resources` — resources for the user and the model (`list_mcp_resources`, `read_mcp_resource`).
//! * `notifications` — servers' progress (to a callback) and log messages (to tracing), rate-limited.
//! * `http` — the streamable HTTP transport.
//! * `oauth` — logins, tokens and refresh for HTTP servers that require OAuth.
//! * `search` — BM25 ranking for `tool_search`.
//! * `start_hints` — why a stdio server will not start where it is told to, and what to write.

mod admission;
mod child_env;
mod client_handler;
mod config;
mod connection;
mod digest;
mod elicitation;
mod expand;
mod http;
mod in_flight;
mod notifications;
pub mod oauth;
mod process_group;
mod prompts;
mod resources;
mod search;
mod servers;
mod spawner;
mod start_hints;
mod stderr_tail;
mod stdio;
mod terminal_elicitor;
mod tool_runner;

pub use admission::{
    digest_for_trust, digest_for_written, effective_entry, server_admission, start_dir,
    user_start_dir,
};
pub use child_env::{INHERITED_VARIABLES, is_inherited, minimal_environment};
pub use config::{
    PROJECT_DIR_VARIABLE, ServerDefinition, ServerEntry, SessionServer, Transport, parse_entry,
    read_servers,
};
pub use connection::{CallFailure, ConnectError, seconds};
pub use digest::{
    DigestError, MAX_HASHED_BYTES, MAX_HASHED_FILES, SKIPPED_FOLDERS, ServerDigest,
    add_named_project_files, server_digest,
};
pub use elicitation::{
    Choice, DeclineElicitations, ElicitationAnswer, ElicitationField, ElicitationRequest, Elicitor,
    FieldKind,
};
pub use expand::{ExpandError, expand};
pub use in_flight::cancel_in_flight;
pub use notifications::{CallProgress, CallProgressCallback, MAX_LOG_MESSAGES, PROGRESS_INTERVAL};
pub use process_group::{SHUTDOWN_GRACE, describe_exit, end_all_groups, ending_on_signal};
pub use prompts::{McpPrompt, McpPromptArgument, McpPromptMessage};
pub use prompts::{messages_of, missing_arguments, prompts_of};
pub use resources::{
    LIST_RESOURCES_TOOL, McpResource, McpResourceContents, READ_RESOURCE_TOOL, RESOURCES_RULE_TOOL,
};
pub use resources::{
    contents_of, listing_for_model, resources_list_schema, resources_of, resources_read_schema,
};
pub use search::{
    LISTED_MCP_TOOLS_LIMIT, MAX_SEARCH_RESULTS, SearchDocument, SearchIndex, TOOL_SEARCH_NAME,
    search, words,
};
pub use servers::{
    CallOutcome, MAX_STEP_UPS_PER_SERVER, McpOptions, McpServers, ONE_SHOT_EXIT_GRACE, ServerState,
    ServerStatus, StartProgress, transport_name,
};
pub use start_hints::{NPX_HINT, cwd_hint, npx_without_yes, project_only_paths};
pub use stderr_tail::{STDERR_TAIL_BYTES, StderrTail};
pub use stdio::MAX_MESSAGE_BYTES;
pub use terminal_elicitor::TerminalElicitor;
pub use tool_runner::McpRunner;

/// A name from a server, made safe to show: control characters stripped, at most 80 characters.
pub fn shown_name(name: &str) -> String {
    stderr_tail::shorten(&earshot_terminal_text::strip_controls(name), 80)
}
