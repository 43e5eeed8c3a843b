//! Expanding `/name ARGS` into the text the model gets, once.
//!
//! The item is read again and must still be what was loaded (for a project item: what was
//! trusted). Its template is cut into pieces before the arguments are looked at
//! ([`super::arguments`]); then, in order, text gets its placeholders filled, each `@path` is
//! gated as `Read(path)` and inserted fenced and labelled, and each `` !`cmd` `` is gated as
//! `Bash(cmd)` and its output inserted fenced and labelled with its exit code. A deny (or an ask
//! with no one to answer it) ends the expansion with the reason: nothing half-expanded reaches
//! the model. Frontmatter (`allowed-tools`) approves nothing here.

use std::path::{Component, Path, PathBuf};

use crate::gate::{Action, DecidedBy, Effect, Gate, Outcome, Prompter};
use crate::settings::Settings;

use super::arguments::{Arguments, Piece, pieces, substitute, uses_arguments};
use super::item::{ItemKind, ItemOrigin, LoadedItem, current_body};
use super::library::Library;
use super::shell::run_shell_line;

/// The most bytes of one included file inserted.
pub const INCLUDE_CAP: usize = 256 << 10;

/// The longest `` !`cmd` `` line run: a permission prompt shows it whole.
pub const MAX_SHELL_LINE: usize = 500;

/// A command expanded: the text for the model, and what it came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Expansion {
    /// The name it was invoked by (`git:commit`, `project:deploy`, `mcp__github__review`).
    pub name: String,
    /// Skill or command; `None` for an MCP prompt.
    pub kind: Option<ItemKind>,
    /// Whose it is; `None` for an MCP prompt.
    pub origin: Option<ItemOrigin>,
    /// Its file; `None` for an MCP prompt.
    pub file: Option<PathBuf>,
    /// Its digest; `None` for an MCP prompt.
    pub digest: Option<String>,
    /// The text the model gets.
    pub text: String,
}

/// Why a command was not expanded: one line saying what happened and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExpandError {
    /// No command, user-invocable skill or trusted project item has that name.
    #[error("{0}")]
    Unknown(String),
    /// It is there but cannot be used now (changed since loaded or trusted, unreadable).
    #[error("{0}")]
    NotUsable(String),
    /// The arguments could not be read.
    #[error("/{command}: {reason}")]
    Arguments {
        /// The command.
        command: String,
        /// Why.
        reason: String,
    },
    /// An `@path` was refused (outside the project, missing, not text) or denied.
    #[error("/{command}: @{path} was not included: {reason}")]
    Include {
        /// The command.
        command: String,
        /// The path as written.
        path: String,
        /// Why.
        reason: String,
    },
    /// A `` !`cmd` `` was denied, or shell lines are turned off.
    #[error("/{command}: !`{shell}` was not run: {reason}")]
    Shell {
        /// The command.
        command: String,
        /// The shell line as written.
        shell: String,
        /// Why.
        reason: String,
    },
}

/// Expands `/name raw_arguments` (`name` with or without `/`), asking `prompter` through `gate`
/// for each `@path` and `` !`cmd` `` the rules leave to ask.
///
/// # Errors
/// An [`ExpandError`]: nothing is returned half-expanded.
pub async fn expand_command(
    library: &Library,
    settings: &Settings,
    gate: &Gate,
    prompter: &dyn Prompter,
    name: &str,
    raw_arguments: &str,
) -> Result<Expansion, ExpandError> {
    let name = name.strip_prefix('/').unwrap_or(name).to_string();
    let item = library
        .slash(&name)
        .ok_or_else(|| unknown(library, &name))?;
    if item.kind == ItemKind::Skill {
        if let Some(reason) = skill_denied(gate, &item.name) {
            return Err(ExpandError::NotUsable(format!("/{name}: {reason}")));
        }
        // Typing a skill's name approves it, unless a settings file that does not parse might
        // have denied it: then it is asked about (a deny with no one to ask), as the model's
        // load is.
        let action = Action::Skill(&item.name);
        if gate.decide_action(&action).decided_by == DecidedBy::Suspended {
            let title = format!("/{name} loads a skill");
            let detail = format!("skill file: {}", item.file.display());
            if let Outcome::Denied(reason) = gate
                .authorize_action(&action, &title, &detail, prompter)
                .await
            {
                return Err(ExpandError::NotUsable(format!("/{name}: {reason}")));
            }
        }
    }
    let (body, _, _) = current_body(item).map_err(ExpandError::NotUsable)?;
    let arguments =
        Arguments::parse(raw_arguments, &item.frontmatter.arguments).map_err(|reason| {
            ExpandError::Arguments {
                command: name.clone(),
                reason,
            }
        })?;
    let pieces = pieces(&body);
    // The root resolved once: every include is confined to it.
    let root = settings
        .project
        .as_ref()
        .and_then(|project| project.root.canonicalize().ok());
    let mut text = String::with_capacity(body.len());
    for piece in &pieces {
        match piece {
            // What no terminal shows does not reach the model (`show` marks it); in a shell line
            // or a path it is refused instead.
            Piece::Text(part) => text.push_str(&substitute(
                &super::catalogue::without_hidden(part),
                &arguments,
            )),
            Piece::Include(path) => {
                include(
                    &mut text,
                    item,
                    &name,
                    path,
                    root.as_deref(),
                    gate,
                    prompter,
                )
                .await?;
            }
            Piece::Shell(line) => {
                let ran = shell(item, &name, line, &arguments, settings, gate, prompter).await?;
                text.push_str(&ran);
            }
        }
    }
    if !arguments.raw.is_empty() && !uses_arguments(&pieces, &arguments.names) {
        text.truncate(text.trim_end().len());
        text.push_str("\n\nARGUMENTS: ");
        text.push_str(&arguments.raw);
    }
    Ok(Expansion {
        name,
        kind: Some(item.kind),
        origin: Some(item.origin),
        file: Some(item.file.clone()),
        digest: Some(item.digest.clone()),
        text,
    })
}

/// Why a `Skill(name)` deny rule refuses `name`, if one does: a skill the model may not load is
/// not typed either.
pub fn skill_denied(gate: &Gate, name: &str) -> Option<String> {
    let decision = gate.decide_action(&Action::Skill(name));
    if decision.effect != Effect::Deny {
        return None;
    }
    Some(match decision.decided_by {
        DecidedBy::Rule { rule, file, .. } => format!(
            "Skill({name}) is denied by the rule \"{rule}\" in {}",
            file.display()
        ),
        _ => format!("Skill({name}) is denied"),
    })
}

/// Why `/name` means nothing: an untrusted project item says how to trust it, a skill the user
/// may not type says so, else the names there are.
fn unknown(library: &Library, name: &str) -> ExpandError {
    let bare = name
        .strip_prefix(super::names::PROJECT_PREFIX)
        .unwrap_or(name);
    let candidates: Vec<&LoadedItem> = library
        .items()
        .iter()
        .filter(|item| item.name == bare)
        .collect();
    if let Some(item) = candidates.iter().find(|item| !item.is_active()) {
        return ExpandError::NotUsable(format!(
            "/{name}: the project's {} {}",
            item.kind.as_str(),
            item.trust.explain(item.kind.trust_kind(), &item.name)
        ));
    }
    if candidates.iter().any(|item| !item.user_invocable()) {
        return ExpandError::Unknown(format!(
            "/{name}: the skill is not for typing (user-invocable: false); the model loads it itself"
        ));
    }
    ExpandError::Unknown(format!(
        "there is no command /{name}; `earshot commands list` shows them"
    ))
}

/// The file `written` names, confined to the project: its canonical path and its path
/// relative to the project root (`/`-separated); `None` when there is no such file (or it is a
/// folder): then `@text` was not meant as an include (`npm i @types/node`) and stays as written.
///
/// # Errors
/// Why it is refused: an absolute path, `..`, a link out of the project, a fifo or device,
/// hidden characters.
pub fn resolve_include(project: &Path, written: &str) -> Result<Option<(PathBuf, String)>, String> {
    let root = project
        .canonicalize()
        .map_err(|error| format!("the project root cannot be read: {error}"))?;
    resolve_in_root(&root, written)
}

/// [`resolve_include`] under `root`, already canonical.
fn resolve_in_root(root: &Path, written: &str) -> Result<Option<(PathBuf, String)>, String> {
    if written
        .chars()
        .any(|c| c.is_control() || super::catalogue::is_hidden(c))
    {
        return Err("the path holds control or invisible characters".into());
    }
    if written.starts_with('/') || written.starts_with('~') || written.contains('\\') {
        return Err("only a path relative to the project root is included".into());
    }
    let path = Path::new(written);
    if path
        .components()
        .any(|part| !matches!(part, Component::Normal(_) | Component::CurDir))
    {
        return Err("a path with .. is not included; name the file from the project root".into());
    }
    // Walk down from the root without following anything: a path of plain folders and a file
    // (the usual case) costs one lstat a part, not a realpath of the whole absolute path. Only
    // a link on the way is resolved, and then it must stay inside the root.
    let mut walked = root.to_path_buf();
    let mut linked = false;
    for part in path.components() {
        let Component::Normal(part) = part else {
            continue;
        };
        walked.push(part);
        match std::fs::symlink_metadata(&walked) {
            Ok(meta) if meta.file_type().is_symlink() => linked = true,
            Ok(_) => {}
            Err(_) => return Ok(None),
        }
    }
    let target = if linked {
        let Ok(target) = walked.canonicalize() else {
            return Ok(None);
        };
        if !target.starts_with(root) {
            return Err("it leads out of the project through a symbolic link".into());
        }
        target
    } else {
        walked
    };
    let meta = std::fs::metadata(&target).map_err(|error| format!("it cannot be read: {error}"))?;
    if meta.is_dir() {
        return Ok(None);
    }
    if !meta.is_file() {
        return Err("it is not a regular file (a fifo, socket or device)".into());
    }
    let relative = target
        .strip_prefix(root)
        .map_err(|_| "it leads out of the project".to_string())?
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    Ok(Some((target, relative)))
}

/// Includes `written` into `out`: confined, gated as `Read(path)`, read once and copied once
/// (the fence and the label check are one scan of the bytes read). A path that names no file
/// stays as written.
async fn include(
    out: &mut String,
    item: &LoadedItem,
    name: &str,
    written: &str,
    root: Option<&Path>,
    gate: &Gate,
    prompter: &dyn Prompter,
) -> Result<(), ExpandError> {
    let refuse = |reason: String| ExpandError::Include {
        command: name.to_string(),
        path: written.to_string(),
        reason,
    };
    let root = root.ok_or_else(|| refuse("there is no project to include files from".into()))?;
    let Some((target, relative)) = resolve_in_root(root, written).map_err(refuse)? else {
        out.push('@');
        out.push_str(written);
        return Ok(());
    };
    let action = Action::Read(&relative);
    // The prompt's text is built only when the rules leave it to ask.
    if gate.decide_action(&action).effect != Effect::Allow {
        let title = format!("/{name} includes a file for the model");
        let detail = format!(
            "{} file: {} | reads: {relative}",
            item.kind.as_str(),
            item.file.display()
        );
        if let Outcome::Denied(reason) = gate
            .authorize_action(&action, &title, &detail, prompter)
            .await
        {
            return Err(refuse(reason));
        }
    }
    let (bytes, size) = read_capped(&target).map_err(refuse)?;
    let content = String::from_utf8(bytes)
        .map_err(|_| refuse("it is not UTF-8 text; only text files are included".into()))?;
    out.reserve(content.len() + relative.len() + 128);
    out.push_str("<included-file path=\"");
    out.push_str(&attribute(&relative));
    out.push_str("\">\n");
    push_fenced(out, &content);
    if size > INCLUDE_CAP as u64 {
        out.push_str(&format!(
            "[truncated: the file is {size} bytes; the first {INCLUDE_CAP} are shown]\n"
        ));
    }
    out.push_str("</included-file>");
    Ok(())
}

/// Up to [`INCLUDE_CAP`] bytes of `path` (cut back to a character boundary), and its size;
/// opened without following a link.
fn read_capped(path: &Path) -> Result<(Vec<u8>, u64), String> {
    let (mut bytes, size) = super::folder::read_no_follow(path, false, INCLUDE_CAP as u64)
        .map_err(|error| format!("it cannot be read: {error}"))?;
    if size > INCLUDE_CAP as u64 {
        let whole = super::folder::whole_characters(&bytes).len();
        bytes.truncate(whole);
    }
    Ok((bytes, size))
}

/// Where `disableCommandShell` is on, if it is in any layer (any value but `false` counts, so a
/// typo cannot turn it back off).
pub fn shell_disabled_by(settings: &Settings) -> Option<PathBuf> {
    settings
        .files
        .iter()
        .find_map(|file| match file.get("disableCommandShell") {
            None | Some(serde_json::Value::Bool(false)) => None,
            Some(_) => Some(file.path.clone()),
        })
}

async fn shell(
    item: &LoadedItem,
    name: &str,
    line: &str,
    arguments: &Arguments,
    settings: &Settings,
    gate: &Gate,
    prompter: &dyn Prompter,
) -> Result<String, ExpandError> {
    let refuse = |reason: String| ExpandError::Shell {
        command: name.to_string(),
        shell: crate::gate::sanitise_for_terminal(line, 200),
        reason,
    };
    if line
        .chars()
        .any(|c| c.is_control() || super::catalogue::is_hidden(c))
    {
        return Err(refuse(
            "it holds control or invisible characters, so no prompt could show it as it would run"
                .into(),
        ));
    }
    if line.chars().count() > MAX_SHELL_LINE {
        return Err(refuse(format!(
            "it is longer than {MAX_SHELL_LINE} characters, more than a prompt shows whole; put it in a script"
        )));
    }
    if let Some(file) = shell_disabled_by(settings) {
        return Err(refuse(format!(
            "shell lines in commands are turned off by disableCommandShell in {}",
            file.display()
        )));
    }
    let action = Action::Bash(line);
    let title = format!("/{name} runs a shell command");
    let mut detail = format!(
        "{} file: {} | runs: {line}",
        item.kind.as_str(),
        item.file.display()
    );
    if !arguments.positional.is_empty() {
        detail.push_str(&format!(
            " | with arguments as $1..: {}",
            serde_json::to_string(&arguments.positional).unwrap_or_default()
        ));
    }
    if let Outcome::Denied(reason) = gate
        .authorize_action(&action, &title, &detail, prompter)
        .await
    {
        return Err(refuse(reason));
    }
    let dir = settings
        .project
        .as_ref()
        .map(|project| project.root.clone())
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    let ran = run_shell_line(line, arguments, &dir).await;
    let mut output = ran.stdout;
    if !ran.stderr.trim().is_empty() {
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        output.push_str("[stderr]\n");
        output.push_str(&ran.stderr);
    }
    let mut text = String::with_capacity(output.len() + line.len() + 96);
    text.push_str("<command-output command=\"");
    text.push_str(&attribute(line));
    text.push_str("\" status=\"");
    text.push_str(&attribute(&ran.ended));
    text.push_str("\">\n");
    push_fenced(&mut text, &output);
    text.push_str("</command-output>");
    Ok(text)
}

/// `text` fit for a double-quoted label attribute: one line, `"`, `&`, `<`, `>` escaped.
fn attribute(text: &str) -> String {
    super::catalogue::escaped(&super::catalogue::sanitised_line(text, 500)).replace('"', "&quot;")
}

/// `content` in a Markdown fence longer than any backtick run inside it, with every label
/// earshot uses neutralised, so the content cannot end its own block.
#[cfg(test)]
fn fenced(content: &str) -> String {
    let mut out = String::with_capacity(content.len() + 16);
    push_fenced(&mut out, content);
    out
}

/// [`fenced`], appended to `out`: one scan finds the longest backtick run and whether any `<`
/// needs escaping, and the content is copied once.
fn push_fenced(out: &mut String, content: &str) {
    let bytes = content.as_bytes();
    let (mut longest, mut labels) = (0, false);
    for at in memchr::memchr2_iter(b'`', b'<', bytes) {
        if bytes[at] == b'<' {
            labels = labels || opens_label(&bytes[at + 1..]);
        } else if at == 0 || bytes[at - 1] != b'`' {
            let run = bytes[at..].iter().take_while(|&&b| b == b'`').count();
            longest = longest.max(run);
        }
    }
    let fence = "`".repeat(longest.max(2) + 1);
    out.push_str(&fence);
    out.push('\n');
    if labels {
        push_neutralised(out, content);
    } else {
        out.push_str(content);
    }
    if !content.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&fence);
    out.push('\n');
}

/// The labels earshot wraps data in.
const LABELS: &[&str] = &["included-file", "command-output", "skill", "skill-file"];

/// Whether the bytes after a `<` name one of earshot's labels (`included-file`, `/skill`, in
/// any case), so that `<` would open or close it.
fn opens_label(after: &[u8]) -> bool {
    let mut rest = after;
    while let [b'/', tail @ ..] = rest {
        rest = tail;
    }
    LABELS.iter().any(|label| {
        rest.len() >= label.len()
            && rest[..label.len()].eq_ignore_ascii_case(label.as_bytes())
            && !rest
                .get(label.len())
                .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    })
}

/// `text` with `<` escaped wherever it would open or close one of earshot's labels.
pub fn neutralise_labels(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_neutralised(&mut out, text);
    out
}

/// Appends `text` to `out` with `<` escaped wherever it would open or close one of earshot's
/// labels (in any case: `</Included-File`).
fn push_neutralised(out: &mut String, text: &str) {
    let bytes = text.as_bytes();
    let mut last = 0;
    for at in memchr::memchr_iter(b'<', bytes) {
        if opens_label(&bytes[at + 1..]) {
            out.push_str(&text[last..at]);
            out.push_str("&lt;");
            last = at + 1;
        }
    }
    out.push_str(&text[last..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_neutralised_in_any_case_and_nothing_else_is() {
        assert_eq!(
            neutralise_labels(
                "a </included-file> <Command-Output x> </SKILL> <skills> <b> é<skill-file"
            ),
            "a &lt;/included-file> &lt;Command-Output x> &lt;/SKILL> <skills> <b> é&lt;skill-file"
        );
    }

    #[test]
    fn the_fence_is_longer_than_any_backtick_run() {
        assert_eq!(fenced("x"), "```\nx\n```\n");
        assert_eq!(fenced("a ```` b\n"), "`````\na ```` b\n`````\n");
    }
}
