//! What can go wrong inside a sandbox, as typed errors that name the component.

use std::time::Duration;

/// A sandboxed component failed. Every variant names the component and reads as one line a
/// user can act on; after any of them the component's next call gets a fresh store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The call ran past its CPU deadline and was stopped.
    #[error("component \"{component}\" ran past its {}ms CPU deadline and was stopped; its next call starts fresh", deadline.as_millis())]
    Timeout {
        /// The component's name.
        component: String,
        /// The deadline that was exceeded.
        deadline: Duration,
    },
    /// The call tried to grow memory past the cap.
    #[error(
        "component \"{component}\" tried to grow its memory to {requested} bytes, over its cap of {limit} bytes, and was stopped; its next call starts fresh"
    )]
    MemoryLimit {
        /// The component's name.
        component: String,
        /// The cap, in bytes.
        limit: usize,
        /// The size it asked for, in bytes.
        requested: usize,
    },
    /// The guest panicked; `message` is what it printed.
    #[error("component \"{component}\" panicked: {message}; its next call starts fresh")]
    Panic {
        /// The component's name.
        component: String,
        /// The panic message from the guest's captured stderr.
        message: String,
    },
    /// The guest trapped for another reason (unreachable, out-of-bounds access, stack overflow...).
    #[error("component \"{component}\" trapped: {reason}; its next call starts fresh")]
    Trap {
        /// The component's name.
        component: String,
        /// wasmtime's description of the trap.
        reason: String,
    },
    /// The bytes could not be compiled, or are not a component.
    #[error("component \"{component}\" could not be compiled: {reason}")]
    Compile {
        /// The component's name.
        component: String,
        /// Why.
        reason: String,
    },
    /// The component does not fit the world the host expected (wrong world, wrong contract
    /// version, or an import the sandbox does not provide).
    #[error("component \"{component}\" does not implement {expected}: {reason}")]
    WrongShape {
        /// The component's name.
        component: String,
        /// The world expected, e.g. `earshot:plugin/tool-provider@0.1.0`.
        expected: String,
        /// What did not fit.
        reason: String,
    },
    /// The guest answered, but with something the host cannot use.
    #[error("component \"{component}\" returned {problem}")]
    BadAnswer {
        /// The component's name.
        component: String,
        /// What was wrong with the answer.
        problem: String,
    },
}

impl SandboxError {
    /// The name of the component the error is about.
    pub fn component(&self) -> &str {
        match self {
            SandboxError::Timeout { component, .. }
            | SandboxError::MemoryLimit { component, .. }
            | SandboxError::Panic { component, .. }
            | SandboxError::Trap { component, .. }
            | SandboxError::Compile { component, .. }
            | SandboxError::WrongShape { component, .. }
            | SandboxError::BadAnswer { component, .. } => component,
        }
    }
}
