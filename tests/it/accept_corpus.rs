//! Acceptance-tool parsers against the real outputs in `../shared/corpus/acceptance`
//! (an opt-in suite: `cargo test -- --ignored accept_corpus`; fails when the folder is
//! missing). Expected values come from each file by a plain text scan, independent of
//! the parsers; damaged copies of every file must be refused with the right line.

use nodeimg::accept::nccl;
use std::fs;
use std::path::{Path, PathBuf};

fn corpus(sub: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/acceptance")
        .join(sub);
    assert!(dir.is_dir(), "corpus folder {} is missing", dir.display());
    dir
}

fn files(sub: &str) -> Vec<(String, String)> {
    let dir = corpus(sub);
    let mut out: Vec<(String, String)> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let text = fs::read_to_string(&p).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, text)
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "{sub}: no files");
    out
}

/// The text after an `mpirun --tag-output` prefix.
fn untagged(line: &str) -> &str {
    match line.find("<stdout>:") {
        Some(i) if line.starts_with('[') => &line[i + "<stdout>:".len()..],
        _ => line,
    }
}

/// Keeps the first `n` lines.
fn head(text: &str, n: usize) -> String {
    text.lines().take(n).map(|l| format!("{l}\n")).collect()
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn nccl_tests_corpus() {
    for (name, text) in files("nccl-tests") {
        let runs = nccl::parse(&text, Some(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(runs.len(), 1, "{name}");
        let run = &runs[0];
        // Independent scan: the Avg line, the rows, the rank lines, the last row's busbw.
        let lines: Vec<&str> = text.lines().map(untagged).collect();
        let avg: f64 = lines
            .iter()
            .find_map(|l| l.strip_prefix("# Avg bus bandwidth"))
            .and_then(|l| l.trim().trim_start_matches(':').trim().parse().ok())
            .unwrap_or_else(|| panic!("{name}: no Avg line"));
        assert_eq!(run.avg_busbw, avg, "{name}: avg");
        let rows: Vec<Vec<&str>> = lines
            .iter()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|t| {
                t.first()
                    .is_some_and(|f| f.bytes().all(|b| b.is_ascii_digit()))
            })
            .collect();
        assert_eq!(run.rows.len(), rows.len(), "{name}: rows");
        let last = rows.last().unwrap();
        let busbw: f64 = last[last.len() - 6].parse().unwrap();
        assert_eq!(
            run.peak_busbw(),
            Some(busbw),
            "{name}: busbw at the largest size"
        );
        assert_eq!(
            run.largest().unwrap().size,
            last[0].parse::<u64>().unwrap(),
            "{name}"
        );
        let ranks = lines
            .iter()
            .filter(|l| {
                l.trim_start().starts_with("#   Rank") || l.trim_start().starts_with("#  Rank")
            })
            .count();
        assert_eq!(run.ranks.len(), ranks, "{name}: ranks");
        assert_eq!(run.data_errors(), 0, "{name}");
        // The collective: every file names it in its file name.
        let collective = run
            .collective
            .as_deref()
            .unwrap_or_else(|| panic!("{name}: collective"));
        assert!(
            name.replace('-', "_").contains(collective),
            "{name}: {collective}"
        );

        // Truncated after the middle row: refused at the last line kept.
        let middle = text
            .lines()
            .position(|l| untagged(l).contains(&format!(" {} ", rows[rows.len() / 2][0])))
            .unwrap();
        let cut = head(&text, middle + 1);
        let err = nccl::parse(&cut, None).unwrap_err();
        assert_eq!(err.line, middle + 1, "{name}: truncated: {err}");
        // Truncated inside a row.
        let row_line = text.lines().nth(middle).unwrap();
        let cut = format!(
            "{}{}",
            head(&text, middle),
            &row_line[..row_line.len() * 2 / 3]
        );
        let err = nccl::parse(&cut, None).unwrap_err();
        assert_eq!(err.line, middle + 1, "{name}: cut row: {err}");
        // A digit of a bus bandwidth turned into a letter.
        let mangled: String = text
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if i == middle {
                    format!("{}\n", l.replacen('.', "x", 2))
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        let err = nccl::parse(&mangled, None).unwrap_err();
        assert_eq!(err.line, middle + 1, "{name}: mangled: {err}");
    }
}

/// Replaces the first occurrence of `from` on line `n` (1-based).
fn edit_line(text: &str, n: usize, from: &str, to: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if i + 1 == n {
                assert!(l.contains(from), "line {n} `{l}` has no `{from}`");
                format!("{}\n", l.replacen(from, to, 1))
            } else {
                format!("{l}\n")
            }
        })
        .collect()
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn dcgm_corpus() {
    use nodeimg::accept::dcgm::{self, Status};
    let mut seen = (0, 0);
    for (name, text) in files("dcgm") {
        if name.contains("dcgmproftester") {
            continue;
        }
        if name.ends_with(".json") {
            seen.0 += 1;
            let diag = dcgm::json::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            // Independent scan: one `"name"` per test, one `"status"` per result.
            let names = text.matches("\"name\"").count();
            let statuses = text.matches("\"status\"").count();
            assert_eq!(diag.tests.len(), names, "{name}");
            assert_eq!(
                diag.tests.iter().map(|t| t.results.len()).sum::<usize>(),
                statuses,
                "{name}"
            );
            let skips = text.matches("\"Skip\"").count();
            assert_eq!(
                diag.tests
                    .iter()
                    .flat_map(|t| &t.results)
                    .filter(|r| r.status == Status::Skip)
                    .count(),
                skips,
                "{name}"
            );
            let level = if text.contains("\"Memory Bandwidth\"") {
                3
            } else {
                1
            };
            assert_eq!(diag.level(), level, "{name}");
            // Truncated at two thirds: refused with a line inside the file.
            let cut = &text[..text.len() * 2 / 3];
            let err = dcgm::json::parse(cut).unwrap_err();
            assert!(
                err.line > 1 && err.line <= cut.lines().count() + 1,
                "{name}: {err}"
            );
            // A damaged key.
            let bad = text.replacen("\"results\"", "\"resul ts\"", 1);
            let err = dcgm::json::parse(&bad).unwrap_err();
            assert!(err.line > 1, "{name}: {err}");
        } else {
            seen.1 += 1;
            let diags = dcgm::text::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(diags.len(), 1, "{name}");
            let diag = &diags[0];
            let cell = |key: &str| {
                text.lines()
                    .find(|l| l.starts_with(&format!("| {key}")))
                    .and_then(|l| l.split('|').nth(2))
                    .map(|v| v.trim().to_owned())
            };
            assert_eq!(diag.version, cell("DCGM Version"), "{name}");
            assert_eq!(diag.driver, cell("Driver Version Detected"), "{name}");
            let ids = cell("GPU Device IDs Detected").unwrap();
            assert_eq!(diag.gpu_device_ids.len(), ids.split(',').count(), "{name}");
            let results = text
                .lines()
                .filter(|l| {
                    l.starts_with("| ")
                        && (l.contains("| Pass") || l.contains("| Fail") || l.contains("| Skip"))
                })
                .count();
            assert_eq!(diag.tests.len(), results, "{name}");
            assert!(
                diag.tests.iter().all(|t| t.status() == Status::Pass),
                "{name}"
            );
            assert_eq!(diag.level(), 2, "{name}: -r 2 output");
            // Cut before the closing border, cut inside a row, a damaged result word.
            let n = text.lines().count();
            let cut = head(&text, n - 1);
            assert_eq!(dcgm::text::parse(&cut).unwrap_err().line, n - 1, "{name}");
            let pcie = text.lines().position(|l| l.starts_with("| PCIe")).unwrap() + 1;
            let cut = format!(
                "{}| PCIe                      | Pa\n",
                head(&text, pcie - 1)
            );
            assert_eq!(dcgm::text::parse(&cut).unwrap_err().line, pcie, "{name}");
            let bad = edit_line(&text, pcie, "Pass - All", "Pa5s - All");
            assert_eq!(dcgm::text::parse(&bad).unwrap_err().line, pcie, "{name}");
        }
    }
    assert_eq!(
        seen,
        (2, 1),
        "the corpus has two JSON and one text diagnostic"
    );
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn dcgmproftester_corpus() {
    use nodeimg::accept::proftester;
    let (name, text) = files("dcgm")
        .into_iter()
        .find(|(n, _)| n.contains("dcgmproftester"))
        .expect("a dcgmproftester output");
    let runs = proftester::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let verdicts: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(", TestField "))
        .collect();
    assert_eq!(runs.len(), verdicts.len(), "{name}");
    assert!(runs.iter().all(|r| r.passed));
    // The highest `(N gflops)` of field 1004, by scan.
    let peak = text
        .lines()
        .filter(|l| l.contains("[1004]"))
        .filter_map(|l| {
            l.rsplit_once('(')
                .and_then(|(_, r)| r.split(' ').next())
                .and_then(|v| v.parse::<f64>().ok())
        })
        .fold(0.0, f64::max);
    assert_eq!(runs[0].field, 1004);
    assert_eq!(runs[0].peak.as_ref().map(|p| p.0), Some(peak), "{name}");
    let first_verdict = text
        .lines()
        .position(|l| l.contains(", TestField "))
        .unwrap();
    let err = proftester::parse(&head(&text, first_verdict)).unwrap_err();
    assert_eq!(err.line, first_verdict, "{name}: {err}");
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn perftest_corpus() {
    use nodeimg::accept::perftest::{self, Kind};
    for (name, text) in files("perftest") {
        let runs = perftest::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(runs.len(), 1, "{name}: server/client copies are one run");
        let run = &runs[0];
        // Independent scan: the last numeric row of the table and the unit in the header.
        let header = text
            .lines()
            .find(|l| l.trim_start().starts_with("#bytes"))
            .unwrap();
        let rows: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|t| t.len() >= 5 && t[0].bytes().all(|b| b.is_ascii_digit()))
            .collect();
        let last = rows.last().unwrap();
        let sizes: std::collections::BTreeSet<&str> = rows.iter().map(|r| r[0]).collect();
        if header.contains("t_min") {
            assert_eq!(run.kind, Kind::Latency, "{name}");
            assert_eq!(run.latency.len(), sizes.len(), "{name}");
            let typical: f64 = rows
                .iter()
                .min_by_key(|r| r[0].parse::<u64>().unwrap())
                .unwrap()[4]
                .parse()
                .unwrap();
            assert_eq!(run.smallest_latency().unwrap().usec[2], typical, "{name}");
        } else {
            assert_eq!(run.kind, Kind::Bandwidth, "{name}");
            assert_eq!(run.bandwidth.len(), sizes.len(), "{name}");
            let avg: f64 = last[3].parse().unwrap();
            let gbps = if header.contains("[MB/sec]") {
                avg * 1_048_576.0 * 8.0 / 1e9
            } else {
                avg
            };
            assert_eq!(run.largest().unwrap().average_gbps, gbps, "{name}");
            assert_eq!(
                run.largest().unwrap().bytes,
                last[0].parse::<u64>().unwrap(),
                "{name}"
            );
        }
        let device = text
            .lines()
            .find_map(|l| l.split("Device         : ").nth(1))
            .map(|d| d.split_whitespace().next().unwrap().to_owned());
        assert_eq!(run.device, device, "{name}");
        assert_eq!(
            run.gpu.is_some(),
            text.contains("initializing CUDA"),
            "{name}"
        );
        // DMA-BUF registration: perftest's own line (`ibv_reg_dmabuf_mr` follows it).
        assert_eq!(
            run.gpu.as_ref().is_some_and(|g| g.dmabuf),
            text.lines().any(|l| l.starts_with("using DMA-BUF")),
            "{name}"
        );
        assert_eq!(run.bidirectional, text.contains("Bidirectional"), "{name}");

        // Truncated before the table's closing line, and a damaged number in a row.
        let row_line = text
            .lines()
            .position(|l| l.split_whitespace().next() == Some(last[0]))
            .unwrap()
            + 1;
        let err = perftest::parse(&head(&text, row_line)).unwrap_err();
        assert_eq!(err.line, row_line, "{name}: {err}");
        let bad = edit_line(&text, row_line, last[2], &last[2].replace('.', ","));
        let err = perftest::parse(&bad).unwrap_err();
        assert_eq!(err.line, row_line, "{name}: {err}");
    }
}

/// The real GPUDirect perftest runs judged for a node whose GPUDirect RDMA can only go
/// through DMA-BUF (the verify fixture's blueprint: RDMA rails, no OFED): each run that
/// printed `using DMA-BUF` passes `rdma.dma-buf`; the same run without that line fails.
#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn perftest_corpus_dma_buf_is_judged() {
    use nodeimg::accept::input::{Input, parse};
    use nodeimg::accept::judge::{Policy, judge};
    use nodeimg::accept::recognise::Format;
    use nodeimg::verify::report::record::Verdict;
    let bp = crate::support::verify_fixture::blueprint(crate::support::verify_fixture::BLUEPRINT);
    let spec = bp.spec();
    assert!(spec.gpudirect_dma_buf());
    let policy = Policy::new(spec, &spec.acceptance.clone().unwrap_or_default());
    let verdicts = |name: &str, text: &str| -> Vec<Verdict> {
        let input = Input {
            path: PathBuf::from(name),
            output: parse(Format::Perftest, text, name).unwrap_or_else(|e| panic!("{name}: {e}")),
        };
        judge(&[input], &policy, spec, None)
            .findings
            .iter()
            .filter(|f| f.id == "rdma.dma-buf")
            .map(|f| f.verdict)
            .collect()
    };
    let mut judged = 0;
    for (name, text) in files("perftest") {
        if !text.contains("initializing CUDA") {
            assert!(verdicts(&name, &text).is_empty(), "{name}: not a CUDA run");
            continue;
        }
        assert!(
            text.contains("using DMA-BUF"),
            "{name}: a CUDA run without DMA-BUF"
        );
        assert_eq!(verdicts(&name, &text), [Verdict::Pass], "{name}");
        let without: String = text
            .lines()
            .filter(|l| !l.starts_with("using DMA-BUF"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(verdicts(&name, &without), [Verdict::Fail], "{name}");
        judged += 1;
    }
    assert!(judged >= 2, "only {judged} CUDA runs in the corpus");
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn nvbandwidth_corpus() {
    use nodeimg::accept::{nvbandwidth, p2p};
    let mut kinds = (0, 0, 0);
    for (name, text) in files("nvbandwidth") {
        if name.ends_with(".json") {
            kinds.0 += 1;
            let nv = nvbandwidth::json::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                nv.testcases.len(),
                text.matches("\"name\"").count(),
                "{name}"
            );
            assert_eq!(
                nv.testcases.iter().filter(|t| t.waived).count(),
                text.matches("\"Waived\"").count(),
                "{name}"
            );
            // Independent scan: every `"sum" : x` equals the testcase's SUM.
            let sums: Vec<f64> = text
                .lines()
                .filter_map(|l| l.trim().strip_prefix("\"sum\" : "))
                .map(|v| v.trim_end_matches(',').parse().unwrap())
                .collect();
            let parsed: Vec<f64> = nv
                .testcases
                .iter()
                .filter_map(|t| t.matrix()?.sum)
                .collect();
            assert_eq!(parsed, sums, "{name}");
            let version = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("\"version\" : "))
                .unwrap();
            assert_eq!(
                nv.version.as_deref(),
                Some(version.trim_matches('"')),
                "{name}"
            );
            let h2d = nv
                .testcase("host_to_device_memcpy_ce")
                .unwrap()
                .matrix()
                .unwrap();
            assert_eq!(h2d.min().map(|c| c.2), Some(12.3964), "{name}");
            let cut = &text[..text.len() / 2];
            let err = nvbandwidth::json::parse(cut).unwrap_err();
            assert!(err.line > 100, "{name}: {err}");
            let bad = text.replacen("\"12.3964\"", "\"12.39x4\"", 1);
            let err = nvbandwidth::json::parse(&bad).unwrap_err();
            assert!(err.message.contains("12.39x4"), "{name}: {err}");
        } else if text.contains("[P2P (Peer-to-Peer)") {
            kinds.2 += 1;
            let p = p2p::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            let devices = text.lines().filter(|l| l.starts_with("Device: ")).count();
            assert_eq!(p.devices.len(), devices, "{name}");
            // Independent scan of the P2P=Enabled unidirectional matrix: the smallest
            // value off the diagonal.
            let lines: Vec<&str> = text.lines().collect();
            let at = lines
                .iter()
                .position(|l| l.starts_with("Unidirectional P2P=Enabled"))
                .unwrap();
            let mut min = f64::MAX;
            for (r, l) in lines[at + 2..at + 2 + devices].iter().enumerate() {
                for (c, v) in l.split_whitespace().skip(1).enumerate() {
                    if r != c {
                        min = min.min(v.parse().unwrap());
                    }
                }
            }
            let m = p.matrix("Unidirectional P2P=Enabled").unwrap();
            assert_eq!(m.min().map(|c| c.2), Some(min), "{name}");
            assert_eq!(
                p.matrices.len(),
                text.lines()
                    .filter(|l| l.trim_start().starts_with("D\\D")
                        || l.trim_start().starts_with("GPU ")
                        || l.trim_start().starts_with("CPU "))
                    .count(),
                "{name}"
            );
            let err = p2p::parse(&head(&text, at + 3)).unwrap_err();
            assert_eq!(err.line, at + 4, "{name}: {err}");
        } else {
            kinds.1 += 1;
            let nv = nvbandwidth::text::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            let running: Vec<&str> = text
                .lines()
                .filter_map(|l| l.strip_prefix("Running "))
                .collect();
            assert_eq!(nv.testcases.len(), running.len(), "{name}");
            let m = nv.testcases[0].matrix().unwrap();
            // Independent scan: numbers off the diagonal of the matrix rows.
            let rows: Vec<Vec<f64>> = text
                .lines()
                .skip_while(|l| !l.starts_with("memcpy"))
                .skip(2)
                .map(|l| {
                    l.split_whitespace()
                        .skip(1)
                        .map(|v| v.parse().unwrap())
                        .collect()
                })
                .collect();
            assert_eq!(m.rows.len(), rows.len(), "{name}");
            let min = rows
                .iter()
                .enumerate()
                .flat_map(|(r, row)| {
                    row.iter()
                        .enumerate()
                        .filter(move |(c, _)| *c != r)
                        .map(|(_, v)| *v)
                })
                .fold(f64::MAX, f64::min);
            assert_eq!(m.min().map(|c| c.2), Some(min), "{name}");
            let n = text.lines().count();
            let err = nvbandwidth::text::parse(&head(&text, n - 1)).unwrap_err();
            assert_eq!(err.line, n, "{name}: {err}");
        }
    }
    assert_eq!(
        kinds,
        (1, 1, 1),
        "one JSON, one text and one p2pBandwidthLatencyTest output"
    );
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn k8s_node_corpus() {
    use nodeimg::k8s::node;
    for (name, text) in files("k8s-node") {
        let nodes = node::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(nodes.len(), 1, "{name}");
        let n = &nodes[0];
        // Independent scan: `"key": "value"` lines inside the labels object.
        let labels_block: Vec<&str> = if text.contains("\"labels\"") {
            text.lines()
                .skip_while(|l| !l.contains("\"labels\""))
                .skip(1)
                .take_while(|l| !l.trim_start().starts_with('}'))
                .collect()
        } else {
            text.lines().filter(|l| l.contains("\": \"")).collect()
        };
        assert_eq!(n.labels.len(), labels_block.len(), "{name}: labels");
        let hostname = labels_block
            .iter()
            .find_map(|l| l.trim().strip_prefix("\"kubernetes.io/hostname\": \""))
            .map(|v| v.trim_end_matches(',').trim_end_matches('"'));
        assert_eq!(Some(n.name.as_str()), hostname, "{name}: name");
        match &n.status {
            None => assert!(!text.contains("\"capacity\""), "{name}"),
            Some(status) => {
                // Every capacity entry, by scan, with its quantity in whole units.
                let block: Vec<(String, String)> = text
                    .lines()
                    .skip_while(|l| !l.contains("\"capacity\""))
                    .skip(1)
                    .take_while(|l| !l.trim_start().starts_with('}'))
                    .map(|l| {
                        let (k, v) = l.trim().trim_end_matches(',').split_once(": ").unwrap();
                        (
                            k.trim_matches('"').to_owned(),
                            v.trim_matches('"').to_owned(),
                        )
                    })
                    .collect();
                assert_eq!(status.capacity.len(), block.len(), "{name}");
                for (k, v) in &block {
                    assert_eq!(status.capacity[k].as_str(), v, "{name}: {k}");
                }
                let gpus = ["nvidia.com/gpu", "alpha.kubernetes.io/nvidia-gpu"]
                    .iter()
                    .find_map(|r| n.capacity(r))
                    .map(|q| q.units_ceil());
                let scanned = block
                    .iter()
                    .find(|(k, _)| k.contains("gpu"))
                    .map(|(_, v)| v.parse::<i128>().unwrap());
                assert_eq!(gpus, scanned, "{name}: GPUs");
                assert_eq!(
                    n.condition("Ready").map(|c| format!("{:?}", c.status)),
                    Some("True".to_owned()),
                    "{name}"
                );
                assert_eq!(
                    n.taints.len(),
                    text.matches("\"effect\"").count(),
                    "{name}: taints"
                );
                assert_eq!(
                    n.unschedulable,
                    text.contains("\"unschedulable\": true"),
                    "{name}"
                );
                // A damaged quantity is refused with its line.
                let (key, value) = &block[0];
                let capacity = text
                    .lines()
                    .position(|l| l.contains("\"capacity\""))
                    .unwrap();
                let at = capacity
                    + text
                        .lines()
                        .skip(capacity)
                        .position(|l| l.contains(&format!("\"{key}\": \"{value}\"")))
                        .unwrap()
                    + 1;
                let bad = edit_line(&text, at, &format!("\"{value}\""), "\"12x\"");
                let err = node::parse(&bad).unwrap_err();
                assert_eq!(err.line, at, "{name}: {err}");
            }
        }
        let cut = &text[..text.len() / 2];
        let err = node::parse(cut).unwrap_err();
        assert!(err.line >= cut.lines().count(), "{name}: {err}");
    }
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn every_acceptance_output_is_recognised_by_content() {
    use nodeimg::accept::input::{self, Output};
    let mut seen = 0;
    for (folder, want) in [
        ("nccl-tests", "nccl"),
        ("dcgm", "dcgm"),
        ("perftest", "perftest"),
        ("nvbandwidth", "nvbandwidth"),
        ("k8s-node", "nodes"),
        ("ibstat", "ibstat"),
        ("nvidia-smi-topo", "topo"),
    ] {
        let dir = corpus(folder);
        for (name, _) in files(folder) {
            let loaded = input::load(&dir.join(&name)).unwrap_or_else(|e| panic!("{e}"));
            let got = match loaded.output {
                Output::Nccl(_) => "nccl",
                Output::Dcgm(_) | Output::Proftester(_) => "dcgm",
                Output::Perftest(_) => "perftest",
                Output::Nvbandwidth(_) | Output::P2p(_) => "nvbandwidth",
                Output::Nodes(_) => "nodes",
                Output::Ibstat(_) => "ibstat",
                Output::Topology(_) => "topo",
                Output::Pods(_)
                | Output::RuntimeClasses(_)
                | Output::Probe(_)
                | Output::Fio(_)
                | Output::Power(_)
                | Output::Exporter(_)
                | Output::TestRunner(_)
                | Output::RocmBandwidth(_) => "other",
            };
            assert_eq!(got, want, "{folder}/{name}");
            seen += 1;
        }
    }
    assert_eq!(seen, 27, "every acceptance tool output of the corpus");
}

/// The power sampler's parser on real `nvidia-smi --query-gpu --format=csv` output: the
/// idle and the load rows of every Linux capture in `../shared/corpus/nvidia-smi-text-captures`
/// (the exporter's wide field list, read by header name). Expected values come from the
/// rows by a plain split on the header, independent of the parser.
#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn power_samples_read_real_query_gpu_output() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/nvidia-smi-text-captures/nvidia_gpu_exporter");
    assert!(dir.is_dir(), "corpus folder {} is missing", dir.display());
    let mut seen = 0;
    let mut names: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("linux-")
        })
        .collect();
    names.sort();
    for path in names {
        let text = fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // The rows after each `timestamp, …, power.draw [W], …` header, by a plain split.
        let lines: Vec<&str> = text.lines().collect();
        let mut want = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            if l.starts_with("timestamp, ") && l.contains("power.draw [W]") {
                let cols: Vec<&str> = l.split(", ").collect();
                let at = cols.iter().position(|c| *c == "power.draw [W]").unwrap();
                for row in &lines[i + 1..] {
                    let vals: Vec<&str> = row.split(", ").collect();
                    if vals.len() != cols.len() {
                        break;
                    }
                    want.push(vals[at].trim_end_matches(" W").parse::<f64>().ok());
                }
            }
        }
        assert!(want.len() >= 2, "{name}: idle and load rows");
        let got = nodeimg::accept::power::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let power: Vec<Option<f64>> = got.samples.iter().map(|s| s.power).collect();
        assert_eq!(power, want, "{name}");
        assert!(got.samples.iter().all(|s| s.limit.is_some()), "{name}");
        seen += 1;
    }
    assert!(seen >= 5, "{seen} captures");
    // The H100 and H200 under gpu-burn: 631.95 W and 627.40 W of their 700 W enforced
    // limit (90 %), above the 75 % `power.peak` asks; the H100's clocks at their maximum,
    // no clock event reason active.
    let h100 =
        fs::read_to_string(dir.join("linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt")).unwrap();
    let got = nodeimg::accept::power::parse(&h100).unwrap();
    let load = got.samples.last().unwrap();
    assert_eq!(
        (load.power, load.limit, load.sm_clock, load.max_sm_clock),
        (Some(631.95), Some(700.0), Some(1980.0), Some(1980.0))
    );
    assert!(load.active.is_empty(), "{:?}", load.active);
}
