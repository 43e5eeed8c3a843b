//! Running one command hook: its own process group (everything it starts is killed together)
//! and no controlling terminal (a session of its own when earshot has a terminal; spawned
//! through posix_spawn, without forking earshot, when it has none), the minimal environment MCP servers
//! get plus the hook's own variables, the event's JSON on stdin, stdout and stderr read up to
//! 1 MiB each, and the whole group killed at its timeout or when the leader exits (a child it
//! forked does not outlive it).
//!
//! A trusted project or local hook runs from the snapshot of what its per-run trust check hashed
//! (see `trust::snapshot`): the words that named project files name their read-only copies, the
//! working directory and `EARSHOT_PROJECT_DIR` stay the project, and Python runs with the safe
//! path (`PYTHONSAFEPATH=1`) and the snapshot folders on `PYTHONPATH`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use crate::mcp::minimal_environment;
use crate::settings::Settings;
use crate::trust::{Snapshot, exec_launch, shell_launch, take_for_run};

use super::admission::admitted_hook_digest;
use super::config::{HookDefinition, HookKind};

/// The most bytes read from a hook's stdout (past it the hook is killed: its answer is unusable)
/// and kept of its stderr (the end is kept).
pub const OUTPUT_CAP: usize = 1 << 20;

/// How long the pipes may stay open after the hook's group was ended (a grandchild that left
/// the group) before they are abandoned.
const PIPE_GRACE: Duration = Duration::from_secs(1);

/// Where and as whom hooks run in one session.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// The project root, when there is a project.
    pub project_dir: Option<PathBuf>,
    /// Where the user's own hooks start (their config dir, else home): never the project, so a
    /// relative path in a user hook cannot run a file the repository chose.
    pub user_start_dir: PathBuf,
    /// The session's id.
    pub session_id: String,
}

impl RunContext {
    /// The directory `definition` starts in.
    pub fn start_dir(&self, definition: &HookDefinition) -> PathBuf {
        match (&self.project_dir, definition.layer) {
            (Some(project), crate::settings::Layer::Project | crate::settings::Layer::Local) => {
                project.clone()
            }
            _ => self.user_start_dir.clone(),
        }
    }

    /// The variables a hook gets besides the inherited short list.
    pub fn hook_variables(&self, definition: &HookDefinition) -> BTreeMap<String, String> {
        let mut variables = BTreeMap::new();
        if let Some(project) = &self.project_dir {
            let project = project.display().to_string();
            variables.insert("EARSHOT_PROJECT_DIR".into(), project.clone());
            // Claude Code's name for it, so ported scripts find the project.
            variables.insert("CLAUDE_PROJECT_DIR".into(), project);
        }
        variables.insert("EARSHOT_SESSION_ID".into(), self.session_id.clone());
        variables.insert(
            "EARSHOT_HOOK_EVENT".into(),
            definition.event.as_str().into(),
        );
        variables.insert("EARSHOT_HOOK_NAME".into(), definition.name.clone());
        variables
    }
}

/// How a hook's process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this code.
    Exited(i32),
    /// It was killed by a signal, or could not be waited for (described).
    Crashed(String),
    /// It ran past its timeout and its group was killed.
    TimedOut(Duration),
    /// It could not be started (missing program, not executable), described.
    NotStarted(String),
    /// It wrote more than [`OUTPUT_CAP`] bytes on stdout and its group was killed.
    TooMuchOutput,
}

/// What one run produced.
#[derive(Debug, Clone)]
pub struct Finished {
    /// How it ended.
    pub ended: Ended,
    /// Its stdout (at most [`OUTPUT_CAP`] bytes).
    pub stdout: Vec<u8>,
    /// The end of its stderr, as text.
    pub stderr: String,
}

/// `$EARSHOT_PROJECT_DIR`, `${EARSHOT_PROJECT_DIR}` and Claude Code's `$CLAUDE_PROJECT_DIR` in an
/// exec hook's words become the project root (a shell hook's shell expands them itself).
pub fn expand_project_dir(word: &str, project: Option<&Path>) -> String {
    let Some(project) = project else {
        return word.to_string();
    };
    let project = project.display().to_string();
    let mut expanded = word.to_string();
    for name in ["EARSHOT_PROJECT_DIR", "CLAUDE_PROJECT_DIR"] {
        expanded = expanded
            .replace(&format!("${{{name}}}"), &project)
            .replace(&format!("${name}"), &project);
    }
    expanded
}

/// What a trusted project or local hook runs from: the snapshot of the project files its trust
/// check hashed (none when it names none).
#[derive(Debug, Clone)]
pub struct TrustedRun {
    snapshot: Option<Snapshot>,
}

impl TrustedRun {
    /// The snapshot it runs from, when its digest covers project files.
    pub fn snapshot(&self) -> Option<&Snapshot> {
        self.snapshot.as_ref()
    }
}

/// Admits the project or local hook `definition` as it is now (as
/// [`super::hook_admission`]) and makes the snapshot of what that check hashed, which it then
/// runs from.
///
/// # Errors
/// Why it may not run: not trusted, changed since trusted, or changed after this check (its
/// snapshot's copy found other bytes), as one line saying what to do.
pub fn trusted_run(settings: &Settings, definition: &HookDefinition) -> Result<TrustedRun, String> {
    let digest = admitted_hook_digest(settings, definition)?;
    let (Some(digest), Some(project), Some(config)) =
        (digest, &settings.project, &settings.user_config_dir)
    else {
        return Ok(TrustedRun { snapshot: None });
    };
    let snapshot = take_for_run(
        config,
        &project.root,
        &digest.value,
        &digest.manifest,
        &format!("earshot hooks trust {}", definition.name),
    )?;
    Ok(TrustedRun { snapshot })
}

/// Runs `definition` (a command or shell hook) with `input` on its stdin; a trusted project or
/// local hook from `trusted` (see [`trusted_run`]).
pub async fn run_command(
    definition: &HookDefinition,
    input: Vec<u8>,
    context: &RunContext,
    trusted: Option<&TrustedRun>,
) -> Finished {
    let project = context.project_dir.as_deref();
    let start_dir = context.start_dir(definition);
    let mut variables = context.hook_variables(definition);
    let (program, args): (String, Vec<String>) = match &definition.kind {
        HookKind::Exec { command, args } => {
            let program = expand_project_dir(command, project);
            let args: Vec<String> = args
                .iter()
                .map(|arg| expand_project_dir(arg, project))
                .collect();
            match (trusted, project) {
                (Some(trusted), Some(project)) => {
                    let launch = exec_launch(
                        trusted.snapshot(),
                        project,
                        &start_dir,
                        &program,
                        &args,
                        &BTreeMap::new(),
                    );
                    variables.extend(launch.env);
                    (launch.program, launch.args)
                }
                _ => (program, args),
            }
        }
        HookKind::Shell { script, shell } => {
            let program = if shell == "bash" { "bash" } else { "/bin/sh" };
            let script = match (trusted, project) {
                (Some(trusted), Some(project)) => {
                    let (script, env) = shell_launch(trusted.snapshot(), project, script);
                    variables.extend(env);
                    script
                }
                _ => script.clone(),
            };
            (program.into(), vec!["-c".into(), script])
        }
        HookKind::Http { .. } => unreachable!("an http hook is not run as a process"),
    };
    run_process(Spawn {
        program: &program,
        args: &args,
        dir: &start_dir,
        env: minimal_environment(std::env::vars_os(), &variables),
        input,
        timeout: definition.timeout,
        output_cap: OUTPUT_CAP,
    })
    .await
}

/// One process to run as a hook runs: for [`run_process`].
pub struct Spawn<'a> {
    /// The program (looked up on the environment's `PATH` when it has no `/`).
    pub program: &'a str,
    /// Its arguments.
    pub args: &'a [String],
    /// Where it starts.
    pub dir: &'a Path,
    /// Its whole environment.
    pub env: BTreeMap<std::ffi::OsString, std::ffi::OsString>,
    /// What it reads on stdin.
    pub input: Vec<u8>,
    /// When its group is killed.
    pub timeout: Duration,
    /// The most bytes of stdout kept (past it the group is killed) and of stderr (its end).
    pub output_cap: usize,
}

/// Runs `spawn` in a process group of its own without a terminal, its output capped, its group
/// killed at its timeout or when it exits: a hook's process, or a slash command's shell line.
pub async fn run_process(spawn: Spawn<'_>) -> Finished {
    let Spawn {
        program,
        args,
        dir,
        env,
        input,
        timeout,
        output_cap,
    } = spawn;
    let not_started = |why: String| Finished {
        ended: Ended::NotStarted(why),
        stdout: Vec::new(),
        stderr: String::new(),
    };
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .current_dir(dir)
        .env_clear()
        .envs(env)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    // Under a reaper that ends what the hook leaves behind, a new session's processes too.
    #[cfg(target_os = "linux")]
    super::reaper::run_under_reaper(&mut command, has_controlling_terminal());
    #[cfg(all(unix, not(target_os = "linux")))]
    if has_controlling_terminal() {
        // SAFETY: setsid is async-signal-safe; it only detaches the child from earshot's
        // session (no controlling terminal) and makes it the leader of a new process group.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    } else {
        // No terminal to detach from: a group of its own is all, and without a `pre_exec` the
        // standard library spawns with posix_spawn instead of forking all of earshot (about
        // 1.4 ms a hook).
        std::os::unix::process::CommandExt::process_group(command.as_std_mut(), 0);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return not_started(format!("could not start: {program} was not found"));
        }
        Err(error) => return not_started(format!("could not start {program}: {error}")),
    };
    let group = Group(child.id().and_then(|pid| i32::try_from(pid).ok()));
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that never reads its stdin must not hold the call up: the write ends with the
        // hook (a broken pipe is fine).
        tokio::spawn(async move {
            let _ = stdin.write_all(&input).await;
        });
    }
    let overflowed = Arc::new(AtomicBool::new(false));
    let stdout = child.stdout.take().map(|stdout| {
        let overflowed = overflowed.clone();
        let group = group.0;
        tokio::spawn(async move {
            read_head(stdout, output_cap, || {
                overflowed.store(true, Ordering::SeqCst);
                Group(group).kill();
            })
            .await
        })
    });
    let stderr = child
        .stderr
        .take()
        .map(|stderr| tokio::spawn(read_tail(stderr, output_cap)));
    let waited = tokio::time::timeout(timeout, child.wait()).await;
    // The leader is gone (or out of time): whatever it left in its group goes too.
    group.kill();
    let mut ended = match waited {
        Ok(Ok(status)) => match status.code() {
            Some(code) => Ended::Exited(code),
            None => Ended::Crashed(crate::mcp::describe_exit(status)),
        },
        Ok(Err(error)) => Ended::Crashed(format!("could not be waited for: {error}")),
        Err(_) => {
            let _ = child.wait().await;
            Ended::TimedOut(timeout)
        }
    };
    let stdout = match stdout {
        Some(task) => match tokio::time::timeout(PIPE_GRACE, task).await {
            Ok(read) => read.unwrap_or_default(),
            Err(_) => {
                // Something that left the group still holds stdout: what the hook said cannot
                // be known to be complete, so it is a failure, never "no decision".
                if matches!(ended, Ended::Exited(_)) {
                    ended = Ended::Crashed(
                        "left a process behind that holds its stdout open (it escaped the hook's process group)"
                            .into(),
                    );
                }
                Vec::new()
            }
        },
        None => Vec::new(),
    };
    let stderr = match stderr {
        Some(task) => tokio::time::timeout(PIPE_GRACE, task)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default(),
        None => String::new(),
    };
    if overflowed.load(Ordering::SeqCst) {
        ended = Ended::TooMuchOutput;
    }
    Finished {
        ended,
        stdout,
        stderr,
    }
}

/// Whether earshot has a controlling terminal (one a hook could open as `/dev/tty`), checked
/// once: only then must a hook start a session of its own to have none.
#[cfg(unix)]
fn has_controlling_terminal() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .is_ok()
    })
}

/// A hook's process group, killed as a whole.
struct Group(Option<i32>);

impl Group {
    fn kill(&self) {
        #[cfg(unix)]
        if let Some(pgid) = self.0 {
            // SAFETY: killpg only sends a signal; a group that is gone gives ESRCH.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
            #[cfg(target_os = "linux")]
            super::reaper::resume(pgid);
        }
    }
}

/// Reads up to `cap` bytes; past that calls `overflow` once and stops reading.
async fn read_head(
    mut pipe: impl AsyncRead + Unpin,
    cap: usize,
    overflow: impl FnOnce(),
) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut chunk = [0u8; 8 * 1024];
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => return kept,
            Ok(read) => {
                if kept.len() + read > cap {
                    let room = cap - kept.len();
                    kept.extend_from_slice(&chunk[..room]);
                    overflow();
                    return kept;
                }
                kept.extend_from_slice(&chunk[..read]);
            }
        }
    }
}

/// Reads to the end, keeping the last `cap` bytes, as text.
async fn read_tail(mut pipe: impl AsyncRead + Unpin, cap: usize) -> String {
    let mut kept: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 8 * 1024];
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(read) => {
                kept.extend_from_slice(&chunk[..read]);
                if kept.len() > 2 * cap {
                    kept.drain(..kept.len() - cap);
                }
            }
        }
    }
    if kept.len() > cap {
        kept.drain(..kept.len() - cap);
    }
    String::from_utf8_lossy(&kept).into_owned()
}
