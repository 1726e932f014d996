//! Per-GPU isolation: the device plugin reports each GPU's health to the kubelet,
//! which keeps an unhealthy one in the Node's capacity and takes it out of
//! allocatable, so one bad GPU leaves allocation while its neighbours stay in
//! service. Layer 2 reads that as what it is — a device fault on that node,
//! the GPU to reset — not as a device plugin to restart.

use crate::support::*;
use nodeimg::fault::{Action, FaultClass};
use serde_json::json;

fn node(capacity: &str, allocatable: &str) -> nodeimg::k8s::Node {
    let text = json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "gpu-1", "labels": {"kubernetes.io/hostname": "gpu-1"}},
        "status": {
            "capacity": {"nvidia.com/gpu": capacity},
            "allocatable": {"nvidia.com/gpu": allocatable},
        },
    })
    .to_string();
    nodeimg::k8s::node::parse(&text).unwrap().remove(0)
}

fn allocatable_finding(n: &nodeimg::k8s::Node) -> nodeimg::verify::report::record::Finding {
    let bp = example("h100-sxm-ubuntu");
    let (findings, _) = nodeimg::accept::cluster::check(bp.spec(), n, None, None, &[]);
    findings
        .into_iter()
        .find(|f| f.id == "cluster.allocatable.gpu")
        .expect("cluster.allocatable.gpu")
}

#[test]
fn a_gpu_the_device_plugin_took_out_is_a_device_fault() {
    let f = allocatable_finding(&node("8", "7"));
    assert_eq!(format!("{:?}", f.verdict), "Fail");
    assert_eq!((f.fault, f.action), (FaultClass::Device, Action::ResetGpu));
    assert!(f.observed.contains("7 of 8"), "{}", f.observed);
    assert!(
        f.observed.contains("1 device(s) unhealthy"),
        "{}",
        f.observed
    );
    // Every GPU allocatable: nothing isolated.
    assert_eq!(
        format!("{:?}", allocatable_finding(&node("8", "8")).verdict),
        "Pass"
    );
    // No allocatable at all is the plugin's or the kubelet's, not a device's.
    let f = allocatable_finding(&node("8", "0"));
    assert_eq!(f.fault, FaultClass::Device, "0 of 8: every GPU unhealthy");
    let f = allocatable_finding(&node("8", "9"));
    assert_eq!(
        (f.fault, f.action),
        (FaultClass::DriverDaemon, Action::RestartDaemon)
    );
}
