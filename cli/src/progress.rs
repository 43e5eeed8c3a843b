//! The progress line shown on a terminal while MCP servers connect (`connecting to MCP servers… 2/3`), erased
//! once they have; nothing at all when stderr is not a terminal.

use std::io::{IsTerminal, Write};

use earshot_host::mcp::StartProgress;

/// Prints progress on stderr when it is a terminal.
pub(crate) struct ProgressLine {
    on_terminal: bool,
    shown: bool,
}

impl ProgressLine {
    /// A progress line for this process's stderr when `servers` are configured; starts with
    /// `connecting to MCP servers…` (how many will start is known once trust is checked).
    pub fn start(servers: usize) -> ProgressLine {
        let on_terminal = std::io::stderr().is_terminal() && servers > 0;
        if on_terminal {
            eprint!("connecting to MCP servers…");
            let _ = std::io::stderr().flush();
        }
        ProgressLine {
            on_terminal,
            shown: on_terminal,
        }
    }

    /// Updates the line after one server finished.
    pub fn update(&mut self, progress: StartProgress<'_>) {
        if self.on_terminal {
            let name: String = progress.finished.chars().take(40).collect();
            eprint!(
                "\r\x1b[2Kconnecting to MCP servers… {}/{} ({name} done)",
                progress.done, progress.total
            );
            let _ = std::io::stderr().flush();
        }
    }

    /// Erases the line.
    pub fn finish(&mut self) {
        if self.shown {
            eprint!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
            self.shown = false;
        }
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        self.finish();
    }
}
