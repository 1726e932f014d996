//! Parsers against real captures in `../shared/corpus` (an opt-in suite: `cargo test -- --ignored`;
//! fails when the folder is missing). Expected values are read from each
//! file by a plain text scan, independent of the parsers under test.

use nodeimg::verify::LiveHost;
use nodeimg::verify::facts::{nvidia_smi, rdma, rocm_smi};
use std::fs;
use std::path::{Path, PathBuf};

fn corpus(sub: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus")
        .join(sub);
    assert!(dir.is_dir(), "corpus folder {} is missing", dir.display());
    dir
}

fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.map(|e| e.path()).unwrap_or_default();
        if path.is_dir() {
            out.extend(files_with_ext(&path, ext));
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Text of the first `<tag>...</tag>` in `text`.
fn element(text: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find(&format!("</{tag}>"))? + start;
    Some(text[start..end].trim().to_owned())
}

/// `0000:01:00.0` from `00000000:01:00.0` or `0000:01:00.0`, lower case.
fn sysfs_bus_id(raw: &str) -> String {
    let raw = raw.to_ascii_lowercase();
    let (domain, rest) = raw.split_once(':').unwrap_or(("0", &raw));
    format!("{:0>4}:{rest}", &domain[domain.len().saturating_sub(4)..])
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn nvidia_smi_xml_corpus() {
    let files = files_with_ext(&corpus("nvidia-smi-xml"), "xml");
    assert!(
        files.len() >= 20,
        "expected the corpus XML files, found {}",
        files.len()
    );
    for file in files {
        let name = file.display().to_string();
        let text = fs::read_to_string(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
        let log = nvidia_smi::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let chunks: Vec<&str> = text.split("<gpu id=\"").skip(1).collect();
        assert_eq!(log.gpus.len(), chunks.len(), "{name}: GPU count");
        assert_eq!(
            log.driver_version.known().map(ToString::to_string),
            element(&text, "driver_version"),
            "{name}: driver"
        );
        let attached = element(&text, "attached_gpus").and_then(|a| a.parse::<u32>().ok());
        assert_eq!(
            log.attached_gpus.known().copied(),
            attached,
            "{name}: attached_gpus"
        );
        if attached.is_some_and(|a| a as usize != chunks.len()) {
            assert_eq!(log.warnings.len(), 1, "{name}: trimmed file not flagged");
        }
        for (gpu, chunk) in log.gpus.iter().zip(&chunks) {
            let chunk = chunk.split("</gpu>").next().unwrap_or(chunk);
            assert_eq!(
                gpu.product_name.known().cloned(),
                element(chunk, "product_name"),
                "{name}: product"
            );
            let id_attr = chunk.split('"').next().unwrap_or("");
            let bus = element(chunk, "pci_bus_id").unwrap_or_else(|| id_attr.to_owned());
            assert_eq!(
                gpu.bus_id.known().map(ToString::to_string),
                Some(sysfs_bus_id(&bus)),
                "{name}: bus id"
            );
            let ecc = element(chunk, "current_ecc");
            let expected_ecc = match ecc.as_deref() {
                Some("Enabled") => Some(true),
                Some("Disabled") => Some(false),
                _ => None,
            };
            assert_eq!(
                gpu.ecc_mode.current.known().copied(),
                expected_ecc,
                "{name}: ECC mode {ecc:?}"
            );
            if expected_ecc.is_none() {
                assert!(
                    gpu.ecc_mode.current.reason().is_some(),
                    "{name}: unknown ECC must say why"
                );
            }
        }
    }
}

/// Every `"key": "value"` string value for `key`, in file order.
fn json_values(text: &str, key: &str) -> Vec<String> {
    let needle = format!("\"{key}\": \"");
    text.match_indices(&needle)
        .map(|(at, _)| {
            let start = at + needle.len();
            let end = text[start..].find('"').map_or(text.len(), |e| e + start);
            text[start..end].to_owned()
        })
        .collect()
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn rocm_smi_json_corpus() {
    let files = files_with_ext(&corpus("rocm-smi"), "json");
    assert!(
        files.len() >= 10,
        "expected the corpus JSON files, found {}",
        files.len()
    );
    for file in files {
        let name = file.display().to_string();
        let text = fs::read_to_string(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
        let report = rocm_smi::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let cards = text
            .match_indices("\"card")
            .filter(|(at, _)| text[at + 5..].starts_with(|c: char| c.is_ascii_digit()))
            .count();
        assert_eq!(report.gpus.len(), cards, "{name}: GPU count");
        let driver = json_values(&text, "Driver version").into_iter().next();
        assert_eq!(
            report.driver_version.known().map(ToString::to_string),
            driver,
            "{name}: driver"
        );
        let buses = json_values(&text, "PCI Bus");
        let series: Vec<String> = [
            json_values(&text, "Card series"),
            json_values(&text, "Card Series"),
        ]
        .concat();
        for (index, gpu) in report.gpus.iter().enumerate() {
            assert_eq!(
                gpu.bus_id.known().map(ToString::to_string),
                buses.get(index).map(|b| b.to_ascii_lowercase()),
                "{name}: bus"
            );
            let expected = series.get(index).filter(|s| !s.starts_with("0x")).cloned();
            if series.is_empty() {
                assert!(gpu.product_name.reason().is_some(), "{name}: no series key");
            } else {
                assert_eq!(
                    gpu.product_name.known().cloned(),
                    expected,
                    "{name}: product"
                );
            }
        }
    }
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn infiniband_sysfs_corpus() {
    let root = corpus("infiniband").join("gpud/sys-class-infiniband-h100.0");
    assert!(root.is_dir(), "{} is missing", root.display());
    let host = LiveHost::new(&root);
    let devices = rdma::collect_at(&host, "/")
        .into_known()
        .unwrap_or_else(|| panic!("list {}", root.display()));
    let mut names: Vec<String> = fs::read_dir(&root)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    assert_eq!(
        devices.iter().map(|d| d.name.clone()).collect::<Vec<_>>(),
        names
    );
    let read = |path: PathBuf| {
        fs::read_to_string(&path)
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    for device in &devices {
        let dir = root.join(&device.name);
        assert_eq!(
            device.fw_ver.known().map(ToString::to_string),
            Some(read(dir.join("fw_ver"))),
            "{}",
            device.name
        );
        assert_eq!(
            device.hca_type.known().cloned(),
            Some(read(dir.join("hca_type")))
        );
        let ports = device.ports.known().cloned().unwrap_or_default();
        assert_eq!(ports.len(), 1);
        let port = dir.join("ports/1");
        let state = read(port.join("state"));
        assert_eq!(
            ports[0]
                .state
                .known()
                .map(|s| format!("{}: {}", s.code, s.name)),
            Some(state)
        );
        let rate = read(port.join("rate"));
        let gbps: f64 = rate
            .split_whitespace()
            .next()
            .and_then(|g| g.parse().ok())
            .unwrap_or(-1.0);
        assert_eq!(
            ports[0].rate.known().map(|r| r.gbps),
            Some(gbps),
            "{}",
            device.name
        );
        assert_eq!(
            ports[0].link_layer.known().cloned(),
            Some(read(port.join("link_layer")))
        );
    }
    assert_eq!(devices.len(), 9);
}
