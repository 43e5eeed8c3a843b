//! OAuth for streamable HTTP servers, on rmcp's `auth` (discovery, registration, PKCE, refresh,
//! step-up), never before the server is admitted (trust comes first).
//!
//! * `settings` — the entry's `oauth` block and whether OAuth applies at all (earshot-core).
//! * `store` — the token store: one 0600 file per (scope, server, canonical URL), written
//!   atomically, with a cross-process lock around refresh.
//! * `session` — the authorized HTTP client a session connects with.
//! * `login` — `earshot mcp login`: discovery from the challenge, the client id, PKCE, the
//!   browser, the callback, the code exchange.
//! * `callback` — the one-shot loopback listener the browser is redirected to.
//! * `browser` — how the authorization URL is opened (`EARSHOT_BROWSER`, `mcp.oauth.browser`,
//!   `none` to print it and accept the redirected URL pasted on stdin).

mod browser;
mod callback;
mod login;
mod session;
mod store;

use earshot_core::mcp::oauth as settings;

pub use browser::{BROWSER_VARIABLE, Browser};
pub use callback::CALLBACK_TIMEOUT;
pub use login::{LoginError, LoginRequest, login};
pub use session::{Challenge, OAuthTarget, authorized_client, definition_digest};
pub use settings::{OAuthBlock, OAuthSettings, oauth_settings_of, parse_oauth_block};
pub use store::{LOCK_WAIT, Registration, TokenKey, TokenRecord, TokenStore, canonical_url};
