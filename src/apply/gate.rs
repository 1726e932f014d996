//! The image judged against the trust policy before anything of it is unpacked: the
//! signature must be by a key the policy trusts, over this very manifest digest (and,
//! for an image pulled from a registry, naming that repository).
//!
//! The policy is the one given on the command line (`--key`, `--trust-policy`, for a
//! pipeline's first apply onto a root that has none) or else the one the root already
//! runs: its lock's `security.imageTrust` with the keys its image put under
//! `etc/nodeimg/trust/` — never the keys the new image brings, which would let an image
//! vouch for itself. With `require`, an image that does not verify is refused and the root
//! is not touched; without it the verdict is reported and the apply goes on.

use std::path::Path;

use serde::Serialize;

use super::Error;
use super::impact::Lock;
use super::root::Root;
use crate::trust::{Dir, Expect, Layout, TrustPolicy};

/// How the image fared against the policy.
#[derive(Debug, Clone, Serialize)]
pub struct Judged {
    /// Where the policy came from.
    pub policy: String,
    /// `verified`, `missing`, `untrusted-key`, `other-digest`, …
    pub signature: &'static str,
    /// The key that signed it, when verified.
    pub signed_by: Option<String>,
    /// Whether a failure refuses the image (the policy's `require`).
    pub enforced: bool,
    /// What the verdict means, in a sentence.
    pub detail: String,
}

/// The policy to judge by: `given`, else the root's own; `None` when there is none.
pub fn policy(root: &Root, given: Option<&TrustPolicy>) -> Result<Option<TrustPolicy>, Error> {
    if let Some(p) = given {
        return Ok(Some(p.clone()));
    }
    let Some(lock) = Lock::read(root).map_err(Error::Failed)? else {
        return Ok(None);
    };
    let read = |rel: &str| -> Result<Vec<u8>, String> {
        let path = super::entry::RelPath::parse(rel)
            .and_then(|p| root.locate(&p).map_err(|e| e.to_string()))
            .map_err(|e| format!("{rel}: {e}"))?;
        crate::input::read(&path, 1 << 20).map_err(|e| format!("{}: {e}", path.display()))
    };
    TrustPolicy::from_node(lock.blueprint(), &read)
        .map(|p| {
            p.map(|mut p| {
                p.source = format!("this root's trust policy ({})", p.source);
                p
            })
        })
        .map_err(|e| Error::Failed(format!("the root's trust policy cannot be read: {e}")))
}

/// Judges the image of the layout at `layout` by `policy`; `Err` (exit 2) when the policy
/// requires a signature the image lacks. `repository`: where it was pulled from.
pub fn judge(
    layout: &Path,
    policy: &TrustPolicy,
    repository: Option<String>,
) -> Result<Judged, Error> {
    let dir = Dir(layout.to_path_buf());
    let opened = Layout::open(&dir).map_err(|e| Error::Unusable(e.to_string()))?;
    let report = crate::trust::verify_image(&opened, &policy.public_keys(), &Expect { repository })
        .map_err(|e| Error::Unusable(e.to_string()))?;
    let judged = Judged {
        policy: policy.source.clone(),
        signature: report.signature.word(),
        signed_by: report.signer().map(|k| match policy.name_of(k) {
            Some(name) => format!("{name} ({k})"),
            None => k.to_string(),
        }),
        enforced: policy.require,
        detail: report.signature.explain(),
    };
    if !report.verified() && policy.require {
        return Err(Error::Unusable(format!(
            "image {} refused by {}: {}; nothing was changed (apply an image signed by a key the policy trusts)",
            report.image, judged.policy, judged.detail
        )));
    }
    Ok(judged)
}
