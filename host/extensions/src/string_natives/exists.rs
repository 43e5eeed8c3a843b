//! Whether a RegExp matches anywhere in a Latin1 text, answered by a finite automaton (the
//! `regex` crate) instead of the backtracking matcher: what `RegExp.prototype.test` returns for
//! a RegExp without `g` or `y` (which neither reads nor writes a match position). A per-line
//! `re.test(line)` spent most of its time in `regress`'s backtracking, and an automaton cannot
//! backtrack catastrophically.
//!
//! Only a pattern whose meaning is the same in both engines is translated: literal characters
//! (Latin1), `.`, `\d \D \w \W \s \S \b \B`, the escapes `\n \r \t \f \v \0 \xHH \uHHHH` and
//! escaped syntax characters, classes of those (with ranges), groups (capturing, named or not),
//! alternatives, `^`/`$` without the `m` flag, and the quantifiers `? * + {n} {n,} {n,m}` (greedy
//! or lazy). Backreferences, lookaround, the `i`, `m` (with anchors), `u` and `v` flags and every
//! Annex B oddity (a lone `{` or `]`, octal escapes, `\c`) stay with the backtracking matcher.
//! Without backreferences or lookaround a pattern describes a regular language, and whether some
//! match exists does not depend on which match a backtracking engine would pick.
//!
//! The text is matched as Latin1 bytes (one byte per code unit), so the automaton is built in
//! bytes mode without Unicode: every literal is written as `\xHH`, and the classes are spelled
//! out the way ECMAScript defines them for code units below 256 (`\s` is tab, LF, VT, FF, CR,
//! space and U+00A0; `.` is anything but LF and CR).

use regex::bytes::{Regex, RegexBuilder};

/// The automaton for `pattern` (the RegExp's source, as code units) under `flags`, or `None` when
/// the pattern or flags are outside what is translated (see the module comment).
pub(super) fn automaton(pattern: &[u16], flags: &str) -> Option<Regex> {
    if flags
        .chars()
        .any(|flag| matches!(flag, 'g' | 'y' | 'i' | 'u' | 'v'))
    {
        return None;
    }
    let multiline = flags.contains('m');
    let dot_all = flags.contains('s');
    let translated = Translator {
        pattern,
        at: 0,
        out: String::with_capacity(pattern.len() * 4),
        multiline,
        dot_all,
    }
    .translate()?;
    RegexBuilder::new(&translated)
        .unicode(false)
        .size_limit(1 << 20)
        .dfa_size_limit(1 << 20)
        .build()
        .ok()
}

/// `\d`, `\w` and `\s` as byte classes, without brackets (to be used inside a class).
const DIGIT: &str = r"0-9";
const WORD: &str = r"0-9A-Za-z_";
const SPACE: &str = r"\x09\x0A\x0B\x0C\x0D\x20\xA0";

/// One pass over the pattern, writing the `regex` crate's syntax.
struct Translator<'a> {
    pattern: &'a [u16],
    at: usize,
    out: String,
    multiline: bool,
    dot_all: bool,
}

impl Translator<'_> {
    fn peek(&self) -> Option<u16> {
        self.pattern.get(self.at).copied()
    }

    fn peek_byte(&self) -> Option<u8> {
        self.peek().and_then(|unit| u8::try_from(unit).ok())
    }

    fn next_unit(&mut self) -> Option<u16> {
        let unit = self.peek()?;
        self.at += 1;
        Some(unit)
    }

    fn literal(&mut self, byte: u8) {
        self.out.push_str(&format!("\\x{byte:02X}"));
    }

    fn translate(mut self) -> Option<String> {
        // Whether the last thing written can take a quantifier (an atom, not an assertion).
        let mut quantifiable = false;
        let mut depth = 0usize;
        while let Some(unit) = self.next_unit() {
            let Ok(byte) = u8::try_from(unit) else {
                // Not Latin1: such a literal can never match a Latin1 text, but keep it simple.
                return None;
            };
            quantifiable = match byte {
                b'\\' => self.escape()?,
                b'.' => {
                    self.out.push_str(if self.dot_all {
                        r"[\x00-\xFF]"
                    } else {
                        r"[^\x0A\x0D]"
                    });
                    true
                }
                b'^' | b'$' => {
                    if self.multiline {
                        return None;
                    }
                    self.out.push_str(if byte == b'^' { r"\A" } else { r"\z" });
                    false
                }
                b'(' => {
                    self.group_open()?;
                    depth += 1;
                    false
                }
                b')' => {
                    depth = depth.checked_sub(1)?;
                    self.out.push(')');
                    true
                }
                b'|' => {
                    self.out.push('|');
                    false
                }
                b'[' => {
                    self.class()?;
                    true
                }
                b'*' | b'+' | b'?' => {
                    if !quantifiable {
                        return None;
                    }
                    self.out.push(char::from(byte));
                    self.lazy_mark();
                    false
                }
                b'{' => {
                    if !quantifiable {
                        return None;
                    }
                    self.braces()?;
                    self.lazy_mark();
                    false
                }
                // A lone `}` or `]` is a literal only under Annex B: left to the matcher.
                b'}' | b']' => return None,
                _ => {
                    self.literal(byte);
                    true
                }
            };
        }
        (depth == 0).then_some(self.out)
    }

    /// A `?` after a quantifier (lazy): kept, it changes which match, not whether one exists.
    fn lazy_mark(&mut self) {
        if self.peek() == Some(u16::from(b'?')) {
            self.at += 1;
            self.out.push('?');
        }
    }

    /// After `(`: a plain, non-capturing or named group (all written as non-capturing);
    /// lookaround is refused.
    fn group_open(&mut self) -> Option<()> {
        if self.peek() == Some(u16::from(b'?')) {
            self.at += 1;
            match self.next_unit().and_then(|u| u8::try_from(u).ok())? {
                b':' => {}
                b'<' => {
                    // `(?<name>`; `(?<=` and `(?<!` are lookbehind.
                    let first = self.peek_byte()?;
                    if first == b'=' || first == b'!' {
                        return None;
                    }
                    loop {
                        let unit = self.next_unit()?;
                        if unit == u16::from(b'>') {
                            break;
                        }
                        let byte = u8::try_from(unit).ok()?;
                        if !(byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$') {
                            return None;
                        }
                    }
                }
                _ => return None,
            }
        }
        self.out.push_str("(?:");
        Some(())
    }

    /// After `{` that follows an atom: `{n}`, `{n,}` or `{n,m}`, else refused (Annex B literal).
    fn braces(&mut self) -> Option<()> {
        let start = self.at;
        let mut text = String::from("{");
        let mut digits_before_comma = 0;
        let mut comma = false;
        loop {
            let byte = self.next_unit().and_then(|u| u8::try_from(u).ok());
            match byte {
                Some(digit @ b'0'..=b'9') => {
                    if !comma {
                        digits_before_comma += 1;
                    }
                    text.push(char::from(digit));
                }
                Some(b',') if !comma && digits_before_comma > 0 => {
                    comma = true;
                    text.push(',');
                }
                Some(b'}') if digits_before_comma > 0 => {
                    text.push('}');
                    break;
                }
                _ => {
                    self.at = start;
                    return None;
                }
            }
        }
        self.out.push_str(&text);
        Some(())
    }

    /// After `\` outside a class; whether the result is an atom (quantifiable).
    fn escape(&mut self) -> Option<bool> {
        let byte = u8::try_from(self.next_unit()?).ok()?;
        match byte {
            b'b' => {
                self.out.push_str(r"\b");
                return Some(false);
            }
            b'B' => {
                self.out.push_str(r"\B");
                return Some(false);
            }
            b'd' => self.out.push_str(&format!("[{DIGIT}]")),
            b'D' => self.out.push_str(&format!("[^{DIGIT}]")),
            b'w' => self.out.push_str(&format!("[{WORD}]")),
            b'W' => self.out.push_str(&format!("[^{WORD}]")),
            b's' => self.out.push_str(&format!("[{SPACE}]")),
            b'S' => self.out.push_str(&format!("[^{SPACE}]")),
            _ => {
                let value = self.character_escape(byte)?;
                self.literal(value);
            }
        }
        Some(true)
    }

    /// The byte a character escape stands for (`\n`, `\xHH`, an escaped syntax character, ...),
    /// after its first character `byte`; `None` for anything else.
    fn character_escape(&mut self, byte: u8) -> Option<u8> {
        Some(match byte {
            b'n' => 0x0A,
            b'r' => 0x0D,
            b't' => 0x09,
            b'f' => 0x0C,
            b'v' => 0x0B,
            // `\0` not followed by a digit (else an Annex B octal escape).
            b'0' if !self.peek_byte().is_some_and(|b| b.is_ascii_digit()) => 0x00,
            b'x' => {
                let value = self.hex_digits(2)?;
                u8::try_from(value).ok()?
            }
            b'u' => {
                let value = self.hex_digits(4)?;
                u8::try_from(value).ok()?
            }
            b'^' | b'$' | b'\\' | b'.' | b'*' | b'+' | b'?' | b'(' | b')' | b'[' | b']' | b'{'
            | b'}' | b'|' | b'/' | b'-' => byte,
            _ => return None,
        })
    }

    /// Exactly `count` hex digits (`\x` and `\u` without them are Annex B literals: refused).
    fn hex_digits(&mut self, count: usize) -> Option<u32> {
        let mut value = 0;
        for _ in 0..count {
            let digit = char::from(self.peek_byte()?).to_digit(16)?;
            self.at += 1;
            value = value * 16 + digit;
        }
        Some(value)
    }

    /// After `[`: a class of literals, ranges and class escapes.
    fn class(&mut self) -> Option<()> {
        let negated = self.peek() == Some(u16::from(b'^'));
        if negated {
            self.at += 1;
        }
        // `[]` matches nothing and `[^]` anything; the `regex` crate spells neither that way.
        if self.peek() == Some(u16::from(b']')) {
            return None;
        }
        self.out.push_str(if negated { "[^" } else { "[" });
        loop {
            let unit = self.next_unit()?;
            let byte = u8::try_from(unit).ok()?;
            if byte == b']' {
                break;
            }
            let low = match self.class_atom(byte)? {
                ClassAtom::Byte(low) => low,
                ClassAtom::Set => {
                    // `[\s-a-z]`: Annex B reads a `-` after a class escape as a literal, and the
                    // `-` that follows as one more member; refused rather than reproduced.
                    if self.peek() == Some(u16::from(b'-'))
                        && self.pattern.get(self.at + 1) != Some(&u16::from(b']'))
                    {
                        return None;
                    }
                    continue;
                }
            };
            // A range `low-high`, unless the `-` is the last member.
            if self.peek() == Some(u16::from(b'-'))
                && self.pattern.get(self.at + 1) != Some(&u16::from(b']'))
            {
                self.at += 1;
                let next = u8::try_from(self.next_unit()?).ok()?;
                let ClassAtom::Byte(high) = self.class_atom(next)? else {
                    // `[\w-z]`: Annex B reads the `-` as a literal.
                    return None;
                };
                if high < low {
                    return None;
                }
                self.out.push_str(&format!("\\x{low:02X}-\\x{high:02X}"));
            } else {
                self.literal(low);
            }
        }
        self.out.push(']');
        Some(())
    }

    /// One class member after its first character `byte`: a byte, or a class escape written out.
    fn class_atom(&mut self, byte: u8) -> Option<ClassAtom> {
        if byte != b'\\' {
            // A `[` inside a class is a literal in ECMAScript; the `regex` crate would nest.
            return Some(ClassAtom::Byte(byte));
        }
        let escaped = u8::try_from(self.next_unit()?).ok()?;
        let set = match escaped {
            b'd' => DIGIT.to_owned(),
            b'w' => WORD.to_owned(),
            b's' => SPACE.to_owned(),
            b'D' => format!("[^{DIGIT}]"),
            b'W' => format!("[^{WORD}]"),
            b'S' => format!("[^{SPACE}]"),
            // `\b` in a class is a backspace.
            b'b' => return Some(ClassAtom::Byte(0x08)),
            _ => return self.character_escape(escaped).map(ClassAtom::Byte),
        };
        self.out.push_str(&set);
        Some(ClassAtom::Set)
    }
}

/// A class member: one byte (which may start a range) or a set already written.
enum ClassAtom {
    Byte(u8),
    Set,
}

#[cfg(test)]
mod tests {
    use super::automaton;

    fn matches(pattern: &str, flags: &str, text: &str) -> Option<bool> {
        let units: Vec<u16> = pattern.encode_utf16().collect();
        let bytes: Vec<u8> = text
            .chars()
            .map(|c| u8::try_from(u32::from(c)).unwrap())
            .collect();
        automaton(&units, flags).map(|re| re.is_match(&bytes))
    }

    #[test]
    fn translated_patterns_match_as_ecmascript_says() {
        assert_eq!(matches(r"qu?ick\s+\w+", "", "the quick fox"), Some(true));
        assert_eq!(matches(r"qu?ick\s+\w+", "", "the quick"), Some(false));
        assert_eq!(matches(r"^a.c$", "", "abc"), Some(true));
        assert_eq!(matches(r"^a.c$", "", "a\nc"), Some(false));
        assert_eq!(matches(r"^a.c$", "s", "a\nc"), Some(true));
        assert_eq!(matches(r"\bfox\b", "", "a fox."), Some(true));
        assert_eq!(matches(r"[^\d\s]x", "", "1x 2x"), Some(false));
        assert_eq!(matches(r"[\W-]", "", "abc-"), Some(true));
        assert_eq!(
            matches(r"[\w-]", "", "-"),
            Some(true),
            "a final - is a literal"
        );
        assert_eq!(
            matches(r"[a-\w]", "", "a"),
            None,
            "Annex B range ending in a class"
        );
        assert_eq!(matches(r"[a-c-]+$", "", "zz-ab"), Some(true));
        assert_eq!(matches(r"\s", "", "a\u{a0}b"), Some(true));
        assert_eq!(matches(r"caf\xe9", "", "caf\u{e9}"), Some(true));
        assert_eq!(
            matches(r"(?<w>\w+) (?:x|y){2,3}?", "", "ab xyx"),
            Some(true)
        );
        assert_eq!(matches(r"[\b]", "", "a\u{8}"), Some(true));
    }

    #[test]
    fn patterns_outside_the_common_meaning_are_refused() {
        for (pattern, flags) in [
            (r"(a)\1", ""),
            (r"a(?=b)", ""),
            (r"(?<!a)b", ""),
            (r"a", "i"),
            (r"a", "g"),
            (r"a", "y"),
            (r"a", "u"),
            (r"^a", "m"),
            (r"a{", ""),
            (r"a{1", ""),
            (r"]", ""),
            (r"}", ""),
            (r"\cA", ""),
            (r"\01", ""),
            (r"\8", ""),
            (r"\q", ""),
            (r"[]", ""),
            (r"[^]", ""),
            (r"*a", ""),
            (r"\u{41}", ""),
            (r"[\w-z]", ""),
            (r"[\s-a-z]", ""),
            (r"[\d--z]", ""),
            ("\u{1F600}", ""),
        ] {
            assert!(
                matches(pattern, flags, "a").is_none(),
                "/{pattern}/{flags} should be left to the backtracking matcher"
            );
        }
        assert_eq!(matches(r"a", "m", "a"), Some(true), "m without anchors");
    }
}
