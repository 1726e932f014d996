//! The BMC's firmware version through its Redfish service on the host interface: a
//! machine tree whose SMBIOS type 42 record (built from DSP0270's layout) names a BMC
//! on loopback, and that BMC a real HTTPS server (rustls, a test CA in
//! tests/fixtures/redfish/tls) serving DMTF's public-rackmount1 mockup behind Basic
//! auth (or documents changed from it: several Managers, a root naming the one providing
//! the service). The verifier's own client (reqwest) reads service root → Managers → the
//! BMC, through the recording host a capture uses; the bad cases (wrong password,
//! unknown CA, a body past the cap, a BMC that never answers, a truncated record) end
//! in a reason within the timeout.

use nodeimg::blueprint::model::RedfishAccess;
use nodeimg::verify::Fact;
use nodeimg::verify::facts::bmc::{self, BmcFirmware};
use nodeimg::verify::facts::redfish_host_interface;
use nodeimg::verify::host::RecordLimits;
use nodeimg::verify::{Host, RecordingHost, SnapshotHost};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::fixture_tree::Tree;

const USER: &str = "Administrator";
const PASSWORD: &str = "s3cret-Redfish-pw";
const CREDENTIALS: &str = "/etc/nodeimg/redfish-credentials";
const CA: &str = "/etc/nodeimg/bmc-ca.pem";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/redfish")
}

#[derive(Clone)]
enum Bmc {
    /// The mockup, behind Basic auth.
    Mockup,
    /// The mockup with these documents added or replaced (path → JSON).
    With(Arc<BTreeMap<String, serde_json::Value>>),
    /// The Manager's document is 2 MiB.
    HugeManager,
    /// Accepts the connection and the TLS handshake, then never answers.
    Silent,
}

impl Bmc {
    fn with(documents: &[(&str, serde_json::Value)]) -> Bmc {
        Bmc::With(Arc::new(
            documents
                .iter()
                .map(|(path, doc)| ((*path).to_owned(), doc.clone()))
                .collect(),
        ))
    }
}

struct Server {
    port: u16,
    /// Request paths with whether their Authorization header was the right one.
    requests: Arc<Mutex<Vec<(String, bool)>>>,
    /// TCP connections accepted (the server keeps each open for more requests).
    connections: Arc<AtomicUsize>,
}

fn serve(kind: Bmc) -> Server {
    rustls::crypto::aws_lc_rs::default_provider()
        .install_default()
        .ok();
    let tls = fixtures().join("tls");
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(tls.join("server.pem"))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(tls.join("server.key")).unwrap();
    let config = Arc::new(
        rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let connections = Arc::new(AtomicUsize::new(0));
    let (seen, accepted) = (requests.clone(), connections.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            accepted.fetch_add(1, Ordering::SeqCst);
            let (config, seen, kind) = (config.clone(), seen.clone(), kind.clone());
            std::thread::spawn(move || answer(stream, config, &kind, &seen));
        }
    });
    Server {
        port,
        requests,
        connections,
    }
}

/// Answers requests on one connection until the client closes it (HTTP/1.1 keep-alive).
fn answer(
    tcp: TcpStream,
    config: Arc<rustls::ServerConfig>,
    kind: &Bmc,
    seen: &Mutex<Vec<(String, bool)>>,
) {
    let Ok(connection) = rustls::ServerConnection::new(config) else {
        return;
    };
    let mut tls = rustls::StreamOwned::new(connection, tcp);
    loop {
        let mut head = Vec::new();
        let mut buf = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match tls.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
            if head.len() > 64 * 1024 {
                return;
            }
        }
        let head = String::from_utf8_lossy(&head).into_owned();
        let path = head
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        let want = {
            use base64::Engine;
            let raw = format!("{USER}:{PASSWORD}");
            format!(
                "basic {}",
                base64::engine::general_purpose::STANDARD.encode(raw)
            )
        };
        let authorized = head.lines().any(|l| {
            l.split_once(':').is_some_and(|(k, v)| {
                k.eq_ignore_ascii_case("authorization") && v.trim().eq_ignore_ascii_case(&want)
            })
        });
        seen.lock().unwrap().push((path.clone(), authorized));
        if let Bmc::Silent = kind {
            std::thread::sleep(Duration::from_secs(60));
            return;
        }
        let mockup = fixtures().join("public-rackmount1");
        let path = path.trim_end_matches('/');
        let (status, body) = match kind {
            _ if !authorized => ("401 Unauthorized", b"{\"error\": \"auth\"}".to_vec()),
            Bmc::With(documents) if documents.contains_key(path) => {
                ("200 OK", serde_json::to_vec(&documents[path]).unwrap())
            }
            Bmc::HugeManager if path == "/redfish/v1/Managers/BMC" => {
                ("200 OK", vec![b' '; 2 * 1024 * 1024])
            }
            _ => match path {
                "/redfish/v1" => ("200 OK", std::fs::read(mockup.join("index.json")).unwrap()),
                "/redfish/v1/Managers" => (
                    "200 OK",
                    std::fs::read(mockup.join("Managers/index.json")).unwrap(),
                ),
                "/redfish/v1/Managers/BMC" => (
                    "200 OK",
                    std::fs::read(mockup.join("Managers/BMC/index.json")).unwrap(),
                ),
                _ => ("404 Not Found", b"{}".to_vec()),
            },
        };
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        if tls.write_all(head.as_bytes()).is_err()
            || tls.write_all(&body).is_err()
            || tls.flush().is_err()
        {
            return;
        }
    }
}

/// A JSON document of the mockup.
fn mockup(path: &str) -> serde_json::Value {
    let file = fixtures().join("public-rackmount1").join(path);
    serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap()
}

/// The mockup's BMC Manager as another Manager: `id`, `ManagerType`, `FirmwareVersion`.
fn manager(id: &str, manager_type: &str, version: &str) -> serde_json::Value {
    let mut doc = mockup("Managers/BMC/index.json");
    doc["Id"] = id.into();
    doc["@odata.id"] = format!("/redfish/v1/Managers/{id}").into();
    doc["ManagerType"] = manager_type.into();
    doc["FirmwareVersion"] = version.into();
    doc
}

/// A Managers collection listing `ids` in this order.
fn managers(ids: &[&str]) -> serde_json::Value {
    let mut doc = mockup("Managers/index.json");
    let members: Vec<_> = ids
        .iter()
        .map(|id| serde_json::json!({"@odata.id": format!("/redfish/v1/Managers/{id}")}))
        .collect();
    doc["Members@odata.count"] = members.len().into();
    doc["Members"] = members.into();
    doc
}

/// A machine whose type 42 record names the BMC at 127.0.0.1:`port` (as `hostname`),
/// with the credentials file and the BMC's CA.
fn machine(port: u16, hostname: &str, password: &str, ca: &str) -> Tree {
    let tree = Tree::new();
    tree.dir("/sys/firmware/dmi/entries/0-0");
    tree.bytes(
        "/sys/firmware/dmi/entries/42-0/raw",
        &redfish_host_interface::record(IpAddr::V4(Ipv4Addr::LOCALHOST), port, hostname),
    );
    tree.file(CREDENTIALS, &format!("{USER}:{password}\n"));
    tree.bytes(CA, &std::fs::read(fixtures().join("tls").join(ca)).unwrap());
    tree
}

fn access() -> RedfishAccess {
    serde_json::from_value(serde_json::json!({"credentialsFile": CREDENTIALS, "caFile": CA}))
        .unwrap()
}

fn read(host: &dyn Host, timeout: Duration) -> BmcFirmware {
    bmc::collect(host, Some(&access()), timeout)
}

fn reason(fact: &Fact<String>) -> String {
    match fact {
        Fact::Unknown { reason } => reason.clone(),
        Fact::Known(v) => panic!("expected no version, got {v}"),
    }
}

#[test]
fn redfish_reads_the_managers_firmware_version_and_captures_the_documents_without_credentials() {
    let server = serve(Bmc::Mockup);
    let tree = machine(server.port, "bmc.test", PASSWORD, "ca.pem");
    let recorder = RecordingHost::new(tree.host(), RecordLimits::default());
    let firmware = read(&recorder, Duration::from_secs(10));
    assert_eq!(
        firmware.version,
        Fact::Known("1.45.455b66-rev4".to_owned()),
        "{}",
        firmware.source
    );
    let manager = format!("https://bmc.test:{}/redfish/v1/Managers/BMC", server.port);
    assert!(firmware.source.contains(&manager), "{}", firmware.source);
    // Service root, collection, Manager, each with the right credentials.
    assert_eq!(
        *server.requests.lock().unwrap(),
        [
            ("/redfish/v1".to_owned(), true),
            ("/redfish/v1/Managers".to_owned(), true),
            ("/redfish/v1/Managers/BMC".to_owned(), true)
        ]
    );
    // The documents are in the recording under `GET URL`; the credentials nowhere.
    let recording = recorder.recording();
    let body = recording.commands[&format!("GET {manager}")]
        .as_ref()
        .unwrap();
    assert_eq!(body.status, Some(200));
    assert!(
        String::from_utf8_lossy(&body.stdout).contains("\"FirmwareVersion\": \"1.45.455b66-rev4\"")
    );
    assert!(!recording.reads.contains_key(CREDENTIALS));
    let holds_password = |bytes: &[u8]| {
        bytes
            .windows(PASSWORD.len())
            .any(|w| w == PASSWORD.as_bytes())
    };
    for (key, result) in &recording.commands {
        assert!(!key.contains(PASSWORD));
        if let Ok(output) = result {
            assert!(!holds_password(&output.stdout) && !holds_password(&output.stderr));
        }
    }
    for content in recording.reads.values().flatten() {
        assert!(!holds_password(content));
    }
    // A replay of the recording reads the same version, with no BMC.
    let replay = SnapshotHost::new(recording);
    assert_eq!(
        read(&replay, Duration::from_secs(1)).version,
        Fact::Known("1.45.455b66-rev4".to_owned())
    );
}

#[test]
fn redfish_without_a_hostname_connects_to_the_records_address() {
    let server = serve(Bmc::Mockup);
    let tree = machine(server.port, "", PASSWORD, "ca.pem");
    let firmware = read(&tree.host(), Duration::from_secs(10));
    assert_eq!(firmware.version, Fact::Known("1.45.455b66-rev4".to_owned()));
    assert!(
        firmware.source.contains("https://127.0.0.1:"),
        "{}",
        firmware.source
    );
}

#[test]
fn redfish_wrong_password_names_the_credentials_file_not_the_password() {
    let server = serve(Bmc::Mockup);
    let tree = machine(server.port, "bmc.test", "not-the-password", "ca.pem");
    let why = reason(&read(&tree.host(), Duration::from_secs(10)).version);
    assert!(
        why.contains("HTTP 401") && why.contains(CREDENTIALS),
        "{why}"
    );
    assert!(!why.contains("not-the-password"), "{why}");
    assert!(!server.requests.lock().unwrap()[0].1);
}

#[test]
fn redfish_a_bmc_certificate_from_another_ca_is_refused() {
    let server = serve(Bmc::Mockup);
    let tree = machine(server.port, "bmc.test", PASSWORD, "other-ca.pem");
    let why = reason(&read(&tree.host(), Duration::from_secs(10)).version);
    assert!(why.to_lowercase().contains("certificate"), "{why}");
}

#[test]
fn redfish_a_body_past_the_cap_is_refused() {
    let server = serve(Bmc::HugeManager);
    let tree = machine(server.port, "bmc.test", PASSWORD, "ca.pem");
    let why = reason(&read(&tree.host(), Duration::from_secs(10)).version);
    assert!(
        why.contains("Managers/BMC") && why.contains("larger than 1 MiB"),
        "{why}"
    );
}

#[test]
fn redfish_a_silent_bmc_times_out() {
    let server = serve(Bmc::Silent);
    let tree = machine(server.port, "bmc.test", PASSWORD, "ca.pem");
    let started = Instant::now();
    let why = reason(&read(&tree.host(), Duration::from_secs(1)).version);
    assert!(why.contains("timed out"), "{why}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn redfish_a_truncated_record_is_a_reason_and_no_record_falls_back_to_ipmi() {
    let tree = machine(9, "bmc.test", PASSWORD, "ca.pem");
    let raw = std::fs::read(tree.local("/sys/firmware/dmi/entries/42-0/raw")).unwrap();
    tree.bytes("/sys/firmware/dmi/entries/42-0/raw", &raw[..40]);
    let firmware = read(&tree.host(), Duration::from_secs(1));
    let why = reason(&firmware.version);
    assert!(why.contains("42-0/raw") && why.contains("says"), "{why}");
    // No type 42 record: IPMI answers (here there is no ipmitool), and says why.
    std::fs::remove_dir_all(tree.local("/sys/firmware/dmi/entries/42-0")).unwrap();
    let firmware = read(&tree.host(), Duration::from_secs(1));
    assert!(
        firmware.source.starts_with("ipmitool mc info")
            && firmware.source.contains("no Redfish host interface"),
        "{}",
        firmware.source
    );
}

/// A machine reading `server`'s BMC with the right credentials and CA.
fn read_from(server: &Server) -> BmcFirmware {
    let tree = machine(server.port, "bmc.test", PASSWORD, "ca.pem");
    read(&tree.host(), Duration::from_secs(10))
}

/// The version and the source of the mockup's own BMC Manager.
fn reads_the_mockup_bmc(firmware: &BmcFirmware) {
    assert_eq!(
        firmware.version,
        Fact::Known("1.45.455b66-rev4".to_owned()),
        "{}",
        firmware.source
    );
    assert!(
        firmware.source.contains("/redfish/v1/Managers/BMC "),
        "{}",
        firmware.source
    );
}

#[test]
fn redfish_reads_the_bmc_not_the_first_manager() {
    // An enclosure manager listed first (DSP0268 Manager.ManagerType `EnclosureManager`).
    let server = serve(Bmc::with(&[
        ("/redfish/v1/Managers", managers(&["Enclosure", "BMC"])),
        (
            "/redfish/v1/Managers/Enclosure",
            manager("Enclosure", "EnclosureManager", "9.9.9"),
        ),
    ]));
    reads_the_mockup_bmc(&read_from(&server));
}

#[test]
fn redfish_of_several_bmcs_the_one_providing_the_service_is_read() {
    // A baseboard's own management controller that calls itself a BMC, listed first; the
    // service root names the Manager that provides the service.
    let mut root = mockup("index.json");
    root["Links"]["ManagerProvidingService"] =
        serde_json::json!({"@odata.id": "/redfish/v1/Managers/BMC"});
    let server = serve(Bmc::with(&[
        ("/redfish/v1", root),
        ("/redfish/v1/Managers", managers(&["HGX_BMC_0", "BMC"])),
        (
            "/redfish/v1/Managers/HGX_BMC_0",
            manager("HGX_BMC_0", "BMC", "hgx-1.0"),
        ),
    ]));
    reads_the_mockup_bmc(&read_from(&server));
    // The named Manager is a BMC: the collection is not walked.
    let paths: Vec<String> = server
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|(p, _)| p.clone())
        .collect();
    assert_eq!(paths, ["/redfish/v1", "/redfish/v1/Managers/BMC"]);
}

#[test]
fn redfish_several_bmcs_and_none_named_by_the_service_is_ambiguous() {
    let server = serve(Bmc::with(&[
        ("/redfish/v1/Managers", managers(&["BMC", "BMC2"])),
        ("/redfish/v1/Managers/BMC2", manager("BMC2", "BMC", "2.0")),
    ]));
    let why = reason(&read_from(&server).version);
    assert!(
        why.contains("/redfish/v1/Managers/BMC,")
            && why.contains("/redfish/v1/Managers/BMC2")
            && why.contains("ManagerProvidingService"),
        "{why}"
    );
}

#[test]
fn redfish_no_bmc_among_the_managers_is_a_reason() {
    let server = serve(Bmc::with(&[
        ("/redfish/v1/Managers", managers(&["Enclosure"])),
        (
            "/redfish/v1/Managers/Enclosure",
            manager("Enclosure", "EnclosureManager", "9.9.9"),
        ),
    ]));
    let why = reason(&read_from(&server).version);
    assert!(
        why.contains("no Manager whose ManagerType is BMC") && why.contains("EnclosureManager"),
        "{why}"
    );
}

#[test]
fn redfish_one_walk_uses_one_client_and_one_connection() {
    let server = serve(Bmc::Mockup);
    let firmware = read_from(&server);
    assert_eq!(firmware.version, Fact::Known("1.45.455b66-rev4".to_owned()));
    assert_eq!(server.requests.lock().unwrap().len(), 3);
    // The server keeps the connection open: one client reuses it for the three GETs.
    assert_eq!(server.connections.load(Ordering::SeqCst), 1);
}

#[test]
fn redfish_a_credentials_file_past_its_limit_is_refused_without_reading_it_whole() {
    let server = serve(Bmc::Mockup);
    let tree = machine(server.port, "bmc.test", PASSWORD, "ca.pem");
    // A sparse 1 GiB file: refused at the credentials limit, not at the host's file limit.
    std::fs::File::create(tree.local(CREDENTIALS))
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let why = reason(&read(&tree.host(), Duration::from_secs(10)).version);
    assert!(
        why.contains(CREDENTIALS) && why.contains("larger than 4 KiB"),
        "{why}"
    );
    // A FIFO nothing writes to: refused at once, never waited on.
    std::fs::remove_file(tree.local(CREDENTIALS)).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(tree.local(CREDENTIALS))
        .status()
        .unwrap();
    assert!(status.success());
    let started = Instant::now();
    let why = reason(&read(&tree.host(), Duration::from_secs(10)).version);
    assert!(why.contains(CREDENTIALS) && why.contains("FIFO"), "{why}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(server.requests.lock().unwrap().is_empty());
}
