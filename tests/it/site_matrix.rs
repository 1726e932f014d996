//! A blueprint that needs a site matrix (`--matrix`) is valid, renders and
//! builds with it under one id, and the image carries the matrix entries it
//! was validated with: verify loads the lock by schema and id, without
//! re-running the compatibility rules against a matrix the node does not
//! have, and knows a GPU model only the site matrix names. A lock, or the
//! matrix file beside it, that no longer matches the image's id is refused.

use std::path::Path;
use std::process::Output;

use crate::support::{Variant, fixture_tree, root};
use nodeimg::blueprint::compat::Matrix;
use nodeimg::blueprint::identity;
use nodeimg::blueprint::model::Vendor;
use nodeimg::verify::checks::{self, Selection, Verdict};
use nodeimg::verify::{CollectOptions, LiveHost, ToolOutput, collect};
use serde_json::json;

fn nodeimg(dir: &Path, args: &[&str]) -> Output {
    crate::support::cmd()
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().unwrap().is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The H100 example asking for CUDA 13.1, which only the site matrix
/// qualifies with its driver.
fn site_blueprint(dir: &Path) {
    let v = Variant::of("h100-sxm-ubuntu");
    assert_eq!(v.get("accelerators.cuda"), Some(&json!("13.0")));
    v.set("accelerators.cuda", json!("13.1"))
        .write(&dir.join("bp.yaml"));
    // Copies, not links: files a blueprint names must lie inside its folder.
    for sub in ["certs", "overlays"] {
        copy_tree(&root().join("blueprints").join(sub), &dir.join(sub));
    }
    std::fs::write(
        dir.join("site.yaml"),
        "schemaVersion: 1\ncudaMinimumDriver:\n  - cuda: \"13.1\"\n    driver: \"580.100\"\n    source: \"site qualification\"\n",
    )
    .unwrap();
}

/// An 8× MI250 training node on Rocky Linux 9.5 (a model the built-in
/// matrix does not know).
const MI250: &str = r#"apiVersion: nodeimg.dev/v1alpha1
kind: NodeBlueprint
metadata:
  name: mi250-rocky
  version: "2025.06.1"
  description: 4x MI250 (8 GCDs) training node on Rocky Linux 9
os:
  distro: rocky
  version: "9.5"
  kernel: 5.14.0-503.14.1.el9_5.x86_64
  patchLevel: "9.5"
boot:
  iommu: passthrough
firmware:
  bios:
    above4gDecoding: enabled
    iommu: enabled
    numaPerSocket: 1
accelerators:
  vendor: amd
  model: MI250
  count: 8
  rocm: "6.2.4"
  containerToolkit: "1.2.0"
  driver:
    authority: preinstalled
    version: "6.8.5"
  pcie:
    generation: 4
    width: 16
  interconnect:
    gpuLinks: true
network:
  nics:
    - model: ConnectX-6
      count: 4
      speedGbps: 200
      linkLayer: infiniband
      mtu: 4096
      rdma: true
      role: compute
runtime:
  containerd:
    version: "1.7.24"
  cdi:
    generator: amd-ctk
kubernetes:
  version: "1.31.4"
  deviceInjection:
    mode: device-plugin
  capacity:
    cpu: 128
    memory: 1Ti
  kubelet:
    kubeReserved:
      policy: eks
"#;

/// The site matrix that qualifies it: the MI250 model, with the name
/// rocm-smi reports as an alias, and Rocky for ROCm 6.2.
const SITE_MATRIX: &str = r#"schemaVersion: 1
models:
  - vendor: amd
    model: "MI250"
    aliases: ["AMD Instinct MI250X/MI250"]
    mig: false
    maxMigInstances: 0
    nvswitch: false
    pcieGen: 4
    pcieWidth: 16
    source: "site qualification 2025-06"
rocm:
  - rocm: "6.2"
    gpus: ["MI250"]
    os: ["rocky 9.5", "rocky 9.4"]
    source: "site qualification: Rocky is RHEL-compatible"
"#;

fn mi250_blueprint(dir: &Path) {
    std::fs::write(dir.join("mi250.yaml"), MI250).unwrap();
    std::fs::write(dir.join("site-matrix.yaml"), SITE_MATRIX).unwrap();
}

#[test]
fn validate_render_build_and_verify_agree_with_a_site_matrix() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    site_blueprint(d);
    // Without the site matrix it is invalid; with it, every stage agrees.
    assert_eq!(code(&nodeimg(d, &["validate", "bp.yaml"])), 1);
    for args in [
        vec!["validate", "--matrix", "site.yaml", "bp.yaml"],
        vec!["render", "--matrix", "site.yaml", "bp.yaml", "-o", "r"],
        vec!["build", "--matrix", "site.yaml", "bp.yaml", "-o", "oci"],
    ] {
        let o = nodeimg(d, &args);
        assert_eq!(code(&o), 0, "{args:?}: {}", err(&o));
    }
    // Verify on the node: no --matrix. An empty root fails checks (1), but
    // the lock itself is usable (not 2).
    std::fs::create_dir(d.join("root")).unwrap();
    let lock = "r/layer/etc/nodeimg/blueprint.lock.json";
    let o = nodeimg(d, &["verify", "--blueprint", lock, "--root", "root"]);
    assert_eq!(code(&o), 1, "{}", err(&o));
    // An altered lock no longer hashes to the image's id: refused.
    let text = std::fs::read_to_string(d.join(lock)).unwrap();
    Variant::parse(lock, &text)
        .set("blueprint.accelerators.cuda", json!("13.0"))
        .write(&d.join(lock));
    let o = nodeimg(d, &["verify", "--blueprint", lock, "--root", "root"]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("altered"), "{}", err(&o));
}

/// The id `validate` prints for the first blueprint in its output.
fn validated_id(o: &Output) -> String {
    out(o)
        .split_whitespace()
        .find(|w| w.starts_with("sha256:"))
        .unwrap_or_else(|| panic!("no id in {}", out(o)))
        .to_string()
}

#[test]
fn a_model_only_the_site_matrix_knows_is_known_at_boot() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    mi250_blueprint(d);
    let m = ["--matrix", "site-matrix.yaml"];
    let o = nodeimg(d, &[&["validate"][..], &m, &["mi250.yaml"]].concat());
    assert_eq!(code(&o), 0, "{}", err(&o));
    let id = validated_id(&o);
    let o = nodeimg(
        d,
        &[&["render"][..], &m, &["mi250.yaml", "-o", "r"]].concat(),
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let o = nodeimg(
        d,
        &[&["build"][..], &m, &["mi250.yaml", "-o", "oci"]].concat(),
    );
    assert_eq!(code(&o), 0, "{}", err(&o));

    // The rendered id is the validated one, and so is the image's label.
    let etc = d.join("r/layer/etc/nodeimg");
    let rendered_id = std::fs::read_to_string(etc.join("blueprint.id")).unwrap();
    assert_eq!(rendered_id.trim(), id);
    let oci = walk_text(&d.join("oci"));
    assert!(
        oci.contains(&format!("\"dev.nodeimg.blueprint.id\":\"{id}\"")),
        "the image config does not carry {id}"
    );

    // The matrix entries beside the lock hold the site's MI250 row and the
    // site's ROCm 6.2 row; verify (the same loader) checks against them.
    let lock = etc.join("blueprint.lock.json");
    let bp = identity::load_lock_file(&lock).unwrap();
    assert_eq!(bp.id(), id);
    let matrix = bp.identity().matrix();
    let mi250 = matrix
        .model(Vendor::Amd, "AMD Instinct MI250X/MI250")
        .unwrap();
    assert_eq!(mi250.model, "MI250");
    assert_eq!(matrix.rocm.len(), 1);
    assert!(matrix.rocm[0].os.iter().any(|o| o == "rocky 9.5"));
    assert!(
        Matrix::builtin().model(Vendor::Amd, "MI250").is_none(),
        "the built-in matrix learnt MI250: this test no longer shows the site's entry at work"
    );

    // Eight MI250s as rocm-smi names them: the model check passes with the
    // image's matrix, and would fail with the built-in one.
    let tree = fixture_tree::mi300x_node();
    let json = fixture_tree::mi300x_rocm_smi_json()
        .replace("AMD Instinct MI300X", "AMD Instinct MI250X/MI250");
    let facts = collect(
        &LiveHost::new(tree.root()),
        &CollectOptions {
            nvidia_smi: ToolOutput::Skip,
            rocm_smi: ToolOutput::Provided(json),
            runtime_commands: false,
            ..CollectOptions::default()
        },
    );
    let model_verdicts = |m: &Matrix| -> Vec<Verdict> {
        checks::evaluate(bp.spec(), &facts, m, &Selection::default())
            .into_iter()
            .filter(|r| r.id() == "gpu.model")
            .map(|r| r.verdict)
            .collect()
    };
    let with_image = model_verdicts(matrix);
    assert_eq!(with_image.len(), 8, "{with_image:?}");
    assert!(
        with_image.iter().all(|v| *v == Verdict::Pass),
        "{with_image:?}"
    );
    assert!(
        model_verdicts(&Matrix::builtin())
            .iter()
            .all(|v| *v != Verdict::Pass),
        "the built-in matrix already accepts the name"
    );

    // On the node, without --matrix: the lock and its matrix are usable.
    std::fs::create_dir(d.join("root")).unwrap();
    let lock_arg = "r/layer/etc/nodeimg/blueprint.lock.json";
    let o = nodeimg(d, &["verify", "--blueprint", lock_arg, "--root", "root"]);
    assert_eq!(code(&o), 1, "{}", err(&o));

    // A matrix file altered after the build is refused (exit 2).
    let mpath = etc.join("blueprint.matrix.json");
    let text = std::fs::read_to_string(&mpath).unwrap();
    assert!(text.contains("AMD Instinct MI250X/MI250"));
    std::fs::write(&mpath, text.replace("MI250X/MI250", "MI250X")).unwrap();
    let o = nodeimg(d, &["verify", "--blueprint", lock_arg, "--root", "root"]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(
        err(&o).contains("blueprint.matrix.json") && err(&o).contains("altered"),
        "{}",
        err(&o)
    );
    // So is a missing one.
    std::fs::remove_file(&mpath).unwrap();
    let o = nodeimg(d, &["verify", "--blueprint", lock_arg, "--root", "root"]);
    assert_eq!(code(&o), 2, "{}", err(&o));
}

/// Every small text file under `dir`, concatenated (the layout's JSON).
fn walk_text(dir: &Path) -> String {
    let mut s = String::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            s.push_str(&walk_text(&p));
        } else if let Ok(t) = std::fs::read_to_string(&p)
            && t.len() < 1 << 20
        {
            s.push_str(&t);
        }
    }
    s
}

#[test]
fn the_lock_loads_as_trusted_input_with_its_id() {
    let bp = crate::support::example("h100-sxm-ubuntu");
    let lock = nodeimg::render::lock_json(&bp);
    let matrix = bp.identity().matrix_text();
    let path = Path::new("blueprint.lock.json");
    let back = identity::load_lock(lock.as_bytes(), matrix.as_bytes(), path, bp.id()).unwrap();
    assert_eq!(back.id(), bp.id());
    assert_eq!(back.identity().lock_text(), lock);
    assert!(identity::load_lock(lock.as_bytes(), matrix.as_bytes(), path, "sha256:00").is_err());
    let other = matrix.replacen("\"source\": \"", "\"source\": \"x", 1);
    assert_ne!(other, matrix);
    assert!(identity::load_lock(lock.as_bytes(), other.as_bytes(), path, bp.id()).is_err());
}
