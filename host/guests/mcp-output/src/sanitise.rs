//! Making untrusted text safe to show: no control characters, no escape sequences, bounded length.

/// Removes control characters other than newline and tab, whole ANSI escape sequences, and the
/// bidirectional overrides used to disguise text (the same rules the host applies).
pub fn sanitise(text: &str) -> String {
    earshot_terminal_text::strip_controls(text)
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
