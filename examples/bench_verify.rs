//! Times a whole verify run on the synthetic 8×H100 node: collect the facts, run every
//! check of the fixture blueprint, render the text and JSON reports. The nvidia-smi output
//! is provided (the vendor tool is excluded). Run in release:
//! `cargo run --release --example bench_verify -- [iterations]`.
//!
//! Two numbers: without the runtime commands (`containerd`/`kubelet --version`,
//! `systemctl is-active`), and with them (the fixture's stand-in scripts, so process
//! start-up is counted).

#[path = "../tests/it/support/mod.rs"]
mod support;

use nodeimg::blueprint::compat::Matrix;
use nodeimg::verify::checks::{self, Selection};
use nodeimg::verify::report::{self, BlueprintRef, Format, Report};
use nodeimg::verify::{CollectOptions, LiveHost, collect};
use std::time::{Duration, Instant};
use support::verify_fixture;

fn main() {
    let iterations: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(200)
        .max(1);
    let tree = verify_fixture::healthy_tree();
    let xml = verify_fixture::healthy_xml();
    let blueprint = verify_fixture::blueprint(verify_fixture::BLUEPRINT);
    let matrix = Matrix::builtin();
    for runtime_commands in [false, true] {
        let options = CollectOptions {
            runtime_commands,
            ..verify_fixture::options(&xml)
        };
        let mut times: Vec<Duration> = Vec::with_capacity(iterations);
        let mut checked = 0;
        for _ in 0..iterations {
            let started = Instant::now();
            let host = LiveHost::new(tree.root());
            let facts = collect(&host, &options);
            let results =
                checks::evaluate(blueprint.spec(), &facts, &matrix, &Selection::default());
            checked = results.len();
            let report = Report::new(
                BlueprintRef {
                    name: blueprint.name().to_owned(),
                    version: String::new(),
                    id: blueprint.id().to_owned(),
                    file: String::new(),
                },
                String::new(),
                "all",
                Vec::new(),
                0,
                0,
                None,
                results,
            );
            let text = report::render(&report, Format::Text);
            let json = report::render(&report, Format::Json);
            std::hint::black_box((text, json));
            times.push(started.elapsed());
        }
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "verify on 8xH100 fixture, runtime commands {}: {checked} results, {} iterations, median {:.2} ms, p90 {:.2} ms, min {:.2} ms",
            if runtime_commands { "on" } else { "off" },
            times.len(),
            ms(times[times.len() / 2]),
            ms(times[times.len() * 9 / 10]),
            ms(times[0])
        );
    }
}
