//! `fetch` for extensions: requests run as tasks on the session's tokio runtime (the embedder's:
//! each JS thread enters it), so a slow server never blocks an extension's JS thread (its timers
//! and other work go on) nor any other extension. The JS side awaits a channel; the job loop
//! sleeps until the answer arrives. Only an extension started outside any runtime falls back to
//! a small background runtime of the library's own.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::OnceLock;

use boa_engine::{Context, Finalize, JsData, JsError, JsObject, JsResult, JsString, Trace};
use boa_runtime::fetch::Fetcher;
use boa_runtime::fetch::request::JsRequest;
use boa_runtime::fetch::response::JsResponse;

/// The largest response body an extension receives (a bigger one is an error, not a crash).
pub const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;

/// The fallback runtime for extensions started outside any tokio runtime (two workers, started
/// on first use).
fn fallback_runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        crate::tls::install_crypto_provider();
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("earshot-fetch")
            .enable_all()
            .build()
            .expect("the fetch runtime starts")
    })
}

/// The HTTP client every extension shares (TLS roots of the platform). Idle connections are not
/// kept: a connection belongs to the runtime that opened it, and sessions on different runtimes
/// share this client.
fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        crate::tls::install_crypto_provider();
        reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .user_agent(concat!("earshot/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(std::time::Duration::from_secs(30))
            .timeout(std::time::Duration::from_secs(300))
            .build()
            .expect("the HTTP client builds")
    })
}

/// What a finished request hands back to the JS thread.
struct Fetched {
    url: String,
    status: u16,
    headers: http::HeaderMap,
    body: Vec<u8>,
}

/// The [`Fetcher`] Boa's `fetch` calls.
#[derive(Debug, Default, Trace, Finalize, JsData)]
pub struct BackgroundFetcher;

impl Fetcher for BackgroundFetcher {
    async fn fetch(
        self: Rc<Self>,
        request: JsRequest,
        _signal: Option<JsObject>,
        _context: &RefCell<&mut Context>,
    ) -> JsResult<JsResponse> {
        let request = request.into_inner();
        let url = request.uri().to_string();
        let method = request.method().clone();
        let headers = request.headers().clone();
        let body = request.body().clone();
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let target = url.clone();
        let request = async move {
            let result = send(method, &target, headers, body).await;
            let _ = sender.send(result);
        };
        let task = match tokio::runtime::Handle::try_current() {
            Ok(session) => session.spawn(request),
            Err(_) => fallback_runtime().spawn(request),
        };
        // A call that ends (or times out) before the answer arrives drops this future: the
        // request is cancelled with it instead of running on in the background.
        let _cancel_on_drop = AbortOnDrop(task.abort_handle());
        let fetched = receiver
            .await
            .map_err(|_| JsError::from_rust(Failed("the request was dropped".into())))?
            .map_err(|message| JsError::from_rust(Failed(message)))?;
        let mut builder = http::Response::builder().status(fetched.status);
        for (name, value) in &fetched.headers {
            builder = builder.header(name, value);
        }
        let response = builder.body(fetched.body).map_err(JsError::from_rust)?;
        Ok(JsResponse::basic(JsString::from(fetched.url), response))
    }
}

async fn send(
    method: http::Method,
    url: &str,
    headers: http::HeaderMap,
    body: Vec<u8>,
) -> Result<Fetched, String> {
    let mut response = client()
        .request(method, url)
        .headers(headers)
        .body(body)
        .send()
        .await
        .map_err(|error| format!("fetch {url} failed: {error}"))?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| format!("fetch {url}: reading the body failed: {error}"))?
    {
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(format!(
                "fetch {url}: the response is larger than {} MiB",
                MAX_RESPONSE_BYTES / (1024 * 1024)
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Fetched {
        url: url.to_string(),
        status,
        headers,
        body,
    })
}

/// Aborts the request's task when the JS side stops waiting for it.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A fetch that failed before a response arrived (as `TypeError: Failed to fetch` would).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Failed(String);
