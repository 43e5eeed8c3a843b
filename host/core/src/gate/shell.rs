//! Splitting a shell command line into the simple commands it runs, for `Bash(…)` rules.
//!
//! This is not a shell parser, and it does not need to be one: it errs towards more parts for a
//! deny or ask rule (a part that is not really a command can only make such a rule match more
//! often), and towards "not plain" for an allow rule (then no allow rule applies except one that
//! names every command, and the call is asked about).

/// A command line split on its operators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// The commands at the top level, in order, with runs of unquoted whitespace collapsed to one
    /// space: what an allow rule must cover, one by one.
    pub parts: Vec<String>,
    /// The commands inside substitutions (`$(…)`, backticks, `<(…)`), for deny and ask rules.
    pub nested: Vec<String>,
    /// Whether `parts` is all the line runs and does: no command or process substitution, no
    /// redirection to or from a file, no ANSI-C quoting (`$'…'`), every quote closed.
    pub plain: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FrameKind {
    /// The line itself.
    Top,
    /// `$(…)`, `<(…)` or `>(…)`, closed by the `)` that balances it.
    Parenthesised,
    /// `` `…` ``.
    Backtick,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Single,
    Double,
}

/// The line, or one substitution inside it, being read.
struct Frame {
    kind: FrameKind,
    quote: Quote,
    /// Open subshell parentheses inside a parenthesised substitution.
    depth: usize,
    /// Where the substitution starts in the line (its `$`, `<`, `>` or backtick).
    start: usize,
    current: String,
    /// The length of `current` right after its last unquoted, unescaped whitespace: a `#` there
    /// starts a comment (after an escaped space, `a\ #b`, it does not).
    separated_at: Option<usize>,
    parts: Vec<String>,
}

impl Frame {
    fn new(kind: FrameKind, start: usize) -> Frame {
        Frame {
            kind,
            quote: Quote::None,
            depth: 0,
            start,
            current: String::new(),
            separated_at: None,
            parts: Vec::new(),
        }
    }

    fn space(&mut self) {
        if !self.current.is_empty() && !self.current.ends_with(' ') {
            self.current.push(' ');
        }
        self.separated_at = Some(self.current.len());
    }

    fn end_part(&mut self) {
        let part = self.current.trim();
        if !part.is_empty() {
            self.parts.push(part.to_string());
        }
        self.current.clear();
    }

    fn at_word_start(&self) -> bool {
        self.current.is_empty() || self.separated_at == Some(self.current.len())
    }
}

/// Splits `command` on `&&`, `||`, `;`, `|`, `&`, newlines and subshell parentheses outside
/// quotes, reading `\` escapes, single and double quotes, comments and substitutions as a shell
/// does.
pub fn split(command: &str) -> Split {
    let chars: Vec<char> = command.chars().collect();
    let mut frames = vec![Frame::new(FrameKind::Top, 0)];
    let mut nested = Vec::new();
    let mut plain = true;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let frame = frames.last_mut().expect("the top frame is never closed");
        match frame.quote {
            Quote::Single => {
                frame.current.push(c);
                if c == '\'' {
                    frame.quote = Quote::None;
                }
                i += 1;
                continue;
            }
            Quote::Double => {
                match c {
                    '"' => {
                        frame.current.push(c);
                        frame.quote = Quote::None;
                    }
                    '\\' => {
                        frame.current.push(c);
                        if let Some(escaped) = next {
                            frame.current.push(escaped);
                            i += 1;
                        }
                    }
                    '$' if next == Some('{') => {
                        // A parameter expansion is one word: nothing in it is a comment or an
                        // operator; what it expands to is not known, so the line is not plain.
                        plain = false;
                        let len = parameter_expansion_len(&chars, i);
                        frame.current.extend(&chars[i..i + len]);
                        i += len;
                        continue;
                    }
                    '$' if next == Some('(') => {
                        plain = false;
                        frames.push(Frame::new(FrameKind::Parenthesised, i));
                        i += 1;
                    }
                    '`' => {
                        plain = false;
                        frames.push(Frame::new(FrameKind::Backtick, i));
                    }
                    _ => frame.current.push(c),
                }
                i += 1;
                continue;
            }
            Quote::None => {}
        }
        match c {
            ' ' | '\t' => frame.space(),
            '\\' => {
                frame.current.push(c);
                if let Some(escaped) = next {
                    frame.current.push(escaped);
                    i += 1;
                }
            }
            '\'' => {
                if frame.current.ends_with('$') {
                    // ANSI-C quoting reads `\'` as a quote inside the word.
                    plain = false;
                }
                frame.quote = Quote::Single;
                frame.current.push(c);
            }
            '"' => {
                frame.quote = Quote::Double;
                frame.current.push(c);
            }
            '#' if frame.at_word_start() => {
                while i + 1 < chars.len() && chars[i + 1] != '\n' {
                    i += 1;
                }
            }
            '$' if next == Some('{') => {
                plain = false;
                let len = parameter_expansion_len(&chars, i);
                frame.current.extend(&chars[i..i + len]);
                i += len;
                continue;
            }
            '$' | '<' | '>' if next == Some('(') => {
                plain = false;
                frames.push(Frame::new(FrameKind::Parenthesised, i));
                i += 1;
            }
            '`' if frame.kind == FrameKind::Backtick => {
                close(&mut frames, &chars, i, &mut nested);
            }
            '`' => {
                plain = false;
                frames.push(Frame::new(FrameKind::Backtick, i));
            }
            '<' | '>' => match fd_duplication_len(&chars, i) {
                Some(len) => {
                    frame.current.extend(&chars[i..i + len]);
                    i += len;
                    continue;
                }
                None => {
                    plain = false;
                    frame.current.push(c);
                }
            },
            '&' if next == Some('>') => {
                plain = false;
                frame.current.push(c);
            }
            '(' => {
                if frame.kind == FrameKind::Parenthesised {
                    frame.depth += 1;
                }
                frame.end_part();
            }
            ')' if frame.kind == FrameKind::Parenthesised && frame.depth == 0 => {
                close(&mut frames, &chars, i, &mut nested);
            }
            ')' => {
                frame.depth = frame.depth.saturating_sub(1);
                frame.end_part();
            }
            '&' | '|' | ';' | '\n' | '\r' => frame.end_part(),
            _ => frame.current.push(c),
        }
        i += 1;
    }
    if frames.len() > 1 || frames[0].quote != Quote::None {
        plain = false;
    }
    while frames.len() > 1 {
        let mut frame = frames.pop().expect("more than one frame");
        frame.end_part();
        nested.append(&mut frame.parts);
    }
    let mut top = frames.pop().expect("the top frame");
    top.end_part();
    Split {
        parts: top.parts,
        nested,
        plain,
    }
}

/// The length of the parameter expansion `${…}` starting at `chars[at]`, through the `}` that
/// closes it (nested `${…}`, quotes and backslashes inside it read as the shell reads them); to
/// the end of the line when it is never closed.
fn parameter_expansion_len(chars: &[char], at: usize) -> usize {
    let mut depth = 0usize;
    let mut quote = Quote::None;
    let mut i = at;
    while i < chars.len() {
        let c = chars[i];
        match (quote, c) {
            (Quote::Single, '\'') | (Quote::Double, '"') => quote = Quote::None,
            (Quote::Single, _) => {}
            (_, '\\') => i += 1,
            (Quote::None, '\'') => quote = Quote::Single,
            (Quote::None, '"') => quote = Quote::Double,
            (_, '$') if chars.get(i + 1) == Some(&'{') => {
                depth += 1;
                i += 1;
            }
            (Quote::None, '}') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1 - at;
                }
            }
            _ => {}
        }
        i += 1;
    }
    chars.len() - at
}

/// Ends the substitution that `chars[at]` closes: its commands join `nested`, and its text joins
/// the command around it.
fn close(frames: &mut Vec<Frame>, chars: &[char], at: usize, nested: &mut Vec<String>) {
    let mut frame = frames.pop().expect("a substitution frame");
    frame.end_part();
    nested.append(&mut frame.parts);
    let outer = frames.last_mut().expect("the top frame");
    outer.current.extend(&chars[frame.start..=at]);
}

/// The length of a file-descriptor duplication starting at `chars[at]` (`>&2`, `<&0`, `>&-`, the
/// `>&1` of `2>&1`), which names no file; `None` for any other redirection.
fn fd_duplication_len(chars: &[char], at: usize) -> Option<usize> {
    if chars.get(at + 1) != Some(&'&') {
        return None;
    }
    let mut end = at + 2;
    if chars.get(end) == Some(&'-') {
        end += 1;
    } else {
        while chars.get(end).is_some_and(char::is_ascii_digit) {
            end += 1;
        }
        if end == at + 2 {
            return None;
        }
    }
    match chars.get(end) {
        None => Some(end - at),
        Some(c) if c.is_whitespace() || ";&|)".contains(*c) => Some(end - at),
        Some(_) => None,
    }
}

/// `text` with each run of unquoted spaces and tabs collapsed to one space, trimmed: the form
/// both a rule's pattern and a command are compared in (the shell reads them the same).
pub fn collapse_spaces(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote = Quote::None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Quote::None, ' ' | '\t') => {
                if !out.is_empty() && !out.ends_with(' ') {
                    out.push(' ');
                }
                continue;
            }
            (Quote::None | Quote::Double, '\\') => {
                out.push(c);
                if let Some(escaped) = chars.next() {
                    out.push(escaped);
                }
                continue;
            }
            (Quote::None, '\'') => quote = Quote::Single,
            (Quote::None, '"') => quote = Quote::Double,
            (Quote::Single, '\'') | (Quote::Double, '"') => quote = Quote::None,
            _ => {}
        }
        out.push(c);
    }
    out.trim_end_matches(' ').to_string()
}

/// Shell words that only structure a line (`if …; then …; fi`, `{ …; }`, `! cmd`, `time cmd`):
/// the command is what follows them.
const KEYWORDS: &[&str] = &[
    "!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time",
];

/// Commands that run the command that follows their options (`nohup rm x`, `timeout 5 rm x`).
const WRAPPERS: &[&str] = &[
    "builtin", "command", "env", "exec", "nice", "nohup", "stdbuf", "time", "timeout",
];

/// `part` without the leading keywords that only structure the line (`then git diff` is
/// `git diff`): what an allow rule must match. Empty when the part is only structure (`fi`).
pub fn without_keywords(part: &str) -> &str {
    let mut rest = part;
    loop {
        let (word, after) = first_word(rest);
        if word.is_empty() || !KEYWORDS.contains(&word) {
            return rest;
        }
        rest = after;
    }
}

/// `part` also without leading variable assignments (`FOO=1 rm x`) and the wrappers that run the
/// command after them (`nohup`, `timeout 5`, `env`): what a deny or ask rule is also matched
/// against. Best effort, as in Claude Code: a deny rule over a command's arguments can still be
/// worded around.
pub fn bare_command(part: &str) -> &str {
    let mut rest = part;
    let mut after_wrapper = false;
    loop {
        let (word, after) = first_word(rest);
        let skip = !word.is_empty()
            && (KEYWORDS.contains(&word)
                || WRAPPERS.contains(&word)
                || is_assignment(word)
                || (after_wrapper && (word.starts_with('-') || is_duration(word))));
        if !skip || after.is_empty() {
            return rest;
        }
        after_wrapper = WRAPPERS.contains(&word) || (after_wrapper && !is_assignment(word));
        rest = after;
    }
}

/// Shells whose `-c` argument is itself a command line.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh", "busybox"];

/// Commands that run the rest of their words as a command, after their options; besides
/// [`WRAPPERS`], those a deny rule is most often worded around with.
const RUNNERS: &[&str] = &["doas", "setsid", "sudo", "watch", "xargs"];

/// What a deny or ask rule is also matched against for `part`, as the shell would run it: the
/// words unquoted (`"rm"`, `r''m`, `\rm` are `rm`), the command word without its folder
/// (`/bin/rm` is `rm`), leading wrappers and runners with their options dropped (`sudo -n rm`,
/// `setsid rm`), git's global options dropped (`git -C . --no-pager push` is `git push`), and the
/// command lines inside `sh -c '…'`, `eval '…'` and `find … -exec … ;`, to a few levels. Best
/// effort: a rule over a command's words can always be worded around by a determined author,
/// which is why a command file is reviewed before it is trusted.
pub fn deny_candidates(part: &str) -> Vec<String> {
    let mut out = Vec::new();
    unquoted_candidates(part, 0, &mut out);
    out
}

fn unquoted_candidates(part: &str, depth: usize, out: &mut Vec<String>) {
    if depth > 3 {
        return;
    }
    let Ok(words) = shell_words::split(part) else {
        return;
    };
    let mut words: &[String] = &words;
    // Leading structure, assignments, wrappers and runners (with their options).
    loop {
        let Some(word) = words.first() else {
            return;
        };
        let word = word.as_str();
        let base = word.rsplit('/').next().unwrap_or(word);
        if KEYWORDS.contains(&word) || is_assignment(word) {
            words = &words[1..];
        } else if WRAPPERS.contains(&base) || RUNNERS.contains(&base) {
            let runner = base.to_string();
            words = &words[1..];
            while words.first().is_some_and(|next| {
                next.starts_with('-') || is_duration(next) || is_assignment(next)
            }) {
                // `env -u NAME`, `sudo -u USER`, `xargs -n 1`: an option's value is a word of
                // its own.
                let takes_value = matches!(
                    (runner.as_str(), words[0].as_str()),
                    ("env", "-u")
                        | ("sudo" | "doas", "-u" | "-g")
                        | ("xargs", "-n" | "-I" | "-L" | "-P" | "-d" | "-E" | "-s")
                        | ("nice", "-n")
                        | ("timeout", "-s" | "-k")
                );
                words = &words[if takes_value { 2.min(words.len()) } else { 1 }..];
            }
        } else {
            break;
        }
    }
    let command = words[0].rsplit('/').next().unwrap_or(&words[0]).to_string();
    let mut rest: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    if command == "git" {
        // git's global options come before its subcommand.
        while let Some(first) = rest.first() {
            match *first {
                "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" => {
                    rest.drain(..2.min(rest.len()));
                }
                option if option.starts_with('-') => {
                    rest.remove(0);
                }
                _ => break,
            }
        }
    }
    let mut line = command.clone();
    for word in &rest {
        line.push(' ');
        line.push_str(word);
    }
    out.push(line);
    let nested: Option<String> = if SHELLS.contains(&command.as_str()) {
        rest.iter()
            .position(|word| *word == "-c")
            .and_then(|at| rest.get(at + 1))
            .map(|line| line.to_string())
    } else if command == "eval" {
        Some(rest.join(" "))
    } else if command == "find" {
        rest.iter()
            .position(|word| *word == "-exec" || *word == "-execdir")
            .map(|at| {
                rest[at + 1..]
                    .iter()
                    .take_while(|word| **word != ";" && **word != "+")
                    .copied()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
    } else {
        None
    };
    if let Some(nested) = nested {
        let split = split(&nested);
        for inner in split.parts.iter().chain(&split.nested) {
            unquoted_candidates(inner, depth + 1, out);
        }
    }
}

/// The first word of `text` (up to an unquoted space) and what follows it.
fn first_word(text: &str) -> (&str, &str) {
    let mut quote = Quote::None;
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (Quote::None | Quote::Double, '\\') => escaped = true,
            (Quote::None, ' ') => return (&text[..at], text[at + 1..].trim_start()),
            (Quote::None, '\'') => quote = Quote::Single,
            (Quote::None, '"') => quote = Quote::Double,
            (Quote::Single, '\'') | (Quote::Double, '"') => quote = Quote::None,
            _ => {}
        }
    }
    (text, "")
}

/// `NAME=value`, `NAME+=value`.
fn is_assignment(word: &str) -> bool {
    let Some(at) = word.find('=') else {
        return false;
    };
    let name = word[..at].strip_suffix('+').unwrap_or(&word[..at]);
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `5`, `0.5`, `10s`, `2m`: a wrapper's number or duration argument.
fn is_duration(word: &str) -> bool {
    let digits = word.trim_end_matches(['s', 'm', 'h', 'd']);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(command: &str) -> Vec<String> {
        split(command).parts
    }

    #[test]
    fn operators_outside_quotes_split_the_line() {
        assert_eq!(
            parts("git diff && rm -rf /"),
            ["git diff", "rm -rf /"].map(String::from)
        );
        assert_eq!(
            parts("a || b; c | d & e\nf"),
            ["a", "b", "c", "d", "e", "f"].map(String::from)
        );
        assert_eq!(
            parts("echo 'a && b' \"c; d\""),
            ["echo 'a && b' \"c; d\""].map(String::from)
        );
        assert_eq!(parts("echo a\\;b"), ["echo a\\;b"].map(String::from));
        // An escaped quote opens nothing: the `;` after it separates.
        assert_eq!(
            parts("echo \\\"; rm -rf x; echo \\\""),
            ["echo \\\"", "rm -rf x", "echo \\\""].map(String::from)
        );
        assert_eq!(
            parts("(rm -rf x)"),
            ["rm -rf x"].map(String::from),
            "a subshell's commands are parts"
        );
        assert_eq!(
            parts("git   diff \t HEAD"),
            ["git diff HEAD"].map(String::from)
        );
        assert!(split("git diff && rm -rf /").plain);
    }

    #[test]
    fn a_parameter_expansion_is_one_word_and_never_plain() {
        let split = split("echo ${x:- #}; touch y");
        assert_eq!(split.parts, ["echo ${x:- #}", "touch y"].map(String::from));
        assert!(!split.plain);
        assert_eq!(parts("echo ${x%)|#}; touch y")[1], "touch y");
        assert_eq!(parts("echo \"${a:-${b:- #}}\" ; touch y")[1], "touch y");
    }

    #[test]
    fn deny_candidates_read_the_command_as_the_shell_runs_it() {
        let has = |line: &str, want: &str| {
            let candidates = deny_candidates(line);
            assert!(
                candidates.iter().any(|c| c == want),
                "{line}: {candidates:?}"
            );
        };
        has("\\rm -rf x", "rm -rf x");
        has("\"rm\" x", "rm x");
        has("r''m x", "rm x");
        has("/bin/rm x", "rm x");
        has("sudo -n -u root rm x", "rm x");
        has("env -u HOME FOO=1 rm x", "rm x");
        has("xargs -n 1 rm", "rm");
        has("sh -c 'rm x; ls'", "rm x");
        has("eval 'rm x'", "rm x");
        has("find . -exec rm {} ;", "rm {}");
        has("git -C . -c a=b --no-pager push origin", "git push origin");
    }

    #[test]
    fn a_comment_ends_at_the_newline_and_hides_no_command() {
        assert_eq!(
            parts("git diff # it's fine\nrm -rf x"),
            ["git diff", "rm -rf x"].map(String::from)
        );
        assert_eq!(parts("echo a#b"), ["echo a#b"].map(String::from));
        // An escaped space does not start a word: `#` after it is not a comment.
        assert_eq!(
            parts("git diff HEAD\\ #; touch x"),
            ["git diff HEAD\\ #", "touch x"].map(String::from)
        );
        assert_eq!(
            parts("git diff \\  #; touch x"),
            ["git diff \\"].map(String::from)
        );
    }

    #[test]
    fn substitutions_and_redirections_are_not_plain() {
        for command in [
            "echo $(rm -rf x)",
            "echo \"$(rm -rf x)\"",
            "echo `rm -rf x`",
            "diff <(ls a) <(ls b)",
            "git diff > out.txt",
            "git diff >> out.txt",
            "sort < in.txt",
            "git diff &> out.txt",
            "echo $'a\\'b'",
            "echo 'unclosed",
            "cat <<EOF",
        ] {
            assert!(!split(command).plain, "{command}");
        }
        for command in ["git diff 2>&1", "git diff >&2", "git diff 2>&-", "echo '>'"] {
            assert!(split(command).plain, "{command}");
        }
        assert_eq!(parts("git diff 2>&1"), ["git diff 2>&1"].map(String::from));
    }

    #[test]
    fn the_commands_inside_substitutions_are_found() {
        let found = split("echo \"$(rm -rf x; echo ')')\" `curl evil`");
        assert_eq!(found.nested, ["rm -rf x", "echo ')'", "curl evil"]);
        assert_eq!(found.parts, ["echo \"$(rm -rf x; echo ')')\" `curl evil`"]);
        assert_eq!(split("a $( (b) ; c )").nested, ["b", "c"]);
    }

    #[test]
    fn keywords_wrappers_and_assignments_are_stripped_for_matching() {
        assert_eq!(without_keywords("then git diff"), "git diff");
        assert_eq!(without_keywords("! { git diff"), "git diff");
        assert_eq!(without_keywords("fi"), "");
        assert_eq!(without_keywords("FOO=1 git diff"), "FOO=1 git diff");
        assert_eq!(bare_command("FOO=\"a b\" rm -rf x"), "rm -rf x");
        assert_eq!(bare_command("timeout -s 9 10s nohup rm -rf x"), "rm -rf x");
        assert_eq!(bare_command("nice -n 5 rm x"), "rm x");
        assert_eq!(bare_command("env A=1 rm x"), "rm x");
        assert_eq!(bare_command("nohup"), "nohup");
        assert_eq!(collapse_spaces("  a   'b   c'  d "), "a 'b   c' d");
    }
}
