//! Making text a tool supplied safe to show in a terminal.

/// Removes escape sequences and control characters (a title carrying `\x1b[2K` or `\r` could
/// erase or overwrite what the prompt shows), folds newlines and tabs to spaces, and caps the
/// result at `max_chars` characters, marking the cut with `…`.
pub fn sanitise_for_terminal(text: &str, max_chars: usize) -> String {
    let (mut clean, cut) = one_line(text, max_chars, Breaks::AsSpace);
    if cut > 0 {
        clean.push('…');
    }
    clean
}

/// As [`sanitise_for_terminal`], but CR, LF and tab are shown as the visible escapes `\r`, `\n`
/// and `\t` (for a log record, which must stay one line yet keep what the text said), and the
/// cut says how many characters were left out.
pub fn sanitise_escaping_breaks(text: &str, max_chars: usize) -> String {
    let (mut clean, cut) = one_line(text, max_chars, Breaks::Escaped);
    if cut > 0 {
        clean.push_str(&format!("… ({cut} more characters)"));
    }
    clean
}

/// How [`one_line`] shows a line break or a tab.
#[derive(Clone, Copy)]
enum Breaks {
    AsSpace,
    Escaped,
}

/// `text` on one line with escape sequences, control characters, bidi overrides and invisible
/// formatting characters removed, at most `max_chars` characters shown; with how many characters
/// of `text` were left out at the cut (0 when none was).
fn one_line(text: &str, max_chars: usize, breaks: Breaks) -> (String, usize) {
    let mut clean = String::with_capacity(text.len().min(max_chars * 4));
    let mut chars = text.chars().peekable();
    let mut count = 0;
    while let Some(c) = chars.next() {
        let escaped = match (c, breaks) {
            ('\u{1b}', _) => {
                earshot_terminal_text::skip_escape_sequence(&mut chars);
                continue;
            }
            ('\n' | '\t' | '\r', Breaks::AsSpace) => None,
            ('\r', Breaks::Escaped) => Some("\\r"),
            ('\n', Breaks::Escaped) => Some("\\n"),
            ('\t', Breaks::Escaped) => Some("\\t"),
            (c, _) if is_invisible(c) || c.is_control() => continue,
            _ => None,
        };
        if count == max_chars {
            return (clean, 1 + chars.count());
        }
        match (escaped, c) {
            (Some(shown), _) => clean.push_str(shown),
            (None, '\n' | '\t' | '\r') => clean.push(' '),
            (None, c) => clean.push(c),
        }
        count += 1;
    }
    (clean, 0)
}

/// Characters that change how a line looks without showing themselves: bidi overrides,
/// zero-width and joiner characters, line and paragraph separators, the byte-order mark.
fn is_invisible(c: char) -> bool {
    earshot_terminal_text::is_bidi_override(c)
        || matches!(
            c,
            '\u{200b}'..='\u{200f}' | '\u{2028}' | '\u{2029}' | '\u{2060}'..='\u{2064}' | '\u{feff}'
        )
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
