//! The per-instance state of a sandboxed component: WASI with every capability off, captured
//! stderr, and the memory cap.

use wasmtime::Store;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::engine::SandboxEngine;
use super::limits::{MemoryCap, SandboxLimits};

/// What a sandboxed component's store holds.
///
/// The WASI context grants nothing: no preopened directories, no environment variables, no
/// arguments, closed stdin, stdout discarded, sockets and name lookup denied. Only the random
/// source and the clocks that WASI always provides remain. stderr is captured (bounded) so that
/// a guest's panic message can be reported.
pub struct GuestState {
    wasi: WasiCtx,
    table: ResourceTable,
    /// The store's memory limiter (the sandbox's cap).
    pub memory: MemoryCap,
    stderr: MemoryOutputPipe,
    /// The component's name, for log messages from the guest.
    pub component: String,
}

impl GuestState {
    fn new(component: &str, limits: &SandboxLimits) -> GuestState {
        let stderr = MemoryOutputPipe::new(limits.stderr_bytes);
        let wasi = WasiCtx::builder()
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .build();
        GuestState {
            wasi,
            table: ResourceTable::new(),
            memory: MemoryCap::new(limits.memory_bytes),
            stderr,
            component: component.to_string(),
        }
    }

    /// Everything the guest has written to stderr so far (bounded by `stderr_bytes`).
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.contents()).into_owned()
    }
}

impl WasiView for GuestState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// A fresh store for `component` under `limits`.
pub fn new_store(
    engine: &SandboxEngine,
    component: &str,
    limits: &SandboxLimits,
) -> Store<GuestState> {
    let mut store = Store::new(engine.engine(), GuestState::new(component, limits));
    store.limiter(|state| &mut state.memory);
    store.set_epoch_deadline(SandboxEngine::ticks_for(limits.cpu_deadline));
    store
}
