//! The `earshot` command: manage plugins and run tools through the gate.

/// One multi-thread tokio runtime for the whole command: the CLI awaits the same async API an
/// embedder uses.
#[tokio::main]
async fn main() -> std::process::ExitCode {
    let code = earshot_host::cli::run().await;
    if earshot_host::mcp::ending_on_signal() {
        // A signal is ending the servers; its handler exits with 128 + the signal's number.
        std::future::pending::<()>().await;
    }
    code
}
