//! The one wasmtime configuration of every sandbox. `build.rs` includes this file too, so the
//! components it precompiles at build time are compatible with the engine that loads them.

/// The configuration: the component model, epoch interruption for CPU deadlines, optimised
/// Cranelift output, compilation on every core.
pub fn sandbox_config() -> wasmtime::Config {
    let mut config = wasmtime::Config::new();
    config
        .wasm_component_model(true)
        .epoch_interruption(true)
        .cranelift_opt_level(wasmtime::OptLevel::Speed)
        .parallel_compilation(true);
    config
}
