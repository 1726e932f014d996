//! `nodeimg accept` over `ibstat`/`ibstatus` and `nvidia-smi topo -m`: the blueprint's
//! RDMA rails up at the declared rate and link layer, and each GPU near a rail NIC.
//! The corpus cases (real outputs in `../shared/corpus`) are opt-in
//! (`cargo test -- --ignored accept_rails`) and fail when the files are missing; the
//! made-up cases run by default.

use crate::support::verify_fixture::BLUEPRINT;
use std::path::{Path, PathBuf};

fn corpus(rel: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus")
        .join(rel);
    assert!(p.exists(), "corpus file {} is missing", p.display());
    p
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Runs `accept --format json` with `blueprint` over `files` (name, text); returns the
/// findings whose id starts with `prefix` as (name, verdict, fault) and the record.
fn accept(
    blueprint: &str,
    files: &[(&str, String)],
    prefix: &str,
) -> (Vec<(String, String, String)>, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let bp = dir.path().join("bp.yaml");
    std::fs::write(&bp, blueprint).unwrap();
    let mut args = vec![
        "accept".to_owned(),
        "--blueprint".to_owned(),
        bp.to_string_lossy().into_owned(),
        "--format".to_owned(),
        "json".to_owned(),
    ];
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        args.push(p.to_string_lossy().into_owned());
    }
    let out = crate::support::cmd()
        .args(&args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "exit {:?}: {stderr}",
        out.status.code()
    );
    let record: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let findings = record["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"].as_str().unwrap().starts_with(prefix))
        .map(crate::support::accept_fixture::finding_key)
        .collect();
    (findings, record)
}

/// Runs `accept` with `blueprint` over one file `name` holding `text`, which it must
/// refuse as unusable input (exit 2); returns the file's path (its folder is gone by
/// then: only its text is compared) and stderr.
fn refused(blueprint: &str, name: &str, text: &str) -> (PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let bp = dir.path().join("bp.yaml");
    std::fs::write(&bp, blueprint).unwrap();
    let file = dir.path().join(name);
    std::fs::write(&file, text).unwrap();
    let out = crate::support::cmd()
        .args(["accept", "--blueprint"])
        .arg(&bp)
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{}: {stderr}", file.display());
    (file, stderr)
}

fn not_passed(findings: &[(String, String, String)]) -> Vec<&(String, String, String)> {
    findings.iter().filter(|f| f.1 != "pass").collect()
}

/// The fixture blueprint with its compute NIC group replaced.
fn with_rails(nics: &str) -> String {
    rails_in(BLUEPRINT, nics)
}

fn rails_in(base: &str, nics: &str) -> String {
    let start = base.find("    - role: compute").unwrap();
    let end = base.find("    - role: management").unwrap();
    format!("{}{nics}{}", &base[..start], &base[end..])
}

fn group(model: &str, count: u32, speed: u32, layer: &str, role: &str) -> String {
    format!(
        "    - role: {role}\n      model: {model}\n      count: {count}\n      speedGbps: {speed}\n      mtu: 4096\n      linkLayer: {layer}\n      rdma: true\n"
    )
}

/// The independent scan: (device, state, rate, link layer) per port of an ibstat file.
fn scan(text: &str) -> Vec<(String, String, String, String)> {
    let mut out = Vec::new();
    let mut device = String::new();
    let mut cur: Option<(String, String, String)> = None;
    for l in text.lines() {
        let t = l.trim();
        if let Some(r) = t.strip_prefix("CA '") {
            device = r.trim_end_matches('\'').to_owned();
        } else if let Some(r) = t.strip_prefix("Infiniband device '") {
            device = r.split('\'').next().unwrap().to_owned();
        } else if let Some(v) = t.strip_prefix("State:").or(t.strip_prefix("state:")) {
            cur = Some((
                v.trim().rsplit(' ').next().unwrap().to_owned(),
                String::new(),
                String::new(),
            ));
        } else if let Some(v) = t.strip_prefix("Rate:").or(t.strip_prefix("rate:")) {
            cur.as_mut().unwrap().1 = v.split_whitespace().next().unwrap().to_owned();
        } else if let Some(v) = t
            .strip_prefix("Link layer:")
            .or(t.strip_prefix("link_layer:"))
        {
            let (s, r, _) = cur.take().unwrap();
            out.push((device.clone(), s, r, v.trim().to_owned()));
        }
    }
    out
}

/// Each acceptance corpus file and the NIC groups of the node it came from.
fn ibstat_cases() -> Vec<(&'static str, String)> {
    vec![
        (
            "acceptance/ibstat/leptonai__gpud__ibstat-h100-8xcx7-ib-ndr400-bond",
            group("ConnectX-7", 8, 400, "infiniband", "compute"),
        ),
        (
            "acceptance/ibstat/leptonai__gpud__ibstat-h100-cx7-roce400-mixed-cx6dx",
            group("ConnectX-7", 8, 400, "ethernet", "compute")
                + &group("ConnectX-6 Dx", 4, 100, "ethernet", "storage"),
        ),
        (
            // MT4126 are virtual functions: no model to match, any ConnectX fits.
            "acceptance/ibstat/leptonai__gpud__ibstat-a100-cx6-mixed",
            group("ConnectX-6", 8, 200, "infiniband", "compute"),
        ),
        (
            "acceptance/ibstat/leptonai__gpud__ibstatus-a100-hdr200",
            group("ConnectX-6", 8, 200, "infiniband", "compute"),
        ),
    ]
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn ibstat_corpus_rails_pass_and_ports_are_recorded() {
    let folder = corpus("acceptance/ibstat");
    let on_disk = std::fs::read_dir(&folder).unwrap().count();
    assert_eq!(
        on_disk,
        ibstat_cases().len(),
        "every ibstat corpus file has a case"
    );
    for (rel, nics) in ibstat_cases() {
        let text = read(&corpus(rel));
        let want = scan(&text);
        assert!(want.len() >= 9, "{rel}: the scan found {want:?}");
        let (findings, record) = accept(&with_rails(&nics), &[("ibstat.txt", text)], "ports.");
        assert!(not_passed(&findings).is_empty(), "{rel}: {findings:?}");
        let declared: usize = nics.matches("count: ").count();
        assert_eq!(
            findings
                .iter()
                .filter(|f| f.0.starts_with("ports.count"))
                .count(),
            declared,
            "{rel}"
        );
        let ports = record["baseline"]["ports"].as_array().unwrap();
        assert_eq!(ports.len(), want.len(), "{rel}");
        for (p, (device, state, rate, layer)) in ports.iter().zip(&want) {
            assert_eq!(p["device"], device.as_str(), "{rel}");
            assert_eq!(
                p["state"].as_str().unwrap().to_ascii_uppercase(),
                state.to_ascii_uppercase(),
                "{rel} {device}"
            );
            assert_eq!(
                p["rate_gbps"].as_f64().unwrap(),
                rate.parse::<f64>().unwrap(),
                "{rel} {device}"
            );
            assert_eq!(p["link_layer"], layer.as_str(), "{rel} {device}");
        }
        // Ports of no declared group (a BlueField bond, a frontend port) are recorded
        // without a group and not judged.
        let undeclared = ports.iter().filter(|p| p["group"].is_null()).count();
        let judged = findings
            .iter()
            .filter(|f| f.0.starts_with("ports.port"))
            .count();
        assert_eq!(undeclared + judged, want.len(), "{rel}");
    }
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn ibstat_corpus_damaged_copies_are_refused_with_file_and_line() {
    for (rel, nics) in ibstat_cases() {
        let text = read(&corpus(rel));
        // Cut inside the last port's block: its link layer is gone.
        let lines: Vec<&str> = text.lines().collect();
        let cut = lines
            .iter()
            .rposition(|l| l.trim().to_ascii_lowercase().starts_with("link"))
            .unwrap();
        let truncated = lines[..cut].join("\n");
        let (file, stderr) = refused(&with_rails(&nics), "ibstat.txt", &truncated);
        assert!(
            stderr.contains(&format!("{}:", file.display())),
            "{rel}: {stderr}"
        );
        assert!(stderr.contains("no link layer"), "{rel}: {stderr}");
        // A mangled rate, with its line.
        let rate_line = lines
            .iter()
            .position(|l| l.trim().to_ascii_lowercase().starts_with("rate:"))
            .unwrap();
        let mut mangled: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
        mangled[rate_line] = mangled[rate_line].replace(|c: char| c.is_ascii_digit(), "x");
        let (file, stderr) = refused(&with_rails(&nics), "ibstat.txt", &mangled.join("\n"));
        assert!(
            stderr.contains(&format!("{}:{}:", file.display(), rate_line + 1)),
            "{rel}: {stderr}"
        );
    }
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn ibstat_corpus_ports_down_or_slow_fail_as_link_faults() {
    // A real node with three CX-6 Dx ports down (Disabled, rate 40).
    let text = read(&corpus("infiniband/gpud/ibstat.47.0.h100.some.down.0"));
    let down: Vec<String> = scan(&text)
        .into_iter()
        .filter(|p| p.1 != "Active")
        .map(|p| format!("ports.port[{}/1]", p.0))
        .collect();
    assert_eq!(down.len(), 3, "{down:?}");
    let nics = group("ConnectX-7", 8, 400, "infiniband", "compute")
        + &group("ConnectX-6 Dx", 4, 100, "ethernet", "storage");
    let (findings, _) = accept(&with_rails(&nics), &[("ibstat.txt", text)], "ports.");
    let failed: Vec<&String> = not_passed(&findings).iter().map(|f| &f.0).collect();
    assert_eq!(failed, down.iter().collect::<Vec<_>>(), "{findings:?}");
    assert!(
        not_passed(&findings)
            .iter()
            .all(|f| f.1 == "fail" && f.2 == "link")
    );

    // The NDR node with one port down and one trained at HDR (a slower rate).
    let text = read(&corpus(
        "acceptance/ibstat/leptonai__gpud__ibstat-h100-8xcx7-ib-ndr400-bond",
    ));
    let degraded = edit_port(&text, "mlx5_5", "State: Active", "State: Down");
    let degraded = edit_port(
        &degraded,
        "mlx5_5",
        "Physical state: LinkUp",
        "Physical state: Polling",
    );
    let degraded = edit_port(&degraded, "mlx5_8", "Rate: 400", "Rate: 200");
    let nics = group("ConnectX-7", 8, 400, "infiniband", "compute");
    let (findings, _) = accept(&with_rails(&nics), &[("ibstat.txt", degraded)], "ports.");
    assert_eq!(
        not_passed(&findings),
        [
            &(
                "ports.port[mlx5_5/1]".to_owned(),
                "fail".to_owned(),
                "link".to_owned()
            ),
            &(
                "ports.port[mlx5_8/1]".to_owned(),
                "fail".to_owned(),
                "link".to_owned()
            ),
        ],
        "{findings:?}"
    );
    // Declared as Ethernet (RoCE), the InfiniBand ports are of another link layer: a
    // NIC configuration (mlxconfig LINK_TYPE), a device fault.
    let nics = group("ConnectX-7", 8, 400, "ethernet", "compute");
    let (findings, _) = accept(
        &with_rails(&nics),
        &[("ibstat.txt", text.clone())],
        "ports.",
    );
    let wrong = not_passed(&findings);
    assert_eq!(wrong.len(), 8, "{findings:?}");
    assert!(wrong.iter().all(|f| f.2 == "device"), "{wrong:?}");
    // A group larger than the node: the missing ports are counted.
    let nics = group("ConnectX-7", 10, 400, "infiniband", "compute");
    let (findings, _) = accept(&with_rails(&nics), &[("ibstat.txt", text)], "ports.");
    let short = not_passed(&findings);
    assert_eq!(short.len(), 1, "{findings:?}");
    assert!(
        short[0].0.starts_with("ports.count[network.nics[0]"),
        "{short:?}"
    );
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn ibstat_corpus_ibpanic_fails_the_listing() {
    let text = read(&corpus(
        "infiniband/gpud/ibstat.39.0.a100.failed.ibpanic.exit-255.0",
    ));
    let nics = group("ConnectX-6", 8, 200, "infiniband", "compute");
    let (findings, _) = accept(&with_rails(&nics), &[("ibstat.txt", text)], "ports.");
    let failed = not_passed(&findings);
    assert!(
        failed
            .iter()
            .any(|f| f.0 == "ports.ibstat" && f.2 == "device"),
        "{findings:?}"
    );
}

/// Replaces `from` by `to` inside the block of CA `device`.
fn edit_port(text: &str, device: &str, from: &str, to: &str) -> String {
    let start = text.find(&format!("CA '{device}'")).unwrap();
    let end = text[start + 1..]
        .find("CA '")
        .map_or(text.len(), |i| start + 1 + i);
    let block = text[start..end].replacen(from, to, 1);
    assert_ne!(block, text[start..end], "{from} not in {device}");
    format!("{}{block}{}", &text[..start], &text[end..])
}

const MADE_UP: &str = "CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tLink layer: InfiniBand\n";

#[test]
fn a_port_down_fails_and_a_healthy_one_passes() {
    let nics = group("ConnectX-7", 1, 400, "infiniband", "compute");
    let (findings, record) = accept(
        &with_rails(&nics),
        &[("ibstat.txt", MADE_UP.into())],
        "ports.",
    );
    assert!(not_passed(&findings).is_empty(), "{findings:?}");
    assert_eq!(record["baseline"]["ports"][0]["group"], "network.nics[0]");
    let down = MADE_UP
        .replace("State: Active", "State: Down")
        .replace("LinkUp", "Disabled");
    let (findings, _) = accept(&with_rails(&nics), &[("ibstat.txt", down)], "ports.");
    assert_eq!(
        not_passed(&findings),
        [&(
            "ports.port[mlx5_0/1]".to_owned(),
            "fail".to_owned(),
            "link".to_owned()
        )]
    );
    // Without ibstat the section says why it is empty.
    let (_, record) = accept(&with_rails(&nics), &[("topo.txt", TOPO.into())], "ports.");
    assert!(
        record["baseline"]["ports"]["not_run"]
            .as_str()
            .unwrap()
            .contains("no ibstat output"),
        "{}",
        record["baseline"]
    );
}

/// Two GPUs, two NICs: GPU0 behind a switch with NIC0, GPU1 across the socket from both.
const TOPO: &str = "\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n\
GPU0\t X \tNV18\tPXB\tSYS\t0-55\t0\t\tN/A\n\
GPU1\tNV18\t X \tSYS\tSYS\t56-111\t1\t\tN/A\n\
NIC0\tPXB\tSYS\t X \tPIX\t\t\t\t\n\
NIC1\tSYS\tSYS\tPIX\t X \t\t\t\t\n\
\nLegend:\n\n  X    = Self\n\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n";

/// The fixture blueprint with `gpus` GPUs on PCIe (no NVSwitch).
fn with_gpus(gpus: u32) -> String {
    BLUEPRINT
        .replace("  count: 8\n  pcie:", &format!("  count: {gpus}\n  pcie:"))
        .replace(
            "    gpuLinks: true\n    nvswitch: true\n",
            "    gpuLinks: false\n    nvswitch: false\n",
        )
}

#[test]
fn a_gpu_without_a_near_rail_nic_fails_placement() {
    let (findings, record) = accept(&with_gpus(2), &[("topo.txt", TOPO.into())], "gpu-nic.");
    assert_eq!(
        not_passed(&findings),
        [
            &(
                "gpu-nic.pcie-switch[GPU1]".to_owned(),
                "fail".to_owned(),
                "link".to_owned()
            ),
            &(
                "gpu-nic.numa[GPU1]".to_owned(),
                "fail".to_owned(),
                "link".to_owned()
            ),
        ],
        "{findings:?}"
    );
    let gpu0 = &record["baseline"]["gpu_nic"][0];
    assert_eq!(
        (&gpu0["rdma_device"], &gpu0["path"], &gpu0["numa"]),
        (&"mlx5_0".into(), &"PXB".into(), &0.into())
    );
    // GPU1 next to NIC1: placement holds when any NIC counts ...
    let near = TOPO
        .replace("GPU1\tNV18\t X \tSYS\tSYS", "GPU1\tNV18\t X \tSYS\tPIX")
        .replace("NIC1\tSYS\tSYS", "NIC1\tSYS\tPIX");
    let (findings, _) = accept(&with_gpus(2), &[("topo.txt", near.clone())], "gpu-nic.");
    assert!(not_passed(&findings).is_empty(), "{findings:?}");
    // ... but not when ibstat shows mlx5_0 as the only rail: mlx5_1 is no rail.
    let blueprint = rails_in(
        &with_gpus(2),
        &group("ConnectX-7", 1, 400, "infiniband", "compute"),
    );
    let (findings, _) = accept(
        &blueprint,
        &[("topo.txt", near), ("ibstat.txt", MADE_UP.into())],
        "gpu-nic.",
    );
    let failed: Vec<&String> = not_passed(&findings).iter().map(|f| &f.0).collect();
    assert_eq!(
        failed,
        ["gpu-nic.pcie-switch[GPU1]", "gpu-nic.numa[GPU1]"],
        "{findings:?}"
    );
}

/// The cells of `text` with the GPU row `gpu`'s NIC columns (and the NIC rows' `gpu`
/// column) replaced by `link`: the NICs moved behind another socket.
fn move_nics_away(text: &str, gpu: usize, link: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let header: Vec<String> = lines[0].split_whitespace().map(str::to_owned).collect();
    let devices: Vec<&String> = header.iter().take_while(|h| *h != "CPU").collect();
    let nic_cols: Vec<usize> = devices
        .iter()
        .enumerate()
        .filter(|(_, d)| !d.starts_with("GPU"))
        .map(|(i, _)| i)
        .collect();
    let gpu_name = format!("GPU{gpu}");
    for line in lines.iter_mut().skip(1) {
        let cells: Vec<&str> = line.split('\t').collect();
        let Some(first) = cells.first().map(|c| c.trim()) else {
            continue;
        };
        let Some(row) = devices.iter().position(|d| d.as_str() == first) else {
            continue;
        };
        let mut cells: Vec<String> = cells.iter().map(|c| (*c).to_owned()).collect();
        if first == gpu_name {
            for c in &nic_cols {
                cells[c + 1] = link.to_owned();
            }
        } else if nic_cols.contains(&row) {
            cells[gpu + 1] = link.to_owned();
        }
        *line = cells.join("\t");
    }
    lines.join("\n") + "\n"
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn topo_corpus_gpu_nic_affinity() {
    // 4× RTX 6000 Ada, each GPU NODE to two NICs on its socket (no PCIe switch shared):
    // same NUMA node, but not GPUDirect-close.
    let rel =
        "acceptance/nvidia-smi-topo/luigifcruz__stelline__topo-m-4xRTX6000Ada-4nic-spaces.txt";
    let text = read(&corpus(rel));
    let (findings, record) = accept(&with_gpus(4), &[("topo.txt", text.clone())], "gpu-nic.");
    let failed: Vec<&String> = not_passed(&findings).iter().map(|f| &f.0).collect();
    assert_eq!(
        failed,
        ["GPU0", "GPU1", "GPU2", "GPU3"]
            .map(|g| format!("gpu-nic.pcie-switch[{g}]"))
            .iter()
            .collect::<Vec<_>>(),
        "{findings:?}"
    );
    // Values from the file: GPU2's row is `SYS SYS X NODE SYS SYS NODE NODE 32-63 1`,
    // and the NIC legend names NIC2 mlx5_2.
    let gpu2 = &record["baseline"]["gpu_nic"][2];
    assert_eq!(gpu2["path"], "NODE");
    assert_eq!(gpu2["numa"], 1);
    assert_eq!(gpu2["nic"], "NIC2");
    assert_eq!(gpu2["rdma_device"], "mlx5_2");
    assert!(text.contains("NIC2: mlx5_2"));

    // DGX-1 (8× V100, 4 NICs named as columns): every GPU has a NIC at PIX.
    let dgx1 = read(&corpus(
        "nvidia-smi-topo/EXTRACT_msccl-tools__dgx1-v100x8-mlx5x4__topo-m.txt",
    ));
    let (findings, record) = accept(&with_gpus(8), &[("topo.txt", dgx1.clone())], "gpu-nic.");
    assert!(not_passed(&findings).is_empty(), "{findings:?}");
    assert_eq!(findings.len(), 1 + 2 * 8, "{findings:?}");
    assert_eq!(record["baseline"]["gpu_nic"][4]["rdma_device"], "mlx5_2");
    // Derived: GPU5's NICs behind the other socket (SYS), GPU6's behind the host
    // bridge (PHB): GPU5 fails both, GPU6 only the switch.
    let moved = move_nics_away(&move_nics_away(&dgx1, 5, "SYS"), 6, "PHB");
    let (findings, _) = accept(&with_gpus(8), &[("topo.txt", moved)], "gpu-nic.");
    let failed: Vec<&String> = not_passed(&findings).iter().map(|f| &f.0).collect();
    assert_eq!(
        failed,
        [
            "gpu-nic.pcie-switch[GPU5]",
            "gpu-nic.numa[GPU5]",
            "gpu-nic.pcie-switch[GPU6]"
        ]
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .iter()
        .collect::<Vec<_>>(),
        "{findings:?}"
    );
    // A matrix cut before its last NIC row is refused with the file's last line.
    let cut: String = text.lines().take(8).map(|l| format!("{l}\n")).collect();
    let (file, stderr) = refused(&with_gpus(4), "topo.txt", &cut);
    assert!(
        stderr.contains(&format!("{}:8:", file.display())),
        "{stderr}"
    );
    assert!(stderr.contains("NIC3 is missing"), "{stderr}");
}
