//! The smallest embedder: build a `Host` on a project, print the tools a model would be shown and
//! what did not load, then shut down. It needs no feature, so it is also what the binary-size
//! figures in docs/benchmarks.md measure for an embedder that leaves parts out (for example
//! `--no-default-features --features mcp`: components and MCP servers only).
//!
//! `cargo run -p earshot-host --example list_tools -- PROJECT CONFIG_DIR`

use std::path::Path;

use earshot_host::{HostBuilder, ProjectPaths, Settings};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let [project, config] = arguments.as_slice() else {
        eprintln!("usage: list_tools PROJECT CONFIG_DIR");
        return std::process::ExitCode::from(2);
    };
    let settings = Settings::load(
        Some(Path::new(config)),
        Some(ProjectPaths::new(Path::new(project).to_path_buf())),
    );
    let host = match HostBuilder::new(settings).build().await {
        Ok(host) => host,
        Err(error) => {
            eprintln!("error: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    for tool in host.model_tools().await {
        println!("{}", tool.name);
    }
    for problem in host.registry().problems() {
        eprintln!("warning: {problem}");
    }
    host.shutdown().await;
    std::process::ExitCode::SUCCESS
}
