//! A command's template and its arguments.
//!
//! The template (the body as written) is cut into pieces once, before any argument is looked
//! at: text, `@path` includes and `` !`cmd` `` shell lines. Arguments then fill placeholders in
//! the text pieces only, so nothing an argument holds is ever read as an include or a shell
//! line, and nothing an include or a command prints is scanned again.
//!
//! Placeholders: `$ARGUMENTS` (everything typed after the name), `$1`..`$9` (the arguments split
//! shell-style, counted from 1), `$ARGUMENTS[N]` (the same, counted from 0, as in Claude Code),
//! and `$name` for each name in the frontmatter's `arguments` (in order). `\$` is a literal `$`,
//! and a placeholder with no argument stays as written. A template with no placeholder at all
//! gets the arguments appended as `ARGUMENTS: …`.

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text, with placeholders still in it.
    Text(String),
    /// `@path`: a project file to include (the path as written).
    Include(String),
    /// `` !`cmd` ``: a shell command line, as written.
    Shell(String),
}

/// The arguments typed after a command's name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Arguments {
    /// Everything typed, trimmed.
    pub raw: String,
    /// Split shell-style (quotes group, backslashes escape).
    pub positional: Vec<String>,
    /// The frontmatter's `arguments` names, in order.
    pub names: Vec<String>,
}

impl Arguments {
    /// Splits `raw` shell-style; `names` are the frontmatter's `arguments`.
    ///
    /// # Errors
    /// A phrase when the quotes do not balance.
    pub fn parse(raw: &str, names: &[String]) -> Result<Arguments, String> {
        let raw = raw.trim();
        let positional = shell_words::split(raw)
            .map_err(|_| "the arguments have a quote that is never closed".to_string())?;
        Ok(Arguments {
            raw: raw.to_string(),
            positional,
            names: names.to_vec(),
        })
    }

    /// The value of a named argument (its position in `names`).
    fn named(&self, name: &str) -> Option<&str> {
        let index = self.names.iter().position(|known| known == name)?;
        self.positional.get(index).map(String::as_str)
    }

    /// Named arguments with a value, for a shell line's environment.
    pub fn named_values(&self) -> Vec<(String, String)> {
        self.names
            .iter()
            .zip(&self.positional)
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect()
    }
}

/// Cuts `body` into pieces: `` !`cmd` `` anywhere (up to the next backtick on the same line),
/// and `@path` at the start of a line or after whitespace or `(`, where the path holds a `/` or
/// a `.` (so `@alice` and `user@example.com` stay text). Trailing `.,;:!?` is not part of a path.
pub fn pieces(body: &str) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '!' && chars.get(i + 1) == Some(&'`') {
            let start = i + 2;
            let end = (start..chars.len()).find(|&j| chars[j] == '`' || chars[j] == '\n');
            if let Some(end) = end.filter(|&end| chars[end] == '`' && end > start) {
                flush(&mut text, &mut pieces);
                pieces.push(Piece::Shell(chars[start..end].iter().collect()));
                i = end + 1;
                continue;
            }
        }
        if c == '@' && (i == 0 || chars[i - 1].is_whitespace() || chars[i - 1] == '(') {
            let start = i + 1;
            let mut end = start;
            while end < chars.len() && is_path_char(chars[end]) {
                end += 1;
            }
            while end > start && ".,;:!?".contains(chars[end - 1]) {
                end -= 1;
            }
            let path: String = chars[start..end].iter().collect();
            if path.contains('/') || path.contains('.') {
                flush(&mut text, &mut pieces);
                pieces.push(Piece::Include(path));
                i = end;
                continue;
            }
        }
        text.push(c);
        i += 1;
    }
    flush(&mut text, &mut pieces);
    pieces
}

fn flush(text: &mut String, pieces: &mut Vec<Piece>) {
    if !text.is_empty() {
        pieces.push(Piece::Text(std::mem::take(text)));
    }
}

fn is_path_char(c: char) -> bool {
    !c.is_whitespace() && !"`()[]{}<>\"'|;,&$*?".contains(c)
}

/// Whether any piece uses an argument: a placeholder in the text, or in a shell line (where the
/// shell reads `$1`, `$ARGUMENTS` or `$ARG_name` from its parameters and environment).
pub fn uses_arguments(pieces: &[Piece], names: &[String]) -> bool {
    // A shell line reads a named argument as `$ARG_name`.
    let shell_names: Vec<String> = names
        .iter()
        .flat_map(|name| [name.clone(), format!("ARG_{name}")])
        .collect();
    pieces.iter().any(|piece| {
        let (text, names) = match piece {
            Piece::Text(text) => (text, names),
            Piece::Shell(text) => (text, shell_names.as_slice()),
            Piece::Include(_) => return false,
        };
        let mut found = false;
        scan(text, names, &mut |_| {
            found = true;
            None
        });
        found
    })
}

/// `text` with its placeholders filled from `arguments`; `\$` becomes `$`.
pub fn substitute(text: &str, arguments: &Arguments) -> String {
    scan(
        text,
        &arguments.names,
        &mut |placeholder| match placeholder {
            Placeholder::All => Some(arguments.raw.clone()),
            Placeholder::Position(n) => arguments.positional.get(n - 1).cloned(),
            Placeholder::Index(n) => arguments.positional.get(n).cloned(),
            Placeholder::Named(name) => arguments.named(name).map(str::to_string),
        },
    )
}

/// A placeholder found in text.
enum Placeholder<'a> {
    /// `$ARGUMENTS`.
    All,
    /// `$1`..`$9` (1-based).
    Position(usize),
    /// `$ARGUMENTS[N]` (0-based).
    Index(usize),
    /// `$name`.
    Named(&'a str),
}

/// Walks `text`, calling `fill` for each placeholder: its answer replaces the placeholder, and
/// `None` leaves it as written. Returns the text with `\$` made `$`.
fn scan(
    text: &str,
    names: &[String],
    fill: &mut dyn FnMut(Placeholder<'_>) -> Option<String>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['$', '\\']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("\\$") {
            out.push('$');
            rest = after;
            continue;
        }
        if let Some(after) = tail.strip_prefix('\\') {
            out.push('\\');
            rest = after;
            continue;
        }
        let (placeholder, length) = placeholder_at(tail, names);
        match placeholder {
            Some(placeholder) => {
                match fill(placeholder) {
                    Some(value) => out.push_str(&value),
                    None => out.push_str(&tail[..length]),
                }
                rest = &tail[length..];
            }
            None => {
                out.push('$');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The placeholder at the start of `tail` (which starts with `$`) and its length.
fn placeholder_at<'a>(tail: &str, names: &'a [String]) -> (Option<Placeholder<'a>>, usize) {
    let after = &tail[1..];
    if let Some(rest) = after.strip_prefix("ARGUMENTS") {
        if let Some(index) = rest.strip_prefix('[') {
            let digits: String = index.chars().take_while(char::is_ascii_digit).collect();
            if !digits.is_empty() && index[digits.len()..].starts_with(']') {
                let n = digits.parse().unwrap_or(usize::MAX);
                return (Some(Placeholder::Index(n)), 1 + 9 + 1 + digits.len() + 1);
            }
        }
        if !rest.starts_with(is_name_char) {
            return (Some(Placeholder::All), 1 + 9);
        }
    }
    if let Some(digit) = after.chars().next().filter(|c| ('1'..='9').contains(c))
        && !after[1..].starts_with(|c: char| c.is_ascii_digit())
    {
        return (
            Some(Placeholder::Position(digit as usize - '0' as usize)),
            2,
        );
    }
    let word: String = after.chars().take_while(|&c| is_name_char(c)).collect();
    if let Some(name) = names.iter().find(|name| **name == word) {
        return (Some(Placeholder::Named(name)), 1 + word.len());
    }
    (None, 1)
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(raw: &str, names: &[&str]) -> Arguments {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        Arguments::parse(raw, &names).unwrap()
    }

    #[test]
    fn placeholders_fill_and_missing_ones_stay() {
        let a = args("one 'two words' three", &["first", "second"]);
        assert_eq!(
            substitute(
                "$ARGUMENTS|$1|$2|$3|$4|$ARGUMENTS[0]|$ARGUMENTS[2]|$first-$second|\\$1|$10|$HOME",
                &a
            ),
            "one 'two words' three|one|two words|three|$4|one|three|one-two words|$1|$10|$HOME"
        );
    }

    #[test]
    fn pieces_find_includes_and_shell_lines_only_in_the_template() {
        let p = pieces("See @src/lib.rs, and !`git status` or mail a@b.c, @alice (@docs/x.md).");
        assert_eq!(
            p,
            vec![
                Piece::Text("See ".into()),
                Piece::Include("src/lib.rs".into()),
                Piece::Text(", and ".into()),
                Piece::Shell("git status".into()),
                Piece::Text(" or mail a@b.c, @alice (".into()),
                Piece::Include("docs/x.md".into()),
                Piece::Text(").".into()),
            ]
        );
        assert!(uses_arguments(&pieces("!`git log \"$1\"`"), &[]));
        assert!(!uses_arguments(&pieces("plain \\$1 text"), &[]));
    }
}
