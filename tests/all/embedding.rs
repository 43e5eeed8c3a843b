//! The host as an async library: the embed example's agent loop on both tokio runtime flavours,
//! a `Host` dropped inside async code, concurrent calls, and failures an agent matches by type.

#[path = "../../host/examples/embed.rs"]
#[allow(dead_code)]
mod embed;

use std::path::Path;
use std::time::{Duration, Instant};

use earshot_host::sandbox::SandboxError;
use earshot_host::trust::trust_source;
use earshot_host::{
    CallError, FailureCause, Host, HostBuilder, NonInteractivePrompter, ProjectPaths, Settings,
    SourceKind,
};
use serde_json::{Value, json};

use crate::common::{Sandbox, fixture_server, hello_wasm, hostile_wasm, mcp_parts, shared_cache};

fn runtime(multi_thread: bool) -> tokio::runtime::Runtime {
    let mut builder = if multi_thread {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    builder.enable_all().build().expect("a runtime starts")
}

fn settings(sandbox: &Sandbox) -> Settings {
    Settings::load(
        Some(&sandbox.config()),
        Some(ProjectPaths::new(sandbox.project())),
    )
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The demo project (fixtures/demo, its component built), its three sources trusted through the
/// library as an embedder would.
fn demo_project() -> (Sandbox, String) {
    let sandbox = Sandbox::new();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo");
    copy_dir(&demo.join(".earshot"), &sandbox.project().join(".earshot"));
    std::fs::copy(
        hello_wasm(),
        sandbox.project().join(".earshot/plugins/hello.wasm"),
    )
    .unwrap();
    let parts_bin = mcp_parts().join("node_modules/.bin").display().to_string();
    let bin = parts_bin.clone();
    let env = move |name: &str| (name == "MCP_PARTS_BIN").then(|| bin.clone());
    let settings = settings(&sandbox);
    for (kind, name) in [
        (SourceKind::Plugin, "hello"),
        (SourceKind::Extension, "wordcount"),
        (SourceKind::Mcp, "everything"),
    ] {
        trust_source(&settings, kind, name, &env).expect("trusted");
    }
    (sandbox, parts_bin)
}

fn run_the_embed_example(multi_thread: bool) {
    let (sandbox, parts_bin) = demo_project();
    let lines = runtime(multi_thread).block_on(embed::agent_loop(
        &sandbox.project(),
        &sandbox.config(),
        Some(parts_bin),
    ));
    let text = lines.join("\n");
    for expected in [
        "tool hello__greet: ",
        "tool wordcount__count: ",
        "tool everything__echo: ",
        "hello__greet -> Hello, Ada",
        "wordcount__count -> ",
        "everything__echo -> Echo: hello from an agent",
        "everything__get-sum -> The sum of 2 and 40 is 42.",
        "everything__get-sum -> The sum of 1 and 1 is 2.",
        "everything__get-env denied: Mcp(everything__get-env) was declined by the user",
        // get-sum was answered "always": the second call was not asked.
        "asked: Mcp(everything__echo), Mcp(everything__get-sum), Mcp(everything__get-env)",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    let local =
        std::fs::read_to_string(sandbox.project().join(".earshot/settings.local.json")).unwrap();
    assert!(
        local.contains("Mcp(everything__get-sum)") && !local.contains("Mcp(everything__echo)"),
        "only the 'always' answer is recorded: {local}"
    );
}

#[test]
fn the_embed_example_runs_on_a_current_thread_runtime() {
    run_the_embed_example(false);
}

#[test]
fn the_embed_example_runs_on_a_multi_thread_runtime() {
    run_the_embed_example(true);
}

/// A host with one fixture MCP server, built and dropped inside `block_on` without `shutdown`.
fn drop_inside_async_code(multi_thread: bool) {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {"clock": fixture_server("clock.py", &[])}}));
    let settings = settings(&sandbox);
    let pid = runtime(multi_thread).block_on(async move {
        let host = HostBuilder::new(settings)
            .cache(shared_cache())
            .build()
            .await
            .expect("host loads");
        let pid = host.mcp().and_then(|servers| servers.pid_of("clock"));
        let pid = pid.expect("the server is running");
        assert!(crate::common::alive(pid));
        drop(host); // neither blocks nor panics inside the runtime
        tokio::time::sleep(Duration::from_millis(10)).await;
        pid
    });
    assert!(
        crate::common::wait_dead(pid),
        "server {pid} outlived a Host dropped without shutdown"
    );
}

#[test]
fn a_host_dropped_inside_a_current_thread_runtime_ends_its_servers_without_panicking() {
    drop_inside_async_code(false);
}

#[test]
fn a_host_dropped_inside_a_multi_thread_runtime_ends_its_servers_without_panicking() {
    drop_inside_async_code(true);
}

#[test]
fn shutdown_ends_every_server_before_it_returns() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {"clock": fixture_server("clock.py", &[])}}));
    let settings = settings(&sandbox);
    runtime(false).block_on(async move {
        let host = HostBuilder::new(settings)
            .cache(shared_cache())
            .build()
            .await
            .expect("host loads");
        let pid = host.mcp().and_then(|s| s.pid_of("clock")).expect("running");
        host.shutdown().await;
        assert!(!crate::common::alive(pid), "server {pid} is still running");
        let after = host.call("clock__echo", r#"{"text":"x"}"#, &NonInteractivePrompter);
        assert!(matches!(
            after.await,
            Err(CallError::Failed { .. }) | Err(CallError::Denied(_))
        ));
    });
}

/// An extension whose `nap` tool sleeps on a timer and reports its own clock.
fn napping_extension(sandbox: &Sandbox, name: &str) {
    let dir = sandbox.config().join("extensions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("{name}.ts")),
        "export default { tools: [{ name: 'nap', description: 'Sleeps, then says when.',\n\
         inputSchema: { type: 'object', properties: { ms: { type: 'number' } } },\n\
         async execute(input: { ms: number }) {\n\
           const start = Date.now();\n\
           await new Promise((done) => setTimeout(done, input.ms));\n\
           return JSON.stringify({ start, end: Date.now() });\n\
         } }] };\n",
    )
    .unwrap();
}

/// (start, end) in Unix milliseconds, from a tool that reports its own clock.
fn span(output: &str) -> (f64, f64) {
    let value: Value = serde_json::from_str(output).expect("a clock report");
    (
        value["start"].as_f64().unwrap(),
        value["end"].as_f64().unwrap(),
    )
}

fn concurrent_host(sandbox: &Sandbox) -> Host {
    napping_extension(sandbox, "first");
    napping_extension(sandbox, "second");
    sandbox.user_settings(json!({
        "mcpServers": {
            "a": fixture_server("clock.py", &[]),
            "b": fixture_server("clock.py", &[]),
            "m": {"command": "python3", "args": [crate::common::mcp_fixture("misbehaving.py")], "callTimeout": 2000},
        },
        "permissions": {"allow": ["Mcp(*)", "Extension(*)"]},
    }));
    crate::common::block_on(
        HostBuilder::new(settings(sandbox))
            .cache(shared_cache())
            .build(),
    )
    .expect("host loads")
}

#[test]
fn calls_to_two_extensions_overlap_while_mcp_calls_stay_serialised() {
    let sandbox = Sandbox::new();
    let host = concurrent_host(&sandbox);
    let prompter = NonInteractivePrompter;
    crate::common::block_on(async {
        let nap = r#"{"ms": 400}"#;
        let (first, second) = tokio::join!(
            host.call("first__nap", nap, &prompter),
            host.call("second__nap", nap, &prompter),
        );
        let (first, second) = (span(&first.unwrap().output), span(&second.unwrap().output));
        assert!(
            first.0 < second.1 && second.0 < first.1,
            "the extensions' own clocks do not overlap: {first:?} {second:?}"
        );

        let nap = r#"{"ms": 300}"#;
        let (a, b) = tokio::join!(
            host.call("a__nap", nap, &prompter),
            host.call("b__nap", nap, &prompter),
        );
        let (a, b) = (span(&a.unwrap().output), span(&b.unwrap().output));
        assert!(
            a.1 <= b.0 || b.1 <= a.0,
            "two servers' calls overlapped (MCP calls must be serialised): {a:?} {b:?}"
        );
    });
}

#[test]
fn a_hung_mcp_call_ends_at_its_timeout_without_holding_up_extension_calls() {
    let sandbox = Sandbox::new();
    let host = concurrent_host(&sandbox);
    let prompter = NonInteractivePrompter;
    crate::common::block_on(async {
        let started = Instant::now();
        let (hung, napped) = tokio::join!(host.call("m__hang", "{}", &prompter), async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let output = host.call("first__nap", r#"{"ms": 50}"#, &prompter).await;
            (output, started.elapsed())
        });
        let hung_at = started.elapsed();
        let (napped, napped_at) = napped;
        napped.expect("the extension answers while the MCP call hangs");
        assert!(
            napped_at < Duration::from_millis(1500),
            "the extension call waited on the hung MCP call ({napped_at:?})"
        );
        let error = hung.expect_err("the hung call times out");
        assert!(
            matches!(
                error.cause(),
                Some(FailureCause::TimedOut { after }) if *after == Duration::from_secs(2)
            ),
            "{error:?}"
        );
        assert!(hung_at >= Duration::from_secs(2), "{hung_at:?}");
        let echoed = host
            .call("m__echo", r#"{"text":"still here"}"#, &prompter)
            .await
            .expect("the next MCP call works");
        assert_eq!(echoed.output, "still here");
    });
}

#[test]
fn runtime_failures_are_matched_by_their_typed_cause() {
    let sandbox = Sandbox::new();
    let plugins = sandbox.config().join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(hostile_wasm(), plugins.join("hostile.wasm")).unwrap();
    let extensions = sandbox.config().join("extensions");
    std::fs::create_dir_all(&extensions).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/extensions/hostile_calls.ts"),
        extensions.join("hostile_calls.ts"),
    )
    .unwrap();
    sandbox.user_settings(json!({
        "mcpServers": {
            "m": {"command": "python3", "args": [crate::common::mcp_fixture("misbehaving.py")], "callTimeout": 1000},
        },
        "permissions": {"allow": ["Mcp(*)", "Extension(*)", "Plugin(*)"]},
    }));
    let host = crate::common::block_on(
        HostBuilder::new(settings(&sandbox))
            .cache(shared_cache())
            .component_limits(crate::common::TIGHT)
            .build(),
    )
    .expect("host loads");
    let call = |name: &str| {
        crate::common::block_on(host.call(name, "{}", &NonInteractivePrompter))
            .expect_err("it fails")
    };

    let timeout = call("m__hang");
    assert!(
        matches!(timeout.cause(), Some(FailureCause::TimedOut { .. })),
        "{timeout:?}"
    );
    let dead = call("m__die");
    assert!(
        matches!(dead.cause(), Some(FailureCause::ServerGone { server, restartable: true }) if server == "m"),
        "{dead:?}"
    );
    assert!(dead.to_string().contains("panic: lost my mind"), "{dead}");

    let trap = call("hostile__panic");
    assert!(
        matches!(
            trap.cause(),
            Some(FailureCause::Sandbox(SandboxError::Panic { message, .. })) if message.contains("panicked on purpose")
        ),
        "{trap:?}"
    );
    let spin = call("hostile__spin");
    assert!(
        matches!(
            spin.cause(),
            Some(FailureCause::Sandbox(SandboxError::Timeout { .. }))
        ),
        "{spin:?}"
    );

    let threw = call("hostile_calls__throws");
    match threw.cause() {
        Some(FailureCause::ExtensionThrew { error, location }) => {
            assert_eq!(error, "Error: the ticket service is down");
            assert!(
                location
                    .as_deref()
                    .is_some_and(|at| at.ends_with("hostile_calls.ts:27:15")),
                "{location:?}"
            );
        }
        other => panic!("not a throw: {other:?} ({threw})"),
    }
    // The line users see is as good as before.
    assert!(
        threw.to_string().starts_with(
            "hostile_calls__throws failed: execute threw: Error: the ticket service is down (at "
        ),
        "{threw}"
    );
}

/// An embedder's prompter that would allow anything, always, and counts how often it was asked.
struct AllowsEverything(std::sync::atomic::AtomicUsize);

impl earshot_host::Prompter for AllowsEverything {
    fn ask<'a>(
        &'a self,
        _prompt: &'a earshot_host::PermissionPrompt,
    ) -> earshot_host::BoxFuture<'a, earshot_host::PromptAnswer> {
        Box::pin(async move {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::task::yield_now().await;
            earshot_host::PromptAnswer::AllowAlwaysForProject
        })
    }
}

#[test]
fn an_async_prompter_that_allows_everything_cannot_turn_a_deny_into_an_allow() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({
        "mcpServers": {"clock": fixture_server("clock.py", &[])},
        "permissions": {"deny": ["Mcp(clock__echo)"]},
    }));
    let prompter = AllowsEverything(std::sync::atomic::AtomicUsize::new(0));
    let host = crate::common::block_on(
        HostBuilder::new(settings(&sandbox))
            .cache(shared_cache())
            .build(),
    )
    .expect("host loads");
    let denied = crate::common::block_on(host.call("clock__echo", r#"{"text":"x"}"#, &prompter));
    assert!(
        matches!(&denied, Err(CallError::Denied(reason)) if reason.contains("Mcp(clock__echo)")),
        "{denied:?}"
    );
    assert_eq!(
        prompter.0.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "never asked"
    );
    assert!(
        !sandbox
            .project()
            .join(".earshot/settings.local.json")
            .exists(),
        "nothing was written"
    );
}

#[test]
fn an_embedder_that_stops_waiting_for_an_mcp_call_cancels_it_on_the_server() {
    let sandbox = Sandbox::new();
    let notes = sandbox.dir.path().join("clock-notes.jsonl");
    let notes_arg = notes.to_str().expect("a UTF-8 temp path");
    sandbox.user_settings(json!({
        "mcpServers": {"clock": fixture_server("clock.py", &["--notes", notes_arg])},
        "permissions": {"allow": ["Mcp(*)"]},
    }));
    let settings = settings(&sandbox);
    runtime(true).block_on(async move {
        let host = HostBuilder::new(settings)
            .cache(shared_cache())
            .build()
            .await
            .expect("host loads");
        // The embedder gives up after 200 ms on a call that takes 1.5 s: the future is dropped.
        let abandoned = tokio::time::timeout(
            Duration::from_millis(200),
            host.call("clock__nap", r#"{"ms": 1500}"#, &NonInteractivePrompter),
        )
        .await;
        assert!(abandoned.is_err(), "the call was still running at 200 ms");

        // The server hears which request was abandoned (it reads the notification once its
        // single-threaded nap is over).
        let deadline = Instant::now() + Duration::from_secs(15);
        let (napped, cancelled) = loop {
            let lines: Vec<Value> = std::fs::read_to_string(&notes)
                .unwrap_or_default()
                .lines()
                .filter_map(|line| serde_json::from_str(line).ok())
                .collect();
            let napped = lines.iter().find_map(|l| l.get("nap").cloned());
            let cancelled = lines
                .iter()
                .find(|l| l["method"] == "notifications/cancelled")
                .cloned();
            if let (Some(napped), Some(cancelled)) = (&napped, &cancelled) {
                break (napped.clone(), cancelled.clone());
            }
            assert!(
                Instant::now() < deadline,
                "no notifications/cancelled reached the server; it noted: {lines:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(
            cancelled["params"]["requestId"], napped,
            "the cancellation names the abandoned request"
        );
        assert!(
            cancelled["params"]["reason"]
                .as_str()
                .is_some_and(|reason| reason.contains("stopped waiting")),
            "{cancelled}"
        );

        // Nothing else is affected: the same server answers the next call.
        let echoed = host
            .call(
                "clock__echo",
                r#"{"text":"still here"}"#,
                &NonInteractivePrompter,
            )
            .await
            .expect("the server still answers");
        assert_eq!(echoed.output, "still here");
        host.shutdown().await;
    });
}
