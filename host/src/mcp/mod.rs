//! MCP servers: their configuration as written in `mcpServers` (the shape Claude Code uses).

mod config;
mod expand;

pub use config::{ServerDefinition, ServerEntry, Transport, read_servers};
pub use expand::{ExpandError, expand};
