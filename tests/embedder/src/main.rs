//! Runs, from outside the repository's workspace, the agent loop of `host/examples/embed.rs`
//! on a project and config dir, then the text workload that was quadratic on pristine Boa
//! (building a string with `+=` and splitting it) at 100 KB and 1 MB, and fails unless ten times
//! the text costs well under a hundred times the time.
//!
//! `cargo run --manifest-path tests/embedder/Cargo.toml -- PROJECT CONFIG_DIR`

use std::path::Path;

#[allow(dead_code, reason = "the example's own main is not used here")]
#[path = "../../../host/examples/embed.rs"]
mod embed;

use earshot_host::{HostBuilder, NonInteractivePrompter, ProjectPaths, Settings};

/// A user extension whose tool builds `lines` lines with `+=`, splits them, and says how long
/// that took inside the engine (ms).
const SPLIT_EXTENSION: &str = "export default { tools: [{ name: 'split', description: 'Builds and splits text',\n\
  inputSchema: { type: 'object', properties: { lines: { type: 'number' } } }, readOnly: true,\n\
  execute(input: { lines: number }) {\n\
    const started = performance.now();\n\
    let text = '';\n\
    for (let i = 0; i < input.lines; i++) text += `src/mod${i % 9}/file${i}.ts:${i}: warning: unused [x]\\n`;\n\
    const parts = text.split('\\n');\n\
    return JSON.stringify({ ms: performance.now() - started, bytes: text.length, parts: parts.length });\n\
  } }] };\n";

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [project, config] = args.as_slice() else {
        eprintln!("usage: earshot-embedder-check PROJECT CONFIG_DIR");
        std::process::exit(2);
    };
    let parts = std::env::var("MCP_PARTS_BIN").ok();
    for line in embed::agent_loop(Path::new(project), Path::new(config), parts).await {
        println!("{line}");
    }

    let extensions = Path::new(config).join("extensions");
    std::fs::create_dir_all(&extensions).expect("the config dir is writable");
    std::fs::write(extensions.join("split.ts"), SPLIT_EXTENSION).expect("writes the extension");
    let settings = Settings::load(
        Some(Path::new(config)),
        Some(ProjectPaths::new(Path::new(project).to_path_buf())),
    );
    let host = HostBuilder::new(settings)
        .build()
        .await
        .expect("the host builds");
    let mut figures = Vec::new();
    for lines in [2_000, 20_000] {
        let output = host
            .call(
                "split__split",
                &format!("{{\"lines\": {lines}}}"),
                &NonInteractivePrompter,
            )
            .await
            .expect("the split tool runs");
        // The tool's JSON is the first line; a project's hook may add context after it.
        let first_line = output.output.lines().next().unwrap_or_default();
        let measured: serde_json::Value =
            serde_json::from_str(first_line).expect("the tool answers JSON");
        println!("split of {lines} lines: {measured}");
        figures.push(measured["ms"].as_f64().unwrap_or(f64::MAX).max(0.05));
    }
    host.shutdown().await;
    let growth = figures[1] / figures[0];
    println!("ten times the text took {growth:.1} times as long");
    if growth > 40.0 {
        eprintln!("quadratic: ten times the text took {growth:.1} times as long (pristine Boa?)");
        std::process::exit(1);
    }
}
