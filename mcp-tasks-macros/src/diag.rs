//! The error accumulator that runs through parse and validate (serde's `Ctxt`, darling's
//! `Accumulator`). It panics if dropped without [`Diagnostics::finish`], so no error is lost.

use darling::error::Accumulator;
use proc_macro2::Span;
use std::fmt::Display;

/// Every problem found in one `#[tool]`, in source order.
#[derive(Debug)]
pub struct Diagnostics {
    errors: Accumulator,
    count: usize,
}

impl Default for Diagnostics {
    fn default() -> Self {
        Diagnostics {
            errors: darling::Error::accumulator(),
            count: 0,
        }
    }
}

impl Diagnostics {
    /// An error at `span`.
    pub fn error(&mut self, span: Span, message: impl Display) {
        self.count += 1;
        self.errors
            .push(darling::Error::custom(message).with_span(&span));
    }

    /// An error darling or syn produced.
    pub fn push(&mut self, error: impl Into<darling::Error>) {
        self.count += 1;
        self.errors.push(error.into());
    }

    /// Keeps the value of `result`, or records its error.
    pub fn handle<T>(&mut self, result: darling::Result<T>) -> Option<T> {
        result.map_err(|err| self.push(err)).ok()
    }

    /// How many errors so far.
    pub fn len(&self) -> usize {
        self.count
    }

    /// `Ok` when nothing was recorded; otherwise every error, combined.
    pub fn finish(self) -> Result<(), syn::Error> {
        self.errors.finish().map_err(syn::Error::from)
    }
}
