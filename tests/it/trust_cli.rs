//! `nodeimg sign` and `nodeimg verify-image` on OCI layouts, the blueprint's
//! `security.imageTrust` and a site policy: what is refused, with which exit code and
//! status, and that nothing is written when the input is unusable.

use std::path::{Path, PathBuf};

use nodeimg::package::{self, BuildOptions, Inputs, Silent, Verifier};
use serde_json::{Value, json};

use crate::support::keys::{KeyPair, pair};
use crate::support::{Variant, nodeimg, stderr, stdout};

/// A layout built by the library from the small package tree (it has a lock file).
fn layout(dir: &Path) -> PathBuf {
    let t = crate::support::package::tree();
    let meta = crate::support::package::meta();
    let out = dir.join("out");
    let verifier = Verifier::golden_stand_in();
    let sbom = crate::support::package::sbom_source();
    let inputs = Inputs {
        sbom: Some(&sbom),
        config: &t,
        verifier: &verifier,
        overlay: None,
    };
    package::build(inputs, &meta, &BuildOptions::default(), &out, &mut Silent).unwrap();
    out
}

fn verify_json(target: &Path, key: &Path) -> (Option<i32>, Value) {
    let o = nodeimg(&[
        "verify-image".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
        target.as_os_str(),
        "--key".as_ref(),
        key.as_os_str(),
    ]);
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)));
    (o.status.code(), v)
}

fn sign(target: &Path, key: &KeyPair, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "sign".to_string(),
        target.display().to_string(),
        "--key".into(),
        key.private.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    nodeimg(&args)
}

fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).unwrap()))
        .collect();
    v.sort();
    v
}

#[test]
fn a_signed_layout_verifies_with_its_key_and_is_refused_with_another() {
    let dir = tempfile::tempdir().unwrap();
    let out = layout(dir.path());
    let release = pair(dir.path(), "release", 1);
    let other = pair(dir.path(), "other", 2);

    let (code, v) = verify_json(&out, &release.public);
    assert_eq!(
        (code, &v["signature"]["status"]),
        (Some(1), &json!("missing"))
    );

    let o = sign(
        &out,
        &release,
        &[
            "--identity",
            "registry.example/nodes/h100:2026.11.1",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let signed: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(signed["key"], release.id.as_str());
    let image = signed["image"].as_str().unwrap().to_owned();

    let (code, v) = verify_json(&out, &release.public);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["image"], image.as_str());
    assert_eq!(v["signature"]["status"], "verified");
    assert_eq!(v["signature"]["key"], release.id.as_str());
    assert_eq!(
        v["signature"]["identity"],
        "registry.example/nodes/h100:2026.11.1"
    );
    assert_eq!(v["provenance"]["status"], "verified");
    assert_eq!(v["provenance"]["key"], release.id.as_str());
    assert_eq!(
        v["provenance"]["blueprintId"],
        format!("sha256:{}", "ab".repeat(32))
    );

    let (code, v) = verify_json(&out, &other.public);
    assert_eq!(code, Some(1));
    assert_eq!(v["signature"]["status"], "untrusted-key");
    assert_eq!(v["provenance"]["status"], "unverified");

    // The text report names the status and the key.
    let o = nodeimg(&[
        "verify-image".as_ref(),
        out.as_os_str(),
        "--key".as_ref(),
        release.public.as_os_str(),
    ]);
    let text = stdout(&o);
    assert!(
        text.contains("signature   verified") && text.contains(&release.id),
        "{text}"
    );

    // push and apply still find the one image.
    let img = nodeimg::package::layout_reader::LocalImage::open(&out).unwrap();
    assert_eq!(img.manifest.digest.to_string(), image);
}

#[test]
fn an_image_edited_after_signing_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = layout(dir.path());
    let release = pair(dir.path(), "release", 1);
    assert_eq!(sign(&out, &release, &[]).status.code(), Some(0));
    // Edit the manifest (an annotation), store it under its new digest and point the
    // index at it, as someone changing the image after signing would.
    let index_path = out.join("index.json");
    let mut index: Value = serde_json::from_slice(&std::fs::read(&index_path).unwrap()).unwrap();
    let old = index["manifests"][0]["digest"].as_str().unwrap().to_owned();
    let old_path = out
        .join("blobs/sha256")
        .join(old.trim_start_matches("sha256:"));
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(old_path).unwrap()).unwrap();
    manifest["annotations"]["edited"] = json!("after signing");
    let bytes = serde_json::to_vec(&manifest).unwrap();
    let new = crate::support::package::sha256(&bytes);
    std::fs::write(
        out.join("blobs/sha256")
            .join(new.trim_start_matches("sha256:")),
        &bytes,
    )
    .unwrap();
    index["manifests"][0]["digest"] = json!(new);
    index["manifests"][0]["size"] = json!(bytes.len());
    std::fs::write(&index_path, serde_json::to_vec(&index).unwrap()).unwrap();
    let (code, v) = verify_json(&out, &release.public);
    assert_eq!(
        (code, &v["signature"]["status"]),
        (Some(1), &json!("missing"))
    );
    assert_eq!(v["image"], new.as_str());

    // The old signature moved onto the new digest's tag: signed over another digest.
    let text = std::fs::read_to_string(&index_path).unwrap();
    let tag = |d: &str| format!("sha256-{}.sig", d.trim_start_matches("sha256:"));
    std::fs::write(&index_path, text.replace(&tag(&old), &tag(&new))).unwrap();
    let (code, v) = verify_json(&out, &release.public);
    assert_eq!(code, Some(1));
    assert_eq!(v["signature"]["status"], "other-digest");
    assert_eq!(v["signature"]["signed"], old.as_str());
}

#[test]
fn unusable_keys_and_targets_exit_2_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = layout(dir.path());
    let release = pair(dir.path(), "release", 1);
    let before = files_under(&out);

    let broken = dir.path().join("broken.key");
    let text = std::fs::read_to_string(&release.private).unwrap();
    let secret_line = text.lines().nth(1).unwrap().to_owned();
    std::fs::write(
        &broken,
        text.replacen(&secret_line[..12], "AAAAAAAAAAAA", 1),
    )
    .unwrap();
    for (key, says) in [
        (broken.clone(), "not an ECDSA P-256"),
        (release.public.clone(), "is a public key"),
        (dir.path().join("missing.key"), "No such file"),
        (dir.path().to_path_buf(), "not a regular file"),
    ] {
        let o = nodeimg(&[
            "sign".as_ref(),
            out.as_os_str(),
            "--key".as_ref(),
            key.as_os_str(),
        ]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&key.display().to_string()) && err.contains(says),
            "{err}"
        );
        assert!(
            !err.contains(&secret_line[12..]),
            "the key's content is never printed: {err}"
        );
    }
    // An unset variable for env://.
    let o = nodeimg(&[
        "sign",
        out.to_str().unwrap(),
        "--key",
        "env://NODEIMG_TEST_NO_SUCH_KEY",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("env://NODEIMG_TEST_NO_SUCH_KEY: the variable is not set"),
        "{}",
        stderr(&o)
    );
    // A tag alone, a folder that is no layout.
    for target in [
        "registry.example/nodes/h100:v1",
        dir.path().to_str().unwrap(),
    ] {
        let o = nodeimg(&["sign", target, "--key", release.private.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{target}: {}", stderr(&o));
    }
    assert!(
        stderr(&nodeimg(&[
            "sign",
            "registry.example/nodes/h100:v1",
            "--key",
            release.private.to_str().unwrap()
        ]))
        .contains("a tag can be moved")
    );
    // verify-image: a private key where a public one is wanted, no key at all.
    let o = nodeimg(&[
        "verify-image".as_ref(),
        out.as_os_str(),
        "--key".as_ref(),
        release.private.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("never the private key"),
        "{}",
        stderr(&o)
    );
    let o = nodeimg(&["verify-image".as_ref(), out.as_os_str()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(files_under(&out), before, "nothing was written");

    // The key from the environment signs like the file.
    let mut c = crate::support::cmd();
    c.args(["sign", out.to_str().unwrap(), "--key", "env://NODEIMG_KEY"])
        .env("NODEIMG_KEY", &text);
    assert_eq!(c.output().unwrap().status.code(), Some(0));
    assert_eq!(verify_json(&out, &release.public).0, Some(0));
}

#[test]
fn the_blueprint_names_the_keys_and_the_image_carries_them() {
    let dir = tempfile::tempdir().unwrap();
    let release = pair(dir.path(), "release", 1);
    let bp = Variant::of("cpu-minimal")
        .set(
            "security.imageTrust",
            json!({"keys": [{"name": "release", "file": "release.pub"}]}),
        )
        .write(&dir.path().join("bp.yaml"));
    let o = nodeimg(&[
        "render".as_ref(),
        bp.as_os_str(),
        "-o".as_ref(),
        dir.path().join("r").as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let copied = std::fs::read(dir.path().join("r/layer/etc/nodeimg/trust/release.pub")).unwrap();
    assert_eq!(copied, std::fs::read(&release.public).unwrap());

    // verify-image --blueprint takes the keys from it.
    let out = layout(dir.path());
    assert_eq!(sign(&out, &release, &[]).status.code(), Some(0));
    let o = nodeimg(&[
        "verify-image".as_ref(),
        out.as_os_str(),
        "--blueprint".as_ref(),
        bp.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains(&format!("{} (release)", release.id)),
        "{}",
        stdout(&o)
    );

    // A private key, a missing file or a duplicate name do not validate.
    for (keys, code) in [
        (
            json!([{"name": "release", "file": "release.key"}]),
            "named-file",
        ),
        (
            json!([{"name": "release", "file": "nothing.pub"}]),
            "missing-file",
        ),
        (
            json!([{"name": "a", "file": "release.pub"}, {"name": "a", "file": "release.pub"}]),
            "duplicate",
        ),
        (json!([]), "image-trust"),
    ] {
        let bad = Variant::of("cpu-minimal")
            .set("security.imageTrust", json!({"keys": keys}))
            .write(&dir.path().join("bad.yaml"));
        let o = nodeimg(&["validate".as_ref(), bad.as_os_str()]);
        assert_eq!(o.status.code(), Some(1), "{keys}");
        assert!(
            stderr(&o).contains(code) || stdout(&o).contains(code),
            "{keys}: {}{}",
            stdout(&o),
            stderr(&o)
        );
    }
}

#[test]
fn a_site_policy_names_the_keys_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = layout(dir.path());
    let release = pair(dir.path(), "release", 1);
    let other = pair(dir.path(), "other", 2);
    let policy = dir.path().join("trust.yaml");
    std::fs::write(
        &policy,
        "apiVersion: nodeimg.dev/v1alpha1\nkind: TrustPolicy\nkeys:\n  - name: old\n    file: other.pub\n  - name: release\n    file: release.pub\n",
    )
    .unwrap();
    assert_eq!(sign(&out, &release, &[]).status.code(), Some(0));
    let o = nodeimg(&[
        "verify-image".as_ref(),
        out.as_os_str(),
        "--trust-policy".as_ref(),
        policy.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("{} (old)", other.id)),
        "{}",
        stdout(&o)
    );
    std::fs::write(
        &policy,
        "apiVersion: nodeimg.dev/v1alpha1\nkind: TrustPolicy\nkeys: []\nextra: 1\n",
    )
    .unwrap();
    let o = nodeimg(&[
        "verify-image".as_ref(),
        out.as_os_str(),
        "--trust-policy".as_ref(),
        policy.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("trust.yaml") && stderr(&o).contains("extra"),
        "{}",
        stderr(&o)
    );
}

/// `rollout plan` with a blueprint that names trusted keys: an image that cannot be
/// checked refuses the plan (exit 1, nothing written); `--skip-image-verification` makes
/// it, and says so in the text and the JSON; without a policy nothing is checked.
#[test]
fn rollout_plan_checks_the_images_or_says_loudly_that_it_did_not() {
    let setup = crate::rollout::Setup::new(
        |v| {
            v.set(
                "security.imageTrust",
                json!({"keys": [{"name": "release", "file": "release.pub"}]}),
            )
        },
        8,
    );
    pair(setup.dir.path(), "release", 1);
    let unreachable =
        |c: char| format!("127.0.0.1:1/nodes/h100@sha256:{}", c.to_string().repeat(64));
    let plan = |extra: &[&str]| {
        let mut args: Vec<String> = ["rollout", "plan"].iter().map(|s| s.to_string()).collect();
        args.push(setup.path("old.yaml").display().to_string());
        args.push(setup.path("new.yaml").display().to_string());
        args.extend([
            "--nodes".into(),
            setup.path("nodes.json").display().to_string(),
        ]);
        args.extend([
            "--old-image".into(),
            unreachable('a'),
            "--new-image".into(),
            unreachable('b'),
        ]);
        args.extend(["--insecure".into(), "--timeout".into(), "5".into()]);
        args.extend(extra.iter().map(|s| s.to_string()));
        nodeimg(&args)
    };
    let out = setup.path("rollout");
    let o = plan(&["-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--new-image") && stderr(&o).contains("cannot check its signature"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists(), "no Plan is written");

    let o = plan(&["--skip-image-verification", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["image_check"]["status"], "skipped", "{v}");
    assert!(stderr(&o).contains("NOT checked"), "{}", stderr(&o));
    let o = plan(&["--skip-image-verification"]);
    assert!(stdout(&o).contains("UNCHECKED"), "{}", stdout(&o));

    // The old blueprint as the new one: no policy, nothing checked, nothing said.
    std::fs::copy(setup.path("old.yaml"), setup.path("new.yaml")).unwrap();
    let v = crate::support::variant::Variant::parse(
        setup.path("new.yaml"),
        &std::fs::read_to_string(setup.path("new.yaml")).unwrap(),
    )
    .set("metadata.version", json!("2026.11.9"));
    v.write(&setup.path("new.yaml"));
    let o = plan(&["--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["image_check"]["status"], "no-policy");
}
