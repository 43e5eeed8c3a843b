//! MCP servers, against raw rmcp clients in the same run:
//!
//! * `earshot mcp list` over four real stdio servers (server-everything under two names, the
//!   Python SDK's `python_server.py`, the stdlib `thirty_tools.py`), the release binary as a
//!   process from start to exit, against a minimal rmcp client that starts the same servers
//!   concurrently, does initialize + tools/list on each and closes them (spawn to all exited);
//!   median of 5 runs each, interleaved.
//! * Calls per second of server-everything's `echo` through `Host::call` (gate, validator
//!   sandbox, serialised call, mcp-output sandbox) against a raw rmcp client calling the same
//!   tool on its own copy of the server; 2,000 calls each in alternating rounds, with p50/p99.
//!
//! `fixtures/mcp/parts/install.sh ~/.cache/earshot-mcp-parts` once (or set `MCP_PARTS_PYTHON` to
//! the venv's python), then `cargo bench -p earshot-host --bench mcp`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use earshot_host::gate::NonInteractivePrompter;
use earshot_host::host::Host;
use earshot_host::settings::{ProjectPaths, Settings};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

/// Runs of each side of `mcp list` (after one untimed warm-up each).
const LIST_RUNS: usize = 5;
/// Calls of each side of the call benchmark, in [`CALL_ROUNDS`] alternating rounds.
const CALLS: usize = 2_000;
/// Rounds the calls are split into, alternating earshot and raw.
const CALL_ROUNDS: usize = 4;
/// Untimed calls of each side first.
const WARM_UP_CALLS: usize = 200;
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

/// The baseline of `mcp list`: every server at once, initialize + tools/list, close; tools seen.
async fn raw_list(servers: &[Server]) -> usize {
    let mut set = tokio::task::JoinSet::new();
    for server in servers {
        let server = server.clone();
        set.spawn(async move {
            let (service, child) = raw_connect(&server).await;
            let tools = service.list_all_tools().await.expect("tools/list").len();
            raw_close(service, child).await;
            tools
        });
    }
    let mut tools = 0;
    while let Some(listed) = set.join_next().await {
        tools += listed.expect("task");
    }
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

/// (a): `earshot mcp list` against the raw concurrent client; returns both medians.
fn bench_list(runtime: &tokio::runtime::Runtime, servers: &[Server]) -> (Duration, Duration) {
    let entries: serde_json::Map<String, Value> = servers
        .iter()
        .map(|server| (server.name.to_string(), server.entry()))
        .collect();
    let (_dir, config, project) = config_and_project(&json!({ "mcpServers": entries }));
    let raw = || {
        let start = Instant::now();
        let tools = runtime.block_on(raw_list(servers));
        (start.elapsed(), tools)
    };
    // Warm-up: page cache, Python bytecode, node's compile cache.
    earshot_list(&config, &project, servers.len());
    let (_, tools) = raw();
    let (mut earshot, mut baseline) = (Vec::new(), Vec::new());
    for run in 0..LIST_RUNS {
        // Alternate which side goes first, so neither always follows the other's teardown.
        if run % 2 == 0 {
            earshot.push(earshot_list(&config, &project, servers.len()));
            baseline.push(raw().0);
        } else {
            baseline.push(raw().0);
            earshot.push(earshot_list(&config, &project, servers.len()));
        }
    }
    let show = |samples: &[Duration]| {
        samples
            .iter()
            .map(|d| format!("{:.0}", ms(*d)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!(
        "mcp list, {} servers ({tools} tools), ms per run: earshot [{}], raw rmcp [{}]",
        servers.len(),
        show(&earshot),
        show(&baseline)
    );
    (
        percentile(&mut earshot, 0.5),
        percentile(&mut baseline, 0.5),
    )
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
}

/// (b): `echo` through `Host::call` against a raw rmcp client; returns (earshot, raw).
fn bench_calls(runtime: &tokio::runtime::Runtime, server: &Server) -> (Calls, Calls) {
    let (_dir, config, project) = config_and_project(&json!({
        "mcpServers": { "every": server.entry() },
        "permissions": { "allow": ["Mcp(every__echo)"] }
    }));
    let settings = Settings::load(Some(&config), Some(ProjectPaths::new(project)));
    let host = Host::load(settings).expect("host");
    assert!(!host.tool_search_active(), "echo is listed directly");
    let input = r#"{"message":"hi"}"#;
    let through_earshot = || {
        let output = host
            .call("every__echo", input, &NonInteractivePrompter)
            .expect("echo through earshot");
        assert!(
            !output.is_error && output.output.contains("hi"),
            "{output:?}"
        );
    };

    let (service, child) = runtime.block_on(raw_connect(server));
    let arguments = json!({ "message": "hi" })
        .as_object()
        .cloned()
        .expect("object");
    let raw_round = |count: usize, calls: Option<&mut Calls>| {
        runtime.block_on(async {
            let mut samples = Vec::with_capacity(count);
            let start = Instant::now();
            for _ in 0..count {
                let call = Instant::now();
                let result = service
                    .call_tool(CallToolRequestParams::new("echo").with_arguments(arguments.clone()))
                    .await
                    .expect("raw echo");
                samples.push(call.elapsed());
                assert_ne!(result.is_error, Some(true));
                std::hint::black_box(result);
            }
            if let Some(calls) = calls {
                calls.total += start.elapsed();
                calls.samples.extend(samples);
            }
        })
    };

    for _ in 0..WARM_UP_CALLS {
        through_earshot();
    }
    raw_round(WARM_UP_CALLS, None);
    let (mut earshot, mut raw) = (Calls::default(), Calls::default());
    let per_round = CALLS / CALL_ROUNDS;
    for round in 0..CALL_ROUNDS {
        let earshot_round = |calls: &mut Calls| {
            let start = Instant::now();
            for _ in 0..per_round {
                let call = Instant::now();
                through_earshot();
                calls.samples.push(call.elapsed());
            }
            calls.total += start.elapsed();
        };
        if round % 2 == 0 {
            earshot_round(&mut earshot);
            raw_round(per_round, Some(&mut raw));
        } else {
            raw_round(per_round, Some(&mut raw));
            earshot_round(&mut earshot);
        }
    }
    runtime.block_on(raw_close(service, child));
    drop(host);
    (earshot, raw)
}

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("run with `cargo bench` to measure");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf();
    let servers = match servers(&root) {
        Ok(servers) => servers,
        Err(why) => {
            println!("mcp bench skipped: {why}");
            return;
        }
    };
    // Two workers, like earshot's own MCP runtime.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");

    let (list_earshot, list_raw) = bench_list(&runtime, &servers);
    let (mut earshot, mut raw) = bench_calls(&runtime, &servers[0]);
    let rates = (earshot.per_second(), raw.per_second());
    let earshot_p = (
        percentile(&mut earshot.samples, 0.5),
        percentile(&mut earshot.samples, 0.99),
    );
    let raw_p = (
        percentile(&mut raw.samples, 0.5),
        percentile(&mut raw.samples, 0.99),
    );

    println!();
    println!(
        "{:<44} {:>12} {:>12} {:>15}",
        "", "earshot", "raw rmcp", "earshot/raw"
    );
    println!(
        "{:<44} {:>9.0} ms {:>9.0} ms {:>14.2}x",
        format!("mcp list, {} servers, median of {LIST_RUNS}", servers.len()),
        ms(list_earshot),
        ms(list_raw),
        list_earshot.as_secs_f64() / list_raw.as_secs_f64()
    );
    println!(
        "{:<44} {:>12.0} {:>12.0} {:>14.2}x",
        format!("echo calls/s, {} calls", earshot.samples.len()),
        rates.0,
        rates.1,
        rates.0 / rates.1
    );
    println!(
        "{:<44} {:>9.0} us {:>9.0} us {:>14.2}x",
        "echo latency p50",
        us(earshot_p.0),
        us(raw_p.0),
        earshot_p.0.as_secs_f64() / raw_p.0.as_secs_f64()
    );
    println!(
        "{:<44} {:>9.0} us {:>9.0} us {:>14.2}x",
        "echo latency p99",
        us(earshot_p.1),
        us(raw_p.1),
        earshot_p.1.as_secs_f64() / raw_p.1.as_secs_f64()
    );
    println!();
    println!(
        "mcp list: earshot/raw {:.2}x (goal <= 1.15x); echo calls/s: earshot/raw {:.2}x (goal >= 0.9x)",
        list_earshot.as_secs_f64() / list_raw.as_secs_f64(),
        rates.0 / rates.1
    );
}
