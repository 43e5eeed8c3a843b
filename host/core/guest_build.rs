//! The nested cargo run that builds wasm guests: profile `guest`, target `wasm32-wasip2`, with the
//! outer build's flags removed so that host-only settings never leak into a wasm build. Shared by
//! host/build.rs (the library's own two guests) and the tests' fixture builder
//! (tests/all/common/fixtures.rs), so both build guests the same way.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The target every guest is built for.
pub const TARGET: &str = "wasm32-wasip2";

/// Variables from the outer build that must not reach the nested wasm build.
const SCRUBBED_ENV: &[&str] = &[
    "CARGO_ENCODED_RUSTFLAGS",
    "RUSTFLAGS",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_LLVM_COV",
    "CARGO_INCREMENTAL",
];

/// `cargo build --quiet --profile guest --target wasm32-wasip2 --package P...` of the workspace at
/// `workspace` into `target_dir`, with the outer build's flags and profile overrides removed.
pub fn guest_build_command(workspace: &Path, target_dir: &Path, packages: &[&str]) -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace)
        .args(["build", "--quiet", "--profile", "guest", "--target", TARGET])
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir);
    for package in packages {
        command.args(["--package", package]);
    }
    for name in SCRUBBED_ENV {
        command.env_remove(name);
    }
    for (name, _) in std::env::vars() {
        if name.starts_with("CARGO_PROFILE_") {
            command.env_remove(name);
        }
    }
    command
}

/// Where a guest build into `target_dir` leaves its `.wasm` files.
pub fn built_dir(target_dir: &Path) -> PathBuf {
    target_dir.join(TARGET).join("guest")
}
