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
//!   code, and nodeimg verifies the copy; skopeo's `sigstoreSigned` policy, with the
//!   `policy.json` and `registries.d` the README shows, is asked too: Debian patches
//!   sigstore out of skopeo ("Debian-local change: sigstore disabled"), and where it
//!   is not patched the signed copy must pass and the others be refused.

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

/// Builds sigstore-rs's cosign client once (`target/interop-cosign`).
fn interop_cosign() -> PathBuf {
    let root = crate::support::root();
    let target = root.join("target/interop-cosign");
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
    let tag = |digest: &str| format!("sha256-{}.sig", digest.trim_start_matches("sha256:"));
    let o = skopeo(
        d,
        "any.json",
        &[
            "copy",
            "--src-tls-verify=false",
            "--dest-tls-verify=false",
            "--preserve-digests",
            &format!("docker://{host}/nodes/a:{}", tag(&digest)),
            &format!("docker://{host}/nodes/a:{}", tag(&unsigned)),
        ],
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

    // skopeo's sigstoreSigned policy, as the README configures it.
    std::fs::write(
        d.join("signed.json"),
        format!(
            r#"{{"default":[{{"type":"reject"}}],"transports":{{"docker":{{"{host}/nodes/a":[{{"type":"sigstoreSigned","keyPath":"{}","signedIdentity":{{"type":"matchRepository"}}}}]}},"dir":{{"":[{{"type":"insecureAcceptAnything"}}]}}}}}}"#,
            release.public.display()
        ),
    )
    .unwrap();
    let copy = |reference: &str| {
        let dest = d.join(format!("copy-{}", reference.len()));
        let _ = std::fs::remove_dir_all(&dest);
        skopeo(
            d,
            "signed.json",
            &[
                "copy",
                "--src-tls-verify=false",
                "--remove-signatures",
                &format!("docker://{reference}"),
                &format!("dir:{}", dest.display()),
            ],
        )
    };
    let signed_copy = copy(&image);
    let err = String::from_utf8_lossy(&signed_copy.stderr).into_owned();
    if err.contains("sigstore disabled") {
        eprintln!("skopeo cannot judge sigstore signatures here (Debian patches it out): {err}");
    } else {
        assert!(signed_copy.status.success(), "{err}");
        // The second image carries the first one's signature under its tag now.
        let o = copy(&unsigned_ref);
        assert!(
            !o.status.success(),
            "a signature over another digest must be refused"
        );
    }

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
