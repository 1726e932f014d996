//! Golden files for every report format and the acceptance record, from the fixture node
//! with a few failures (so every section shows) at a fixed time.
//!
//! Regenerate after an intended change with
//! `NODEIMG_UPDATE_GOLDEN=1 cargo test --test verify_golden`, then review `git diff
//! tests/golden/verify`.

use crate::support::nvidia_smi::SmiLog;
use crate::support::verify_fixture::{self, BLUEPRINT};
use nodeimg::blueprint::compat::Matrix;
use nodeimg::verify::checks::{self, Selection};
use nodeimg::verify::report::record::AcceptanceRecord;
use nodeimg::verify::report::{self, BlueprintRef, Format, Report};
use std::path::{Path, PathBuf};

/// 2026-11-15T10:30:00Z.
const STARTED: u64 = 1_794_738_600;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/verify")
}

fn check(name: &str, actual: &str) -> Option<String> {
    let path = golden_dir().join(name);
    if std::env::var_os("NODEIMG_UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&path, actual).unwrap_or_else(|e| panic!("{e}"));
        return None;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    (expected != actual).then(|| {
        format!(
            "{} differs from the rendering (regenerate with NODEIMG_UPDATE_GOLDEN=1):\n--- golden\n{expected}\n--- actual\n{actual}",
            path.display()
        )
    })
}

#[test]
fn every_format_matches_its_golden_file() {
    let tree = verify_fixture::healthy_tree();
    let mut smi = SmiLog::h100_healthy();
    smi.gpu(0).remapped().pending = "Yes".into();
    let xml = smi.xml();
    tree.attr("/sys/bus/pci/devices/0000:33:00.0/current_link_width", "8");
    tree.attr("/sys/class/infiniband/mlx5_0/ports/1/state", "1: DOWN");
    tree.file(
        "/dev/kmsg",
        "4,2,5000000,-;NVRM: Xid (PCI:0000:53:00): 13, pid=1, name=python3, Graphics Exception\n",
    );
    std::fs::remove_file(tree.local("/sys/class/dmi/id/bios_version"))
        .unwrap_or_else(|e| panic!("{e}"));
    let bp = verify_fixture::blueprint(BLUEPRINT);
    let facts = verify_fixture::facts(&tree, &xml);
    let results = checks::evaluate(bp.spec(), &facts, &Matrix::builtin(), &Selection::default());
    let report = Report::new(
        BlueprintRef {
            name: bp.name().to_owned(),
            version: bp.spec().metadata.version.to_string(),
            id: bp.id().to_owned(),
            file: "/etc/nodeimg/blueprint.lock.json".to_owned(),
        },
        "gpu-node-01".to_owned(),
        "all",
        Vec::new(),
        STARTED,
        12,
        None,
        results,
    );
    let mut problems = Vec::new();
    for format in Format::ALL {
        let name = format!("report.{}.{}", format.name(), format.extension());
        problems.extend(check(&name, &report::render(&report, format)));
    }
    let record = AcceptanceRecord::new(
        bp.spec(),
        &facts,
        &report,
        Some(Path::new(
            "/var/lib/nodeimg/evidence/nodeimg-evidence-gpu-node-01-20261115T103000Z.tar.zst",
        )),
    );
    for file in ["record.yaml", "record.json"] {
        let text = record
            .render_for(Path::new(file))
            .unwrap_or_else(|e| panic!("{e}"));
        problems.extend(check(file, &text));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
