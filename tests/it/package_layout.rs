//! The OCI image layout `package::build` writes: structure, digests,
//! annotations, the layer's tar entries, atomic replacement and refusals.
//! Everything is read back with independent code (sha256 of files, the
//! zstd/flate2 decoders, the tar reader), not with the packager's own types.

use std::io::Read;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use nodeimg::package::{
    self, BuildOptions, BuildReport, Compression, ImageMeta, Inputs, LayerRole, Overlay,
    PackageError, Silent, SourceDate, Verifier,
};
use nodeimg::tree::Tree;
use serde_json::Value;

use crate::support::package::{meta, sha256, tree, tree_of};

fn overlay_dir(root: &Path) -> PathBuf {
    let ov = root.join("overlay");
    std::fs::create_dir_all(ov.join("usr/local/bin")).unwrap();
    std::fs::create_dir_all(ov.join("etc/nodeimg")).unwrap();
    std::fs::write(ov.join("etc/nodeimg/motd"), b"GPU node\n").unwrap();
    std::fs::write(ov.join("usr/local/bin/burn-in"), b"#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(
        ov.join("usr/local/bin/burn-in"),
        std::fs::Permissions::from_mode(0o700),
    )
    .unwrap();
    std::fs::write(ov.join("usr/local/bin/key"), b"k").unwrap();
    symlink("burn-in", ov.join("usr/local/bin/bi")).unwrap();
    ov
}

fn opts(compression: Compression) -> BuildOptions {
    BuildOptions {
        compression,
        zstd_workers: 2,
        source_date: SourceDate::new(1_700_000_000).unwrap(),
        cache: false,
        user_cache: None,
    }
}

const VERIFIER: &[u8] = b"#!/bin/sh\n# stand-in verifier (tests)\nexit 2\n";

fn verifier() -> Verifier {
    Verifier::unchecked("stand-in", VERIFIER.to_vec())
}

fn build(
    tree: &Tree,
    overlay: Option<&Overlay>,
    meta: &ImageMeta,
    opts: &BuildOptions,
    out: &Path,
) -> Result<BuildReport, PackageError> {
    let v = verifier();
    let inputs = Inputs {
        config: tree,
        verifier: &v,
        overlay,
        sbom: None,
    };
    package::build(inputs, meta, opts, out, &mut Silent)
}

/// The decompressed tar of the layer with `role`.
fn layer_tar(out: &Path, r: &BuildReport, role: LayerRole) -> Vec<u8> {
    let l = r.image.layer(role).unwrap();
    let bytes = blob(out, &l.digest.to_string());
    match l.compression {
        Compression::Zstd => zstd::decode_all(bytes.as_slice()).unwrap(),
        Compression::Gzip => {
            let mut tar = Vec::new();
            flate2::read::GzDecoder::new(bytes.as_slice())
                .read_to_end(&mut tar)
                .unwrap();
            tar
        }
    }
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn blob(out: &Path, digest: &str) -> Vec<u8> {
    let hex = digest.strip_prefix("sha256:").unwrap();
    std::fs::read(out.join("blobs/sha256").join(hex)).unwrap()
}

/// (path, type, mode, uid, gid, mtime, link, contents) of every tar entry.
type TarEntry = (String, char, u32, u64, u64, u64, Option<String>, Vec<u8>);
/// (path, type, mode, link, contents).
type Seen = (String, char, u32, Option<String>, Vec<u8>);

fn tar_entries(tar: &[u8]) -> Vec<TarEntry> {
    let mut ar = tar::Archive::new(tar);
    let mut v = Vec::new();
    for e in ar.entries().unwrap() {
        let mut e = e.unwrap();
        let h = e.header().clone();
        assert!(h.as_ustar().is_some(), "every header is ustar");
        assert_eq!(h.username_bytes(), Some(&b""[..]));
        assert_eq!(h.groupname_bytes(), Some(&b""[..]));
        let path = e.path().unwrap().to_string_lossy().into_owned();
        let link = e
            .link_name()
            .unwrap()
            .map(|l| l.to_string_lossy().into_owned());
        let mut body = Vec::new();
        e.read_to_end(&mut body).unwrap();
        v.push((
            path,
            char::from(h.entry_type().as_byte()),
            h.mode().unwrap(),
            h.uid().unwrap(),
            h.gid().unwrap(),
            h.mtime().unwrap(),
            link,
            body,
        ));
    }
    v
}

#[test]
fn layout_documents_and_layer_are_what_they_claim() {
    let dir = tempfile::tempdir().unwrap();
    let ov = Overlay::new(overlay_dir(dir.path())).with_mode("/usr/local/bin/key", 0o400);
    let out = dir.path().join("out");
    let report = build(&tree(), Some(&ov), &meta(), &opts(Compression::Zstd), &out).unwrap();

    assert_eq!(
        json(&out.join("oci-layout")),
        serde_json::json!({"imageLayoutVersion": "1.0.0"})
    );
    let index = json(&out.join("index.json"));
    assert_eq!(index["schemaVersion"], 2);
    assert_eq!(
        index["mediaType"],
        "application/vnd.oci.image.index.v1+json"
    );
    let m = &index["manifests"][0];
    assert_eq!(
        m["annotations"]["org.opencontainers.image.ref.name"],
        "2026.11.1"
    );
    assert_eq!(
        m["platform"],
        serde_json::json!({"architecture": "amd64", "os": "linux"})
    );

    // Every blob is named by its own digest.
    for entry in std::fs::read_dir(out.join("blobs/sha256")).unwrap() {
        let entry = entry.unwrap();
        let bytes = std::fs::read(entry.path()).unwrap();
        assert_eq!(
            sha256(&bytes),
            format!("sha256:{}", entry.file_name().to_string_lossy())
        );
    }
    let manifest_bytes = blob(&out, m["digest"].as_str().unwrap());
    assert_eq!(m["size"], manifest_bytes.len());
    assert_eq!(m["digest"], report.image.manifest.digest.to_string());
    let manifest: Value = serde_json::from_slice(&manifest_bytes).unwrap();
    assert_eq!(
        manifest["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    let ann = &manifest["annotations"];
    assert_eq!(ann["org.opencontainers.image.title"], "h100-sxm-ubuntu");
    assert_eq!(ann["org.opencontainers.image.version"], "2026.11.1");
    assert_eq!(ann["dev.nodeimg.blueprint.id"], meta().blueprint_id);
    assert_eq!(
        ann["org.opencontainers.image.created"],
        "2023-11-14T22:13:20Z"
    );

    let config: Value =
        serde_json::from_slice(&blob(&out, manifest["config"]["digest"].as_str().unwrap()))
            .unwrap();
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.oci.image.config.v1+json"
    );
    assert_eq!(config["created"], "2023-11-14T22:13:20Z");
    assert_eq!(
        (config["architecture"].as_str(), config["os"].as_str()),
        (Some("amd64"), Some("linux"))
    );
    assert_eq!(
        config["config"]["Labels"]["dev.nodeimg.blueprint.id"],
        meta().blueprint_id
    );

    // Three layers, bottom to top, each named by its role and holding
    // only its own entries; the config lists their diff_ids in order.
    assert_eq!(config["rootfs"]["type"], "layers");
    let descs = manifest["layers"].as_array().unwrap();
    let roles: Vec<&str> = descs
        .iter()
        .map(|d| d["annotations"]["dev.nodeimg.layer.role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["overlay", "verifier", "config"]);
    let history: Vec<&str> = config["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["created_by"].as_str().unwrap())
        .collect();
    assert_eq!(
        history,
        [
            "nodeimg build: overlay layer",
            "nodeimg build: verifier layer",
            "nodeimg build: config layer"
        ]
    );
    let t = 1_700_000_000;
    let mut tars = Vec::new();
    for (i, desc) in descs.iter().enumerate() {
        assert_eq!(
            desc["mediaType"],
            "application/vnd.oci.image.layer.v1.tar+zstd"
        );
        let layer = blob(&out, desc["digest"].as_str().unwrap());
        assert_eq!(desc["size"], layer.len());
        let tar = zstd::decode_all(layer.as_slice()).unwrap();
        assert_eq!(config["rootfs"]["diff_ids"][i], sha256(&tar));
        assert_eq!(report.image.layers[i].diff_id.to_string(), sha256(&tar));
        assert_eq!(report.image.layers[i].tar_size, tar.len() as u64);
        let got: Vec<Seen> = tar_entries(&tar)
            .into_iter()
            .map(|(p, ty, mode, uid, gid, mtime, link, body)| {
                assert_eq!((uid, gid, mtime), (0, 0, t), "{p}");
                (p, ty, mode, link, body)
            })
            .collect();
        tars.push(got);
    }
    assert_eq!(config["rootfs"]["diff_ids"].as_array().unwrap().len(), 3);
    let d = |p: &str, mode| (p.to_string(), '5', mode, None, vec![]);
    let f = |p: &str, mode, body: &[u8]| (p.to_string(), '0', mode, None, body.to_vec());
    let l = |p: &str, target: &str| (p.to_string(), '2', 0o777, Some(target.to_string()), vec![]);
    assert_eq!(
        tars[0],
        vec![
            d("etc/", 0o755),
            d("etc/nodeimg/", 0o755),
            f("etc/nodeimg/motd", 0o644, b"GPU node\n"),
            d("usr/", 0o755),
            d("usr/local/", 0o755),
            d("usr/local/bin/", 0o755),
            l("usr/local/bin/bi", "burn-in"),
            f("usr/local/bin/burn-in", 0o755, b"#!/bin/sh\nexit 0\n"),
            f("usr/local/bin/key", 0o400, b"k"),
        ]
    );
    assert_eq!(
        tars[1],
        vec![
            d("usr/", 0o755),
            d("usr/local/", 0o755),
            d("usr/local/bin/", 0o755),
            f("usr/local/bin/nodeimg", 0o755, VERIFIER),
        ]
    );
    assert_eq!(
        tars[2],
        vec![
            d("etc/", 0o755),
            d("etc/containerd/", 0o755),
            f("etc/containerd/config.toml", 0o644, b"version = 3\n"),
            l("etc/kubelet.conf", "/var/lib/kubelet/config.yaml"),
            d("etc/nodeimg/", 0o755),
            f("etc/nodeimg/blueprint.lock.json", 0o600, b"{}"),
            d("etc/ssh/", 0o755),
            d("etc/ssh/sshd_config.d/", 0o700),
        ]
    );

    // The tool version is recorded beside the image, never in a blob.
    let prov = json(&out.join("provenance.json"));
    assert_eq!(prov["builder"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        prov["manifest"]["digest"],
        report.image.manifest.digest.to_string()
    );
    assert_eq!(prov["layers"][2]["role"], "config");
    assert_eq!(prov["layers"][2]["diffId"], config["rootfs"]["diff_ids"][2]);
    for entry in std::fs::read_dir(out.join("blobs/sha256")).unwrap() {
        let text =
            String::from_utf8_lossy(&std::fs::read(entry.unwrap().path()).unwrap()).into_owned();
        assert!(!text.contains("\"builder\""));
    }
}

#[test]
fn gzip_layer_holds_the_same_tar() {
    let dir = tempfile::tempdir().unwrap();
    let ov = Overlay::new(overlay_dir(dir.path()));
    let (zo, go) = (dir.path().join("z"), dir.path().join("g"));
    let z = build(&tree(), Some(&ov), &meta(), &opts(Compression::Zstd), &zo).unwrap();
    let g = build(&tree(), Some(&ov), &meta(), &opts(Compression::Gzip), &go).unwrap();
    for (zl, gl) in z.image.layers.iter().zip(&g.image.layers) {
        assert_eq!(zl.diff_id, gl.diff_id);
        assert_ne!(zl.digest, gl.digest);
        assert_eq!(gl.media_type, "application/vnd.oci.image.layer.v1.tar+gzip");
        assert_eq!(sha256(&layer_tar(&go, &g, gl.role)), gl.diff_id.to_string());
    }
}

#[test]
fn source_date_epoch_sets_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(Compression::Zstd);
    o.source_date = SourceDate::new(0).unwrap();
    let a = build(&tree(), None, &meta(), &o, &dir.path().join("a")).unwrap();
    for role in [LayerRole::Verifier, LayerRole::Config] {
        let tar = layer_tar(&dir.path().join("a"), &a, role);
        assert!(tar_entries(&tar).iter().all(|e| e.5 == 0));
    }
    assert_eq!(a.image.created, "1970-01-01T00:00:00Z");
    o.source_date = SourceDate::new(86_400).unwrap();
    let b = build(&tree(), None, &meta(), &o, &dir.path().join("b")).unwrap();
    assert_ne!(a.image.layers[1].diff_id, b.image.layers[1].diff_id);
    assert_ne!(a.image.manifest.digest, b.image.manifest.digest);
}

fn hidden_entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect()
}

#[test]
fn a_failed_build_leaves_the_earlier_output_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let ov_root = overlay_dir(dir.path());
    let out = dir.path().join("out");
    let o = opts(Compression::Zstd);
    build(&tree(), Some(&Overlay::new(&ov_root)), &meta(), &o, &out).unwrap();
    let before = tree_of(&out);

    // A socket in the overlay: refused, naming the path.
    let sock = ov_root.join("etc/nodeimg/agent.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let err = build(&tree(), Some(&Overlay::new(&ov_root)), &meta(), &o, &out).unwrap_err();
    assert!(matches!(err, PackageError::Overlay { .. }), "{err}");
    assert!(err.to_string().contains("etc/nodeimg/agent.sock"), "{err}");
    assert!(err.to_string().contains("socket"), "{err}");
    assert_eq!(tree_of(&out), before);
    assert!(
        hidden_entries(dir.path()).is_empty(),
        "{:?}",
        hidden_entries(dir.path())
    );
    drop(_listener);
    std::fs::remove_file(&sock).unwrap();

    // A path from render and from the overlay.
    std::fs::create_dir_all(ov_root.join("etc/containerd")).unwrap();
    std::fs::write(ov_root.join("etc/containerd/config.toml"), b"x").unwrap();
    let err = build(&tree(), Some(&Overlay::new(&ov_root)), &meta(), &o, &out)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`/etc/containerd/config.toml`") && err.contains("both"),
        "{err}"
    );
    assert_eq!(tree_of(&out), before);
    assert!(hidden_entries(dir.path()).is_empty());
}

#[test]
fn refuses_to_overwrite_what_is_not_a_layout() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("precious");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("notes.txt"), b"mine").unwrap();
    let err = build(&tree(), None, &meta(), &opts(Compression::Zstd), &out)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("precious") && err.contains("not an OCI image layout"),
        "{err}"
    );
    assert_eq!(std::fs::read(out.join("notes.txt")).unwrap(), b"mine");
}

#[test]
fn overlay_and_meta_come_from_a_real_blueprint() {
    let matrix = nodeimg::blueprint::compat::Matrix::builtin();
    let loaded =
        nodeimg::blueprint::load_file(Path::new("blueprints/h100-sxm-ubuntu.yaml"), &matrix)
            .unwrap();
    let bp = loaded.blueprint;
    let meta = ImageMeta::from_blueprint(&bp).unwrap();
    assert_eq!(meta.name, "h100-sxm-ubuntu");
    assert_eq!(meta.tag.as_str(), bp.spec().metadata.version.as_str());
    assert_eq!(meta.blueprint_id, bp.id());
    let ov = Overlay::from_blueprint(&bp).unwrap();
    assert_eq!(ov.root(), Path::new("blueprints/overlays/h100"));

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let r = build(
        &Tree::new(),
        Some(&ov),
        &meta,
        &opts(Compression::Zstd),
        &out,
    )
    .unwrap();
    let tar = layer_tar(&out, &r, LayerRole::Overlay);
    let motd = std::fs::read("blueprints/overlays/h100/etc/nodeimg/motd").unwrap();
    let entries = tar_entries(&tar);
    let found = entries
        .iter()
        .find(|e| e.0 == "etc/nodeimg/motd")
        .expect("the overlay file is in the layer");
    assert_eq!((found.2, &found.7), (0o644, &motd));
    let index = json(&out.join("index.json"));
    assert_eq!(
        index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"],
        bp.spec().metadata.version.as_str()
    );
}

/// The overlay layer packed before the blueprint id exists
/// (`package::prepacked`): the digests it gives are those of the files'
/// bytes, and the build takes the layer as it is, the image the one a build
/// that packs the overlay after gives. When the rendered tree changes what
/// the layer holds (here a folder render makes with mode 0700), the layer is
/// packed again and the image is still that one. Nothing is left beside OUT.
#[test]
fn an_overlay_layer_packed_first_is_the_one_packed_after() {
    let dir = tempfile::tempdir().unwrap();
    let src = overlay_dir(dir.path());
    let o = opts(Compression::Zstd);
    for (name, render_folder) in [("same", false), ("folder", true)] {
        if render_folder {
            let d = src.join("etc/ssh/sshd_config.d");
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("extra.conf"), b"X11Forwarding no\n").unwrap();
        }
        let ov = Overlay::new(&src);
        let listing = ov.listing().unwrap();
        let out = dir.path().join(name);
        let cached = package::cache::Cache::open(&out);
        let (packed, sums) =
            package::prepacked::pack(&ov, &listing, &o, &cached, &out, &mut Silent)
                .unwrap()
                .expect("no cache: packed");
        let packed_digest = packed.layer().digest.clone();
        assert_eq!(sums.len(), listing.len());
        for (e, sum) in listing.iter().zip(&sums) {
            let want = e
                .source
                .symlink_metadata()
                .unwrap()
                .is_file()
                .then(|| sha256(&std::fs::read(&e.source).unwrap()));
            assert_eq!(sum, &want, "{}", e.path);
        }
        let v = verifier();
        let config = tree();
        let inputs = Inputs {
            config: &config,
            verifier: &v,
            overlay: Some(&ov),
            sbom: None,
        };
        let before = package::Before {
            prepacked: Some(packed),
            ..Default::default()
        };
        let early = package::build_with(inputs, &meta(), &o, &out, before, &mut Silent).unwrap();
        let plain = build(
            &config,
            Some(&ov),
            &meta(),
            &o,
            &dir.path().join(format!("{name}-plain")),
        )
        .unwrap();
        assert_eq!(early.image.manifest, plain.image.manifest, "{name}");
        assert_eq!(early.image.layers, plain.image.layers, "{name}");
        let overlay_layer = &early.image.layer(LayerRole::Overlay).unwrap().digest;
        assert_eq!(overlay_layer == &packed_digest, !render_folder, "{name}");
        let blobs: Vec<_> = std::fs::read_dir(out.join("blobs/sha256"))
            .unwrap()
            .collect();
        let plain_blobs: Vec<_> =
            std::fs::read_dir(dir.path().join(format!("{name}-plain/blobs/sha256")))
                .unwrap()
                .collect();
        assert_eq!(blobs.len(), plain_blobs.len(), "no stray blob");
        assert_eq!(hidden_entries(dir.path()), Vec::<String>::new());
    }
}
