//! What an extension's `console.*` may put on a terminal: its own module so that the runtime (the
//! console) and the job loop (errors of timers and promises) both use it without reaching into
//! each other.

/// The most characters of one console message that reach tracing; the rest is counted, not shown.
pub const CONSOLE_MAX_CHARS: usize = 4_000;

/// One console message made safe for a terminal, on one line: escape sequences, control
/// characters, bidirectional overrides and zero-width characters are removed; CR, LF and tab
/// are shown as the visible escapes `\r`, `\n` and `\t` (so a message cannot draw a line of its
/// own, such as a fake prompt); and it is capped at [`CONSOLE_MAX_CHARS`] characters.
pub fn sanitise_console(message: &str) -> String {
    crate::gate::sanitise_escaping_breaks(message, CONSOLE_MAX_CHARS)
}
