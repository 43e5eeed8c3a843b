//! `earshot mcp serve`: the `tools/call` round trip of a trivial component tool (`hello__greet`)
//! through earshot's MCP server (`EarshotServer` over a `Host`: gate, validator sandbox, the
//! component) against the same component behind a raw rmcp server whose
//! handler calls it directly, in the same run. Both servers sit behind the same in-memory pipe and
//! the same rmcp client, so the difference is what earshot adds. 6 interleaved runs of 2,000
//! calls each side; p50 per run and overall.
//!
//! `cargo bench -p earshot-host --bench serve`

#[path = "../tests/all/common/fixtures.rs"]
#[allow(dead_code)]
mod fixtures;

use std::sync::Arc;
use std::time::{Duration, Instant};

use earshot_host::sandbox::{ComponentCache, SandboxEngine, SandboxLimits, ToolComponent};
use earshot_host::serve::EarshotServer;
use earshot_host::trust::CacheKey;
use earshot_host::{HostBuilder, ProjectPaths, Settings};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;

/// Interleaved runs of each side.
const RUNS: usize = 6;
/// Timed calls per run and side.
const CALLS: usize = 2_000;
/// Untimed calls of each side first.
const WARM_UP: usize = 500;

/// The baseline: the same component behind a bare rmcp handler (no gate, no validation).
#[derive(Clone)]
struct RawComponentServer(Arc<ToolComponent>);

impl ServerHandler for RawComponentServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object"}).as_object().cloned().unwrap();
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "hello__greet",
            "Greets someone by name.",
            schema,
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let input = serde_json::Value::Object(request.arguments.unwrap_or_default()).to_string();
        let output = self
            .0
            .call("greet", &input)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        Ok(CallToolResult::success(vec![ContentBlock::text(output.output)]).into())
    }
}

/// A client connected over an in-memory pipe to `server`.
async fn connect<S: ServerHandler>(server: S) -> RunningService<RoleClient, ()> {
    let (client_side, server_side) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_side).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_side).await.expect("initialize")
}

async fn greet(client: &RunningService<RoleClient, ()>, arguments: &JsonObject) {
    let result = client
        .call_tool(CallToolRequestParams::new("hello__greet").with_arguments(arguments.clone()))
        .await
        .expect("greet");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert!(format!("{result:?}").contains("Hello, Ada!"));
}

async fn time(
    client: &RunningService<RoleClient, ()>,
    arguments: &JsonObject,
    count: usize,
) -> Vec<Duration> {
    let mut samples = Vec::with_capacity(count);
    for _ in 0..count {
        let one = Instant::now();
        greet(client, arguments).await;
        samples.push(one.elapsed());
    }
    samples
}

fn p50(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The allocator the `earshot` binary uses (host/src/main.rs), so that what is timed here is what
/// users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("run with `cargo bench` to measure");
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("config");
    let project = dir.path().join("project");
    std::fs::create_dir_all(config.join("plugins")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::copy(fixtures::hello_wasm(), config.join("plugins/hello.wasm")).unwrap();
    let cache = ComponentCache::in_dir(dir.path().join("cache"), CacheKey::ephemeral());
    let settings = Settings::load(
        Some(&config),
        Some(ProjectPaths::new(project.canonicalize().unwrap())),
    );
    let bytes = std::fs::read(fixtures::hello_wasm()).unwrap();
    let component = ToolComponent::load(
        &SandboxEngine::shared(),
        &cache,
        "hello",
        &bytes,
        SandboxLimits::TOOL_COMPONENT,
    )
    .expect("component");
    let arguments = json!({"name": "Ada"}).as_object().cloned().unwrap();

    runtime.block_on(async {
        let host = HostBuilder::new(settings)
            .cache(cache.clone())
            .build()
            .await
            .expect("host");
        assert!(host.registry().problems().is_empty(), "{:?}", host.registry().problems());
        let earshot = connect(EarshotServer::new(Arc::new(host))).await;
        let raw = connect(RawComponentServer(Arc::new(component))).await;
        time(&earshot, &arguments, WARM_UP).await;
        time(&raw, &arguments, WARM_UP).await;
        let (mut all_earshot, mut all_raw) = (Vec::new(), Vec::new());
        let mut ratios = Vec::new();
        for run in 0..RUNS {
            let (mut earshot_run, mut raw_run) = if run % 2 == 0 {
                let e = time(&earshot, &arguments, CALLS).await;
                (e, time(&raw, &arguments, CALLS).await)
            } else {
                let r = time(&raw, &arguments, CALLS).await;
                (time(&earshot, &arguments, CALLS).await, r)
            };
            let ratio = p50(&mut earshot_run).as_secs_f64() / p50(&mut raw_run).as_secs_f64();
            println!(
                "run {}: p50 earshot {:.0} us, raw {:.0} us, {ratio:.2}x",
                run + 1,
                p50(&mut earshot_run).as_secs_f64() * 1e6,
                p50(&mut raw_run).as_secs_f64() * 1e6
            );
            ratios.push(ratio);
            all_earshot.extend(earshot_run);
            all_raw.extend(raw_run);
        }
        let (earshot_p50, raw_p50) = (p50(&mut all_earshot), p50(&mut all_raw));
        println!();
        println!(
            "tools/call hello__greet through earshot's MCP server: p50 {:.0} us; raw rmcp server calling the component: p50 {:.0} us; {:.2}x (goal <= 1.3x); runs within goal: {}/{RUNS}",
            earshot_p50.as_secs_f64() * 1e6,
            raw_p50.as_secs_f64() * 1e6,
            earshot_p50.as_secs_f64() / raw_p50.as_secs_f64(),
            ratios.iter().filter(|ratio| **ratio <= 1.3).count()
        );
    });
}
