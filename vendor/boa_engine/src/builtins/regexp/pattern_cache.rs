//! earshot patch: the compiled matchers of a context's recent patterns, so that a regular
//! expression literal evaluated in a loop (a new `RegExp` object each time, by the
//! specification) and `new RegExp(source)` with a repeated source compile their pattern once.
//! A matcher depends on nothing but the pattern text and the flags, and it is never changed
//! after compiling, so sharing it between objects is unobservable.

use std::{collections::HashMap, rc::Rc};

use boa_parser::lexer::regex::RegExpFlags;
use regress::Regex;

use crate::JsString;

/// How many patterns a context remembers before it starts over.
const PATTERNS: usize = 128;

/// Compiled matchers by (pattern text, flags text), per context.
#[derive(Debug, Default)]
pub(crate) struct PatternCache {
    compiled: HashMap<(JsString, JsString), (Rc<Regex>, RegExpFlags)>,
}

impl PatternCache {
    /// The matcher compiled for `pattern` with `flags`, if any.
    pub(crate) fn get(
        &self,
        pattern: &JsString,
        flags: &JsString,
    ) -> Option<(Rc<Regex>, RegExpFlags)> {
        self.compiled
            .get(&(pattern.clone(), flags.clone()))
            .cloned()
    }

    /// Remembers `matcher` for `pattern` with `flags`; forgets every pattern when full.
    pub(crate) fn insert(
        &mut self,
        pattern: JsString,
        flags: JsString,
        matcher: Rc<Regex>,
        parsed: RegExpFlags,
    ) {
        if self.compiled.len() >= PATTERNS {
            self.compiled.clear();
        }
        self.compiled.insert((pattern, flags), (matcher, parsed));
    }
}
