//! Supply-chain trust: image signatures (sigstore/cosign-compatible), signed in-toto
//! attestations of the build's provenance, the trust policy a node enforces, and the
//! verdicts of checking an image against it.
//!
//! Layering: `trust` reads OCI layouts and registries through `package` and the blueprint's
//! policy through `blueprint`; `command` (`sign`, `verify-image`, `push --sign`, `rollout
//! plan`), `apply` and verify's check of the running image call it. It calls none of them.

pub mod attachment;
pub mod attestation;
pub mod dsse;
pub mod key;
pub mod layout;
pub mod node;
pub mod payload;
pub mod policy;
#[cfg(feature = "push")]
pub mod registry;
pub mod sign;
pub mod target;
pub mod verdict;
pub mod verify;

pub use key::{KeyError, KeyId, PublicKey, SigningKey};
pub use layout::{Dir, Files, Layout, LayoutError};
pub use policy::{NamedKey, TrustPolicy};
pub use verdict::{AttestationStatus, Report, SbomStatus, SignatureStatus};
pub use verify::{Expect, verify_image};
