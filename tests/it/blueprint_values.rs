//! Value types, hints and cross-field rules seen from a user's blueprint:
//! the site matrix extends the built-in one, model spellings collapse to
//! one id, releases newer than the matrix warn, located hints for what
//! newcomers write, and files the blueprint names stay inside its folder.

use std::path::{Path, PathBuf};
use std::process::Output;

use nodeimg::blueprint::compat::Matrix;
use nodeimg::blueprint::diagnostic::{Diagnostic, Severity};
use nodeimg::blueprint::load_bytes;
use serde_json::json;

use crate::support::*;

/// An example with text substitutions, loaded as if it sat in blueprints/:
/// the blueprint (if valid) and every diagnostic. Only for diagnostics that
/// point into the text as a user wrote it (line and column, hints for what
/// newcomers type); every other edit goes through `Variant`, by YAML path.
/// Each substitution must match, so an edited example fails here loudly.
fn load_variant(
    name: &str,
    subs: &[(&str, &str)],
    matrix: &Matrix,
) -> (Option<nodeimg::blueprint::Blueprint>, Vec<Diagnostic>) {
    let path = root().join("blueprints").join(format!("{name}.yaml"));
    let mut text = std::fs::read_to_string(&path).unwrap();
    for (a, b) in subs {
        assert!(text.contains(a), "{name} has no `{a}`");
        text = text.replacen(a, b, 1);
    }
    match load_bytes(
        text.as_bytes(),
        &path,
        Some(&root().join("blueprints")),
        matrix,
    ) {
        Ok(l) => (Some(l.blueprint), l.warnings),
        Err(d) => (None, d),
    }
}

fn find<'a>(d: &'a [Diagnostic], code: &str, path: &str) -> &'a Diagnostic {
    d.iter()
        .find(|d| d.code == code && d.path.to_string() == path)
        .unwrap_or_else(|| panic!("no {code} at {path} in {d:#?}"))
}

fn site_matrix() -> PathBuf {
    root().join("blueprints/matrix/site-matrix.yaml")
}

fn with_site() -> Matrix {
    let mut m = Matrix::builtin();
    m.extend_from_file(&site_matrix()).unwrap();
    m
}

fn mi250() -> Variant {
    Variant::of("mi300x-rhel")
        .set("accelerators.model", json!("MI250"))
        .set("os.distro", json!("rocky"))
        .set("os.version", json!("9.5"))
        .set("accelerators.pcie.generation", json!(4))
}

#[test]
fn a_site_matrix_extends_the_builtin_rows_instead_of_replacing_them() {
    // Without the site matrix: MI250 is no known model and ROCm 6.2 does
    // not list Rocky (warnings, which --strict turns into a failure).
    let (bp, d) = mi250().diagnose_with(&Matrix::builtin());
    assert!(bp.is_some(), "{d:#?}");
    find(&d, "unknown-model", "accelerators.model");
    find(&d, "rocm-os", "os.version");
    // With it: valid, and the built-in MI300X/RHEL row still holds.
    let site = with_site();
    let (bp, d) = mi250().diagnose_with(&site);
    assert!(bp.is_some(), "{d:#?}");
    assert!(
        !d.iter()
            .any(|d| d.code == "rocm-os" || d.code == "unknown-model"),
        "{d:#?}"
    );
    let (bp, d) = Variant::of("mi300x-rhel").diagnose_with(&site);
    assert!(bp.is_some() && d.is_empty(), "{d:#?}");
}

#[test]
fn the_cli_reads_the_documented_site_matrix_and_publishes_its_schema() {
    let o = nodeimg(&[
        "validate",
        "--matrix",
        "blueprints/matrix/site-matrix.yaml",
        "blueprints/mi300x-rhel.yaml",
        "blueprints/h100-sxm-ubuntu.yaml",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = nodeimg(&["schema", "--matrix"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let schema: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for section in ["cudaMinimumDriver", "rocm", "models", "rules", "newest"] {
        assert!(
            schema["properties"].get(section).is_some(),
            "{section} missing from the matrix schema"
        );
    }
    // The example validates against the published schema.
    let doc: serde_json::Value = {
        let text = std::fs::read_to_string(site_matrix()).unwrap();
        nodeimg::blueprint::source::parse(&text).unwrap().value
    };
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn model_names_take_the_matrix_spelling_before_the_id() {
    let m = Matrix::builtin();
    let (a, _) = Variant::of("h100-sxm-ubuntu").diagnose_with(&m);
    let (b, d) = Variant::of("h100-sxm-ubuntu")
        .set("accelerators.model", json!("h100 sxm"))
        .diagnose_with(&m);
    let (a, b) = (a.unwrap(), b.unwrap_or_else(|| panic!("{d:#?}")));
    assert_eq!(a.id(), b.id());
    assert_eq!(&*b.spec().accelerators.as_ref().unwrap().model, "H100 SXM");
}

#[test]
fn releases_newer_than_the_matrix_warn_until_a_site_qualifies_them() {
    let newer = Variant::of("h100-sxm-ubuntu").set("kubernetes.version", json!("1.37.1"));
    let (bp, d) = newer.diagnose_with(&Matrix::builtin());
    assert!(bp.is_some(), "a warning, not an error: {d:#?}");
    let w = find(&d, "newer-than-matrix", "kubernetes.version");
    assert_eq!(w.severity, Severity::Warning);
    assert!(
        w.message
            .contains("Kubernetes 1.37.1 is newer than any release"),
        "{w}"
    );
    let (_, d) = newer.diagnose_with(&with_site());
    assert!(!d.iter().any(|d| d.code == "newer-than-matrix"), "{d:#?}");
    let (_, d) = Variant::of("h100-sxm-ubuntu")
        .set("runtime.containerd.version", json!("3.5.0"))
        .diagnose_with(&Matrix::builtin());
    find(&d, "newer-than-matrix", "runtime.containerd.version");
}

#[test]
fn what_newcomers_write_gets_a_hint() {
    let m = Matrix::builtin();
    let hint = |subs: &[(&str, &str)], code: &str, path: &str| {
        let (_, d) = load_variant("h100-sxm-ubuntu", subs, &m);
        let d = find(&d, code, path);
        assert!(d.line.is_some(), "{d}");
        d.hint.clone().unwrap_or_default()
    };
    let h = hint(
        &[("  iommu: passthrough", "  iommu: pt")],
        "invalid-value",
        "boot.iommu",
    );
    assert!(h.contains("`passthrough`"), "{h}");
    let h = hint(
        &[("    width: 16", "    width: x16")],
        "invalid-value",
        "accelerators.pcie.width",
    );
    assert!(h.contains("write the number alone, unquoted: 16"), "{h}");
    let h = hint(
        &[("      linkLayer: ethernet", "      linkLayer: roce")],
        "invalid-value",
        "network.nics[1].linkLayer",
    );
    assert!(
        h.contains("linkLayer: ethernet") && h.contains("rdma: true"),
        "{h}"
    );
    let h = hint(
        &[("  cuda: \"13.0\"\n", "")],
        "missing-field",
        "accelerators",
    );
    assert!(h.contains("cuda: \"12.8\""), "{h}");
    let h = hint(
        &[(
            "  deviceInjection:\n    mode: device-plugin\n    version: 0.18.1\n",
            "",
        )],
        "device-injection",
        "kubernetes.deviceInjection.mode",
    );
    assert!(h.contains("mode: device-plugin"), "{h}");
    let h = hint(
        &[
            (
                "      version: \"580.105.08\"\n  driver:",
                "      version: \"580\"\n  driver:",
            ),
            (
                "    version: \"580.105.08\"\n    authority",
                "    version: \"580\"\n    authority",
            ),
        ],
        "cuda-driver",
        "accelerators.driver.version",
    );
    assert!(
        h.contains("`580` means exactly 580, not the 580 branch"),
        "{h}"
    );
}

#[test]
fn a_missing_field_points_at_the_mapping_that_lacks_it() {
    let (_, d) = load_variant(
        "h100-sxm-ubuntu",
        &[(
            "  deviceInjection:\n    mode: device-plugin\n    version: 0.18.1\n",
            "",
        )],
        &Matrix::builtin(),
    );
    let e = find(&d, "device-injection", "kubernetes.deviceInjection.mode");
    let text = std::fs::read_to_string(root().join("blueprints/h100-sxm-ubuntu.yaml")).unwrap();
    let line = text.lines().position(|l| l == "kubernetes:").unwrap() + 1;
    assert_eq!((e.line, e.column), (Some(line), Some(1)), "{e}");
    // Structural: the `capacity` of `kubernetes`, at `kubernetes:`.
    let (_, d) = load_variant(
        "h100-sxm-ubuntu",
        &[(
            "  capacity:\n    cpu: 224\n    memory: 2Ti\n    ephemeralStorage: 3500Gi\n    numaNodes: 2\n",
            "",
        )],
        &Matrix::builtin(),
    );
    let e = find(&d, "missing-field", "kubernetes");
    assert_eq!((e.line, e.column), (Some(line), Some(1)), "{e}");
    assert!(
        e.hint
            .as_deref()
            .unwrap_or_default()
            .contains("capacity: {cpu:"),
        "{e}"
    );
}

#[test]
fn the_cdi_message_says_when_it_is_the_default() {
    let m = Matrix::builtin();
    let (_, d) = Variant::of("h100-sxm-ubuntu")
        .remove("runtime.cdi.enabled")
        .remove("runtime.cdi.generator")
        .diagnose_with(&m);
    let e = find(&d, "cdi-generator", "runtime.cdi.generator");
    assert!(
        e.message.contains("runtime.cdi.enabled defaults to true"),
        "{e}"
    );
    let (_, d) = Variant::of("h100-sxm-ubuntu")
        .remove("runtime.cdi.generator")
        .diagnose_with(&m);
    let e = find(&d, "cdi-generator", "runtime.cdi.generator");
    assert!(!e.message.contains("defaults"), "{e}");
}

/// A blueprint in a fresh folder naming `certs/ca.pem`, set up by `make`.
fn with_ca(make: impl FnOnce(&Path)) -> Vec<Diagnostic> {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("blueprints/cpu-minimal.yaml"))
        .unwrap()
        .replace(
            "runtime:\n",
            "system:\n  certificates: [{name: corp, file: certs/ca.pem}]\nruntime:\n",
        );
    assert!(text.contains("certs/ca.pem"));
    std::fs::create_dir(dir.path().join("certs")).unwrap();
    make(&dir.path().join("certs/ca.pem"));
    let file = dir.path().join("bp.yaml");
    std::fs::write(&file, &text).unwrap();
    match nodeimg::blueprint::load_file(&file, &Matrix::builtin()) {
        Ok(l) => l.warnings,
        Err(d) => d,
    }
}

#[test]
fn a_fifo_named_as_a_certificate_is_refused_without_blocking() {
    let started = std::time::Instant::now();
    let d = with_ca(|p| {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    });
    let e = find(&d, "named-file", "system.certificates[0].file");
    assert!(e.message.contains("is not a regular file"), "{e}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn a_certificate_must_be_a_certificate_inside_the_folder() {
    let ca = std::fs::read(root().join("blueprints/certs/corp-root-ca.pem")).unwrap();
    let d = with_ca(|p| std::fs::write(p, &ca).unwrap());
    assert!(d.iter().all(|d| d.severity != Severity::Error), "{d:#?}");
    // A link to a file elsewhere on the build machine, even a real certificate.
    let outside = root().join("blueprints/certs/corp-root-ca.pem");
    let d = with_ca(|p| std::os::unix::fs::symlink(&outside, p).unwrap());
    let e = find(&d, "named-file", "system.certificates[0].file");
    assert!(e.message.contains("outside the blueprint's folder"), "{e}");
    // An environment variable dump (the attack: a CI token in the image).
    let d = with_ca(|p| std::os::unix::fs::symlink("/proc/self/environ", p).unwrap());
    find(&d, "named-file", "system.certificates[0].file");
}

fn nodeimg(args: &[&str]) -> Output {
    crate::support::nodeimg(args)
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn validate_exits_2_for_a_file_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    for target in [dir.path().join("missing.yaml"), dir.path().to_path_buf()] {
        let o = nodeimg(&["validate", target.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains("error[unreadable]"), "{}", text(&o));
    }
    // An invalid blueprint stays a negative verdict.
    let o = nodeimg(&["validate", "tests/fixtures/invalid/zero-gpus.yaml"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
}

#[test]
fn validate_refuses_the_overlays_that_build_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let text_bp = std::fs::read_to_string(root().join("blueprints/cpu-minimal.yaml"))
        .unwrap()
        .replace("runtime:\n", "files: {overlay: overlay}\nruntime:\n");
    std::fs::write(dir.path().join("bp.yaml"), text_bp).unwrap();
    let overlay = dir.path().join("overlay/etc/containerd");
    std::fs::create_dir_all(&overlay).unwrap();
    let bp = dir.path().join("bp.yaml");
    let bp = bp.to_str().unwrap();
    // Valid as it stands.
    let o = nodeimg(&["validate", bp]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // A file render also writes.
    std::fs::write(overlay.join("config.toml"), "version = 2\n").unwrap();
    let o = nodeimg(&["validate", bp]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("error[overlay]: files.overlay: `/etc/containerd/config.toml` is produced both by render and by the overlay"),
        "{}",
        text(&o)
    );
    std::fs::remove_file(overlay.join("config.toml")).unwrap();
    // A FIFO.
    let fifo = std::ffi::CString::new(overlay.join("pipe").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let o = nodeimg(&["validate", bp]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("is a FIFO"), "{}", text(&o));
}

#[test]
fn gpus_without_a_repair_template_warn_that_no_repair_queue_is_told() {
    let m = Matrix::builtin();
    let (bp, d) = Variant::of("h100-sxm-ubuntu")
        .remove("rollout.remediation.repair")
        .diagnose_with(&m);
    assert!(bp.is_some(), "a warning, not an error: {d:#?}");
    let w = find(&d, "remediation-repair", "rollout.remediation");
    assert_eq!(w.severity, Severity::Warning);
    // The node is taken out by default (remediation/isolation.yaml); only the repair
    // queue is missing.
    assert!(
        w.message
            .contains("taints the node nodeimg.dev/service-required")
            && w.message.contains("no repair queue is told")
            && !w.message.contains("nothing cordons"),
        "{w}"
    );
    let (_, d) = Variant::of("h100-sxm-ubuntu").diagnose_with(&m);
    assert!(!d.iter().any(|d| d.code == "remediation-repair"), "{d:#?}");
}
