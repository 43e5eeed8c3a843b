//! The `earshot` command: manage plugins and run tools through the gate.

/// mimalloc rather than glibc's allocator: Boa allocates heavily while every extension loads on a
/// thread of its own, and glibc's per-thread arenas made loading 20 extensions about 25% slower
/// (benches/extensions.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One multi-thread tokio runtime for the whole command: the CLI awaits the same async API an
/// embedder uses. When the command is done the runtime is shut down without waiting for a
/// terminal read left open (a form or a prompt given up): its tasks end (and with them every
/// server's process group), and a thread blocked on stdin does not hold the exit.
fn main() -> std::process::ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: could not start the async runtime: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(async {
        let code = earshot_cli::run().await;
        #[cfg(feature = "mcp")]
        if earshot_host::mcp::ending_on_signal() {
            // A signal is ending the servers; its handler exits with 128 + the signal's number.
            std::future::pending::<()>().await;
        }
        code
    });
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    code
}
