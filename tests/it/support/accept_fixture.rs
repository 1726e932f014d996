//! Acceptance outputs made by this project for the verify fixture's node (`gpu-node-01`,
//! blueprint `h100-fixture`: 8× H100 SXM, 8 NDR rails): what the rendered workloads print
//! on it when healthy, in each tool's real format, with knobs to degrade them (slower
//! all-reduce, a GPU missing, a DCGM failure). Real outputs from public projects are in
//! `../shared/corpus` (opt-in suite).

#![allow(dead_code)]

use std::fmt::Write;
use std::path::Path;

/// A finding of a record or report as `(id[subject], verdict, fault)`, the form the
/// acceptance tests compare.
pub fn finding_key(f: &serde_json::Value) -> (String, String, String) {
    let text = |k: &str| f[k].as_str().unwrap_or_default().to_owned();
    let name = match f["subject"].as_str() {
        Some(s) => format!("{}[{s}]", text("id")),
        None => text("id"),
    };
    (name, text("verdict"), text("fault"))
}

pub const NODE: &str = "gpu-node-01";
pub const PEER: &str = "gpu-node-02";

/// The knobs of one fixture set.
#[derive(Clone)]
pub struct Knobs {
    /// All-reduce bus bandwidth at the largest size, GB/s.
    pub busbw: f64,
    /// GPUs that take part (of 8).
    pub gpus: usize,
    /// A DCGM plugin that fails on GPU 3.
    pub dcgm_failure: Option<&'static str>,
    /// Per-rail ib_write_bw, Gb/s.
    pub rail_gbps: f64,
    /// Seconds of the framework's tensor step.
    pub tensor_seconds: f64,
    /// Peak power each GPU draws under the framework's matmul load, W (limit 700 W).
    pub peak_watts: f64,
    /// A GPU whose hardware thermal slowdown engages under load.
    pub thermal_slowdown: Option<usize>,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            busbw: 482.0,
            gpus: 8,
            dcgm_failure: None,
            rail_gbps: 392.4,
            tensor_seconds: 2.0,
            peak_watts: 688.4,
            thermal_slowdown: None,
        }
    }
}

/// Writes every output into `dir` (one file per workload, as `kubectl logs` would).
pub fn write_all(dir: &Path, k: &Knobs) {
    let w = |name: &str, text: String| std::fs::write(dir.join(name), text).unwrap();
    w("node.json", node_json());
    w("pods.json", pods_json());
    w("runtime-classes.json", runtime_classes_json());
    w("smoke.log", smoke(k.gpus));
    w("dcgm-exporter-metrics.txt", dcgm_exporter(8, SMOKE_POD));
    w("dcgm-diag.json", dcgm(k.gpus, k.dcgm_failure));
    w("nvbandwidth.log", nvbandwidth(k.gpus));
    w("all-reduce.log", nccl(&[NODE], k.gpus, k.busbw));
    w("multi-node-all-reduce.log", nccl(&[NODE, PEER], 8, 380.0));
    for rail in 0..8 {
        w(
            &format!("ib_write_bw-mlx5_{rail}.log"),
            ib_write_bw(rail, k.rail_gbps),
        );
    }
    w(
        "framework.log",
        framework(k.tensor_seconds) + &power_samples(k.peak_watts, k.thermal_slowdown),
    );
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// nccl-tests 2.17 output of all_reduce_perf, 1 MiB .. 16 GiB, validated.
pub fn nccl(hosts: &[&str], gpus_per_host: usize, peak: f64) -> String {
    let n = hosts.len() * gpus_per_host;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# nccl-tests version 2.17.6 nccl-headers=22703 nccl-library=22703"
    );
    let _ = writeln!(out, "# Collective test starting: all_reduce_perf");
    let _ = writeln!(
        out,
        "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0"
    );
    let _ = writeln!(out, "#\n# Using devices");
    let mut rank = 0;
    for host in hosts {
        for d in 0..gpus_per_host {
            let _ = writeln!(
                out,
                "#  Rank {rank:2} Group  0 Pid {:6} on {host:>12} device {d:2} [0000:{:02x}:00] NVIDIA H100 80GB HBM3",
                4000 + rank,
                0x19 + 0x20 * d
            );
            rank += 1;
        }
    }
    let _ = writeln!(
        out,
        "#\n#                                                              out-of-place                       in-place"
    );
    let _ = writeln!(
        out,
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong"
    );
    let _ = writeln!(
        out,
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)"
    );
    let factor = 2.0 * (n as f64 - 1.0) / n as f64;
    let mut sum = 0.0;
    let mut count = 0;
    for e in 20..=34u32 {
        let size = 1u64 << e;
        // Bandwidth rises towards the peak as messages grow.
        let busbw = round2(peak * (size as f64) / (size as f64 + 64.0 * 1024.0 * 1024.0));
        let algbw = round2(busbw / factor);
        let time = (size as f64 / (algbw * 1e3)).max(0.01);
        let _ = writeln!(
            out,
            "{size:12} {:13}     float     sum      -1  {time:7.1}  {algbw:6.2}  {busbw:6.2}       0  {time:7.1}  {algbw:6.2}  {busbw:6.2}       0",
            size / 4
        );
        sum += 2.0 * busbw;
        count += 2;
    }
    let _ = writeln!(out, "# Out of bounds values : 0 OK");
    let _ = writeln!(
        out,
        "# Avg bus bandwidth    : {:.4} ",
        sum / f64::from(count)
    );
    let _ = writeln!(out, "#\n# Collective test concluded: all_reduce_perf");
    out
}

/// `dcgmi diag -r 3 -j` in DCGM 3.x's shape.
pub fn dcgm(gpus: usize, failure: Option<&str>) -> String {
    let ids = (0..gpus)
        .map(|g| g.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let result = |name: &str| {
        let results: Vec<String> = (0..gpus)
            .map(|g| {
                let fail = failure == Some(name) && g == 3;
                if fail {
                    format!(r#"{{"gpu_ids": "{g}", "status": "Fail", "warnings": [{{"warning": "GPU {g} Error using CUDA API cudaMalloc"}}]}}"#)
                } else {
                    format!(r#"{{"gpu_ids": "{g}", "status": "Pass"}}"#)
                }
            })
            .collect();
        format!(
            r#"{{"name": "{name}", "results": [{}]}}"#,
            results.join(", ")
        )
    };
    let deployment = [
        "Denylist",
        "NVML Library",
        "CUDA Main Library",
        "Permissions and OS Blocks",
        "Persistence Mode",
        "Environment Variables",
        "Page Retirement/Row Remap",
        "Graphics Processes",
        "Inforom",
    ]
    .iter()
    .map(|n| format!(r#"{{"name": "{n}", "results": [{{"status": "Pass"}}]}}"#))
    .collect::<Vec<_>>()
    .join(",\n        ");
    format!(
        r#"Successfully ran diagnostic for group.
{{
  "DCGM GPU Diagnostic": {{
    "test_categories": [
      {{"category": "Deployment", "tests": [
        {deployment}
      ]}},
      {{"category": "Integration", "tests": [{pcie}]}},
      {{"category": "Hardware", "tests": [{memory}, {diag}]}},
      {{"category": "Stress", "tests": [{ts}, {tp}, {mb}]}}
    ],
    "version": "3.3.9",
    "Driver Version Detected": "570.172.08",
    "GPU Device IDs": [{devs}]
  }}
}}
"#,
        pcie = result("PCIe"),
        memory = result("GPU Memory"),
        diag = result("Diagnostic"),
        ts = result("Targeted Stress"),
        tp = result("Targeted Power"),
        mb = result("Memory Bandwidth"),
        devs = ids
            .split(',')
            .map(|_| "\"2330\"")
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn matrix(
    out: &mut String,
    title: &str,
    rows: usize,
    cols: usize,
    value: impl Fn(usize, usize) -> Option<f64>,
) {
    let _ = writeln!(out, "{title}");
    let header: String = (0..cols).map(|c| format!("{c:>10}")).collect();
    let _ = writeln!(out, "{header}");
    for r in 0..rows {
        let cells: String = (0..cols)
            .map(|c| match value(r, c) {
                Some(v) => format!("{v:>10.2}"),
                None => format!("{:>10}", "N/A"),
            })
            .collect();
        let _ = writeln!(out, "{r:>2}{cells}");
    }
}

/// nvbandwidth 0.10 text output: host↔device and device→device copies.
pub fn nvbandwidth(gpus: usize) -> String {
    let mut out = String::from(
        "nvbandwidth Version: v0.10.0\nBuilt from Git version: v0.10.0\n\nCUDA Runtime Version: 13.0 (13000)\nDriver Version: 570.172.08\n\n",
    );
    for g in 0..gpus {
        let _ = writeln!(
            out,
            "Device {g}: NVIDIA H100 80GB HBM3 (00000000:{:02x}:00)",
            0x19 + 0x20 * g
        );
    }
    for (name, title, value) in [
        (
            "host_to_device_memcpy_ce",
            "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)",
            55.2,
        ),
        (
            "device_to_host_memcpy_ce",
            "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)",
            55.6,
        ),
    ] {
        let _ = writeln!(out, "\nRunning {name}.");
        matrix(&mut out, title, 1, gpus, |_, c| {
            Some(value + c as f64 / 100.0)
        });
        let _ = writeln!(
            out,
            "\nSUM {name} {:.2}",
            (0..gpus).map(|c| value + c as f64 / 100.0).sum::<f64>()
        );
    }
    let _ = writeln!(out, "\nRunning device_to_device_memcpy_read_ce.");
    matrix(
        &mut out,
        "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)",
        gpus,
        gpus,
        |r, c| (r != c).then_some(370.9),
    );
    let _ = writeln!(
        out,
        "\nSUM device_to_device_memcpy_read_ce {:.2}",
        370.9 * (gpus * gpus.saturating_sub(1)) as f64
    );
    out
}

/// perftest 4.5 client output of `ib_write_bw --use_cuda=N -a --report_gbits`.
pub fn ib_write_bw(rail: usize, gbps: f64) -> String {
    let mut out = format!(
        "initializing CUDA\nPicking device No. {rail}\n[pid = 19020, dev = {rail}] device name = [NVIDIA H100 80GB HBM3]\nusing DMA-BUF for GPU buffer address at 0x7fa156800000 aligned at 0x7fa156800000 with aligned size 16777216\n\
---------------------------------------------------------------------------------------\n\
                    RDMA_Write BW Test\n\
 Dual-port       : OFF\t\tDevice         : mlx5_{rail}\n\
 Number of qps   : 1\t\tTransport type : IB\n\
 Connection type : RC\t\tUsing SRQ      : OFF\n\
 Mtu             : 4096[B]\n\
 Link type       : IB\n\
---------------------------------------------------------------------------------------\n\
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
    );
    for e in 16..=23u32 {
        let size = 1u64 << e;
        let bw = round2(gbps * size as f64 / (size as f64 + 8192.0));
        let _ = writeln!(
            out,
            " {size:<10} 5000           {:.2}             {bw:.2}              {:.6}",
            bw + 0.05,
            bw * 1e3 / 8.0 / size as f64
        );
    }
    out.push_str("---------------------------------------------------------------------------------------\ndeallocating GPU buffer 00007fa156800000\n");
    out
}

/// The rendered smoke Pod's name.
pub const SMOKE_POD: &str = "nodeimg-acceptance-smoke";

/// The UUID of the fixture node's GPU `i`.
pub fn gpu_uuid(i: usize) -> String {
    format!("GPU-6f3c1e2a-0b4d-4c1e-9a7b-00000000000{i}")
}

/// dcgm-exporter's page scraped while `pod` held the first `allocated` GPUs (of 8), in
/// the layout dcgm-exporter 4 prints with pod mapping: `# HELP`/`# TYPE` per field, the
/// device labels, then `container`, `namespace`, `pod` (empty for a GPU no pod holds).
pub fn dcgm_exporter(allocated: usize, pod: &str) -> String {
    let mut out = String::new();
    for (field, help, kind, value) in [
        (
            "DCGM_FI_DEV_SM_CLOCK",
            "SM clock frequency (in MHz).",
            "gauge",
            "1980",
        ),
        (
            "DCGM_FI_DEV_GPU_UTIL",
            "GPU utilization (in %).",
            "gauge",
            "100",
        ),
        (
            "DCGM_FI_DEV_XID_ERRORS",
            "Value of the last XID error encountered.",
            "gauge",
            "0",
        ),
    ] {
        out.push_str(&format!("# HELP {field} {help}\n# TYPE {field} {kind}\n"));
        for i in 0..8 {
            let (ns, p, c) = if i < allocated {
                ("nodeimg-acceptance", pod, "probe")
            } else {
                ("", "", "")
            };
            out.push_str(&format!(
                "{field}{{gpu=\"{i}\",UUID=\"{}\",pci_bus_id=\"00000000:{:02X}:00.0\",device=\"nvidia{i}\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"{NODE}\",DCGM_FI_DRIVER_VERSION=\"570.172.08\",container=\"{c}\",namespace=\"{ns}\",pod=\"{p}\"}} {value}\n",
                gpu_uuid(i),
                0x19 + 0x20 * i
            ));
        }
    }
    out
}

/// The smoke Pod's probe lines: its `/dev/shm` is the blueprint's 64Gi `shmSize`.
pub fn smoke(received: usize) -> String {
    let devices: Vec<String> = (0..received)
        .map(|i| format!(r#"{{"index": {i}, "name": "NVIDIA H100 80GB HBM3", "uuid": "{}", "bus": "0000:{:02x}:00.0"}}"#, gpu_uuid(i), 0x19 + 0x20 * i))
        .collect();
    format!(
        "{{\"nodeimg\": \"probe/v1\", \"suite\": \"smoke\", \"step\": \"shm\", \"status\": \"pass\", \"seconds\": 0.0, \"node\": \"{NODE}\", \"metrics\": {{\"bytes\": 68719476736}}}}\n\
{{\"nodeimg\": \"probe/v1\", \"suite\": \"smoke\", \"step\": \"devices\", \"status\": \"pass\", \"seconds\": 0.4, \"node\": \"{NODE}\", \"pod\": \"{SMOKE_POD}\", \"namespace\": \"nodeimg-acceptance\", \"requested\": 8, \"devices\": [{}]}}\n\
{{\"nodeimg\": \"probe/v1\", \"suite\": \"smoke\", \"step\": \"tensor\", \"status\": \"pass\", \"seconds\": 1.1, \"node\": \"{NODE}\", \"metrics\": {{\"tflops\": 640.5}}}}\n",
        devices.join(", ")
    )
}

/// The framework Job's probe lines (rank 0), with a warning line between them.
pub fn framework(tensor_seconds: f64) -> String {
    let step = |name: &str, seconds: f64, metrics: &str| {
        format!(
            "{{\"nodeimg\": \"probe/v1\", \"suite\": \"framework\", \"step\": \"{name}\", \"status\": \"pass\", \"seconds\": {seconds}, \"node\": \"{NODE}\", \"rank\": 0, \"world_size\": 16, \"metrics\": {{{metrics}}}}}\n"
        )
    };
    let mut out = String::new();
    out.push_str(&step("devices", 0.3, "\"count\": 8"));
    out.push_str(
        "/usr/lib/python3/dist-packages/torch/distributed/c10d_logger.py:83: UserWarning: ...\n",
    );
    out.push_str(&step("tensor", tensor_seconds, "\"tflops\": 655.2"));
    out.push_str(&step("load", 30.1, "\"tflops\": 648.7"));
    out.push_str(&step("collective", 3.2, "\"busbw_gbps\": 478.1"));
    out.push_str(&step(
        "multinode",
        41.0,
        "\"step_seconds\": 0.82, \"tokens_per_second\": 412000",
    ));
    out.push_str(&step(
        "inference",
        12.5,
        "\"latency_ms\": 38.2, \"tokens_per_second\": 2890",
    ));
    out.push_str(&step(
        "checkpoint",
        22.4,
        "\"save_seconds\": 14.1, \"restore_seconds\": 8.3",
    ));
    out
}

/// What the framework Job's power sampler (`sample-power.sh`) prints after the probe
/// lines: nvidia-smi's CSV, 8 GPUs sampled twice idle and three times under the matmul
/// load, in the format of the H100 capture in `../shared/corpus/nvidia-smi-text-captures`
/// (units in the values, `Active`/`Not Active`).
pub fn power_samples(peak_watts: f64, thermal: Option<usize>) -> String {
    let mut out = String::from(
        "# nodeimg power samples\ntimestamp, index, pci.bus_id, power.draw [W], enforced.power.limit [W], clocks.sm [MHz], clocks.max.sm [MHz], temperature.gpu, clocks_throttle_reasons.sw_power_cap, clocks_throttle_reasons.hw_slowdown, clocks_throttle_reasons.hw_thermal_slowdown, clocks_throttle_reasons.hw_power_brake_slowdown, clocks_throttle_reasons.sw_thermal_slowdown\n",
    );
    let loads = [
        (69.5, 345, 41),
        (70.1, 345, 41),
        (peak_watts - 12.0, 1980, 58),
        (peak_watts, 1755, 63),
        (peak_watts - 5.0, 1785, 64),
    ];
    for (t, (watts, clock, temp)) in loads.iter().enumerate() {
        for gpu in 0..8 {
            let hot = thermal == Some(gpu) && t >= 3;
            let (clock, temp, active) = if hot {
                (840, 91, "Active, Active")
            } else {
                (*clock, *temp, "Not Active, Not Active")
            };
            let cap = if t >= 3 { "Active" } else { "Not Active" };
            let _ = writeln!(
                out,
                "2026/12/05 14:02:{:02}.{:03}, {gpu}, 00000000:{:02X}:00.0, {watts:.2} W, 700.00 W, {clock} MHz, 1980 MHz, {temp}, {cap}, {active}, Not Active, Not Active",
                11 + t / 2,
                (t % 2) * 500 + gpu,
                0x19 + 0x20 * gpu
            );
        }
    }
    out
}

/// The JAX Job's probe lines as `probe-jax.py` prints them (`json.dumps`, suite `jax`).
pub fn jax() -> String {
    let step = |name: &str, seconds: f64, metrics: &str| {
        format!(
            "{{\"nodeimg\": \"probe/v1\", \"suite\": \"jax\", \"step\": \"{name}\", \"status\": \"pass\", \"seconds\": {seconds}, \"node\": \"{NODE}\", \"metrics\": {{{metrics}}}}}\n"
        )
    };
    let mut out = String::from(
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n",
    );
    out.push_str(&step("devices", 2.41, "\"count\": 8"));
    out.push_str(&step("tensor", 6.87, "\"tflops\": 612.3"));
    out.push_str(&step(
        "collective",
        4.02,
        "\"busbw_gbps\": 431.6, \"devices\": 8",
    ));
    out
}

/// The inference Job's line as `serve-check.py` prints it (suite `inference`).
pub fn inference(tokens_per_second: f64, ttft_ms: f64) -> String {
    format!(
        "INFO 12-05 14:03:11 [api_server.py:1880] vLLM API server version 0.11.0\n\
{{\"nodeimg\": \"probe/v1\", \"suite\": \"inference\", \"step\": \"serve\", \"status\": \"pass\", \"seconds\": 97.512, \"node\": \"{NODE}\", \"metrics\": {{\"ttft_ms\": {ttft_ms}, \"tokens_per_second\": {tokens_per_second}, \"tokens\": 128}}}}\n"
    )
}

const GIB: i128 = 1 << 30;
const MIB: i128 = 1 << 20;

/// Node memory capacity: 2 TiB less what firmware and kernel keep (1.5 %), in KiB.
pub fn memory_capacity_kib() -> i128 {
    (2048 * GIB * 985 / 1000) / 1024
}

/// Ephemeral storage: 3500 GiB less file-system overhead (1 %), in KiB.
pub fn storage_capacity_kib() -> i128 {
    (3500 * GIB * 99 / 100) / 1024
}

/// The Node object kubelet registers for the fixture blueprint, its allocatable worked out
/// by hand: kubeReserved (eks for 224 CPUs, 110 pods) 630m / 1465Mi / 1Gi, systemReserved
/// 500m / 2Gi, kubelet's default eviction (memory.available 100Mi, nodefs.available 10 %),
/// hugepages 16 × 1Gi.
pub fn node_json() -> String {
    let mem = memory_capacity_kib() * 1024;
    let mem_alloc = mem - 1465 * MIB - 2 * GIB - 100 * MIB - 16 * GIB;
    let eph = storage_capacity_kib() * 1024;
    let eph_alloc = eph - GIB - (eph as f64 * 0.10).ceil() as i128;
    format!(
        r#"{{
  "apiVersion": "v1",
  "kind": "Node",
  "metadata": {{
    "name": "{NODE}",
    "labels": {{
      "kubernetes.io/hostname": "{NODE}",
      "nvidia.com/gpu.count": "8",
      "nvidia.com/gpu.present": "true",
      "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"
    }}
  }},
  "spec": {{}},
  "status": {{
    "capacity": {{"cpu": "224", "memory": "{}Ki", "ephemeral-storage": "{}Ki", "hugepages-1Gi": "16Gi", "hugepages-2Mi": "0", "nvidia.com/gpu": "8", "pods": "110"}},
    "allocatable": {{"cpu": "222870m", "memory": "{}", "ephemeral-storage": "{}", "hugepages-1Gi": "16Gi", "hugepages-2Mi": "0", "nvidia.com/gpu": "8", "pods": "110"}},
    "conditions": [
      {{"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory"}},
      {{"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure"}},
      {{"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID"}},
      {{"type": "Ready", "status": "True", "reason": "KubeletReady"}}
    ],
    "nodeInfo": {{"kubeletVersion": "v1.32.4", "containerRuntimeVersion": "containerd://1.7.27", "kernelVersion": "5.15.0-122-generic", "osImage": "Ubuntu 22.04.4 LTS", "architecture": "amd64"}},
    "runtimeHandlers": [{{"name": "runc"}}, {{"name": "nvidia"}}, {{"name": ""}}]
  }}
}}
"#,
        memory_capacity_kib(),
        storage_capacity_kib(),
        mem_alloc,
        eph_alloc
    )
}

/// The cluster's RuntimeClasses as `kubectl get runtimeclasses -o json` prints them: the
/// GPU Operator's own `nvidia` and the fixture class's (the fixture blueprint declares no
/// labels or taints, so it has no scheduling).
pub fn runtime_classes_json() -> String {
    r#"{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia", "resourceVersion": "812"}, "handler": "nvidia"},
  {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia-h100-fixture", "labels": {"nodeimg.dev/blueprint": "h100-fixture"}}, "handler": "nvidia"}
], "metadata": {"resourceVersion": ""}}
"#
    .to_owned()
}

/// The device plugin on the node, running and ready.
pub fn pods_json() -> String {
    let pod = |ns: &str, name: &str, image: &str| {
        format!(
            r#"{{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "{name}", "namespace": "{ns}", "ownerReferences": [{{"kind": "DaemonSet", "controller": true}}]}},
      "spec": {{"nodeName": "{NODE}", "containers": [{{"name": "c", "image": "{image}"}}]}},
      "status": {{"phase": "Running", "conditions": [{{"type": "Ready", "status": "True"}}]}}}}"#
        )
    };
    format!(
        "{{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n  {}\n]}}\n",
        pod(
            "kube-system",
            "nvidia-device-plugin-daemonset-x7k2p",
            "nvcr.io/nvidia/k8s-device-plugin:v0.17.1"
        ),
    )
}
