//! How the CLI writes: one-line errors with hints, warnings, tables and JSON; colour only on a
//! terminal and never with NO_COLOR. Everything the CLI writes goes through here, and every line
//! is redacted ([`earshot_host::redact`]: no value a `${VAR}` expanded to is ever shown). JSON is
//! escaped for the terminal the way text is stripped ([`json_text`]).

use std::io::IsTerminal;

use earshot_host::gate::sanitise_for_terminal;
use earshot_host::redact::redact;

fn colour_allowed() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
}

/// `println!` that ignores a closed stdout (`earshot … | head`): the reader left, so there is
/// no one to report it to, and it must not be a panic.
macro_rules! stdout_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// Whether stderr gets colour.
pub(crate) fn colour_enabled_on_stderr() -> bool {
    colour_allowed() && std::io::stderr().is_terminal()
}

/// Whether stdout gets colour.
pub(crate) fn colour_enabled_on_stdout() -> bool {
    colour_allowed() && std::io::stdout().is_terminal()
}

fn paint(text: &str, code: &str, enabled: bool) -> String {
    if enabled {
        format!("\u{1b}[{code}m{text}\u{1b}[0m")
    } else {
        text.to_string()
    }
}

/// `error: …` and an optional `hint: …` on stderr.
pub(crate) fn error_line(message: &str, hint: Option<&str>) {
    let colour = colour_enabled_on_stderr();
    let message = sanitise_for_terminal(&redact(message), 4_000);
    eprintln!("{} {message}", paint("error:", "31;1", colour));
    if let Some(hint) = hint {
        let hint = sanitise_for_terminal(&redact(hint), 1_000);
        eprintln!("{} {hint}", paint("hint:", "36", colour));
    }
}

/// One line on stdout, sanitised: it may hold a path or a name a repository chose (an archive's
/// folder name can carry escape sequences).
pub(crate) fn say(message: &str) {
    stdout_line!("{}", sanitise_for_terminal(&redact(message), 4_000));
}

/// Text already made safe for the terminal (a tool's output, stripped), as it is, redacted.
pub(crate) fn out(text: &str) {
    stdout_line!("{}", redact(text));
}

/// One line on stderr (a notice, not a warning), redacted.
pub(crate) fn note(text: &str) {
    eprintln!("{}", redact(text));
}

/// `warning: …` on stderr, once per run: the same problem reached from two places (a settings
/// file read by two loaders, a server reported by the registry and by its start-up) is one line.
pub(crate) fn warning_line(message: &str) {
    static PRINTED: parking_lot::Mutex<Vec<String>> = parking_lot::Mutex::new(Vec::new());
    let message = sanitise_for_terminal(&redact(message), 4_000);
    {
        let mut printed = PRINTED.lock();
        if printed.contains(&message) {
            return;
        }
        printed.push(message.clone());
    }
    eprintln!(
        "{} {message}",
        paint("warning:", "33;1", colour_enabled_on_stderr())
    );
}

/// Prints `value` as pretty JSON on stdout (redacted, and escaped by [`json_text`]).
pub(crate) fn json(value: &serde_json::Value) {
    stdout_line!("{}", json_text(&earshot_host::redact::redact_json(value)));
}

/// `value` as pretty JSON in which every character the text output strips (C0 and C1 controls,
/// DEL, the bidirectional overrides and isolates) is written as a `\uXXXX` escape: the same
/// value for a JSON reader, nothing a terminal acts on.
pub(crate) fn json_text(value: &serde_json::Value) -> String {
    let text = serde_json::to_string_pretty(value).expect("JSON values serialise");
    if !text.chars().any(escaped_in_json) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escaped_in_json(c) {
            // Only inside strings (JSON's own syntax is ASCII without controls), all in the BMP.
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// What [`json_text`] escapes: what `strip_controls` drops, except the newline and tab that
/// serde_json already escapes.
fn escaped_in_json(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t' && c != '\r')
        || earshot_terminal_text::is_bidi_override(c)
}

/// A plain table: a header row and aligned columns; every cell sanitised for the terminal.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|cell| sanitise_for_terminal(&redact(cell), 400))
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (index, cell) in row.iter().enumerate() {
            widths[index] = widths[index].max(cell.chars().count());
        }
    }
    let colour = colour_enabled_on_stdout();
    let line = |cells: Vec<String>| {
        let last = cells.len() - 1;
        cells
            .into_iter()
            .enumerate()
            .map(|(index, cell)| {
                if index == last {
                    cell
                } else {
                    let pad = widths[index] - cell.chars().count();
                    format!("{cell}{}", " ".repeat(pad))
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    // A table under a label of its own (`tools:` in `mcp get`) has no header line.
    if header.iter().any(|h| !h.is_empty()) {
        stdout_line!(
            "{}",
            paint(
                &line(header.iter().map(|h| h.to_string()).collect()),
                "1",
                colour
            )
        );
    }
    for row in rows {
        stdout_line!("{}", line(row));
    }
}
