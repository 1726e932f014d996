//! Opt-in suite `real-tools`: the SBOMs of every example blueprint, built
//! with this nodeimg as the verifier (so with its crates), accepted by the
//! formats' reference validators — spdx-tools' `pyspdxtools -i` (SPDX 2.3)
//! and cyclonedx-python-lib's `JsonStrictValidator(SchemaVersion.V1_6)` —
//! from the Python environment `.ci/run` makes (`$NODEIMG_SBOM_VALIDATORS`,
//! default `target/sbom-validators`). Fails when it is missing. Each
//! validator is first shown to refuse a broken document, so a validator
//! that accepts anything cannot pass the test.

use std::path::{Path, PathBuf};
use std::process::Command;

use nodeimg::package::sbom::{self, Format};

use crate::support::{nodeimg, root, stderr, target_dir};

fn validators() -> PathBuf {
    let dir = std::env::var_os("NODEIMG_SBOM_VALIDATORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir().join("sbom-validators"));
    assert!(
        dir.join("bin/pyspdxtools").is_file() && dir.join("bin/python").is_file(),
        "no SBOM validators in {} (.ci/run installs spdx-tools and cyclonedx-python-lib there)",
        dir.display()
    );
    dir
}

const CDX_CHECK: &str = "import sys
from cyclonedx.validation.json import JsonStrictValidator
from cyclonedx.schema import SchemaVersion
v = JsonStrictValidator(SchemaVersion.V1_6)
bad = 0
for f in sys.argv[1:]:
    e = v.validate_str(open(f).read())
    if e is not None:
        print(f, e)
        bad += 1
sys.exit(1 if bad else 0)
";

/// (exit status ok, output) of a validator on `file`.
fn spdx_valid(tools: &Path, file: &Path) -> (bool, String) {
    let o = Command::new(tools.join("bin/pyspdxtools"))
        .arg("-i")
        .arg(file)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success() && !text.contains("invalid"), text)
}

fn cdx_valid(tools: &Path, files: &[PathBuf]) -> (bool, String) {
    let o = Command::new(tools.join("bin/python"))
        .arg("-c")
        .arg(CDX_CHECK)
        .args(files)
        .output()
        .unwrap();
    (
        o.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs the SPDX and CycloneDX reference validators (cargo test -- --ignored)"]
fn reference_validators_accept_the_sbom_of_every_example() {
    let tools = validators();
    let dir = tempfile::tempdir().unwrap();
    let mut examples: Vec<PathBuf> = std::fs::read_dir(root().join("blueprints"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    examples.sort();
    assert!(examples.len() >= 3);
    let mut cdx_files = Vec::new();
    let mut first_spdx = None;
    for bp in &examples {
        let name = bp.file_stem().unwrap().to_string_lossy().into_owned();
        let out = dir.path().join(&name);
        let o = nodeimg(&["build", bp.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        for a in sbom::sbom_referrers(&out).unwrap() {
            let doc =
                std::fs::read(out.join("blobs/sha256").join(a.document.digest.hex())).unwrap();
            let file = dir.path().join(format!("{name}.{}", a.format.file_name()));
            std::fs::write(&file, doc).unwrap();
            match a.format {
                Format::Spdx => {
                    let (ok, text) = spdx_valid(&tools, &file);
                    assert!(ok, "{name}: pyspdxtools refuses the SPDX document:\n{text}");
                    first_spdx.get_or_insert(file);
                }
                Format::Cyclonedx => cdx_files.push(file),
            }
        }
    }
    assert_eq!(cdx_files.len(), examples.len());
    let (ok, text) = cdx_valid(&tools, &cdx_files);
    assert!(ok, "the CycloneDX 1.6 validator refuses:\n{text}");

    // Both validators refuse a broken document: an SPDX file without its
    // SHA-1, a CycloneDX document with an unknown component type.
    let spdx = first_spdx.unwrap();
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&spdx).unwrap()).unwrap();
    doc["files"][0]["checksums"]
        .as_array_mut()
        .unwrap()
        .retain(|c| c["algorithm"] != "SHA1");
    let broken = dir.path().join("broken.spdx.json");
    std::fs::write(&broken, serde_json::to_vec(&doc).unwrap()).unwrap();
    let (ok, text) = spdx_valid(&tools, &broken);
    assert!(!ok && text.contains("SHA1"), "{text}");
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&cdx_files[0]).unwrap()).unwrap();
    doc["components"][0]["type"] = "layer".into();
    let broken = dir.path().join("broken.cdx.json");
    std::fs::write(&broken, serde_json::to_vec(&doc).unwrap()).unwrap();
    assert!(!cdx_valid(&tools, &[broken]).0);
}
