//! Work that can take long (RSA key generation, PBKDF2 with many iterations) runs on threads of
//! its own: the extension's JS thread goes on with its job loop (which the pool wakes when a
//! result is ready), so its call's time limit still applies. A job whose call timed out still
//! runs to its end (as in Node's thread pool), so each job gets a thread of its own, up to
//! [`MAX_JOBS`] at once: a derivation abandoned by one call, or by one extension, never holds up
//! another's. Past that many, jobs queue.

use std::sync::OnceLock;

use boa_engine::object::builtins::JsPromise;
use boa_engine::{Context, JsNativeError, JsResult, JsValue};

use super::error::CryptoResult;

/// The most crypto jobs that run at once in one process; more queue.
pub const MAX_JOBS: usize = 64;

/// The pool: a tokio runtime used only for its blocking threads, which it starts as jobs come
/// (and ends when idle).
fn pool() -> Option<&'static tokio::runtime::Runtime> {
    static POOL: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    POOL.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .max_blocking_threads(MAX_JOBS)
            .thread_name("earshot-crypto")
            .build()
            .ok()
    })
    .as_ref()
}

/// A promise of `work`'s result, done on the pool, turned into a JS value by `finish` on the JS
/// thread (or its error thrown as WebCrypto names it). The work goes on to its end even if
/// nothing awaits the promise any more; only its result is dropped.
pub fn run<T: Send + 'static>(
    context: &mut Context,
    work: impl FnOnce() -> CryptoResult<T> + Send + 'static,
    finish: impl FnOnce(T, &mut Context) -> JsResult<JsValue> + 'static,
) -> JsValue {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let started = match pool() {
        Some(pool) => {
            drop(pool.spawn_blocking(move || {
                let _ = sender.send(work());
            }));
            true
        }
        None => false,
    };
    let promise = JsPromise::from_async_fn(
        async move |context| {
            if !started {
                return Err(JsNativeError::error()
                    .with_message("the crypto threads could not start")
                    .into());
            }
            let result = receiver.await.map_err(|_| {
                JsNativeError::error().with_message("the crypto operation was dropped")
            })?;
            let context = &mut context.borrow_mut();
            match result {
                Ok(value) => finish(value, context),
                Err(error) => Err(error.into_js(context)?),
            }
        },
        context,
    );
    promise.into()
}
