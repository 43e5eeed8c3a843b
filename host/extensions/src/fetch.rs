//! The HTTP side of `fetch` for extensions (the JS side is web/js/fetch.js): requests run as tasks on the session's tokio runtime (the embedder's:
//! each JS thread enters it), so a slow server never blocks an extension's JS thread (its timers
//! and other work go on) nor any other extension. The JS side awaits a channel; the job loop
//! sleeps until the answer arrives. Only an extension started outside any runtime falls back to
//! a small background runtime of the library's own.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::OnceLock;

use super::fetch_failure::FetchFailure;

/// The most bytes of one response body an extension receives (past it, the body errors).
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

/// A request's redirect mode (`RequestInit.redirect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Redirect {
    /// Follow up to 20 redirects (the default; the Fetch standard's limit).
    Follow,
    /// A redirect fails the fetch.
    Error,
    /// Hand back the redirect response itself (as Node and Deno do; browsers hide it).
    Manual,
}

/// The HTTP clients every extension shares (TLS roots of the platform): one that follows
/// redirects and one that does not. Idle connections are not kept: a connection belongs to the
/// runtime that opened it, and sessions on different runtimes share these clients.
fn client(follow: bool) -> &'static reqwest::Client {
    static FOLLOWING: OnceLock<reqwest::Client> = OnceLock::new();
    static NOT_FOLLOWING: OnceLock<reqwest::Client> = OnceLock::new();
    let build = move || {
        crate::tls::install_crypto_provider();
        let policy = if follow {
            reqwest::redirect::Policy::limited(20)
        } else {
            reqwest::redirect::Policy::none()
        };
        reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(policy)
            .user_agent(concat!("earshot/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(std::time::Duration::from_secs(30))
            // Per read, not for the whole response: a server-sent event stream may last hours.
            .read_timeout(std::time::Duration::from_secs(300))
            .build()
            .expect("the HTTP client builds")
    };
    if follow {
        FOLLOWING.get_or_init(build)
    } else {
        NOT_FOLLOWING.get_or_init(build)
    }
}

/// What a request hands back to the JS thread once the response's head arrives; its body
/// follows chunk by chunk ([`InFlight::read`]).
pub(super) struct Head {
    /// The final URL (after redirects).
    pub url: String,
    /// The status code.
    pub status: u16,
    /// The server's reason phrase (the standard one when it sent that or none).
    pub status_text: String,
    /// The response headers, in order.
    pub headers: http::HeaderMap,
}

/// How many body chunks may wait for the JS side to read them before the request stops reading
/// from the server (back-pressure).
const BODY_QUEUE: usize = 8;

/// One body chunk, the end (`None`: the server's body ended), or why the body broke off. A
/// channel that closes without the end marker means the request was stopped.
type BodyChunk = Result<Option<Vec<u8>>, String>;

/// How long the request waits for the JS side to make room for the next chunk before it gives
/// up (a response whose body an extension stopped reading does not hold its connection open).
const IDLE_READER: std::time::Duration = std::time::Duration::from_secs(120);

/// The longest wait for a response's head.
const HEAD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// One request, as the JS side holds it: it starts when its head is first awaited (so a fetch
/// whose answer is never awaited during a call never runs in the background), and its task is
/// aborted when its signal aborts, when its body is cancelled, or when a future awaiting its
/// head or a body chunk is dropped (the call ended).
pub(super) struct InFlight {
    request: Option<Request>,
    task: Rc<RefCell<Option<tokio::task::AbortHandle>>>,
    aborted: Rc<Cell<bool>>,
    body: Rc<RefCell<Option<tokio::sync::mpsc::Receiver<BodyChunk>>>>,
}

impl Drop for InFlight {
    /// The JS side let go of the request (its handle was collected): nothing can read it now.
    fn drop(&mut self) {
        self.abort();
    }
}

/// What [`InFlight::new`] was given.
struct Request {
    method: http::Method,
    url: String,
    headers: http::HeaderMap,
    body: Option<Vec<u8>>,
    redirect: Redirect,
}

impl InFlight {
    /// A request for `method url` with `headers` and `body`, run on the session's runtime (or
    /// the fallback) once its head is awaited.
    pub(super) fn new(
        method: http::Method,
        url: String,
        headers: http::HeaderMap,
        body: Option<Vec<u8>>,
        redirect: Redirect,
    ) -> InFlight {
        InFlight {
            request: Some(Request {
                method,
                url,
                headers,
                body,
                redirect,
            }),
            task: Rc::default(),
            aborted: Rc::default(),
            body: Rc::default(),
        }
    }

    /// Stops the request (its signal aborted, or its body was cancelled).
    pub(super) fn abort(&self) {
        self.aborted.set(true);
        if let Some(task) = self.task.borrow().as_ref() {
            task.abort();
        }
        self.body.borrow_mut().take();
    }

    /// The response's head, once: a future that sends the request when first polled and aborts
    /// it if it is dropped before the head arrives.
    pub(super) fn head(
        &mut self,
    ) -> Option<impl std::future::Future<Output = Result<Head, FetchFailure>> + 'static> {
        let request = self.request.take()?;
        let task_slot = self.task.clone();
        let aborted = self.aborted.clone();
        let body_slot = self.body.clone();
        Some(async move {
            if aborted.get() {
                return Err(FetchFailure::plain("the request was aborted"));
            }
            let (head_sender, head) = tokio::sync::oneshot::channel();
            let (body_sender, body) = tokio::sync::mpsc::channel(BODY_QUEUE);
            *body_slot.borrow_mut() = Some(body);
            let run = async move {
                let Request {
                    method,
                    url,
                    headers,
                    body,
                    redirect,
                } = request;
                let head =
                    tokio::time::timeout(HEAD_TIMEOUT, send(method, &url, headers, body, redirect))
                        .await
                        .unwrap_or_else(|_| {
                            Err(FetchFailure::head_timeout(HEAD_TIMEOUT.as_secs()))
                        });
                match head {
                    Err(error) => {
                        let _ = head_sender.send(Err(error));
                    }
                    Ok((answer, response)) => {
                        if head_sender.send(Ok(answer)).is_ok() {
                            stream_body(&url, response, body_sender).await;
                        }
                    }
                }
            };
            let task = match tokio::runtime::Handle::try_current() {
                Ok(session) => session.spawn(run),
                Err(_) => fallback_runtime().spawn(run),
            };
            *task_slot.borrow_mut() = Some(task.abort_handle());
            let mut cancel_on_drop = AbortOnDrop(Some(task.abort_handle()));
            let answer = head
                .await
                .map_err(|_| FetchFailure::plain("the request was aborted"))?;
            // The head arrived: the body goes on after this future.
            cancel_on_drop.0 = None;
            answer
        })
    }

    /// The next body chunk (`None` at the end): a future that aborts the request if it is
    /// dropped before the chunk arrives.
    pub(super) fn read(
        &self,
    ) -> impl std::future::Future<Output = Result<Option<Vec<u8>>, String>> + 'static {
        let body = self.body.clone();
        let task = self.task.borrow().clone();
        let aborted = self.aborted.clone();
        async move {
            let stopped = || "the request was aborted before its body ended".to_string();
            if aborted.get() {
                return Err(stopped());
            }
            let Some(mut receiver) = body.borrow_mut().take() else {
                return Err(stopped());
            };
            let mut cancel_on_drop = AbortOnDrop(task);
            let chunk = receiver.recv().await;
            cancel_on_drop.0 = None;
            match chunk {
                Some(Ok(Some(chunk))) => {
                    *body.borrow_mut() = Some(receiver);
                    Ok(Some(chunk))
                }
                Some(Ok(None)) => Ok(None),
                Some(Err(error)) => Err(error),
                // Closed without the end marker: the task was stopped (aborted, or its runtime
                // shut down), so the body is cut short, not complete.
                None => Err(stopped()),
            }
        }
    }
}

async fn send(
    method: http::Method,
    url: &str,
    headers: http::HeaderMap,
    body: Option<Vec<u8>>,
    redirect: Redirect,
) -> Result<(Head, reqwest::Response), FetchFailure> {
    let mut request = client(redirect == Redirect::Follow)
        .request(method, url)
        .headers(headers);
    if let Some(body) = body {
        request = request.body(body);
    }
    let response = request
        .send()
        .await
        .map_err(|error| FetchFailure::from_reqwest(&error, url))?;
    let status = response.status().as_u16();
    // The Fetch standard's redirect statuses (not 300, 304 or 305).
    let redirected = matches!(status, 301 | 302 | 303 | 307 | 308);
    if redirect == Redirect::Error && redirected {
        return Err(FetchFailure::plain(format!(
            "fetch {url}: the server redirected (status {status}) and the request's redirect mode is \"error\""
        )));
    }
    // The server's own reason phrase when it sent one other than the standard one (hyper keeps
    // it as an extension), else the standard one.
    let status_text = match response.extensions().get::<hyper::ext::ReasonPhrase>() {
        Some(reason) => String::from_utf8_lossy(reason.as_bytes()).into_owned(),
        None => response
            .status()
            .canonical_reason()
            .unwrap_or_default()
            .to_string(),
    };
    let headers = response.headers().clone();
    let response_url = response.url().to_string();
    Ok((
        Head {
            url: response_url,
            status,
            status_text,
            headers,
        },
        response,
    ))
}

/// Reads the body chunk by chunk into `chunks` (waiting while the JS side is behind, at most
/// [`IDLE_READER`]) until it ends (then the end marker), breaks off, passes
/// [`MAX_RESPONSE_BYTES`], or nobody reads any more.
async fn stream_body(
    url: &str,
    mut response: reqwest::Response,
    chunks: tokio::sync::mpsc::Sender<BodyChunk>,
) {
    let mut total = 0usize;
    loop {
        let Ok(Ok(room)) = tokio::time::timeout(IDLE_READER, chunks.reserve()).await else {
            return;
        };
        let next = match response.chunk().await {
            Ok(Some(chunk)) if chunk.is_empty() => continue,
            Ok(Some(chunk)) => {
                total = total.saturating_add(chunk.len());
                if total > MAX_RESPONSE_BYTES {
                    Err(format!(
                        "fetch {url}: the response is larger than {} MiB",
                        MAX_RESPONSE_BYTES / (1024 * 1024)
                    ))
                } else {
                    Ok(Some(chunk.to_vec()))
                }
            }
            Ok(None) => Ok(None),
            Err(error) => Err(format!("fetch {url}: reading the body failed: {error}")),
        };
        let last = !matches!(next, Ok(Some(_)));
        room.send(next);
        if last {
            return;
        }
    }
}

/// Aborts the request's task when the JS side stops waiting for it (unless disarmed: `None`).
struct AbortOnDrop(Option<tokio::task::AbortHandle>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(task) = &self.0 {
            task.abort();
        }
    }
}
