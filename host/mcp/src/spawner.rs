//! The one thread that starts every stdio server. A server's parent-death signal
//! (`PR_SET_PDEATHSIG`) fires when the *thread* that forked it ends, not the process; the
//! embedder's runtime may fork from a blocking-pool thread that exits after ten idle seconds, or
//! from a `current_thread` runtime's caller. This thread never ends, so the signal fires only when
//! earshot itself dies (SIGKILL, a crash). The child's pipes still belong to the caller's runtime:
//! the spawn happens inside that runtime's context.

use parking_lot::Mutex;
use std::sync::mpsc::{self, Sender};

use tokio::process::{Child, Command};
use tokio::runtime::Handle;
use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send>;

fn jobs() -> Option<Sender<Job>> {
    static JOBS: Mutex<Option<Sender<Job>>> = Mutex::new(None);
    let mut jobs = JOBS.lock();
    if jobs.is_none() {
        let (sender, receiver) = mpsc::channel::<Job>();
        let started = std::thread::Builder::new()
            .name("earshot-spawner".into())
            .spawn(move || {
                while let Ok(job) = receiver.recv() {
                    job();
                }
            });
        if started.is_ok() {
            *jobs = Some(sender);
        }
    }
    jobs.clone()
}

/// Spawns `command` from the spawner thread, registered with the current tokio runtime.
///
/// # Errors
/// As [`Command::spawn`].
pub async fn spawn(mut command: Command) -> std::io::Result<Child> {
    let handle = Handle::current();
    let (reply, answer) = oneshot::channel();
    let job: Job = Box::new(move || {
        let _inside = handle.enter();
        let _ = reply.send(command.spawn());
    });
    let sent = jobs().is_some_and(|jobs| jobs.send(job).is_ok());
    if !sent {
        return Err(std::io::Error::other(
            "earshot could not start its spawner thread",
        ));
    }
    answer
        .await
        .unwrap_or_else(|_| Err(std::io::Error::other("the spawner thread stopped")))
}
