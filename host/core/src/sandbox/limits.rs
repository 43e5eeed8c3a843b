//! The bounds every sandboxed call runs under.

use std::time::Duration;

use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};

/// How much memory and CPU time a component may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxLimits {
    /// The most bytes any one linear memory may grow to. Growing past it traps
    /// (`trap_on_grow_failure`), so the guest cannot carry on after a failed allocation.
    pub memory_bytes: usize,
    /// The CPU time one call may take before it is interrupted (epoch-based, so the bound is
    /// this plus up to one engine tick).
    pub cpu_deadline: Duration,
    /// The most bytes of the guest's stderr kept (for panic messages).
    pub stderr_bytes: usize,
}

impl SandboxLimits {
    /// Limits for the schema validator: 128 MiB, 2 s per call.
    pub const VALIDATOR: SandboxLimits = SandboxLimits {
        memory_bytes: 128 << 20,
        cpu_deadline: Duration::from_secs(2),
        stderr_bytes: 64 << 10,
    };

    /// Limits for the MCP output parser: 512 MiB (a 16 MiB result parses into several times its
    /// size), 5 s per call.
    pub const OUTPUT_PARSER: SandboxLimits = SandboxLimits {
        memory_bytes: 512 << 20,
        cpu_deadline: Duration::from_secs(5),
        stderr_bytes: 64 << 10,
    };

    /// Limits for third-party tool components: 256 MiB, 10 s per call.
    pub const TOOL_COMPONENT: SandboxLimits = SandboxLimits {
        memory_bytes: 256 << 20,
        cpu_deadline: Duration::from_secs(10),
        stderr_bytes: 64 << 10,
    };
}

/// The most elements any one table may hold (a Rust component uses a few thousand).
const TABLE_ELEMENTS: usize = 1 << 20;
/// The most core instances, linear memories and tables in one store: a component built by rustc
/// or componentize-py has a handful of each; the caps stop a component from multiplying them.
const INSTANCES: usize = 64;
const MEMORIES: usize = 16;
const TABLES: usize = 64;

/// wasmtime's `StoreLimits` with `trap_on_grow_failure`, plus a record of the refused growth so
/// that a memory overrun is reported as such rather than as a generic trap.
pub struct MemoryCap {
    limits: StoreLimits,
    cap: usize,
    refused: Option<usize>,
}

impl MemoryCap {
    pub fn new(cap: usize) -> Self {
        MemoryCap {
            limits: StoreLimitsBuilder::new()
                .memory_size(cap)
                .table_elements(TABLE_ELEMENTS)
                .instances(INSTANCES)
                .memories(MEMORIES)
                .tables(TABLES)
                .trap_on_grow_failure(true)
                .build(),
            cap,
            refused: None,
        }
    }

    /// The size of the growth that was refused since the last call, if any.
    pub fn take_refused(&mut self) -> Option<usize> {
        self.refused.take()
    }

    pub fn cap(&self) -> usize {
        self.cap
    }
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let answer = self.limits.memory_growing(current, desired, maximum);
        if !matches!(answer, Ok(true)) {
            self.refused = Some(desired);
        }
        answer
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.memory_grow_failed(error)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.table_grow_failed(error)
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
    }
}
