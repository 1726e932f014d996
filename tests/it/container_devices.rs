//! `runtime.cdi.management-spec` on the 8×H100 fixture with a GPU Operator that does not
//! run its toolkit, and `gpu.render-nodes` on the 8×MI300X fixture: each passes on the node
//! as it should be and fails, with what it saw, on the node as it goes wrong.

use crate::support::fixture_tree::{self, Tree};
use crate::support::verify_fixture::{self, BLUEPRINT};
use crate::support::{Variant, rendered};
use nodeimg::blueprint::Blueprint;
use nodeimg::blueprint::compat::Matrix;
use nodeimg::verify::checks::{self, CheckResult, Selection, Verdict};

fn only<'a>(results: &'a [CheckResult], id: &str) -> &'a CheckResult {
    let found: Vec<&CheckResult> = results.iter().filter(|r| r.id() == id).collect();
    assert_eq!(found.len(), 1, "{id}: {results:?}");
    found[0]
}

/// The H100 fixture's blueprint with the GPU Operator running the device plugin only.
fn operator_without_toolkit() -> String {
    BLUEPRINT.replace(
        "  cuda: \"12.8\"\n",
        "  cuda: \"12.8\"\n  operator:\n    name: gpu-operator\n    version: v25.10.1\n    manages: [device-plugin]\n",
    )
}

const MANAGEMENT_SPEC: &str = "cdiVersion: 0.5.0\nkind: management.nvidia.com/gpu\ndevices:\n- name: all\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidiactl\ncontainerEdits: {}\n";

#[test]
fn the_operators_management_spec_is_checked_where_the_image_writes_it() {
    let xml = verify_fixture::healthy_xml();
    let bp = operator_without_toolkit();
    // The image writes it: the unit names the file verify then looks for.
    let unit = rendered(&verify_fixture::blueprint(&bp))
        .layer
        .file("etc/systemd/system/nodeimg-cdi-generate.service")
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    assert!(
        unit.contains("--vendor=management.nvidia.com --class=gpu"),
        "{unit}"
    );
    let tree = verify_fixture::healthy_tree();
    let result = |tree: &Tree, bp: &str| {
        let results = verify_fixture::results(tree, &xml, bp);
        only(&results, "runtime.cdi.management-spec").clone()
    };
    let missing = result(&tree, &bp);
    assert_eq!(missing.verdict, Verdict::Fail, "{missing:?}");
    assert_eq!(missing.observed, "none");
    tree.file(
        "/var/run/cdi/management.nvidia.com-gpu.yaml",
        &MANAGEMENT_SPEC.replace("name: all", "name: gpu0"),
    );
    let partial = result(&tree, &bp);
    assert_eq!(partial.verdict, Verdict::Fail, "{partial:?}");
    tree.file(
        "/var/run/cdi/management.nvidia.com-gpu.yaml",
        MANAGEMENT_SPEC,
    );
    let present = result(&tree, &bp);
    assert_eq!(present.verdict, Verdict::Pass, "{present:?}");
    // Without an operator (or with its toolkit) nothing on the node writes it: not judged.
    let results = verify_fixture::results(&tree, &xml, BLUEPRINT);
    assert!(
        results
            .iter()
            .all(|r| r.id() != "runtime.cdi.management-spec")
    );
}

/// The MI300X example on the MI300X fixture node (whose GPUs are at bus 0x0b, 0x2b, …).
fn mi300x() -> (Blueprint, Tree) {
    let bp = Variant::of("mi300x-rhel")
        .set("network.nics", serde_json::json!([]))
        .remove("network.affinity")
        .remove("acceptance")
        .load();
    (bp, fixture_tree::mi300x_node())
}

fn gpu_address(gpu: u8) -> String {
    format!("0000:{:02x}:00.0", 0x08 + gpu * 0x20 + 3)
}

/// Render node `n` of the GPU `gpu` (a driver's /dev/dri node and its sysfs class link).
fn render_node(tree: &Tree, n: u32, gpu: u8) {
    tree.file(&format!("/dev/dri/renderD{n}"), "");
    tree.link(
        &format!("/sys/class/drm/renderD{n}/device"),
        &format!("../../../{}", gpu_address(gpu)),
    );
}

fn render_nodes_result(bp: &Blueprint, tree: &Tree) -> CheckResult {
    let facts = fixture_tree::mi300x_facts(tree);
    let results = checks::evaluate(bp.spec(), &facts, &Matrix::builtin(), &Selection::default());
    only(&results, "gpu.render-nodes").clone()
}

#[test]
fn every_amd_gpu_has_exactly_one_render_node() {
    let (bp, tree) = mi300x();
    let none = render_nodes_result(&bp, &tree);
    assert_eq!(none.verdict, Verdict::Fail, "{none:?}");
    for gpu in 0..8u8 {
        render_node(&tree, 128 + u32::from(gpu), gpu);
    }
    // The BMC's display adapter has a DRM device of its own: not a GPU's node.
    tree.file("/dev/dri/renderD200", "");
    tree.file("/dev/dri/card0", "");
    let whole = render_nodes_result(&bp, &tree);
    assert_eq!(whole.verdict, Verdict::Pass, "{whole:?}");
    assert_eq!(whole.observed, "8 for 8 GPUs");
    // A GPU the driver did not set up has no node.
    std::fs::remove_file(tree.local("/dev/dri/renderD131")).unwrap();
    let lost = render_nodes_result(&bp, &tree);
    assert_eq!(lost.verdict, Verdict::Fail, "{lost:?}");
    assert!(
        lost.observed
            .contains(&format!("{} has none", gpu_address(3))),
        "{lost:?}"
    );
    // Compute partitions: a node per partition.
    tree.file("/dev/dri/renderD131", "");
    for n in 136..139 {
        render_node(&tree, n, 0);
    }
    let partitioned = render_nodes_result(&bp, &tree);
    assert_eq!(partitioned.verdict, Verdict::Fail, "{partitioned:?}");
    assert!(
        partitioned
            .observed
            .contains(&format!("{} has 4", gpu_address(0))),
        "{partitioned:?}"
    );
}
