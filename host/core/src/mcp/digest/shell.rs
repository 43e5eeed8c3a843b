//! The words of a shell script as the digest reads them: what each word will be when the shell
//! runs it, where that can be known before it runs, and the words where it cannot.
//!
//! Quotes are undone as POSIX shells undo them. A word resolves when every part of it is
//! literal or one of the forms that name the folders earshot knows: `$PWD`, `${PWD}`, `$(pwd)`
//! and `` `pwd` `` (the folder the script starts in), and `$EARSHOT_PROJECT_DIR` and
//! `$CLAUDE_PROJECT_DIR` as `$NAME`, `${NAME}` or `${NAME:-DEFAULT}` with a plain default such
//! as `.` (the project root; the default too). These are the forms the snapshot a trusted hook
//! runs from rewrites. Anything else is a word the digest cannot resolve, which the caller
//! reports as partial: another variable (even one the script sets), `$1`, `$(…)`, backticks,
//! `$((…))`, `$'…'`, `~`, an unclosed quote, a known name the script sets itself, a `cd` into
//! another folder (the relative words after it name other files), and a glob (`*`, `?`, `[…]`,
//! `{…}`) or a backslash in a word that names something in the project. A glob still binds its
//! fixed folder, so a script added under it changes the digest.
//!
//! A command substitution's own script, and the script of `sh -c`, `bash -c` or `eval` (with a
//! resolved text), are read the same way, so the files they name count too.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The shells whose `-c SCRIPT` runs a script given as a word.
pub(super) const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "busybox",
];

/// How deep scripts inside scripts (`$(…)`, `sh -c '…'`) are read before the rest counts as a
/// word the digest cannot resolve.
const MAX_NESTING: usize = 4;

/// The most values one word or variable may stand for before it counts as unresolvable.
const MAX_VALUES: usize = 32;

/// What a script names, as far as the digest can tell.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ScriptWords {
    /// Each resolved word: relative to the script's working directory, or absolute (a
    /// project-dir form, or a word joined to a folder a `cd` names); a glob as its fixed folder.
    pub words: Vec<String>,
    /// The words it cannot resolve, as written, each with the part that made it so
    /// (`` `"$HOME/g.sh"` (`$HOME`) ``).
    pub unresolved: Vec<String>,
}

impl ScriptWords {
    fn merge(&mut self, other: ScriptWords) {
        self.words.extend(other.words);
        for word in other.unresolved {
            if !self.unresolved.contains(&word) {
                self.unresolved.push(word);
            }
        }
    }
}

/// The directories a script's known forms stand for.
#[derive(Debug, Clone)]
pub struct Places<'a> {
    /// Where the script starts (`$PWD`, `$(pwd)`).
    pub dir: &'a Path,
    /// The project root (`$EARSHOT_PROJECT_DIR`, `$CLAUDE_PROJECT_DIR`), when there is one.
    pub project: Option<&'a Path>,
}

/// The words of `script` (see the module doc).
pub fn script_words(script: &str, places: &Places<'_>) -> ScriptWords {
    read_script(script, places, 0)
}

/// The scripts `words` (one command, resolved) hand to a shell: `sh -c SCRIPT`, `bash -ec
/// SCRIPT`, `eval TEXT…`.
pub(super) fn nested_scripts(words: &[String]) -> Vec<String> {
    let mut scripts = Vec::new();
    let mut at = 0;
    while at < words.len() {
        let program = Path::new(&words[at])
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or_default();
        if program == "eval" {
            if at + 1 < words.len() {
                scripts.push(words[at + 1..].join(" "));
            }
            break;
        }
        if SHELLS.contains(&program) {
            let mut index = at + 1;
            let mut wants_script = false;
            while index < words.len() {
                let word = &words[index];
                if word == "--" {
                    index += 1;
                    break;
                }
                if word.starts_with("--") {
                    index += 1;
                    continue;
                }
                if let Some(flags) = word.strip_prefix('-').or_else(|| word.strip_prefix('+'))
                    && !flags.is_empty()
                {
                    wants_script |= flags.contains('c');
                    // `-o OPTION` takes the next word.
                    index += if flags.contains('o') { 2 } else { 1 };
                    continue;
                }
                break;
            }
            if wants_script && let Some(script) = words.get(index) {
                scripts.push(script.clone());
            }
        }
        at += 1;
    }
    scripts
}

fn read_script(script: &str, places: &Places<'_>, depth: usize) -> ScriptWords {
    let mut found = ScriptWords::default();
    if depth > MAX_NESTING {
        found.unresolved.push(format!(
            "`{}` (scripts nested more than {MAX_NESTING} deep)",
            shorten(script)
        ));
        return found;
    }
    let scanned = Scanner::new(script).scan();
    for problem in &scanned.problems {
        found.unresolved.push(problem.clone());
    }
    let resolver = Resolver::new(&scanned.commands, places);
    let mut unresolved = |word: &Word, why: &str| {
        let shown = format!("`{}` ({why})", shorten(&word.written));
        if !found.unresolved.contains(&shown) {
            found.unresolved.push(shown);
        }
    };
    let mut words = Vec::new();
    let mut nested = Vec::new();
    for command in &scanned.commands {
        let changes_folder = command
            .first()
            .and_then(Word::plain)
            .is_some_and(|first| first == "cd" || first == "pushd");
        if changes_folder && command.len() == 1 {
            // A bare `cd` goes to $HOME.
            unresolved(&command[0], "a `cd` into another folder");
        }
        let mut resolved_command: Vec<String> = Vec::new();
        for (index, word) in command.iter().enumerate() {
            let values = match resolver.word(word) {
                Ok(values) => values,
                Err(part) => {
                    unresolved(word, &format!("`{part}`"));
                    resolved_command.push(String::new());
                    continue;
                }
            };
            if changes_folder && index > 0 {
                // `cd` elsewhere: the relative words after it name other files than they seem
                // to. Into the folder it starts in (`cd "$EARSHOT_PROJECT_DIR"`) is no change.
                let option = word
                    .plain()
                    .is_some_and(|text| text.starts_with('-') && text.len() > 1);
                if !option && !resolver.stays(&values) {
                    unresolved(word, "a `cd` into another folder");
                }
                continue;
            }
            for value in &values {
                let path = resolver.as_path(value);
                if value.glob_at.is_some() && resolver.names_project_path(&path) {
                    unresolved(word, "a glob");
                } else if word.backslash && resolver.names_project_path(&path) {
                    unresolved(word, "a backslash");
                }
                words.push(path);
            }
            if let Some(first) = values.first() {
                resolved_command.push(first.text.clone());
            }
        }
        nested.extend(nested_scripts(&resolved_command));
    }
    found.words.extend(words);
    for script in nested.iter().chain(&scanned.substitutions) {
        found.merge(read_script(script, places, depth + 1));
    }
    found
}

/// At most 80 characters of `text`, on one line, for a message.
fn shorten(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() > 80 {
        format!("{}…", one_line.chars().take(79).collect::<String>())
    } else {
        one_line
    }
}

/// One piece of a word as written.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// Literal text; `quoted` when quotes or a backslash made it so (a glob in it is literal).
    Text { text: String, quoted: bool },
    /// `$NAME` or `${NAME}`.
    Variable(String),
    /// `${NAME:-DEFAULT}`.
    WithDefault(String, String),
    /// `$(pwd)` or `` `pwd` ``.
    Pwd,
    /// Something whose value is known only when it runs, as written.
    Unknown(String),
}

/// One word of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Word {
    /// As written, for messages.
    written: String,
    parts: Vec<Part>,
    /// Whether a backslash quotes something in it (earshot does not rewrite such a word to
    /// the snapshot it runs from, so one that names a project file is not resolved).
    backslash: bool,
}

impl Word {
    /// The literal text the word starts with, unquoted (for `NAME=` and `for NAME`).
    fn plain_prefix(&self) -> Option<&str> {
        match self.parts.first() {
            Some(Part::Text {
                text,
                quoted: false,
            }) => Some(text),
            _ => None,
        }
    }

    /// The word when it is all unquoted literal text.
    fn plain(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [
                Part::Text {
                    text,
                    quoted: false,
                },
            ] => Some(text),
            _ => None,
        }
    }

    /// `NAME` and the parts of its value when the word is an assignment `NAME=VALUE`.
    fn assignment(&self) -> Option<(String, Vec<Part>)> {
        let prefix = self.plain_prefix()?;
        let (name, rest) = prefix.split_once('=')?;
        let name = name.strip_suffix('+').unwrap_or(name);
        if !is_name(name) {
            return None;
        }
        let mut value = Vec::new();
        if !rest.is_empty() {
            value.push(Part::Text {
                text: rest.to_string(),
                quoted: false,
            });
        }
        value.extend(self.parts[1..].iter().cloned());
        Some((name.to_string(), value))
    }
}

fn is_name(text: &str) -> bool {
    text.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A script split into commands of words, the scripts of its substitutions, and what could not
/// be read (an unclosed quote).
#[derive(Debug, Default)]
struct Scanned {
    commands: Vec<Vec<Word>>,
    substitutions: Vec<String>,
    problems: Vec<String>,
}

struct Scanner {
    chars: Vec<char>,
    at: usize,
    scanned: Scanned,
    command: Vec<Word>,
    parts: Vec<Part>,
    written_from: Option<usize>,
    backslash: bool,
}

impl Scanner {
    fn new(script: &str) -> Scanner {
        Scanner {
            chars: script.chars().collect(),
            at: 0,
            scanned: Scanned::default(),
            command: Vec::new(),
            parts: Vec::new(),
            written_from: None,
            backslash: false,
        }
    }

    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.at + offset).copied()
    }

    fn begin_word(&mut self) {
        if self.written_from.is_none() {
            self.written_from = Some(self.at);
        }
    }

    fn text(&mut self, c: char, quoted: bool) {
        if let Some(Part::Text { text, quoted: was }) = self.parts.last_mut()
            && *was == quoted
        {
            text.push(c);
            return;
        }
        self.parts.push(Part::Text {
            text: c.to_string(),
            quoted,
        });
    }

    fn end_word(&mut self) {
        if let Some(from) = self.written_from.take() {
            let written: String = self.chars[from..self.at.min(self.chars.len())]
                .iter()
                .collect();
            let parts = std::mem::take(&mut self.parts);
            let backslash = std::mem::take(&mut self.backslash);
            self.command.push(Word {
                written,
                parts,
                backslash,
            });
        }
    }

    fn end_command(&mut self) {
        self.end_word();
        if !self.command.is_empty() {
            self.scanned
                .commands
                .push(std::mem::take(&mut self.command));
        }
    }

    fn scan(mut self) -> Scanned {
        while let Some(c) = self.peek(0) {
            match c {
                '#' if self.written_from.is_none() => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.at += 1;
                    }
                }
                ' ' | '\t' | '\r' => {
                    self.end_word();
                    self.at += 1;
                }
                '\n' | ';' | '&' | '|' | '(' | ')' => {
                    self.end_command();
                    self.at += 1;
                }
                '<' | '>' if self.peek(1) == Some('(') => {
                    // A process substitution: its script runs; the word is a /dev/fd path.
                    self.end_word();
                    let inner = self.balanced(self.at + 2);
                    self.scanned.substitutions.push(inner);
                }
                '<' | '>' => {
                    self.end_word();
                    self.at += 1;
                }
                '\'' => {
                    self.begin_word();
                    self.at += 1;
                    let start = self.at;
                    while self.peek(0).is_some_and(|c| c != '\'') {
                        self.at += 1;
                    }
                    if self.peek(0).is_none() {
                        self.unclosed('\'', start - 1);
                    }
                    let text: String = self.chars[start..self.at.min(self.chars.len())]
                        .iter()
                        .collect();
                    self.parts.push(Part::Text { text, quoted: true });
                    self.at += 1;
                }
                '"' => {
                    self.begin_word();
                    self.double_quoted();
                }
                '\\' => {
                    match self.peek(1) {
                        Some('\n') => {}
                        Some(next) => {
                            self.begin_word();
                            self.backslash = true;
                            self.text(next, true);
                        }
                        None => {
                            self.begin_word();
                            self.text('\\', false);
                        }
                    }
                    self.at += 2;
                }
                '$' => {
                    self.begin_word();
                    self.dollar();
                }
                '`' => {
                    self.begin_word();
                    self.backtick();
                }
                '~' if self.written_from.is_none()
                    || matches!(
                        self.parts.last(),
                        Some(Part::Text { text, quoted: false }) if text.ends_with('=') || text.ends_with(':')
                    ) =>
                {
                    self.begin_word();
                    let from = self.at;
                    self.at += 1;
                    while self
                        .peek(0)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
                    {
                        self.at += 1;
                    }
                    let written: String = self.chars[from..self.at].iter().collect();
                    self.parts.push(Part::Unknown(written));
                }
                other => {
                    self.begin_word();
                    self.text(other, false);
                    self.at += 1;
                }
            }
        }
        self.end_command();
        self.scanned
    }

    fn unclosed(&mut self, quote: char, from: usize) {
        let rest: String = self.chars[from..].iter().take(40).collect();
        self.scanned.problems.push(format!(
            "`{}` (an unclosed {quote})",
            shorten(rest.lines().next().unwrap_or_default())
        ));
    }

    /// Reads a double-quoted string from its opening quote.
    fn double_quoted(&mut self) {
        let start = self.at;
        self.at += 1;
        loop {
            match self.peek(0) {
                None => {
                    self.unclosed('"', start);
                    return;
                }
                Some('"') => {
                    self.at += 1;
                    // `""` is an empty word, still a word.
                    if self.parts.is_empty() {
                        self.parts.push(Part::Text {
                            text: String::new(),
                            quoted: true,
                        });
                    }
                    return;
                }
                Some('\\') => match self.peek(1) {
                    Some('\n') => self.at += 2,
                    Some(next @ ('$' | '`' | '"' | '\\')) => {
                        self.backslash = true;
                        self.text(next, true);
                        self.at += 2;
                    }
                    _ => {
                        self.backslash = true;
                        self.text('\\', true);
                        self.at += 1;
                    }
                },
                Some('$') => self.dollar(),
                Some('`') => self.backtick(),
                Some(c) => {
                    self.text(c, true);
                    self.at += 1;
                }
            }
        }
    }

    /// Reads what starts with `$`.
    fn dollar(&mut self) {
        let from = self.at;
        match self.peek(1) {
            Some('{') => {
                let mut depth = 0usize;
                let mut end = self.at + 1;
                while let Some(&c) = self.chars.get(end) {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    end += 1;
                }
                if end >= self.chars.len() {
                    self.unclosed('{', from);
                    self.at = self.chars.len();
                    return;
                }
                let inner: String = self.chars[self.at + 2..end].iter().collect();
                let written: String = self.chars[from..=end].iter().collect();
                self.at = end + 1;
                let name_end = inner
                    .char_indices()
                    .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
                    .map(|(at, _)| at)
                    .unwrap_or(inner.len());
                let (name, rest) = inner.split_at(name_end);
                let part = if !is_name(name) {
                    Part::Unknown(written)
                } else if rest.is_empty() {
                    Part::Variable(name.to_string())
                } else if let Some(default) = rest.strip_prefix(":-") {
                    Part::WithDefault(name.to_string(), default.to_string())
                } else {
                    Part::Unknown(written)
                };
                self.parts.push(part);
            }
            Some('(') if self.peek(2) == Some('(') => {
                // `$((…))`: arithmetic, known only when it runs.
                self.balanced(self.at + 2);
                let written: String = self.chars[from..self.at.min(self.chars.len())]
                    .iter()
                    .collect();
                self.parts.push(Part::Unknown(written));
            }
            Some('(') => {
                let inner = self.balanced(self.at + 2);
                let written: String = self.chars[from..self.at.min(self.chars.len())]
                    .iter()
                    .collect();
                self.parts.push(substitution_part(&inner, written));
                self.scanned.substitutions.push(inner);
            }
            Some(quote @ ('\'' | '"')) => {
                // `$'…'` and `$"…"`: decoded or translated when it runs.
                let mut end = self.at + 2;
                while let Some(&c) = self.chars.get(end) {
                    if c == '\\' {
                        end += 2;
                        continue;
                    }
                    if c == quote {
                        break;
                    }
                    end += 1;
                }
                let end = end.min(self.chars.len());
                let written: String = self.chars[from..(end + 1).min(self.chars.len())]
                    .iter()
                    .collect();
                self.at = end + 1;
                self.parts.push(Part::Unknown(written));
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let mut end = self.at + 1;
                while self
                    .chars
                    .get(end)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    end += 1;
                }
                let name: String = self.chars[self.at + 1..end].iter().collect();
                self.at = end;
                self.parts.push(Part::Variable(name));
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                self.at += 2;
                self.parts.push(Part::Unknown(format!("${c}")));
            }
            _ => {
                self.text('$', false);
                self.at += 1;
            }
        }
    }

    /// Reads a backtick substitution from its opening backtick.
    fn backtick(&mut self) {
        let from = self.at;
        let mut inner = String::new();
        self.at += 1;
        loop {
            match self.peek(0) {
                None => {
                    self.unclosed('`', from);
                    break;
                }
                Some('`') => {
                    self.at += 1;
                    break;
                }
                Some('\\') if matches!(self.peek(1), Some('`' | '\\' | '$')) => {
                    inner.push(self.peek(1).unwrap_or_default());
                    self.at += 2;
                }
                Some(c) => {
                    inner.push(c);
                    self.at += 1;
                }
            }
        }
        let written: String = self.chars[from..self.at.min(self.chars.len())]
            .iter()
            .collect();
        self.parts.push(substitution_part(&inner, written));
        self.scanned.substitutions.push(inner);
    }

    /// The text from `start` to the `)` that closes the parenthesis before it (quotes and
    /// nested parentheses respected); leaves `at` past that `)`.
    fn balanced(&mut self, start: usize) -> String {
        let mut depth = 1usize;
        let mut at = start;
        let mut quote: Option<char> = None;
        while let Some(&c) = self.chars.get(at) {
            match (quote, c) {
                (Some('\''), '\'') => quote = None,
                (Some('\''), _) => {}
                (_, '\\') => at += 1,
                (Some('"'), '"') => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '(') => depth += 1,
                (None, ')') => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            at += 1;
        }
        let end = at.min(self.chars.len());
        if end >= self.chars.len() {
            self.unclosed('(', start.saturating_sub(1));
        }
        let inner: String = self.chars[start.min(end)..end].iter().collect();
        self.at = end + 1;
        inner
    }
}

/// `$(pwd)` and `` `pwd` `` name the working directory; any other substitution's output is
/// known only when it runs.
fn substitution_part(inner: &str, written: String) -> Part {
    if inner.trim() == "pwd" {
        Part::Pwd
    } else {
        Part::Unknown(written)
    }
}

/// One value a word stands for: its text and where its first unquoted glob character is.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Value {
    text: String,
    glob_at: Option<usize>,
}

/// The names whose meaning earshot knows (unless the script sets them itself): the working
/// directory and the project root.
const KNOWN_VARIABLES: &[&str] = &["PWD", "EARSHOT_PROJECT_DIR", "CLAUDE_PROJECT_DIR"];

/// Resolves words against the directories earshot knows.
struct Resolver<'a> {
    places: &'a Places<'a>,
    /// The known names the script sets (`PWD=…`, `export EARSHOT_PROJECT_DIR=…`): then unknown.
    reassigned: BTreeSet<String>,
}

impl<'a> Resolver<'a> {
    fn new(commands: &[Vec<Word>], places: &'a Places<'a>) -> Resolver<'a> {
        let mut reassigned = BTreeSet::new();
        for word in commands.iter().flatten() {
            if let Some((name, _)) = word.assignment() {
                reassigned.insert(name);
            } else if let Some(plain) = word.plain()
                && KNOWN_VARIABLES.contains(&plain)
            {
                // `read PWD`, `unset PWD`, `for PWD in …`.
                reassigned.insert(plain.to_string());
            }
        }
        Resolver { places, reassigned }
    }

    /// What `word` stands for, or the part of it that cannot be known before it runs.
    fn word(&self, word: &Word) -> Result<Vec<Value>, String> {
        self.parts(&word.parts)
    }

    fn parts(&self, parts: &[Part]) -> Result<Vec<Value>, String> {
        let mut values = vec![Value {
            text: String::new(),
            glob_at: None,
        }];
        for (index, part) in parts.iter().enumerate() {
            let choices: Vec<Value> = match part {
                Part::Text { text, quoted } => {
                    let glob = (!quoted)
                        .then(|| glob_at(text, &parts[index + 1..]))
                        .flatten();
                    vec![Value {
                        text: text.clone(),
                        glob_at: glob,
                    }]
                }
                Part::Pwd => vec![self.dir_value()],
                Part::Variable(name) => self.variable(name, None)?,
                Part::WithDefault(name, default) => self.variable(name, Some(default))?,
                Part::Unknown(written) => return Err(written.clone()),
            };
            let mut next = Vec::new();
            for value in &values {
                for choice in &choices {
                    let glob_at = value
                        .glob_at
                        .or(choice.glob_at.map(|at| at + value.text.len()));
                    next.push(Value {
                        text: format!("{}{}", value.text, choice.text),
                        glob_at,
                    });
                }
            }
            if next.len() > MAX_VALUES {
                return Err(format!("more than {MAX_VALUES} values"));
            }
            values = next;
        }
        Ok(values)
    }

    fn dir_value(&self) -> Value {
        Value {
            text: self.places.dir.display().to_string(),
            glob_at: None,
        }
    }

    fn variable(&self, name: &str, default: Option<&str>) -> Result<Vec<Value>, String> {
        let written = match default {
            Some(default) => format!("${{{name}:-{default}}}"),
            None => format!("${name}"),
        };
        if self.reassigned.contains(name) {
            return Err(written);
        }
        let mut values = match name {
            "PWD" => vec![self.dir_value()],
            "EARSHOT_PROJECT_DIR" | "CLAUDE_PROJECT_DIR" => match self.places.project {
                Some(project) => vec![Value {
                    text: project.display().to_string(),
                    glob_at: None,
                }],
                None => return Err(written),
            },
            _ => return Err(written),
        };
        if let Some(default) = default {
            // Used when the variable is unset or empty: a plain folder or the working directory.
            let scanned = Scanner::new(default).scan();
            let default_values = match scanned.commands.as_slice() {
                [] => vec![Value {
                    text: String::new(),
                    glob_at: None,
                }],
                [command]
                    if command.len() == 1
                        && scanned.problems.is_empty()
                        && !command[0].backslash =>
                {
                    self.parts(&command[0].parts).map_err(|_| written.clone())?
                }
                _ => return Err(written),
            };
            values.extend(default_values);
        }
        Ok(values)
    }

    /// The path `value` names: a glob as its fixed folder.
    fn as_path(&self, value: &Value) -> String {
        match value.glob_at {
            Some(at) => match value.text[..at].rfind('/') {
                Some(slash) => value.text[..=slash].to_string(),
                None => ".".to_string(),
            },
            None => value.text.clone(),
        }
    }

    /// Whether `path` (relative to the working directory, or absolute) is in the project and
    /// exists: a glob or a backslash there is a word the digest does not resolve.
    fn names_project_path(&self, path: &str) -> bool {
        let Some(project) = self.places.project else {
            return false;
        };
        let full = lexically_normal(&self.places.dir.join(path));
        full.starts_with(project) && std::fs::symlink_metadata(&full).is_ok()
    }

    /// Whether `values` (a `cd` target) all name the folder the script starts in.
    fn stays(&self, values: &[Value]) -> bool {
        let here = lexically_normal(self.places.dir);
        values.iter().all(|value| {
            value.glob_at.is_none() && lexically_normal(&self.places.dir.join(&value.text)) == here
        })
    }
}

/// Where the first glob character of an unquoted `text` is (`*`, `?`, a `[` closed later in the
/// word, a `{` closed later in the word), looking at the rest of the word for the closing one.
fn glob_at(text: &str, rest: &[Part]) -> Option<usize> {
    let later: String = rest
        .iter()
        .filter_map(|part| match part {
            Part::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    for (at, c) in text.char_indices() {
        match c {
            '*' | '?' => return Some(at),
            '[' if text[at + 1..].contains(']') || later.contains(']') => return Some(at),
            '{' if text[at + 1..].contains('}') || later.contains('}') => return Some(at),
            _ => {}
        }
    }
    None
}

/// `path` with `.` and `..` resolved by their text alone (no link is followed).
pub(super) fn lexically_normal(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    normal
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(script: &str) -> ScriptWords {
        script_words(
            script,
            &Places {
                dir: Path::new("/p"),
                project: Some(Path::new("/p")),
            },
        )
    }

    #[test]
    fn the_project_dir_forms_resolve_to_the_project() {
        for script in [
            r#"sh "$PWD/.earshot/hooks/g.sh""#,
            r#"sh "${PWD}/.earshot/hooks/g.sh""#,
            r#"sh "$EARSHOT_PROJECT_DIR/.earshot/hooks/g.sh""#,
            r#"sh "${EARSHOT_PROJECT_DIR:-.}/.earshot/hooks/g.sh""#,
            r#"sh "$CLAUDE_PROJECT_DIR"/.earshot/hooks/g.sh"#,
            r#"sh "${CLAUDE_PROJECT_DIR}/.earshot/hooks/g.sh""#,
            r#"sh "$(pwd)/.earshot/hooks/g.sh""#,
            r#"sh `pwd`/.earshot/hooks/g.sh"#,
            r#"sh ".earshot/"hooks/'g.sh'"#,
            r#"cd "$EARSHOT_PROJECT_DIR" && sh .earshot/hooks/g.sh"#,
        ] {
            let found = words(script);
            assert!(found.unresolved.is_empty(), "{script}: {found:?}");
            assert!(
                found
                    .words
                    .iter()
                    .any(|word| word == "/p/.earshot/hooks/g.sh"
                        || word == ".earshot/hooks/g.sh"
                        || word == "./.earshot/hooks/g.sh"),
                "{script}: {found:?}"
            );
        }
    }

    #[test]
    fn other_expansions_are_named() {
        for (script, part) in [
            (r#"sh "$HOME/g.sh""#, "$HOME"),
            ("sh $(cat name)/g.sh", "$(cat name)"),
            ("sh `echo g`.sh", "`echo g`"),
            ("sh $1", "$1"),
            ("sh ~/g.sh", "~"),
            ("sh $'g.sh'", "$'g.sh'"),
            ("sh ${X%/*}/g.sh", "${X%/*}"),
            ("sh \"g.sh", "unclosed"),
            ("read f; sh \"$f\"", "$f"),
            ("d=.earshot; sh \"$d/g.sh\"", "$d"),
            ("PWD=/tmp; sh \"$PWD/g.sh\"", "$PWD"),
            ("cd .earshot/hooks && sh g.sh", "cd"),
            (r#"out=$(sh "$HOME/y.sh")"#, "$HOME"),
            (r#"bash -c 'sh "$X/y.sh"'"#, "$X"),
        ] {
            let found = words(script);
            assert!(
                found.unresolved.iter().any(|word| word.contains(part)),
                "{script}: {found:?}"
            );
        }
    }

    #[test]
    fn scripts_inside_scripts_are_read() {
        let found = words(r#"bash -c 'sh "$PWD/x.sh"'"#);
        assert!(found.words.contains(&"/p/x.sh".to_string()), "{found:?}");
        assert_eq!(
            nested_scripts(&["sh".into(), "-ec".into(), "true".into()]),
            ["true"]
        );
        assert_eq!(
            nested_scripts(&[
                "bash".into(),
                "-o".into(),
                "pipefail".into(),
                "-c".into(),
                "x".into()
            ]),
            ["x"]
        );
    }

    #[test]
    fn a_json_echo_and_a_test_need_nothing() {
        let found = words(r#"cat >/dev/null; [ -f x ] && echo "{\"decision\": \"block\"}" >&2"#);
        assert!(found.unresolved.is_empty(), "{found:?}");
        assert!(!found.words.contains(&".".to_string()), "{found:?}");
    }
}
