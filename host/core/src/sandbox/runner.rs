//! Running one component under its limits: instantiate lazily, set the deadline before every
//! call, turn failures into typed errors, and replace the store after any of them.

use wasmtime::component::{Component, InstancePre, Linker};
use wasmtime::{Store, Trap};

use super::cache::first_line;
use super::engine::SandboxEngine;
use super::limits::SandboxLimits;
use super::store::{GuestState, new_store};
use crate::sandbox_error::SandboxError;

/// A world's generated bindings, as the runner needs them.
pub trait World: Sized {
    /// The pre-instantiated form (exports already looked up).
    type Pre;
    /// The world's name, for errors: `earshot:plugin/tool-provider@0.1.0`.
    const NAME: &'static str;
    /// Adds the world's imports (beyond WASI) to the linker.
    fn add_imports(_linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
        Ok(())
    }
    /// Checks the component's exports against the world.
    fn pre(pre: InstancePre<GuestState>) -> wasmtime::Result<Self::Pre>;
    /// Instantiates into `store`.
    fn instantiate(pre: &Self::Pre, store: &mut Store<GuestState>) -> wasmtime::Result<Self>;
}

/// An instance that is ready for calls.
struct Live<W> {
    store: Store<GuestState>,
    bindings: W,
}

/// One component of world `W`, with the store it currently runs in.
pub struct Runner<W: World> {
    component: String,
    engine: SandboxEngine,
    limits: SandboxLimits,
    pre: W::Pre,
    live: Option<Live<W>>,
    generation: u64,
}

impl<W: World> Runner<W> {
    /// Links `compiled` against the no-capability WASI and `W`'s imports, and checks it fits `W`.
    pub fn new(
        engine: &SandboxEngine,
        component_name: &str,
        compiled: &Component,
        limits: SandboxLimits,
    ) -> Result<Self, SandboxError> {
        let wrong_shape = |error: wasmtime::Error| SandboxError::WrongShape {
            component: component_name.to_string(),
            expected: W::NAME.to_string(),
            reason: first_line(&error),
        };
        let mut linker = Linker::new(engine.engine());
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(wrong_shape)?;
        W::add_imports(&mut linker).map_err(wrong_shape)?;
        let pre = linker.instantiate_pre(compiled).map_err(wrong_shape)?;
        let pre = W::pre(pre).map_err(wrong_shape)?;
        Ok(Runner {
            component: component_name.to_string(),
            engine: engine.clone(),
            limits,
            pre,
            live: None,
            generation: 0,
        })
    }

    /// Counts the stores created so far; anything kept inside the guest (a compiled schema) is
    /// valid only for the generation it was made in.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Makes sure a store exists (creating a fresh one if the last call failed) and returns its
    /// generation.
    pub fn ensure_live(&mut self) -> Result<u64, SandboxError> {
        if self.live.is_none() {
            let mut store = new_store(&self.engine, &self.component, &self.limits);
            let bindings = match W::instantiate(&self.pre, &mut store) {
                Ok(bindings) => bindings,
                Err(error) => {
                    return Err(classify(
                        &self.component,
                        &self.limits,
                        error,
                        &mut store,
                        0,
                    ));
                }
            };
            self.generation += 1;
            self.live = Some(Live { store, bindings });
        }
        Ok(self.generation)
    }

    /// Runs `call` against the live instance with a fresh CPU deadline. Any failure is
    /// classified, and the store is dropped so that the next call starts clean.
    pub fn call<R>(
        &mut self,
        call: impl FnOnce(&W, &mut Store<GuestState>) -> wasmtime::Result<R>,
    ) -> Result<R, SandboxError> {
        self.ensure_live()?;
        let live = self.live.as_mut().expect("ensure_live created a store");
        live.store
            .set_epoch_deadline(SandboxEngine::ticks_for(self.limits.cpu_deadline));
        let stderr_before = live.store.data().stderr_text().len();
        match call(&live.bindings, &mut live.store) {
            Ok(value) => {
                // A guest that keeps writing to stderr would fill the bounded pipe, and its next
                // write would fail inside the guest: start it afresh before that can happen.
                if live.store.data().stderr_text().len() > self.limits.stderr_bytes / 2 {
                    self.live = None;
                }
                Ok(value)
            }
            Err(error) => {
                let failure = classify(
                    &self.component,
                    &self.limits,
                    error,
                    &mut live.store,
                    stderr_before,
                );
                self.live = None;
                Err(failure)
            }
        }
    }
}

/// Turns a failed call into the error that says what happened.
fn classify(
    component: &str,
    limits: &SandboxLimits,
    error: wasmtime::Error,
    store: &mut Store<GuestState>,
    stderr_before: usize,
) -> SandboxError {
    let component = component.to_string();
    let state = store.data_mut();
    if let Some(requested) = state.memory.take_refused() {
        return SandboxError::MemoryLimit {
            component,
            limit: state.memory.cap(),
            requested,
        };
    }
    if error.downcast_ref::<Trap>() == Some(&Trap::Interrupt) {
        return SandboxError::Timeout {
            component,
            deadline: limits.cpu_deadline,
        };
    }
    let stderr = state.stderr_text();
    let fresh_stderr = stderr.get(stderr_before..).unwrap_or(&stderr);
    if let Some(message) = panic_message(fresh_stderr) {
        return SandboxError::Panic { component, message };
    }
    SandboxError::Trap {
        component,
        reason: first_line(&error),
    }
}

/// Extracts `message (at file:line:col)` from what Rust's panic hook printed, if it printed.
pub fn panic_message(stderr: &str) -> Option<String> {
    let mut lines = stderr.lines();
    let header = lines.by_ref().find(|line| line.contains(" panicked at "))?;
    let location = header
        .split(" panicked at ")
        .nth(1)
        .unwrap_or_default()
        .trim_end_matches(':');
    let message: Vec<&str> = lines
        .take_while(|line| !line.starts_with("note: "))
        .collect();
    let message = message.join(" ");
    let message = message.trim();
    let message: String = message.chars().take(500).collect();
    Some(if location.is_empty() {
        message
    } else {
        format!("{message} (at {location})")
    })
}

#[cfg(test)]
mod tests {
    use super::panic_message;

    #[test]
    fn reads_a_rust_panic_from_stderr() {
        let stderr = "\nthread '<unnamed>' panicked at src/lib.rs:41:24:\nboom went the tool\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(
            panic_message(stderr).as_deref(),
            Some("boom went the tool (at src/lib.rs:41:24)")
        );
        assert_eq!(panic_message("just some logging\n"), None);
    }
}
