//! Opt-in: signatures interoperate with real implementations, both ways, through a real
//! registry (Debian's docker-registry).
//!
//! - sigstore-rs's cosign client (`tests/interop-cosign`, built here) verifies what
//!   `nodeimg push --sign` signed, and refuses it with another key, for an unsigned image
//!   and for an image whose signature was copied from another digest;
//! - what sigstore-rs signs, with a cosign-encrypted key (scrypt + NaCl secretbox, made
//!   here with Python's hashlib and PyNaCl from the same PKCS#8 key), `nodeimg
//!   verify-image` accepts with the public key and refuses with another;
//! - skopeo (containers/image) with `use-sigstore-attachments: true` copies the signed
//!   image to another repository, reading and writing the `.sig` manifest with its own
//!   code, and nodeimg verifies the copy;
//! - skopeo's own `sigstoreSigned` policy, with the `policy.json` and `registries.d` the
//!   README shows, copies what nodeimg signed and refuses an unsigned image, a signature
//!   over another digest and another key; and what `skopeo copy
//!   --sign-by-sigstore-private-key` signs, `nodeimg verify-image` accepts. Debian 12's
//!   skopeo has sigstore patched out ("Debian-local change: sigstore disabled"), so this
//!   part runs Debian 13's skopeo 1.18 in a root of its own (`scripts/sigstore-skopeo`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nodeimg::package::{self, BuildOptions, Inputs, Silent, Verifier};

use crate::support::keys::{KeyPair, pair};
use crate::support::registry::Registry;
use crate::support::{nodeimg, stderr, stdout};

const SUITE: &str = "opt-in suite trust interop: needs docker-registry, skopeo, python3-nacl, cargo and crates.io for tests/interop-cosign";

fn layout(dir: &Path, name: &str, extra: &str) -> PathBuf {
    let mut t = crate::support::package::tree();
    t.add_file("etc/nodeimg/extra", 0o644, extra.as_bytes().to_vec())
        .unwrap();
    let out = dir.join(name);
    let verifier = Verifier::golden_stand_in();
    let sbom = crate::support::package::sbom_source();
    let inputs = Inputs {
        sbom: Some(&sbom),
        config: &t,
        verifier: &verifier,
        overlay: None,
    };
    let meta = crate::support::package::meta();
    package::build(inputs, &meta, &BuildOptions::default(), &out, &mut Silent).unwrap();
    out
}

/// Builds sigstore-rs's cosign client once (`interop-cosign` in the target folder).
fn interop_cosign() -> PathBuf {
    let root = crate::support::root();
    let target = crate::support::target_dir().join("interop-cosign");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let o = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--locked",
            "--quiet",
            "--manifest-path",
        ])
        .arg(root.join("tests/interop-cosign/Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .output()
        .expect(SUITE);
    assert!(
        o.status.success(),
        "{SUITE}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    target.join("release/interop-cosign")
}

fn run(program: &Path, args: &[&str]) -> Output {
    Command::new(program).args(args).output().expect(SUITE)
}

/// Writes `key`'s private half as cosign writes keys: `ENCRYPTED COSIGN PRIVATE KEY`, a
/// go-securesystemslib envelope (scrypt N=32768, r=8, p=1; NaCl secretbox) around the
/// PKCS#8 DER.
fn cosign_key(key: &KeyPair, password: &str, out: &Path) {
    let script = r#"
import base64, hashlib, json, os, sys
import nacl.secret
pem = open(sys.argv[1]).read()
der = base64.b64decode("".join(l for l in pem.splitlines() if not l.startswith("-----")))
salt, nonce = os.urandom(32), os.urandom(24)
key = hashlib.scrypt(sys.argv[2].encode(), salt=salt, n=32768, r=8, p=1, maxmem=128 << 20, dklen=32)
ct = nacl.secret.SecretBox(key).encrypt(der, nonce).ciphertext
doc = {"kdf": {"name": "scrypt", "params": {"N": 32768, "r": 8, "p": 1}, "salt": base64.b64encode(salt).decode()},
       "cipher": {"name": "nacl/secretbox", "nonce": base64.b64encode(nonce).decode()},
       "ciphertext": base64.b64encode(ct).decode()}
body = base64.b64encode(json.dumps(doc).encode()).decode()
lines = [body[i:i + 64] for i in range(0, len(body), 64)]
open(sys.argv[3], "w").write("-----BEGIN ENCRYPTED COSIGN PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END ENCRYPTED COSIGN PRIVATE KEY-----\n")
"#;
    let o = Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(script)
        .arg(&key.private)
        .arg(password)
        .arg(out)
        .output()
        .expect(SUITE);
    assert!(
        o.status.success(),
        "{SUITE}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn push(layout: &Path, reference: &str, sign: Option<&KeyPair>) -> String {
    let mut args = vec![
        "push".to_string(),
        "--insecure".into(),
        "--format".into(),
        "json".into(),
    ];
    if let Some(k) = sign {
        args.push("--sign".into());
        args.push(k.private.display().to_string());
    }
    args.push(layout.display().to_string());
    args.push(reference.into());
    let o = nodeimg(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["digest"].as_str().unwrap().to_owned()
}

fn verify_image(reference: &str, key: &Path) -> (Option<i32>, serde_json::Value) {
    let o = nodeimg(&[
        "verify-image",
        "--insecure",
        "--format",
        "json",
        reference,
        "--key",
        key.to_str().unwrap(),
    ]);
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)));
    (o.status.code(), v)
}

/// sigstore-rs's verdict on `reference` with `key`: its exit code (0 verified, 1 not).
fn sigstore_rs(cosign: &Path, reference: &str, key: &KeyPair) -> Option<i32> {
    let o = run(cosign, &["verify", reference, key.public.to_str().unwrap()]);
    eprintln!("{}", String::from_utf8_lossy(&o.stderr));
    o.status.code()
}

/// skopeo's configuration in `d`: a `registries.d` that reads and writes sigstore
/// attachments on `host`, and `any.json`, a policy that accepts anything.
fn skopeo_config(d: &Path, host: &str) {
    std::fs::create_dir_all(d.join("registries.d")).unwrap();
    std::fs::write(
        d.join("registries.d/default.yaml"),
        format!("docker:\n  {host}:\n    use-sigstore-attachments: true\n"),
    )
    .unwrap();
    std::fs::write(
        d.join("any.json"),
        r#"{"default":[{"type":"insecureAcceptAnything"}]}"#,
    )
    .unwrap();
}

/// skopeo's arguments to copy the signature of `signed` in `repository` onto the tag
/// where the signature of `other` is looked up: an image changed after signing.
fn signature_onto(repository: &str, signed: &str, other: &str) -> Vec<String> {
    let tag = |digest: &str| format!("sha256-{}.sig", digest.trim_start_matches("sha256:"));
    [
        "copy",
        "--src-tls-verify=false",
        "--dest-tls-verify=false",
        "--preserve-digests",
    ]
    .into_iter()
    .map(String::from)
    .chain([
        format!("docker://{repository}:{}", tag(signed)),
        format!("docker://{repository}:{}", tag(other)),
    ])
    .collect()
}

fn skopeo(dir: &Path, policy: &str, args: &[&str]) -> Output {
    Command::new("skopeo")
        .arg("--policy")
        .arg(dir.join(policy))
        .arg("--registries.d")
        .arg(dir.join("registries.d"))
        .args(args)
        .output()
        .expect(SUITE)
}

#[test]
#[ignore = "opt-in suite trust interop: docker-registry, skopeo, python3-nacl, sigstore-rs built from crates.io"]
fn signatures_interoperate_with_sigstore_rs_and_containers_image() {
    let cosign = interop_cosign();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let registry = Registry::start(None);
    let host = registry.host();
    let release = pair(d, "release", 1);
    let other = pair(d, "other", 2);

    // nodeimg signs; sigstore-rs verifies, and refuses another key.
    let signed_layout = layout(d, "a", "a");
    let digest = push(
        &signed_layout,
        &format!("{host}/nodes/a:v1"),
        Some(&release),
    );
    let image = format!("{host}/nodes/a@{digest}");
    assert_eq!(sigstore_rs(&cosign, &image, &release), Some(0));
    assert_eq!(sigstore_rs(&cosign, &image, &other), Some(1));
    let (code, v) = verify_image(&image, &release.public);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["signature"]["identity"], format!("{host}/nodes/a:v1"));
    assert_eq!(v["provenance"]["status"], "verified");

    // An unsigned image: refused by both.
    let unsigned_layout = layout(d, "b", "b");
    let unsigned = push(&unsigned_layout, &format!("{host}/nodes/a:v2"), None);
    let unsigned_ref = format!("{host}/nodes/a@{unsigned}");
    assert_eq!(sigstore_rs(&cosign, &unsigned_ref, &release), Some(1));
    let (code, v) = verify_image(&unsigned_ref, &release.public);
    assert_eq!(
        (code, v["signature"]["status"].as_str()),
        (Some(1), Some("missing"))
    );

    // The signature of the first image copied onto the second's tag (an image changed
    // after signing): refused by both, as signed over another digest.
    skopeo_config(d, &host);
    let moved = signature_onto(&format!("{host}/nodes/a"), &digest, &unsigned);
    let o = skopeo(
        d,
        "any.json",
        &moved.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(sigstore_rs(&cosign, &unsigned_ref, &release), Some(1));
    let (code, v) = verify_image(&unsigned_ref, &release.public);
    assert_eq!(
        (code, v["signature"]["status"].as_str()),
        (Some(1), Some("other-digest")),
        "{v}"
    );
    assert_eq!(v["signature"]["signed"], digest.as_str());

    // containers/image copies the signed image with its .sig (its own attachment code),
    // and the copy verifies.
    let o = skopeo(
        d,
        "any.json",
        &[
            "copy",
            "--src-tls-verify=false",
            "--dest-tls-verify=false",
            &format!("docker://{image}"),
            &format!("docker://{host}/mirror/a:v1"),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (code, v) = verify_image(&format!("{host}/mirror/a@{digest}"), &release.public);
    assert_eq!(code, Some(0), "{v}");

    // sigstore-rs signs with a cosign key; nodeimg verifies with the public key only.
    let cosign_key_file = d.join("cosign.key");
    cosign_key(&release, "correct horse", &cosign_key_file);
    let third_layout = layout(d, "c", "c");
    let third = push(&third_layout, &format!("{host}/nodes/c:v1"), None);
    let third_ref = format!("{host}/nodes/c@{third}");
    let o = run(
        &cosign,
        &[
            "sign",
            &third_ref,
            cosign_key_file.to_str().unwrap(),
            "correct horse",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (code, v) = verify_image(&third_ref, &release.public);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["signature"]["key"], release.id.as_str());
    let (code, v) = verify_image(&third_ref, &other.public);
    assert_eq!(
        (code, v["signature"]["status"].as_str()),
        (Some(1), Some("untrusted-key"))
    );
}

/// Debian 13's skopeo, in its own cached root (`scripts/sigstore-skopeo root`).
fn sigstore_skopeo_root() -> PathBuf {
    let o = Command::new(crate::support::root().join("scripts/sigstore-skopeo"))
        .arg("root")
        .output()
        .expect(SUITE_SKOPEO);
    assert!(
        o.status.success(),
        "{SUITE_SKOPEO}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    PathBuf::from(String::from_utf8(o.stdout).unwrap().trim())
}

const SUITE_SKOPEO: &str = "opt-in suite trust interop: needs root, mmdebstrap and the Debian mirror for Debian 13's skopeo (scripts/sigstore-skopeo), docker-registry, python3-nacl";

/// skopeo inside `root`, reading its policy and `registries.d` from `dir` (under `root`).
struct Skopeo<'a> {
    root: &'a Path,
    dir: &'a Path,
}

impl Skopeo<'_> {
    /// `path` as the chrooted skopeo sees it.
    fn inside(&self, path: &Path) -> String {
        format!("/{}", path.strip_prefix(self.root).unwrap().display())
    }

    fn run(&self, policy: &str, args: &[&str]) -> Output {
        Command::new("chroot")
            .arg(self.root)
            .args(["skopeo", "--policy"])
            .arg(self.inside(&self.dir.join(policy)))
            .arg("--registries.d")
            .arg(self.inside(&self.dir.join("registries.d")))
            .args(args)
            .output()
            .expect(SUITE_SKOPEO)
    }

    /// Copies `reference` out of the registry under `policy`; the copy's outcome.
    fn copy_out(&self, policy: &str, reference: &str) -> Output {
        let dest = tempfile::tempdir_in(self.dir).unwrap();
        self.run(
            policy,
            &[
                "copy",
                "--src-tls-verify=false",
                "--remove-signatures",
                &format!("docker://{reference}"),
                &format!("dir:{}", self.inside(&dest.path().join("copy"))),
            ],
        )
    }
}

#[test]
#[ignore = "opt-in suite trust interop: Debian 13's skopeo in a root of its own (scripts/sigstore-skopeo), docker-registry, python3-nacl"]
fn skopeos_sigstore_policy_and_nodeimg_judge_each_others_signatures() {
    let root = sigstore_skopeo_root();
    let dir = tempfile::tempdir_in(root.join("tmp")).unwrap();
    let d = dir.path();
    let skopeo = Skopeo {
        root: &root,
        dir: d,
    };
    let registry = Registry::start(None);
    let host = registry.host();
    let release = pair(d, "release", 1);
    let other = pair(d, "other", 2);

    // Three images: signed by nodeimg with the release key, unsigned, and one whose tag
    // carries the first one's signature (an image changed after signing).
    let signed = push(
        &layout(d, "a", "a"),
        &format!("{host}/nodes/a:v1"),
        Some(&release),
    );
    let unsigned = push(&layout(d, "b", "b"), &format!("{host}/nodes/a:v2"), None);
    let altered = push(&layout(d, "c", "c"), &format!("{host}/nodes/a:v3"), None);
    skopeo_config(d, &host);
    let moved = signature_onto(&format!("{host}/nodes/a"), &signed, &altered);
    let o = skopeo.run(
        "any.json",
        &moved.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // skopeo's policy, as the README writes it: sigstoreSigned with the public key.
    let policy = |name: &str, key: &Path| {
        std::fs::write(
            d.join(name),
            format!(
                r#"{{"default":[{{"type":"reject"}}],"transports":{{"docker":{{"{host}/nodes":[{{"type":"sigstoreSigned","keyPath":"{}","signedIdentity":{{"type":"matchRepository"}}}}]}},"dir":{{"":[{{"type":"insecureAcceptAnything"}}]}}}}}}"#,
                skopeo.inside(key)
            ),
        )
        .unwrap();
    };
    policy("release.json", &release.public);
    policy("other.json", &other.public);
    let at = |digest: &str| format!("{host}/nodes/a@{digest}");
    let o = skopeo.copy_out("release.json", &at(&signed));
    assert!(
        o.status.success(),
        "skopeo's sigstoreSigned refused what nodeimg signed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    for (what, policy, digest) in [
        ("an unsigned image", "release.json", &unsigned),
        ("a signature over another digest", "release.json", &altered),
        ("a signature by another key", "other.json", &signed),
    ] {
        let o = skopeo.copy_out(policy, &at(digest));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "skopeo accepted {what}");
        eprintln!("skopeo refuses {what}: {err}");
        assert!(
            err.contains("ignature") && !err.contains("sigstore disabled"),
            "{what}: refused for another reason: {err}"
        );
    }

    // skopeo signs with a cosign key (sigstore's own format) while it copies; nodeimg
    // verifies with the public key only, and refuses with another.
    let key_file = d.join("cosign.key");
    cosign_key(&release, "correct horse", &key_file);
    std::fs::write(d.join("passphrase"), "correct horse").unwrap();
    let o = skopeo.run(
        "any.json",
        &[
            "copy",
            "--src-tls-verify=false",
            "--dest-tls-verify=false",
            "--sign-by-sigstore-private-key",
            &skopeo.inside(&key_file),
            "--sign-passphrase-file",
            &skopeo.inside(&d.join("passphrase")),
            &format!("docker://{}", at(&unsigned)),
            &format!("docker://{host}/skopeo-signed/b:v1"),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let by_skopeo = format!("{host}/skopeo-signed/b@{unsigned}");
    let (code, v) = verify_image(&by_skopeo, &release.public);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["signature"]["status"], "verified", "{v}");
    assert_eq!(v["signature"]["key"], release.id.as_str());
    let (code, v) = verify_image(&by_skopeo, &other.public);
    assert_eq!(
        (code, v["signature"]["status"].as_str()),
        (Some(1), Some("untrusted-key")),
        "{v}"
    );
}
