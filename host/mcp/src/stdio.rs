//! A stdio server: the child process (minimal environment, its own process group, stderr kept in
//! a bounded tail) and the rmcp transport over its pipes, which reads at most one bounded line at
//! a time, skips what is not JSON-RPC and notes it, and stops on a flood.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::oneshot;

use super::child_env::minimal_environment;
use super::process_group::ProcessGroup;
use super::stderr_tail::{StderrTail, shorten};

/// The longest message accepted from a server, in bytes (a line longer than this is a flood).
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// How long one message may take to write to a server's stdin; a server that stops reading its
/// stdin for this long is given up on (a full pipe would otherwise block every later call).
pub const STDIN_WRITE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

/// What happened on a stdio server's pipes, for reports.
#[derive(Debug, Default)]
pub struct PipeEvents {
    /// How the process ended, once it has.
    pub exit: Option<String>,
    /// Why earshot gave up on it while it still ran (a flood, a message that is not JSON-RPC, a
    /// stdin that stopped draining), when it did.
    pub given_up: Option<String>,
    /// Lines on stdout that were not JSON, skipped.
    pub noise_lines: u64,
    /// The first such line, shortened.
    pub first_noise: Option<String>,
}

/// Shared view of a child's pipes: events plus the stderr tail.
#[derive(Clone, Default)]
pub struct PipeReport {
    events: Arc<Mutex<PipeEvents>>,
    /// The last bytes of stderr.
    pub stderr: StderrTail,
}

impl PipeReport {
    fn update(&self, change: impl FnOnce(&mut PipeEvents)) {
        change(&mut self.events.lock());
    }

    /// Reads the events.
    pub fn read<T>(&self, look: impl FnOnce(&PipeEvents) -> T) -> T {
        look(&self.events.lock())
    }

    /// Why the connection ended (`sent a message over 16 MiB…`, `exited with code 1`) and how
    /// stderr ended; `None` while it has not.
    pub fn ending(&self) -> Option<Ending> {
        let (given_up, exit) = self.read(|events| (events.given_up.clone(), events.exit.clone()));
        given_up.or(exit).map(|what| Ending {
            what,
            stderr: self.stderr.report_suffix(),
        })
    }

    /// Lines of noise worth a warning: `wrote 3 line(s) that are not JSON to stdout, skipped
    /// (first: …)`.
    pub fn noise(&self) -> Option<String> {
        self.read(|events| {
            (events.noise_lines > 0).then(|| {
                format!(
                    "wrote {} line(s) that are not JSON to stdout, skipped (first: \"{}\")",
                    events.noise_lines,
                    events.first_noise.as_deref().unwrap_or("")
                )
            })
        })
    }
}

/// How a server's connection ended, in two parts so a report can put its context between them:
/// `exited with code 1` + ` during the call to x` + `; its stderr ended: …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ending {
    /// What happened.
    pub what: String,
    /// `; its stderr ended: …`, or empty.
    pub stderr: String,
}

impl Ending {
    /// `what` + `context` + the stderr suffix.
    pub fn sentence(&self, context: &str) -> String {
        format!("{}{context}{}", self.what, self.stderr)
    }
}

/// Ends a stdio server's process group when asked; see [`ProcessGroup::shut_down`].
pub struct GroupShutdown {
    request: Option<oneshot::Sender<Duration>>,
    supervisor: tokio::task::JoinHandle<()>,
}

impl GroupShutdown {
    /// Asks the group to end (after its stdin was closed), the leader given `grace` to exit
    /// before each signal, and waits until it has.
    pub async fn shut_down(mut self, grace: Duration) {
        if let Some(request) = self.request.take() {
            let _ = request.send(grace);
        }
        let _ = (&mut self.supervisor).await;
    }
}

/// A started stdio server: its transport for rmcp, its report, its shutdown.
pub struct StdioChild {
    /// The transport over its pipes.
    pub transport: StdioTransport,
    /// What happened on its pipes.
    pub report: PipeReport,
    /// Ends its process group.
    pub shutdown: GroupShutdown,
    /// Its process id.
    pub pid: Option<u32>,
}

/// Starts `command` in its own process group with a minimal environment.
///
/// # Errors
/// One line saying why it could not start (not found, not executable, bad `cwd`).
pub async fn spawn_stdio(
    command: &str,
    args: &[String],
    entry_env: &BTreeMap<String, String>,
    cwd: &Path,
) -> Result<StdioChild, String> {
    let mut child = Command::new(command);
    child
        .args(args)
        .env_clear()
        .envs(minimal_environment(std::env::vars_os(), entry_env))
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    child.process_group(0);
    // If earshot dies without shutting down (SIGKILL, a crash), the kernel kills the server.
    // It fires when the spawning thread ends, so servers are only ever spawned on the spawner
    // thread, which lives as long as the process.
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe and touches only the child being started.
    unsafe {
        child.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = super::spawner::spawn(child)
        .await
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound if !cwd.is_dir() => {
                format!("its cwd {} does not exist", cwd.display())
            }
            std::io::ErrorKind::NotFound => {
                format!("command \"{command}\" was not found (is it installed and on PATH?)")
            }
            std::io::ErrorKind::PermissionDenied => {
                format!("command \"{command}\" is not executable")
            }
            _ => format!("command \"{command}\" could not start: {error}"),
        })?;
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let report = PipeReport::default();
    tokio::spawn(report.stderr.clone().drain(stderr));
    let group = ProcessGroup::new(child);
    let pid = group.pid();
    let (request, shutdown_requested) = oneshot::channel();
    let exit_report = report.clone();
    let supervisor = tokio::spawn(group.supervise(shutdown_requested, move |ending| {
        exit_report.update(|events| events.exit = Some(ending));
    }));
    Ok(StdioChild {
        transport: StdioTransport {
            stdout: BufReader::with_capacity(64 * 1024, stdout),
            line: Vec::new(),
            stdin: Arc::new(tokio::sync::Mutex::new(Some(stdin))),
            report: report.clone(),
            tools_changed: None,
        },
        report,
        shutdown: GroupShutdown {
            request: Some(request),
            supervisor,
        },
        pid,
    })
}

/// rmcp's view of the child's pipes: whole JSON-RPC messages in, one line per message out.
pub struct StdioTransport {
    stdout: BufReader<ChildStdout>,
    /// The line being read; kept across a cancelled `receive` so no bytes are lost.
    line: Vec<u8>,
    stdin: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
    report: PipeReport,
    /// Set as soon as `notifications/tools/list_changed` is read, before rmcp hands it to the
    /// handler on a task of its own: a server that announces a change and then answers the call
    /// that made it is seen to have changed by the time the answer is.
    tools_changed: Option<Arc<AtomicBool>>,
}

impl StdioTransport {
    /// Also sets `flag` when the server announces that its tools changed.
    pub fn marking_tools_changed(mut self, flag: Arc<AtomicBool>) -> StdioTransport {
        self.tools_changed = Some(flag);
        self
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let stdin = self.stdin.clone();
        let report = self.report.clone();
        async move {
            let mut line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            line.push(b'\n');
            let write = async {
                let mut pipe = stdin.lock().await;
                let Some(pipe) = pipe.as_mut() else {
                    return Err(std::io::ErrorKind::NotConnected.into());
                };
                // Given up on (a stalled stdin, a flood): nothing more is written to it.
                if report.read(|events| events.given_up.is_some()) {
                    return Err(std::io::ErrorKind::BrokenPipe.into());
                }
                pipe.write_all(&line).await?;
                pipe.flush().await
            };
            match tokio::time::timeout(STDIN_WRITE_DEADLINE, write).await {
                Ok(written) => written,
                Err(_) => {
                    report.update(|events| {
                        events.given_up.get_or_insert_with(|| {
                            format!(
                                "stopped reading its stdin for {}s, so earshot gave up on it",
                                STDIN_WRITE_DEADLINE.as_secs()
                            )
                        });
                    });
                    Err(std::io::ErrorKind::TimedOut.into())
                }
            }
        }
    }

    /// The next message, read straight from stdout (no task or channel in between); `None` ends
    /// the session: end of output, a flood, or a message that is not JSON-RPC (all recorded).
    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        let flag = self.tools_changed.clone();
        let next = next_message(&mut self.stdout, &mut self.line, &self.report);
        async move {
            let message = next.await;
            if let (Some(flag), Some(JsonRpcMessage::Notification(notification))) =
                (&flag, &message)
                && matches!(
                    notification.notification,
                    ServerNotification::ToolListChangedNotification(_)
                )
            {
                flag.store(true, Ordering::Release);
            }
            message
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing stdin is how a stdio server is asked to exit.
        self.stdin.lock().await.take();
        Ok(())
    }
}

/// Reads lines until one is a message. Cancel-safe: a partial line stays in `line`.
async fn next_message(
    stdout: &mut BufReader<ChildStdout>,
    line: &mut Vec<u8>,
    report: &PipeReport,
) -> Option<RxJsonRpcMessage<RoleClient>> {
    loop {
        match read_bounded_line(stdout, line, MAX_MESSAGE_BYTES).await {
            LineRead::Line => {}
            LineRead::End => return None,
            LineRead::TooLong => {
                report.update(|events| {
                    events.given_up = Some(format!(
                        "sent a message over {} MiB (or output without line breaks), so earshot stopped reading it",
                        MAX_MESSAGE_BYTES >> 20
                    ));
                });
                return None;
            }
        }
        let parsed = {
            let text = line.trim_ascii();
            if text.is_empty() {
                None
            } else if !text.starts_with(b"{") {
                report.update(|events| note_noise(events, text));
                None
            } else {
                Some(
                    serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(text)
                        .map_err(|error| (is_noise(&error), error, text.to_vec())),
                )
            }
        };
        line.clear();
        match parsed {
            None => continue,
            Some(Ok(message)) => return Some(message),
            Some(Err((true, _, text))) => report.update(|events| note_noise(events, &text)),
            Some(Err((false, error, _))) => {
                // JSON, but no request can be matched to it (its id may be what is broken), so
                // waiting would only turn it into a timeout: the connection ends, with the reason.
                let reason: String = error.to_string().chars().take(200).collect();
                report.update(|events| {
                    events.given_up = Some(format!(
                        "sent a message that is not valid JSON-RPC ({reason}), so earshot stopped reading it"
                    ));
                });
                return None;
            }
        }
    }
}

/// A line that is not JSON at all (a log line that starts with `{`), as opposed to JSON that is
/// not a usable message, or JSON nested past the parser's depth limit.
fn is_noise(error: &serde_json::Error) -> bool {
    matches!(
        error.classify(),
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof
    ) && !error.to_string().contains("recursion limit")
}

/// Counts a skipped line and keeps the first one, shortened and stripped, for the report.
fn note_noise(events: &mut PipeEvents, line: &[u8]) {
    events.noise_lines += 1;
    if events.first_noise.is_none() {
        let shown = earshot_terminal_text::strip_controls(&String::from_utf8_lossy(
            &line[..line.len().min(400)],
        ));
        events.first_noise = Some(shorten(&shown, 80));
    }
}

enum LineRead {
    Line,
    End,
    TooLong,
}

/// Reads one `\n`-terminated line into `line` (continuing what a cancelled read left there),
/// never holding more than `max` bytes. Cancel-safe: bytes are copied and consumed together.
async fn read_bounded_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
    max: usize,
) -> LineRead {
    loop {
        let (used, done) = {
            let available = match reader.fill_buf().await {
                Ok(available) => available,
                Err(_) => return LineRead::End,
            };
            if available.is_empty() {
                return if line.is_empty() {
                    LineRead::End
                } else {
                    LineRead::Line
                };
            }
            let newline = available.iter().position(|byte| *byte == b'\n');
            let take = newline.map_or(available.len(), |at| at + 1);
            if line.len() + take > max {
                return LineRead::TooLong;
            }
            line.extend_from_slice(&available[..take]);
            (take, newline.is_some())
        };
        reader.consume(used);
        if done {
            return LineRead::Line;
        }
    }
}
