//! `nodeimg push` against registries that misbehave on purpose, and layouts and auth files
//! written by an attacker. The registry is a small HTTP/1.1 server in this process (a
//! stand-in: a real registry cannot be made to send endless bodies or drop connections on
//! cue); the real docker-registry is exercised by the opt-in real-tools suite.
//!
//! Every run is under a memory limit and a deadline (see `hostile_input::run_limited`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nodeimg::package::{self, BuildOptions, ImageMeta, Inputs, Silent, Verifier};
use nodeimg::tree::Tree;

use crate::hostile_input::{MEMORY_LIMIT, run_limited, text};

/// One request as the stand-in registry saw it.
#[derive(Debug, Clone)]
struct Request {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

enum Reply {
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// A status and headers, then zeros until the client goes away.
    Endless { status: u16 },
    /// Close the connection without answering.
    Drop,
}

fn reply(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    Reply::Full {
        status,
        headers: headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        body: body.to_vec(),
    }
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

/// Serves `handler` on 127.0.0.1; returns the port and every request seen.
fn serve(handler: Arc<Handler>) -> (u16, Arc<Mutex<Vec<Request>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let (handler, log) = (handler.clone(), log.clone());
            std::thread::spawn(move || connection(stream, &*handler, &log));
        }
    });
    (port, seen)
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    reader.read_line(&mut line).ok().filter(|n| *n > 0)?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let target = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_owned(), v.trim().to_owned()));
    }
    let mut request = Request {
        method,
        target,
        headers,
        body: Vec::new(),
    };
    if let Some(len) = request.header("content-length") {
        let len: u64 = len.parse().ok()?;
        reader
            .by_ref()
            .take(len)
            .read_to_end(&mut request.body)
            .ok()?;
    } else if request
        .header("transfer-encoding")
        .is_some_and(|t| t.contains("chunked"))
    {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim(), 16).ok()?;
            let mut chunk = vec![0u8; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            request.body.extend_from_slice(&chunk[..size]);
        }
    }
    Some(request)
}

fn connection(stream: TcpStream, handler: &Handler, log: &Mutex<Vec<Request>>) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader) {
        let answer = handler(&request);
        let head = request.method == "HEAD";
        if let Ok(mut log) = log.lock() {
            log.push(request);
        }
        match answer {
            Reply::Drop => return,
            Reply::Full {
                status,
                headers,
                body,
            } => {
                let mut out = format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\n", body.len());
                for (k, v) in headers {
                    out.push_str(&format!("{k}: {v}\r\n"));
                }
                out.push_str("\r\n");
                let mut bytes = out.into_bytes();
                if !head {
                    bytes.extend_from_slice(&body);
                }
                if writer.write_all(&bytes).is_err() {
                    return;
                }
            }
            Reply::Endless { status } => {
                let head = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: 1099511627776\r\n\r\n"
                );
                if writer.write_all(head.as_bytes()).is_err() {
                    return;
                }
                let zeros = vec![b'0'; 64 * 1024];
                while writer.write_all(&zeros).is_ok() {}
                return;
            }
        }
    }
}

/// A small layout whose index names the tag `v1`.
fn layout(dir: &Path) -> PathBuf {
    let mut t = Tree::new();
    t.add_file("etc/motd", 0o644, b"hi\n".to_vec())
        .unwrap_or_else(|e| panic!("{e}"));
    let meta = ImageMeta {
        name: "n".into(),
        version: "1".into(),
        blueprint_id: format!("sha256:{}", "1".repeat(64)),
        tag: "v1".parse().unwrap_or_else(|e| panic!("{e:?}")),
        architecture: "amd64".into(),
        os: "linux".into(),
    };
    let out = dir.join("out");
    let verifier = Verifier::golden_stand_in();
    let inputs = Inputs {
        config: &t,
        verifier: &verifier,
        overlay: None,
        sbom: None,
    };
    package::build(inputs, &meta, &BuildOptions::default(), &out, &mut Silent)
        .unwrap_or_else(|e| panic!("{e}"));
    out
}

fn edit_index(layout: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = layout.join("index.json");
    let mut index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}"));
    edit(&mut index);
    std::fs::write(&path, index.to_string()).unwrap_or_else(|e| panic!("{e}"));
}

fn push(home: &Path, args: &[&str], auth_file: Option<&Path>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_nodeimg"));
    c.arg("push")
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_RUNTIME_DIR");
    match auth_file {
        Some(f) => c.env("REGISTRY_AUTH_FILE", f),
        None => c.env_remove("REGISTRY_AUTH_FILE"),
    };
    run_limited(c, MEMORY_LIMIT, Duration::from_secs(120))
}

/// An open registry: `/v2/` answers 200, every blob is present, manifests are accepted;
/// `manifest_put` and `manifest_read` answer those steps.
fn open_registry(
    manifest_put: impl Fn() -> Reply + Send + Sync + 'static,
    manifest_read: impl Fn(&Request) -> Reply + Send + Sync + 'static,
) -> (u16, Arc<Mutex<Vec<Request>>>) {
    serve(Arc::new(move |r: &Request| {
        if r.target == "/v2/" {
            reply(200, &[], b"{}")
        } else if r.target.contains("/blobs/") {
            reply(200, &[], b"")
        } else if r.method == "PUT" {
            manifest_put()
        } else {
            manifest_read(r)
        }
    }))
}

#[test]
fn endless_registry_bodies_are_read_with_a_bound() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = layout(dir.path());
    let o = out.to_str().unwrap_or_default();

    // A push to the stand-in on `port` fails (exit 1) with `expected` in its error.
    let refused = |port: u16, expected: &str| {
        let r = push(
            dir.path(),
            &[
                "--insecure",
                "--timeout",
                "60",
                o,
                &format!("127.0.0.1:{port}/n/a"),
            ],
            None,
        );
        let err = text(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{:?}: {err}", r.status);
        assert!(err.contains(expected), "{err}");
        r
    };

    // An error answer to the manifest PUT that never ends.
    let (port, _) = open_registry(|| Reply::Endless { status: 400 }, |_| reply(404, &[], b""));
    refused(port, "upload of manifest v1 failed: HTTP 400");

    // A manifest read back (no digest header) that never ends.
    let (port, _) = open_registry(
        || reply(201, &[], b""),
        |r| {
            if r.method == "HEAD" {
                reply(200, &[], b"")
            } else {
                Reply::Endless { status: 200 }
            }
        },
    );
    let r = refused(port, "more than 4 MiB");
    assert!(r.stdout.is_empty());
}

#[test]
fn a_dropped_connection_is_not_an_authentication_failure() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = layout(dir.path());
    let (port, seen) = serve(Arc::new(|_: &Request| Reply::Drop));
    let r = push(
        dir.path(),
        &[
            "--insecure",
            "--timeout",
            "30",
            out.to_str().unwrap_or_default(),
            &format!("127.0.0.1:{port}/n/a"),
        ],
        None,
    );
    let err = text(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(!err.contains("authentication"), "{err}");
    assert!(err.contains("connection"), "{err}");
    assert!(
        !seen.lock().map(|s| s.is_empty()).unwrap_or(true),
        "the registry was asked"
    );
}

#[test]
fn a_layout_tag_that_smuggles_a_path_query_or_fragment_is_refused_before_any_request() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = layout(dir.path());
    let (port, seen) = open_registry(|| reply(201, &[], b""), |_| reply(404, &[], b""));
    for tag in [
        "../../victim/manifests/prod",
        "x?y=1",
        "x#frag",
        "a/b",
        "t\u{e9}",
    ] {
        edit_index(&out, |index| {
            index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"] =
                serde_json::Value::from(tag);
        });
        let r = push(
            dir.path(),
            &[
                "--insecure",
                "--timeout",
                "30",
                out.to_str().unwrap_or_default(),
                &format!("127.0.0.1:{port}/nodes/h100"),
            ],
            None,
        );
        let err = text(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{tag}: {err}");
        assert!(
            err.contains("is not a tag") && err.contains("index.json"),
            "{tag}: {err}"
        );
        assert!(r.stdout.is_empty());
    }
    let requests = seen.lock().map(|s| s.clone()).unwrap_or_default();
    assert!(requests.is_empty(), "requests were made: {requests:?}");
}

#[test]
fn a_malformed_auth_file_never_prints_credentials() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = layout(dir.path());
    // user:S3cr3tPassw0rd
    let secret = "dXNlcjpTM2NyM3RQYXNzdzByZA==";
    for (i, json) in [
        format!(r#"{{"auths":{{"other.example.com":"{secret}"}}}}"#),
        format!(r#"{{"auths":"{secret}"}}"#),
    ]
    .iter()
    .enumerate()
    {
        let auth = dir.path().join(format!("auth{i}.json"));
        std::fs::write(&auth, json).unwrap_or_else(|e| panic!("{e}"));
        let r = push(
            dir.path(),
            &[
                "--insecure",
                out.to_str().unwrap_or_default(),
                "127.0.0.1:1/n/a",
            ],
            Some(&auth),
        );
        let err = text(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{err}");
        assert!(err.contains(&format!("auth{i}.json")), "{err}");
        assert!(!err.contains("dXNl") && !err.contains("S3cr3t"), "{err}");
    }
}

#[test]
fn a_corrupt_layout_is_refused_without_allocating_what_it_claims() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = layout(dir.path());
    for size in [
        "1099511627776",
        "18446744073709551615",
        "9223372036854775807",
    ] {
        edit_index(&out, |index| {
            index["manifests"][0]["size"] = serde_json::from_str(size).unwrap_or_default();
        });
        let r = push(
            dir.path(),
            &[
                "--insecure",
                out.to_str().unwrap_or_default(),
                "127.0.0.1:1/n/a:t",
            ],
            None,
        );
        let err = text(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{size}: {:?} {err}", r.status);
        assert!(err.contains("OCI layout"), "{err}");
    }
}

#[test]
fn bearer_token_flow_pushes_and_sends_credentials_only_to_the_realm() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = layout(dir.path());
    // alice:s3cret
    let basic = "Basic YWxpY2U6czNjcmV0";
    let store: Arc<Mutex<Vec<(String, usize)>>> = Arc::new(Mutex::new(Vec::new()));
    let manifest: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
    let (auth_port, auth_seen) = serve(Arc::new(move |r: &Request| {
        if r.header("authorization") == Some(basic)
            && r.target
                .contains("scope=repository%3Anodes%2Fh100%3Apull%2Cpush")
            && r.target.contains("service=stand-in")
        {
            reply(200, &[], br#"{"token":"tok-123"}"#)
        } else {
            reply(
                401,
                &[],
                br#"{"errors":[{"code":"UNAUTHORIZED","message":"bad credentials"}]}"#,
            )
        }
    }));
    let realm = format!("http://127.0.0.1:{auth_port}/token");
    let (store2, manifest2) = (store.clone(), manifest.clone());
    let (port, seen) = serve(Arc::new(move |r: &Request| {
        let challenge = format!("Bearer realm=\"{realm}\",service=\"stand-in\"");
        if r.header("authorization") != Some("Bearer tok-123") {
            return reply(401, &[("WWW-Authenticate", &challenge)], b"");
        }
        let path = r.target.split('?').next().unwrap_or_default().to_owned();
        match (r.method.as_str(), path.as_str()) {
            ("GET", "/v2/") => reply(200, &[], b"{}"),
            ("HEAD", p) if p.starts_with("/v2/nodes/h100/blobs/") => reply(404, &[], b""),
            ("POST", "/v2/nodes/h100/blobs/uploads/") => reply(
                202,
                &[("Location", "/v2/nodes/h100/blobs/uploads/u1?_state=s")],
                b"",
            ),
            ("PUT", "/v2/nodes/h100/blobs/uploads/u1") => {
                let digest = r
                    .target
                    .split("digest=")
                    .nth(1)
                    .unwrap_or_default()
                    .to_owned();
                if let Ok(mut s) = store2.lock() {
                    s.push((digest, r.body.len()));
                }
                reply(201, &[], b"")
            }
            ("PUT", "/v2/nodes/h100/manifests/v1") => {
                if let Ok(mut m) = manifest2.lock() {
                    *m = r.body.clone();
                }
                reply(201, &[], b"")
            }
            ("HEAD", "/v2/nodes/h100/manifests/v1") => {
                let body = manifest2.lock().map(|m| m.clone()).unwrap_or_default();
                let digest = format!("sha256:{}", sha256_hex(&body));
                reply(200, &[("Docker-Content-Digest", &digest)], b"")
            }
            _ => reply(404, &[], b""),
        }
    }));
    let auth = dir.path().join("auth.json");
    std::fs::write(
        &auth,
        format!(r#"{{"auths":{{"127.0.0.1:{port}":{{"auth":"YWxpY2U6czNjcmV0"}}}}}}"#),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let r = push(
        dir.path(),
        &[
            "--insecure",
            "--format",
            "json",
            out.to_str().unwrap_or_default(),
            &format!("127.0.0.1:{port}/nodes/h100"),
        ],
        Some(&auth),
    );
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let report: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap_or_default();
    let stored = store.lock().map(|s| s.clone()).unwrap_or_default();
    let blobs = report["blobs"].as_array().map(Vec::len).unwrap_or(0);
    assert!(blobs >= 2, "{report}");
    assert_eq!(
        stored.len(),
        blobs,
        "every layer and the config uploaded: {stored:?}"
    );
    for blob in report["blobs"].as_array().into_iter().flatten() {
        let digest = blob["digest"]
            .as_str()
            .unwrap_or_default()
            .replace(':', "%3A");
        assert!(
            stored
                .iter()
                .any(|(d, n)| *d == digest && Some(*n as u64) == blob["size"].as_u64()),
            "{blob} not in {stored:?}"
        );
    }
    let pushed = manifest.lock().map(|m| m.clone()).unwrap_or_default();
    assert_eq!(format!("sha256:{}", sha256_hex(&pushed)), report["digest"]);
    // The password went to the token realm only, never to the registry.
    let registry_requests = seen.lock().map(|s| s.clone()).unwrap_or_default();
    assert!(
        registry_requests
            .iter()
            .all(|r| r.header("authorization") != Some(basic))
    );
    assert!(!auth_seen.lock().map(|s| s.is_empty()).unwrap_or(true));

    // A wrong password is an authentication failure naming the auth service's reason.
    std::fs::write(
        &auth,
        format!(r#"{{"auths":{{"127.0.0.1:{port}":{{"auth":"YWxpY2U6bm9wZQ=="}}}}}}"#),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let r = push(
        dir.path(),
        &[
            "--insecure",
            out.to_str().unwrap_or_default(),
            &format!("127.0.0.1:{port}/nodes/h100"),
        ],
        Some(&auth),
    );
    let err = text(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(
        err.contains("authentication failed") && err.contains("bad credentials"),
        "{err}"
    );
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A registry that serves the blobs and manifests of the layout at `src` (the image
/// under its digest, its attachments under their tags and digests), with `tamper`
/// given each answer first to change it. No referrers API: 404.
fn layout_registry(
    src: &Path,
    tamper: impl Fn(&str, Reply) -> Reply + Send + Sync + 'static,
) -> u16 {
    let src = src.to_path_buf();
    let (port, _) = serve(Arc::new(move |r: &Request| {
        let path = r.target.clone();
        let answer = if path == "/v2/" {
            reply(200, &[], b"{}")
        } else if let Some(d) = path.split("/blobs/").nth(1) {
            match std::fs::read(
                src.join("blobs/sha256")
                    .join(d.trim_start_matches("sha256:")),
            ) {
                Ok(bytes) => reply(200, &[], &bytes),
                Err(_) => reply(404, &[], b""),
            }
        } else if let Some(reference) = path.split("/manifests/").nth(1) {
            let index: serde_json::Value =
                serde_json::from_slice(&std::fs::read(src.join("index.json")).unwrap_or_default())
                    .unwrap_or_default();
            let found = index["manifests"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|m| {
                    m["digest"] == reference
                        || m["annotations"]["org.opencontainers.image.ref.name"] == reference
                })
                .and_then(|m| m["digest"].as_str().map(str::to_owned))
                .or_else(|| {
                    reference
                        .starts_with("sha256:")
                        .then(|| reference.to_owned())
                });
            match found.and_then(|d| {
                std::fs::read(
                    src.join("blobs/sha256")
                        .join(d.trim_start_matches("sha256:")),
                )
                .ok()
            }) {
                Some(bytes) => reply(
                    200,
                    &[("Content-Type", "application/vnd.oci.image.manifest.v1+json")],
                    &bytes,
                ),
                None => reply(404, &[], b""),
            }
        } else {
            reply(404, &[], b"")
        };
        tamper(&path, answer)
    }));
    port
}

/// Changes one answer of the stand-in registry (by request path).
type Tamper = dyn Fn(&str, Reply) -> Reply + Send + Sync;

fn pull_from(port: u16, image: &str, dest: &Path) -> Result<(), String> {
    use nodeimg::package::registry::{Options, Reference, TagPolicy};
    let reference = Reference::for_pull(
        &format!("127.0.0.1:{port}/n/a@{image}"),
        TagPolicy::DigestOnly,
    )
    .map_err(|e| e.0)?;
    let opts = Options {
        insecure: true,
        timeout: Duration::from_secs(30),
        auth_files: Vec::new(),
        ca_bundle: None,
    };
    nodeimg::package::pull::pull(&reference, dest, &opts)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn a_pull_refuses_what_the_registry_sends_instead_of_the_image_and_leaves_nothing() {
    use crate::support::oci::{self, E, Tie};
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let src = dir.path().join("src");
    oci::layout(&src, &[oci::layer(&[E::File("etc/x", 0o644, b"x\n")])]);
    let (image, _) = oci::image_manifest(&src);
    let config_layer = {
        let m: serde_json::Value = serde_json::from_slice(
            &std::fs::read(
                src.join("blobs/sha256")
                    .join(image.trim_start_matches("sha256:")),
            )
            .unwrap_or_default(),
        )
        .unwrap_or_default();
        m["layers"][0]["digest"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };

    // The untampered registry: the pull works (the stand-in is right).
    let port = layout_registry(&src, |_, a| a);
    let ok = dir.path().join("ok");
    pull_from(port, &image, &ok).unwrap_or_else(|e| panic!("{e}"));
    assert!(ok.join("index.json").is_file());

    let cases: Vec<(&str, Box<Tamper>, &str)> = vec![
        (
            "another manifest at the digest",
            Box::new(|p: &str, a| {
                if p.contains("/manifests/sha256:") {
                    reply(
                        200,
                        &[("Content-Type", "application/vnd.oci.image.manifest.v1+json")],
                        br#"{"schemaVersion":2}"#,
                    )
                } else {
                    a
                }
            }),
            "whose digest is",
        ),
        (
            "an endless manifest",
            Box::new(|p: &str, a| {
                if p.contains("/manifests/") {
                    Reply::Endless { status: 200 }
                } else {
                    a
                }
            }),
            "bytes",
        ),
        (
            "a layer longer than its descriptor",
            {
                let layer = config_layer.clone();
                Box::new(move |p: &str, a| match a {
                    Reply::Full {
                        status: 200,
                        headers,
                        mut body,
                    } if p.ends_with(&layer) => {
                        body.extend_from_slice(b"more");
                        Reply::Full {
                            status: 200,
                            headers,
                            body,
                        }
                    }
                    other => other,
                })
            },
            "the descriptor",
        ),
        (
            "an image index at the digest",
            Box::new(|p: &str, a| match a {
                Reply::Full {
                    status: 200, body, ..
                } if p.contains("/manifests/sha256:") => reply(
                    200,
                    &[("Content-Type", "application/vnd.oci.image.index.v1+json")],
                    &body,
                ),
                other => other,
            }),
            "image index",
        ),
    ];
    for (name, tamper, says) in cases {
        let port = layout_registry(&src, tamper);
        let dest = dir.path().join(name.replace(' ', "-"));
        let e = pull_from(port, &image, &dest).expect_err(name);
        assert!(e.contains(says), "{name}: {e}");
        assert!(!dest.exists(), "{name}: a partial layout was left");
    }

    // A referrer the fallback tag lists whose subject is another image.
    let other = dir.path().join("other");
    oci::layout(&other, &[oci::layer(&[E::File("etc/y", 0o644, b"y\n")])]);
    let foreign = oci::attach(
        &other,
        Tie::Referrer("application/spdx+json"),
        "application/spdx+json",
        b"{}",
    );
    for entry in std::fs::read_dir(other.join("blobs/sha256"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let _ = std::fs::copy(
            entry.path(),
            src.join("blobs/sha256").join(entry.file_name()),
        );
    }
    let hex = image.trim_start_matches("sha256:").to_owned();
    let fallback = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": foreign,
            "size": std::fs::metadata(src.join("blobs/sha256").join(foreign.trim_start_matches("sha256:"))).map(|m| m.len()).unwrap_or(0),
            "artifactType": "application/spdx+json"}]
    });
    let port = layout_registry(&src, move |p: &str, a| {
        if p.ends_with(&format!("/manifests/sha256-{hex}")) {
            reply(
                200,
                &[("Content-Type", "application/vnd.oci.image.index.v1+json")],
                &serde_json::to_vec(&fallback).unwrap_or_default(),
            )
        } else {
            a
        }
    });
    let dest = dir.path().join("foreign-referrer");
    let e = pull_from(port, &image, &dest).expect_err("a referrer of another image");
    assert!(e.contains("its subject is"), "{e}");
    assert!(!dest.exists());
}
