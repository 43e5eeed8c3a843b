//! Code-unit searches over Boa strings that start where they are asked to: the engine's own
//! `StringIndexOf` walks from index 0 on every call (see docs/upstream/boa-quadratic-strings.md).

use boa_engine::string::{JsStr, JsStrVariant};
use memchr::memmem;

/// A needle prepared once for many searches in haystacks of either width.
pub(super) enum Needle {
    /// Every unit fits in a byte: searchable in both Latin1 and UTF-16 haystacks.
    Narrow(Box<memmem::Finder<'static>>, Vec<u16>),
    /// At least one unit above 0xFF: never found in a Latin1 haystack.
    Wide(Vec<u16>),
}

impl Needle {
    /// Prepares `needle` for searching.
    pub(super) fn new(needle: JsStr<'_>) -> Needle {
        match needle.variant() {
            JsStrVariant::Latin1(bytes) => Needle::Narrow(
                Box::new(memmem::Finder::new(bytes).into_owned()),
                bytes.iter().map(|&b| u16::from(b)).collect(),
            ),
            JsStrVariant::Utf16(units) => match units
                .iter()
                .map(|&u| u8::try_from(u).ok())
                .collect::<Option<Vec<u8>>>()
            {
                Some(bytes) => Needle::Narrow(
                    Box::new(memmem::Finder::new(&bytes).into_owned()),
                    units.to_vec(),
                ),
                None => Needle::Wide(units.to_vec()),
            },
        }
    }

    /// The needle's length in code units.
    pub(super) fn len(&self) -> usize {
        match self {
            Needle::Narrow(_, units) | Needle::Wide(units) => units.len(),
        }
    }

    /// The first index `>= from` where the needle occurs in `haystack` (`from <= len`).
    pub(super) fn find(&self, haystack: JsStr<'_>, from: usize) -> Option<usize> {
        match (haystack.variant(), self) {
            (JsStrVariant::Latin1(h), Needle::Narrow(n, _)) => {
                n.find(h.get(from..)?).map(|i| i + from)
            }
            (JsStrVariant::Latin1(_), Needle::Wide(_)) => None,
            (JsStrVariant::Utf16(h), Needle::Narrow(_, n) | Needle::Wide(n)) => {
                find_units(h.get(from..)?, n).map(|i| i + from)
            }
        }
    }

    /// The last index `<= from` where the needle occurs in `haystack`.
    pub(super) fn rfind(&self, haystack: JsStr<'_>, from: usize) -> Option<usize> {
        let end = from.checked_add(self.len())?.min(haystack.len());
        match (haystack.variant(), self) {
            (JsStrVariant::Latin1(h), Needle::Narrow(n, _)) => memmem::rfind(&h[..end], n.needle()),
            (JsStrVariant::Latin1(_), Needle::Wide(_)) => None,
            (JsStrVariant::Utf16(h), Needle::Narrow(_, n) | Needle::Wide(n)) => {
                rfind_units(&h[..end], n)
            }
        }
    }
}

/// All non-overlapping positions of `needle` in `haystack`, each search starting `advance`
/// units after the previous match (`StringIndexOf` loops of split and replaceAll).
pub(super) fn positions(haystack: JsStr<'_>, needle: &Needle, advance: usize) -> Vec<usize> {
    let mut found = Vec::new();
    let mut from = 0;
    while from <= haystack.len() {
        let Some(at) = needle.find(haystack, from) else {
            break;
        };
        found.push(at);
        from = at + advance;
    }
    found
}

fn find_units(haystack: &[u16], needle: &[u16]) -> Option<usize> {
    let Some((&first, rest)) = needle.split_first() else {
        return Some(0);
    };
    let last_start = haystack.len().checked_sub(needle.len())?;
    let mut at = 0;
    while at <= last_start {
        let offset = haystack[at..=last_start].iter().position(|&u| u == first)?;
        at += offset;
        if haystack[at + 1..at + needle.len()] == *rest {
            return Some(at);
        }
        at += 1;
    }
    None
}

fn rfind_units(haystack: &[u16], needle: &[u16]) -> Option<usize> {
    let last_start = haystack.len().checked_sub(needle.len())?;
    (0..=last_start)
        .rev()
        .find(|&at| haystack[at..at + needle.len()] == *needle)
}
