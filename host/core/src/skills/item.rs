//! One skill or command as loaded: its name, where it came from, its frontmatter, its digest and
//! whether it may be used. The body is not kept: it is read again (and its digest checked) each
//! time it is used, and never for an untrusted item.

use std::path::{Path, PathBuf};

use crate::trust::{TrustJudge, TrustKind, TrustState, digest_of};

use super::folder::{FolderContents, MAX_FILE_BYTES, read_file, read_folder};
use super::frontmatter::{Document, Frontmatter, parse_document};
use super::names::check_name;

/// The longest description the Agent Skills format allows.
pub const MAX_DESCRIPTION_CHARS: usize = 1_024;

/// The longest `compatibility` the Agent Skills format allows.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;

/// A skill or a slash command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemKind {
    /// A folder with `SKILL.md`, for the model (and `/name` for the user).
    Skill,
    /// A Markdown file under `commands/`, for the user only.
    Command,
}

impl ItemKind {
    /// `skill` or `command`, for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::Skill => "skill",
            ItemKind::Command => "command",
        }
    }

    /// `skills` or `commands`: the CLI's noun.
    pub fn noun_plural(self) -> &'static str {
        match self {
            ItemKind::Skill => "skills",
            ItemKind::Command => "commands",
        }
    }

    /// The trust records' kind.
    pub fn trust_kind(self) -> TrustKind {
        match self {
            ItemKind::Skill => TrustKind::Skill,
            ItemKind::Command => TrustKind::Command,
        }
    }
}

/// Whose an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemOrigin {
    /// Under the user's own config (`~/.earshot`, `~/.agents`): theirs, so it loads as it is.
    User,
    /// In the project: the repository chose it, so it is inert until trusted.
    Project,
}

impl ItemOrigin {
    /// `user` or `project`.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemOrigin::User => "user",
            ItemOrigin::Project => "project",
        }
    }
}

/// Something found that could not be loaded, or was left out: `file:line: message`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// The file or folder.
    pub path: PathBuf,
    /// The line, when the problem is in a file's text.
    pub line: Option<usize>,
    /// What is wrong, and what to do when that is not obvious.
    pub message: String,
    /// Whether it was found looking for skills or commands (`None`: not known).
    pub kind: Option<ItemKind>,
}

impl Problem {
    /// A problem at `path` (and `line`).
    pub fn new(path: &Path, line: Option<usize>, message: &str) -> Problem {
        Problem {
            path: path.to_path_buf(),
            line,
            message: message.to_string(),
            kind: None,
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

/// A skill or command that parsed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LoadedItem {
    /// Skill or command.
    pub kind: ItemKind,
    /// Its name: the skill's folder name, or the command's path (`git:commit`).
    pub name: String,
    /// Whose it is.
    pub origin: ItemOrigin,
    /// `SKILL.md` or the command's file.
    pub file: PathBuf,
    /// The skill's folder (`None` for a command).
    pub folder: Option<PathBuf>,
    /// What its frontmatter says.
    pub frontmatter: Frontmatter,
    /// `sha256:…` of the command file, or of every file of the skill's folder.
    pub digest: String,
    /// A skill's files besides `SKILL.md`, relative to its folder.
    pub files: Vec<String>,
    /// Whether it may be used: a user's item is always trusted, a project's only with a record
    /// for exactly this digest.
    pub trust: TrustState,
}

impl LoadedItem {
    /// Whether it may be used now (the user's, or a trusted project item).
    pub fn is_active(&self) -> bool {
        self.trust.is_trusted()
    }

    /// The description (the frontmatter's), when there is one.
    pub fn description(&self) -> &str {
        self.frontmatter.description.as_deref().unwrap_or_default()
    }

    /// Whether the model may load it: a skill without `disable-model-invocation: true`.
    pub fn model_invocable(&self) -> bool {
        self.kind == ItemKind::Skill && self.frontmatter.disable_model_invocation != Some(true)
    }

    /// Whether the user may type it as `/name`: every command, and a skill without
    /// `user-invocable: false`.
    pub fn user_invocable(&self) -> bool {
        self.kind == ItemKind::Command || self.frontmatter.user_invocable != Some(false)
    }

    /// The command that trusts it.
    pub fn trust_command(&self) -> String {
        format!(
            "earshot {} trust {}",
            self.kind.trust_kind().noun(),
            self.name
        )
    }
}

/// The trust state of an item of `origin` whose digest is `digest`.
fn trust_of(
    judge: &TrustJudge<'_>,
    kind: ItemKind,
    origin: ItemOrigin,
    name: &str,
    digest: &str,
) -> TrustState {
    match origin {
        ItemOrigin::User => TrustState::Trusted,
        ItemOrigin::Project => judge.judge(kind.trust_kind(), name, digest),
    }
}

/// Loads the skill in `folder`, returning its folder contents too (the caller may need the
/// bytes). A project's skill may hold no link.
///
/// # Errors
/// The [`Problem`] that keeps it from loading.
pub fn load_skill(
    judge: &TrustJudge<'_>,
    spent: &std::cell::Cell<u64>,
    folder: &Path,
    origin: ItemOrigin,
) -> Result<(LoadedItem, FolderContents), Problem> {
    let skill_md = folder.join("SKILL.md");
    let contents = read_folder(folder, origin == ItemOrigin::User, spent)
        .map_err(|why| Problem::new(folder, None, &format!("not loaded: {why}")))?;
    let text = skill_text(&contents, &skill_md)?;
    let document = parse(&skill_md, text)?;
    let folder_name = folder
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let frontmatter = document.frontmatter;
    let name = match &frontmatter.name {
        None => {
            return Err(Problem::new(
                &skill_md,
                Some(1),
                "not loaded: the frontmatter has no \"name\" (it must equal the folder's name)",
            ));
        }
        Some(name) => name.clone(),
    };
    check_name(&name)
        .map_err(|why| Problem::new(&skill_md, Some(1), &format!("not loaded: {why}")))?;
    if name != folder_name {
        return Err(Problem::new(
            &skill_md,
            Some(1),
            &format!(
                "not loaded: its name \"{name}\" is not its folder's name \"{}\"",
                super::names::shown(&folder_name)
            ),
        ));
    }
    match frontmatter.description.as_deref().map(str::trim) {
        None | Some("") => {
            return Err(Problem::new(
                &skill_md,
                Some(1),
                "not loaded: the frontmatter has no \"description\" (say what it does and when to use it)",
            ));
        }
        Some(description) if description.chars().count() > MAX_DESCRIPTION_CHARS => {
            return Err(Problem::new(
                &skill_md,
                Some(1),
                &format!(
                    "not loaded: its description is longer than {MAX_DESCRIPTION_CHARS} characters"
                ),
            ));
        }
        Some(_) => {}
    }
    if frontmatter
        .compatibility
        .as_deref()
        .is_some_and(|text| text.chars().count() > MAX_COMPATIBILITY_CHARS)
    {
        return Err(Problem::new(
            &skill_md,
            Some(1),
            &format!(
                "not loaded: \"compatibility\" is longer than {MAX_COMPATIBILITY_CHARS} characters"
            ),
        ));
    }
    let trust = trust_of(judge, ItemKind::Skill, origin, &name, &contents.digest);
    let files = contents
        .files
        .iter()
        .filter(|file| file.path != "SKILL.md")
        .map(|file| file.path.clone())
        .collect();
    let item = LoadedItem {
        kind: ItemKind::Skill,
        name,
        origin,
        file: skill_md,
        folder: Some(folder.to_path_buf()),
        frontmatter,
        digest: contents.digest.clone(),
        files,
        trust,
    };
    Ok((item, contents))
}

/// `SKILL.md`'s text among a folder's files: present, not too big, UTF-8.
fn skill_text<'a>(contents: &'a FolderContents, skill_md: &Path) -> Result<&'a str, Problem> {
    let file = contents.file("SKILL.md").ok_or_else(|| {
        Problem::new(skill_md, None, "not loaded: SKILL.md is not a regular file")
    })?;
    if file.bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Problem::new(
            skill_md,
            Some(1),
            &format!("not loaded: it is larger than {} KiB", MAX_FILE_BYTES >> 10),
        ));
    }
    std::str::from_utf8(&file.bytes).map_err(|error| {
        Problem::new(
            skill_md,
            Some(1),
            &format!("not loaded: it is not UTF-8 text ({error})"),
        )
    })
}

fn parse(file: &Path, text: &str) -> Result<Document, Problem> {
    parse_document(text).map_err(|error| {
        Problem::new(
            file,
            Some(error.line),
            &format!("not loaded: {}", error.message),
        )
    })
}

/// The name of the command at `file` under `root`: its path without `.md`, folders joined by
/// `:` (`git/commit.md` is `git:commit`), each part a valid name.
///
/// # Errors
/// The [`Problem`] with the name.
pub fn command_name(root: &Path, file: &Path) -> Result<String, Problem> {
    let relative = file.strip_prefix(root).unwrap_or(file);
    let mut parts = Vec::new();
    for part in relative.components() {
        parts.push(part.as_os_str().to_string_lossy().into_owned());
    }
    if let Some(last) = parts.last_mut() {
        *last = last.strip_suffix(".md").unwrap_or(last).to_string();
    }
    for part in &parts {
        check_name(part).map_err(|why| {
            Problem::new(file, None, &format!("not loaded: {why} (rename the file)"))
        })?;
    }
    if parts.len() > 1 && matches!(parts[0].as_str(), "project" | "mcp") {
        return Err(Problem::new(
            file,
            None,
            &format!(
                "not loaded: /{}: is earshot's own namespace; move the file out of {}/",
                parts[0], parts[0]
            ),
        ));
    }

    Ok(parts.join(":"))
}

/// Loads the command at `file` (found under `root`), returning its text too.
///
/// # Errors
/// The [`Problem`] that keeps it from loading.
pub fn load_command(
    judge: &TrustJudge<'_>,
    spent: &std::cell::Cell<u64>,
    root: &Path,
    file: &Path,
    origin: ItemOrigin,
) -> Result<(LoadedItem, String), Problem> {
    let name = command_name(root, file)?;
    let bytes = read_file(file, origin == ItemOrigin::User, spent)
        .map_err(|why| Problem::new(file, None, &format!("not loaded: it {why}")))?;
    let text = String::from_utf8(bytes).map_err(|error| {
        Problem::new(
            file,
            Some(1),
            &format!("not loaded: it is not UTF-8 text ({error})"),
        )
    })?;
    let document = parse(file, &text)?;
    let digest = digest_of(text.as_bytes());
    let trust = trust_of(judge, ItemKind::Command, origin, &name, &digest);
    let item = LoadedItem {
        kind: ItemKind::Command,
        name,
        origin,
        file: file.to_path_buf(),
        folder: None,
        frontmatter: document.frontmatter,
        digest,
        files: Vec::new(),
        trust,
    };
    Ok((item, text))
}

/// The text of `item` now, for using it: read again, and refused when it is no longer what was
/// loaded (for a project item: what was trusted). Returns the body after the frontmatter, with
/// the line it starts on, and for a skill the folder's contents.
///
/// # Errors
/// One line saying what changed and what to do.
pub fn current_body(item: &LoadedItem) -> Result<(String, usize, Option<FolderContents>), String> {
    let changed = || {
        format!(
            "{} \"{}\" changed since it was loaded; review it (`earshot {} show {}`){}",
            item.kind.as_str(),
            item.name,
            item.kind.trust_kind().noun(),
            item.name,
            if item.origin == ItemOrigin::Project {
                format!(", then run `{}`", item.trust_command())
            } else {
                ", then start a new session".into()
            }
        )
    };
    let follow = item.origin == ItemOrigin::User;
    match item.kind {
        ItemKind::Skill => {
            let folder = item.folder.as_deref().unwrap_or(Path::new("."));
            let contents = read_folder(folder, follow, &std::cell::Cell::new(0))
                .map_err(|why| format!("skill \"{}\" cannot be read: {why}", item.name))?;
            if contents.digest != item.digest {
                return Err(changed());
            }
            let text = skill_text(&contents, &item.file).map_err(|problem| problem.to_string())?;
            let document = parse(&item.file, text).map_err(|problem| problem.to_string())?;
            Ok((document.body, document.body_line, Some(contents)))
        }
        ItemKind::Command => {
            let bytes = read_file(&item.file, follow, &std::cell::Cell::new(0))
                .map_err(|why| format!("command \"{}\" cannot be read: it {why}", item.name))?;
            if digest_of(&bytes) != item.digest {
                return Err(changed());
            }
            let text = String::from_utf8(bytes).map_err(|_| changed())?;
            let document = parse(&item.file, &text).map_err(|problem| problem.to_string())?;
            Ok((document.body, document.body_line, None))
        }
    }
}
