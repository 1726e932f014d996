//! Package fixtures: the image identity, a small rendered tree with every entry kind,
//! and a sha256 written independently of the packager's own `Digest`, so tests read
//! the layout back with code that is not under test.

use nodeimg::package::ImageMeta;
use nodeimg::tree::Tree;
use sha2::{Digest as _, Sha256};

/// The identity of the test image.
pub fn meta() -> ImageMeta {
    ImageMeta {
        name: "h100-sxm-ubuntu".into(),
        version: "2026.11.1".into(),
        blueprint_id: format!("sha256:{}", "ab".repeat(32)),
        tag: "2026.11.1".parse().unwrap(),
        architecture: "amd64".into(),
        os: "linux".into(),
    }
}

/// What the test image's SBOM says about the base OS (no overlay digests:
/// the build hashes an overlay itself then).
pub fn sbom_source() -> nodeimg::package::sbom::Source<'static> {
    nodeimg::package::sbom::Source {
        distro: nodeimg::blueprint::model::Distro::Ubuntu,
        os_version: "22.04".into(),
        patch_level: "2026-11-15".into(),
        kernel: "5.15.0-171-generic".into(),
        overlay: None,
    }
}

/// A rendered tree with a file, a private file, a private folder and a symlink.
pub fn tree() -> Tree {
    let mut t = Tree::new();
    t.add_file(
        "etc/containerd/config.toml",
        0o644,
        b"version = 3\n".to_vec(),
    )
    .unwrap();
    t.add_file("etc/nodeimg/blueprint.lock.json", 0o600, b"{}".to_vec())
        .unwrap();
    t.add_dir("etc/ssh/sshd_config.d", 0o700).unwrap();
    t.add_symlink("etc/kubelet.conf", "/var/lib/kubelet/config.yaml")
        .unwrap();
    t
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}
