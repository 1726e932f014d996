//! [`Spec`]: the blueprint model once it passed every check, the only form later
//! stages take.
//!
//! The raw model ([`RawBlueprint`]) is what serde builds: anyone can deserialise one or
//! write one by literal, checked or not. A `Spec` has no public constructor, no
//! `Deserialize` and no `DerefMut`; only [`super::load_file`]/[`super::load_bytes`] (after
//! the schema, value and rule checks) and a lock whose id matched
//! ([`super::identity::load_lock`]) make one, and hand it out inside a
//! [`super::Blueprint`]. So render, verify, accept and the acceptance record, which take
//! `&Spec` (through [`super::Blueprint::spec`]), can only ever see checked values.
//!
//! Fields are read through `Deref` to the model. That is sound: a `&Spec` borrows a
//! checked blueprint and cannot change it, and the values a rule checked across fields
//! stay as checked because nothing downstream can write them.
//!
//! A raw model is not accepted where a `Spec` is wanted:
//!
//! ```compile_fail,E0308
//! use nodeimg::blueprint::model::RawBlueprint;
//! fn evaluate(raw: &RawBlueprint, facts: &nodeimg::verify::Facts) {
//!     let matrix = nodeimg::blueprint::compat::Matrix::builtin();
//!     let selection = nodeimg::verify::checks::Selection::default();
//!     nodeimg::verify::checks::evaluate(raw, facts, &matrix, &selection);
//! }
//! ```
//!
//! while the same call with a loaded blueprint's spec compiles:
//!
//! ```no_run
//! use nodeimg::blueprint::Blueprint;
//! fn evaluate(bp: &Blueprint, facts: &nodeimg::verify::Facts) {
//!     let matrix = nodeimg::blueprint::compat::Matrix::builtin();
//!     let selection = nodeimg::verify::checks::Selection::default();
//!     nodeimg::verify::checks::evaluate(bp.spec(), facts, &matrix, &selection);
//! }
//! ```

use std::ops::Deref;

use serde::Serialize;

use super::model::RawBlueprint;

/// A blueprint model that passed every check (see the module docs).
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct Spec(RawBlueprint);

impl Spec {
    /// Only the loaders make one, after the checks.
    pub(super) fn checked(raw: RawBlueprint) -> Self {
        Self(raw)
    }
}

impl Deref for Spec {
    type Target = RawBlueprint;

    fn deref(&self) -> &RawBlueprint {
        &self.0
    }
}
