//! MCP servers, the part that needs no MCP protocol: their configuration as written in
//! `mcpServers` (the shape Claude Code uses), which may start and where, what their trust binds
//! to, what a session's servers report, elicitation forms, prompts and resources as the host
//! shows them, and `tool_search`. The client itself (rmcp over a child's stdio or streamable
//! HTTP, OAuth logins) is the earshot-mcp crate (host/mcp/), built on these.
//!
//! * [`config`](read_servers) — entries from every settings layer, `${VAR}` expanded.
//! * `admission` — which servers may start (trust), where (the user's own start outside the
//!   project), and what a trust record binds to (a keyed digest covering named project files).
//! * `status` — a server's state, a call's outcome, start-up progress, the session's timeouts.
//! * `elicitation` / `terminal_elicitor` — a server asking the user for data: the form, the
//!   `Elicitor` that answers, and the terminal one.
//! * `child_env` / `stderr_tail` / `exit` — a child's environment, the end of its stderr, how it
//!   ended.
//! * `prompts` — prompts as slash commands, their messages normalised in the mcp-output sandbox.
//! * `resources` — resources for the user and the model (`list_mcp_resources`, `read_mcp_resource`).
//! * `notifications` — servers' progress (to a callback) and log messages (to tracing), rate-limited.
//! * `oauth` — an entry's `oauth` block (the login itself is earshot-mcp's).
//! * `search` — BM25 ranking for `tool_search`.
//! * `start_hints` — why a stdio server will not start where it is told to, and what to write.

pub mod admission;
pub mod child_env;
pub mod config;
pub mod digest;
pub mod elicitation;
pub mod exit;
mod expand;
pub mod notifications;
pub mod oauth;
pub mod prompts;
pub mod resources;
mod search;
pub mod start_hints;
pub mod status;
pub mod stderr_tail;
mod terminal_elicitor;

pub use admission::{
    digest_for_trust, digest_for_written, effective_entry, effective_launch, server_admission,
    start_dir, user_start_dir,
};
pub use child_env::{INHERITED_VARIABLES, is_inherited, minimal_environment};
pub use config::{
    PROJECT_DIR_VARIABLE, ServerDefinition, ServerEntry, SessionServer, Transport, parse_entry,
    read_servers,
};
pub use digest::{
    DigestError, MAX_HASHED_BYTES, MAX_HASHED_FILES, SKIPPED_FOLDERS, ServerDigest,
    add_named_project_files, server_digest,
};
pub use elicitation::{
    Choice, DeclineElicitations, ElicitationAnswer, ElicitationField, ElicitationRequest, Elicitor,
    FieldKind,
};
pub use exit::{SHUTDOWN_GRACE, describe_exit};
pub use expand::{ExpandError, expand};
pub use notifications::{CallProgress, CallProgressCallback, MAX_LOG_MESSAGES, PROGRESS_INTERVAL};
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
pub use start_hints::{NPX_HINT, cwd_hint, npx_without_yes, project_only_paths};
pub use status::{
    CallOutcome, MAX_STEP_UPS_PER_SERVER, McpOptions, ONE_SHOT_EXIT_GRACE, ServerState,
    ServerStatus, StartProgress, UNRESPONSIVE_PING_TIMEOUT, seconds, transport_name,
};
pub use stderr_tail::{STDERR_TAIL_BYTES, StderrTail};
pub use terminal_elicitor::TerminalElicitor;

/// A name from a server, made safe to show: control characters stripped, at most 80 characters.
pub fn shown_name(name: &str) -> String {
    stderr_tail::shorten(&earshot_terminal_text::strip_controls(name), 80)
}
