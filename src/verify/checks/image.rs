//! The image the node runs (`security.imageTrust` only): its signature is by a key the
//! blueprint names, and the lock, matrix, blueprint id and trust keys on disk are the files
//! of the signed config layer. A failure is an image fault, not a hardware one: the node
//! needs a signed image applied (or a rollback), and kubelet does not start meanwhile.
//!
//! With `require: false` a failure is a warning: reported and recorded, not blocking, so a
//! fleet can see which nodes would fail before signing is enforced.

use super::catalog::image::*;
use super::{Inputs, Observation, Results, Severity};
use crate::trust::SignatureStatus;
use crate::trust::node::KEPT_DIR;
use crate::verify::fact::Fact;

pub fn evaluate(input: &Inputs, out: &mut Results) {
    let Some(policy) = &input.blueprint.security.image_trust else {
        return;
    };
    let names: Vec<&str> = policy.keys.iter().map(|k| k.name.as_str()).collect();
    let severity = if policy.require {
        Severity::Critical
    } else {
        Severity::Warning
    };
    let evidence = vec![
        format!("/{KEPT_DIR}"),
        format!("/{}", crate::blueprint::model::TRUST_DIR),
    ];
    let expected = format!(
        "signed by {} (security.imageTrust{})",
        names.join(" or "),
        if policy.require {
            ""
        } else {
            ", require: false"
        }
    );
    let signature = match &input.facts.image {
        Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        Fact::Known(image) => match &image.report.signature {
            SignatureStatus::Verified { key, identity } => {
                let name = image
                    .keys
                    .iter()
                    .find(|(_, id)| *id == key)
                    .map(|(n, _)| n.as_str())
                    .unwrap_or("?");
                let trusted = names.contains(&name);
                Observation::value(
                    format!(
                        "{} signed by {name} ({key}) for {identity}{}",
                        image.report.image,
                        if trusted {
                            ""
                        } else {
                            "; security.imageTrust does not name that key"
                        }
                    ),
                    trusted,
                )
            }
            other => Observation::value(
                format!("{}: {}", image.report.image, other.explain()),
                false,
            ),
        },
    };
    out.record(&SIGNATURE, None, &expected, signature, evidence.clone())
        .severity = severity;
    let config = match &input.facts.image {
        Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        Fact::Known(image) => match &image.binding {
            Fact::Unknown { reason } => Observation::unknown(reason.clone()),
            Fact::Known(b) if b.holds() => Observation::value(
                format!("{} file(s), as in config layer {}", b.files.len(), b.layer),
                true,
            ),
            Fact::Known(b) => Observation::value(
                b.broken()
                    .iter()
                    .map(|(p, s)| {
                        format!(
                            "/{p} {}",
                            serde_json::to_value(s)
                                .ok()
                                .and_then(|v| v.as_str().map(str::to_owned))
                                .unwrap_or_default()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                false,
            ),
        },
    };
    out.record(
        &CONFIG,
        None,
        "the files of the signed config layer",
        config,
        evidence,
    )
    .severity = severity;
}
