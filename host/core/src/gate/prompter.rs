//! Who answers an `Ask`: the terminal, a non-interactive default, or an embedder (an editor over
//! ACP, an MCP client through elicitation) implementing [`Prompter`].

use parking_lot::Mutex;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;

use crate::runner::BoxFuture;

use super::display::sanitise_for_terminal;

/// A question for the user, built only by the gate, for an `Ask` only.
#[derive(Debug, Clone)]
pub struct PermissionPrompt {
    pub(super) rule_name: String,
    pub(super) target: String,
    pub(super) title: String,
    pub(super) detail: String,
    pub(super) local_settings: Option<PathBuf>,
    pub(super) rule_is_exact: bool,
    pub(super) allow_rules_suspended: Option<String>,
}

impl PermissionPrompt {
    /// The rule that would allow exactly this tool (computed by the host).
    pub fn rule_name(&self) -> &str {
        &self.rule_name
    }
    /// The namespaced tool name (computed by the host).
    pub fn target(&self) -> &str {
        &self.target
    }
    /// The tool's title, sanitised and capped (empty when none).
    pub fn title(&self) -> &str {
        &self.title
    }
    /// The tool's detail, sanitised and capped (empty when none).
    pub fn detail(&self) -> &str {
        &self.detail
    }
    /// Where "always for this project" would write the allow rule, when there is a project.
    pub fn local_settings(&self) -> Option<&std::path::Path> {
        self.local_settings.as_deref()
    }
    /// Whether [`PermissionPrompt::rule_name`] names exactly this call. It does not for a shell
    /// command holding `*` (the rule would be a wildcard) or a control character (it would be
    /// malformed): then "always" allows this call once, records nothing, and should not be
    /// offered.
    pub fn rule_is_exact(&self) -> bool {
        self.rule_is_exact
    }
    /// Why every allow rule is suspended (a settings file that does not parse, a misspelt key,
    /// a malformed deny or ask rule: with its file), when they are: an allow rule written now
    /// would not count until that file is fixed.
    pub fn allow_rules_suspended(&self) -> Option<&str> {
        self.allow_rules_suspended.as_deref()
    }
}

/// The most characters of a prompt's target or rule shown (a shell command can be long).
const SHOWN_CAP: usize = 1_000;

/// An answer to a permission prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PromptAnswer {
    /// Run this call.
    AllowOnce,
    /// Run this call, and write the allow rule to `.earshot/settings.local.json`.
    AllowAlwaysForProject,
    /// Do not run it; the string is shown as the reason.
    Deny(String),
}

/// Answers the gate's questions. The gate calls it only for an `Ask` — never for a call a rule
/// denies or allows — so a prompter can never turn a deny into an allow.
///
/// `ask` returns a future, so an embedder (an editor over ACP, an MCP client through
/// elicitation, an agent loop) answers asynchronously without holding a thread while the user
/// decides. Dropping the future (the call was cancelled) leaves the call not run.
pub trait Prompter: Send + Sync {
    /// Answers one prompt.
    fn ask<'a>(&'a self, prompt: &'a PermissionPrompt) -> BoxFuture<'a, PromptAnswer>;

    /// Whether this prompter shows the prompt's title and detail to someone. When it does not
    /// (no terminal), the gate never computes them, so an extension's `describe` does not run
    /// (it could otherwise send the input out with `fetch` before a deny).
    fn shows_prompt_text(&self) -> bool {
        true
    }
}

/// A deny for an ask no one can answer (`why`), with the one command that allows the call: the
/// local file when there is a project, else the user's settings. When no rule names exactly this
/// call (a shell command holding `*`), none is suggested: it would allow more than this call.
/// When allow rules are suspended, no rule would count: the file to fix is named instead. With
/// `name_project` (the caller runs in no particular folder, as `mcp serve` does) the command
/// carries `--project DIR`, so it writes into this project wherever it is run.
pub fn deny_naming_the_rule(
    prompt: &PermissionPrompt,
    why: &str,
    name_project: bool,
) -> PromptAnswer {
    let target = sanitise_for_terminal(prompt.target(), SHOWN_CAP);
    if let Some(suspended) = prompt.allow_rules_suspended() {
        return PromptAnswer::Deny(format!(
            "{target} needs approval and {why}; no allow rule counts now, because allow rules are {}: fix that file first (`earshot permissions list` shows what is wrong)",
            sanitise_for_terminal(suspended, SHOWN_CAP)
        ));
    }
    if !prompt.rule_is_exact() {
        return PromptAnswer::Deny(format!(
            "{target} needs approval and {why}; no rule names exactly this call (a rule for it would match more), so it can only be approved at a prompt"
        ));
    }
    // The command names the project when asked to, or when it would otherwise run somewhere
    // else: from a folder outside the project, `permissions allow` writes into that folder's
    // project (or refuses), not this one.
    let outside = |root: &std::path::Path| {
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        !std::env::current_dir()
            .and_then(|dir| dir.canonicalize())
            .is_ok_and(|dir| dir.starts_with(&root))
    };
    let project = prompt
        .local_settings()
        .and_then(|file| file.parent()?.parent())
        .filter(|root| name_project || outside(root))
        .map(|root| {
            format!(
                " --project {}",
                super::rules::shell_word(&root.to_string_lossy())
            )
        })
        .unwrap_or_default();
    let scope = if prompt.local_settings().is_some() {
        ""
    } else {
        " -s user"
    };
    PromptAnswer::Deny(format!(
        "{target} needs approval and {why}; to allow it, run `earshot permissions allow {}{scope}{project}`",
        super::rules::shell_word(prompt.rule_name())
    ))
}

/// Denies every ask, saying which rule to add and where: for runs with no terminal to ask on.
#[derive(Debug, Clone, Copy, Default)]
pub struct NonInteractivePrompter;

impl Prompter for NonInteractivePrompter {
    fn ask<'a>(&'a self, prompt: &'a PermissionPrompt) -> BoxFuture<'a, PromptAnswer> {
        let answer = deny_naming_the_rule(prompt, "there is no terminal to ask on", false);
        Box::pin(std::future::ready(answer))
    }

    fn shows_prompt_text(&self) -> bool {
        false
    }
}

/// The terminal's input and output, shared with the blocking thread that reads an answer.
pub type TerminalIo = Arc<Mutex<(Box<dyn BufRead + Send>, Box<dyn Write + Send>)>>;

/// This process's stdin and stderr as one terminal: every dialogue on it (a permission prompt,
/// a server's form) holds its lock from the first line it writes to the last it reads, so two
/// can never interleave and a line typed for one is never read by the other. One buffered
/// reader for the whole process, so none can swallow input meant for another.
pub fn stdio_terminal() -> TerminalIo {
    static STDIO: std::sync::OnceLock<TerminalIo> = std::sync::OnceLock::new();
    STDIO
        .get_or_init(|| {
            Arc::new(Mutex::new((
                Box::new(std::io::BufReader::new(std::io::stdin())),
                Box::new(std::io::stderr()),
            )))
        })
        .clone()
}

/// Whether a dialogue holds the process's terminal right now (a progress line must not be
/// drawn over a question).
pub fn terminal_busy() -> bool {
    stdio_terminal().try_lock().is_none()
}

/// Asks on a terminal: shows the host-computed rule name and the tool's sanitised title and
/// detail, then reads `o` (once), `a` (always for this project) or `d` (deny). The read happens on
/// tokio's blocking pool, so waiting for the user holds up no async task.
pub struct TerminalPrompter {
    io: TerminalIo,
}

impl TerminalPrompter {
    /// A prompter on this process's stdin and stderr (the one terminal every dialogue shares).
    pub fn stdio() -> TerminalPrompter {
        TerminalPrompter {
            io: stdio_terminal(),
        }
    }

    /// A prompter reading answers from `input` and writing the prompt to `output`.
    pub fn new(input: Box<dyn BufRead + Send>, output: Box<dyn Write + Send>) -> TerminalPrompter {
        TerminalPrompter {
            io: Arc::new(Mutex::new((input, output))),
        }
    }
}

impl Prompter for TerminalPrompter {
    fn ask<'a>(&'a self, prompt: &'a PermissionPrompt) -> BoxFuture<'a, PromptAnswer> {
        let io = self.io.clone();
        let prompt = prompt.clone();
        Box::pin(async move {
            let target = sanitise_for_terminal(prompt.target(), SHOWN_CAP);
            tokio::task::spawn_blocking(move || ask_on_terminal(&io, &prompt))
                .await
                .unwrap_or_else(|_| {
                    PromptAnswer::Deny(format!("{target} was not approved (no answer)"))
                })
        })
    }
}

/// Shows `prompt` and reads answers until one is understood (or input ends: a deny).
fn ask_on_terminal(io: &TerminalIo, prompt: &PermissionPrompt) -> PromptAnswer {
    let mut io = io.lock();
    let (input, output) = &mut *io;
    let target = sanitise_for_terminal(prompt.target(), SHOWN_CAP);
    let _ = writeln!(output, "earshot wants to run {target}");
    if !prompt.title().is_empty() {
        let _ = writeln!(output, "  {}", prompt.title());
    }
    if !prompt.detail().is_empty() {
        let _ = writeln!(output, "  {}", prompt.detail());
    }
    let rule = sanitise_for_terminal(prompt.rule_name(), SHOWN_CAP);
    let choices = if prompt.rule_is_exact() {
        let _ = writeln!(output, "  rule: {rule}");
        "Allow? [o]nce / [a]lways for this project / [d]eny: "
    } else {
        let _ = writeln!(
            output,
            "  rule: none names exactly this call ({rule} would match more), so it is asked each time"
        );
        "Allow? [o]nce / [d]eny: "
    };
    loop {
        let _ = write!(output, "{choices}");
        let _ = output.flush();
        let mut line = String::new();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => {
                return PromptAnswer::Deny(format!("{target} was not approved (no answer)"));
            }
            Ok(_) => {}
        }
        match line.trim().to_ascii_lowercase().as_str() {
            "o" | "once" | "y" | "yes" => return PromptAnswer::AllowOnce,
            "a" | "always" => return PromptAnswer::AllowAlwaysForProject,
            "d" | "deny" | "n" | "no" => {
                return PromptAnswer::Deny(format!("{target} was denied at the prompt"));
            }
            _ => {
                let _ = writeln!(output, "Please answer o, a or d.");
            }
        }
    }
}
