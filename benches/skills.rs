//! What skills and slash commands cost, each figure against a baseline measured in the same run,
//! in interleaved rounds (min / median / max).
//!
//! 1. **Discovery and the catalogue** for 200 skills and 200 commands (half the user's, half the
//!    project's and trusted): `Library::load` (the bounded walk, every skill folder read and
//!    hashed, every frontmatter parsed strictly, every trust record verified) plus
//!    `Catalogue::build`. Goal: under 10 ms in-process. Printed beside it, the floor: reading the
//!    same files with `std::fs::read` and nothing else.
//! 2. **`earshot skills list`** (a process: settings, the walk, the table) on the demo project
//!    against `earshot --version` (the process floor). Goal ≤ 1.1×. Printed too, outside the
//!    goal: `skills list` on the 200-skill project.
//! 3. **Expanding a command with three `@` includes** (`Host::expand_command`: the command read
//!    again and its digest checked, the template cut, each path confined to the project, gated
//!    as `Read(path)`, read, fenced and labelled) against reading the same three files with
//!    `std::fs::read_to_string`. Goal ≤ 1.2×.
//!
//! `cargo bench -p earshot-cli --bench skills`.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use earshot_host::gate::NonInteractivePrompter;
use earshot_host::host::HostBuilder;
use earshot_host::settings::{ProjectPaths, Settings};
use earshot_host::skills::{Catalogue, DEFAULT_BUDGET, Library};

/// The allocator the `earshot` binary uses (host/src/main.rs), so that what is timed here is what
/// users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ROUNDS: usize = 31;
const EARSHOT: &str = env!("CARGO_BIN_EXE_earshot");

/// `cargo bench -p earshot-cli --bench skills [-- discovery|list|includes]`: all three, or one.
fn main() {
    let only = std::env::args().skip(1).find(|arg| !arg.starts_with('-'));
    let runs = |part: &str| only.as_deref().is_none_or(|only| only == part);
    let work = tempfile::tempdir().expect("temp dir");
    if runs("discovery") || runs("list") {
        let big = Fixture::new(&work.path().join("big"), 100, 100);
        big.trust_all();
        if runs("discovery") {
            discovery(&big);
        }
        if runs("list") {
            process_floor(&big);
        }
    }
    if runs("includes") {
        includes(&work.path().join("includes"));
    }
}

/// A project and a user config dir holding `per_side` skills and commands each.
struct Fixture {
    project: PathBuf,
    config: PathBuf,
    files: Vec<PathBuf>,
}

impl Fixture {
    fn new(root: &Path, skills: usize, commands: usize) -> Fixture {
        let project = root.join("project");
        let config = root.join("config");
        std::fs::create_dir_all(project.join(".earshot")).unwrap();
        std::fs::create_dir_all(&config).unwrap();
        let mut files = Vec::new();
        for (base, origin) in [
            (config.clone(), "user"),
            (project.join(".earshot"), "project"),
        ] {
            for index in 0..skills {
                let name = format!("{origin}-skill-{index:03}");
                let folder = base.join("skills").join(&name);
                std::fs::create_dir_all(folder.join("references")).unwrap();
                let text = format!(
                    "---\nname: {name}\ndescription: Does task number {index} for the {origin}, when the user asks for it by name or by what it does.\nallowed-tools: Bash(git log:*) Read\n---\n# {name}\n\n{}\n",
                    "Step by step instructions. ".repeat(40)
                );
                std::fs::write(folder.join("SKILL.md"), &text).unwrap();
                std::fs::write(
                    folder.join("references/notes.md"),
                    "Reference notes.\n".repeat(20),
                )
                .unwrap();
                files.push(folder.join("SKILL.md"));
                files.push(folder.join("references/notes.md"));
            }
            for index in 0..commands {
                let group = base.join("commands").join(format!("group-{}", index % 10));
                std::fs::create_dir_all(&group).unwrap();
                let file = group.join(format!("command-{index:03}.md"));
                std::fs::write(
                    &file,
                    format!("---\ndescription: Command {index}\nargument-hint: [what]\n---\nDo $ARGUMENTS carefully.\n"),
                )
                .unwrap();
                files.push(file);
            }
        }
        Fixture {
            project,
            config,
            files,
        }
    }

    fn settings(&self) -> Settings {
        Settings::load(
            Some(&self.config),
            Some(ProjectPaths::new(self.project.clone())),
        )
    }

    fn earshot(&self) -> Command {
        let mut command = Command::new(EARSHOT);
        command
            .arg("--project")
            .arg(&self.project)
            .env("EARSHOT_CONFIG_DIR", &self.config)
            .env("HOME", self.config.parent().unwrap())
            .env("NO_COLOR", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    }

    /// Trusts every project item, as `earshot skills|commands trust` would.
    fn trust_all(&self) {
        let library = Library::load(&self.settings());
        for item in library.items() {
            if item.origin == earshot_host::skills::ItemOrigin::Project {
                let noun = item.kind.noun_plural();
                let status = self
                    .earshot()
                    .args([noun, "trust", &item.name])
                    .status()
                    .unwrap();
                assert!(status.success());
            }
        }
    }
}

/// min / median / max of `values`.
fn spread(values: &mut [f64]) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    (
        values[0],
        values[values.len() / 2],
        values[values.len() - 1],
    )
}

fn time<T>(mut work: impl FnMut() -> T, times: usize) -> Duration {
    let start = Instant::now();
    for _ in 0..times {
        black_box(work());
    }
    start.elapsed() / times as u32
}

fn discovery(fixture: &Fixture) {
    let settings = fixture.settings();
    let load = || {
        let library = Library::load(&settings);
        let catalogue = Catalogue::build(library.model_skills(), DEFAULT_BUDGET);
        (library.items().len(), catalogue.entries.len())
    };
    let (items, _) = load();
    assert_eq!(items, 400, "every skill and command loads");
    assert_eq!(
        Library::load(&settings)
            .items()
            .iter()
            .filter(|item| item.is_active())
            .count(),
        400,
        "every project item is trusted"
    );
    let read = || {
        fixture
            .files
            .iter()
            .map(|file| std::fs::read(file).unwrap().len())
            .sum::<usize>()
    };
    let (mut loads, mut reads, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let (a, b) = if round % 2 == 0 {
            let a = time(load, 5);
            (a, time(read, 5))
        } else {
            let b = time(read, 5);
            (time(load, 5), b)
        };
        loads.push(a.as_secs_f64() * 1e3);
        reads.push(b.as_secs_f64() * 1e3);
        ratios.push(a.as_secs_f64() / b.as_secs_f64());
    }
    let (lmin, lmed, lmax) = spread(&mut loads);
    let (rmin, rmed, rmax) = spread(&mut reads);
    let (qmin, qmed, qmax) = spread(&mut ratios);
    println!("1. discovery + catalogue, 200 skills + 200 commands (goal < 10 ms)");
    println!("   Library::load + Catalogue::build: {lmin:.2} / {lmed:.2} / {lmax:.2} ms");
    println!(
        "   reading the same {} files:        {rmin:.2} / {rmed:.2} / {rmax:.2} ms",
        fixture.files.len()
    );
    println!("   ratio: {qmin:.2}x / {qmed:.2}x / {qmax:.2}x");
}

fn run(mut command: Command) -> Duration {
    let start = Instant::now();
    let status = command.status().unwrap();
    assert!(status.success());
    start.elapsed()
}

fn process_floor(big: &Fixture) {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo");
    let demo_config = tempfile::tempdir().unwrap();
    let list = |project: &Path, config: &Path| {
        let mut command = Command::new(EARSHOT);
        command
            .arg("--project")
            .arg(project)
            .args(["skills", "list"])
            .env("EARSHOT_CONFIG_DIR", config)
            .env("HOME", config)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    };
    let version = || {
        let mut command = Command::new(EARSHOT);
        command.arg("--version").stdout(Stdio::null());
        command
    };
    const RUNS: usize = 20;
    let (mut demo_ratios, mut big_ratios, mut floors) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let mut sides = [Duration::ZERO; 3];
        for step in 0..3 {
            let side = (step + round) % 3;
            for _ in 0..RUNS {
                sides[side] += match side {
                    0 => run(version()),
                    1 => run(list(&demo, demo_config.path())),
                    _ => run(list(&big.project, &big.config)),
                };
            }
        }
        floors.push(sides[0].as_secs_f64() * 1e3 / RUNS as f64);
        demo_ratios.push(sides[1].as_secs_f64() / sides[0].as_secs_f64());
        big_ratios.push(sides[2].as_secs_f64() / sides[0].as_secs_f64());
    }
    let (fmin, fmed, fmax) = spread(&mut floors);
    let (dmin, dmed, dmax) = spread(&mut demo_ratios);
    let (bmin, bmed, bmax) = spread(&mut big_ratios);
    println!("2. `earshot skills list` against `earshot --version` (goal <= 1.1x)");
    println!("   earshot --version:               {fmin:.2} / {fmed:.2} / {fmax:.2} ms");
    println!("   skills list, demo project:       {dmin:.3}x / {dmed:.3}x / {dmax:.3}x");
    println!(
        "   skills list, 200 skills + 200 commands (outside the goal): {bmin:.2}x / {bmed:.2}x / {bmax:.2}x"
    );
}

fn includes(root: &Path) {
    let project = root.join("project");
    let config = root.join("config");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(config.join("commands")).unwrap();
    let line = "    let value = compute(input, &options)?; // a typical line of source code\n";
    let names = ["src/lib.rs", "src/main.rs", "README.md"];
    for (index, name) in names.iter().enumerate() {
        std::fs::write(project.join(name), line.repeat(400 * (index + 1))).unwrap();
    }
    std::fs::write(
        config.join("commands/review.md"),
        "---\ndescription: Review three files\n---\nReview these:\n@src/lib.rs\n@src/main.rs\n@README.md\nFocus on $ARGUMENTS.\n",
    )
    .unwrap();
    // The same command with its paths as plain words: what an expansion costs besides the files.
    std::fs::write(
        config.join("commands/plain.md"),
        "---\ndescription: Review three files\n---\nReview these:\nsrc/lib.rs\nsrc/main.rs\nREADME.md\nFocus on $ARGUMENTS.\n",
    )
    .unwrap();
    let settings = Settings::load(Some(&config), Some(ProjectPaths::new(project.clone())));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let host = runtime
        .block_on(HostBuilder::new(settings).build())
        .unwrap();
    let expand = || {
        runtime
            .block_on(host.expand_command("review", "errors", &NonInteractivePrompter))
            .unwrap()
            .text
            .len()
    };
    let bytes: usize = names
        .iter()
        .map(|name| std::fs::metadata(project.join(name)).unwrap().len() as usize)
        .sum();
    assert!(expand() > bytes);
    let read = || {
        names
            .iter()
            .map(|name| std::fs::read_to_string(project.join(name)).unwrap().len())
            .sum::<usize>()
    };
    let plain = || {
        runtime
            .block_on(host.expand_command("plain", "errors", &NonInteractivePrompter))
            .unwrap()
            .text
            .len()
    };
    let mut plains: Vec<f64> = (0..ROUNDS)
        .map(|_| time(plain, 200).as_secs_f64() * 1e6)
        .collect();
    let mut ratios = Vec::new();
    let (mut expands, mut reads) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS * 3 {
        let (a, b) = if round % 2 == 0 {
            let a = time(expand, 200);
            (a, time(read, 200))
        } else {
            let b = time(read, 200);
            (time(expand, 200), b)
        };
        expands.push(a.as_secs_f64() * 1e6);
        reads.push(b.as_secs_f64() * 1e6);
        ratios.push(a.as_secs_f64() / b.as_secs_f64());
    }
    let (emin, emed, emax) = spread(&mut expands);
    let (rmin, rmed, rmax) = spread(&mut reads);
    let (qmin, qmed, qmax) = spread(&mut ratios);
    println!(
        "3. expanding a command with three @ includes ({bytes} bytes) against reading them (goal <= 1.2x)"
    );
    println!("   Host::expand_command: {emin:.1} / {emed:.1} / {emax:.1} us");
    println!("   read_to_string x3:    {rmin:.1} / {rmed:.1} / {rmax:.1} us");
    println!("   ratio: {qmin:.3}x / {qmed:.3}x / {qmax:.3}x");
    let (pmin, pmed, pmax) = spread(&mut plains);
    println!(
        "   the same command without includes (reading, checking and parsing the command): {pmin:.1} / {pmed:.1} / {pmax:.1} us"
    );
}
