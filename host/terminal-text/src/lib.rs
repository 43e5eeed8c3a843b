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
    let mut rest = text;
    while !rest.is_empty() {
        // Runs of ordinary text are copied whole: a result is mostly such runs, and copying them
        // in bulk instead of a character at a time is what keeps this fast inside a sandbox.
        let plain = plain_prefix_len(rest.as_bytes());
        clean.push_str(&rest[..plain]);
        rest = &rest[plain..];
        let Some(c) = rest.chars().next() else { break };
        let mut used = c.len_utf8();
        match c {
            '\n' | '\t' => clean.push(c),
            '\u{1b}' => used += escape_sequence_len(&rest[used..]),
            c if is_bidi_override(c) => {}
            c if c.is_control() => {}
            c => clean.push(c),
        }
        rest = &rest[used..];
    }
    clean
}

/// How many leading bytes of `bytes` are ordinary text that [`strip_controls`] keeps as it is:
/// it stops at a C0 control other than newline and tab, DEL, and the lead bytes of the only
/// multi-byte characters it may drop (0xC2: U+0080–U+00BF, the C1 controls; 0xE2:
/// U+2000–U+2FFF, the bidirectional overrides). Both are lead bytes, so the prefix always ends
/// on a character boundary.
fn plain_prefix_len(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .position(|&b| {
            (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f || b == 0xc2 || b == 0xe2
        })
        .unwrap_or(bytes.len())
}

/// The length in bytes of the rest of an escape sequence whose ESC came just before `rest`, as
/// [`skip_escape_sequence`] consumes it.
fn escape_sequence_len(rest: &str) -> usize {
    let mut chars = rest.char_indices();
    match chars.next() {
        None => 0,
        Some((_, '[')) => chars
            .find(|(_, c)| ('\u{40}'..='\u{7e}').contains(c))
            .map_or(rest.len(), |(at, c)| at + c.len_utf8()),
        Some((_, ']')) => {
            for (at, c) in chars {
                if c == '\u{7}' {
                    return at + 1;
                }
                if c == '\u{1b}' {
                    return if rest[at + 1..].starts_with('\\') {
                        at + 2
                    } else {
                        at + 1
                    };
                }
            }
            rest.len()
        }
        Some((_, c)) => c.len_utf8(),
    }
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

    /// The character-at-a-time definition the bulk-copying version must match.
    fn strip_by_char(text: &str) -> String {
        let mut clean = String::new();
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

    #[test]
    fn bulk_copying_matches_the_character_by_character_definition() {
        let alphabet = [
            "a", "é", "\u{80}", "\u{9f}", "©", "\u{2014}", "\u{202a}", "\u{202e}", "\u{2066}",
            "\u{2069}", "\u{2070}", "\u{1b}", "[", "]", "\\", "\u{7}", "m", "\u{7f}", "\r", "\n",
            "\t", "\u{0}", "😀", "@", "~",
        ];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            let mut text = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let length = (seed % 24) as usize;
            for _ in 0..length {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push_str(alphabet[(seed % alphabet.len() as u64) as usize]);
            }
            assert_eq!(strip_controls(&text), strip_by_char(&text), "{text:?}");
        }
    }
}
