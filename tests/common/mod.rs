//! Shared by the integration tests: temp cache dirs and the built guest components.
#![allow(dead_code)]

use std::time::Duration;

use earshot_host::sandbox::{ComponentCache, SandboxEngine, SandboxLimits, ToolComponent};

/// The hostile fixture component (fixtures/components/hostile-tool), built by host/build.rs.
pub const HOSTILE_WASM: &str = env!("EARSHOT_GUEST_HOSTILE_TOOL_WASM");
/// The guest SDK's example component (fixtures/components/hello-tool).
pub const HELLO_WASM: &str = env!("EARSHOT_GUEST_HELLO_TOOL_WASM");
/// The host's validator component, for wrong-world tests.
pub const VALIDATOR_WASM: &str = env!("EARSHOT_GUEST_EARSHOT_SCHEMA_VALIDATOR_WASM");

/// Tight limits so hostile tests finish quickly: 64 MiB, 300 ms.
pub const TIGHT: SandboxLimits = SandboxLimits {
    memory_bytes: 64 << 20,
    cpu_deadline: Duration::from_millis(300),
    stderr_bytes: 16 << 10,
};

/// A component cache in a fresh temp dir (kept alive by the returned guard).
pub fn temp_cache() -> (tempfile::TempDir, ComponentCache) {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = ComponentCache::in_dir(dir.path().join("components"));
    (dir, cache)
}

/// One compiled-component cache per test process, in a temp dir removed at exit, so that only the
/// first sandbox in a test binary pays for compilation.
pub fn shared_cache() -> ComponentCache {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| tempfile::tempdir().expect("temp dir"));
    ComponentCache::in_dir(dir.path().join("components"))
}

/// Loads a built component file as a tool component.
pub fn load_tool(name: &str, path: &str, limits: SandboxLimits) -> ToolComponent {
    let bytes = std::fs::read(path).expect("built component");
    ToolComponent::load(&SandboxEngine::shared(), &shared_cache(), name, &bytes, limits).expect("component loads")
}
