//! Command-line parsing (clap) and dispatch to one module per noun.

mod acp;
mod context;
mod files;
mod hooks;
mod mcp;
mod mcp_add;
#[cfg(feature = "mcp")]
mod mcp_login;
mod mcp_prompts;
mod mcp_resources;
mod mcp_servers;
mod output;
mod permissions;
mod progress;
mod read_only;
mod skills;
mod tool_input;
mod tools;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub(crate) use context::Context;

/// Exit codes, also listed in `--help`.
pub(crate) mod exit {
    /// The command did what was asked (for `tools call`: the tool ran and reported no error).
    pub const OK: u8 = 0;
    /// Something failed; the message says what and what to do.
    pub const FAILED: u8 = 1;
    /// The command line was not understood.
    pub const USAGE: u8 = 2;
    /// `tools call`: the gate or a hook denied the call (`hooks run`: a hook blocked).
    pub const DENIED: u8 = 3;
    /// `tools call`: the tool ran and reported an error, or its input was invalid.
    pub const TOOL_ERROR: u8 = 4;
    /// `tools call`: no tool has that name.
    pub const NO_TOOL: u8 = 5;
}

const EXIT_CODES: &str = "Exit codes:
  0  done (tools call: the tool ran and reported no error)
  1  failed; the message says what happened and what to do
  2  the command line was not understood
  3  tools call: the permission gate or a hook denied the call (hooks run: a hook blocked)
  4  tools call: the input was invalid, or the tool ran and reported an error
  5  tools call: no tool has that name (`earshot tools list` names them all)

Environment:
  EARSHOT_CONFIG_DIR  user config dir (default ~/.earshot)
  EARSHOT_BROWSER     the browser `mcp login` opens (`none`: print the URL instead)
  RUST_LOG            tracing filter (as -v, -vv)
  NO_COLOR            never colour output";

/// earshot's plugin host: MCP servers, TypeScript/JavaScript extensions and sandboxed wasm
/// components, one namespace, one permission gate.
#[derive(Debug, Parser)]
#[command(name = "earshot", version, about, after_help = EXIT_CODES)]
struct Cli {
    /// The project directory (default: found by walking up from the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    project: Option<PathBuf>,
    /// More logging on stderr (-v debug, -vv trace); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Run no hooks in this run (they can only narrow, so this never widens anything).
    #[arg(long, global = true)]
    no_hooks: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// MCP servers: list, get, add, add-json, remove, trust, untrust, login, logout, prompts,
    /// prompt, resources, read, serve.
    #[command(subcommand)]
    Mcp(mcp::McpCommand),
    /// TypeScript/JavaScript extensions: list, trust, untrust.
    #[command(subcommand)]
    Extensions(files::FilesCommand),
    /// WebAssembly tool components: list, trust, untrust.
    #[command(subcommand)]
    Plugins(files::FilesCommand),
    /// Permission rules: which rule decides, and every rule in force.
    #[command(subcommand)]
    Permissions(permissions::PermissionsCommand),
    /// Tools: what a model would see, and calling one through the gate.
    #[command(subcommand)]
    Tools(tools::ToolsCommand),
    /// Hooks: list them, trust a project hook, fire an event by hand.
    #[command(subcommand)]
    Hooks(hooks::HooksCommand),
    /// Skills (folders with SKILL.md): list, show, trust.
    #[command(subcommand)]
    Skills(skills::SkillsCommand),
    /// Slash commands (Markdown files): list, show, expand, trust.
    #[command(subcommand)]
    Commands(skills::CommandsCommand),
    /// Serve as an ACP agent on stdin/stdout for an editor (Zed): each session's cwd is its
    /// project; the editor answers permission asks but cannot turn a deny into an allow.
    Acp,
}

/// Parses the command line, runs the command, and turns its result into an exit code.
pub async fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            });
        }
    };
    init_tracing(cli.verbose);
    if cli.no_hooks {
        NO_HOOKS.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    let context = match Context::new(cli.project.as_deref()) {
        Ok(context) => context,
        Err(message) => {
            output::error_line(&message, None);
            return ExitCode::from(exit::FAILED);
        }
    };
    let result = match cli.command {
        Command::Mcp(command) => mcp::run(&context, command).await,
        Command::Extensions(command) => files::run(
            &context,
            earshot_host::names::SourceKind::Extension,
            command,
        ),
        Command::Plugins(command) => {
            files::run(&context, earshot_host::names::SourceKind::Plugin, command)
        }
        Command::Permissions(command) => permissions::run(&context, command),
        Command::Tools(command) => tools::run(context, command).await,
        Command::Hooks(command) => hooks::run(&context, command).await,
        Command::Skills(command) => skills::run_skills(&context, command),
        Command::Commands(command) => skills::run_commands(&context, command).await,
        Command::Acp => acp::run().await,
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            output::error_line(&failure.message, failure.hint.as_deref());
            ExitCode::from(failure.code)
        }
    }
}

/// `--no-hooks` was given.
static NO_HOOKS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this run's sessions run hooks (not with `--no-hooks`).
pub(crate) fn hooks_enabled() -> bool {
    !NO_HOOKS.load(std::sync::atomic::Ordering::SeqCst)
}

/// A command's failure: one line saying what happened, an optional hint, and the exit code.
#[derive(Debug)]
pub(crate) struct Failure {
    pub message: String,
    pub hint: Option<String>,
    pub code: u8,
}

impl Failure {
    /// A failure with exit code 1.
    pub fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            hint: None,
            code: exit::FAILED,
        }
    }

    /// Adds a hint line.
    pub fn hint(mut self, hint: impl Into<String>) -> Failure {
        self.hint = Some(hint.into());
        self
    }

    /// Sets the exit code.
    pub fn code(mut self, code: u8) -> Failure {
        self.code = code;
        self
    }
}

/// What a command returns: an exit code, or a failure to report.
pub(crate) type CommandResult = Result<u8, Failure>;

/// Runs `one` for each name of a `trust`/`untrust` given several: every name is tried, each
/// failure but the last is reported as it happens, and the last is returned for the caller to
/// report (so one bad name fails the command, and the good ones are still done).
pub(crate) fn each_name(
    names: &[String],
    mut one: impl FnMut(&str) -> CommandResult,
) -> CommandResult {
    let mut failed: Option<Failure> = None;
    for name in names {
        if let Err(failure) = one(name)
            && let Some(earlier) = failed.replace(failure)
        {
            output::error_line(&earlier.message, earlier.hint.as_deref());
        }
    }
    match failed {
        Some(failure) => Err(failure),
        None => Ok(exit::OK),
    }
}

/// Logging on stderr. By default only earshot's own warnings: extensions' console output
/// (target `earshot::extension`, sanitised to one line a record), MCP servers' log messages
/// (`earshot::mcp::server_log`, capped per server) and rmcp's are off. `-v` shows them and
/// earshot's debug lines (rmcp and wasmtime only from warnings and info: their per-message
/// lines would drown the rest), `-vv` everything, and a `RUST_LOG` replaces the lot.
fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn,rmcp=off,earshot::extension=off,earshot::mcp::server_log=off",
        1 => "debug,rmcp=warn,wasmtime=info,cranelift_codegen=info,hyper=info,reqwest=info",
        _ => "trace",
    };
    use tracing_subscriber::Layer;
    use tracing_subscriber::filter::FilterExt;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // rmcp's OAuth logs authorization codes at debug: never below info, whatever is asked (a cap
    // only: what the filter turns off stays off).
    let oauth_cap = tracing_subscriber::filter::filter_fn(|metadata| {
        !(metadata.target().starts_with("rmcp::transport::auth")
            && *metadata.level() > tracing::Level::INFO)
    });
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(|| earshot_host::redact::RedactingWriter::new(std::io::stderr()))
        .with_ansi(output::colour_enabled_on_stderr())
        .with_filter(filter.and(oauth_cap));
    let _ = tracing_subscriber::registry().with(layer).try_init();
}
