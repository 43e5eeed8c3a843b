//! Sandbox cost, measured against the same code run natively in the same process.
//!
//! `cargo bench -p earshot-host --bench sandboxes` prints a Markdown table: median time per call
//! for each pair, and the ratio sandboxed / native. Figures in README come from this output.

// The tests' fixture builder; this bench needs only the hello component of it.
#[path = "../tests/all/common/fixtures.rs"]
#[allow(dead_code)]
mod fixtures;

use std::hint::black_box;
use std::time::{Duration, Instant};

use earshot_host::gate::NonInteractivePrompter;
use earshot_host::host::HostBuilder;
use earshot_host::sandbox::{
    ComponentCache, McpOutputParser, SandboxEngine, SandboxLimits, SchemaValidator, ToolComponent,
};
use earshot_host::settings::{ProjectPaths, Settings};
use earshot_host::trust::CacheKey;
use serde_json::{Value, json};

/// Median time per call of `f`, over `batches` batches sized to take about 20 ms each.
fn per_call(batches: usize, mut f: impl FnMut()) -> Duration {
    // Warm up and size the batch.
    let start = Instant::now();
    let mut calls = 0u32;
    while start.elapsed() < Duration::from_millis(100) || calls < 3 {
        f();
        calls += 1;
    }
    let one = start.elapsed() / calls;
    let batch = ((Duration::from_millis(20).as_nanos() / one.as_nanos().max(1)) as u32).max(1);
    let mut samples: Vec<Duration> = (0..batches)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..batch {
                f();
            }
            start.elapsed() / batch
        })
        .collect();
    samples.sort();
    samples[samples.len() / 2]
}

/// [`per_call`] for an async call, awaited on `runtime` (all batches in one `block_on`).
fn per_call_async(
    runtime: &tokio::runtime::Runtime,
    batches: usize,
    f: impl AsyncFn(),
) -> Duration {
    runtime.block_on(async {
        let start = Instant::now();
        let mut calls = 0u32;
        while start.elapsed() < Duration::from_millis(100) || calls < 3 {
            f().await;
            calls += 1;
        }
        let one = start.elapsed() / calls;
        let batch = ((Duration::from_millis(20).as_nanos() / one.as_nanos().max(1)) as u32).max(1);
        let mut samples = Vec::with_capacity(batches);
        for _ in 0..batches {
            let start = Instant::now();
            for _ in 0..batch {
                f().await;
            }
            samples.push(start.elapsed() / batch);
        }
        samples.sort();
        samples[samples.len() / 2]
    })
}

fn show(duration: Duration) -> String {
    let nanos = duration.as_nanos() as f64;
    if nanos < 1_000.0 {
        format!("{nanos:.0} ns")
    } else if nanos < 1_000_000.0 {
        format!("{:.1} µs", nanos / 1_000.0)
    } else {
        format!("{:.2} ms", nanos / 1_000_000.0)
    }
}

fn row(name: &str, baseline_name: &str, sandboxed: Duration, baseline: Duration) {
    println!(
        "| {name} | {} | {baseline_name}: {} | {:.2}× |",
        show(sandboxed),
        show(baseline),
        sandboxed.as_secs_f64() / baseline.as_secs_f64()
    );
}

fn main() {
    // `cargo test --benches` runs bench binaries with `--bench` absent; keep that quick.
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("run with `cargo bench` to measure");
        return;
    }
    let engine = SandboxEngine::shared();
    let cache_dir = tempfile::tempdir().expect("temp dir");
    let cache = ComponentCache::in_dir(cache_dir.path(), CacheKey::ephemeral());

    println!("| measurement | sandboxed | baseline | ratio |");
    println!("|---|---|---|---|");

    // 1. Validate a typical tool input: an object with five properties.
    let schema = json!({
        "type": "object",
        "properties": {
            "repo": {"type": "string", "pattern": "^[\\w.-]+/[\\w.-]+$"},
            "title": {"type": "string", "minLength": 1, "maxLength": 256},
            "body": {"type": "string"},
            "labels": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
            "draft": {"type": "boolean"}
        },
        "required": ["repo", "title"],
        "additionalProperties": false
    });
    let instance =
        json!({"repo": "acme/widgets", "title": "Crash on start", "body": "Steps: run it.",
                          "labels": ["bug", "p1"], "draft": false})
        .to_string();
    let native = jsonschema::validator_for(&schema).expect("schema");
    let native_time = per_call(31, || {
        let value: Value = serde_json::from_str(black_box(&instance)).expect("json");
        let errors: Vec<String> = native.iter_errors(&value).map(|e| e.to_string()).collect();
        black_box(errors);
    });
    let validator = SchemaValidator::new(&engine, &cache).expect("validator");
    let compiled = validator.compile(&schema.to_string()).expect("compiles");
    let sandboxed_time = per_call(31, || {
        black_box(
            validator
                .validate(&compiled, black_box(&instance))
                .expect("validates"),
        );
    });
    row(
        "validate 5-property tool input",
        "native jsonschema",
        sandboxed_time,
        native_time,
    );

    // 2. Normalise MCP results of 1 KB, 100 KB and 1 MB.
    let parser = McpOutputParser::new(&engine, &cache).expect("parser");
    for (label, size) in [
        ("1 KB", 1usize << 10),
        ("100 KB", 100 << 10),
        ("1 MB", 1 << 20),
    ] {
        let text: String = "lorem ipsum dolor sit amet\n"
            .chars()
            .cycle()
            .take(size)
            .collect();
        let result = json!({"content": [{"type": "text", "text": text}]}).to_string();
        let native_time = per_call(21, || {
            black_box(
                earshot_mcp_output::normalise(
                    black_box(&result),
                    None,
                    earshot_mcp_output::Limits::default(),
                )
                .expect("normalises"),
            );
        });
        let sandboxed_time = per_call(21, || {
            black_box(
                parser
                    .normalise(black_box(&result), None)
                    .expect("normalises"),
            );
        });
        row(
            &format!("mcp-output on a {label} result"),
            "native",
            sandboxed_time,
            native_time,
        );
    }

    // 2b. A result with a 1 MiB and a 4 MiB image (screenshots): the blocks cross the sandbox
    //     boundary as base64 text, so this is what passing images through costs.
    for (label, size) in [("1 MiB", 1usize << 20), ("4 MiB", 4 << 20)] {
        let data = "iVBO".repeat(size.div_ceil(3));
        let result = json!({"content": [
            {"type": "text", "text": "a screenshot"},
            {"type": "image", "data": data, "mimeType": "image/png"}
        ]})
        .to_string();
        let native_time = per_call(11, || {
            black_box(
                earshot_mcp_output::normalise(
                    black_box(&result),
                    None,
                    earshot_mcp_output::Limits::default(),
                )
                .expect("normalises"),
            );
        });
        let sandboxed_time = per_call(11, || {
            black_box(
                parser
                    .normalise(black_box(&result), None)
                    .expect("normalises"),
            );
        });
        row(
            &format!("mcp-output on a result with a {label} image"),
            "native",
            sandboxed_time,
            native_time,
        );
    }

    // 3. Component ready: from the cache, from the code precompiled at build time (a fresh
    //    machine), and compiled from nothing (what a fresh machine would pay without it).
    let from_cache = per_call(11, || {
        black_box(SchemaValidator::new(&engine, &cache).expect("validator"));
    });
    let fresh_dirs: Vec<tempfile::TempDir> = (0..5)
        .map(|_| tempfile::tempdir().expect("temp dir"))
        .collect();
    let mut fresh = fresh_dirs.iter();
    let started = Instant::now();
    for _ in 0..5 {
        let dir = fresh.next().expect("five dirs");
        black_box(
            SchemaValidator::new(
                &engine,
                &ComponentCache::in_dir(dir.path(), CacheKey::ephemeral()),
            )
            .expect("validator"),
        );
    }
    let from_precompiled = started.elapsed() / 5;
    let validator_wasm =
        std::fs::read(earshot_host::build_outputs::VALIDATOR_WASM).expect("validator wasm");
    let started = Instant::now();
    black_box(
        ComponentCache::disabled()
            .load(&engine, "schema-validator", &validator_wasm)
            .expect("compiles"),
    );
    let from_nothing = started.elapsed();
    row(
        "validator ready from cache",
        "compiled from nothing",
        from_cache,
        from_nothing,
    );
    row(
        "validator ready on a fresh machine (build-time code)",
        "compiled from nothing",
        from_precompiled,
        from_nothing,
    );

    let hello = std::fs::read(fixtures::hello_wasm()).expect("hello component");
    let tool_cache = per_call(11, || {
        black_box(
            ToolComponent::load(
                &engine,
                &cache,
                "hello",
                &hello,
                SandboxLimits::TOOL_COMPONENT,
            )
            .expect("loads"),
        );
    });
    let started = Instant::now();
    black_box(
        ToolComponent::load(
            &engine,
            &ComponentCache::disabled(),
            "hello",
            &hello,
            SandboxLimits::TOOL_COMPONENT,
        )
        .expect("loads"),
    );
    row(
        "tool component ready from cache",
        "compiled from nothing",
        tool_cache,
        started.elapsed(),
    );

    // 4. A trivial component tool call through earshot (registry lookup, gate, input validated
    //    in the validator sandbox, the component in place after a quick call), awaited on the bench's
    //    runtime, versus the same call straight into the component.
    let home = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(home.path().join("config/plugins")).expect("plugins dir");
    std::fs::create_dir_all(home.path().join("project")).expect("project dir");
    std::fs::write(home.path().join("config/plugins/hello.wasm"), &hello).expect("plugin");
    let settings = Settings::load(
        Some(&home.path().join("config")),
        Some(ProjectPaths::new(home.path().join("project"))),
    );
    // An embedder's runtime: two workers, one per core of this machine.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let host = runtime
        .block_on(
            HostBuilder::new(settings)
                .engine(engine.clone())
                .cache(cache.clone())
                .component_limits(SandboxLimits::TOOL_COMPONENT)
                .build(),
        )
        .expect("host");
    let input = r#"{"name":"Ada"}"#;
    let direct = ToolComponent::load(
        &engine,
        &cache,
        "hello",
        &hello,
        SandboxLimits::TOOL_COMPONENT,
    )
    .expect("loads");
    let raw = per_call(31, || {
        black_box(direct.call("greet", black_box(input)).expect("runs"));
    });
    let through = per_call_async(&runtime, 31, async || {
        black_box(
            host.call("hello__greet", black_box(input), &NonInteractivePrompter)
                .await
                .expect("runs"),
        );
    });
    row(
        "component tool call through earshot (gate + validation)",
        "raw component call",
        through,
        raw,
    );
}
