//! Making untrusted text safe to show: no control characters, no escape sequences, bounded length.

/// Removes control characters other than newline and tab, whole ANSI escape sequences (so that
/// `ESC[31m` does not leave `[31m` behind), and the bidirectional overrides used to disguise text.
pub fn sanitise(text: &str) -> String {
    let mut clean = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => clean.push(c),
            '\u{1b}' => skip_escape_sequence(&mut chars),
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {}
            c if c.is_control() => {}
            c => clean.push(c),
        }
    }
    clean
}

/// Skips the rest of an escape sequence whose ESC has been consumed: CSI (`ESC [ ... final`),
/// OSC (`ESC ] ... BEL` or `ESC \`), or a single following character.
fn skip_escape_sequence(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        }
        Some(']') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    if chars.peek() == Some(&'\\') {
                        chars.next();
                    }
                    break;
                }
            }
        }
        _ => {}
    }
}

/// Keeps the first `max_chars` characters of `text`; when it cuts, appends a note saying how
/// many characters were cut. Returns the text and the number of characters cut.
pub fn truncate(text: String, max_chars: usize) -> (String, u64) {
    let Some((cut_at, _)) = text.char_indices().nth(max_chars) else {
        return (text, 0);
    };
    let total = text.chars().count();
    let cut = total - max_chars;
    let mut kept = text;
    kept.truncate(cut_at);
    kept.push_str(&format!(
        "\n[output truncated: {cut} of {total} characters cut]"
    ));
    (kept, cut as u64)
}
