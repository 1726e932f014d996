//! Parse speed of `nodeimg accept`'s inputs: every acceptance output in the corpus
//! (median of many runs each: recognise the format, then parse), and a large
//! `NCCL_DEBUG=INFO` log (the largest nccl-tests output in the corpus with NCCL's INFO
//! lines inserted up to 48 MiB, under the 64 MiB input limit) against the obvious
//! alternative: one pass over its lines looking for the "Avg bus bandwidth" line.
//! Run with `scripts/bench-accept` (release build; needs ../shared/corpus).

use std::path::Path;
use std::time::{Duration, Instant};

use nodeimg::accept::input::{parse, recognise};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(f());
                t.elapsed()
            })
            .collect(),
    )
}

fn judge(text: &str, name: &str) -> usize {
    let format = recognise(text).unwrap_or_else(|| panic!("{name}: not recognised"));
    match parse(format, text, name) {
        Ok(_) => 1,
        Err(e) => panic!("{name}: {e}"),
    }
}

fn main() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/acceptance");
    assert!(corpus.is_dir(), "{} is missing", corpus.display());
    let mut files = Vec::new();
    for dir in ["nccl-tests", "dcgm", "perftest", "nvbandwidth", "k8s-node"] {
        for e in std::fs::read_dir(corpus.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "md") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            files.push((
                format!("{dir}/{}", p.file_name().unwrap().to_string_lossy()),
                text,
            ));
        }
    }
    files.sort_by_key(|(_, t)| std::cmp::Reverse(t.len()));
    println!("largest corpus outputs (recognise + parse, median of 200):");
    for (name, text) in files.iter().take(6) {
        let t = time(200, || judge(text, name));
        println!(
            "  {:>7} B  {:>8.1} µs  {name}",
            text.len(),
            t.as_secs_f64() * 1e6
        );
    }
    let all = time(20, || files.iter().map(|(n, t)| judge(t, n)).sum::<usize>());
    println!(
        "all {} corpus outputs: {:.2} ms",
        files.len(),
        all.as_secs_f64() * 1e3
    );

    // A 48 MiB NCCL_DEBUG=INFO log, as a 64-rank job prints it: the INFO lines inserted
    // before the rank lines or the table header of an all_reduce output. Twice: the
    // largest all_reduce output (a table-only copy: nothing before the INFO lines tells
    // what it is, the worst case for recognition) and a whole run with its preamble.
    let table_only = files
        .iter()
        .find(|(n, _)| n.starts_with("nccl-tests/") && n.contains("all_reduce"))
        .unwrap();
    let whole_run = files
        .iter()
        .find(|(n, t)| n.starts_with("nccl-tests/") && t.contains("# nThread"))
        .unwrap();
    for (name, base) in [table_only, whole_run] {
        let info =
            "gpu-node-01:3442:3517 [3] NCCL INFO Channel 07/32 : 3[3] -> 4[4] via P2P/CUMEM/read\n";
        let mut big = String::with_capacity(48 << 20);
        let (head, tail) = base.split_at(base.find("#  ").unwrap_or(0));
        big.push_str(head);
        while big.len() + base.len() < 48 << 20 {
            big.push_str(info);
        }
        big.push_str(tail);
        // Interleaved, and the fastest of each: on a shared machine the other processes'
        // load falls on all three alike, and the minimum is the cost without it.
        let (mut parse_t, mut recognise_t, mut scan_t) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..15 {
            parse_t.push(time(1, || judge(&big, name)));
            recognise_t.push(time(1, || recognise(&big)));
            scan_t.push(time(1, || {
                big.lines()
                    .filter(|l| l.contains("Avg bus bandwidth"))
                    .count()
            }));
        }
        let fastest = |v: Vec<Duration>| v.into_iter().min().unwrap();
        let (parse_t, recognise_t, scan_t) =
            (fastest(parse_t), fastest(recognise_t), fastest(scan_t));
        let mib = big.len() as f64 / (1 << 20) as f64;
        println!(
            "{mib:.0} MiB NCCL_DEBUG=INFO log ({name}): recognise + parse {:.0} ms ({:.0} MiB/s; recognising alone {:.1} ms); a bare line scan for \"Avg bus bandwidth\" {:.0} ms; ratio {:.2}",
            parse_t.as_secs_f64() * 1e3,
            mib / parse_t.as_secs_f64(),
            recognise_t.as_secs_f64() * 1e3,
            scan_t.as_secs_f64() * 1e3,
            parse_t.as_secs_f64() / scan_t.as_secs_f64()
        );
    }
}
