//! Rendering speed: the largest example in-process (median of many runs),
//! then 250/500/1000 generated variants to show growth is linear.
//! Run with `scripts/bench-render` (release build).

use std::path::Path;
use std::time::{Duration, Instant};

use nodeimg::blueprint::{compat::Matrix, load_bytes};
use nodeimg::render::{Templates, render};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("blueprints/h100-sxm-ubuntu.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let matrix = Matrix::builtin();
    let base = root.join("blueprints");
    let bp = load_bytes(text.as_bytes(), &path, Some(&base), &matrix)
        .unwrap()
        .blueprint;
    let templates = Templates::embedded();

    for _ in 0..20 {
        render(&bp, &templates).unwrap();
    }
    let runs: Vec<Duration> = (0..200)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(render(&bp, &templates).unwrap());
            t.elapsed()
        })
        .collect();
    let load: Vec<Duration> = (0..200)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(load_bytes(text.as_bytes(), &path, Some(&base), &matrix).unwrap());
            t.elapsed()
        })
        .collect();
    println!(
        "render h100-sxm-ubuntu: median {:.2} ms (200 runs)",
        median(runs).as_secs_f64() * 1e3
    );
    println!(
        "load+validate h100-sxm-ubuntu: median {:.2} ms (200 runs)",
        median(load).as_secs_f64() * 1e3
    );

    // Variants: different maxPods, labels, kernel args; each validated and rendered.
    let variants: Vec<String> = (0..1000)
        .map(|i| {
            text.replace("maxPods: 110", &format!("maxPods: {}", 50 + i % 200))
                .replace("node-class: h100-sxm", &format!("node-class: h100-sxm-{i}"))
                .replace(
                    "- init_on_alloc=0",
                    &format!("- init_on_alloc=0\n      - nodeimg.variant={i}"),
                )
        })
        .collect();
    for n in [250, 500, 1000] {
        let t = Instant::now();
        for v in &variants[..n] {
            let bp = load_bytes(v.as_bytes(), &path, Some(&base), &matrix)
                .unwrap()
                .blueprint;
            std::hint::black_box(render(&bp, &templates).unwrap());
        }
        let e = t.elapsed();
        println!(
            "{n:>5} variants (validate + render): {:.1} ms total, {:.3} ms each",
            e.as_secs_f64() * 1e3,
            e.as_secs_f64() * 1e3 / n as f64
        );
    }
}
