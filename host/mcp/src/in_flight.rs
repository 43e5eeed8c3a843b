//! Every MCP request in flight in this process: a request whose caller stops waiting is cancelled
//! on its server, and a terminating signal cancels them all before earshot exits. Its own module so
//! that the connection (which registers requests) and the process groups (which end on a signal)
//! both build on it without reaching into each other.

use std::time::Duration;

use rmcp::model::{CancelledNotification, CancelledNotificationParam, RequestId};
use rmcp::service::{Peer, RoleClient};

/// Every request in flight in this process, so that a terminating signal can cancel them on
/// their servers before earshot exits (a remote server is not ended with the process groups).
static IN_FLIGHT: parking_lot::Mutex<Vec<(u64, Peer<RoleClient>, RequestId)>> =
    parking_lot::Mutex::new(Vec::new());

/// Numbers the entries of [`IN_FLIGHT`].
static NEXT_IN_FLIGHT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn in_flight() -> parking_lot::MutexGuard<'static, Vec<(u64, Peer<RoleClient>, RequestId)>> {
    IN_FLIGHT.lock()
}

/// Sends `notifications/cancelled` (with `reason`) for every request in flight, waiting at most
/// `within` for them to be written. For a process about to exit on a signal.
pub async fn cancel_in_flight(reason: &str, within: Duration) {
    let pending: Vec<(Peer<RoleClient>, RequestId)> = in_flight()
        .drain(..)
        .map(|(_, peer, id)| (peer, id))
        .collect();
    let mut sends = tokio::task::JoinSet::new();
    for (peer, id) in pending {
        let notification = CancelledNotification::new(CancelledNotificationParam::new(
            Some(id),
            Some(reason.to_string()),
        ));
        sends.spawn(async move {
            let _ = peer.send_notification(notification.into()).await;
        });
    }
    let _ =
        tokio::time::timeout(within, async { while sends.join_next().await.is_some() {} }).await;
}

/// Sends `notifications/cancelled` for a request whose caller dropped the call before the answer
/// came, so the server can stop the work nobody waits for. Disarmed once the answer is in.
/// While armed, the request is listed in [`IN_FLIGHT`].
pub(super) struct CancelIfAbandoned {
    pending: Option<(Peer<RoleClient>, RequestId)>,
    entry: u64,
}

impl CancelIfAbandoned {
    pub(super) fn new(peer: &Peer<RoleClient>, id: &RequestId) -> Self {
        let entry = NEXT_IN_FLIGHT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        in_flight().push((entry, peer.clone(), id.clone()));
        CancelIfAbandoned {
            pending: Some((peer.clone(), id.clone())),
            entry,
        }
    }

    /// The request ended on its own (answered, failed or timed out inside rmcp).
    pub(super) fn disarm(mut self) {
        self.pending = None;
    }
}

impl Drop for CancelIfAbandoned {
    fn drop(&mut self) {
        in_flight().retain(|(entry, _, _)| *entry != self.entry);
        let Some((peer, id)) = self.pending.take() else {
            return;
        };
        // Drop cannot await: the notification goes out on the session's runtime, if it is
        // still there (when it is not, the connection is closing anyway).
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let notification = CancelledNotification::new(CancelledNotificationParam::new(
                Some(id),
                Some("the caller stopped waiting for the answer".into()),
            ));
            let _ = peer.send_notification(notification.into()).await;
        });
    }
}
