//! Amortised-linear string building: `s = s + piece` in a loop (earshot patch, not upstream).
//!
//! Boa 0.22 has no ropes: every `a + b` allocates `a.len() + b.len()` units and copies both, so
//! building a string of `n` units by appending short pieces copies O(n²) units (a 300 KB string
//! built line by line took 90 ms against Node's 0.2 ms).
//!
//! This module gives long concatenations a growable backing buffer instead. When the left side
//! of a concatenation is long and at least as long as the rest, the result is written exactly,
//! and remembered. When a later concatenation's left side is exactly such a string (it starts at
//! the buffer's first unit and ends where the buffer's written part ends), the result goes into
//! a buffer with spare room (twice its length), handed out as a slice of it; from then on each
//! append onto the latest slice writes the rest into the spare room in place and hands out a
//! longer slice. Units already handed out are never written again, so every
//! string stays immutable; a buffer that is full is replaced by one twice as large, so the total
//! copying is linear.
//!
//! The buffers being appended to are remembered per thread (a `JsString` is neither `Send` nor
//! `Sync`), at most [`TAILS`] of them; one that only this list still holds is dropped at the next
//! long concatenation.

use crate::r#type::{InternalStringType, Latin1, Utf16};
use crate::vtable::{SequenceString, SliceString};
use crate::{JsStr, JsStrVariant, JsString};
use std::cell::RefCell;
use std::ptr::{self, NonNull};

/// Below this many units a plain copy is as cheap as the bookkeeping.
pub(crate) const MIN_APPEND_LEN: usize = 256;

/// How many buffers a thread keeps appending to at once (interleaved builders).
const TAILS: usize = 4;

/// A buffer that strings are being appended to.
struct Tail {
    /// A sequence string of `capacity` units whose first `used` units are written. It is never
    /// handed out itself, only slices of its written part.
    buffer: JsString,
    /// Where its units start, to recognise a slice of it.
    data: *mut u8,
    /// Units written so far.
    used: usize,
    /// Units the buffer holds.
    capacity: usize,
    /// Whether the units are Latin1 bytes (else UTF-16).
    latin1: bool,
}

thread_local! {
    static BUILDING: RefCell<Vec<Tail>> = const { RefCell::new(Vec::new()) };
}

/// The concatenation of `strings` (`total` units, `all_latin1` when every part is Latin1) when
/// it is a long append, else `None` so that the caller copies as before.
pub(crate) fn concat(strings: &[JsStr<'_>], total: usize, all_latin1: bool) -> Option<JsString> {
    let (first, rest) = strings.split_first()?;
    if first.len() < total - first.len() {
        return None;
    }
    BUILDING
        .try_with(|building| {
            let mut building = building.try_borrow_mut().ok()?;
            building.retain(|tail| tail.buffer.refcount() != Some(1));
            let found = building.iter().position(|tail| tail.is_latest(*first));
            if let Some(index) = found
                && building[index].try_append(rest, total - first.len())
            {
                return Some(written_part(&building[index]));
            }
            // A first long concatenation is written exactly (most are one-offs, `big + x`); only
            // one onto a string made that way, which is how an append loop looks, gets twice the
            // room it needs.
            let capacity = if found.is_some() {
                total.checked_mul(2)?
            } else {
                total
            };
            let mut tail = Tail::allocate(capacity, all_latin1);
            // SAFETY: a fresh buffer of at least `total` units, in an encoding every part fits.
            unsafe { write_units(&mut tail, strings) };
            let result = written_part(&tail);
            match found {
                Some(index) => building[index] = tail,
                None => {
                    if building.len() == TAILS {
                        building.remove(0);
                    }
                    building.push(tail);
                }
            }
            Some(result)
        })
        .ok()
        .flatten()
}

/// Appends `rest` to `string`, a slice string, in place (see `JsString::append_in_place`):
/// when nothing else holds `string` and it is the written part of one of this thread's
/// buffers, and the buffer has room for `rest` in its encoding, `rest` is written after it and
/// the slice lengthened. Returns whether it did.
pub(crate) fn append_in_place(string: &JsString, rest: JsStr<'_>) -> bool {
    let first = string.as_str();
    if string.refcount() != Some(1) || first.is_empty() {
        return false;
    }
    BUILDING
        .try_with(|building| {
            let mut building = building.try_borrow_mut().ok()?;
            let tail = building.iter_mut().find(|tail| tail.is_latest(first))?;
            if !tail.try_append(&[rest], rest.len()) {
                return None;
            }
            let slice = string.ptr.cast::<SliceString>();
            // SAFETY: the caller checked that `string` is a slice string, which `ptr` points
            // to; `used <= capacity`, the buffer's length; the slice starts at the buffer's
            // first unit, so the buffer is the string it owns (directly or through the string
            // it was sliced from), which keeps it alive; `string` is its only holder and no
            // reference into it is live.
            unsafe {
                let written = tail.buffer.as_str().get_unchecked(0..tail.used).as_static();
                SliceString::set_inner(slice, written);
            }
            Some(())
        })
        .ok()
        .flatten()
        .is_some()
}

/// The address of `string`'s first unit.
fn units_start(string: JsStr<'_>) -> *mut u8 {
    match string.variant() {
        JsStrVariant::Latin1(units) => units.as_ptr().cast_mut(),
        JsStrVariant::Utf16(units) => units.as_ptr().cast_mut().cast(),
    }
}

/// The string made of `tail`'s written units: the buffer itself when it is full.
fn written_part(tail: &Tail) -> JsString {
    if tail.used == tail.capacity {
        return tail.buffer.clone();
    }
    // SAFETY: `0 < used <= capacity`, the buffer's length.
    unsafe { JsString::slice_unchecked(&tail.buffer, 0, tail.used) }
}

/// Writes `parts` after `tail`'s written units and counts them as written.
///
/// # Safety
/// The parts must fit in the capacity left, and must all be Latin1 if the buffer is.
unsafe fn write_units(tail: &mut Tail, parts: &[JsStr<'_>]) {
    for part in parts {
        // SAFETY: the caller guarantees room and encoding; the parts are other strings or the
        // written part of this buffer, which never overlaps the units after `used`.
        unsafe {
            match (tail.latin1, part.variant()) {
                (true, JsStrVariant::Latin1(units)) => {
                    ptr::copy_nonoverlapping(units.as_ptr(), tail.data.add(tail.used), units.len());
                }
                (false, JsStrVariant::Latin1(units)) => {
                    let to = tail.data.cast::<u16>().add(tail.used);
                    for (i, unit) in units.iter().enumerate() {
                        to.add(i).write(u16::from(*unit));
                    }
                }
                (false, JsStrVariant::Utf16(units)) => {
                    #[allow(clippy::cast_ptr_alignment)]
                    let to = tail.data.cast::<u16>().add(tail.used);
                    ptr::copy_nonoverlapping(units.as_ptr(), to, units.len());
                }
                (true, JsStrVariant::Utf16(_)) => unreachable!("checked by the caller"),
            }
        }
        tail.used += part.len();
    }
}

impl Tail {
    /// Whether `string` is this buffer's whole written part: the latest string built in it,
    /// which may be appended to.
    fn is_latest(&self, string: JsStr<'_>) -> bool {
        self.data == units_start(string) && self.used == string.len()
    }

    /// Writes `parts` (`len` units in all) after the written units when they fit in the room
    /// left and in the buffer's encoding; returns whether it did.
    fn try_append(&mut self, parts: &[JsStr<'_>], len: usize) -> bool {
        let fits = self.used.checked_add(len).is_some_and(|total| total <= self.capacity)
            && (!self.latin1 || parts.iter().all(JsStr::is_latin1));
        if fits {
            // SAFETY: the parts fit in the room left (checked just above), the units from `used`
            // on are handed out nowhere yet, and the encodings fit.
            unsafe { write_units(self, parts) };
        }
        fits
    }

    /// An empty buffer of `capacity` units (zeroed, so that it never holds uninitialised memory).
    fn allocate(capacity: usize, latin1: bool) -> Tail {
        let (raw, data) = if latin1 {
            allocate_units::<Latin1>(capacity)
        } else {
            allocate_units::<Utf16>(capacity)
        };
        Tail {
            buffer: JsString { ptr: raw },
            data,
            used: 0,
            capacity,
            latin1,
        }
    }
}

/// A zeroed sequence string of `capacity` units of `T`: the string and where its units start.
fn allocate_units<T: InternalStringType>(
    capacity: usize,
) -> (NonNull<crate::vtable::JsStringVTable>, *mut u8) {
    let raw = SequenceString::<T>::allocate(capacity);
    // SAFETY: `allocate` returns a sequence string followed by room for `capacity` units of
    // `T::Byte`, starting `T::DATA_OFFSET` bytes in.
    let data = unsafe {
        let data = raw.as_ptr().cast::<u8>().add(T::DATA_OFFSET);
        ptr::write_bytes(data, 0, capacity * size_of::<T::Byte>());
        data
    };
    (raw.cast(), data)
}
