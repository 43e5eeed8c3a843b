//! What hooks cost a tool call through `Host::call`, each figure against a baseline measured in
//! the same run, in interleaved rounds (min / median / max of the per-round ratios).
//!
//! 1. **One `PreToolUse` hook.** A call with one user hook that runs a tiny program (a shell
//!    script that reads its stdin and prints `{}`), minus the same call with no hooks, against
//!    the floor: spawning that same program from Rust directly (`tokio::process::Command`, the
//!    same JSON written to its stdin, its stdout read to EOF, waited for), with no hook machinery.
//!    The floor gives the program the environment the hook gets (the short inherited list):
//!    `cargo bench`'s own environment carries an `LD_LIBRARY_PATH` that makes every `sh` and
//!    `cat` start slower, which would flatter the ratio (that spawn is printed too).
//!    Goal ≤ 1.1×: the engine (matching, the input's JSON, its own session and process group,
//!    capped reads, the answer read, the last result kept) adds at most a tenth to what running
//!    the program costs anyway. Printed too, outside the goal, where that time goes: the engine
//!    alone (`HookEngine::pre_tool_use`), and the program spawned the engine's way without the
//!    engine (`setsid` in `pre_exec`, which makes std fork this whole process instead of
//!    `posix_spawn`) and with `process_group(0)` instead (which keeps `posix_spawn`).
//! 2. **No hooks configured.** Calls per second with hooks on and none configured, against a
//!    session built with `HostBuilder::hooks(false)`. Goal ≥ 0.98×: hooks cost nothing to a
//!    session that has none.
//!
//! The tool is the `hello-tool` fixture component's `greet`, a user plugin (read-only: no
//! prompt), built as the tests build it. It runs in place on the runtime's worker, with no thread
//! of its own, so where the kernel puts a tool thread cannot tilt a same-run ratio (an
//! extension's JS thread swung the extensions bench's round trip 0.8×–5.9× for that reason), and
//! at a few microseconds a call it is the call that shows a fixed cost most.
//!
//! `cargo bench -p earshot-host --bench hooks`.

// The tests' fixture builder; this bench needs only the hello component of it.
#[path = "../tests/all/common/fixtures.rs"]
#[allow(dead_code)]
mod fixtures;

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use earshot_host::gate::NonInteractivePrompter;
use earshot_host::hooks::{HookTool, last_results};
use earshot_host::host::{Host, HostBuilder};
use earshot_host::mcp::minimal_environment;
use earshot_host::sandbox::{ComponentCache, SandboxEngine};
use earshot_host::settings::{ProjectPaths, Settings};
use earshot_host::trust::CacheKey;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The allocator the `earshot` binary uses (host/src/main.rs), so that what is timed here is what
/// users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The tool every call calls, and its input.
const TOOL: &str = "hello__greet";
const INPUT: &str = r#"{"name":"Ada"}"#;

/// Rounds of the hook comparison: every side once per round, the order rotating.
const HOOK_ROUNDS: usize = 15;
/// Calls (or spawns) of each side in one round of the hook comparison.
const HOOK_CALLS: usize = 40;
/// Rounds of the no-hooks comparison: each side once per round, alternating which goes first.
const PLAIN_ROUNDS: usize = 51;
/// Sessions of each kind in the no-hooks comparison (odd).
const PLAIN_PAIRS: usize = 3;
/// How long one side of a no-hooks round runs, about (its call count is set once, at warm-up).
const PLAIN_SIDE: Duration = Duration::from_millis(40);

/// The sides of the hook comparison, timed in turn in every round.
const WITH_HOOK: usize = 0;
const WITHOUT: usize = 1;
const DIRECT: usize = 2;
const ENGINE: usize = 3;
const AS_THE_HOOK: usize = 4;
const OWN_GROUP: usize = 5;
const INHERITED: usize = 6;
const SIDES: usize = 7;
const SIDE_NAMES: [&str; SIDES] = [
    "call with one PreToolUse hook",
    "call without hooks",
    "the program spawned directly (the floor)",
    "the engine alone (`HookEngine::pre_tool_use`: match, JSON, spawn, read the answer, keep the last result)",
    "the program spawned as the engine spawns it (`setsid` in `pre_exec`: std forks instead of `posix_spawn`; the short inherited environment, stderr read)",
    "the same with `process_group(0)` instead of `setsid` (std keeps `posix_spawn`)",
    "the program spawned directly with the whole environment `cargo bench` gives this process (its `LD_LIBRARY_PATH` sends the loader through more directories for `sh` and `cat`)",
];

/// The hook's program: reads its stdin, answers `{}` (no decision).
const PROGRAM: &str = "#!/bin/sh\ncat >/dev/null\necho '{}'\n";

/// One session in a directory of its own: `config/` (the hello plugin, and `settings.json` when
/// it has hooks) and `project/`.
struct Session {
    _dir: tempfile::TempDir,
    config: PathBuf,
    project: PathBuf,
    host: Host,
}

fn session(
    runtime: &tokio::runtime::Runtime,
    engine: &SandboxEngine,
    cache: &ComponentCache,
    hello: &[u8],
    user_settings: Option<serde_json::Value>,
    hooks: bool,
) -> Session {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("config");
    let project = dir.path().join("project");
    std::fs::create_dir_all(config.join("plugins")).expect("plugins dir");
    std::fs::create_dir_all(project.join(".earshot")).expect("project dir");
    std::fs::write(config.join("plugins/hello.wasm"), hello).expect("plugin");
    if let Some(user_settings) = user_settings {
        std::fs::write(config.join("settings.json"), user_settings.to_string()).expect("settings");
    }
    let project = project.canonicalize().expect("project");
    let settings = Settings::load(Some(&config), Some(ProjectPaths::new(project.clone())));
    let host = runtime
        .block_on(
            HostBuilder::new(settings)
                .engine(engine.clone())
                .cache(cache.clone())
                .hooks(hooks)
                .build(),
        )
        .expect("host");
    Session {
        _dir: dir,
        config,
        project,
        host,
    }
}

/// One call of [`TOOL`], which must succeed (a failing hook would make it a denial: `onError` is
/// `ask` and no one can be asked).
async fn call(host: &Host) {
    let output = host
        .call(TOOL, black_box(INPUT), &NonInteractivePrompter)
        .await
        .expect("the call runs");
    assert!(!output.is_error, "{output:?}");
    black_box(output);
}

/// How [`spawn`] starts the program.
#[derive(Clone, Copy)]
enum Spawn {
    /// The floor: stdin and stdout piped, the environment the hook gets (the short inherited
    /// list, so the program does the same work), nothing else (std starts it with `posix_spawn`).
    Direct,
    /// The same with this process's whole environment, as `cargo bench` left it.
    Inherited,
    /// As the hook engine does (host/src/hooks/process.rs): its own session through `setsid` in
    /// `pre_exec` (which makes std fork the whole process instead of `posix_spawn`), the short
    /// inherited environment, the hook's start directory, stderr read too.
    AsTheHook,
    /// The same, but its own process group through `process_group(0)` instead of a session of
    /// its own: std keeps `posix_spawn`.
    OwnGroup,
}

/// `program` spawned `how`, `input` written to its stdin, its stdout read to EOF, waited for.
async fn spawn(program: &Path, input: &[u8], how: Spawn, start_dir: &Path) {
    let mut command = tokio::process::Command::new(program);
    command.stdin(Stdio::piped()).stdout(Stdio::piped());
    if !matches!(how, Spawn::Inherited) {
        command
            .env_clear()
            .envs(minimal_environment(std::env::vars_os(), &BTreeMap::new()));
    }
    match how {
        Spawn::Direct | Spawn::Inherited => {
            command.stderr(Stdio::null());
        }
        Spawn::AsTheHook | Spawn::OwnGroup => {
            command.current_dir(start_dir).stderr(Stdio::piped());
        }
    }
    match how {
        Spawn::Direct | Spawn::Inherited => {}
        Spawn::AsTheHook => {
            // SAFETY: setsid is async-signal-safe; it only makes the child the leader of a new
            // session and process group, as the hook engine does.
            unsafe {
                command.pre_exec(|| {
                    if libc::setsid() == -1 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        Spawn::OwnGroup => {
            command.process_group(0);
        }
    }
    let mut child = command.spawn().expect("the program starts");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input).await.expect("stdin written");
    drop(stdin);
    let stderr = child.stderr.take().map(|mut stderr| {
        tokio::spawn(async move {
            let mut text = Vec::new();
            let _ = stderr.read_to_end(&mut text).await;
        })
    });
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_end(&mut stdout)
        .await
        .expect("stdout read");
    let status = child.wait().await.expect("waited for");
    if let Some(stderr) = stderr {
        let _ = stderr.await;
    }
    assert!(status.success(), "{status}");
    assert_eq!(stdout.trim_ascii(), b"{}");
}

/// Awaits `step` `count` times, one after another; the median time of one.
async fn median_of(count: usize, step: impl AsyncFn()) -> Duration {
    let mut samples = Vec::with_capacity(count);
    for _ in 0..count {
        let start = Instant::now();
        step().await;
        samples.push(start.elapsed());
    }
    median(&mut samples)
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// `(min, median, max)` of `values`.
fn spread(values: &[f64]) -> (f64, f64, f64) {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    (
        sorted[0],
        sorted[sorted.len() / 2],
        sorted[sorted.len() - 1],
    )
}

fn show(duration: Duration) -> String {
    let micros = duration.as_secs_f64() * 1e6;
    if micros < 1_000.0 {
        format!("{micros:.1} µs")
    } else {
        format!("{:.3} ms", micros / 1_000.0)
    }
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "not met" }
}

fn main() {
    // `cargo test --benches` runs bench binaries with `--bench` absent; keep that quick.
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("run with `cargo bench` to measure");
        return;
    }
    // The hook's program, written and closed before any thread exists (a file still open for
    // writing in a forked child cannot be executed: ETXTBSY).
    let scripts = tempfile::tempdir().expect("temp dir");
    let program = scripts.path().join("answer.sh");
    std::fs::write(&program, PROGRAM).expect("program");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755))
            .expect("executable");
    }
    let hello = std::fs::read(fixtures::hello_wasm()).expect("hello component");
    let engine = SandboxEngine::shared();
    let cache_dir = tempfile::tempdir().expect("temp dir");
    let cache = ComponentCache::in_dir(cache_dir.path(), CacheKey::ephemeral());
    // An embedder's runtime: two workers, one per core of this machine.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");

    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{
        "type": "command",
        "command": program.display().to_string(),
        "args": [],
        "name": "answer",
    }]}]}});
    let hooked = session(&runtime, &engine, &cache, &hello, Some(hooks), true);
    // Sessions without hooks, each kind several times over, built in turn: with one session of
    // each kind the median ratio moved by a few percent from run to run (0.98×–1.03×), as much as
    // the goal allows, so the rounds of the no-hooks comparison go through each pair in turn.
    let (nones, offs): (Vec<Session>, Vec<Session>) = (0..PLAIN_PAIRS)
        .map(|_| {
            (
                session(&runtime, &engine, &cache, &hello, None, true),
                session(&runtime, &engine, &cache, &hello, None, false),
            )
        })
        .unzip();
    let none = &nones[0];
    let engine_of_hooked = hooked.host.hooks().expect("the hook runs");
    assert_eq!(
        engine_of_hooked.hooks().len(),
        1,
        "{:?}",
        hooked.host.hook_notices()
    );
    assert!(
        nones
            .iter()
            .chain(&offs)
            .all(|plain| plain.host.hooks().is_none())
    );

    // The JSON the hook gets on its stdin, written to the program by the floor too.
    let hook_input = json!({
        "tool_name": TOOL,
        "tool_input": serde_json::from_str::<serde_json::Value>(INPUT).expect("input"),
        "gate": {"decision": "allow", "rule": null, "source": "read-only"},
        "session_id": engine_of_hooked.session_id(),
        "cwd": hooked.project.display().to_string(),
        "hook_event_name": "PreToolUse",
    })
    .to_string()
    .into_bytes();

    // 1. One PreToolUse hook against spawning its program directly, and where the hook's time
    //    goes: the engine alone, and the program spawned the hook's way without the engine.
    let hook_tool = HookTool {
        name: TOOL.into(),
        keyword: Some("Plugin".into()),
        target: TOOL.into(),
    };
    let side = async |side: usize| match side {
        WITH_HOOK => call(&hooked.host).await,
        WITHOUT => call(&none.host).await,
        DIRECT => spawn(&program, &hook_input, Spawn::Direct, &hooked.config).await,
        ENGINE => {
            let pre = engine_of_hooked
                .pre_tool_use(
                    &hook_tool,
                    serde_json::from_str(INPUT).expect("input"),
                    json!({"decision": "allow", "rule": null, "source": "read-only"}),
                )
                .await;
            assert!(pre.report.outcomes.is_empty(), "{:?}", pre.report);
            black_box(pre);
        }
        AS_THE_HOOK => spawn(&program, &hook_input, Spawn::AsTheHook, &hooked.config).await,
        OWN_GROUP => spawn(&program, &hook_input, Spawn::OwnGroup, &hooked.config).await,
        _ => spawn(&program, &hook_input, Spawn::Inherited, &hooked.config).await,
    };
    runtime.block_on(async {
        for _ in 0..HOOK_CALLS {
            for which in 0..SIDES {
                side(which).await;
            }
        }
    });
    let recorded = last_results(&hooked.config);
    assert_eq!(
        recorded
            .get("user:answer")
            .map(|(_, result)| result.as_str()),
        Some("ok"),
        "the hook ran and answered: {recorded:?}"
    );
    // Per side, its median in each round; per round, the goal's ratio.
    let mut medians: [Vec<Duration>; SIDES] = Default::default();
    let mut hook_ratios = Vec::with_capacity(HOOK_ROUNDS);
    for round in 0..HOOK_ROUNDS {
        let mut this_round = [Duration::ZERO; SIDES];
        for step in 0..SIDES {
            let which = (round + step) % SIDES;
            this_round[which] = runtime.block_on(median_of(HOOK_CALLS, async || side(which).await));
            medians[which].push(this_round[which]);
        }
        let added = this_round[WITH_HOOK].as_secs_f64() - this_round[WITHOUT].as_secs_f64();
        hook_ratios.push(added / this_round[DIRECT].as_secs_f64());
    }
    // Each part against the direct spawn of the same round.
    let against_direct = |which: usize| -> Vec<f64> {
        medians[which]
            .iter()
            .zip(&medians[DIRECT])
            .map(|(part, direct)| part.as_secs_f64() / direct.as_secs_f64())
            .collect()
    };
    let parts = [ENGINE, AS_THE_HOOK, OWN_GROUP, INHERITED]
        .map(|which| (which, spread(&against_direct(which))));
    let overall = medians.clone().map(|mut rounds| median(&mut rounds));
    let (hook_min, hook_median, hook_max) = spread(&hook_ratios);

    // 2. No hooks configured against hooks switched off.
    let count = runtime.block_on(async {
        for _ in 0..2_000 {
            for (none, off) in nones.iter().zip(&offs) {
                call(&none.host).await;
                call(&off.host).await;
            }
        }
        let start = Instant::now();
        for _ in 0..2_000 {
            call(&offs[0].host).await;
        }
        let one = start.elapsed() / 2_000;
        (PLAIN_SIDE.as_nanos() / one.as_nanos().max(1)).max(100) as usize
    });
    let rate = |host: &Host| {
        runtime.block_on(async {
            let start = Instant::now();
            for _ in 0..count {
                call(host).await;
            }
            count as f64 / start.elapsed().as_secs_f64()
        })
    };
    let (mut rates_none, mut rates_off, mut plain_ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..PLAIN_ROUNDS {
        // PLAIN_PAIRS is odd: each pair goes first on one side, then on the other.
        let (none, off) = (&nones[round % PLAIN_PAIRS], &offs[round % PLAIN_PAIRS]);
        let (none_rate, off_rate) = if round % 2 == 0 {
            let none_rate = rate(&none.host);
            (none_rate, rate(&off.host))
        } else {
            let off_rate = rate(&off.host);
            (rate(&none.host), off_rate)
        };
        rates_none.push(none_rate);
        rates_off.push(off_rate);
        plain_ratios.push(none_rate / off_rate);
    }
    let (plain_min, plain_median, plain_max) = spread(&plain_ratios);
    let (_, none_rate, _) = spread(&rates_none);
    let (_, off_rate, _) = spread(&rates_off);

    let hook_met = hook_median <= 1.1;
    let plain_met = plain_median >= 0.98;
    println!(
        "hooks on `{TOOL}` through Host::call, release, {HOOK_ROUNDS} rounds of {HOOK_CALLS} per side (1) and {PLAIN_ROUNDS} rounds of {count} calls per side (2), interleaved"
    );
    println!();
    println!("| measurement | earshot | baseline (same run) | ratio min / median / max | goal | |");
    println!("|---|---|---|---|---|---|");
    println!(
        "| 1. one PreToolUse hook: call with it ({}) − call without ({}) | {} | spawning the program directly: {} | {hook_min:.3}× / {hook_median:.3}× / {hook_max:.3}× | ≤ 1.1× | {} |",
        show(overall[WITH_HOOK]),
        show(overall[WITHOUT]),
        show(overall[WITH_HOOK].saturating_sub(overall[WITHOUT])),
        show(overall[DIRECT]),
        verdict(hook_met)
    );
    println!(
        "| 2. no hooks configured (hooks on) | {none_rate:.0} calls/s | `hooks(false)`: {off_rate:.0} calls/s | {plain_min:.3}× / {plain_median:.3}× / {plain_max:.3}× | ≥ 0.98× | {} |",
        verdict(plain_met)
    );
    println!();
    println!(
        "| where the hook's time goes (no Host::call around it) | median of rounds | / direct spawn, min / median / max |"
    );
    println!("|---|---|---|");
    for (which, (low, middle, high)) in parts {
        println!(
            "| {} | {} | {low:.3}× / {middle:.3}× / {high:.3}× |",
            SIDE_NAMES[which],
            show(overall[which])
        );
    }
    println!(
        "goal 1 (≤ 1.1× at the median of rounds): {}; goal 2 (≥ 0.98× at the median of rounds): {}",
        verdict(hook_met),
        verdict(plain_met)
    );
}
