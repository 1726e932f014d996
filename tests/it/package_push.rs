//! `nodeimg push` failures that need no registry: unusable input exits 2,
//! a registry that never answers exits 1 within the timeout, and neither
//! prints a success line.

use std::net::TcpListener;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use nodeimg::package::{self, BuildOptions, Inputs, Silent, Verifier};

fn layout(dir: &Path) -> std::path::PathBuf {
    let t = crate::support::package::tree();
    let meta = crate::support::package::meta();
    let out = dir.join("out");
    let verifier = Verifier::golden_stand_in();
    let sbom = crate::support::package::sbom_source();
    let inputs = Inputs {
        config: &t,
        verifier: &verifier,
        overlay: None,
        sbom: Some(&sbom),
    };
    package::build(inputs, &meta, &BuildOptions::default(), &out, &mut Silent).unwrap();
    out
}

fn push(dir: &Path, args: &[&str], auth_file: Option<&Path>) -> Output {
    let mut c = crate::support::cmd();
    c.arg("push").args(args).env("HOME", dir);
    if let Some(f) = auth_file {
        c.env("REGISTRY_AUTH_FILE", f);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn unusable_input_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = layout(dir.path());
    let o = out.to_str().unwrap();

    let r = push(dir.path(), &[o, "127.0.0.1:1/a b"], None);
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("reference `127.0.0.1:1/a b`"),
        "{}",
        stderr(&r)
    );

    let digest_ref = format!("127.0.0.1:1/x@sha256:{}", "a".repeat(64));
    let r = push(dir.path(), &[o, &digest_ref], None);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("needs a tag"), "{}", stderr(&r));

    let missing = dir.path().join("nothing-here");
    let r = push(
        dir.path(),
        &[missing.to_str().unwrap(), "127.0.0.1:1/x"],
        None,
    );
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("nothing-here"), "{}", stderr(&r));

    let bad_auth = dir.path().join("auth.json");
    std::fs::write(&bad_auth, b"{\"auths\": [").unwrap();
    let r = push(dir.path(), &[o, "127.0.0.1:1/x"], Some(&bad_auth));
    assert_eq!(r.status.code(), Some(2));
    assert!(
        stderr(&r).contains("auth.json") && stderr(&r).contains("line 1 column"),
        "{}",
        stderr(&r)
    );

    // A corrupted layer blob is refused before anything is sent.
    let blobs = out.join("blobs/sha256");
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    let manifest_hex = index["manifests"][0]["digest"].as_str().unwrap()[7..].to_string();
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(blobs.join(&manifest_hex)).unwrap()).unwrap();
    let layer = blobs.join(&manifest["layers"][1]["digest"].as_str().unwrap()[7..]);
    let mut bytes = std::fs::read(&layer).unwrap();
    bytes[0] ^= 0xff;
    std::fs::write(&layer, bytes).unwrap();
    let r = push(dir.path(), &[o, "127.0.0.1:1/x"], None);
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("does not match its descriptor"),
        "{}",
        stderr(&r)
    );
    assert!(r.stdout.is_empty());
}

#[test]
fn a_registry_that_never_answers_times_out_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let out = layout(dir.path());
    // Accepts connections (the kernel does) but never reads or answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let started = Instant::now();
    let r = push(
        dir.path(),
        &[
            "--insecure",
            "--timeout",
            "2",
            out.to_str().unwrap(),
            &format!("127.0.0.1:{port}/nodes/x"),
        ],
        None,
    );
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("no answer within 2 s"),
        "{}",
        stderr(&r)
    );
    assert!(r.stdout.is_empty());
    assert!(started.elapsed() < Duration::from_secs(20));
    drop(silent);
}

/// A registry that cannot be reached is named in plain words, the plain-HTTP hint only
/// where it fits, and `--format json` answers on stdout too.
#[test]
fn connection_failures_in_plain_words_and_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let out = layout(dir.path());
    let o = out.to_str().unwrap();
    // Nothing listens on the port.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let reference = format!("127.0.0.1:{port}/nodes/x:1");
    let r = push(dir.path(), &[o, &reference, "--timeout", "10"], None);
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    let err = stderr(&r);
    assert!(err.contains("refused the connection"), "{err}");
    assert!(!err.contains("client error (Connect)"), "{err}");
    assert!(!err.contains("--insecure"), "{err}");
    // A name that never resolves (RFC 2606 `.invalid`): no plain-HTTP hint.
    let r = push(
        dir.path(),
        &[o, "registry.nodeimg.invalid/nodes/x:1", "--timeout", "10"],
        None,
    );
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    let err = stderr(&r);
    assert!(err.contains("does not resolve"), "{err}");
    assert!(!err.contains("--insecure"), "{err}");
    // JSON on stdout for a failed push.
    let r = push(
        dir.path(),
        &[o, &reference, "--timeout", "10", "--format", "json"],
        None,
    );
    assert_eq!(r.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&r.stdout)));
    assert_eq!(v["pushed"], false);
    assert_eq!(v["exit"], 1);
    assert!(v["errors"][0].as_str().unwrap().contains("refused"), "{v}");
}
