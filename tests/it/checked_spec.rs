//! The checked model cannot be had without the checks: no stage downstream of `load`
//! takes the raw model (the compile-fail doctest in `src/blueprint/spec.rs` shows
//! `verify::checks::evaluate` refusing one), and nothing turns a raw model into a
//! `Spec`. Traits a type does not implement are seen here with method probing: an
//! inherent method whose bound does not hold is passed over for the trait's fallback.

use nodeimg::blueprint::Spec;
use nodeimg::blueprint::model::RawBlueprint;
use std::marker::PhantomData;

trait Fallback {
    fn has_deserialize(&self) -> bool {
        false
    }
    fn has_from_raw(&self) -> bool {
        false
    }
    fn has_default(&self) -> bool {
        false
    }
}
struct Deser<T>(PhantomData<T>);
impl<T> Fallback for Deser<T> {}
impl<T: serde::de::DeserializeOwned> Deser<T> {
    fn has_deserialize(&self) -> bool {
        true
    }
}

struct FromRaw<T>(PhantomData<T>);
impl<T> Fallback for FromRaw<T> {}
impl<T: From<RawBlueprint>> FromRaw<T> {
    fn has_from_raw(&self) -> bool {
        true
    }
}

struct Defaults<T>(PhantomData<T>);
impl<T> Fallback for Defaults<T> {}
impl<T: Default> Defaults<T> {
    fn has_default(&self) -> bool {
        true
    }
}

#[test]
fn a_raw_model_cannot_become_a_checked_spec() {
    // The probes see what the types do implement...
    assert!(Deser::<RawBlueprint>(PhantomData).has_deserialize());
    assert!(FromRaw::<RawBlueprint>(PhantomData).has_from_raw());
    assert!(Defaults::<Vec<u8>>(PhantomData).has_default());
    // ...and a Spec has none of the ways in.
    assert!(
        !Deser::<Spec>(PhantomData).has_deserialize(),
        "Spec: Deserialize"
    );
    assert!(
        !FromRaw::<Spec>(PhantomData).has_from_raw(),
        "Spec: From<RawBlueprint>"
    );
    assert!(
        !Defaults::<Spec>(PhantomData).has_default(),
        "Spec: Default"
    );
}

#[test]
fn a_loaded_blueprint_hands_out_its_checked_spec() {
    let bp = crate::support::example("cpu-minimal");
    let spec: &Spec = bp.spec();
    assert_eq!(spec.metadata.name.as_str(), bp.name());
}
