//! How the CLI writes: one-line errors with hints, warnings, tables and JSON; colour only on a
//! terminal and never with NO_COLOR.

use std::io::IsTerminal;

use crate::gate::sanitise_for_terminal;

fn colour_allowed() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
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
    let message = sanitise_for_terminal(message, 4_000);
    eprintln!("{} {message}", paint("error:", "31;1", colour));
    if let Some(hint) = hint {
        let hint = sanitise_for_terminal(hint, 1_000);
        eprintln!("{} {hint}", paint("hint:", "36", colour));
    }
}

/// One line on stdout, sanitised: it may hold a path or a name a repository chose (an archive's
/// folder name can carry escape sequences).
pub(crate) fn say(message: &str) {
    println!("{}", sanitise_for_terminal(message, 4_000));
}

/// `warning: …` on stderr, once per run: the same problem reached from two places (a settings
/// file read by two loaders, a server reported by the registry and by its start-up) is one line.
pub(crate) fn warning_line(message: &str) {
    static PRINTED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let message = sanitise_for_terminal(message, 4_000);
    {
        let mut printed = PRINTED.lock().unwrap_or_else(|p| p.into_inner());
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

/// Prints `value` as pretty JSON on stdout.
pub(crate) fn json(value: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).expect("JSON values serialise")
    );
}

/// A plain table: a header row and aligned columns; every cell sanitised for the terminal.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|cell| sanitise_for_terminal(cell, 400))
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
    println!(
        "{}",
        paint(
            &line(header.iter().map(|h| h.to_string()).collect()),
            "1",
            colour
        )
    );
    for row in rows {
        println!("{}", line(row));
    }
}
