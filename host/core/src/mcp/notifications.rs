//! What servers say while they work: progress of the call in flight (to the session's progress
//! callback, for a CLI progress line or an editor's spinner) and log messages (to `tracing`).
//! Both are untrusted and rate-limited per server, so a server that floods them costs only
//! itself: text is stripped of control characters and cut, progress reaches the callback at
//! most every [`PROGRESS_INTERVAL`], and past [`MAX_LOG_MESSAGES`] a minute log messages are
//! dropped (with one warning saying so).

use parking_lot::{Mutex, RwLock};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The least time between two progress reports of one server to the callback.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(50);

/// The most log messages of one server passed to `tracing` per minute.
pub const MAX_LOG_MESSAGES: usize = 100;

/// The most characters kept of a progress or log message.
const MAX_TEXT: usize = 500;

/// Progress a server reported on the call in flight (MCP calls run one at a time, so it is the
/// session's one MCP call).
#[derive(Debug, Clone, PartialEq)]
pub struct CallProgress {
    /// The server reporting.
    pub server: String,
    /// Progress so far.
    pub progress: f64,
    /// The total, when the server knows it.
    pub total: Option<f64>,
    /// What it is doing (control characters removed, cut to 500 characters).
    pub message: Option<String>,
}

/// Receives the progress of MCP calls.
pub type CallProgressCallback = Arc<dyn Fn(&CallProgress) + Send + Sync>;

/// The session's progress callback, shared by every connection.
#[derive(Clone, Default)]
pub struct ProgressSlot(Arc<RwLock<Option<CallProgressCallback>>>);

impl ProgressSlot {
    /// Reports to `callback` from now on.
    pub fn set(&self, callback: CallProgressCallback) {
        *self.0.write() = Some(callback);
    }

    fn current(&self) -> Option<CallProgressCallback> {
        self.0.read().clone()
    }
}

/// One server's notifications: where progress goes, and the limits it is held to.
#[derive(Clone, Default)]
pub struct ServerNotices {
    server: Arc<str>,
    progress: ProgressSlot,
    last_progress: Arc<Mutex<Option<Instant>>>,
    /// The requests whose final report already passed (the last few).
    finished_for: Arc<Mutex<Vec<Box<dyn std::any::Any + Send + Sync>>>>,
    logs: Arc<Mutex<LogBudget>>,
}

#[derive(Default)]
struct LogBudget {
    window_start: Option<Instant>,
    passed: usize,
    warned: bool,
}

impl ServerNotices {
    /// The notices of `server`, reporting progress to `progress`.
    pub fn new(server: &str, progress: ProgressSlot) -> ServerNotices {
        ServerNotices {
            server: Arc::from(server),
            progress,
            ..ServerNotices::default()
        }
    }

    /// A progress notification for the request with `token`: passed on unless the last one was
    /// under [`PROGRESS_INTERVAL`] ago; the first that reaches its total passes regardless, once
    /// per request.
    pub fn progress<Token: PartialEq + Clone + Send + Sync + 'static>(
        &self,
        token: &Token,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) {
        let Some(callback) = self.progress.current() else {
            return;
        };
        let finished = total.is_some_and(|total| progress >= total);
        {
            let mut last = self.last_progress.lock();
            let mut finished_for = self.finished_for.lock();
            let first_finish = finished
                && !finished_for
                    .iter()
                    .any(|done| done.downcast_ref::<Token>() == Some(token));
            let now = Instant::now();
            if !first_finish && last.is_some_and(|at| now.duration_since(at) < PROGRESS_INTERVAL) {
                return;
            }
            if first_finish {
                if finished_for.len() == 16 {
                    finished_for.remove(0);
                }
                finished_for.push(Box::new(token.clone()));
            }
            *last = Some(now);
        }
        callback(&CallProgress {
            server: self.server.to_string(),
            progress,
            total,
            message: message.map(clean),
        });
    }

    /// A log message: to `tracing` at its level, within the per-minute budget.
    pub fn log(&self, level: &str, logger: Option<&str>, data: &Value) {
        {
            let mut budget = self.logs.lock();
            let now = Instant::now();
            if budget
                .window_start
                .is_none_or(|start| now.duration_since(start) > Duration::from_secs(60))
            {
                *budget = LogBudget {
                    window_start: Some(now),
                    passed: 0,
                    warned: false,
                };
            }
            if budget.passed >= MAX_LOG_MESSAGES {
                if !budget.warned {
                    budget.warned = true;
                    tracing::warn!(target: "earshot::mcp::server_log", server = %self.server, "more than {MAX_LOG_MESSAGES} log messages in a minute; the rest of this minute's are dropped");
                }
                return;
            }
            budget.passed += 1;
        }
        let text = match data {
            Value::String(text) => clean(text),
            other => clean(&other.to_string()),
        };
        let logger = logger.map(clean).unwrap_or_default();
        match level {
            "debug" => {
                tracing::debug!(target: "earshot::mcp::server_log", server = %self.server, logger, "{text}")
            }
            "info" | "notice" => {
                tracing::info!(target: "earshot::mcp::server_log", server = %self.server, logger, "{text}")
            }
            "warning" => {
                tracing::warn!(target: "earshot::mcp::server_log", server = %self.server, logger, "{text}")
            }
            _ => {
                tracing::error!(target: "earshot::mcp::server_log", server = %self.server, logger, level, "{text}")
            }
        }
    }
}

/// Untrusted text made safe to show and cut to [`MAX_TEXT`] characters.
fn clean(text: &str) -> String {
    earshot_terminal_text::strip_controls(text)
        .chars()
        .take(MAX_TEXT)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_of_progress_reaches_the_callback_a_few_times_and_the_end_always() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let slot = ProgressSlot::default();
        let sink = seen.clone();
        slot.set(Arc::new(move |progress: &CallProgress| {
            sink.lock().push(progress.clone())
        }));
        let notices = ServerNotices::new("s", slot);
        for step in 0..10_000 {
            notices.progress(&1, f64::from(step), Some(10_000.0), Some("step\u{1b}[2J"));
        }
        notices.progress(&1, 10_000.0, Some(10_000.0), None);
        // A flood of "finished" reports passes once per request, not every time.
        for _ in 0..10_000 {
            notices.progress(&1, 1.0, Some(1.0), None);
        }
        let seen = seen.lock();
        assert!(seen.len() < 100, "{} reports", seen.len());
        assert_eq!(seen.last().unwrap().progress, 10_000.0);
        assert_eq!(
            seen[0].message.as_deref(),
            Some("step"),
            "the escape sequence is removed"
        );
    }
}
