//! How a child process ended, said in words, and how long one gets to end: shared by the MCP
//! client's stdio servers and by hooks' commands.

use std::time::Duration;

/// How long a server gets to exit after its stdin closes, and again after SIGTERM.
pub const SHUTDOWN_GRACE: Duration = Duration::from_millis(1500);

/// `exited with code 1` or `was killed by signal 9`.
pub fn describe_exit(status: std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with code {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    "exited".into()
}
