//! The HTTP side of `fetch` for extensions (the JS side is web/js/fetch.js): requests run as tasks on the session's tokio runtime (the embedder's:
//! each JS thread enters it), so a slow server never blocks an extension's JS thread (its timers
//! and other work go on) nor any other extension. The JS side awaits a channel; the job loop
//! sleeps until the answer arrives. Only an extension started outside any runtime falls back to
//! a small background runtime of the library's own.

use std::sync::OnceLock;

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
pub(super) struct Fetched {
    /// The final URL (after redirects).
    pub url: String,
    /// The status code.
    pub status: u16,
    /// The reason phrase of the status ("" when unknown).
    pub status_text: String,
    /// The response headers, in order.
    pub headers: http::HeaderMap,
    /// The whole body (at most [`MAX_RESPONSE_BYTES`]).
    pub body: Vec<u8>,
}

/// One request in flight, as the JS side holds it: the answer to wait for, and the task to abort
/// when its signal aborts.
pub(super) struct InFlight {
    answer: Option<tokio::sync::oneshot::Receiver<Result<Fetched, String>>>,
    task: tokio::task::AbortHandle,
}

impl InFlight {
    /// Starts `method url` with `headers` and `body` on the session's runtime (or the fallback).
    pub(super) fn start(
        method: http::Method,
        url: String,
        headers: http::HeaderMap,
        body: Option<Vec<u8>>,
    ) -> InFlight {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let request = async move {
            let result = send(method, &url, headers, body).await;
            let _ = sender.send(result);
        };
        let task = match tokio::runtime::Handle::try_current() {
            Ok(session) => session.spawn(request),
            Err(_) => fallback_runtime().spawn(request),
        };
        InFlight {
            answer: Some(receiver),
            task: task.abort_handle(),
        }
    }

    /// Stops the request (its signal aborted).
    pub(super) fn abort(&self) {
        self.task.abort();
    }

    /// The answer, once: a future that also aborts the request if it is dropped first (a call
    /// that ends or times out before the answer arrives does not leave the request running).
    pub(super) fn answer(
        &mut self,
    ) -> Option<impl std::future::Future<Output = Result<Fetched, String>> + 'static> {
        let receiver = self.answer.take()?;
        let cancel_on_drop = AbortOnDrop(self.task.clone());
        Some(async move {
            let _cancel_on_drop = cancel_on_drop;
            receiver
                .await
                .map_err(|_| "the request was aborted".to_string())?
        })
    }
}

async fn send(
    method: http::Method,
    url: &str,
    headers: http::HeaderMap,
    body: Option<Vec<u8>>,
) -> Result<Fetched, String> {
    let mut request = client().request(method, url).headers(headers);
    if let Some(body) = body {
        request = request.body(body);
    }
    let mut response = request
        .send()
        .await
        .map_err(|error| format!("fetch {url} failed: {error}"))?;
    let status = response.status().as_u16();
    let status_text = response
        .status()
        .canonical_reason()
        .unwrap_or_default()
        .to_string();
    let headers = response.headers().clone();
    let response_url = response.url().to_string();
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
        url: response_url,
        status,
        status_text,
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
