//! The test-only guest components (`fixtures/components`: hello-tool, hostile-tool, future-tool),
//! built once per test run by this dev-only path, not by the library's build script: the library
//! ships only its own two guests. They are built by the same command as those (host/core/guest_build.rs)
//! into the same `<target>/guests`.

#[path = "../../../host/core/guest_build.rs"]
mod guest_build;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use guest_build::{built_dir, guest_build_command};

/// The fixture packages, built together in one cargo run.
const PACKAGES: &[&str] = &["hello-tool", "hostile-tool", "future-tool"];

/// The guest SDK's example component (fixtures/components/hello-tool).
pub fn hello_wasm() -> &'static str {
    built("hello_tool")
}

/// The hostile fixture component (fixtures/components/hostile-tool).
pub fn hostile_wasm() -> &'static str {
    built("hostile_tool")
}

/// A guest built against a newer contract than the host's (fixtures/components/future-tool).
pub fn future_wasm() -> &'static str {
    built("future_tool")
}

fn built(stem: &str) -> &'static str {
    let path = output_dir().join(format!("{stem}.wasm"));
    assert!(path.is_file(), "{} was not built", path.display());
    Box::leak(path.to_string_lossy().into_owned().into_boxed_str())
}

/// Builds every fixture package (once per process) and returns where the `.wasm` files are.
pub fn output_dir() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let host = Path::new(env!("CARGO_MANIFEST_DIR"));
        let workspace = host.parent().expect("host/ sits in the workspace root");
        // CARGO_TARGET_TMPDIR is <target>/tmp; the guests share <target>/guests with build.rs.
        let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .expect("the tmp dir sits in the target dir")
            .join("guests");
        let mut command = guest_build_command(workspace, &target_dir, PACKAGES);
        command.arg("--locked");
        let status = command
            .status()
            .expect("cargo runs to build the fixture components");
        assert!(
            status.success(),
            "building the fixture components for wasm32-wasip2 failed; its errors are above"
        );
        built_dir(&target_dir)
    })
}
