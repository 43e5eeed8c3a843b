//! Work that can take long (RSA key generation, PBKDF2 with many iterations) runs on a pool of
//! threads of its own: the extension's JS thread goes on with its job loop (which the job's
//! result wakes), so its call's time limit still applies.
//!
//! The pool is shared by every extension in the process, so no extension may hold it: each runs
//! at most [`MAX_JOBS_PER_EXTENSION`] jobs at once (the rest wait in its own queue), and a
//! freed thread takes the next job of the extensions in turn, so one extension's flood of
//! derivations never delays another's `generateKey` by more than its share. A job belongs to
//! what its JS thread was doing when it started it (loading, or one call; see [`Activity`]):
//! when that ends, returns or times out, its jobs still waiting are dropped and those running
//! stop at their next check ([`cancelled`]; PBKDF2 checks every [`CHECK_EVERY`] iterations, RSA
//! generation at each prime candidate), so an abandoned derivation burns no CPU past its call.
//! Their promises reject with an `OperationError` saying so.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use boa_engine::object::builtins::JsPromise;
use boa_engine::{Context, JsNativeError, JsResult, JsValue};

use super::error::{CryptoError, CryptoResult, operation};

/// The most crypto threads in one process; past that many running jobs, jobs wait.
pub const MAX_THREADS: usize = 64;

/// The most crypto jobs one extension runs at once; its others wait in its own queue.
pub const MAX_JOBS_PER_EXTENSION: usize = 4;

/// The most crypto jobs of one extension that wait for a thread; past that, a new one fails at
/// once with an `OperationError`.
pub const MAX_WAITING_PER_EXTENSION: usize = 10_000;

/// How many PBKDF2 iterations run between two looks at the job's cancellation.
pub const CHECK_EVERY: u32 = 4096;

/// How long a pool thread waits for work before it ends.
const IDLE: Duration = Duration::from_secs(10);

/// The message of a job that stopped because what started it ended.
pub const CANCELLED: &str =
    "The operation was cancelled: the call (or load) that started it ended or timed out";

/// Whether a job must stop: its activity ended, or passed its deadline.
#[derive(Debug)]
struct Cancel {
    ended: AtomicBool,
    deadline: Option<Instant>,
}

impl Cancel {
    fn new(deadline: Option<Instant>) -> Arc<Cancel> {
        Arc::new(Cancel {
            ended: AtomicBool::new(false),
            deadline,
        })
    }

    fn is_set(&self) -> bool {
        self.ended.load(Ordering::Relaxed) || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// Whose jobs a JS thread starts, and the activity they belong to.
struct Owner {
    id: u64,
    activity: Arc<Cancel>,
}

fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

thread_local! {
    /// On a JS thread: its owner (one per thread: one extension per thread).
    static OWNER: RefCell<Owner> = RefCell::new(Owner { id: next_id(), activity: Cancel::new(None) });
    /// On a pool thread: the running job's cancellation.
    static RUNNING: RefCell<Option<Arc<Cancel>>> = const { RefCell::new(None) };
}

/// What the JS thread is doing (loading, or one call, with its deadline): jobs started meanwhile
/// belong to it and are cancelled when it is dropped, or when the deadline passes.
#[must_use = "the activity ends (and cancels its jobs) when dropped"]
pub struct Activity {
    cancel: Arc<Cancel>,
}

impl Activity {
    /// Starts an activity on this JS thread that must end by `deadline`.
    pub fn start(deadline: Instant) -> Activity {
        let cancel = Cancel::new(Some(deadline));
        OWNER.with(|owner| owner.borrow_mut().activity = cancel.clone());
        Activity { cancel }
    }
}

impl Drop for Activity {
    fn drop(&mut self) {
        self.cancel.ended.store(true, Ordering::Relaxed);
        OWNER.with(|owner| {
            let mut owner = owner.borrow_mut();
            if Arc::ptr_eq(&owner.activity, &self.cancel) {
                owner.activity = Cancel::new(None);
            }
        });
        // Wake the pool so that its waiting jobs are dropped now.
        let pool = pool();
        let mut state = pool.lock();
        pool.dispatch(&mut state);
    }
}

/// Whether the job running on this thread must stop (its call ended or timed out); false
/// outside a job.
pub fn cancelled() -> bool {
    RUNNING.with(|running| {
        running
            .borrow()
            .as_ref()
            .is_some_and(|cancel| cancel.is_set())
    })
}

/// The error a job that noticed [`cancelled`] returns.
pub fn cancelled_error() -> CryptoError {
    operation(CANCELLED)
}

/// How a job is started.
enum Start {
    Run,
    Cancelled,
    NoThread,
    TooMany,
}

struct Job {
    cancel: Arc<Cancel>,
    run: Box<dyn FnOnce(Start) + Send>,
}

#[derive(Default)]
struct Queue {
    running: usize,
    waiting: VecDeque<Job>,
}

#[derive(Default)]
struct State {
    queues: HashMap<u64, Queue>,
    /// The owners with jobs waiting, in the order they get the next free thread.
    turn: VecDeque<u64>,
    threads: usize,
    idle: usize,
    /// Idle threads already woken for a job, not yet running.
    woken: usize,
}

struct Pool {
    state: Mutex<State>,
    wake: Condvar,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        state: Mutex::new(State::default()),
        wake: Condvar::new(),
    })
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn submit(&'static self, owner: u64, job: Job) {
        let mut state = self.lock();
        let queue = state.queues.entry(owner).or_default();
        if queue.waiting.len() >= MAX_WAITING_PER_EXTENSION {
            drop(state);
            (job.run)(Start::TooMany);
            return;
        }
        queue.waiting.push_back(job);
        if !state.turn.contains(&owner) {
            state.turn.push_back(owner);
        }
        self.dispatch(&mut state);
    }

    /// Makes sure a job that can run (or be dropped) has a thread on its way: an idle one
    /// woken, or a new one.
    fn dispatch(&'static self, state: &mut State) {
        if !runnable(state) {
            return;
        }
        if state.idle > state.woken {
            state.woken += 1;
            self.wake.notify_one();
            return;
        }
        if state.threads >= MAX_THREADS {
            return;
        }
        state.threads += 1;
        let spawned = std::thread::Builder::new()
            .name("earshot-crypto".into())
            .spawn(move || self.work());
        if spawned.is_err() {
            state.threads -= 1;
            if state.threads == 0 {
                // No thread will ever take them: each fails now.
                state.turn.clear();
                for (_, queue) in state.queues.iter_mut() {
                    for job in queue.waiting.drain(..) {
                        (job.run)(Start::NoThread);
                    }
                }
                state.queues.retain(|_, queue| queue.running > 0);
            }
        }
    }

    fn work(&'static self) {
        let mut state = self.lock();
        loop {
            if let Some((owner, job)) = take(&mut state) {
                self.dispatch(&mut state);
                drop(state);
                let start = if job.cancel.is_set() {
                    Start::Cancelled
                } else {
                    Start::Run
                };
                RUNNING.with(|running| *running.borrow_mut() = Some(job.cancel.clone()));
                (job.run)(start);
                RUNNING.with(|running| *running.borrow_mut() = None);
                state = self.lock();
                if let Some(queue) = state.queues.get_mut(&owner) {
                    queue.running -= 1;
                    if queue.running == 0 && queue.waiting.is_empty() {
                        state.queues.remove(&owner);
                    }
                }
                continue;
            }
            state.idle += 1;
            let (woke, waited) = self
                .wake
                .wait_timeout(state, IDLE)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            state = woke;
            state.idle -= 1;
            state.woken = state.woken.saturating_sub(1);
            if waited.timed_out() && !runnable(&state) {
                state.threads -= 1;
                return;
            }
        }
    }
}

/// Whether some owner has a job waiting and room to run it, or a cancelled job to drop (which
/// takes no time, so it needs no room). An owner's activities follow one another and its queue
/// is in order, so its cancelled jobs are at the front: only the first is looked at.
fn runnable(state: &State) -> bool {
    state.turn.iter().any(|owner| {
        state.queues.get(owner).is_some_and(|queue| {
            queue.running < MAX_JOBS_PER_EXTENSION
                || queue.waiting.front().is_some_and(|job| job.cancel.is_set())
        })
    })
}

/// The next job to run: the first owner in turn with room, or with a cancelled job to drop
/// (it then goes to the back of the turn if it has more waiting).
fn take(state: &mut State) -> Option<(u64, Job)> {
    for position in 0..state.turn.len() {
        let owner = state.turn[position];
        let Some(queue) = state.queues.get_mut(&owner) else {
            continue;
        };
        let room = queue.running < MAX_JOBS_PER_EXTENSION
            || queue.waiting.front().is_some_and(|job| job.cancel.is_set());
        if !room {
            continue;
        }
        let Some(job) = queue.waiting.pop_front() else {
            continue;
        };
        queue.running += 1;
        let more = !queue.waiting.is_empty();
        state.turn.remove(position);
        if more {
            state.turn.push_back(owner);
        }
        return Some((owner, job));
    }
    None
}

/// A promise of `work`'s result, done on the pool as a job of this JS thread's extension and
/// activity, turned into a JS value by `finish` on the JS thread (or its error thrown as
/// WebCrypto names it). A job whose activity ended before it ran is never run; `work` itself
/// should return [`cancelled_error`] when it sees [`cancelled`].
pub fn run<T: Send + 'static>(
    context: &mut Context,
    work: impl FnOnce() -> CryptoResult<T> + Send + 'static,
    finish: impl FnOnce(T, &mut Context) -> JsResult<JsValue> + 'static,
) -> JsValue {
    let (sender, receiver) = tokio::sync::oneshot::channel::<CryptoResult<T>>();
    let (owner, cancel) = OWNER.with(|owner| {
        let owner = owner.borrow();
        (owner.id, owner.activity.clone())
    });
    let job = Job {
        cancel,
        run: Box::new(move |start| {
            let result = match start {
                Start::Run => std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                    .unwrap_or_else(|_| Err(operation("the crypto operation failed"))),
                Start::Cancelled => Err(cancelled_error()),
                Start::NoThread => Err(operation("the crypto threads could not start")),
                Start::TooMany => Err(operation(format!(
                    "{MAX_WAITING_PER_EXTENSION} crypto operations of this extension are already waiting"
                ))),
            };
            let _ = sender.send(result);
        }),
    };
    pool().submit(owner, job);
    let promise = JsPromise::from_async_fn(
        async move |context| {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Runs `count` jobs of one owner (each waiting on `gate` until told, or until cancelled),
    /// reporting on `done` as each ends.
    fn block(owner: u64, cancel: &Arc<Cancel>, count: usize, done: &mpsc::Sender<&'static str>) {
        for _ in 0..count {
            let done = done.clone();
            pool().submit(
                owner,
                Job {
                    cancel: cancel.clone(),
                    run: Box::new(move |start| {
                        if matches!(start, Start::Run) {
                            while !cancelled() {
                                std::thread::sleep(Duration::from_millis(5));
                            }
                        }
                        let _ = done.send("hog");
                    }),
                },
            );
        }
    }

    #[test]
    fn one_owner_cannot_hold_the_pool_and_its_jobs_stop_when_cancelled() {
        let (done, ended) = mpsc::channel();
        let hog = Cancel::new(None);
        let hog_id = next_id();
        // Far more jobs than threads, all of one owner, none of which ends by itself.
        block(hog_id, &hog, MAX_THREADS + 6, &done);
        // Another owner's job runs to its end meanwhile.
        let quick = done.clone();
        pool().submit(
            next_id(),
            Job {
                cancel: Cancel::new(None),
                run: Box::new(move |_| {
                    let _ = quick.send("quick");
                }),
            },
        );
        assert_eq!(ended.recv().unwrap(), "quick");
        // Only its share of the threads ever ran the hog's jobs.
        {
            let state = pool().lock();
            let running = state.queues.get(&hog_id).map_or(0, |queue| queue.running);
            assert_eq!(running, MAX_JOBS_PER_EXTENSION);
        }
        // Cancelled, every one of its jobs ends (running or waiting).
        hog.ended.store(true, Ordering::Relaxed);
        pool().dispatch(&mut pool().lock());
        for _ in 0..MAX_THREADS + 6 {
            assert_eq!(ended.recv().unwrap(), "hog");
        }
    }
}
