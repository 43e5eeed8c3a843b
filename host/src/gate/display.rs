//! Making text a tool supplied safe to show in a terminal.

/// Removes escape sequences and control characters (a title carrying `\x1b[2K` or `\r` could
/// erase or overwrite what the prompt shows), folds newlines and tabs to spaces, and caps the
/// result at `max_chars` characters, marking the cut with `…`.
pub fn sanitise_for_terminal(text: &str, max_chars: usize) -> String {
    let mut clean = String::with_capacity(text.len().min(max_chars * 4));
    let mut chars = text.chars().peekable();
    let mut count = 0;
    while let Some(c) = chars.next() {
        let shown = match c {
            '\u{1b}' => {
                earshot_terminal_text::skip_escape_sequence(&mut chars);
                continue;
            }
            '\n' | '\t' | '\r' => ' ',
            c if earshot_terminal_text::is_bidi_override(c) => continue,
            '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}' => continue,
            c if c.is_control() => continue,
            c => c,
        };
        if count == max_chars {
            clean.push('…');
            break;
        }
        clean.push(shown);
        count += 1;
    }
    clean
}

/// Removes escape sequences and control characters except newline and tab, keeping the lines:
/// for multi-line text a tool produced (its output) before it reaches a terminal.
pub fn strip_for_terminal(text: &str) -> String {
    earshot_terminal_text::strip_controls(text)
}

#[cfg(test)]
mod tests {
    use super::sanitise_for_terminal;

    #[test]
    fn escape_sequences_and_carriage_returns_are_neutralised() {
        assert_eq!(
            sanitise_for_terminal("\u{1b}[2Kfake\rprompt", 80),
            "fake prompt"
        );
        assert_eq!(
            sanitise_for_terminal("a\u{1b}]0;title\u{7}b\u{0}c", 80),
            "abc"
        );
        let long = "x".repeat(10_000);
        let shown = sanitise_for_terminal(&long, 200);
        assert_eq!(shown.chars().count(), 201);
        assert!(shown.ends_with('…'));
    }
}
