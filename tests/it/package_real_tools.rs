//! Real consumers of the image: skopeo reads the OCI layout, GNU tar
//! extracts the layer blob, and `nodeimg push` talks to Debian's
//! `docker-registry` (distribution 2.8), started here on 127.0.0.1 with a
//! free port and a temporary storage folder, once without and once with
//! htpasswd authentication, with skopeo pulling the image back.
//!
//! Needs: skopeo, zstd, tar, docker-registry, apache2-utils (htpasswd).
//! An opt-in suite, run by `cargo test -- --ignored`; a missing tool fails the test.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nodeimg::package::verifier::stand_in_elf;
use nodeimg::package::{
    self, BuildOptions, BuildReport, Compression, Inputs, LayerRole, Overlay, Silent, SourceDate,
    Verifier,
};
use nodeimg::tree::Tree;

use crate::support::package::{meta, sha256, tree_of};
use crate::support::registry::{Registry, free_port};

fn run(cmd: &mut Command) -> Output {
    let shown = format!("{cmd:?}");
    cmd.stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e} (install the real-tools packages)"))
}

fn run_ok(cmd: &mut Command) -> Output {
    let shown = format!("{cmd:?}");
    let out = run(cmd);
    assert!(
        out.status.success(),
        "{shown} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The shared tree, plus a path too long for a plain tar header.
fn tree() -> Tree {
    let mut t = crate::support::package::tree();
    let deep = format!("opt/{}/{}", "long-dir-name".repeat(9), "f".repeat(120));
    t.add_file(&deep, 0o644, b"deep".to_vec()).unwrap();
    t
}

/// An overlay with an executable, a link and `random_bytes` of noise.
fn overlay(root: &Path, random_bytes: usize) -> Overlay {
    let ov = root.join("overlay");
    std::fs::create_dir_all(ov.join("usr/local/bin")).unwrap();
    std::fs::write(ov.join("usr/local/bin/burn-in"), b"#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(
        ov.join("usr/local/bin/burn-in"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    symlink("burn-in", ov.join("usr/local/bin/bi")).unwrap();
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let noise: Vec<u8> = (0..random_bytes)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(ov.join("usr/local/bin/blob.bin"), noise).unwrap();
    Overlay::new(ov)
}

fn build(dir: &Path, name: &str, compression: Compression, random_bytes: usize) -> BuildReport {
    let ov = overlay(&dir.join(format!("src-{name}")), random_bytes);
    build_with(&tree(), &ov, compression, &dir.join(name))
}

fn build_with(tree: &Tree, ov: &Overlay, compression: Compression, out: &Path) -> BuildReport {
    let opts = BuildOptions {
        compression,
        zstd_workers: 2,
        source_date: SourceDate::new(1_700_000_000).unwrap(),
        cache: true,
        user_cache: None,
    };
    let verifier = Verifier::golden_stand_in();
    let sbom = crate::support::package::sbom_source();
    let inputs = Inputs {
        config: tree,
        verifier: &verifier,
        overlay: Some(ov),
        sbom: Some(&sbom),
    };
    package::build(inputs, &meta(), &opts, out, &mut Silent).unwrap()
}

fn expected_tree(random_bytes: usize, src: &Path) -> BTreeMap<String, (char, u32, Vec<u8>)> {
    let deep_dir = format!("opt/{}", "long-dir-name".repeat(9));
    let mut m = BTreeMap::new();
    let d = |m: &mut BTreeMap<_, _>, p: &str, mode| {
        m.insert(p.to_string(), ('d', mode, vec![]));
    };
    for p in [
        "etc",
        "etc/containerd",
        "etc/nodeimg",
        "etc/ssh",
        "opt",
        "usr",
        "usr/local",
        "usr/local/bin",
    ] {
        d(&mut m, p, 0o755);
    }
    d(&mut m, &deep_dir, 0o755);
    d(&mut m, "etc/ssh/sshd_config.d", 0o700);
    let f = |m: &mut BTreeMap<_, _>, p: &str, mode, b: &[u8]| {
        m.insert(p.to_string(), ('f', mode, b.to_vec()));
    };
    f(
        &mut m,
        "etc/containerd/config.toml",
        0o644,
        b"version = 3\n",
    );
    f(&mut m, "etc/nodeimg/blueprint.lock.json", 0o600, b"{}");
    f(
        &mut m,
        &format!("{deep_dir}/{}", "f".repeat(120)),
        0o644,
        b"deep",
    );
    f(
        &mut m,
        "usr/local/bin/burn-in",
        0o755,
        b"#!/bin/sh\nexit 0\n",
    );
    let noise = std::fs::read(src.join("overlay/usr/local/bin/blob.bin")).unwrap();
    assert_eq!(noise.len(), random_bytes);
    f(&mut m, "usr/local/bin/blob.bin", 0o644, &noise);
    f(&mut m, "usr/local/bin/nodeimg", 0o755, &stand_in_elf());
    m.insert(
        "etc/kubelet.conf".into(),
        ('l', 0, b"/var/lib/kubelet/config.yaml".to_vec()),
    );
    m.insert("usr/local/bin/bi".into(), ('l', 0, b"burn-in".to_vec()));
    m
}

fn skopeo() -> Command {
    let mut c = Command::new("skopeo");
    c.args(["--command-timeout", "120s"]);
    c
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs skopeo, GNU tar and docker-registry (cargo test -- --ignored)"]
fn skopeo_accepts_the_layout() {
    let dir = tempfile::tempdir().unwrap();
    let r = build(dir.path(), "out", Compression::Zstd, 1000);
    // index.json lists the image and its two SBOM referrers; the tag still
    // names the image.
    assert_eq!(r.image.sbom.len(), 2);
    let src = format!("oci:{}:2026.11.1", r.out.display());
    let out = run_ok(skopeo().args(["inspect", &src]));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["Digest"], r.image.manifest.digest.to_string());
    assert_eq!(v["Created"], "2023-11-14T22:13:20Z");
    let layers: Vec<String> = r
        .image
        .layers
        .iter()
        .map(|l| l.digest.to_string())
        .collect();
    assert_eq!(v["Layers"], serde_json::json!(layers));
    assert_eq!(
        v["Labels"]["org.opencontainers.image.title"],
        "h100-sxm-ubuntu"
    );

    let copy = dir.path().join("copy");
    run_ok(skopeo().args(["copy", &src, &format!("dir:{}", copy.display())]));
    let manifest = std::fs::read(copy.join("manifest.json")).unwrap();
    assert_eq!(sha256(&manifest), r.image.manifest.digest.to_string());
    for l in &r.image.layers {
        let layer = std::fs::read(copy.join(l.digest.hex())).unwrap();
        assert_eq!(sha256(&layer), l.digest.to_string());
    }
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs skopeo, GNU tar and docker-registry (cargo test -- --ignored)"]
fn gnu_tar_extracts_exactly_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    // 9 MiB of noise: the zstd overlay layer spans three frames, the
    // middle one stored raw.
    let noise = 9 << 20;
    for (compression, flag) in [(Compression::Zstd, "--zstd"), (Compression::Gzip, "-z")] {
        let name = compression.to_string();
        let r = build(dir.path(), &name, compression, noise);
        let dest = dir.path().join(format!("x-{name}"));
        std::fs::create_dir(&dest).unwrap();
        // Layers applied bottom to top, as a runtime or a pipeline does.
        for l in &r.image.layers {
            let blob = r.out.join("blobs/sha256").join(l.digest.hex());
            if compression == Compression::Zstd {
                // The zstd program checks every frame's checksum.
                run_ok(Command::new("zstd").args(["-t", "-q"]).arg(&blob));
                let frames = zstd_frames(&std::fs::read(&blob).unwrap());
                if l.role == LayerRole::Overlay {
                    assert_eq!(
                        frames,
                        [false, true, false],
                        "raw frames of the overlay layer"
                    );
                } else {
                    assert_eq!(frames, [false], "{:?}", l.role);
                }
            }
            run_ok(
                Command::new("tar")
                    .args([flag, "-x", "-p", "--no-same-owner", "-f"])
                    .arg(&blob)
                    .arg("-C")
                    .arg(&dest),
            );
            // GNU tar lists it as a POSIX archive with clean headers.
            let out = run_ok(
                Command::new("tar")
                    .args([flag, "-tv", "--numeric-owner", "-f"])
                    .arg(&blob),
            );
            let listing = String::from_utf8(out.stdout).unwrap();
            assert!(
                listing
                    .lines()
                    .all(|l| l.contains(" 0/0 ") && l.contains("2023-11-14")),
                "{listing}"
            );
        }
        let want = expected_tree(noise, &dir.path().join(format!("src-{name}")));
        assert_eq!(tree_of(&dest), want, "{name}");
    }
}

/// Walks the frames of a zstd blob (RFC 8878): for each, whether all its
/// blocks are raw.
fn zstd_frames(b: &[u8]) -> Vec<bool> {
    let mut frames = Vec::new();
    let mut i = 0;
    while i < b.len() {
        assert_eq!(
            &b[i..i + 4],
            &[0x28, 0xb5, 0x2f, 0xfd],
            "frame magic at {i}"
        );
        let fhd = b[i + 4];
        i += 5;
        let single = fhd & 0x20 != 0;
        i += usize::from(!single) + [0, 1, 2, 4][usize::from(fhd & 3)];
        i += [usize::from(single), 2, 4, 8][usize::from(fhd >> 6)];
        let mut raw = true;
        loop {
            let h = u32::from(b[i]) | u32::from(b[i + 1]) << 8 | u32::from(b[i + 2]) << 16;
            i += 3;
            let (last, kind, size) = (h & 1 == 1, (h >> 1) & 3, (h >> 3) as usize);
            raw &= kind == 0;
            i += if kind == 1 { 1 } else { size };
            if last {
                break;
            }
        }
        if fhd & 4 != 0 {
            i += 4;
        }
        frames.push(raw);
    }
    frames
}

/// A failed push claims nothing: with `--format json` its answer on stdout says
/// `pushed: false` (or it prints nothing, for arguments refused before the push).
fn no_success_claim(out: &Output) {
    if out.stdout.is_empty() {
        return;
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(v["pushed"], false, "no success claim: {v}");
}

fn nodeimg_push(layout: &Path, reference: &str, auth_file: Option<&Path>) -> Output {
    let mut c = crate::support::cmd();
    c.args(["push", "--insecure", "--timeout", "60", "--format", "json"])
        .arg(layout)
        .arg(reference)
        .env("HOME", layout.parent().unwrap());
    if let Some(f) = auth_file {
        c.env("REGISTRY_AUTH_FILE", f);
    }
    run(&mut c)
}

fn auth_file(dir: &Path, registry: &str, user: &str, pass: &str) -> PathBuf {
    let raw = format!("{user}:{pass}");
    // base64 via coreutils, so the test does not trust the decoder it tests.
    let mut child = Command::new("base64")
        .args(["-w", "0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("base64 (coreutils)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(raw.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let b64 = String::from_utf8(out.stdout).unwrap();
    let path = dir.join(format!("auth-{user}-{pass}.json"));
    std::fs::write(
        &path,
        serde_json::json!({"auths": {registry: {"auth": b64.trim()}}}).to_string(),
    )
    .unwrap();
    path
}

fn json_out(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "push failed ({:?}): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The registry's raw manifest via skopeo; returns its sha256.
fn pulled_manifest_digest(reference: &str, creds: Option<&str>, dest: &Path) -> String {
    let mut c = skopeo();
    c.args(["copy", "--src-tls-verify=false"]);
    if let Some(c2) = creds {
        c.args(["--src-creds", c2]);
    }
    c.arg(format!("docker://{reference}"))
        .arg(format!("dir:{}", dest.display()));
    run_ok(&mut c);
    sha256(&std::fs::read(dest.join("manifest.json")).unwrap())
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs skopeo, GNU tar and docker-registry (cargo test -- --ignored)"]
fn push_to_an_open_registry_then_skip_existing_blobs() {
    let dir = tempfile::tempdir().unwrap();
    let r = build(dir.path(), "out", Compression::Zstd, 200_000);
    let reg = Registry::start(None);
    let base = format!("127.0.0.1:{}/nodes/h100", reg.port);

    let v = json_out(&nodeimg_push(&r.out, &base, None));
    let digest = r.image.manifest.digest.to_string();
    assert_eq!(v["digest"], digest);
    assert_eq!(
        v["reference"],
        format!("{base}:2026.11.1"),
        "the layout's tag by default"
    );
    assert!(
        v["blobs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["uploaded"] == true)
    );
    let pulled = pulled_manifest_digest(
        &format!("{base}:2026.11.1"),
        None,
        &dir.path().join("pull-1"),
    );
    assert_eq!(pulled, digest);
    for l in &r.image.layers {
        let layer = std::fs::read(dir.path().join("pull-1").join(l.digest.hex())).unwrap();
        assert_eq!(sha256(&layer), l.digest.to_string());
    }

    // A second tag: every blob is already there and skipped.
    let v = json_out(&nodeimg_push(&r.out, &format!("{base}:again"), None));
    assert_eq!(v["blobs"].as_array().unwrap().len(), 4);
    assert!(
        v["blobs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["uploaded"] == false),
        "{v}"
    );
    let pulled = pulled_manifest_digest(&format!("{base}:again"), None, &dir.path().join("pull-2"));
    assert_eq!(pulled, digest);

    // Malformed reference: unusable input.
    let out = nodeimg_push(&r.out, "127.0.0.1:1/Bad Ref", None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("reference"));
    no_success_claim(&out);
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs skopeo, GNU tar and docker-registry (cargo test -- --ignored)"]
fn push_with_htpasswd_auth_and_a_wrong_password() {
    let dir = tempfile::tempdir().unwrap();
    let r = build(dir.path(), "out", Compression::Zstd, 10_000);
    let reg = Registry::start(Some(("alice", "s3cret-pw")));
    let host = format!("127.0.0.1:{}", reg.port);
    let reference = format!("{host}/team/h100:v1");

    let wrong = auth_file(dir.path(), &host, "alice", "nope");
    let out = nodeimg_push(&r.out, &reference, Some(&wrong));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("authentication failed") && err.contains(&host),
        "{err}"
    );
    assert!(
        err.contains(&wrong.display().to_string()),
        "names the credentials file: {err}"
    );
    no_success_claim(&out);

    let out = nodeimg_push(&r.out, &reference, None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no credentials for"));

    let good = auth_file(dir.path(), &host, "alice", "s3cret-pw");
    let v = json_out(&nodeimg_push(&r.out, &reference, Some(&good)));
    assert_eq!(v["credentials"], good.display().to_string());
    let pulled = pulled_manifest_digest(
        &reference,
        Some("alice:s3cret-pw"),
        &dir.path().join("pull"),
    );
    assert_eq!(pulled, r.image.manifest.digest.to_string());
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs skopeo, GNU tar and docker-registry (cargo test -- --ignored)"]
fn unreachable_registry_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let r = build(dir.path(), "out", Compression::Zstd, 10);
    let port = free_port();
    let started = Instant::now();
    let out = nodeimg_push(&r.out, &format!("127.0.0.1:{port}/x/y:z"), None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("cannot reach") && err.contains(&port.to_string()),
        "{err}"
    );
    no_success_claim(&out);
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// A TCP proxy in front of the registry that cuts every connection once
/// `limit` bytes have gone from the client to the registry.
fn cutting_proxy(upstream: u16, limit: u64) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let sent = Arc::new(AtomicU64::new(0));
    std::thread::spawn(move || {
        for client in listener.incoming().take(64) {
            let Ok(client) = client else { return };
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                return;
            };
            let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let sent = sent.clone();
            std::thread::spawn(move || {
                let (mut from, mut to) = (client, server);
                let mut buf = [0u8; 16 * 1024];
                loop {
                    let n = match from.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    if sent.fetch_add(n as u64, Ordering::SeqCst) + n as u64 > limit
                        || to.write_all(&buf[..n]).is_err()
                    {
                        break;
                    }
                }
                let _ = from.shutdown(Shutdown::Both);
                let _ = to.shutdown(Shutdown::Both);
            });
            std::thread::spawn(move || {
                let (mut from, mut to) = (s2, c2);
                let _ = std::io::copy(&mut from, &mut to);
                let _ = to.shutdown(Shutdown::Both);
            });
        }
    });
    port
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs skopeo, GNU tar and docker-registry (cargo test -- --ignored)"]
fn an_interrupted_upload_fails_and_a_retry_completes() {
    let dir = tempfile::tempdir().unwrap();
    // 6 MiB of noise: the layer upload is well past the cut.
    let r = build(dir.path(), "out", Compression::Zstd, 6 << 20);
    let reg = Registry::start(None);
    let proxy = cutting_proxy(reg.port, 1 << 20);
    let out = nodeimg_push(&r.out, &format!("127.0.0.1:{proxy}/nodes/cut:v1"), None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            &r.image
                .layer(LayerRole::Overlay)
                .unwrap()
                .digest
                .to_string()
        ),
        "names the blob: {err}"
    );
    no_success_claim(&out);

    // The tag must not exist on the registry.
    let mut c = skopeo();
    c.args(["inspect", "--tls-verify=false"])
        .arg(format!("docker://127.0.0.1:{}/nodes/cut:v1", reg.port));
    assert!(!run(&mut c).status.success());

    let v = json_out(&nodeimg_push(
        &r.out,
        &format!("127.0.0.1:{}/nodes/cut:v1", reg.port),
        None,
    ));
    assert_eq!(v["digest"], r.image.manifest.digest.to_string());
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs skopeo, GNU tar and docker-registry (cargo test -- --ignored)"]
fn a_config_change_reuses_and_uploads_only_the_config_layer() {
    let dir = tempfile::tempdir().unwrap();
    let ov = overlay(&dir.path().join("src"), 3 << 20);
    // The layer cache trusts a file's stat data only once the file is older
    // than the racy-clean margin at the start of a build.
    std::thread::sleep(nodeimg::overlay::RACY_MARGIN + std::time::Duration::from_millis(200));
    let out = dir.path().join("out");
    let first = build_with(&tree(), &ov, Compression::Zstd, &out);
    assert!(first.reused.is_empty());
    let reg = Registry::start(None);
    let base = format!("127.0.0.1:{}/nodes/h100", reg.port);
    json_out(&nodeimg_push(&out, &format!("{base}:one"), None));

    // One rendered file changes: the rebuild into the same OUT reuses the
    // overlay and verifier layers (same blobs), and the push uploads only
    // the new config layer and the image config.
    let mut t = tree();
    t.add_file("etc/motd", 0o644, b"changed\n".to_vec())
        .unwrap();
    let second = build_with(&t, &ov, Compression::Zstd, &out);
    assert_eq!(second.reused, [LayerRole::Overlay, LayerRole::Verifier]);
    for role in [LayerRole::Overlay, LayerRole::Verifier] {
        assert_eq!(second.image.layer(role), first.image.layer(role));
    }
    assert_ne!(
        second.image.layer(LayerRole::Config),
        first.image.layer(LayerRole::Config)
    );
    let v = json_out(&nodeimg_push(&out, &format!("{base}:two"), None));
    let uploaded: BTreeMap<String, bool> = v["blobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["digest"].as_str().unwrap().to_string(),
                b["uploaded"].as_bool().unwrap(),
            )
        })
        .collect();
    let digest = |role| second.image.layer(role).unwrap().digest.to_string();
    assert!(!uploaded[&digest(LayerRole::Overlay)], "{v}");
    assert!(!uploaded[&digest(LayerRole::Verifier)], "{v}");
    assert!(uploaded[&digest(LayerRole::Config)], "{v}");
    assert!(uploaded[&second.image.config.digest.to_string()], "{v}");
    let pulled = pulled_manifest_digest(&format!("{base}:two"), None, &dir.path().join("pull"));
    assert_eq!(pulled, second.image.manifest.digest.to_string());
}
