//! The one wasmtime `Engine` every sandbox shares, and the ticker that enforces CPU deadlines.

use std::sync::OnceLock;
use std::time::Duration;

use wasmtime::Engine;

/// How often the epoch advances. A call's deadline is rounded up to whole ticks.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// The shared engine: compiled code, the epoch clock, and the configuration every sandbox uses.
///
/// Cloning is cheap (the engine is reference-counted). A background thread advances the epoch
/// every [`EPOCH_TICK`] for as long as the engine lives.
#[derive(Clone)]
pub struct SandboxEngine {
    engine: Engine,
}

impl SandboxEngine {
    /// The process-wide engine, created on first use.
    pub fn shared() -> SandboxEngine {
        static SHARED: OnceLock<SandboxEngine> = OnceLock::new();
        SHARED.get_or_init(SandboxEngine::new).clone()
    }

    /// A new engine with its own epoch ticker. Embedders normally want [`SandboxEngine::shared`].
    pub fn new() -> SandboxEngine {
        let engine = Engine::new(&super::engine_config::sandbox_config())
            .expect("the sandbox engine configuration is valid");
        start_epoch_ticker(&engine);
        SandboxEngine { engine }
    }

    /// The wasmtime engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Epoch ticks that cover `deadline` (at least one).
    pub fn ticks_for(deadline: Duration) -> u64 {
        let tick = EPOCH_TICK.as_nanos();
        (deadline.as_nanos().div_ceil(tick) as u64).max(1)
    }
}

impl Default for SandboxEngine {
    fn default() -> Self {
        SandboxEngine::new()
    }
}

/// Advances the engine's epoch every tick until the engine is dropped.
fn start_epoch_ticker(engine: &Engine) {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("earshot-epoch".into())
        .spawn(move || {
            loop {
                std::thread::sleep(EPOCH_TICK);
                match weak.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => break,
                }
            }
        })
        .expect("could not start the sandbox epoch thread");
}
