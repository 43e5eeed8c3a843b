//! Gate decisions with 1,000 rules in force: p50 and p99 per decision.
//!
//! `cargo bench -p earshot-host --bench gate`. The baseline is a decision with no rules at all
//! (the default ask), measured in the same run.

use std::hint::black_box;
use std::time::{Duration, Instant};

use earshot_host::gate::{Gate, RuleSet, ToolRequest};
use earshot_host::names::{SourceKind, ToolId};
use earshot_host::settings::{ProjectPaths, Settings};

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    (
        samples[samples.len() / 2],
        samples[samples.len() * 99 / 100],
    )
}

fn measure(gate: &Gate, tools: &[ToolId]) -> (Duration, Duration) {
    let mut samples = Vec::with_capacity(200_000);
    for round in 0..200_000usize {
        let tool = &tools[round % tools.len()];
        let start = Instant::now();
        black_box(gate.decide(black_box(&ToolRequest {
            tool,
            read_only: false,
            title: None,
            detail: None,
        })));
        samples.push(start.elapsed());
    }
    percentiles(samples)
}

fn gate_with(rules: serde_json::Value) -> (tempfile::TempDir, Gate) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("project");
    std::fs::create_dir_all(root.join(".earshot")).expect("project");
    std::fs::write(root.join(".earshot/settings.local.json"), rules.to_string()).expect("settings");
    let settings = Settings::load(None, Some(ProjectPaths::new(root)));
    (dir, Gate::new(RuleSet::from_settings(&settings)))
}

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("run with `cargo bench` to measure");
        return;
    }
    // 1,000 rules: a mix of exact names and globs over 100 servers, in all three effects.
    let mut allow = Vec::new();
    let mut deny = Vec::new();
    let mut ask = Vec::new();
    for server in 0..100 {
        for tool in 0..4 {
            allow.push(format!("Mcp(server{server}__read_{tool})"));
        }
        for tool in 0..3 {
            deny.push(format!("Mcp(server{server}__delete_{tool}*)"));
        }
        ask.push(format!("Plugin(plugin{server}__*)"));
        ask.push(format!("Extension(ext{server}__write_*)"));
        allow.push(format!("Extension(ext{server}__read_*)"));
    }
    let total = allow.len() + deny.len() + ask.len();
    assert_eq!(total, 1_000);
    let (_dir, loaded) =
        gate_with(serde_json::json!({"permissions": {"allow": allow, "deny": deny, "ask": ask}}));
    let (_empty_dir, empty) = gate_with(serde_json::json!({}));

    let tools: Vec<ToolId> = (0..100)
        .flat_map(|server| {
            [
                ToolId::new(SourceKind::Mcp, &format!("server{server}"), "read_1").unwrap(),
                ToolId::new(SourceKind::Mcp, &format!("server{server}"), "delete_2_all").unwrap(),
                ToolId::new(SourceKind::Mcp, &format!("server{server}"), "unmatched").unwrap(),
                ToolId::new(SourceKind::Extension, &format!("ext{server}"), "write_page").unwrap(),
            ]
        })
        .collect();
    let (p50, p99) = measure(&loaded, &tools);
    let (base50, base99) = measure(&empty, &tools);
    println!("| gate decision | p50 | p99 |");
    println!("|---|---|---|");
    println!(
        "| 1,000 rules in force | {:.2} µs | {:.2} µs |",
        p50.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6
    );
    println!(
        "| no rules (baseline) | {:.2} µs | {:.2} µs |",
        base50.as_secs_f64() * 1e6,
        base99.as_secs_f64() * 1e6
    );
    println!(
        "| ratio | {:.1}× | {:.1}× |",
        p50.as_secs_f64() / base50.as_secs_f64(),
        p99.as_secs_f64() / base99.as_secs_f64()
    );
}
