//! Layer 2, labels and taints: the blueprint's own labels, its NFD platform labels, NFD's
//! PCI vendor label and the GPU feature discovery count; the taints as declared, and no
//! taint nobody declared.

use super::Out;
use crate::blueprint;
use crate::blueprint::model::{DEVICE_PLUGIN_CONFIG_LABEL, OperatorComponent, SharingMode, Vendor};
use crate::fault::{Action, FaultClass};
use crate::k8s::Node;
use crate::verify::checks::catalog::cluster as spec;

/// GPU feature discovery's label of the device plugin's replicas per GPU.
const REPLICAS_LABEL: &str = "nvidia.com/gpu.replicas";

pub(super) fn labels(out: &mut Out<'_>, blueprint: &blueprint::Spec, node: &Node) {
    let k = &blueprint.kubernetes;
    let mut want: Vec<(String, String, &str)> = k
        .labels
        .iter()
        .map(|(key, v)| {
            (
                key.as_str().to_owned(),
                v.as_str().to_owned(),
                "blueprint label",
            )
        })
        .collect();
    want.extend(k.nfd.platform_labels.iter().map(|p| {
        (
            p.to.as_str().to_owned(),
            p.value.as_str().to_owned(),
            "NFD platform label",
        )
    }));
    if let Some(acc) = &blueprint.accelerators {
        if k.nfd
            .sources
            .contains(&crate::blueprint::model::NfdSource::Pci)
        {
            let id = acc.vendor.pci_id().trim_start_matches("0x");
            want.push((
                format!("feature.node.kubernetes.io/pci-{id}.present"),
                "true".into(),
                "NFD PCI vendor label",
            ));
        }
        let gfd = acc
            .operator
            .as_ref()
            .is_some_and(|o| o.manages.contains(&OperatorComponent::GpuFeatureDiscovery));
        // The labels that select the sharing, registered by the kubelet;
        // then what the operands report once they applied it: GFD's
        // replicas under time-slicing or MPS, the MIG manager's state.
        want.extend(
            blueprint
                .sharing_labels()
                .into_iter()
                .map(|(key, v)| (key.to_owned(), v, "sharing selector (kubelet)")),
        );
        let manages = |c| {
            acc.operator
                .as_ref()
                .is_some_and(|o| o.manages.contains(&c))
        };
        if let (true, Some(replicas)) =
            (gfd && acc.vendor == Vendor::Nvidia, acc.sharing.replicas())
        {
            want.push((
                REPLICAS_LABEL.into(),
                replicas.to_string(),
                "GPU feature discovery: the device plugin's sharing",
            ));
        }
        if acc.sharing.mode() == SharingMode::Mig && manages(OperatorComponent::MigManager) {
            want.push((
                "nvidia.com/mig.config.state".into(),
                "success".into(),
                "MIG manager: the partitions are applied",
            ));
        }
        if gfd && acc.vendor == Vendor::Nvidia && acc.sharing.mode() != SharingMode::Mig {
            want.push((
                "nvidia.com/gpu.count".into(),
                acc.count.to_string(),
                "GPU feature discovery",
            ));
            want.push((
                "nvidia.com/gpu.present".into(),
                "true".into(),
                "GPU feature discovery",
            ));
        }
    }
    // A node switched to whole GPUs for acceptance and not switched back: its sharing
    // labels fail with what happened and how to restore it.
    let window = super::whole_gpus::left_whole(blueprint, node);
    for (key, value, what) in want {
        let have = node.labels.get(&key);
        let what = match &window {
            Some(told)
                if have != Some(&value)
                    && (key == DEVICE_PLUGIN_CONFIG_LABEL || key == REPLICAS_LABEL) =>
            {
                told.as_str()
            }
            _ => what,
        };
        out.push(
            &spec::LABEL,
            Some(&key),
            what,
            Some(have == Some(&value)),
            value,
            have.cloned().unwrap_or_else(|| "absent".into()),
            FaultClass::DriverDaemon,
            Action::RestartDaemon,
        );
    }
}

pub(super) fn taints(out: &mut Out<'_>, blueprint: &blueprint::Spec, node: &Node) {
    let shown: Vec<String> = node.taints.iter().map(ToString::to_string).collect();
    for t in &blueprint.kubernetes.taints {
        let value = t.value.as_ref().map(|v| v.as_str().to_owned());
        let effect = format!("{:?}", t.effect);
        let found = node
            .taints
            .iter()
            .any(|n| n.key == t.key.as_str() && n.value == value && n.effect == effect);
        let want = match &value {
            Some(v) => format!("{}={v}:{effect}", t.key.as_str()),
            None => format!("{}:{effect}", t.key.as_str()),
        };
        out.push(
            &spec::TAINT,
            Some(t.key.as_str()),
            "the node carries the blueprint's taint",
            Some(found),
            want,
            if shown.is_empty() {
                "no taints".into()
            } else {
                shown.join(", ")
            },
            FaultClass::DriverDaemon,
            Action::RestartDaemon,
        );
    }
    // Taints nobody declared keep workloads away; those Kubernetes sets itself for
    // cordoning, pressure or a not-ready kubelet are reported by their conditions.
    for t in &node.taints {
        let system = t.key.starts_with("node.kubernetes.io/")
            || t.key.starts_with("node.cloudprovider.kubernetes.io/");
        let declared = blueprint
            .kubernetes
            .taints
            .iter()
            .any(|d| d.key.as_str() == t.key);
        if !system && !declared && t.effect != "PreferNoSchedule" {
            out.push(
                &spec::TAINT,
                Some(&t.key),
                "no taint the blueprint does not declare",
                Some(false),
                "absent".into(),
                t.to_string(),
                FaultClass::DriverDaemon,
                Action::RestartDaemon,
            );
        }
    }
}
