//! Builds the library's own wasm guests (schema validator, MCP output parser) for `wasm32-wasip2`
//! during the normal `cargo build`, and precompiles them for this machine.
//!
//! They are embedded with `include_bytes!`; their paths also reach benchmarks through an
//! `EARSHOT_GUEST_<STEM>_WASM` environment variable. Test fixtures (fixtures/components) are not
//! built here: the tests build them (tests/all/common/fixtures.rs), so the library does not depend
//! on the workspace's fixture folders. Each guest is built in its own nested cargo run
//! (so that guest-sdk features are not unified across worlds) into `<target>/guests`, with the
//! outer build's flags removed so that host-only settings never leak into a wasm build.

#[path = "src/sandbox/engine_config.rs"]
mod engine_config;
#[path = "guest_build.rs"]
mod guest_build;

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use guest_build::{TARGET, built_dir, guest_build_command};

/// (package, wasm file stem): the guests the host embeds.
const GUESTS: &[(&str, &str)] = &[
    ("earshot-schema-validator", "earshot_schema_validator"),
    ("earshot-mcp-output", "earshot_mcp_output"),
];

fn main() {
    let manifest_dir =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir
        .ancestors()
        .nth(2)
        .expect("host/core/ sits two levels below the workspace root")
        .to_path_buf();
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));

    for watched in [
        "wit",
        "guest-sdk",
        "host/guests",
        "host/terminal-text",
        "host/core/guest_build.rs",
        "Cargo.lock",
        // The `guest` profile the guests are built with.
        "Cargo.toml",
    ] {
        println!(
            "cargo:rerun-if-changed={}",
            workspace.join(watched).display()
        );
    }

    emit_oxc_version(&workspace);
    require_wasm_target();

    // OUT_DIR is <target>/<profile>/build/<pkg>-<hash>/out; guests share <target>/guests so that
    // debug, release and clippy builds reuse one guest build.
    let guest_target_dir = out_dir
        .ancestors()
        .nth(4)
        .map(|target| target.join("guests"))
        .unwrap_or_else(|| out_dir.join("guests"));

    for (package, stem) in GUESTS {
        build_guest(&workspace, &guest_target_dir, package);
        let built = built_dir(&guest_target_dir).join(format!("{stem}.wasm"));
        let copied = out_dir.join(format!("{stem}.wasm"));
        std::fs::copy(&built, &copied).unwrap_or_else(|error| {
            panic!(
                "could not copy {} to {}: {error}",
                built.display(),
                copied.display()
            )
        });
        // Without the `precompiled-guests` feature the binary carries only the `.wasm` (about
        // 27 MB smaller), and the first session on a machine compiles it into the user's cache.
        if std::env::var_os("CARGO_FEATURE_PRECOMPILED_GUESTS").is_some() {
            precompile(&copied, &out_dir.join(format!("{stem}.cwasm")));
        }
        // The cache key, so the host need not hash megabytes of wasm on every start.
        let bytes = std::fs::read(&copied).expect("just copied");
        println!(
            "cargo:rustc-env=EARSHOT_GUEST_{}_SHA256={}",
            stem.to_uppercase(),
            sha256_hex(&bytes)
        );
        // Tests and benchmarks find the built guests through these.
        println!(
            "cargo:rustc-env=EARSHOT_GUEST_{}_WASM={}",
            stem.to_uppercase(),
            copied.display()
        );
    }
}

/// Compiles `wasm` to native code for this machine with the runtime's exact engine configuration.
/// The host loads it with `Component::deserialize`, which checks the wasmtime version and
/// configuration, and compiles from the `.wasm` instead if they do not match.
fn precompile(wasm: &Path, cwasm: &Path) {
    let engine = wasmtime::Engine::new(&engine_config::sandbox_config())
        .expect("the sandbox engine configuration is valid");
    let bytes = std::fs::read(wasm)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", wasm.display()));
    let compiled = engine
        .precompile_component(&bytes)
        .unwrap_or_else(|error| panic!("cannot precompile {}: {error:#}", wasm.display()));
    std::fs::write(cwasm, compiled)
        .unwrap_or_else(|error| panic!("cannot write {}: {error}", cwasm.display()));
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Fails the build with the exact command to run when the wasm32-wasip2 standard library is missing.
fn require_wasm_target() {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()));
    let installed = sysroot
        .as_deref()
        .map(|root| root.join("lib/rustlib").join(TARGET).is_dir())
        .unwrap_or(false);
    if !installed {
        panic!(
            "\n\nthe {TARGET} target is not installed, and earshot-host builds its sandboxed components for it.\n\
             run: rustup target add {TARGET}\n\n"
        );
    }
}

fn build_guest(workspace: &Path, target_dir: &Path, package: &str) {
    let mut command = guest_build_command(workspace, target_dir, &[package]);
    // The child's stdout must not reach cargo, which reads `cargo:` lines from a build script's stdout.
    command.stdout(std::process::Stdio::from(std::io::stderr()));
    let status = command.status().unwrap_or_else(|error| {
        panic!("could not run cargo to build the {package} component: {error}")
    });
    if !status.success() {
        panic!("building the {package} component for {TARGET} failed; its errors are above");
    }
}

/// `EARSHOT_OXC_VERSION`, from Cargo.lock: part of the stripped-module cache's fingerprint
/// (src/extensions/module_cache.rs), so an oxc upgrade never reads entries an older oxc wrote.
fn emit_oxc_version(workspace: &Path) {
    let lock = std::fs::read_to_string(workspace.join("Cargo.lock")).unwrap_or_default();
    let version = lock
        .split("[[package]]")
        .find(|package| package.contains("\nname = \"oxc\"\n"))
        .and_then(|package| {
            package
                .lines()
                .find_map(|line| line.strip_prefix("version = "))
                .map(|version| version.trim_matches('"').to_string())
        })
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=EARSHOT_OXC_VERSION={version}");
}
