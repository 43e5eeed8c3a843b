//! The `earshot` command: manage plugins and run tools through the gate.

mod cli;

fn main() -> std::process::ExitCode {
    cli::run()
}
