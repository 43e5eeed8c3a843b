//! earshot patch: a bound on the native (Rust) stack.
//!
//! The recursion limit counts VM frames. Built-ins that recurse in Rust (`Array.prototype.join`
//! on nested arrays, `flat(Infinity)`, `JSON.stringify`, a chain of proxies, ...) go through no
//! VM frame, and nested deeply enough they overflowed the thread's stack, which aborts the whole
//! process. Every object internal method and every `[[Call]]`/`[[Construct]]` now compares the
//! stack pointer with the end of the thread's stack and throws `RangeError: Maximum call stack
//! size exceeded` (as V8 does) when fewer than [`RuntimeLimits::native_stack_reserve`] bytes are
//! left: the script sees an ordinary, catchable error, and the thread keeps its stack.
//!
//! The end of the stack is found once, when the context is built (a context never leaves its
//! thread), with `stacker::remaining_stack`; each check is then one address comparison.
//!
//! [`RuntimeLimits::native_stack_reserve`]: super::RuntimeLimits::native_stack_reserve

use crate::{Context, JsError, JsNativeError, JsResult};

/// The address of a local of the caller's frame: the stack pointer, to within a frame.
#[inline(always)]
fn stack_address() -> usize {
    let marker = 0u8;
    std::ptr::addr_of!(marker).addr()
}

/// The lowest address of the calling thread's stack, or 0 when the platform does not say (then
/// nothing is checked, as before).
pub(crate) fn thread_stack_end() -> usize {
    let here = stack_address();
    stacker::remaining_stack().map_or(0, |remaining| here.saturating_sub(remaining))
}

/// The error a script sees when the native stack runs low.
#[cold]
#[inline(never)]
fn exhausted() -> JsError {
    JsNativeError::range()
        .with_message("Maximum call stack size exceeded")
        .into()
}

impl Context {
    /// Throws `RangeError: Maximum call stack size exceeded` when fewer than
    /// [`RuntimeLimits::native_stack_reserve`](crate::vm::RuntimeLimits::native_stack_reserve)
    /// bytes of the native stack are left. Every object internal method and every call checks
    /// it; native code that recurses by itself (not through them) should check it at each level.
    ///
    /// # Errors
    /// The `RangeError` above, when the stack is that low.
    #[inline]
    pub fn check_native_stack(&self) -> JsResult<()> {
        let end = self.vm.native_stack_end;
        if stack_address() < end.saturating_add(self.vm.runtime_limits.native_stack_reserve()) {
            return Err(exhausted());
        }
        Ok(())
    }
}

impl Context {
    /// earshot patch: the bytes of native stack left below the caller, or `None` when the
    /// platform does not say where the thread's stack ends. A host that parses at run time
    /// (`eval`, `Function`) can refuse when less is left than a parse may need.
    #[inline]
    #[must_use]
    pub fn native_stack_remaining(&self) -> Option<usize> {
        let end = self.vm.native_stack_end;
        (end != 0).then(|| stack_address().saturating_sub(end))
    }
}
