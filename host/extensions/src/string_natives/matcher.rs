//! A RegExp's pattern compiled again with `regress` (the engine Boa 0.22 uses, same version and
//! features), so the overrides can match without Boa's `RegExp.prototype.exec`, and the
//! replacement templates of `[Symbol.replace]` (GetSubstitution).
//!
//! Boa keeps a RegExp's `[[OriginalSource]]` private, and `.source` is not always that source:
//! `EscapeRegExpPattern` in 0.22 turns `/` into `\/` (so `/a\/b/` reads back as `a\\/b`, which
//! means something else: boa-dev/boa#5535) and a raw line terminator into its escape (`\n`,
//! `\r`, `\u2028`, `\u2029`); every other code unit is copied. A `.source` therefore compiles to
//! the same program exactly when it has no `/` and no raw line terminator was preceded by a
//! backslash in the original (which would show as a backslash before `\n`, `\r` or `\u202`).
//! A raw terminator anywhere else means the same character as its escape. Any other source is
//! left to Boa.

use std::cell::{Cell, OnceCell};

use boa_engine::JsString;
use boa_engine::string::{CodePoint, JsStr};
use regress::{Flags, Match, Regex};

/// A RegExp's program and the flags the overrides act on.
pub(super) struct Compiled {
    regex: Regex,
    pub(super) global: bool,
    pub(super) sticky: bool,
    /// `u` or `v`: matching by code point.
    pub(super) unicode: bool,
    /// The Latin1 code units a match can start with, when the pattern tells (see `first_units`).
    first: Option<FirstUnits>,
    /// Neither `i` nor Unicode mode: on an ASCII text the pattern means the same whether the
    /// text is read as bytes or as UTF-16 code units (no case folding, no surrogate pairs).
    bytes_mean_units: bool,
    /// The source and flags, for `automaton`.
    source: Vec<u16>,
    flags: String,
    /// The finite automaton that tells whether a match exists (see `exists.rs`), built at the
    /// second `test` that can use it (a pattern tested once is not worth compiling twice);
    /// `None` inside when the pattern is not translated.
    automaton: OnceCell<Option<regex::bytes::Regex>>,
    /// Whether a `test` has asked for the automaton before.
    asked: Cell<bool>,
}

impl Compiled {
    /// `source` (the value of the `source` getter) with `flags` (of the `flags` getter), compiled
    /// the way Boa's `RegExpInitialize` compiles the original; `None` when `source` may differ
    /// from the original (see the module comment) or does not compile.
    pub(super) fn new(source: &JsString, flags: &str) -> Option<Compiled> {
        if !round_trips(source) {
            return None;
        }
        let has = |flag| flags.contains(flag);
        let unicode = has('u') || has('v');
        let options = Flags {
            icase: has('i'),
            multiline: has('m'),
            dot_all: has('s'),
            unicode: has('u'),
            unicode_sets: has('v'),
            ..Flags::default()
        };
        // As `compile_native_regexp`: code points in Unicode mode, code units otherwise.
        let regex = if unicode {
            Regex::from_unicode(source.code_points().map(CodePoint::as_u32), options)
        } else {
            Regex::from_unicode(source.iter().map(u32::from), options)
        };
        let units: Vec<u16> = source.iter().collect();
        let first = if has('i') || has('v') {
            None
        } else {
            first_units(&units, unicode)
        };
        Some(Compiled {
            regex: regex.ok()?,
            global: has('g'),
            sticky: has('y'),
            unicode,
            first,
            bytes_mean_units: !has('i') && !unicode,
            source: units,
            flags: flags.to_owned(),
            automaton: OnceCell::new(),
            asked: Cell::new(false),
        })
    }

    /// Whether a match exists anywhere in the Latin1 text `bytes`, told by the automaton; `None`
    /// when the pattern has none (see `exists.rs`: never for `g` or `y`).
    pub(super) fn exists_in_latin1(&self, bytes: &[u8]) -> Option<bool> {
        if !self.asked.replace(true) {
            return None;
        }
        self.automaton
            .get_or_init(|| super::exists::automaton(&self.source, &self.flags))
            .as_ref()
            .map(|automaton| automaton.is_match(bytes))
    }

    /// The first match at or after `start` in `text` when `text` is ASCII and the pattern
    /// allows (see `bytes_mean_units`): the match `find` returns on its code units, found on the
    /// bytes themselves, so a short line needs no UTF-16 copy per call. `None` when this path
    /// does not apply; `Some(None)` for no match.
    pub(super) fn find_in_ascii(&self, text: &[u8], start: usize) -> Option<Option<Match>> {
        if !self.bytes_mean_units || !text.is_ascii() {
            return None;
        }
        let text = std::str::from_utf8(text).ok()?;
        Some(self.regex.find_from_ascii(text, start).next())
    }

    /// The first match at or after `start` in `units`, as `RegExpBuiltinExec` finds it (sticky
    /// is the caller's business).
    pub(super) fn find(&self, units: &[u16], start: usize) -> Option<Match> {
        if self.unicode {
            self.regex.find_from_utf16(units, start).next()
        } else {
            self.regex.find_from_ucs2(units, start).next()
        }
    }

    /// Where in the Latin1 text `bytes` a match at or after `start` can begin first: `Some(start)`
    /// when the pattern does not tell, `None` when no match can begin at all (regress 0.12 skips
    /// nothing by itself when built with `utf16`, so it would try every position).
    pub(super) fn candidate(&self, bytes: &[u8], start: usize) -> Option<usize> {
        let Some(first) = &self.first else {
            return Some(start);
        };
        let rest = bytes.get(start..)?;
        let found = match first.listed[..] {
            [a] => memchr::memchr(a, rest),
            [a, b] => memchr::memchr2(a, b, rest),
            [a, b, c] => memchr::memchr3(a, b, c, rest),
            _ => rest.iter().position(|&b| first.set[usize::from(b)]),
        };
        found.map(|at| at + start)
    }

    /// Every match from `start` on, each search starting after the previous match (one code
    /// unit, or one code point in Unicode mode, after an empty one): a global replace loop.
    pub(super) fn find_all(&self, units: &[u16], start: usize) -> Vec<Match> {
        if self.unicode {
            self.regex.find_from_utf16(units, start).collect()
        } else {
            self.regex.find_from_ucs2(units, start).collect()
        }
    }
}

/// The Latin1 code units a non-empty match must start with.
struct FirstUnits {
    set: [bool; 256],
    /// The members, when there are at most three (for memchr).
    listed: Vec<u8>,
}

/// The Latin1 units a match of `pattern` (without `i` or `v`) can start with, from a plain
/// prefix: literal characters and the escapes `\n \r \t \f \v \d \s \w` and escaped syntax
/// characters, each optionally quantified by `? * + {n…}`. `None` (no filter) for anything else,
/// or when every atom is optional (a match may be empty).
fn first_units(pattern: &[u16], unicode: bool) -> Option<FirstUnits> {
    if pattern.contains(&u16::from(b'|')) {
        return None;
    }
    let mut set = [false; 256];
    let mut at = 0;
    loop {
        let unit = *pattern.get(at)?;
        let mut atom = [false; 256];
        let mut next = at + 1;
        match u8::try_from(unit) {
            Ok(b'\\') => {
                let escaped = u8::try_from(*pattern.get(at + 1)?).ok()?;
                next = at + 2;
                match escaped {
                    b'n' => atom[0x0A] = true,
                    b'r' => atom[0x0D] = true,
                    b't' => atom[0x09] = true,
                    b'f' => atom[0x0C] = true,
                    b'v' => atom[0x0B] = true,
                    b'd' => atom[usize::from(b'0')..=usize::from(b'9')].fill(true),
                    b's' => {
                        for unit in [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0] {
                            atom[unit] = true;
                        }
                    }
                    b'w' => {
                        atom[usize::from(b'0')..=usize::from(b'9')].fill(true);
                        atom[usize::from(b'A')..=usize::from(b'Z')].fill(true);
                        atom[usize::from(b'a')..=usize::from(b'z')].fill(true);
                        atom[usize::from(b'_')] = true;
                    }
                    b'^' | b'$' | b'\\' | b'.' | b'*' | b'+' | b'?' | b'(' | b')' | b'[' | b']'
                    | b'{' | b'}' | b'/' => atom[usize::from(escaped)] = true,
                    _ => return None,
                }
            }
            Ok(
                b'^' | b'$' | b'.' | b'*' | b'+' | b'?' | b'(' | b')' | b'[' | b']' | b'{' | b'}',
            ) => {
                return None;
            }
            Ok(byte) => atom[usize::from(byte)] = true,
            Err(_) => {
                // Not Latin1: matches nothing in a Latin1 text. A surrogate pair is one atom in
                // Unicode mode.
                if unicode
                    && (0xD800..=0xDBFF).contains(&unit)
                    && pattern
                        .get(at + 1)
                        .is_some_and(|u| (0xDC00..=0xDFFF).contains(u))
                {
                    next = at + 2;
                }
            }
        }
        for (member, &inside) in set.iter_mut().zip(&atom) {
            *member |= inside;
        }
        let optional = match pattern.get(next).and_then(|&u| u8::try_from(u).ok()) {
            Some(b'?' | b'*') => {
                next += 1;
                true
            }
            Some(b'+') => {
                next += 1;
                false
            }
            Some(b'{') => return None,
            _ => false,
        };
        if pattern.get(next) == Some(&u16::from(b'?')) {
            next += 1;
        }
        if !optional {
            break;
        }
        at = next;
    }
    let listed: Vec<u8> = (0..=255u8).filter(|&b| set[usize::from(b)]).collect();
    Some(FirstUnits {
        set,
        listed: if listed.len() <= 3 {
            listed
        } else {
            Vec::new()
        },
    })
}

/// Whether `source` (from the `source` getter) is provably the original pattern, or one that
/// means the same (see the module comment).
fn round_trips(source: &JsString) -> bool {
    let units: Vec<u16> = source.iter().collect();
    let slash = u16::from(b'/');
    let backslash = u16::from(b'\\');
    if units.contains(&slash) {
        return false;
    }
    !units.windows(3).any(|w| {
        w[0] == backslash
            && w[1] == backslash
            && (w[2] == u16::from(b'n') || w[2] == u16::from(b'r') || w[2] == u16::from(b'u'))
    })
}

const EMPTY: JsStr<'static> = JsStr::latin1(&[]);

/// One piece of a replacement template.
enum Piece {
    /// Template code units `start..end`, copied.
    Literal(usize, usize),
    /// `$&`
    Matched,
    /// `` $` ``
    Before,
    /// `$'`
    After,
    /// `$n` / `$nn` naming an existing capture (1-based).
    Capture(usize),
    /// `$<name>` with named groups present.
    Named(String),
    /// `$<name>` whose name no group can have (not valid UTF-16): always empty.
    Nothing,
}

/// A replacement template parsed once for a regex with `captures` groups (GetSubstitution,
/// ECMA-262 2024: two digits when that names an existing capture, else one; `$<` literal when the
/// regex has no named groups or no `>` follows).
pub(super) struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    pub(super) fn parse(template: JsStr<'_>, captures: usize, named: bool) -> Template {
        let units: Vec<u16> = template.iter().collect();
        let unit = |at: usize| units.get(at).copied().and_then(|u| u8::try_from(u).ok());
        let digit = |at: usize| {
            unit(at)
                .filter(u8::is_ascii_digit)
                .map(|d| usize::from(d - b'0'))
        };
        let mut pieces = Vec::new();
        let mut literal = 0;
        let mut at = 0;
        while at < units.len() {
            if unit(at) != Some(b'$') {
                at += 1;
                continue;
            }
            let (piece, next) = match unit(at + 1) {
                Some(b'$') => (Piece::Literal(at, at + 1), at + 2),
                Some(b'&') => (Piece::Matched, at + 2),
                Some(b'`') => (Piece::Before, at + 2),
                Some(b'\'') => (Piece::After, at + 2),
                Some(b'0'..=b'9') => {
                    let first = digit(at + 1).unwrap_or(0);
                    let two = digit(at + 2).map(|second| first * 10 + second);
                    match two {
                        Some(index) if (1..=captures).contains(&index) => {
                            (Piece::Capture(index), at + 3)
                        }
                        Some(index) if index <= captures => {
                            // "$00" (or "$0d" naming no capture with two digits): literal.
                            (Piece::Literal(at, at + 3), at + 3)
                        }
                        _ if (1..=captures).contains(&first) => (Piece::Capture(first), at + 2),
                        _ => (Piece::Literal(at, at + 2), at + 2),
                    }
                }
                Some(b'<') if named => {
                    match units[at + 2..].iter().position(|&u| u == u16::from(b'>')) {
                        Some(length) => {
                            let name = &units[at + 2..at + 2 + length];
                            let piece =
                                String::from_utf16(name).map_or(Piece::Nothing, Piece::Named);
                            (piece, at + 3 + length)
                        }
                        None => (Piece::Literal(at, at + 2), at + 2),
                    }
                }
                _ => {
                    at += 1;
                    continue;
                }
            };
            if literal < at {
                pieces.push(Piece::Literal(literal, at));
            }
            pieces.push(piece);
            at = next;
            literal = next;
        }
        if literal < units.len() {
            pieces.push(Piece::Literal(literal, units.len()));
        }
        Template { pieces }
    }

    /// Appends the replacement for `found` in `text` to `out`.
    pub(super) fn expand<'a>(
        &self,
        template: JsStr<'a>,
        text: JsStr<'a>,
        found: &Match,
        out: &mut Vec<JsStr<'a>>,
    ) {
        let slice = |start: usize, end: usize| text.get(start..end).unwrap_or(EMPTY);
        for piece in &self.pieces {
            match piece {
                Piece::Literal(start, end) => out.push(template.get(*start..*end).unwrap_or(EMPTY)),
                Piece::Matched => out.push(slice(found.start(), found.end())),
                Piece::Before => out.push(slice(0, found.start())),
                Piece::After => out.push(slice(found.end().min(text.len()), text.len())),
                Piece::Capture(index) => {
                    if let Some(range) = found.group(*index) {
                        out.push(slice(range.start, range.end));
                    }
                }
                Piece::Named(name) => {
                    if let Some((_, Some(range))) = found.named_groups().find(|(n, _)| n == name) {
                        out.push(slice(range.start, range.end));
                    }
                }
                Piece::Nothing => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Compiled;
    use boa_engine::js_string;

    #[test]
    fn a_test_without_g_is_answered_by_the_automaton() {
        let plain = Compiled::new(&js_string!(r"qu?ick\s+\w+"), "").expect("compiles");
        assert_eq!(
            plain.exists_in_latin1(b"the quick fox"),
            None,
            "not on its first use"
        );
        assert_eq!(plain.exists_in_latin1(b"the quick fox"), Some(true));
        assert_eq!(plain.exists_in_latin1(b"the quick"), Some(false));
        let global = Compiled::new(&js_string!(r"qu?ick"), "g").expect("compiles");
        assert_eq!(global.exists_in_latin1(b"quick"), None);
        assert_eq!(
            global.exists_in_latin1(b"quick"),
            None,
            "g needs the match's end"
        );
    }
}
