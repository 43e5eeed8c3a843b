//! MCP servers, against raw rmcp clients in the same run:
//!
//! * `earshot mcp list` over four real stdio servers (server-everything under two names, the
//!   Python SDK's `python_server.py`, the stdlib `thirty_tools.py`), the release binary as a
//!   process from start to exit, against a minimal rmcp client that starts the same servers
//!   concurrently (tokio tasks), does initialize + tools/list on each and closes them (spawn to
//!   all exited): closed together once the last has listed, as `mcp list` does, and, as an
//!   alternative, each closed as soon as it has listed. Median of 11 runs each, interleaved.
//! * Calls per second of server-everything's `echo` through the async `Host::call` (gate,
//!   validator sandbox, serialised call, mcp-output sandbox), awaited on the bench's runtime,
//!   against a raw rmcp client calling the same tool on its own copy of the server on the same
//!   runtime: 6 runs of 2,000 calls per side, each run in 10 interleaved rounds (one `block_on`
//!   per side per round; odd runs start with the raw side), the earshot/raw ratio of each run,
//!   and p50/p99 over all runs.
//!
//! * The one-shot floor (`-- floor` runs only this): `earshot mcp list` over the two node
//!   servers server-everything and server-memory, process start to exit, against a bare client
//!   process (this bench binary run again as one: tokio, rmcp, spawn both, initialize +
//!   tools/list, kill both), and against `claude mcp list` (the Claude Code in the MCP parts) on
//!   the same servers. Median of 11 interleaved runs.
//! * Scale (`-- scale` runs only this): `earshot tools list` over 100 stdio servers of 30 tools
//!   each (`thirty_tools.py`, 3,000 tools), process start to exit and peak RSS, against the bare
//!   client on the same servers; and `tool_search` over those 3,000 tools through `Host::call`
//!   (p50 and p99 of 200 queries).
//!
//! `fixtures/mcp/parts/install.sh ~/.cache/earshot-mcp-parts` once (or set `MCP_PARTS_PYTHON` to
//! the venv's python), then `cargo bench -p earshot-cli --bench mcp`.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use earshot_host::gate::NonInteractivePrompter;
use earshot_host::host::{Host, HostBuilder};
use earshot_host::sandbox::{
    ComponentCache, McpOutputParser, SandboxEngine, SchemaValidator, Verdict,
};
use earshot_host::settings::{ProjectPaths, Settings};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

/// Runs of each side of `mcp list` (after one untimed warm-up each).
const LIST_RUNS: usize = 11;
/// Runs of the call benchmark; each gives one earshot/raw ratio.
const CALL_RUNS: usize = 6;
/// Calls of each side in one run, in [`ROUNDS_PER_RUN`] interleaved rounds.
const CALLS_PER_RUN: usize = 2_000;
/// Rounds a run is split into: each side once per round (one `block_on` each), alternating
/// which goes first.
const ROUNDS_PER_RUN: usize = 10;
/// Untimed calls of each side first.
const WARM_UP_CALLS: usize = 1_000;
/// Calls of each part in the breakdown of a `Host::call`.
const BREAKDOWN_CALLS: usize = 1_000;
/// How long a server gets to exit after its stdin closes before it is killed (earshot's grace).
const EXIT_GRACE: Duration = Duration::from_millis(1500);

/// One stdio server as both sides start it.
#[derive(Debug, Clone)]
struct Server {
    name: &'static str,
    command: PathBuf,
    args: Vec<String>,
}

impl Server {
    /// Its `mcpServers` entry.
    fn entry(&self) -> Value {
        json!({ "command": self.command, "args": self.args })
    }

    /// The child with piped stdin/stdout and the environment earshot would give it.
    fn spawn(&self) -> std::io::Result<Child> {
        let mut command = Command::new(&self.command);
        command
            .args(&self.args)
            .env_clear()
            .envs(std::env::vars_os().filter(|(name, _)| name == "PATH" || name == "HOME"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        command.spawn()
    }
}

/// The servers of the `mcp list` benchmark, or why they are missing.
fn servers(root: &Path) -> Result<Vec<Server>, String> {
    let parts = root.join("fixtures/mcp/parts");
    let everything = parts.join("node_modules/.bin/mcp-server-everything");
    let venv_python = std::env::var_os("MCP_PARTS_PYTHON")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::home_dir().map(|home| home.join(".cache/earshot-mcp-parts/venv/bin/python"))
        })
        .ok_or("no home directory")?;
    for needed in [&everything, &venv_python] {
        if !needed.exists() {
            return Err(format!(
                "{} is missing: run fixtures/mcp/parts/install.sh ~/.cache/earshot-mcp-parts",
                needed.display()
            ));
        }
    }
    // The interpreter itself, not a shim (pyenv's is a shell script that costs ~50 ms a start).
    let python3 = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|path| PathBuf::from(path.trim()))
        .filter(|path| path.is_file())
        .ok_or("python3 is not on PATH")?;
    let path = |p: PathBuf| p.to_string_lossy().into_owned();
    let everything = |name| Server {
        name,
        command: everything.clone(),
        args: vec!["stdio".into()],
    };
    Ok(vec![
        everything("every"),
        everything("everytwo"),
        Server {
            name: "pynotes",
            command: venv_python,
            args: vec![path(parts.join("python_server.py"))],
        },
        Server {
            name: "thirty",
            command: python3,
            args: vec![path(root.join("fixtures/mcp/servers/thirty_tools.py"))],
        },
    ])
}

/// A config dir whose settings.json holds `settings`, and an empty project; both temporary.
fn config_and_project(settings: &Value) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("config");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::create_dir_all(&project).expect("project dir");
    std::fs::write(config.join("settings.json"), settings.to_string()).expect("settings");
    let project = project.canonicalize().expect("canonical project");
    (dir, config, project)
}

/// Connects a raw rmcp client (no handler) to a freshly spawned `server`.
async fn raw_connect(server: &Server) -> (RunningService<RoleClient, ()>, Child) {
    let mut child = server.spawn().expect("spawn");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let service = ().serve((stdout, stdin)).await.expect("initialize");
    (service, child)
}

/// Closes stdin and waits for the child to exit, killing it after [`EXIT_GRACE`].
async fn raw_close(service: RunningService<RoleClient, ()>, mut child: Child) {
    let _ = service.cancel().await;
    if tokio::time::timeout(EXIT_GRACE, child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
}

/// One raw `echo` call.
async fn raw_echo(service: &RunningService<RoleClient, ()>, arguments: &JsonObject) {
    let result = service
        .call_tool(CallToolRequestParams::new("echo").with_arguments(arguments.clone()))
        .await
        .expect("raw echo");
    assert_ne!(result.is_error, Some(true));
    std::hint::black_box(result);
}

/// The baseline of `mcp list`: every server at once, initialize + tools/list, close; tools seen.
/// `close_early`: each server is closed as soon as it has listed (while others still start);
/// otherwise all are closed together once the last has listed, as `earshot mcp list` does.
async fn raw_list(servers: &[Server], close_early: bool) -> usize {
    let mut set = tokio::task::JoinSet::new();
    for server in servers {
        let server = server.clone();
        set.spawn(async move {
            let (service, child) = raw_connect(&server).await;
            let tools = service.list_all_tools().await.expect("tools/list").len();
            if close_early {
                raw_close(service, child).await;
                (tools, None)
            } else {
                (tools, Some((service, child)))
            }
        });
    }
    let (mut tools, mut open) = (0, Vec::new());
    while let Some(listed) = set.join_next().await {
        let (listed, connection) = listed.expect("task");
        tools += listed;
        open.extend(connection);
    }
    let mut closing = tokio::task::JoinSet::new();
    for (service, child) in open {
        closing.spawn(raw_close(service, child));
    }
    while closing.join_next().await.is_some() {}
    tools
}

/// One `earshot mcp list` run, process start to exit; panics unless every server connected.
fn earshot_list(config: &Path, project: &Path, expected: usize) -> Duration {
    let start = Instant::now();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_earshot"))
        .arg("--project")
        .arg(project)
        .args(["mcp", "list"])
        .env("EARSHOT_CONFIG_DIR", config)
        .stdin(Stdio::null())
        .output()
        .expect("earshot runs");
    let elapsed = start.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.matches("connected:").count() == expected,
        "earshot mcp list: {}\n{stdout}{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    elapsed
}

/// The value at `fraction` of the sorted samples.
fn percentile(samples: &mut [Duration], fraction: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * fraction).round() as usize]
}

/// Milliseconds.
fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// Microseconds.
fn us(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// The runs of (a), each side's in order.
struct ListFigures {
    /// `earshot mcp list`, process start to exit.
    earshot: Vec<Duration>,
    /// Raw rmcp, every server closed once the last has listed (what `mcp list` does).
    raw_together: Vec<Duration>,
    /// Raw rmcp, each server closed as soon as it has listed.
    raw_early: Vec<Duration>,
    /// Tools the raw client saw across the servers.
    tools: usize,
}

/// (a): `earshot mcp list` against the raw concurrent client, both ways of closing.
fn bench_list(runtime: &tokio::runtime::Runtime, servers: &[Server]) -> ListFigures {
    let entries: serde_json::Map<String, Value> = servers
        .iter()
        .map(|server| (server.name.to_string(), server.entry()))
        .collect();
    let (_dir, config, project) = config_and_project(&json!({ "mcpServers": entries }));
    let raw = |close_early: bool| {
        let start = Instant::now();
        let tools = runtime.block_on(raw_list(servers, close_early));
        (start.elapsed(), tools)
    };
    // Warm-up: page cache, Python bytecode, node's compile cache.
    earshot_list(&config, &project, servers.len());
    raw(true);
    let (_, tools) = raw(false);
    let mut figures = ListFigures {
        earshot: Vec::new(),
        raw_together: Vec::new(),
        raw_early: Vec::new(),
        tools,
    };
    for run in 0..LIST_RUNS {
        // Rotate the order, so no side always follows the same other side's teardown.
        for side in 0..3 {
            match (run + side) % 3 {
                0 => figures
                    .earshot
                    .push(earshot_list(&config, &project, servers.len())),
                1 => figures.raw_together.push(raw(false).0),
                _ => figures.raw_early.push(raw(true).0),
            }
        }
    }
    figures
}

/// Per-call latencies and the wall time of one side of (b).
#[derive(Default)]
struct Calls {
    samples: Vec<Duration>,
    total: Duration,
}

impl Calls {
    /// Calls per second over the timed loops.
    fn per_second(&self) -> f64 {
        self.samples.len() as f64 / self.total.as_secs_f64()
    }

    /// Times `count` awaited calls of `call`, one after another.
    async fn time(&mut self, count: usize, call: impl AsyncFn()) {
        let start = Instant::now();
        for _ in 0..count {
            let one = Instant::now();
            call().await;
            self.samples.push(one.elapsed());
        }
        self.total += start.elapsed();
    }

    /// Adds another side's samples and time to these.
    fn extend(&mut self, other: &Calls) {
        self.samples.extend_from_slice(&other.samples);
        self.total += other.total;
    }
}

/// One run of (b): both sides, interleaved round by round.
#[derive(Default)]
struct CallRun {
    /// `Host::call`, awaited.
    earshot: Calls,
    /// Raw rmcp on its own copy of the server, awaited on the same runtime.
    raw: Calls,
    /// Whether the run's first round started with earshot.
    earshot_first: bool,
}

impl CallRun {
    /// earshot's calls/s over raw rmcp's in this run.
    fn ratio(&self) -> f64 {
        self.earshot.per_second() / self.raw.per_second()
    }
}

/// The runs of (b) and the breakdown of a call.
struct CallFigures {
    runs: Vec<CallRun>,
    /// p50 of the parts of a `Host::call`, see [`call_breakdown`].
    breakdown: [(&'static str, Duration); 7],
}

/// (b): `echo` through `Host::call` against a raw rmcp client on its own copy of the server.
fn bench_calls(runtime: &tokio::runtime::Runtime, server: &Server) -> CallFigures {
    let (_dir, config, project) = config_and_project(&json!({
        "mcpServers": { "every": server.entry() },
        "permissions": { "allow": ["Mcp(every__echo)"] }
    }));
    let settings = Settings::load(Some(&config), Some(ProjectPaths::new(project)));
    // Built inside the runtime: the session's MCP connections live on it.
    let host = runtime
        .block_on(
            HostBuilder::new(settings)
                .cache(ComponentCache::user())
                .build(),
        )
        .expect("host");
    assert!(
        !runtime.block_on(host.tool_search_active()),
        "echo is listed directly"
    );
    let input = r#"{"message":"hi"}"#;
    let through_earshot = async || {
        let output = host
            .call("every__echo", input, &NonInteractivePrompter)
            .await
            .expect("echo through earshot");
        assert!(
            !output.is_error && output.output.contains("hi"),
            "{output:?}"
        );
    };

    // The raw side has its own server, warmed like earshot's: node's JIT is still speeding the
    // echo path up after hundreds of calls, so both servers get the same number of calls.
    let (service, child) = runtime.block_on(raw_connect(server));
    let arguments = json!({ "message": "hi" })
        .as_object()
        .cloned()
        .expect("object");
    let through_raw = async || raw_echo(&service, &arguments).await;

    let mut warm = Calls::default();
    runtime.block_on(warm.time(WARM_UP_CALLS, &through_earshot));
    runtime.block_on(warm.time(WARM_UP_CALLS, &through_raw));
    let per_round = CALLS_PER_RUN / ROUNDS_PER_RUN;
    let runs = (0..CALL_RUNS)
        .map(|run| {
            let mut figures = CallRun {
                earshot_first: run % 2 == 0,
                ..CallRun::default()
            };
            for round in 0..ROUNDS_PER_RUN {
                // Odd runs start with the raw side; within a run the sides alternate too.
                let earshot_first = (run + round) % 2 == 0;
                for side in 0..2 {
                    if (side == 0) == earshot_first {
                        runtime.block_on(figures.earshot.time(per_round, &through_earshot));
                    } else {
                        runtime.block_on(figures.raw.time(per_round, &through_raw));
                    }
                }
            }
            figures
        })
        .collect();
    let breakdown = runtime.block_on(call_breakdown(&host));
    runtime.block_on(async { tokio::join!(host.shutdown(), raw_close(service, child)) });
    drop(host);
    CallFigures { runs, breakdown }
}

/// p50 of `call`, awaited [`BREAKDOWN_CALLS`] times after [`WARM_UP_CALLS`] untimed calls.
async fn p50(call: impl AsyncFn()) -> Duration {
    for _ in 0..WARM_UP_CALLS {
        call().await;
    }
    let mut calls = Calls::default();
    calls.time(BREAKDOWN_CALLS, call).await;
    percentile(&mut calls.samples, 0.5)
}

/// Rounds in which [`call_breakdown`] interleaves its in-sequence parts.
const BREAKDOWN_ROUNDS: usize = 10;

/// p50 of where a `Host::call` of `echo` goes. Three parts run the whole call and are
/// interleaved round by round (so the server's and the machine's drift falls on each alike):
/// `Host::call` itself, the call through earshot's MCP layer alone (`McpServers::call`), and
/// check + call + normalisation in sequence, with, of that, the two sandboxes' time (they run
/// with caches the server and the client's tasks have just used, where alone they run in a tight
/// loop). Three are measured alone after them: `refresh_changed_tools` (which every call runs
/// first), the input check in a validator sandbox, and the normalisation in an mcp-output
/// sandbox (own instances, same components).
async fn call_breakdown(host: &Host) -> [(&'static str, Duration); 7] {
    let servers = host.mcp().expect("servers");
    let arguments = json!({ "message": "hi" });
    let result = servers
        .call("every", "echo", arguments.clone())
        .await
        .expect("echo")
        .result
        .to_string();
    let schema = host
        .registry()
        .find("every__echo")
        .expect("echo")
        .input_schema
        .clone();
    let (engine, cache) = (SandboxEngine::shared(), ComponentCache::user());
    let validator = SchemaValidator::new(&engine, &cache).expect("validator");
    let compiled = validator.prepare(&schema).expect("schema");
    let parser = McpOutputParser::new(&engine, &cache).expect("parser");
    let validate = || {
        let verdict = validator
            .validate(&compiled, r#"{"message":"hi"}"#)
            .expect("validates");
        assert!(matches!(verdict, Verdict::Valid));
    };
    // The validation and normalisation times inside the sequence, where each sandbox runs
    // right after the other work of a call rather than in a tight loop of its own.
    let sandboxes_in_sequence = RefCell::new(Vec::new());
    let whole_call = async |part: usize| match part {
        0 => {
            host.call(
                "every__echo",
                r#"{"message":"hi"}"#,
                &NonInteractivePrompter,
            )
            .await
            .expect("echo");
        }
        1 => {
            servers
                .call("every", "echo", arguments.clone())
                .await
                .expect("echo");
        }
        _ => {
            let start = Instant::now();
            validate();
            let validated = start.elapsed();
            let outcome = servers
                .call("every", "echo", arguments.clone())
                .await
                .expect("echo");
            let start = Instant::now();
            let normalised = parser
                .normalise(&outcome.result.to_string(), None)
                .expect("normalises");
            sandboxes_in_sequence
                .borrow_mut()
                .push(validated + start.elapsed());
            std::hint::black_box(normalised);
        }
    };
    let mut timed: [Calls; 3] = Default::default();
    for part in 0..3 {
        for _ in 0..WARM_UP_CALLS {
            whole_call(part).await;
        }
    }
    sandboxes_in_sequence.borrow_mut().clear();
    for round in 0..BREAKDOWN_ROUNDS {
        for step in 0..3 {
            let part = (round + step) % 3;
            timed[part]
                .time(BREAKDOWN_CALLS / BREAKDOWN_ROUNDS, async || {
                    whole_call(part).await
                })
                .await;
        }
    }
    let [host_call, mcp_call, sequence] =
        timed.map(|mut calls| percentile(&mut calls.samples, 0.5));
    [
        ("Host::call", host_call),
        (
            "Host::refresh_changed_tools",
            p50(async || {
                host.refresh_changed_tools().await;
            })
            .await,
        ),
        ("McpServers::call", mcp_call),
        ("validator sandbox", p50(async || validate()).await),
        ("validate + McpServers::call + normalise", sequence),
        (
            "of which the two sandboxes",
            percentile(&mut sandboxes_in_sequence.take(), 0.5),
        ),
        (
            "mcp-output sandbox",
            p50(async || {
                std::hint::black_box(parser.normalise(&result, None).expect("normalises"));
            })
            .await,
        ),
    ]
}

/// Milliseconds of each run, in order.
fn runs(samples: &[Duration]) -> String {
    let shown: Vec<String> = samples.iter().map(|d| format!("{:.0}", ms(*d))).collect();
    shown.join(" ")
}

/// Set to a JSON list of `[command, args...]`: this binary is then the bare client of the floor
/// comparison instead of the bench.
const BARE_CLIENT: &str = "EARSHOT_BENCH_BARE_CLIENT";

/// The bare client: spawn every server, initialize + tools/list on each concurrently, kill them
/// all, exit. What a one-shot listing needs, and nothing else.
fn bare_client(spec: &str) -> ! {
    let commands: Vec<Vec<String>> = serde_json::from_str(spec).expect("a JSON list of commands");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let tools = runtime.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for command in commands {
            let server = Server {
                name: "bare",
                command: PathBuf::from(&command[0]),
                args: command[1..].to_vec(),
            };
            set.spawn(async move {
                let (service, mut child) = raw_connect(&server).await;
                let tools = service.list_all_tools().await.expect("tools/list").len();
                (tools, service, child.start_kill())
            });
        }
        let mut tools = 0;
        let mut open = Vec::new();
        while let Some(joined) = set.join_next().await {
            let (listed, service, _) = joined.expect("task");
            tools += listed;
            open.push(service);
        }
        tools
    });
    std::process::exit(if tools > 0 { 0 } else { 1 });
}

/// The servers of the floor comparison: server-everything and server-memory (node, stdio).
fn floor_servers(root: &Path) -> Result<Vec<Server>, String> {
    let bin = root.join("fixtures/mcp/parts/node_modules/.bin");
    let everything = bin.join("mcp-server-everything");
    let memory = bin.join("mcp-server-memory");
    for needed in [&everything, &memory] {
        if !needed.exists() {
            return Err(format!(
                "{} is missing: run fixtures/mcp/parts/install.sh ~/.cache/earshot-mcp-parts",
                needed.display()
            ));
        }
    }
    Ok(vec![
        Server {
            name: "everything",
            command: everything,
            args: vec!["stdio".into()],
        },
        Server {
            name: "memory",
            command: memory,
            args: Vec::new(),
        },
    ])
}

/// What [`bare_client`] reads from [`BARE_CLIENT`]: each server as `[command, args...]`.
fn bare_client_spec(servers: &[Server]) -> String {
    let commands: Vec<Vec<String>> = servers
        .iter()
        .map(|server| {
            std::iter::once(server.command.to_string_lossy().into_owned())
                .chain(server.args.iter().cloned())
                .collect()
        })
        .collect();
    serde_json::to_string(&commands).expect("JSON")
}

/// One run of the bare client process, start to exit.
fn bare_client_run(servers: &[Server]) -> Duration {
    let start = Instant::now();
    let status = std::process::Command::new(std::env::current_exe().expect("this binary"))
        .env(BARE_CLIENT, bare_client_spec(servers))
        .stdin(Stdio::null())
        .status()
        .expect("the bare client runs");
    let elapsed = start.elapsed();
    assert!(status.success(), "the bare client failed: {status}");
    elapsed
}

/// Claude Code's `claude mcp list` on the same servers (its user scope in a temporary HOME),
/// when the MCP parts have it.
struct ClaudeList {
    claude: PathBuf,
    home: tempfile::TempDir,
}

impl ClaudeList {
    fn new(root: &Path, servers: &[Server]) -> Option<ClaudeList> {
        let claude = root.join("fixtures/mcp/parts/node_modules/.bin/claude");
        if !claude.exists() {
            return None;
        }
        let home = tempfile::tempdir().expect("temp dir");
        for server in servers {
            let added = std::process::Command::new(&claude)
                .args(["mcp", "add", "-s", "user", server.name, "--"])
                .arg(&server.command)
                .args(&server.args)
                .env("HOME", home.path())
                .output()
                .ok()?;
            if !added.status.success() {
                return None;
            }
        }
        Some(ClaudeList { claude, home })
    }

    fn run(&self, expected: usize) -> Duration {
        let start = Instant::now();
        let output = std::process::Command::new(&self.claude)
            .args(["mcp", "list"])
            .env("HOME", self.home.path())
            .current_dir(self.home.path())
            .stdin(Stdio::null())
            .output()
            .expect("claude runs");
        let elapsed = start.elapsed();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.matches("Connected").count() == expected,
            "claude mcp list: {stdout}"
        );
        elapsed
    }
}

/// The one-shot floor: `earshot mcp list` against the bare client process and Claude Code.
fn bench_floor(root: &Path) {
    let servers = match floor_servers(root) {
        Ok(servers) => servers,
        Err(why) => {
            println!("floor comparison skipped: {why}");
            return;
        }
    };
    let entries: serde_json::Map<String, Value> = servers
        .iter()
        .map(|server| (server.name.to_string(), server.entry()))
        .collect();
    let (_dir, config, project) = config_and_project(&json!({ "mcpServers": entries }));
    let claude = ClaudeList::new(root, &servers);
    // Warm-up.
    earshot_list(&config, &project, servers.len());
    bare_client_run(&servers);
    if let Some(claude) = &claude {
        claude.run(servers.len());
    }
    let (mut earshot, mut bare, mut claude_runs) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..LIST_RUNS {
        for side in 0..3 {
            match (run + side) % 3 {
                0 => earshot.push(earshot_list(&config, &project, servers.len())),
                1 => bare.push(bare_client_run(&servers)),
                _ => {
                    if let Some(claude) = &claude {
                        claude_runs.push(claude.run(servers.len()));
                    }
                }
            }
        }
    }
    println!(
        "one-shot floor, mcp list over server-everything + server-memory, ms per run: earshot [{}]; bare client [{}]; claude mcp list [{}]",
        runs(&earshot),
        runs(&bare),
        runs(&claude_runs)
    );
    let earshot = percentile(&mut earshot, 0.5);
    let bare = percentile(&mut bare, 0.5);
    println!(
        "median of {LIST_RUNS}: earshot {:.0} ms, bare client {:.0} ms: earshot/bare {:.2}x (goal <= 1.05x)",
        ms(earshot),
        ms(bare),
        earshot.as_secs_f64() / bare.as_secs_f64()
    );
    if !claude_runs.is_empty() {
        let claude = percentile(&mut claude_runs, 0.5);
        println!(
            "claude mcp list {:.0} ms: earshot/claude {:.2}x (goal <= 0.5x)",
            ms(claude),
            earshot.as_secs_f64() / claude.as_secs_f64()
        );
    }
}

/// Servers in the scale comparison, and tools each.
const SCALE_SERVERS: usize = 100;
/// Runs of each side of the scale comparison.
const SCALE_RUNS: usize = 5;

/// Runs `command` to its exit: wall time and the peak RSS (KiB) of the process (`wait4`).
// The child is reaped by `wait4` itself, which `Child::wait` cannot report RSS from.
#[allow(clippy::zombie_processes)]
fn run_measured(mut command: std::process::Command) -> (Duration, u64) {
    let start = Instant::now();
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawns");
    let pid = i32::try_from(child.id()).expect("a pid");
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of that plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet waited for; both pointers are to live locals.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let elapsed = start.elapsed();
    assert!(
        waited == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the measured process failed"
    );
    (elapsed, u64::try_from(usage.ru_maxrss).unwrap_or_default())
}

/// Scale: `tools list` and `tool_search` over 100 servers × 30 tools.
fn bench_scale(root: &Path, runtime: &tokio::runtime::Runtime) {
    let script = root.join("fixtures/mcp/servers/thirty_tools.py");
    let servers: Vec<Server> = (0..SCALE_SERVERS)
        .map(|_| Server {
            name: "thirty",
            command: PathBuf::from("python3"),
            args: vec![script.to_string_lossy().into_owned()],
        })
        .collect();
    let entries: serde_json::Map<String, Value> = servers
        .iter()
        .enumerate()
        .map(|(index, server)| (format!("s{index:03}"), server.entry()))
        .collect();
    let (_dir, config, project) = config_and_project(&json!({ "mcpServers": entries }));
    let earshot = || {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_earshot"));
        command
            .arg("--project")
            .arg(&project)
            .args(["tools", "list"])
            .env("EARSHOT_CONFIG_DIR", &config);
        run_measured(command)
    };
    let spec = bare_client_spec(&servers);
    let bare = || {
        let mut command = std::process::Command::new(std::env::current_exe().expect("this binary"));
        command.env(BARE_CLIENT, &spec);
        run_measured(command)
    };
    earshot();
    bare();
    let (mut earshot_runs, mut bare_runs) = (Vec::new(), Vec::new());
    for run in 0..SCALE_RUNS {
        if run % 2 == 0 {
            earshot_runs.push(earshot());
            bare_runs.push(bare());
        } else {
            bare_runs.push(bare());
            earshot_runs.push(earshot());
        }
    }
    let median = |runs: &mut Vec<(Duration, u64)>| {
        runs.sort();
        runs[runs.len() / 2]
    };
    let max_rss = |runs: &[(Duration, u64)]| runs.iter().map(|run| run.1).max().unwrap_or(0);
    let (earshot_rss, bare_rss) = (max_rss(&earshot_runs), max_rss(&bare_runs));
    let (earshot_time, _) = median(&mut earshot_runs);
    let (bare_time, _) = median(&mut bare_runs);
    println!(
        "scale, tools list over {SCALE_SERVERS} servers x 30 tools, median of {SCALE_RUNS}: earshot {:.0} ms, bare client {:.0} ms: {:.2}x; peak RSS earshot {:.0} MiB, bare client {:.0} MiB: {:.2}x",
        ms(earshot_time),
        ms(bare_time),
        earshot_time.as_secs_f64() / bare_time.as_secs_f64(),
        earshot_rss as f64 / 1024.0,
        bare_rss as f64 / 1024.0,
        earshot_rss as f64 / bare_rss as f64
    );

    // tool_search over the same 3,000 tools, in process.
    let settings = Settings::load(Some(&config), Some(ProjectPaths::new(project.clone())));
    let host = runtime
        .block_on(HostBuilder::new(settings).build())
        .expect("host");
    let tools = host
        .registry()
        .tools()
        .filter(|tool| tool.id.kind() == earshot_host::SourceKind::Mcp)
        .count();
    let queries = [
        "weather forecast for a city",
        "create an issue",
        "merge pull request",
        "send an email",
        "convert currency",
        "search files",
        "calendar event tomorrow",
        "translate text",
    ];
    let mut samples = Vec::new();
    runtime.block_on(async {
        for round in 0..200 {
            let input = json!({ "query": queries[round % queries.len()] }).to_string();
            let start = Instant::now();
            let output = host
                .call("tool_search", &input, &NonInteractivePrompter)
                .await
                .expect("tool_search");
            samples.push(start.elapsed());
            std::hint::black_box(output);
        }
    });
    runtime.block_on(host.shutdown());
    println!(
        "tool_search over {tools} tools through Host::call: p50 {:.0} us, p99 {:.0} us (goal p50 < 1 ms)",
        us(percentile(&mut samples, 0.5)),
        us(percentile(&mut samples, 0.99))
    );
}

/// The allocator the `earshot` binary uses (host/src/main.rs), so that what is timed here is what
/// users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    if let Ok(spec) = std::env::var(BARE_CLIENT) {
        bare_client(&spec);
    }
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("run with `cargo bench` to measure");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf();
    let only = |section: &str| std::env::args().any(|arg| arg == section);
    // `echo` measures only the list and call comparisons below.
    if !only("scale") && !only("echo") {
        bench_floor(&root);
    }
    if only("floor") {
        return;
    }
    println!();
    let servers = match servers(&root) {
        Ok(servers) => servers,
        Err(why) => {
            println!("mcp bench skipped: {why}");
            return;
        }
    };
    // An embedder's runtime: two workers, one per core of this machine.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    println!();
    if !only("echo") {
        bench_scale(&root, &runtime);
    }
    if only("scale") {
        return;
    }

    let mut list = bench_list(&runtime, &servers);
    println!(
        "mcp list, {} servers ({} tools), ms per run: earshot [{}]; raw, closed together [{}]; raw, each closed when listed [{}]",
        servers.len(),
        list.tools,
        runs(&list.earshot),
        runs(&list.raw_together),
        runs(&list.raw_early)
    );
    let list_earshot = percentile(&mut list.earshot, 0.5);
    let list_together = percentile(&mut list.raw_together, 0.5);
    let list_early = percentile(&mut list.raw_early, 0.5);

    let calls = bench_calls(&runtime, &servers[0]);
    println!();
    for (index, run) in calls.runs.iter().enumerate() {
        println!(
            "echo run {} ({} first, {CALLS_PER_RUN} calls per side in {ROUNDS_PER_RUN} rounds): earshot {:.0} calls/s, raw rmcp {:.0} calls/s, earshot/raw {:.2}x",
            index + 1,
            if run.earshot_first { "earshot" } else { "raw" },
            run.earshot.per_second(),
            run.raw.per_second(),
            run.ratio()
        );
    }
    let (mut earshot, mut raw) = (Calls::default(), Calls::default());
    for run in &calls.runs {
        earshot.extend(&run.earshot);
        raw.extend(&run.raw);
    }
    let p = |calls: &mut Calls| {
        (
            percentile(&mut calls.samples, 0.5),
            percentile(&mut calls.samples, 0.99),
        )
    };
    let (earshot_p, raw_p) = (p(&mut earshot), p(&mut raw));
    let ratios: Vec<f64> = calls.runs.iter().map(CallRun::ratio).collect();
    let met = ratios.iter().filter(|ratio| **ratio >= 0.95).count();

    println!();
    println!(
        "{:<44} {:>11} {:>11} {:>12} {:>12}",
        "", "earshot", "raw rmcp", "earshot/raw", "raw (alt.)"
    );
    println!(
        "{:<44} {:>8.0} ms {:>8.0} ms {:>11.2}x {:>9.0} ms",
        format!("mcp list, {} servers, median of {LIST_RUNS}", servers.len()),
        ms(list_earshot),
        ms(list_together),
        list_earshot.as_secs_f64() / list_together.as_secs_f64(),
        ms(list_early)
    );
    println!(
        "{:<44} {:>11.0} {:>11.0} {:>11.2}x",
        format!(
            "echo calls/s, {} calls, all {CALL_RUNS} runs",
            CALLS_PER_RUN * CALL_RUNS
        ),
        earshot.per_second(),
        raw.per_second(),
        earshot.per_second() / raw.per_second()
    );
    for (label, pick) in [("echo latency p50", 0), ("echo latency p99", 1)] {
        let at = |pair: (Duration, Duration)| if pick == 0 { pair.0 } else { pair.1 };
        println!(
            "{:<44} {:>8.0} us {:>8.0} us {:>11.2}x",
            label,
            us(at(earshot_p)),
            us(at(raw_p)),
            at(earshot_p).as_secs_f64() / at(raw_p).as_secs_f64()
        );
    }
    let parts: Vec<String> = calls
        .breakdown
        .iter()
        .map(|(part, p50)| format!("{part} {:.0} us", us(*p50)))
        .collect();
    println!(
        "where a Host::call goes (p50 of each part, awaited, after the runs above: the three whole calls interleaved in rounds, the three sandbox or refresh steps alone): {}; the remainder is Host::call's other steps (gate, registry, JSON)",
        parts.join(", ")
    );
    println!("raw (alt.): mcp list with each server closed as soon as it has listed");
    println!();
    let shown: Vec<String> = ratios.iter().map(|ratio| format!("{ratio:.2}x")).collect();
    println!(
        "mcp list: earshot/raw {:.2}x (goal <= 1.15x), {:.2}x against closing each server early; echo calls/s, earshot/raw per run: {} ({met} of {CALL_RUNS} runs >= 0.95x; goal: at least 5 of {CALL_RUNS})",
        list_earshot.as_secs_f64() / list_together.as_secs_f64(),
        list_earshot.as_secs_f64() / list_early.as_secs_f64(),
        shown.join(", ")
    );
}
