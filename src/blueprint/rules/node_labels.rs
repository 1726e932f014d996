//! Labels the kubelet may set on its own Node. The kubelet refuses to
//! start with `--node-labels` in the `kubernetes.io` or `k8s.io` namespaces
//! (or their subdomains) other than the ones it owns
//! (`k8s.io/kubelet/apis` `KubeletLabels`, `KubeletLabelNamespaces`), and
//! the NodeRestriction admission plugin refuses the same from a node's
//! credentials — `node-role.kubernetes.io/*` and
//! `node-restriction.kubernetes.io/*` included, which only an administrator
//! sets (kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#noderestriction).

use super::p;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::*;

/// Labels in the reserved namespaces a kubelet may set.
const KUBELET_LABELS: &[&str] = &[
    "kubernetes.io/hostname",
    "kubernetes.io/instance-type",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "beta.kubernetes.io/instance-type",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "failure-domain.kubernetes.io/zone",
    "failure-domain.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "node.kubernetes.io/instance-type",
];

/// Namespaces in which a kubelet may set any label.
const KUBELET_NAMESPACES: &[&str] = &["kubelet.kubernetes.io", "node.kubernetes.io"];

/// Why the kubelet may not register `key` itself, or `None` when it may.
pub fn refused(key: &str) -> Option<String> {
    let (prefix, _) = key.split_once('/')?;
    let reserved = |ns: &str| prefix == ns || prefix.ends_with(&format!(".{ns}"));
    if !reserved("kubernetes.io") && !reserved("k8s.io") {
        return None;
    }
    if KUBELET_LABELS.contains(&key) || KUBELET_NAMESPACES.contains(&prefix) {
        return None;
    }
    Some(format!(
        "the kubelet may not set `{key}` on its own Node (the kubernetes.io and k8s.io namespaces are reserved; a kubelet may use node.kubernetes.io/ and kubelet.kubernetes.io/): set it with kubectl label, or use your own prefix"
    ))
}

pub fn check(bp: &RawBlueprint, out: &mut Collector<'_>) {
    for key in bp.kubernetes.labels.keys() {
        if let Some(why) = refused(key.as_str()) {
            out.error_at_key(
                "node-label-namespace",
                &p("kubernetes.labels").key(key.as_str().to_string()),
                why,
            );
        }
    }
    // The sharing labels are the sharing setting's own: a second value for
    // them in kubernetes.labels would make --node-labels say two things.
    let sharing = bp.sharing_labels();
    for key in bp.kubernetes.labels.keys() {
        if let Some((_, value)) = sharing.iter().find(|(k, _)| *k == key.as_str()) {
            out.error_at_key(
                "node-label-sharing",
                &p("kubernetes.labels").key(key.as_str().to_string()),
                format!(
                    "`{}` is set from accelerators.sharing (to `{value}`); remove it from kubernetes.labels",
                    key.as_str()
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::refused;

    #[test]
    fn reserved_namespaces() {
        assert!(refused("platform.example.com/node-class").is_none());
        assert!(refused("node.kubernetes.io/pool").is_none());
        assert!(refused("kubelet.kubernetes.io/x").is_none());
        assert!(refused("topology.kubernetes.io/zone").is_none());
        assert!(refused("node-role.kubernetes.io/gpu").is_some());
        assert!(refused("node-restriction.kubernetes.io/pool").is_some());
        assert!(refused("kubernetes.io/role").is_some());
        assert!(refused("example.k8s.io/x").is_some());
        assert!(refused("unprefixed").is_none());
    }
}
