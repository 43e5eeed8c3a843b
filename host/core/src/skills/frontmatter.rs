//! The YAML frontmatter of skills (`SKILL.md`) and slash-command Markdown files, read strictly.
//!
//! A frontmatter carries safety fields (`disable-model-invocation`, `allowed-tools`). Claude Code
//! loads the body with empty metadata when the frontmatter does not parse, which silently drops
//! them; here parsing FAILS CLOSED: a file whose frontmatter is not exactly understood is refused
//! with the `file:line` of the reason, never loaded with less metadata than it declares.
//!
//! Strict means: one mapping of known keys; no anchors, aliases, tags, duplicate keys, second
//! documents or complex keys; booleans only as plain `true`/`false` (never YAML 1.1's `yes`/`on`);
//! strings never resolved to numbers or nulls other than a plain `~`/`null`/empty; bounded work
//! on hostile input. yaml-rust2 is read through its event parser (not a tree loader or a serde
//! deserialiser) because only the events still show an anchor, an alias, a tag, a scalar's
//! quoting and each node's line before anything is resolved or merged.

use std::collections::{BTreeMap, HashMap};

use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

/// A file larger than this is refused before it is read as YAML.
const MAX_BYTES: usize = 256 * 1024;
/// Sequences and mappings nested deeper than this are refused.
const MAX_DEPTH: usize = 64;
/// The message for nesting deeper than [`MAX_DEPTH`].
const NESTED_TOO_DEEP: &str = "the frontmatter is nested more than 64 levels deep";
/// A frontmatter with more YAML events than this is refused.
const MAX_EVENTS: usize = 10_000;
/// Longest name in `arguments`.
const MAX_ARGUMENT_NAME: usize = 64;

/// A document: its frontmatter (default when the file has none) and its body.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The parsed frontmatter; [`Frontmatter::default`] when the file has none (or an empty one).
    pub frontmatter: Frontmatter,
    /// The Markdown after the frontmatter's closing line (the whole text, after a BOM, without
    /// one), as written.
    pub body: String,
    /// 1-based line the body starts on
    pub body_line: usize,
    /// whether the file had a frontmatter block at all
    pub had_frontmatter: bool,
}

/// The fields a skill or command declares, as written (the caller checks which are required and
/// what a `name` may be, since skills and commands differ).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Frontmatter {
    /// `name`: the skill's or command's name.
    pub name: Option<String>,
    /// `description`: what it does, shown to the model and the user.
    pub description: Option<String>,
    /// `license`: the skill's licence (Agent Skills).
    pub license: Option<String>,
    /// `compatibility`: the environments it needs (Agent Skills).
    pub compatibility: Option<String>,
    /// `metadata`: free text pairs (Agent Skills).
    pub metadata: BTreeMap<String, String>,
    /// `allowed-tools`: tools (permission rules) it may use without asking.
    pub allowed_tools: Vec<String>,
    /// `disallowed-tools`: tools it may not use.
    pub disallowed_tools: Vec<String>,
    /// `when_to_use` (or `when-to-use`): when the model should invoke it.
    pub when_to_use: Option<String>,
    /// `argument-hint`: the arguments shown to the user when completing the command.
    pub argument_hint: Option<String>,
    /// `arguments`: named arguments, in order.
    pub arguments: Vec<String>,
    /// `user-invocable`: whether the user can run it as a slash command.
    pub user_invocable: Option<bool>,
    /// `disable-model-invocation`: whether the model is kept from invoking it on its own.
    pub disable_model_invocation: Option<bool>,
    /// `paths`: globs of the files it applies to, as written.
    pub paths: Vec<String>,
    /// `model`: the model to run it with.
    pub model: Option<String>,
    /// `effort`: the reasoning effort to run it with.
    pub effort: Option<String>,
    /// Claude Code fields that are recognised but not honoured (`hooks`, `context`, `agent`,
    /// `shell`, `background`, `version`): their keys, for a warning.
    pub ignored: Vec<String>,
}

/// Why a file's frontmatter was refused: 1-based line in the FILE (not in the YAML block) and a
/// one-line message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct FrontmatterError {
    /// 1-based line in the file.
    pub line: usize,
    /// What is wrong there, on one line.
    pub message: String,
}

/// Parses a whole file's text (SKILL.md or a command .md).
///
/// # Errors
/// A [`FrontmatterError`] for a file over 256 KiB, an unclosed frontmatter, YAML that is not
/// valid or not strict (anchors, aliases, tags, duplicate keys, ...), an unknown key, or a value
/// of the wrong kind.
pub fn parse_document(text: &str) -> Result<Document, FrontmatterError> {
    if text.len() > MAX_BYTES {
        return Err(error(1, "the file is larger than 256 KiB"));
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(split) = split(text)? else {
        return Ok(Document {
            frontmatter: Frontmatter::default(),
            body: text.to_owned(),
            body_line: 1,
            had_frontmatter: false,
        });
    };
    let yaml = bracketed_hints_quoted(split.yaml);
    let frontmatter = match read_yaml(&yaml, split.closing_line)? {
        None => Frontmatter::default(),
        Some(root) => interpret(root)?,
    };
    Ok(Document {
        frontmatter,
        body: split.body.to_owned(),
        body_line: split.closing_line + 1,
        had_frontmatter: true,
    })
}

/// Claude Code's documented `argument-hint: [message]` and `argument-hint: [pr] [priority]` are
/// meant as text (the second is not even YAML): a top-level `argument-hint` whose unquoted value
/// starts with `[` is read as that text, single-quoted, on the same line (so lines still match).
fn bracketed_hints_quoted(yaml: &str) -> std::borrow::Cow<'_, str> {
    if !yaml.contains("argument-hint:") {
        return std::borrow::Cow::Borrowed(yaml);
    }
    let lines: Vec<String> = yaml
        .split_inclusive('\n')
        .map(|line| {
            let Some(value) = line.strip_prefix("argument-hint:") else {
                return line.to_string();
            };
            let ending = &value[value.trim_end_matches(['\r', '\n']).len()..];
            let value = value.trim_end_matches(['\r', '\n']).trim();
            if value.starts_with('[') {
                format!("argument-hint: '{}'{ending}", value.replace('\'', "''"))
            } else {
                line.to_string()
            }
        })
        .collect();
    std::borrow::Cow::Owned(lines.concat())
}

fn error(line: usize, message: impl Into<String>) -> FrontmatterError {
    FrontmatterError {
        line,
        message: message.into(),
    }
}

/// A file cut at its frontmatter's delimiters.
struct Split<'a> {
    /// Between the opening and the closing line (the YAML starts on file line 2).
    yaml: &'a str,
    /// After the closing line.
    body: &'a str,
    /// 1-based line of the closing `---` or `...`.
    closing_line: usize,
}

/// Whether `line` (with its line ending) is `marker` followed only by spaces or tabs.
fn is_delimiter(line: &str, marker: &str) -> bool {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let line = line.strip_suffix('\r').unwrap_or(line);
    line.trim_end_matches([' ', '\t']) == marker
}

/// Finds the frontmatter block: `None` when the first line is not `---`.
fn split(text: &str) -> Result<Option<Split<'_>>, FrontmatterError> {
    let mut lines = text.split_inclusive('\n');
    match lines.next() {
        Some(first) if is_delimiter(first, "---") => {
            let start = first.len();
            let mut offset = start;
            for (index, line) in lines.enumerate() {
                if is_delimiter(line, "---") || is_delimiter(line, "...") {
                    return Ok(Some(Split {
                        yaml: &text[start..offset],
                        body: &text[offset + line.len()..],
                        closing_line: index + 2,
                    }));
                }
                offset += line.len();
            }
            Err(error(
                1,
                "the frontmatter opened on line 1 is never closed with ---",
            ))
        }
        _ => Ok(None),
    }
}

/// A YAML node with the file line it starts on. Scalars keep their text as written and whether
/// they were plain (unquoted, not a block scalar).
#[derive(Debug)]
enum Node {
    Scalar {
        text: String,
        plain: bool,
        line: usize,
    },
    Sequence {
        items: Vec<Node>,
        line: usize,
    },
    Mapping {
        entries: Vec<Entry>,
        line: usize,
    },
}

impl Node {
    fn line(&self) -> usize {
        match self {
            Node::Scalar { line, .. }
            | Node::Sequence { line, .. }
            | Node::Mapping { line, .. } => *line,
        }
    }

    /// What the node is, for a message: the scalar itself (quoted if it was), or its kind.
    fn describe(&self) -> String {
        match self {
            Node::Scalar { text, plain, .. } if text.is_empty() && *plain => {
                "an empty value".to_owned()
            }
            Node::Scalar {
                text, plain: true, ..
            } => shown(text),
            Node::Scalar { text, .. } => format!("\"{}\"", shown(text)),
            Node::Sequence { .. } => "a list".to_owned(),
            Node::Mapping { .. } => "a mapping".to_owned(),
        }
    }
}

/// One `key: value` of a mapping.
#[derive(Debug)]
struct Entry {
    key: String,
    key_line: usize,
    value: Node,
}

/// A sequence or mapping still being read.
enum Open {
    Sequence {
        items: Vec<Node>,
        line: usize,
    },
    Mapping {
        entries: Vec<Entry>,
        /// A key read, its value not yet.
        key: Option<(String, usize)>,
        /// Each key's first line, to refuse a repeated one.
        seen: HashMap<String, usize>,
        line: usize,
    },
}

/// Text safe for a one-line message: control characters dropped, at most 80 characters.
fn shown(text: &str) -> String {
    let mut out: String = text.chars().filter(|c| !c.is_control()).take(80).collect();
    if text.chars().filter(|c| !c.is_control()).nth(80).is_some() {
        out.push('…');
    }
    out
}

/// A tag as written: the parser expands `!!` to `tag:yaml.org,2002:`.
fn tag_text(tag: &Tag) -> String {
    let handle = match tag.handle.as_str() {
        "tag:yaml.org,2002:" => "!!",
        other => other,
    };
    shown(&format!("{handle}{}", tag.suffix))
}

/// Refuses an anchor or a tag on a node.
fn plain_node(anchor: usize, tag: Option<&Tag>, line: usize) -> Result<(), FrontmatterError> {
    if anchor != 0 {
        return Err(error(
            line,
            "anchors (&name) are not allowed in a frontmatter",
        ));
    }
    if let Some(tag) = tag {
        return Err(error(
            line,
            format!("tags ({}) are not allowed in a frontmatter", tag_text(tag)),
        ));
    }
    Ok(())
}

/// The file line of a marker in the YAML block (which starts on file line 2), at most the
/// closing line (an error at the block's end is reported there).
fn file_line(marker: &Marker, closing_line: usize) -> usize {
    (1 + marker.line().max(1)).min(closing_line)
}

fn scan_error(scan: &ScanError, closing_line: usize) -> FrontmatterError {
    let line = file_line(scan.marker(), closing_line);
    if scan.info().contains("unknown anchor") {
        return error(line, "aliases (*name) are not allowed in a frontmatter");
    }
    // The scanner's own limit (255 flow levels), met before the parser's events reach ours.
    if scan.info() == "recursion limit exceeded" {
        return error(line, NESTED_TOO_DEEP);
    }
    error(
        line,
        format!("the frontmatter is not valid YAML: {}", shown(scan.info())),
    )
}

/// Reads the YAML block into nodes, refusing what a strict frontmatter may not hold as soon as
/// its event arrives: `None` for a block without a document (empty, or only comments).
fn read_yaml(yaml: &str, closing_line: usize) -> Result<Option<Node>, FrontmatterError> {
    let mut parser = Parser::new_from_str(yaml);
    let mut stack: Vec<Open> = Vec::new();
    let mut root = None;
    let mut documents = 0;
    let mut events = 0;
    loop {
        let (event, marker) = parser
            .next_token()
            .map_err(|scan| scan_error(&scan, closing_line))?;
        let line = file_line(&marker, closing_line);
        events += 1;
        if events > MAX_EVENTS {
            return Err(error(
                line,
                format!("the frontmatter is too large (more than {MAX_EVENTS} YAML events)"),
            ));
        }
        let node = match event {
            Event::StreamEnd => break,
            Event::Nothing | Event::StreamStart | Event::DocumentEnd => continue,
            Event::DocumentStart => {
                documents += 1;
                if documents > 1 {
                    return Err(error(
                        line,
                        "a second YAML document starts here: a frontmatter is one mapping",
                    ));
                }
                continue;
            }
            Event::Alias(_) => {
                return Err(error(
                    line,
                    "aliases (*name) are not allowed in a frontmatter",
                ));
            }
            Event::Scalar(text, style, anchor, tag) => {
                plain_node(anchor, tag.as_ref(), line)?;
                Node::Scalar {
                    text,
                    plain: style == TScalarStyle::Plain,
                    line,
                }
            }
            Event::SequenceStart(anchor, ref tag) | Event::MappingStart(anchor, ref tag) => {
                plain_node(anchor, tag.as_ref(), line)?;
                if let Some(Open::Mapping { key: None, .. }) = stack.last() {
                    return Err(error(line, "a key must be text, not a list or a mapping"));
                }
                if stack.len() >= MAX_DEPTH {
                    return Err(error(line, NESTED_TOO_DEEP));
                }
                stack.push(if matches!(event, Event::SequenceStart(..)) {
                    Open::Sequence {
                        items: Vec::new(),
                        line,
                    }
                } else {
                    Open::Mapping {
                        entries: Vec::new(),
                        key: None,
                        seen: HashMap::new(),
                        line,
                    }
                });
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Open::Sequence { items, line }) => Node::Sequence { items, line },
                Some(Open::Mapping { entries, line, .. }) => Node::Mapping { entries, line },
                None => return Err(error(line, "the frontmatter is not valid YAML")),
            },
        };
        match stack.last_mut() {
            None => root = Some(node),
            Some(Open::Sequence { items, .. }) => items.push(node),
            Some(Open::Mapping {
                entries, key, seen, ..
            }) => match key.take() {
                Some((key, key_line)) => entries.push(Entry {
                    key,
                    key_line,
                    value: node,
                }),
                None => {
                    let Node::Scalar { text, line, .. } = node else {
                        return Err(error(
                            node.line(),
                            "a key must be text, not a list or a mapping",
                        ));
                    };
                    if let Some(first) = seen.get(&text) {
                        return Err(error(
                            line,
                            format!("duplicate key \"{}\" (first on line {first})", shown(&text)),
                        ));
                    }
                    seen.insert(text.clone(), line);
                    *key = Some((text, line));
                }
            },
        }
    }
    Ok(root)
}

/// Whether a plain scalar means "no value" (YAML 1.2's core-schema nulls).
fn is_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

/// The top-level mapping into fields.
fn interpret(root: Node) -> Result<Frontmatter, FrontmatterError> {
    let Node::Mapping { entries, .. } = root else {
        return Err(error(
            root.line(),
            format!(
                "the frontmatter must be a mapping of keys to values, not {}",
                root.describe()
            ),
        ));
    };
    let mut fm = Frontmatter::default();
    let mut when_to_use_key: Option<(String, usize)> = None;
    for Entry {
        key,
        key_line,
        value,
    } in entries
    {
        let field = key.as_str();
        match field {
            "name" => fm.name = text(field, key_line, value)?,
            "description" => fm.description = text(field, key_line, value)?,
            "license" => fm.license = text(field, key_line, value)?,
            "compatibility" => fm.compatibility = text(field, key_line, value)?,
            "argument-hint" => fm.argument_hint = text(field, key_line, value)?,
            "model" => fm.model = text(field, key_line, value)?,
            "effort" => fm.effort = text(field, key_line, value)?,
            "when_to_use" | "when-to-use" => {
                if let Some((first, first_line)) = &when_to_use_key {
                    return Err(error(
                        key_line,
                        format!("\"{field}\" repeats \"{first}\" from line {first_line}"),
                    ));
                }
                fm.when_to_use = text(field, key_line, value)?;
                when_to_use_key = Some((key.clone(), key_line));
            }
            "allowed-tools" => fm.allowed_tools = strings(list(field, key_line, value)?),
            "disallowed-tools" => fm.disallowed_tools = strings(list(field, key_line, value)?),
            "paths" => fm.paths = strings(list(field, key_line, value)?),
            "arguments" => fm.arguments = arguments(list(field, key_line, value)?)?,
            "user-invocable" => fm.user_invocable = Some(boolean(field, key_line, &value)?),
            "disable-model-invocation" => {
                fm.disable_model_invocation = Some(boolean(field, key_line, &value)?);
            }
            "metadata" => fm.metadata = metadata(key_line, value)?,
            "hooks" | "context" | "agent" | "shell" | "background" | "version" => {
                fm.ignored.push(key);
            }
            _ => {
                return Err(error(
                    key_line,
                    format!("unknown field \"{}\"", shown(field)),
                ));
            }
        }
    }
    Ok(fm)
}

/// A text field: any scalar as written; a plain null is absent.
fn text(field: &str, key_line: usize, value: Node) -> Result<Option<String>, FrontmatterError> {
    match value {
        Node::Scalar { text, plain, .. } if plain && is_null(&text) => Ok(None),
        Node::Scalar { text, .. } => Ok(Some(text)),
        other => Err(error(
            key_line,
            format!("\"{field}\" must be text, not {}", other.describe()),
        )),
    }
}

/// A boolean field: only a plain `true` or `false`.
fn boolean(field: &str, key_line: usize, value: &Node) -> Result<bool, FrontmatterError> {
    match value {
        Node::Scalar {
            text, plain: true, ..
        } if text == "true" => Ok(true),
        Node::Scalar {
            text, plain: true, ..
        } if text == "false" => Ok(false),
        other => Err(error(
            key_line,
            format!(
                "\"{field}\" must be true or false, not {}",
                other.describe()
            ),
        )),
    }
}

/// A list field: a sequence of scalars, or one text split on commas and whitespace outside
/// parentheses. Each item with its file line.
fn list(
    field: &str,
    key_line: usize,
    value: Node,
) -> Result<Vec<(String, usize)>, FrontmatterError> {
    match value {
        Node::Scalar { text, plain, .. } if plain && is_null(&text) => Ok(Vec::new()),
        Node::Scalar { text, .. } => Ok(split_list(&text)
            .into_iter()
            .map(|item| (item, key_line))
            .collect()),
        Node::Sequence { items, .. } => items
            .into_iter()
            .map(|item| match item {
                Node::Scalar { text, plain, line } if plain && is_null(&text) => {
                    Err(error(line, format!("an item of \"{field}\" is empty")))
                }
                Node::Scalar { text, line, .. } => Ok((text, line)),
                other => Err(error(
                    other.line(),
                    format!(
                        "each item of \"{field}\" must be text, not {}",
                        other.describe()
                    ),
                )),
            })
            .collect(),
        Node::Mapping { .. } => Err(error(
            key_line,
            format!("\"{field}\" must be a list or text, not a mapping"),
        )),
    }
}

fn strings(items: Vec<(String, usize)>) -> Vec<String> {
    items.into_iter().map(|(item, _)| item).collect()
}

/// Splits `Bash(git add:*), Read` on commas and whitespace outside parentheses, dropping empties.
fn split_list(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && (c == ',' || c.is_whitespace()) {
            if !current.is_empty() {
                items.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        items.push(current);
    }
    items
}

/// `arguments`: each a name of 1–64 letters, digits or `_`, not starting with a digit.
fn arguments(items: Vec<(String, usize)>) -> Result<Vec<String>, FrontmatterError> {
    items
        .into_iter()
        .map(|(name, line)| {
            let mut chars = name.chars();
            let valid = chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
                && name.len() <= MAX_ARGUMENT_NAME;
            if valid {
                Ok(name)
            } else {
                Err(error(
                    line,
                    format!(
                        "\"arguments\" holds \"{}\", which is not a name (1 to {MAX_ARGUMENT_NAME} \
                         letters, digits or _, not starting with a digit)",
                        shown(&name)
                    ),
                ))
            }
        })
        .collect()
}

/// `metadata`: a mapping of text to text; a plain null is empty.
fn metadata(key_line: usize, value: Node) -> Result<BTreeMap<String, String>, FrontmatterError> {
    match value {
        Node::Scalar { text, plain, .. } if plain && is_null(&text) => Ok(BTreeMap::new()),
        Node::Mapping { entries, .. } => entries
            .into_iter()
            .map(|entry| match entry.value {
                Node::Scalar { text, .. } => Ok((entry.key, text)),
                other => Err(error(
                    entry.key_line,
                    format!(
                        "\"metadata.{}\" must be text, not {}",
                        shown(&entry.key),
                        other.describe()
                    ),
                )),
            })
            .collect(),
        other => Err(error(
            key_line,
            format!(
                "\"metadata\" must be a mapping of text to text, not {}",
                other.describe()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Frontmatter {
        match parse_document(text) {
            Ok(document) => document.frontmatter,
            Err(e) => panic!("{text:?}: {e}"),
        }
    }

    fn refused(text: &str) -> FrontmatterError {
        match parse_document(text) {
            Ok(document) => panic!("{text:?} was accepted: {document:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn a_full_frontmatter_is_read() {
        let text = "---\n\
            name: review\n\
            description: \"Reviews: the diff\"\n\
            license: Apache-2.0\n\
            compatibility: needs git\n\
            metadata:\n  author: me\n  version: 1.0\n\
            allowed-tools: Bash(git diff:*), Read\n\
            disallowed-tools: [Write, Edit]\n\
            when_to_use: |\n  When asked.\n\
            argument-hint: <branch>\n\
            arguments: [branch, _depth2]\n\
            user-invocable: true\n\
            disable-model-invocation: false\n\
            paths:\n  - src/**/*.rs\n  - ' docs/ '\n\
            model: sonnet\n\
            effort: high\n\
            hooks: {PreToolUse: [{matcher: Bash}]}\n\
            version: 2\n\
            ---\n\
            # Body\n";
        let document = parse_document(text).unwrap();
        let fm = &document.frontmatter;
        assert_eq!(fm.name.as_deref(), Some("review"));
        assert_eq!(fm.description.as_deref(), Some("Reviews: the diff"));
        assert_eq!(fm.license.as_deref(), Some("Apache-2.0"));
        assert_eq!(fm.compatibility.as_deref(), Some("needs git"));
        assert_eq!(
            fm.metadata,
            BTreeMap::from([
                ("author".to_owned(), "me".to_owned()),
                ("version".to_owned(), "1.0".to_owned())
            ])
        );
        assert_eq!(fm.allowed_tools, ["Bash(git diff:*)", "Read"]);
        assert_eq!(fm.disallowed_tools, ["Write", "Edit"]);
        assert_eq!(fm.when_to_use.as_deref(), Some("When asked.\n"));
        assert_eq!(fm.argument_hint.as_deref(), Some("<branch>"));
        assert_eq!(fm.arguments, ["branch", "_depth2"]);
        assert_eq!(fm.user_invocable, Some(true));
        assert_eq!(fm.disable_model_invocation, Some(false));
        assert_eq!(fm.paths, ["src/**/*.rs", " docs/ "]);
        assert_eq!(fm.model.as_deref(), Some("sonnet"));
        assert_eq!(fm.effort.as_deref(), Some("high"));
        assert_eq!(fm.ignored, ["hooks", "version"]);
        assert!(document.had_frontmatter);
        assert_eq!(document.body, "# Body\n");
        assert_eq!(document.body_line, 25);
    }

    #[test]
    fn a_bom_is_stripped_and_crlf_works_like_lf() {
        let document =
            parse_document("\u{feff}---\r\nname: x\r\ndescription: d\r\n---\r\nbody\r\n").unwrap();
        assert!(document.had_frontmatter);
        assert_eq!(document.frontmatter.name.as_deref(), Some("x"));
        assert_eq!(document.frontmatter.description.as_deref(), Some("d"));
        assert_eq!(document.body, "body\r\n");
        assert_eq!(document.body_line, 5);
        // The BOM does not change line numbers.
        assert_eq!(
            refused("\u{feff}---\r\nname: x\r\nnope: 1\r\n---\r\n").line,
            3
        );
        // Without frontmatter the body is the text after the BOM.
        let document = parse_document("\u{feff}# Title\n").unwrap();
        assert!(!document.had_frontmatter);
        assert_eq!(document.body, "# Title\n");
    }

    #[test]
    fn frontmatter_exists_only_when_the_first_line_is_the_delimiter() {
        for text in [
            "",
            "# Title\n---\nname: x\n---\n",
            " ---\nname: x\n---\n",
            "----\n---\n",
        ] {
            let document = parse_document(text).unwrap();
            assert!(!document.had_frontmatter, "{text:?}");
            assert_eq!(document.frontmatter, Frontmatter::default());
            assert_eq!((document.body.as_str(), document.body_line), (text, 1));
        }
        // Trailing spaces and tabs are allowed on both delimiters; `...` closes too.
        let document = parse_document("--- \t\nname: x\n---\t\nbody").unwrap();
        assert_eq!(document.frontmatter.name.as_deref(), Some("x"));
        assert_eq!((document.body.as_str(), document.body_line), ("body", 4));
        let document = parse_document("---\nname: x\n...\nbody").unwrap();
        assert_eq!(document.frontmatter.name.as_deref(), Some("x"));
        // A closing line at the very end leaves an empty body.
        let document = parse_document("---\nname: x\n---").unwrap();
        assert_eq!((document.body.as_str(), document.body_line), ("", 4));
    }

    #[test]
    fn an_unclosed_frontmatter_is_refused_at_line_1() {
        for text in [
            "---",
            "---\n",
            "---\nname: x\n",
            "---\nname: x\n-- -\nbody\n",
        ] {
            assert_eq!(
                refused(text),
                error(
                    1,
                    "the frontmatter opened on line 1 is never closed with ---"
                )
            );
        }
    }

    #[test]
    fn an_empty_frontmatter_is_the_default() {
        for text in ["---\n---\nbody", "---\n\n  \n# only a comment\n---\nbody"] {
            let document = parse_document(text).unwrap();
            assert!(document.had_frontmatter);
            assert_eq!(document.frontmatter, Frontmatter::default());
            assert_eq!(document.body, "body");
        }
    }

    #[test]
    fn the_frontmatter_must_be_one_mapping() {
        let e = refused("---\njust text\n---\n");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("must be a mapping"), "{e}");
        assert_eq!(refused("---\n- a\n- b\n---\n").line, 2);
        let e = refused("---\nname: x\n--- y\n---\n");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("second YAML document"), "{e}");
    }

    #[test]
    fn anchors_aliases_and_tags_are_refused_with_their_line() {
        let e = refused("---\nname: &a x\ndescription: *a\n---\n");
        assert_eq!(
            e,
            error(2, "anchors (&name) are not allowed in a frontmatter")
        );
        let e = refused("---\nname: x\ndescription: *a\n---\n");
        assert_eq!(
            e,
            error(3, "aliases (*name) are not allowed in a frontmatter")
        );
        let e = refused("---\nname: x\nmetadata: &m\n  a: b\n---\n");
        assert!(e.message.contains("anchors"), "{e}");
        let e = refused("---\nname: x\ndescription: !!str 1\n---\n");
        assert_eq!(e, error(3, "tags (!!str) are not allowed in a frontmatter"));
        let e = refused("---\nname: !x y\n---\n");
        assert_eq!(e, error(2, "tags (!x) are not allowed in a frontmatter"));
        let e = refused("---\nname: x\npaths: !!seq\n  - a\n---\n");
        assert!(e.message.contains("tags"), "{e}");
    }

    #[test]
    fn duplicate_keys_are_refused_naming_the_first_line() {
        let e = refused("---\nname: x\ndescription: d\nname: y\n---\n");
        assert_eq!(e, error(4, "duplicate key \"name\" (first on line 2)"));
        // At any depth, and across quoting styles.
        let e = refused("---\nmetadata:\n  a: 1\n  \"a\": 2\n---\n");
        assert_eq!(e, error(4, "duplicate key \"a\" (first on line 3)"));
        // `when_to_use` and `when-to-use` are the same field.
        let e = refused("---\nwhen_to_use: a\nwhen-to-use: b\n---\n");
        assert_eq!(
            e,
            error(3, "\"when-to-use\" repeats \"when_to_use\" from line 2")
        );
        assert_eq!(
            parse("---\nwhen-to-use: now\n---\n").when_to_use.as_deref(),
            Some("now")
        );
    }

    #[test]
    fn complex_keys_are_refused() {
        let e = refused("---\n? [a, b]\n: c\n---\n");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("a key must be text"), "{e}");
        assert!(
            refused("---\n{a: b}: c\n---\n")
                .message
                .contains("a key must be text")
        );
    }

    #[test]
    fn yaml_syntax_errors_carry_the_file_line() {
        let e = refused("---\nname: x\ndescription: a: b\n---\n");
        assert_eq!(e.line, 3);
        assert!(
            e.message.starts_with("the frontmatter is not valid YAML: "),
            "{e}"
        );
        let e = refused("---\nname: x\nmetadata:\n  a: b\n c: d\n---\n");
        assert_eq!(e.line, 5, "{e}");
        let e = refused("---\nname: x\ndescription: [a, b\nmodel: y\n---\n");
        assert_eq!(e.line, 4, "{e}");
        let e = refused("---\nname: x\n\tdescription: y\n---\n");
        assert!(e.message.contains("found a tab"), "{e}");
        // An unterminated quote is reported no later than the closing line.
        let e = refused("---\nname: \"x\n---\nbody\nmore\n");
        assert!((2..=3).contains(&e.line), "{e}");
    }

    #[test]
    fn booleans_are_only_plain_true_or_false() {
        let fm = parse("---\nuser-invocable: false\ndisable-model-invocation: true\n---\n");
        assert_eq!(
            (fm.user_invocable, fm.disable_model_invocation),
            (Some(false), Some(true))
        );
        for (value, shown) in [
            ("yes", "yes"),
            ("no", "no"),
            ("on", "on"),
            ("off", "off"),
            ("True", "True"),
            ("TRUE", "TRUE"),
            ("1", "1"),
            ("\"true\"", "\"true\""),
            ("'false'", "\"false\""),
            ("", "an empty value"),
            ("[true]", "a list"),
            ("{a: b}", "a mapping"),
        ] {
            let text = format!("---\nname: x\ndisable-model-invocation: {value}\n---\n");
            assert_eq!(
                refused(&text),
                error(
                    3,
                    format!("\"disable-model-invocation\" must be true or false, not {shown}")
                )
            );
        }
        let e = refused("---\nuser-invocable: yes\n---\n");
        assert_eq!(
            e.message,
            "\"user-invocable\" must be true or false, not yes"
        );
    }

    #[test]
    fn strings_are_taken_as_written_and_nulls_are_absent() {
        let fm = parse(
            "---\nname: 1.0\ndescription: >\n  folded\n  text\nlicense: 'null'\n\
             compatibility: 0x10\nmodel: true\neffort: ~\nargument-hint:\n---\n",
        );
        assert_eq!(fm.name.as_deref(), Some("1.0"));
        assert_eq!(fm.description.as_deref(), Some("folded text\n"));
        assert_eq!(fm.license.as_deref(), Some("null"));
        assert_eq!(fm.compatibility.as_deref(), Some("0x10"));
        assert_eq!(fm.model.as_deref(), Some("true"));
        assert_eq!(fm.effort, None);
        assert_eq!(fm.argument_hint, None);
        assert_eq!(parse("---\nname: null\n---\n").name, None);
        let e = refused("---\nname: x\ndescription:\n  - a\n---\n");
        assert_eq!(e, error(3, "\"description\" must be text, not a list"));
        let e = refused("---\nmodel: {a: b}\n---\n");
        assert_eq!(e, error(2, "\"model\" must be text, not a mapping"));
    }

    #[test]
    fn lists_are_sequences_or_split_text() {
        let fm = parse(
            "---\nallowed-tools: Bash(git add:*), Bash(git status:*) Read\n\
             disallowed-tools:\n  - Bash(rm -rf *)\n  - Write\npaths: 'src/a b.rs, docs'\n---\n",
        );
        assert_eq!(
            fm.allowed_tools,
            ["Bash(git add:*)", "Bash(git status:*)", "Read"]
        );
        assert_eq!(fm.disallowed_tools, ["Bash(rm -rf *)", "Write"]);
        assert_eq!(fm.paths, ["src/a", "b.rs", "docs"]);
        assert_eq!(
            split_list(" ,a,, b\t(c, d) e(f g)h ,"),
            ["a", "b", "(c, d)", "e(f g)h"]
        );
        assert_eq!(split_list("a) b (c"), ["a)", "b", "(c"]);
        assert!(parse("---\nallowed-tools:\n---\n").allowed_tools.is_empty());
        let e = refused("---\nallowed-tools:\n  - Read\n  - [Write]\n---\n");
        assert_eq!(
            e,
            error(4, "each item of \"allowed-tools\" must be text, not a list")
        );
        let e = refused("---\npaths:\n  - a\n  -\n---\n");
        assert!(e.message.contains("an item of \"paths\" is empty"), "{e}");
        let e = refused("---\nallowed-tools: {Read: true}\n---\n");
        assert_eq!(
            e,
            error(2, "\"allowed-tools\" must be a list or text, not a mapping")
        );
    }

    #[test]
    fn argument_names_are_checked() {
        assert_eq!(
            parse("---\narguments: a, B_2 _c\n---\n").arguments,
            ["a", "B_2", "_c"]
        );
        let long = "a".repeat(64);
        assert_eq!(
            parse(&format!("---\narguments: [{long}]\n---\n")).arguments,
            [long]
        );
        for bad in ["1a", "a-b", "é", "a.b", &"a".repeat(65), "''"] {
            let e = refused(&format!("---\narguments:\n  - ok\n  - {bad}\n---\n"));
            assert_eq!(e.line, 4, "{bad}: {e}");
            assert!(e.message.starts_with("\"arguments\" holds"), "{e}");
        }
    }

    #[test]
    fn metadata_is_a_mapping_of_text() {
        let fm = parse("---\nmetadata:\n  a: 1\n  'b': \"two\"\n  c:\n---\n");
        assert_eq!(fm.metadata.get("a").map(String::as_str), Some("1"));
        assert_eq!(fm.metadata.get("b").map(String::as_str), Some("two"));
        assert_eq!(fm.metadata.get("c").map(String::as_str), Some(""));
        assert!(parse("---\nmetadata:\n---\n").metadata.is_empty());
        let e = refused("---\nmetadata:\n  a: [1]\n---\n");
        assert_eq!(e, error(3, "\"metadata.a\" must be text, not a list"));
        let e = refused("---\nmetadata: text\n---\n");
        assert_eq!(
            e,
            error(
                2,
                "\"metadata\" must be a mapping of text to text, not text"
            )
        );
        let e = refused("---\nmetadata: [a]\n---\n");
        assert!(e.message.contains("must be a mapping"), "{e}");
    }

    #[test]
    fn unknown_fields_are_refused_and_claude_code_fields_ignored() {
        let e = refused("---\nname: x\ndisable-model-invokation: true\n---\n");
        assert_eq!(e, error(3, "unknown field \"disable-model-invokation\""));
        let fm = parse(
            "---\nhooks:\n  PreToolUse: []\ncontext: fork\nagent: Explore\nshell: bash\n\
             background: yes\nversion: 3\n---\n",
        );
        assert_eq!(
            fm.ignored,
            [
                "hooks",
                "context",
                "agent",
                "shell",
                "background",
                "version"
            ]
        );
    }

    #[test]
    fn hostile_input_is_bounded() {
        let big = format!("---\nname: x\n---\n{}", "a".repeat(MAX_BYTES));
        assert_eq!(refused(&big), error(1, "the file is larger than 256 KiB"));
        let deep = format!("---\na: {}\n---\n", "[".repeat(200_000));
        let e = refused(&deep);
        assert!(e.message.contains("nested more than 64 levels"), "{e}");
        let nested = format!("---\na: {}1{}\n---\n", "[".repeat(64), "]".repeat(64));
        assert!(
            refused(&nested)
                .message
                .contains("nested more than 64 levels")
        );
        let ok = format!("---\nhooks: {}1{}\n---\n", "[".repeat(63), "]".repeat(63));
        assert_eq!(parse(&ok).ignored, ["hooks"]);
        let many: String = (0..6000).map(|i| format!("k{i}: v\n")).collect();
        let e = refused(&format!("---\n{many}---\n"));
        assert!(e.message.contains("more than 10000 YAML events"), "{e}");
        let items = format!("---\npaths: [{}]\n---\n", "a,".repeat(20_000));
        assert!(refused(&items).message.contains("YAML events"));
    }

    #[test]
    fn body_line_follows_the_closing_line() {
        let document =
            parse_document("---\nname: x\ndescription: |\n  a\n  b\n---\nbody\n").unwrap();
        assert_eq!(document.body_line, 7);
        assert_eq!(document.body, "body\n");
    }

    #[test]
    fn a_bracketed_argument_hint_is_text() {
        assert_eq!(
            parse("---\nargument-hint: [pr-number] [priority]\nname: x\n---\n")
                .argument_hint
                .as_deref(),
            Some("[pr-number] [priority]")
        );
        assert_eq!(
            parse("---\nargument-hint: [it's]\n---\n")
                .argument_hint
                .as_deref(),
            Some("[it's]")
        );
    }

    #[test]
    fn the_error_displays_its_line() {
        let e = refused("---\nbad key: 1\n---\n");
        assert_eq!(e.to_string(), "line 2: unknown field \"bad key\"");
    }

    mod properties {
        use proptest::prelude::*;

        proptest! {
            /// Any frontmatter made of YAML's significant characters ends in a document or an
            /// error whose line is inside the file, never a panic.
            #[test]
            fn any_frontmatter_is_parsed_or_refused(yaml in "[-a-z:&*!|>?'\"\\[\\]{},#~% \t\n]{0,200}") {
                let text = format!("---\n{yaml}\n---\nbody\n");
                if let Err(e) = super::parse_document(&text) {
                    prop_assert!(e.line >= 1 && e.line <= text.lines().count(), "{e}");
                }
            }
        }
    }
}
