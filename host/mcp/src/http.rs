//! The streamable HTTP transport's parts: rmcp's client over reqwest (rustls with the ring
//! provider), with the entry's headers and bounded response sizes. Redirects are never followed:
//! streamable HTTP needs none, and reqwest would carry every configured header but
//! `Authorization` (an `X-Api-Key: ${KEY}`) to wherever the server redirects.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

/// The largest JSON body or SSE event accepted from an HTTP server.
pub const MAX_HTTP_MESSAGE_BYTES: usize = 16 << 20;

/// How long connecting to an HTTP server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a request that met a redirect fails with (reqwest prefixes `error following redirect`).
const REDIRECT_REFUSED: &str = "MCP requests do not follow redirects";

/// The reqwest client of one HTTP server's session and of the login's probe, the only clients
/// that send an entry's headers (rustls with the ring provider). A redirect fails the request
/// before anything is sent to its target. (OAuth discovery and the token exchange go through
/// rmcp's own client, which sends none of the entry's headers.)
///
/// # Errors
/// One line when the client cannot be built.
pub fn http_client() -> Result<reqwest::Client, String> {
    crate::tls::install_crypto_provider();
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            attempt.error(REDIRECT_REFUSED)
        }))
        .build()
        .map_err(|error| format!("could not build an HTTP client: {error}"))
}

/// The transport settings for `url`: its headers and the size caps.
///
/// # Errors
/// One line naming a header that is not valid HTTP.
pub fn http_config(
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<StreamableHttpClientTransportConfig, String> {
    let mut custom_headers = HashMap::new();
    for (name, value) in headers {
        let header = HeaderName::try_from(name.as_str())
            .map_err(|_| format!("header name \"{name}\" is not valid HTTP"))?;
        let value = HeaderValue::try_from(value.as_str())
            .map_err(|_| format!("the value of header \"{name}\" is not valid HTTP"))?;
        custom_headers.insert(header, value);
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    config.custom_headers = custom_headers;
    config.max_json_response_size = MAX_HTTP_MESSAGE_BYTES;
    config.max_sse_event_size = MAX_HTTP_MESSAGE_BYTES;
    Ok(config)
}
