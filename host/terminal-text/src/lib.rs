//! Making untrusted text safe to show in a terminal, in one place for the host (titles, prompts,
//! tool output) and for its mcp-output sandbox (which builds for wasm32-wasip2), so the two can
//! never disagree about what is stripped.

#![no_std]
#![deny(missing_docs)]

extern crate alloc;

use alloc::string::String;
use core::iter::Peekable;
use core::str::Chars;

/// Removes control characters other than newline and tab, whole ANSI escape sequences (so that
/// `ESC[31m` does not leave `[31m` behind), and the bidirectional overrides used to disguise
/// text. Keeps the lines.
pub fn strip_controls(text: &str) -> String {
    let mut clean = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => clean.push(c),
            '\u{1b}' => skip_escape_sequence(&mut chars),
            c if is_bidi_override(c) => {}
            c if c.is_control() => {}
            c => clean.push(c),
        }
    }
    clean
}

/// The bidirectional embedding, override and isolate characters (U+202A–U+202E, U+2066–U+2069).
pub fn is_bidi_override(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Skips the rest of an escape sequence whose ESC has been consumed: CSI (`ESC [ ... final`),
/// OSC (`ESC ] ... BEL` or `ESC \`), or a single following character.
pub fn skip_escape_sequence(chars: &mut Peekable<Chars<'_>>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_escape_sequences_controls_and_overrides_go_and_lines_stay() {
        let text =
            "red\u{1b}[31m text\u{1b}]0;title\u{7} \r\u{202e}ok\nnext\tcol\u{1b}]8;;x\u{1b}\\";
        assert_eq!(strip_controls(text), "red text ok\nnext\tcol");
    }
}
