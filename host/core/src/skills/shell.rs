//! Running a slash command's `` !`cmd` `` line once the gate allowed it: `sh -c CMD _ ARGS…`,
//! so the arguments reach the shell as positional parameters (`"$1"`, `"$@"`) and the
//! environment (`$ARGUMENTS`, and `$ARG_name` for each named argument), never as shell text; in the project root, with the
//! minimal environment MCP servers get, in a process group of its own without a terminal, its
//! output capped and labelled with its exit code.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use crate::hooks::process::{Ended, Spawn, run_process};
use crate::mcp::minimal_environment;

use super::arguments::Arguments;

/// The most bytes of a shell line's output kept (stdout; stderr's end likewise).
pub const SHELL_OUTPUT_CAP: usize = 256 << 10;

/// How long a shell line may run before its group is killed.
pub const SHELL_TIMEOUT: Duration = Duration::from_secs(60);

/// What a shell line did, for the text the model gets.
#[derive(Debug, Clone)]
pub struct ShellRun {
    /// Its stdout, as text (at most [`SHELL_OUTPUT_CAP`] bytes).
    pub stdout: String,
    /// The end of its stderr.
    pub stderr: String,
    /// `exit 0`, `killed after 60s`, `stopped: more than 256 KiB of output`, ….
    pub ended: String,
}

/// Runs `command` with `arguments` in `dir`.
pub async fn run_shell_line(command: &str, arguments: &Arguments, dir: &Path) -> ShellRun {
    let mut args = vec!["-c".to_string(), command.to_string(), "_".to_string()];
    args.extend(arguments.positional.iter().cloned());
    let mut variables = BTreeMap::new();
    variables.insert("ARGUMENTS".to_string(), arguments.raw.clone());
    for (name, value) in arguments.named_values() {
        // Under a prefix of its own: a named argument `GIT_DIR`, `LD_PRELOAD` or `BASH_ENV` must
        // never become the variable that changes what the command does.
        variables.insert(format!("ARG_{name}"), value);
    }
    let finished = run_process(Spawn {
        program: "/bin/sh",
        args: &args,
        dir,
        env: minimal_environment(std::env::vars_os(), &variables),
        input: Vec::new(),
        timeout: SHELL_TIMEOUT,
        output_cap: SHELL_OUTPUT_CAP,
    })
    .await;
    let ended = match finished.ended {
        Ended::Exited(code) => format!("exit {code}"),
        Ended::Crashed(why) | Ended::NotStarted(why) => why,
        Ended::TimedOut(after) => format!("killed after {}s", after.as_secs()),
        Ended::TooMuchOutput => format!(
            "stopped: it printed more than {} KiB (the first {} KiB are shown)",
            SHELL_OUTPUT_CAP >> 10,
            SHELL_OUTPUT_CAP >> 10
        ),
    };
    ShellRun {
        stdout: String::from_utf8_lossy(&finished.stdout).into_owned(),
        stderr: finished.stderr,
        ended,
    }
}
