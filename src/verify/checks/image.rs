//! The image the node runs (`security.imageTrust` only): its signature is by a key the
//! blueprint names, and the lock, matrix, blueprint id and trust keys on disk are the files
//! of the signed config layer. A failure is an image fault, not a hardware one: the node
//! needs a signed image applied (or a rollback), and kubelet does not start meanwhile.
//!
//! With `require: false` a failure is a warning: reported and recorded, not blocking, so a
//! fleet can see which nodes would fail before signing is enforced.
//!
//! `image.applied` asks the question before all of these: is the image's configuration
//! on this node at all? It is recorded once the other checks ran, when one that reads the
//! image's files back ([`IMAGE_FILE_READERS`]) failed critically (read and found wrong;
//! an unreadable fact says nothing about the image): with the lock or a rendered file
//! absent it fails, and those failures are "blocked by image.applied" (the node was not
//! built from the image, or it was not applied: apply it rather than repair each check);
//! with the files present it passes, and they stay roots of their own. The verdict is the
//! one those failures already gave: a node that passes, or only warns, is not asked.

use super::blocked::IMAGE_FILE_READERS;
use super::catalog::image::*;
use super::{CheckResult, Inputs, Observation, Results, Severity, Verdict};
use crate::trust::SignatureStatus;
use crate::trust::node::KEPT_DIR;
use crate::verify::fact::Fact;
use crate::verify::facts::Facts;

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

/// `image.applied`, after every other check ran and the selection was made (see the
/// module text): appended to `results` when a selected check that reads the image's files
/// failed critically.
pub fn applied(facts: &Facts, results: &mut Vec<CheckResult>) {
    let failed = results.iter().any(|r| {
        r.verdict == Verdict::Fail
            && r.severity == Severity::Critical
            && IMAGE_FILE_READERS.iter().any(|s| std::ptr::eq(*s, r.spec))
    });
    if !failed {
        return;
    }
    let files = crate::verify::facts::applied::FILES;
    let observation = Observation::of(
        &facts.applied,
        |a| {
            if a.complete() {
                "present: the failures of the checks that read them are their own".to_owned()
            } else {
                format!(
                    "absent: {}; this node does not run the image (or it was not applied here), so the checks that read its files are blocked by image.applied",
                    a.missing.join(", ")
                )
            }
        },
        |a| a.complete(),
    );
    let mut out = Results::default();
    out.record(
        &APPLIED,
        None,
        format!("present: {}", files.join(", ")),
        observation,
        files.iter().map(|f| (*f).to_owned()).collect(),
    );
    results.extend(out.into_vec());
}
