//! The last bytes a server wrote to stderr, kept in a bounded buffer so that a server that floods
//! stderr costs a fixed amount of memory, and every failure report can quote how its stderr ended.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncReadExt};

/// Bytes of stderr kept per server.
pub const STDERR_TAIL_BYTES: usize = 16 * 1024;

/// Lines of stderr quoted in a report.
const QUOTED_LINES: usize = 3;

/// The tail of one server's stderr, shared between the reader task and reports.
#[derive(Clone, Default)]
pub struct StderrTail {
    bytes: Arc<Mutex<VecDeque<u8>>>,
}

impl StderrTail {
    /// An empty tail.
    pub fn new() -> StderrTail {
        StderrTail::default()
    }

    /// Appends `chunk`, dropping the oldest bytes past the cap.
    pub fn push(&self, chunk: &[u8]) {
        let mut bytes = self.bytes.lock();
        let chunk = &chunk[chunk.len().saturating_sub(STDERR_TAIL_BYTES)..];
        let overflow = (bytes.len() + chunk.len()).saturating_sub(STDERR_TAIL_BYTES);
        bytes.drain(..overflow);
        bytes.extend(chunk);
    }

    /// How many bytes are held (never more than [`STDERR_TAIL_BYTES`]).
    pub fn len(&self) -> usize {
        self.bytes.lock().len()
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The last few non-empty lines, stripped of control characters, joined with ` | `; `None`
    /// when the server wrote nothing.
    pub fn last_lines(&self) -> Option<String> {
        let bytes: Vec<u8> = {
            let held = self.bytes.lock();
            held.iter().copied().collect()
        };
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<String> = text
            .lines()
            .map(|line| {
                earshot_terminal_text::strip_controls(line)
                    .trim()
                    .to_string()
            })
            .filter(|line| !line.is_empty())
            .collect();
        if lines.is_empty() {
            return None;
        }
        let quoted: Vec<String> = lines[lines.len().saturating_sub(QUOTED_LINES)..]
            .iter()
            .map(|line| shorten(line, 200))
            .collect();
        Some(quoted.join(" | "))
    }

    /// ` ; its stderr ended: …` for a report, or nothing when stderr was empty.
    pub fn report_suffix(&self) -> String {
        self.last_lines()
            .map(|lines| format!("; its stderr ended: {lines}"))
            .unwrap_or_default()
    }

    /// Reads `stderr` to its end into this tail (run as a task for the child's lifetime).
    pub async fn drain(self, mut stderr: impl AsyncRead + Unpin) {
        let mut buffer = vec![0u8; 8192];
        while let Ok(read) = stderr.read(&mut buffer).await {
            if read == 0 {
                break;
            }
            self.push(&buffer[..read]);
        }
    }
}

/// `text` cut to `max` characters, with `…` when cut.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_bounded_and_keeps_the_last_lines() {
        let tail = StderrTail::new();
        for i in 0..10_000 {
            tail.push(format!("line {i}\n").as_bytes());
        }
        assert!(tail.len() <= STDERR_TAIL_BYTES);
        assert_eq!(
            tail.last_lines().as_deref(),
            Some("line 9997 | line 9998 | line 9999")
        );
        tail.push(&vec![b'x'; 3 * STDERR_TAIL_BYTES]);
        assert_eq!(tail.len(), STDERR_TAIL_BYTES);
    }

    #[test]
    fn escapes_are_stripped_from_quoted_lines() {
        let tail = StderrTail::new();
        tail.push(b"\x1b[31mpanic\x1b[0m: boom\x07\n");
        assert_eq!(tail.last_lines().as_deref(), Some("panic: boom"));
    }
}
