//! An entry's `oauth` block and whether OAuth applies to it at all. Logging in, the token store
//! and refresh are the MCP client's (earshot-mcp's `oauth`).

mod settings;

pub use settings::{OAuthBlock, OAuthSettings, oauth_settings_of, parse_oauth_block};
