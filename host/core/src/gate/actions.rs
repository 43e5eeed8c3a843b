//! What the host itself does on the user's behalf, decided like a tool call: a slash command's
//! `` !`cmd` `` lines ([`Action::Bash`]), its `@path` includes ([`Action::Read`]) and the
//! model's `skill` tool ([`Action::Skill`]). Their rules are `Bash(…)`, `Read(…)` and
//! `Skill(…)`, written with Claude Code's syntax in the same `permissions.allow|deny|ask` lists
//! as every other rule, under the same layer rules (deny beats allow beats ask; a project's
//! checked-in allow grants nothing; a local allow counts only when earshot signed it; a malformed
//! deny or ask rule suspends every allow rule).
//!
//! # `Bash(…)`
//!
//! The pattern is everything between the first `(` and the last `)`, so it may hold spaces,
//! quotes and parentheses. Runs of unquoted spaces are read as one space, in the pattern and in
//! the command.
//!
//! - `Bash(npm run build)` matches exactly `npm run build`.
//! - `Bash(npm run test:*)`, `Bash(git diff:*)`: a prefix. `git diff:*` matches `git diff` and
//!   `git diff HEAD~1`, not `git difftool` (the command equals the prefix, or starts with the
//!   prefix and a space).
//! - `*` matches any characters, spaces included: `Bash(npm run *)`, `Bash(* --version)`,
//!   `Bash(git * main)`. A pattern ending in a space and `*` also matches the command without
//!   them, as Claude Code's matcher does: `Bash(ls *)` matches `ls` and `ls -la`, not `lsof`.
//! - `Bash(*)` and bare `Bash` match every command.
//!
//! A command line is split into the commands it runs on `&&`, `||`, `;`, `|`, `&`, newlines
//! and subshell parentheses outside quotes (comments and `\` escapes read as a shell reads them).
//!
//! - A deny or ask rule applies when it matches the whole line, any of its commands, any command
//!   inside a `$(…)` or backtick substitution, or any of those without leading keywords
//!   (`then`, `!`, `{`), variable assignments (`FOO=1 rm x`) and wrappers (`nohup`,
//!   `timeout 5`, `env`, `nice`). `Bash(rm *)` denies `git diff && rm -rf /`.
//! - An allow rule applies only when every command of the line (without leading keywords) is
//!   matched by an allow rule, and the line holds no command or process substitution (`$(`,
//!   backticks, `<(`, `>(`), no redirection to or from a file (`>`, `>>`, `<`; `2>&1` is
//!   fine) and no unclosed quote. So `Bash(git diff:*)` does not allow `git diff; rm -rf ~`,
//!   nor `git diff $(rm -rf ~)`. Two kinds of allow rule apply to any line, because they already
//!   name everything it could run: one that matches every command (`Bash`, `Bash(*)`), and one
//!   without `*` that names the whole line exactly (what answering "always" records).
//!
//! # `Read(…)`
//!
//! Gitignore-style patterns over the file's path relative to the project root, matched with
//! `*` not crossing `/` and `**` crossing it: `Read(src/**)`, `Read(./src/**)` and
//! `Read(/src/**)` all mean the project's `src`. A pattern with no `/` matches at any depth:
//! `Read(*.env)` and `Read(.env)` match `.env` and `config/.env`. A pattern that names a
//! directory also matches what is in it (`Read(secrets)`, `Read(secrets/)`). `Read(//abs/**)`
//! (absolute) and `Read(~/…)` (home) are in force but never match, since the host reads only
//! inside the project. Bare `Read`, `Read(*)` and `Read(**)` match every file.
//!
//! # `Skill(…)`
//!
//! A glob over the skill's name: `Skill(deploy-*)`. Claude Code's `Skill(name *)` (with any
//! arguments) is the same as `Skill(name)`. Bare `Skill` and `Skill(*)` match every skill.
//!
//! # Defaults
//!
//! With no rule matching, a command is asked about, and a read or a skill is allowed: the read is
//! inside the project, named by a command the user trusts, and a skill only adds text.

use globset::{GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};

use super::rules::{Effect, is_invisible_or_control};
use super::shell;

/// Something the host itself does on the user's behalf that the gate decides like a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action<'a> {
    /// A shell command line a slash command runs (`` !`git status` ``).
    Bash(&'a str),
    /// A file a slash command includes (`@src/lib.rs`): its path relative to the project root,
    /// `/`-separated, already confined to the project.
    Read(&'a str),
    /// The model loading a skill by name.
    Skill(&'a str),
}

/// The rule keywords the host decides for its own actions.
pub const ACTION_KEYWORDS: &[&str] = &["Bash", "Read", "Skill"];

/// Glob syntax: a target holding any of it has no rule that names only it.
const GLOB_SYNTAX: &[char] = &['*', '?', '[', ']', '{', '}', '\\'];

impl<'a> Action<'a> {
    /// The action `Bash(git status)`, `Read(src/lib.rs)` or `Skill(deploy)` names, for
    /// `earshot permissions check`: the keyword, then everything between the first `(` and the
    /// last `)`. `None` for any other text.
    pub fn parse(text: &'a str) -> Option<Action<'a>> {
        let (keyword, rest) = text.split_once('(')?;
        let target = rest.strip_suffix(')')?;
        match keyword {
            "Bash" => Some(Action::Bash(target)),
            "Read" => Some(Action::Read(target.strip_prefix("./").unwrap_or(target))),
            "Skill" => Some(Action::Skill(target)),
            _ => None,
        }
    }

    /// The rule keyword for this kind of action: `Bash`, `Read` or `Skill`.
    pub fn keyword(&self) -> &'static str {
        match self {
            Action::Bash(_) => "Bash",
            Action::Read(_) => "Read",
            Action::Skill(_) => "Skill",
        }
    }

    /// The command, path or skill name the action is about.
    pub fn target(&self) -> &str {
        match self {
            Action::Bash(target) | Action::Read(target) | Action::Skill(target) => target,
        }
    }

    /// `Bash(git status)` — the rule that names exactly this action. A file at the project root
    /// is written `Read(./Cargo.toml)`, since a pattern with no `/` would match at any depth.
    pub fn rule(&self) -> String {
        match self {
            Action::Read(path) if !path.contains('/') => format!("Read(./{path})"),
            _ => format!("{}({})", self.keyword(), self.target()),
        }
    }

    /// [`Action::rule`] when it is a well-formed rule that matches this action and no other;
    /// `None` when it would not be (a command holding `*` or a control character, a path or
    /// name holding glob syntax, an empty target). Only such a rule is ever recorded for an
    /// "always" answer: the user must never be given a wildcard they did not mean.
    pub fn exact_rule(&self) -> Option<String> {
        let target = self.target();
        if target.trim().is_empty() {
            return None;
        }
        let literal = match self {
            Action::Bash(command) => !command.contains('*'),
            Action::Read(path) => {
                !path.contains(GLOB_SYNTAX)
                    && path
                        .split('/')
                        .all(|segment| !matches!(segment, "" | "." | ".."))
            }
            Action::Skill(name) => {
                !name.contains(GLOB_SYNTAX) && !name.contains(char::is_whitespace)
            }
        };
        if !literal {
            return None;
        }
        let rule = self.rule();
        let pattern = compile_action_rule(&rule)?.ok()?;
        pattern.matches(self).then_some(rule)
    }

    /// The effect when no rule matches: a command asks; a read inside the project that the
    /// user's own command names, and a skill (it only adds text), are allowed, except a read of
    /// one of the user's own files (`is_private_path`), which asks.
    pub fn default_effect(&self) -> Effect {
        match self {
            Action::Bash(_) => Effect::Ask,
            Action::Read(path) if is_private_path(path) => Effect::Ask,
            Action::Read(_) | Action::Skill(_) => Effect::Allow,
        }
    }
}

/// The names of earshot's own local file and what is written beside it (its lock, the
/// temporary files of an atomic edit): the user's signed grants and trust records, not project
/// source.
const PRIVATE_FILE_NAMES: &[&str] = &["settings.local.json", "settings.local.json.lock"];

/// Whether `path` (relative to the project root, `/`-separated) is a file a slash command's
/// `@` include never reads without an allow rule that names it: earshot's local file and its
/// lock (`.earshot/settings.local.json`, at any depth), an atomic edit's temporary file beside
/// it, and anything under a `.git` folder (or a `.git` file, as a submodule has). They hold the
/// user's secrets and grants, not project source; `Read(**)` and the default for reads do not
/// cover them.
pub fn is_private_path(path: &str) -> bool {
    let normal = normalise_path(path);
    let segments: Vec<&str> = normal.split('/').filter(|part| !part.is_empty()).collect();
    segments
        .iter()
        .any(|segment| segment.eq_ignore_ascii_case(".git"))
        || segments.windows(2).any(|pair| {
            pair[0].eq_ignore_ascii_case(".earshot")
                && (PRIVATE_FILE_NAMES
                    .iter()
                    .any(|name| pair[1].eq_ignore_ascii_case(name))
                    || (pair[1].starts_with(".settings-") && pair[1].ends_with(".tmp")))
        })
}

/// A compiled `Bash(…)`, `Read(…)` or `Skill(…)` pattern.
#[derive(Debug, Clone)]
pub enum ActionPattern {
    Bash(BashPattern),
    Read(ReadPattern),
    Skill(SkillPattern),
}

impl ActionPattern {
    /// The keyword of the actions this pattern can match.
    pub fn keyword(&self) -> &'static str {
        match self {
            ActionPattern::Bash(_) => "Bash",
            ActionPattern::Read(_) => "Read",
            ActionPattern::Skill(_) => "Skill",
        }
    }

    /// Whether the pattern matches `action` taken as one whole (for a command line: the line
    /// itself, not split; [`BashPattern::matches`] is what the gate uses per command).
    pub fn matches(&self, action: &Action<'_>) -> bool {
        match (self, action) {
            (ActionPattern::Bash(pattern), Action::Bash(command)) => {
                pattern.matches(&shell::collapse_spaces(command))
            }
            (ActionPattern::Read(pattern), Action::Read(path)) => pattern.matches(path),
            (ActionPattern::Skill(pattern), Action::Skill(name)) => pattern.matches(name),
            _ => false,
        }
    }

    /// Whether an allow rule with this pattern may allow `action`: for a read of a private path
    /// ([`is_private_path`]) only a rule naming it explicitly does; otherwise whenever it matches.
    pub fn allows(&self, action: &Action<'_>) -> bool {
        match (self, action) {
            (ActionPattern::Read(pattern), Action::Read(path)) if is_private_path(path) => {
                pattern.names_explicitly(path)
            }
            _ => self.matches(action),
        }
    }
}

/// A `Bash(…)` pattern: a command with `*` wildcards, in one or two forms (a prefix rule or a
/// trailing ` *` also matches the bare prefix).
#[derive(Debug, Clone)]
pub struct BashPattern {
    /// Matches every command (`Bash`, `Bash(*)`).
    any: bool,
    /// The forms, with spaces collapsed; a command matching any of them matches.
    forms: Vec<String>,
    /// No `*` at all: the pattern names one command line exactly.
    literal: bool,
}

impl BashPattern {
    fn new(pattern: &str) -> Result<BashPattern, String> {
        if pattern.trim() == "*" {
            return Ok(BashPattern::any());
        }
        let forms = if let Some(prefix) = pattern.strip_suffix(":*") {
            if prefix.trim().is_empty() {
                return Err("the pattern is empty".into());
            }
            vec![prefix.to_string(), format!("{prefix} *")]
        } else if let Some(prefix) = pattern.strip_suffix(" *")
            && !prefix.trim().is_empty()
        {
            vec![pattern.to_string(), prefix.to_string()]
        } else {
            vec![pattern.to_string()]
        };
        Ok(BashPattern {
            any: false,
            forms: forms
                .iter()
                .map(|form| shell::collapse_spaces(form))
                .collect(),
            literal: !pattern.contains('*'),
        })
    }

    fn any() -> BashPattern {
        BashPattern {
            any: true,
            forms: Vec::new(),
            literal: false,
        }
    }

    /// Whether it matches `command` (one command, spaces collapsed).
    pub fn matches(&self, command: &str) -> bool {
        self.any || self.forms.iter().any(|form| wildcard_match(form, command))
    }

    /// Whether it matches every command.
    pub fn matches_everything(&self) -> bool {
        self.any
    }

    /// Whether it has no `*` and so names one command line exactly.
    pub fn is_literal(&self) -> bool {
        self.literal
    }
}

/// `*` matching any characters (spaces too), everything else literal.
fn wildcard_match(pattern: &str, text: &str) -> bool {
    let pieces: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = pieces.as_slice() else {
        return pattern == text;
    };
    if text.len() < first.len() + last.len() || !text.starts_with(first) || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for piece in middle {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

/// A `Read(…)` pattern.
#[derive(Debug, Clone)]
pub enum ReadPattern {
    /// Every file (`Read`, `Read(*)`, `Read(**)`).
    Any,
    /// An absolute or home path: never a file inside the project.
    Never,
    /// The pattern, and the pattern as a directory (`…/**`); and, when it holds no glob syntax,
    /// its segments as written (so it can be told whether it names a private path).
    Globs(GlobSet, Option<Vec<String>>),
}

impl ReadPattern {
    fn new(pattern: &str) -> Result<ReadPattern, String> {
        if matches!(pattern, "*" | "**") {
            return Ok(ReadPattern::Any);
        }
        if pattern.starts_with("//") || pattern == "~" || pattern.starts_with("~/") {
            return Ok(ReadPattern::Never);
        }
        let (mut anchored, rest) = match pattern
            .strip_prefix("./")
            .or_else(|| pattern.strip_prefix('/'))
        {
            Some(rest) => (true, rest),
            None => (false, pattern),
        };
        let (rest, directory) = match rest.strip_suffix('/') {
            Some(rest) => (rest, true),
            None => (rest, false),
        };
        if rest.is_empty() {
            return if anchored {
                Ok(ReadPattern::Any)
            } else {
                Err("the pattern is empty".into())
            };
        }
        anchored |= rest.contains('/');
        let base = if anchored {
            rest.to_string()
        } else {
            format!("**/{rest}")
        };
        let mut globs = GlobSetBuilder::new();
        let mut add = |text: &str| {
            GlobBuilder::new(text)
                .literal_separator(true)
                .build()
                .map(|glob| {
                    globs.add(glob);
                })
                .map_err(|error| error.kind().to_string())
        };
        if !directory {
            add(&base)?;
        }
        add(&format!("{base}/**"))?;
        let literal = (!rest.contains(GLOB_SYNTAX)).then(|| {
            rest.split('/')
                .filter(|segment| !matches!(*segment, "" | "."))
                .map(str::to_string)
                .collect()
        });
        globs
            .build()
            .map(|set| ReadPattern::Globs(set, literal))
            .map_err(|error| error.kind().to_string())
    }

    fn matches(&self, path: &str) -> bool {
        match self {
            ReadPattern::Any => true,
            ReadPattern::Never => false,
            ReadPattern::Globs(globs, _) => globs.is_match(normalise_path(path)),
        }
    }

    /// Whether the pattern matches `path` and names it explicitly, without glob syntax: a
    /// pattern naming a `.git` folder, or ending in the file's own name (`Read(.git/config)`,
    /// `Read(.git)`, `Read(.earshot/settings.local.json)`). Only such a rule allows a read of a
    /// private path ([`is_private_path`]); `Read(**)` or `Read(.earshot)` does not.
    fn names_explicitly(&self, path: &str) -> bool {
        let ReadPattern::Globs(_, Some(segments)) = self else {
            return false;
        };
        let normal = normalise_path(path);
        self.matches(path)
            && (segments
                .iter()
                .any(|segment| segment.eq_ignore_ascii_case(".git"))
                || segments
                    .last()
                    .is_some_and(|last| normal.rsplit('/').next() == Some(last.as_str())))
    }
}

/// `path` without empty and `.` segments, and with each `..` taking back the segment before it:
/// `src/../.env` is `.env`, so a deny rule for `.env` cannot be walked around.
fn normalise_path(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." if segments.last().is_some_and(|last| *last != "..") => {
                segments.pop();
            }
            _ => segments.push(segment),
        }
    }
    segments.join("/")
}

/// A `Skill(…)` pattern.
#[derive(Debug, Clone)]
pub enum SkillPattern {
    /// Every skill (`Skill`, `Skill(*)`).
    Any,
    /// A glob over the name.
    Glob(GlobMatcher),
}

impl SkillPattern {
    fn new(pattern: &str) -> Result<SkillPattern, String> {
        let pattern = pattern
            .strip_suffix(" *")
            .filter(|name| !name.trim().is_empty())
            .unwrap_or(pattern);
        if pattern == "*" {
            return Ok(SkillPattern::Any);
        }
        GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map(|glob| SkillPattern::Glob(glob.compile_matcher()))
            .map_err(|error| error.kind().to_string())
    }

    fn matches(&self, name: &str) -> bool {
        match self {
            SkillPattern::Any => true,
            SkillPattern::Glob(glob) => glob.is_match(name),
        }
    }
}

/// For a rule with a keyword the host decides for its own actions (`Bash`, `Read`, `Skill`,
/// bare or with a pattern): its compiled pattern, or why it is malformed. `None` for any other
/// rule, which [`super::parse_rule`] reads.
pub fn compile_action_rule(text: &str) -> Option<Result<ActionPattern, String>> {
    let (keyword, pattern) = match text.split_once('(') {
        Some((keyword, rest)) if ACTION_KEYWORDS.contains(&keyword) => (keyword, Some(rest)),
        None if ACTION_KEYWORDS.contains(&text) => (text, None),
        _ => return None,
    };
    if text.chars().any(is_invisible_or_control) {
        return Some(Err(
            "a rule may not hold control characters, escape sequences or invisible formatting characters".into(),
        ));
    }
    let pattern = match pattern.map(|rest| rest.strip_suffix(')')) {
        None => "*",
        Some(None) => return Some(Err("missing the closing ')'".into())),
        Some(Some(pattern)) if pattern.trim().is_empty() => {
            return Some(Err("the pattern is empty".into()));
        }
        Some(Some(pattern)) => pattern,
    };
    Some(match keyword {
        "Bash" => BashPattern::new(pattern).map(ActionPattern::Bash),
        "Read" => ReadPattern::new(pattern).map(ActionPattern::Read),
        _ => SkillPattern::new(pattern).map(ActionPattern::Skill),
    })
}

/// Every text a deny or ask rule is matched against for `command`: the whole line, each command
/// of it and of its substitutions, and each of those without leading keywords, assignments and
/// wrappers.
pub fn narrowing_candidates(command: &str, split: &shell::Split) -> Vec<String> {
    let mut candidates = vec![command.to_string(), shell::collapse_spaces(command)];
    for part in split.parts.iter().chain(&split.nested) {
        candidates.push(part.clone());
        let bare = shell::bare_command(part);
        if bare != part {
            candidates.push(bare.to_string());
        }
        candidates.extend(shell::deny_candidates(part));
    }
    candidates.dedup();
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(rule: &str) -> ActionPattern {
        compile_action_rule(rule).unwrap().unwrap()
    }

    fn bash(rule: &str, command: &str) -> bool {
        pattern(rule).matches(&Action::Bash(command))
    }

    fn read(rule: &str, path: &str) -> bool {
        pattern(rule).matches(&Action::Read(path))
    }

    #[test]
    fn claude_codes_bash_examples() {
        assert!(bash("Bash(npm run build)", "npm run build"));
        assert!(!bash("Bash(npm run build)", "npm run build --watch"));
        assert!(bash("Bash(npm run test:*)", "npm run test"));
        assert!(bash("Bash(npm run test:*)", "npm run test -- --ci"));
        assert!(bash("Bash(git diff:*)", "git diff"));
        assert!(bash("Bash(git diff:*)", "git diff HEAD~1"));
        assert!(!bash("Bash(git diff:*)", "git difftool"));
        assert!(bash("Bash(npm run *)", "npm run lint"));
        assert!(bash("Bash(npm run *)", "npm run"));
        assert!(!bash("Bash(npm run *)", "npm runner"));
        assert!(bash("Bash(* --version)", "node --version"));
        assert!(bash("Bash(git * main)", "git checkout main"));
        assert!(bash("Bash(git * main)", "git merge origin main"));
        assert!(!bash("Bash(git * main)", "git checkout dev"));
        assert!(bash("Bash(ls *)", "ls -la"));
        assert!(!bash("Bash(ls *)", "lsof"));
        assert!(bash("Bash(ls*)", "lsof"));
        for rule in ["Bash", "Bash(*)"] {
            assert!(bash(rule, "anything at all"));
        }
        assert!(bash("Bash(echo (hi))", "echo (hi)"));
        assert!(bash("Bash(git  diff:*)", "git diff   HEAD"));
    }

    #[test]
    fn claude_codes_read_examples() {
        for rule in ["Read(src/**)", "Read(./src/**)", "Read(/src/**)"] {
            assert!(read(rule, "src/lib.rs"), "{rule}");
            assert!(read(rule, "src/gate/mod.rs"), "{rule}");
            assert!(!read(rule, "lib/src/x.rs"), "{rule}");
        }
        for rule in ["Read(*.env)", "Read(.env)"] {
            assert!(read(rule, ".env"), "{rule}");
            assert!(read(rule, "config/.env"), "{rule}");
        }
        assert!(read("Read(./.env)", ".env"));
        assert!(!read("Read(./.env)", "config/.env"));
        assert!(read("Read(src/*.rs)", "src/lib.rs"));
        assert!(
            !read("Read(src/*.rs)", "src/gate/mod.rs"),
            "* does not cross /"
        );
        assert!(read("Read(secrets)", "secrets/key.pem"));
        assert!(read("Read(secrets/)", "a/secrets/key.pem"));
        assert!(read("Read(.env)", "src/../.env"));
        for rule in ["Read(//etc/**)", "Read(~/.ssh/**)", "Read(~)"] {
            assert!(!read(rule, "etc/passwd"), "{rule}");
        }
        for rule in ["Read", "Read(*)", "Read(**)"] {
            assert!(read(rule, "deep/down/file.txt"), "{rule}");
        }
    }

    #[test]
    fn skill_rules_glob_over_the_name() {
        let skill = |rule: &str, name: &str| pattern(rule).matches(&Action::Skill(name));
        assert!(skill("Skill(deploy-*)", "deploy-prod"));
        assert!(!skill("Skill(deploy-*)", "release"));
        assert!(skill("Skill(deploy *)", "deploy"));
        assert!(skill("Skill", "anything"));
        assert!(skill("Skill(*)", "anything"));
    }

    #[test]
    fn malformed_action_rules_say_why() {
        for (rule, why) in [
            ("Bash()", "empty"),
            ("Bash(:*)", "empty"),
            ("Bash( )", "empty"),
            ("Read()", "empty"),
            ("Bash(ls", "closing"),
            ("Bash(\u{1b}[2J)", "control"),
            ("Read(\u{202e}x)", "control"),
            ("Read(src/[)", "unclosed"),
            ("Skill({a)", "unclosed"),
        ] {
            let error = compile_action_rule(rule).unwrap().unwrap_err();
            assert!(error.contains(why), "{rule}: {error}");
        }
        assert!(compile_action_rule("Edit(x)").is_none());
        assert!(compile_action_rule("Mcp(x__y)").is_none());
        assert!(compile_action_rule("Bashful(x)").is_none());
    }

    #[test]
    fn the_exact_rule_names_only_its_action() {
        assert_eq!(
            Action::Bash("git status").exact_rule().as_deref(),
            Some("Bash(git status)")
        );
        assert_eq!(
            Action::Bash("git diff && rm x").exact_rule().as_deref(),
            Some("Bash(git diff && rm x)")
        );
        assert_eq!(Action::Bash("ls *.rs").exact_rule(), None);
        assert_eq!(Action::Bash("ls :*").exact_rule(), None);
        assert_eq!(Action::Bash("a\nb").exact_rule(), None);
        assert_eq!(Action::Bash("").exact_rule(), None);
        assert_eq!(
            Action::Read("Cargo.toml").exact_rule().as_deref(),
            Some("Read(./Cargo.toml)")
        );
        assert!(!read("Read(./Cargo.toml)", "sub/Cargo.toml"));
        assert_eq!(Action::Read("src/[x].rs").exact_rule(), None);
        assert_eq!(Action::Read("src/../x").exact_rule(), None);
        assert_eq!(
            Action::Skill("deploy").exact_rule().as_deref(),
            Some("Skill(deploy)")
        );
        assert_eq!(Action::Skill("de*").exact_rule(), None);
    }

    #[test]
    fn an_action_parses_from_its_rule() {
        assert_eq!(
            Action::parse("Bash(git diff (x))"),
            Some(Action::Bash("git diff (x)"))
        );
        assert_eq!(
            Action::parse("Read(./src/lib.rs)"),
            Some(Action::Read("src/lib.rs"))
        );
        assert_eq!(Action::parse("Skill(x)"), Some(Action::Skill("x")));
        assert_eq!(Action::parse("Mcp(a__b)"), None);
        assert_eq!(Action::parse("Bash"), None);
    }

    #[test]
    fn private_paths_are_allowed_only_by_a_rule_naming_them() {
        for private in [
            ".earshot/settings.local.json",
            ".earshot/settings.local.json.lock",
            ".earshot/.settings-1a2b.tmp",
            "sub/.earshot/settings.local.json",
            ".git/config",
            "./.git/HEAD",
            "sub/.git/config",
            "src/../.git/config",
            ".GIT/config",
        ] {
            assert!(is_private_path(private), "{private}");
            assert_eq!(Action::Read(private).default_effect(), Effect::Ask);
            for broad in [
                "Read",
                "Read(**)",
                "Read(*)",
                "Read(./**)",
                "Read(.earshot)",
                "Read(*.json)",
            ] {
                assert!(
                    !pattern(broad).allows(&Action::Read(private)),
                    "{broad} {private}"
                );
            }
        }
        for public in [
            ".earshot/settings.json",
            ".gitignore",
            "src/git/config",
            "notes.txt",
        ] {
            assert!(!is_private_path(public), "{public}");
            assert!(pattern("Read(**)").allows(&Action::Read(public)));
        }
        let allows = |rule: &str, path: &str| pattern(rule).allows(&Action::Read(path));
        assert!(allows(
            "Read(.earshot/settings.local.json)",
            ".earshot/settings.local.json"
        ));
        assert!(allows("Read(./.git/config)", ".git/config"));
        assert!(allows("Read(.git)", "sub/.git/config"));
        assert!(!allows(
            "Read(.earshot/settings.local.json)",
            ".earshot/settings.local.json.lock"
        ));
        assert!(!allows("Read(.git/*)", ".git/config"));
    }
}
