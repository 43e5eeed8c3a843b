//! The job loop of one extension's JS thread.
//!
//! Boa's stock executor busy-waits on timers and `await_blocking` spins forever on a promise that
//! never settles. This one runs microtasks, polls native futures (fetch) with a waker that wakes
//! the thread, runs due timers, and otherwise sleeps until the next timer, a wake-up or the
//! deadline, whichever comes first. It stops when what it waits for has settled, when nothing left
//! could ever settle it, or at the deadline.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use boa_engine::context::time::JsInstant;
use boa_engine::job::{
    GenericJob, IntervalJob, Job, JobExecutor, NativeAsyncJob, PromiseJob, TimeoutJob,
};
use boa_engine::{Context, JsError, JsResult, JsValue};

/// How driving the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drive {
    /// What we waited for has settled.
    Settled,
    /// Nothing is queued, no timer is set and no future is pending: it can never settle.
    Stalled,
    /// The deadline passed first.
    DeadlinePassed,
}

enum ClockJob {
    Timeout(TimeoutJob),
    Interval(IntervalJob),
}

impl ClockJob {
    fn cancelled(&self) -> bool {
        match self {
            ClockJob::Timeout(job) => job.cancelled(),
            ClockJob::Interval(job) => job.cancelled(),
        }
    }
}

/// The executor Boa enqueues jobs on; [`JobLoop::drive`] runs them.
#[derive(Default)]
pub struct JobLoop {
    promise_jobs: RefCell<VecDeque<PromiseJob>>,
    generic_jobs: RefCell<VecDeque<GenericJob>>,
    async_jobs: RefCell<VecDeque<NativeAsyncJob>>,
    timers: RefCell<BTreeMap<JsInstant, Vec<ClockJob>>>,
}

impl JobExecutor for JobLoop {
    fn enqueue_job(self: Rc<Self>, job: Job, context: &mut Context) {
        match job {
            Job::PromiseJob(job) => self.promise_jobs.borrow_mut().push_back(job),
            Job::GenericJob(job) => self.generic_jobs.borrow_mut().push_back(job),
            Job::AsyncJob(job) | Job::FinalizationRegistryCleanupJob(job) => {
                self.async_jobs.borrow_mut().push_back(job);
            }
            Job::TimeoutJob(job) => {
                let due = context.clock().now() + job.timeout();
                self.timers
                    .borrow_mut()
                    .entry(due)
                    .or_default()
                    .push(ClockJob::Timeout(job));
            }
            Job::IntervalJob(job) => {
                let due = context.clock().now() + job.interval();
                self.timers
                    .borrow_mut()
                    .entry(due)
                    .or_default()
                    .push(ClockJob::Interval(job));
            }
            _ => tracing::warn!("an extension queued a kind of job earshot does not run"),
        }
    }

    /// Runs what is runnable now (microtasks and due timers), without waiting.
    fn run_jobs(self: Rc<Self>, context: &mut Context) -> JsResult<()> {
        self.drive(context, &|| true, Instant::now() + Duration::from_secs(1))
            .map(|_| ())
    }
}

/// Wakes the JS thread when a native future (a fetch) makes progress.
struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

type PendingFuture<'a> = Pin<Box<dyn Future<Output = JsResult<JsValue>> + 'a>>;

impl JobLoop {
    /// Runs jobs until `settled()` is true, nothing could settle it any more, or `deadline`.
    ///
    /// # Errors
    /// An error a job could not contain: a runtime limit (loop iterations, recursion) hit in a
    /// promise reaction, for one.
    pub fn drive(
        self: &Rc<Self>,
        context: &mut Context,
        settled: &dyn Fn() -> bool,
        deadline: Instant,
    ) -> JsResult<Drive> {
        let cell = RefCell::new(context);
        let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
        let mut task_context = TaskContext::from_waker(&waker);
        let mut pending: Vec<PendingFuture<'_>> = Vec::new();
        loop {
            let finished = self.run_microtasks(&cell, deadline)?;
            if settled() {
                return Ok(Drive::Settled);
            }
            // Checked on every turn, so a stream of zero-delay timers or self-requeuing promise
            // reactions ends at the deadline instead of spinning forever.
            if !finished || Instant::now() >= deadline {
                return Ok(Drive::DeadlinePassed);
            }
            let started: Vec<NativeAsyncJob> = self.async_jobs.borrow_mut().drain(..).collect();
            for job in started {
                pending.push(Box::pin(job.call(&cell)));
            }
            let mut progressed = false;
            let mut failure: Option<JsError> = None;
            pending.retain_mut(|future| match future.as_mut().poll(&mut task_context) {
                Poll::Ready(result) => {
                    progressed = true;
                    if let Err(error) = result {
                        failure.get_or_insert(error);
                    }
                    false
                }
                Poll::Pending => true,
            });
            if let Some(error) = failure {
                return Err(error);
            }
            progressed |= self.run_due_timers(&cell)?;
            if progressed || self.has_queued_jobs() {
                continue;
            }
            // Nothing ran since `settled` and the deadline were checked at the top of this turn.
            if pending.is_empty() && self.timers.borrow().is_empty() {
                return Ok(Drive::Stalled);
            }
            let now = Instant::now();
            let mut wake_at = deadline;
            if let Some(next) = self.timers.borrow().keys().next().copied() {
                let current = cell.borrow().clock().now();
                let wait = Duration::from_millis((next - current).as_millis());
                wake_at = wake_at.min(now + wait);
            }
            std::thread::park_timeout(wake_at.saturating_duration_since(now));
        }
    }

    fn has_queued_jobs(&self) -> bool {
        !self.promise_jobs.borrow().is_empty()
            || !self.generic_jobs.borrow().is_empty()
            || !self.async_jobs.borrow().is_empty()
    }

    /// Runs promise reactions and generic jobs until none are left (true), or until `deadline`
    /// passes while they keep coming (false).
    fn run_microtasks(&self, cell: &RefCell<&mut Context>, deadline: Instant) -> JsResult<bool> {
        let mut ran: u32 = 0;
        loop {
            ran = ran.wrapping_add(1);
            if ran.is_multiple_of(1024) && Instant::now() >= deadline {
                return Ok(false);
            }
            let job = self.promise_jobs.borrow_mut().pop_front();
            if let Some(job) = job {
                job.call(&mut cell.borrow_mut())?;
                continue;
            }
            let job = self.generic_jobs.borrow_mut().pop_front();
            if let Some(job) = job {
                job.call(&mut cell.borrow_mut())?;
                continue;
            }
            cell.borrow_mut().clear_kept_objects();
            return Ok(true);
        }
    }

    /// Runs every timer that is due; true when one ran. A timer callback that throws is
    /// logged (as an uncaught exception would be) and the loop goes on.
    fn run_due_timers(&self, cell: &RefCell<&mut Context>) -> JsResult<bool> {
        let now = cell.borrow().clock().now();
        let due = {
            let mut timers = self.timers.borrow_mut();
            let later = timers.split_off(&now);
            let mut due = std::mem::replace(&mut *timers, later);
            // Timers due exactly now are in `later`'s first key when equal; take them too.
            if let Some(jobs) = timers.remove(&now) {
                due.insert(now, jobs);
            }
            due
        };
        let mut ran = false;
        for job in due.into_values().flatten() {
            if job.cancelled() {
                continue;
            }
            ran = true;
            let result = match job {
                ClockJob::Timeout(job) => job.call(&mut cell.borrow_mut()),
                ClockJob::Interval(job) => {
                    let result = job.call(&mut cell.borrow_mut());
                    let next = cell.borrow().clock().now() + job.interval();
                    self.timers
                        .borrow_mut()
                        .entry(next)
                        .or_default()
                        .push(ClockJob::Interval(job));
                    result
                }
            };
            if let Err(error) = result {
                if error.as_engine().is_none() {
                    let error = super::console_text::sanitise_console(&error.to_string());
                    tracing::warn!(target: "earshot::extension", "uncaught exception in a timer: {error}");
                } else {
                    return Err(error);
                }
            }
        }
        Ok(ran)
    }
}
