//! Times `collect` on the synthetic 8×H100 node (the nvidia-smi output is provided, so the
//! vendor tool is excluded; its XML is still parsed). Run in release:
//! `cargo run --release --example bench_facts -- [iterations]`.

#[allow(dead_code)]
#[path = "../tests/it/support/fixture_tree.rs"]
mod fixture_tree;
#[allow(dead_code)]
#[path = "../tests/it/support/nvidia_smi.rs"]
mod nvidia_smi;

use nodeimg::verify::{CollectOptions, KernelLogSource, LiveHost, ToolOutput, collect};
use std::time::{Duration, Instant};

fn main() {
    let iterations: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let tree = fixture_tree::h100_node();
    let options = CollectOptions {
        nvidia_smi: ToolOutput::Provided(fixture_tree::h100_nvidia_smi_xml()),
        rocm_smi: ToolOutput::Skip,
        kernel_log: KernelLogSource::Kmsg,
        runtime_commands: false,
        ..CollectOptions::default()
    };
    let mut times: Vec<Duration> = Vec::with_capacity(iterations);
    let mut gpus = 0;
    for _ in 0..iterations.max(1) {
        // A fresh host each time: its link cache starts empty, as in one verify run.
        let host = LiveHost::new(tree.root());
        let started = Instant::now();
        let facts = collect(&host, &options);
        times.push(started.elapsed());
        gpus = facts.gpus.gpus.len();
    }
    times.sort();
    let median = times[times.len() / 2];
    let p90 = times[times.len() * 9 / 10];
    println!(
        "collect on 8xH100 fixture ({gpus} GPUs): {} iterations, median {:.2} ms, p90 {:.2} ms, min {:.2} ms",
        times.len(),
        median.as_secs_f64() * 1e3,
        p90.as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3
    );
}
