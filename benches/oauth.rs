//! OAuth's cost on a call: `Host::call` of the same tool on the same loopback server
//! (`fixtures/mcp/oauth/auth_server.py`) through the OAuth-authorized client (the token read from
//! the token store on every request, refreshed when due) against a static
//! `Authorization: Bearer …` header with the same token (OAuth off), interleaved in the same run.
//! Also the time of one whole login (discovery, registration, PKCE, the test browser following
//! the redirect onto earshot's listener, the exchange, the write, the reconnect).
//!
//! `cargo bench -p earshot-host --bench oauth`

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use earshot_host::gate::NonInteractivePrompter;
use earshot_host::mcp::oauth::Browser;
use earshot_host::{Host, HostBuilder, Settings};
use serde_json::{Value, json};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Interleaved runs of each side.
const RUNS: usize = 5;
/// Timed calls per run and side.
const CALLS: usize = 300;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/mcp/oauth")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn host_with(config: &Path, server: Value) -> Host {
    std::fs::write(
        config.join("settings.json"),
        json!({
            "mcpServers": { "remote": server },
            "permissions": { "allow": ["Mcp(remote__*)"] },
        })
        .to_string(),
    )
    .unwrap();
    HostBuilder::new(Settings::load(Some(config), None))
        .build()
        .await
        .expect("the host loads")
}

async fn p50(host: &Host) -> Duration {
    let mut samples = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let started = Instant::now();
        let output = host
            .call("remote__whoami", "{}", &NonInteractivePrompter)
            .await
            .expect("the call works");
        samples.push(started.elapsed());
        assert!(!output.is_error);
    }
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let port = free_port();
    let mut server = std::process::Command::new("python3")
        .arg(fixtures().join("auth_server.py"))
        .arg(port.to_string())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("python3 runs the fixture server");
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        std::thread::sleep(Duration::from_millis(50));
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let oauth_config = tempfile::tempdir().unwrap();
        let header_config = tempfile::tempdir().unwrap();
        let oauth = host_with(oauth_config.path(), json!({ "type": "http", "url": url })).await;
        let browser = Browser::Program(fixtures().join("follow-browser").display().to_string());
        let started = Instant::now();
        oauth
            .mcp()
            .unwrap()
            .login("remote", &browser)
            .await
            .expect("the login works");
        let login = started.elapsed();
        let record = std::fs::read_dir(oauth_config.path().join("mcp-oauth"))
            .unwrap()
            .flatten()
            .map(|entry| entry.path())
            .find(|path| path.extension().is_some_and(|e| e == "json"))
            .unwrap();
        let record: Value = serde_json::from_slice(&std::fs::read(record).unwrap()).unwrap();
        let token = record["credentials"]["token_response"]["access_token"]
            .as_str()
            .unwrap()
            .to_string();
        let header = host_with(
            header_config.path(),
            json!({ "type": "http", "url": url,
                    "headers": { "Authorization": format!("Bearer {token}") } }),
        )
        .await;
        // Warm both.
        p50(&oauth).await;
        p50(&header).await;
        let mut ratios = Vec::new();
        let (mut oauth_all, mut header_all) = (Vec::new(), Vec::new());
        for run in 0..RUNS {
            let (first, second) = if run % 2 == 0 {
                let o = p50(&oauth).await;
                (o, p50(&header).await)
            } else {
                let h = p50(&header).await;
                (p50(&oauth).await, h)
            };
            oauth_all.push(first);
            header_all.push(second);
            ratios.push(first.as_secs_f64() / second.as_secs_f64());
        }
        oauth_all.sort();
        header_all.sort();
        ratios.sort_by(|a, b| a.total_cmp(b));
        println!("oauth login (discovery, registration, browser, exchange, reconnect): {:.1} ms", login.as_secs_f64() * 1e3);
        println!(
            "call p50 through OAuth: {:.0} µs; with a static header: {:.0} µs (median of {RUNS} runs of {CALLS})",
            oauth_all[RUNS / 2].as_secs_f64() * 1e6,
            header_all[RUNS / 2].as_secs_f64() * 1e6
        );
        println!(
            "ratio OAuth / static header per run: {} (median {:.2}×)",
            ratios.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>().join(", "),
            ratios[RUNS / 2]
        );
        oauth.shutdown().await;
        header.shutdown().await;
    });
    let _ = server.kill();
    let _ = server.wait();
}
