//! A stdio server's process group, ended as a whole: a server that ignores stdin closing, or
//! leaves children behind, is still gone when earshot is done with it.

use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::time::Duration;

use tokio::process::Child;

use crate::exit::{SHUTDOWN_GRACE, describe_exit};

/// Every server process group alive in this process, so that a signal that ends earshot can end
/// them too (they are in their own groups, so a terminal's Ctrl-C never reaches them).
static LIVE_GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn live_groups() -> parking_lot::MutexGuard<'static, BTreeSet<i32>> {
    LIVE_GROUPS.lock()
}

/// Set once a terminating signal is being handled: the process is about to exit with its code.
static ENDING_ON_SIGNAL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a terminating signal is being handled by `end_all_groups_on_signals`: a command that
/// finishes meanwhile (its servers just died) waits for the handler's exit code instead of
/// exiting 0 first.
pub fn ending_on_signal() -> bool {
    ENDING_ON_SIGNAL.load(std::sync::atomic::Ordering::SeqCst)
}

/// On SIGINT, SIGTERM or SIGHUP, cancels every MCP request in flight on its server, ends every
/// server process group (SIGTERM, then SIGKILL a moment later) and exits with 128 + the
/// signal's number. For the `earshot` binary; an embedder that handles signals itself calls
/// [`super::cancel_in_flight`] and [`end_all_groups`] instead. Must run inside a tokio runtime.
pub fn end_all_groups_on_signals() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        for (kind, number) in [
            (SignalKind::interrupt(), libc::SIGINT),
            (SignalKind::terminate(), libc::SIGTERM),
            (SignalKind::hangup(), libc::SIGHUP),
        ] {
            let Ok(mut stream) = signal(kind) else {
                continue;
            };
            tokio::spawn(async move {
                if stream.recv().await.is_some() {
                    ENDING_ON_SIGNAL.store(true, std::sync::atomic::Ordering::SeqCst);
                    // Calls in flight are cancelled on their servers first: a remote server
                    // is not ended with the process groups.
                    super::in_flight::cancel_in_flight(
                        "the user interrupted earshot",
                        Duration::from_millis(500),
                    )
                    .await;
                    end_all_groups(Duration::from_millis(300)).await;
                    std::process::exit(128 + number);
                }
            });
        }
    }
}

/// Ends every live server process group: SIGTERM, then SIGKILL after `grace`.
pub async fn end_all_groups(grace: Duration) {
    let groups: Vec<i32> = live_groups().iter().copied().collect();
    for signal in [Signal::Terminate, Signal::Kill] {
        for pgid in &groups {
            send(*pgid, signal);
        }
        if matches!(signal, Signal::Terminate) {
            tokio::time::sleep(grace).await;
        }
    }
}

fn send(pgid: i32, signal: Signal) {
    #[cfg(unix)]
    {
        let number = match signal {
            Signal::Terminate => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
        };
        // SAFETY: killpg only sends a signal; an id that no longer exists gives ESRCH.
        unsafe {
            libc::killpg(pgid, number);
        }
    }
    #[cfg(not(unix))]
    let _ = (pgid, signal);
}

/// The child that leads its own process group (spawned with `process_group(0)`).
pub struct ProcessGroup {
    child: Child,
    pgid: Option<i32>,
}

impl ProcessGroup {
    /// Takes charge of `child`, which must have been spawned as the leader of a new group.
    pub fn new(child: Child) -> ProcessGroup {
        let pgid = child.id().and_then(|pid| i32::try_from(pid).ok());
        if let Some(pgid) = pgid {
            live_groups().insert(pgid);
        }
        ProcessGroup { child, pgid }
    }

    /// The leader's process id.
    pub fn pid(&self) -> Option<u32> {
        self.pgid.and_then(|pid| u32::try_from(pid).ok())
    }

    /// Runs for the child's lifetime: when the leader exits on its own, `on_exit` hears how
    /// (`exited with code 1`) and any member it left behind is killed; when `shutdown` fires
    /// first, the group is ended as [`ProcessGroup::shut_down`] describes.
    pub async fn supervise(
        mut self,
        shutdown: tokio::sync::oneshot::Receiver<Duration>,
        on_exit: impl FnOnce(String),
    ) {
        tokio::select! {
            status = self.child.wait() => {
                on_exit(match status {
                    Ok(status) => describe_exit(status),
                    Err(error) => format!("could not be waited for: {error}"),
                });
                self.signal(Signal::Kill);
            }
            grace = shutdown => self.shut_down(grace.unwrap_or(SHUTDOWN_GRACE)).await,
        }
    }

    /// Ends the whole group: the leader gets `grace` (normally [`SHUTDOWN_GRACE`]) to exit after
    /// its stdin was closed (the caller closes it first), then the group gets SIGTERM, then after
    /// another grace SIGKILL. Any member left behind by a leader that exited is killed too.
    pub async fn shut_down(mut self, grace: Duration) {
        let exited = tokio::time::timeout(grace, self.child.wait()).await.is_ok();
        if !exited {
            self.signal(Signal::Terminate);
            if tokio::time::timeout(grace, self.child.wait())
                .await
                .is_err()
            {
                self.signal(Signal::Kill);
                let _ = self.child.wait().await;
            }
        }
        // Stragglers (a grandchild that kept running) go with the group.
        self.signal(Signal::Kill);
    }

    fn signal(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            send(pgid, signal);
        }
    }
}

impl Drop for ProcessGroup {
    /// A group dropped without `shut_down` (a panic, a runtime shutting down) is killed at once.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.signal(Signal::Kill);
        }
        if let Some(pgid) = self.pgid {
            live_groups().remove(&pgid);
        }
    }
}

#[derive(Clone, Copy)]
enum Signal {
    Terminate,
    Kill,
}
