//! Parsing a repository's TypeScript/JavaScript without letting it crash earshot.
//!
//! oxc parses (and its later passes walk) recursively, so a file nested deep enough, such as
//! `export default [[[[…]]]]` 100,000 levels down, `!!!!…x`, or `a.b.c.…` for the passes after
//! the parser, would overflow the stack, and a stack overflow aborts the whole process: the user's
//! own tools with it. Before oxc sees a file, earshot therefore:
//!
//! * refuses a file over [`MAX_SOURCE_BYTES`];
//! * scans it once, without recursion, for how deep it nests ([`nesting_depth`]): every open
//!   bracket, template substitution, operator and keyword counts one level until its statement,
//!   list item or bracket ends, an over-estimate of how deep oxc recurses; a file deeper than
//!   [`MAX_NESTING`] is refused with its line and column;
//! * and parses on a thread of its own with a [`PARSE_STACK_BYTES`] stack, many times what
//!   [`MAX_NESTING`] levels need, so that what the scan lets through cannot reach the end of it.
//!
//! The scan reads strings, comments, template literals and regular expressions the way the
//! language does. Where a `/` could start a regular expression or be a division depending on
//! what the parser makes of the code before it (right after a `}` or a `>`, or after `let` or
//! `of`), and for identifiers written with `\u` escapes, it refuses the file rather than guess,
//! so that no file can make the scan read code as a string and hide nesting from it.

use std::path::Path;

/// The largest extension file (entry or helper) earshot parses: 4 MiB, room for a bundle.
pub const MAX_SOURCE_BYTES: usize = 4 << 20;

/// The deepest nesting [`nesting_depth`] lets through to the parser.
pub const MAX_NESTING: usize = 1_000;

/// The stack of the thread that parses: oxc needs at most a few KiB a level (about 3 KiB in a
/// release build for the deepest construct, several times that in a debug build), so this is
/// well over what [`MAX_NESTING`] levels take. Only the pages used are ever committed.
pub const PARSE_STACK_BYTES: usize = 256 << 20;

/// Checks that `source` is small and shallow enough for oxc.
///
/// # Errors
/// The byte offset of the problem and one line saying what it is and what to do (without the
/// file's name; [`located`] adds it).
pub fn check_source(source: &str) -> Result<(), (usize, String)> {
    if source.len() > MAX_SOURCE_BYTES {
        return Err((
            0,
            format!(
                "the file is {} bytes, over the {} MiB earshot parses in one extension file; split it into smaller files",
                source.len(),
                MAX_SOURCE_BYTES >> 20
            ),
        ));
    }
    nesting_depth(source, MAX_NESTING)
        .map(|_| ())
        .map_err(|refusal| (refusal.offset(), refusal.to_string()))
}

/// `path:line:col: message` for a byte offset into `source`.
pub fn located(path: &Path, source: &str, (offset, message): (usize, String)) -> String {
    let before = source.get(..offset).unwrap_or(source);
    let line = before.matches('\n').count() + 1;
    let column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    format!("{}:{line}:{column}: {message}", path.display())
}

thread_local! {
    static ON_PARSE_STACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Declares that the calling thread was started with a stack of at least [`PARSE_STACK_BYTES`]
/// (an extension's JS thread, the loader's admission threads): [`on_parse_thread`] then parses
/// on it directly.
///
/// # Panics
/// When `stack_bytes` (the size the thread was started with) is smaller.
pub fn declare_parse_stack(stack_bytes: usize) {
    assert!(
        stack_bytes >= PARSE_STACK_BYTES,
        "a parse needs a {PARSE_STACK_BYTES}-byte stack"
    );
    ON_PARSE_STACK.set(true);
}

/// Runs `work` (which parses) on a thread with a [`PARSE_STACK_BYTES`] stack (this one, when
/// [`declare_parse_stack`] said it has one) and returns what it returns.
///
/// # Errors
/// When the thread cannot be started, or `work` panicked (a bug in the parser, not the file's
/// fault, but it costs only this file).
pub fn on_parse_thread<T: Send>(path: &Path, work: impl FnOnce() -> T + Send) -> Result<T, String> {
    if ON_PARSE_STACK.get() {
        // This thread's own stack is at least as large: a thread of its own would only add its
        // start-up. A panic still costs only this file.
        return std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).map_err(|_| {
            format!(
                "the TypeScript parser failed on {}; earshot does not load it",
                path.display()
            )
        });
    }
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("oxc-parse".into())
            .stack_size(PARSE_STACK_BYTES)
            .spawn_scoped(scope, work)
            .map_err(|error| {
                format!("cannot start a thread to parse {}: {error}", path.display())
            })?;
        handle.join().map_err(|_| {
            format!(
                "the TypeScript parser failed on {}; earshot does not load it",
                path.display()
            )
        })
    })
}

/// Why [`nesting_depth`] refused a source, at a byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanRefusal {
    /// It nests deeper than the limit.
    TooDeep {
        /// The limit.
        limit: usize,
        /// Where the limit was passed.
        offset: usize,
    },
    /// A `/` the scan cannot classify as a division or a regular expression.
    AmbiguousSlash {
        /// Where the `/` is.
        offset: usize,
    },
    /// An identifier written with a `\` escape.
    EscapedIdentifier {
        /// Where the `\` is.
        offset: usize,
    },
}

impl ScanRefusal {
    /// Where in the source.
    pub fn offset(&self) -> usize {
        match self {
            ScanRefusal::TooDeep { offset, .. }
            | ScanRefusal::AmbiguousSlash { offset }
            | ScanRefusal::EscapedIdentifier { offset } => *offset,
        }
    }
}

impl std::fmt::Display for ScanRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScanRefusal::TooDeep { limit, .. } => write!(
                f,
                "nests deeper than {limit} levels (brackets, operators and statements inside one another); earshot does not parse it"
            ),
            ScanRefusal::AmbiguousSlash { .. } => write!(
                f,
                "this `/` could be a division or start a regular expression, and earshot does not parse what it cannot read safely; put the expression before it in parentheses or end the statement with `;`"
            ),
            ScanRefusal::EscapedIdentifier { .. } => write!(
                f,
                "an identifier written with a `\\` escape; earshot does not parse it; write the identifier plainly"
            ),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FrameKind {
    Top,
    Paren { statement_head: bool },
    Bracket,
    Brace,
    Template,
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    kind: FrameKind,
    /// Operators and keywords since this frame's statement or list item began.
    ops: usize,
}

/// What the previous token tells about a `/` that follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prev {
    /// The start, an operator, an open bracket, `,`, `;` or a keyword that takes an
    /// expression: a `/` starts a regular expression.
    ExpressionNext,
    /// A value (identifier, literal, `]`, postfix operator): a `/` divides.
    Value,
    /// `)` of `if (…)`, `while (…)`, `for (…)`, `with (…)`: a statement follows.
    StatementHead,
    /// A `}`, `>`, `let` or `of`: either could follow.
    Ambiguous,
}

/// The previous token, as far as the scan needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Last {
    Start,
    Word,
    Value,
    Punct,
    CloseBrace,
}

struct Scanner<'s> {
    bytes: &'s [u8],
    at: usize,
    frames: Vec<Frame>,
    total: usize,
    deepest: usize,
    limit: usize,
    prev: Prev,
    last: Last,
    /// The last two words (identifiers or keywords), when they were the last tokens.
    words: [&'s str; 2],
    newline_before: bool,
    pending_reset: bool,
}

/// Reserved words after which a `/` starts a regular expression.
const EXPRESSION_KEYWORDS: &[&str] = &[
    "return",
    "typeof",
    "instanceof",
    "in",
    "new",
    "delete",
    "void",
    "throw",
    "case",
    "do",
    "else",
    "yield",
    "await",
    "extends",
    "default",
    "export",
    "import",
    "if",
    "while",
    "for",
    "with",
    "switch",
    "try",
    "catch",
    "finally",
    "const",
    "var",
    "function",
    "class",
];

/// Words that are keywords only in some places (and names elsewhere): a `/` after them could be
/// either, so the scan refuses it; they count as operators (`keyof keyof T` nests).
const CONTEXTUAL_WORDS: &[&str] = &[
    "as",
    "satisfies",
    "is",
    "asserts",
    "infer",
    "keyof",
    "readonly",
    "unique",
    "let",
    "of",
];

/// Words that may continue the statement before them, so that a line break or `}` before them
/// does not end it.
const CONTINUING_WORDS: &[&str] = &[
    "in",
    "instanceof",
    "of",
    "as",
    "satisfies",
    "extends",
    "implements",
    "else",
    "while",
    "catch",
    "finally",
];

/// The deepest nesting of `source` (an over-estimate of how deep a parser recurses on it), or why
/// it was refused; the scan stops as soon as the nesting passes `limit`.
///
/// # Errors
/// A [`ScanRefusal`].
pub fn nesting_depth(source: &str, limit: usize) -> Result<usize, ScanRefusal> {
    let mut scanner = Scanner {
        bytes: source.as_bytes(),
        at: 0,
        frames: vec![Frame {
            kind: FrameKind::Top,
            ops: 0,
        }],
        total: 0,
        deepest: 0,
        limit,
        prev: Prev::ExpressionNext,
        last: Last::Start,
        words: ["", ""],
        newline_before: false,
        pending_reset: false,
    };
    scanner.run(source)?;
    Ok(scanner.deepest)
}

/// Whether `byte` continues an identifier (non-ASCII bytes are taken as identifier characters;
/// the Unicode line terminators are checked before this).
fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'$' | b'#' | b'\\') || byte >= 0x80
}

impl<'s> Scanner<'s> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.at + ahead).copied()
    }

    /// The length of a line terminator at the cursor: LF, CR, U+2028 or U+2029.
    fn line_terminator(&self) -> usize {
        match self.peek(0) {
            Some(b'\n' | b'\r') => 1,
            Some(0xe2)
                if self.peek(1) == Some(0x80) && matches!(self.peek(2), Some(0xa8 | 0xa9)) =>
            {
                3
            }
            _ => 0,
        }
    }

    fn top(&mut self) -> &mut Frame {
        self.frames
            .last_mut()
            .expect("the top frame is never popped")
    }

    fn check(&mut self) -> Result<(), ScanRefusal> {
        self.deepest = self.deepest.max(self.total);
        if self.total > self.limit {
            return Err(ScanRefusal::TooDeep {
                limit: self.limit,
                offset: self.at.min(self.bytes.len()),
            });
        }
        Ok(())
    }

    fn op(&mut self, count: usize) -> Result<(), ScanRefusal> {
        self.top().ops += count;
        self.total += count;
        self.check()
    }

    fn reset(&mut self) {
        let ops = std::mem::take(&mut self.top().ops);
        self.total -= ops;
    }

    fn push(&mut self, kind: FrameKind) -> Result<(), ScanRefusal> {
        self.frames.push(Frame { kind, ops: 0 });
        self.total += 1;
        self.check()
    }

    /// Pops frames down to and including the nearest one that `close` closes, returning its
    /// kind; `None` when no open frame matches (the parser stops there with a syntax error).
    fn pop(&mut self, close: u8) -> Option<FrameKind> {
        let matches = |kind: FrameKind| match close {
            b')' => matches!(kind, FrameKind::Paren { .. }),
            b']' => kind == FrameKind::Bracket,
            _ => matches!(kind, FrameKind::Brace | FrameKind::Template),
        };
        let index = self.frames.iter().rposition(|frame| matches(frame.kind))?;
        if index == 0 {
            return None;
        }
        let kind = self.frames[index].kind;
        for frame in self.frames.drain(index..) {
            self.total -= 1 + frame.ops;
        }
        Some(kind)
    }

    fn run(&mut self, source: &'s str) -> Result<(), ScanRefusal> {
        // A hashbang line is a comment to the parser.
        if self.bytes.starts_with(b"#!") {
            self.skip_line();
        }
        while self.at < self.bytes.len() {
            let terminator = self.line_terminator();
            if terminator > 0 {
                self.at += terminator;
                self.newline_before = true;
                continue;
            }
            match (self.bytes[self.at], self.peek(1)) {
                (b' ' | b'\t' | 0x0b | 0x0c, _) => self.at += 1,
                (b'/', Some(b'/')) => self.skip_line(),
                (b'/', Some(b'*')) => self.skip_block_comment(),
                _ => {
                    self.token(source)?;
                    self.newline_before = false;
                }
            }
        }
        Ok(())
    }

    fn skip_line(&mut self) {
        while self.at < self.bytes.len() && self.line_terminator() == 0 {
            self.at += 1;
        }
    }

    fn skip_block_comment(&mut self) {
        self.at += 2;
        while self.at < self.bytes.len() {
            if self.bytes[self.at] == b'*' && self.peek(1) == Some(b'/') {
                self.at += 2;
                return;
            }
            let terminator = self.line_terminator();
            if terminator > 0 {
                self.newline_before = true;
                self.at += terminator;
            } else {
                self.at += 1;
            }
        }
    }

    /// A string literal, from its opening quote; it ends at its closing quote or, unterminated,
    /// at a line break (where the parser stops with an error).
    fn skip_string(&mut self, quote: u8) {
        self.at += 1;
        while let Some(byte) = self.peek(0) {
            if byte == b'\\' {
                self.at += 1;
                let terminator = self.line_terminator();
                if terminator > 0 {
                    self.at += terminator;
                    if self.peek(0) == Some(b'\n') && self.bytes[self.at - 1] == b'\r' {
                        self.at += 1;
                    }
                } else {
                    self.at += 1;
                }
            } else if byte == quote {
                self.at += 1;
                return;
            } else if byte == b'\n' || byte == b'\r' {
                return;
            } else {
                self.at += 1;
            }
        }
    }

    /// A regular expression literal, from its opening `/` (flags are read as a word after it).
    fn skip_regex(&mut self) {
        self.at += 1;
        let mut in_class = false;
        while self.at < self.bytes.len() {
            if self.line_terminator() > 0 {
                return;
            }
            match self.bytes[self.at] {
                b'\\' => {
                    self.at += 1;
                    if self.line_terminator() > 0 {
                        return;
                    }
                }
                b'[' => in_class = true,
                b']' => in_class = false,
                b'/' if !in_class => {
                    self.at += 1;
                    return;
                }
                _ => {}
            }
            self.at += 1;
        }
    }

    /// Template text, after its opening backtick or after the `}` of a substitution: up to the
    /// closing backtick, or into the next `${`.
    fn template_text(&mut self) -> Result<(), ScanRefusal> {
        while let Some(byte) = self.peek(0) {
            match byte {
                b'\\' => self.at += 2,
                b'`' => {
                    self.at += 1;
                    // A literal after a value is a tagged template, one level down a chain.
                    self.op(1)?;
                    self.prev = Prev::Value;
                    self.last = Last::Value;
                    return Ok(());
                }
                b'$' if self.peek(1) == Some(b'{') => {
                    self.at += 2;
                    self.push(FrameKind::Template)?;
                    self.prev = Prev::ExpressionNext;
                    self.last = Last::Punct;
                    return Ok(());
                }
                _ => self.at += 1,
            }
        }
        Ok(())
    }

    fn token(&mut self, source: &'s str) -> Result<(), ScanRefusal> {
        let start = self.at;
        let byte = self.bytes[start];
        let mut word_end = start;
        let word = if is_word_byte(byte) {
            let mut end = start;
            while end < self.bytes.len()
                && is_word_byte(self.bytes[end])
                && !(self.bytes[end] == 0xe2
                    && self.bytes.get(end + 1) == Some(&0x80)
                    && matches!(self.bytes.get(end + 2), Some(0xa8 | 0xa9)))
            {
                end += 1;
            }
            word_end = end;
            Some(source.get(start..end).unwrap_or("?"))
        } else {
            None
        };

        // Where a statement (or list item) ends, its operators stop counting.
        let starts_statement = match word {
            Some(word) => !CONTINUING_WORDS.contains(&word),
            None => {
                matches!(byte, b'{' | b'!' | b'~' | b'\'' | b'"' | b'@' | b';')
                    || (byte == b'+' && self.peek(1) == Some(b'+'))
                    || (byte == b'-' && self.peek(1) == Some(b'-'))
            }
        };
        if self.pending_reset {
            self.pending_reset = false;
            if !matches!(word, Some("else" | "while")) {
                self.reset();
            }
        } else if starts_statement
            && (self.last == Last::CloseBrace || (self.newline_before && self.last == Last::Value))
        {
            self.reset();
        }

        if let Some(word) = word {
            if let Some(escape) = word.find('\\') {
                return Err(ScanRefusal::EscapedIdentifier {
                    offset: start + escape,
                });
            }
            self.at = word_end;
            let property = self.last == Last::Punct && self.words == ["", "."];
            // `x as const` and `x as void` end in a type, not before an expression.
            let type_after_as = matches!(self.words[1], "as" | "satisfies")
                && self.last == Last::Word
                && matches!(word, "const" | "void");
            if property {
                self.prev = Prev::Value;
                self.last = Last::Value;
                self.words = [self.words[1], ""];
            } else if type_after_as {
                self.op(1)?;
                self.prev = Prev::Value;
                self.last = Last::Value;
                self.words = [self.words[1], word];
            } else if EXPRESSION_KEYWORDS.contains(&word) {
                self.op(1)?;
                self.prev = Prev::ExpressionNext;
                self.last = Last::Word;
                self.words = [self.words[1], word];
            } else if CONTEXTUAL_WORDS.contains(&word) {
                self.op(1)?;
                self.prev = Prev::Ambiguous;
                self.last = Last::Word;
                self.words = [self.words[1], word];
            } else {
                self.prev = Prev::Value;
                self.last = Last::Value;
                self.words = [self.words[1], word];
            }
            return Ok(());
        }

        let after_value = self.last == Last::Value && !self.newline_before;
        let previous_words = self.words;
        self.words = ["", ""];
        self.at += 1;
        match byte {
            b'(' => {
                let head = matches!(previous_words[1], "if" | "while" | "for" | "with")
                    || previous_words == ["for", "await"];
                self.push(FrameKind::Paren {
                    statement_head: head && self.last == Last::Word,
                })?;
                self.prev = Prev::ExpressionNext;
                self.last = Last::Punct;
            }
            b'[' | b'{' => {
                self.push(if byte == b'[' {
                    FrameKind::Bracket
                } else {
                    FrameKind::Brace
                })?;
                self.prev = Prev::ExpressionNext;
                self.last = Last::Punct;
            }
            b')' | b']' => {
                let popped = self.pop(byte);
                // A call or member access after it is one level down a chain.
                self.op(1)?;
                if let Some(FrameKind::Paren {
                    statement_head: true,
                }) = popped
                {
                    self.prev = Prev::StatementHead;
                    self.last = Last::Punct;
                } else {
                    self.prev = Prev::Value;
                    self.last = Last::Value;
                }
            }
            b'}' => {
                if self.pop(b'}') == Some(FrameKind::Template) {
                    self.template_text()?;
                } else {
                    self.prev = Prev::Ambiguous;
                    self.last = Last::CloseBrace;
                }
            }
            b'\'' | b'"' => {
                self.at = start;
                self.skip_string(byte);
                self.prev = Prev::Value;
                self.last = Last::Value;
            }
            b'`' => self.template_text()?,
            b'/' => match self.prev {
                Prev::ExpressionNext | Prev::StatementHead => {
                    self.at = start;
                    self.skip_regex();
                    self.prev = Prev::Value;
                    self.last = Last::Value;
                }
                Prev::Value => {
                    self.op(1)?;
                    self.prev = Prev::ExpressionNext;
                    self.last = Last::Punct;
                }
                Prev::Ambiguous => return Err(ScanRefusal::AmbiguousSlash { offset: start }),
            },
            b';' => {
                self.pending_reset = true;
                self.prev = Prev::ExpressionNext;
                self.last = Last::Punct;
            }
            b',' => {
                self.reset();
                self.prev = Prev::ExpressionNext;
                self.last = Last::Punct;
            }
            b'+' | b'-' if self.peek(0) == Some(byte) => {
                self.at += 1;
                self.op(2)?;
                if after_value {
                    // Postfix: a value still.
                    self.prev = Prev::Value;
                    self.last = Last::Value;
                } else {
                    self.prev = Prev::ExpressionNext;
                    self.last = Last::Punct;
                }
            }
            b'!' if after_value && self.peek(0) != Some(b'=') => {
                // TypeScript's non-null assertion: a value still.
                self.op(1)?;
                self.prev = Prev::Value;
                self.last = Last::Value;
            }
            b'=' if self.peek(0) == Some(b'>') => {
                self.at += 1;
                self.op(2)?;
                self.prev = Prev::ExpressionNext;
                self.last = Last::Punct;
            }
            b'>' => {
                let mut run = 1;
                while matches!(self.peek(0), Some(b'>' | b'=')) {
                    self.at += 1;
                    run += 1;
                }
                self.op(run)?;
                // `>` may close type arguments (then a value) or compare (then an expression).
                self.prev = if self.bytes[self.at - 1] == b'=' {
                    Prev::ExpressionNext
                } else {
                    Prev::Ambiguous
                };
                self.last = Last::Punct;
            }
            b'.' => {
                self.op(1)?;
                self.prev = Prev::ExpressionNext;
                self.last = Last::Punct;
                if self.peek(0) != Some(b'.') && (start == 0 || self.bytes[start - 1] != b'.') {
                    // The next word is a property name, not a keyword.
                    self.words = ["", "."];
                }
            }
            _ => {
                self.op(1)?;
                self.prev = Prev::ExpressionNext;
                self.last = Last::Punct;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(source: &str) -> Result<usize, ScanRefusal> {
        nesting_depth(source, MAX_NESTING)
    }

    fn too_deep(source: &str) -> bool {
        matches!(depth(source), Err(ScanRefusal::TooDeep { .. }))
    }

    #[test]
    fn every_way_of_nesting_deep_is_caught() {
        let n = 100_000;
        for deep in [
            format!("export default {}1{};", "[".repeat(n), "]".repeat(n)),
            format!("export default {}1{};", "(".repeat(n), ")".repeat(n)),
            format!("export default {}1{};", "{a:".repeat(n), "}".repeat(n)),
            format!("export default {}1;", "!".repeat(n)),
            format!("export default {}1;", "- ".repeat(n)),
            format!("export default {}1;", "typeof\n".repeat(n)),
            format!("let a; export default {}1;", "a=".repeat(n)),
            format!("export default {}1;", "x=>".repeat(n)),
            format!("export default {}1;", "a?1:".repeat(n)),
            format!("export default 1{};", "+1".repeat(n)),
            format!("export default 1{};", "\n+1".repeat(n)),
            format!("export default a{};", ".b".repeat(n)),
            format!("export default a{};", "()".repeat(n)),
            format!("export default a{};", "[0]".repeat(n)),
            format!("export default a{};", "``".repeat(n)),
            format!("{}x;", "if(a)".repeat(n)),
            format!("{}x;", "if(a)\n".repeat(n)),
            format!("if(a)x;{}", "else if(a)x;".repeat(n)),
            format!("{}x;{}", "do ".repeat(n), "while(a);".repeat(n)),
            format!("type T = {}1{};", "A<".repeat(n), ">".repeat(n)),
            format!("type T = {}1;", "keyof ".repeat(n)),
            format!("export default {}1{};", "`${".repeat(n), "}`".repeat(n)),
            format!("{}{}", "{".repeat(n), "}".repeat(n)),
            format!("{}1{};", "function(){return ".repeat(n), "}".repeat(n)),
            format!("{}x", "a:".repeat(n)),
        ] {
            assert!(too_deep(&deep), "{}", &deep[..60.min(deep.len())]);
        }
    }

    #[test]
    fn strings_comments_and_regular_expressions_hide_nothing_and_count_nothing() {
        let brackets = "[(".repeat(5_000);
        for shallow in [
            format!("const s = '{brackets}';"),
            format!("const s = \"{brackets}\";"),
            format!("const s = `{brackets}`;"),
            format!("// {brackets}\nconst a = 1;"),
            format!("/* {brackets} */"),
            format!("const r = /{}/;", "\\(".repeat(5_000)),
            format!("const r = /[{}]/;", "(/".repeat(5_000)),
            format!("if (a) /[{}]/.test(b);", "(".repeat(5_000)),
            format!("const f = (x) => /[{}]/.test(x);", "(".repeat(5_000)),
            "#!/usr/bin/env node `\nconst a = 1;".to_string(),
        ] {
            assert!(depth(&shallow).is_ok_and(|d| d < 10), "{shallow:.60}");
        }
        // What a string or comment would hide from a careless scan is still counted after it.
        let hidden = format!(
            "const s = 'a\\'';/* ' */ export default {}1{};",
            "[".repeat(5_000),
            "]".repeat(5_000)
        );
        assert!(too_deep(&hidden));
        let after_line_separator = format!(
            "// x\u{2028}export default {}1{};",
            "[".repeat(5_000),
            "]".repeat(5_000)
        );
        assert!(too_deep(&after_line_separator));
    }

    #[test]
    fn a_slash_that_could_be_either_is_refused_and_an_escaped_identifier_too() {
        for (source, offset) in [
            ("function f() {}\n/re/.test(x);", 16),
            ("const a = b < c > /re/;", 18),
            ("let /x/", 4),
            ("const as = 1; as / 2 / 3;", 17),
        ] {
            assert_eq!(
                depth(source),
                Err(ScanRefusal::AmbiguousSlash { offset }),
                "{source}"
            );
        }
        assert_eq!(
            depth("const \\u0061 = 1;"),
            Err(ScanRefusal::EscapedIdentifier { offset: 6 })
        );
        for fine in [
            "const half = (a + b) / 2;",
            "const r = x.map((y) => y / 2);",
            "const v = x! / 2;",
            "const c = x as const; const d = y as void;",
            "const n = a.if / b.return / 2;",
            "for await (const x of y) /re/.test(x);",
            "const q = a++ / 2;",
            "const t = `${a}` / 2;",
            "x >= /re/.lastIndex;",
        ] {
            assert!(depth(fine).is_ok(), "{fine}");
        }
    }

    #[test]
    fn long_flat_code_is_shallow() {
        let n = 5_000;
        for flat in [
            "const x = a + b;\n".repeat(n),
            "const x = a + b\n".repeat(n),
            "if(a){b()}if(c){d()}".repeat(n),
            "if (a) { b(); } else { c(); }\n".repeat(n),
            format!("export default [{}];", "[1, 2, {a: 'x'}], ".repeat(n)),
            format!("call({});", "a + b, ".repeat(n)),
            "x = y\n(z)\n".repeat(n / 10),
        ] {
            assert!(
                depth(&flat).is_ok_and(|d| d < 50),
                "{:.60} {:?}",
                flat,
                depth(&flat)
            );
        }
    }

    #[test]
    fn every_extension_fixture_passes_the_scan() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/extensions");
        let mut pending = vec![root];
        let mut seen = 0;
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    pending.push(path);
                } else if path.extension().is_some_and(|e| e == "ts" || e == "js") {
                    let source = std::fs::read_to_string(&path).unwrap();
                    assert!(check_source(&source).is_ok(), "{}", path.display());
                    seen += 1;
                }
            }
        }
        assert!(seen > 10);
    }

    #[test]
    fn a_panic_in_the_parse_thread_costs_only_that_file() {
        let path = Path::new("x.ts");
        assert_eq!(on_parse_thread(path, || 7), Ok(7));
        let failed = on_parse_thread(path, || -> u8 { panic!("parser bug") }).unwrap_err();
        assert!(failed.contains("x.ts"), "{failed}");
    }

    #[test]
    fn a_thread_with_a_parse_stack_parses_in_place_and_a_panic_still_costs_one_file() {
        std::thread::Builder::new()
            .stack_size(PARSE_STACK_BYTES)
            .spawn(|| {
                declare_parse_stack(PARSE_STACK_BYTES);
                let here = std::thread::current().id();
                let path = Path::new("x.ts");
                assert_eq!(
                    on_parse_thread(path, || std::thread::current().id()),
                    Ok(here)
                );
                let failed = on_parse_thread(path, || -> u8 { panic!("parser bug") }).unwrap_err();
                assert!(failed.contains("x.ts"), "{failed}");
                // The thread goes on to the next file.
                assert_eq!(on_parse_thread(path, || 7), Ok(7));
            })
            .unwrap()
            .join()
            .unwrap();
        // Elsewhere, a thread of its own.
        let here = std::thread::current().id();
        assert_ne!(
            on_parse_thread(Path::new("x.ts"), || std::thread::current().id()),
            Ok(here)
        );
    }

    #[test]
    #[should_panic(expected = "stack")]
    fn a_thread_cannot_declare_a_stack_smaller_than_a_parse_needs() {
        declare_parse_stack(8 << 20);
    }
}
