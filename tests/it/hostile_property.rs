//! A property of the whole pipeline: generated hostile inputs never panic and never use
//! unbounded memory. Thousands of inputs, derived deterministically from real ones, go
//! through the loader, render, build, capture replay and verify:
//!
//! - blueprints: the examples with values swapped for hostile ones (aliases, tags,
//!   `.inf`, huge numbers, control characters, paths, specifiers), lines dropped, doubled
//!   and re-indented, bytes flipped; each that loads is rendered, some are built into an
//!   OCI layout, and each is verified against the fixture node;
//! - captures: the fixture node's capture with file contents, listings, links, command
//!   output and the kernel log replaced by hostile values, or its archive bytes flipped;
//!   each is unpacked, replayed into facts and verified;
//! - nvidia-smi and rocm-smi output: the fixture XML and JSON with leaves replaced,
//!   elements dropped or duplicated, entities declared, or cut short; each is parsed,
//!   and some go through a whole collection and verify.
//!
//! Whole collections cost about 100 ms each in a debug build, parsing alone well under
//! one, so every input is parsed and a fixed share of them is also collected and verified.
//!
//! The work runs in a child process (this test binary, running only this test) under
//! `RLIMIT_AS`, so unbounded memory use aborts the child and fails the test instead of the
//! machine. The budget is a bounded count per target and a deadline after which no new
//! case starts: a slow machine runs fewer cases, never a timed assertion. A panic fails
//! the test with the target and case number that reproduce it (the generator is seeded).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use nodeimg::blueprint::compat::Matrix;
use nodeimg::blueprint::{Blueprint, load_bytes};
use nodeimg::package::{self, BuildOptions, ImageMeta, Inputs, Overlay, Silent, Verifier};
use nodeimg::render::{Templates, render};
use nodeimg::verify::capture::{self, archive};
use nodeimg::verify::checks::{self, Selection};
use nodeimg::verify::facts::{nvidia_smi, rocm_smi};
use nodeimg::verify::host::{HostError, HostErrorKind, HostOp, RecordLimits, Recording};
use nodeimg::verify::{CollectOptions, Facts, KernelLogSource, SnapshotHost, ToolOutput, collect};

use crate::hostile_input::{run_limited, text};
use crate::support::{fixture_tree, verify_fixture};

const WORKER: &str = "NODEIMG_HOSTILE_PROPERTY_WORKER";
/// Address space of the child: the test binary and its allocations, with room; a case
/// that tried to allocate what the attacks in the security review cost would abort.
const CHILD_MEMORY: u64 = 3 << 30;
/// No new case starts after this much time in the child.
const BUDGET: Duration = Duration::from_secs(45);
/// Most cases per target.
const MAX_BLUEPRINTS: usize = 3000;
const MAX_BUILDS: usize = 8;
const MAX_CAPTURES: usize = 600;
const MAX_ARCHIVES: usize = 300;
const MAX_XML: usize = 2000;
const MAX_JSON: usize = 2000;
/// One in this many tool outputs also goes through a whole collection and verify.
const COLLECT_EVERY: usize = 8;

#[test]
fn hostile_inputs_never_panic_and_stay_bounded() {
    if std::env::var_os(WORKER).is_some() {
        worker();
        return;
    }
    let name = format!(
        "{}::hostile_inputs_never_panic_and_stay_bounded",
        module_path!().split_once("::").map_or("", |(_, rest)| rest)
    );
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    let mut child = Command::new(exe);
    child
        .args([name.as_str(), "--exact", "--nocapture", "--test-threads=1"])
        .env(WORKER, "1");
    let out = run_limited(child, CHILD_MEMORY, BUDGET + Duration::from_secs(300));
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "the hostile-input worker failed ({:?}; a signal means the memory limit was hit):\n{said}",
        out.status
    );
    assert!(said.contains("1 passed"), "the worker did not run: {said}");
    for line in said.lines().filter(|l| l.starts_with("hostile:")) {
        eprintln!("{line}");
    }
}

/// xorshift64*: deterministic, seeded per case.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Values an attacker or a careless user would put where a scalar goes.
const YAML_VALUES: &[&str] = &[
    ".inf",
    "-.inf",
    ".nan",
    "1e400",
    "99999999999999999999999",
    "-1",
    "-1Gi",
    "0",
    "18446744073709551615",
    "0x7fffffffffffffff",
    "0o777",
    "~",
    "''",
    "\"\"",
    "\"\\u0000\"",
    "\"\\e[2J\\nPASS\"",
    "\"a\\nb\"",
    "!!python/object/apply:os.system ['id']",
    "!!binary aGVsbG8=",
    "!custom x",
    "!!map {a: 1}",
    "!!seq [1]",
    "&anchor value",
    "*anchor",
    "*missing",
    "[1, [2, [3, [4]]]]",
    "{a: {b: {c: {}}}}",
    "\"../../../../etc/shadow\"",
    "/proc/self/environ",
    "\"$(id)\"",
    "\"${X}%m%%\"",
    "\"x\\\"y\"",
    "\"}{\"",
    "yes",
    "no",
    "on",
    "true",
    "2026-13-45",
    "1.2.3.4.5.6",
    "\"\u{202e}\u{feff}\"",
    "\"\u{1F600}\"",
    "|\n  multi\n  line",
    "? complex",
    "- - -",
];

/// One hostile blueprint text from `base`.
fn mutate_yaml(base: &str, rng: &mut Rng) -> Vec<u8> {
    let mut lines: Vec<String> = base.lines().map(str::to_owned).collect();
    // Now and then a bomb: one 1 MB string aliased 5,000 times (5 GB if expanded).
    if rng.below(64) == 0 {
        let big = "b".repeat(1 << 20);
        let aliases = vec!["*bomb"; 5000].join(",");
        lines.push(format!("bomb: &bomb {big}\nshrapnel: [{aliases}]"));
        let mut bytes = lines.join("\n").into_bytes();
        bytes.push(b'\n');
        return bytes;
    }
    // A quarter of the cases only give the blueprint an odd description, which the
    // schema accepts: those reach render, build and the lock file.
    if rng.below(4) == 0
        && let Some(at) = lines.iter().position(|l| l.trim_start() == "metadata:")
    {
        let odd = [
            "\"quotes \\\" and \\\\ backslashes\"",
            "'{{ jinja }} {% raw %} ${X} %m $(id)'",
            "\"\\u202e\\u200b emoji \\U0001F600\"",
            "'<script>&amp;</script>'",
            "'#!/bin/sh'",
            "'a: b, [c], {d}'",
        ];
        lines.insert(at + 1, format!("  description: {}", rng.pick(&odd)));
        let mut bytes = lines.join("\n").into_bytes();
        bytes.push(b'\n');
        return bytes;
    }
    let edits = 1 + rng.below(3);
    for _ in 0..edits {
        if lines.is_empty() {
            break;
        }
        let at = rng.below(lines.len());
        match rng.below(10) {
            // Swap a value for a hostile one (the common case: reaches deep validation).
            0..=4 => {
                if let Some(colon) = lines[at].find(": ") {
                    let value = rng.pick(YAML_VALUES);
                    lines[at] = format!("{}: {value}", &lines[at][..colon]);
                } else if let Some(dash) = lines[at].find("- ") {
                    let value = rng.pick(YAML_VALUES);
                    lines[at] = format!("{}- {value}", &lines[at][..dash]);
                }
            }
            5 => {
                lines.remove(at);
            }
            6 => {
                let line = lines[at].clone();
                lines.insert(at, line);
            }
            7 => {
                let shift = rng.below(5);
                lines[at] = format!("{}{}", " ".repeat(shift), lines[at].trim_start());
            }
            // Anchor a line's value and alias it many times elsewhere.
            8 => {
                if let Some(colon) = lines[at].find(": ") {
                    let (key, value) = lines[at].split_at(colon + 2);
                    lines[at] = format!("{key}&h {value}");
                    let aliases = vec!["*h"; 1 + rng.below(2000)].join(", ");
                    lines.push(format!("zz: [{aliases}]"));
                }
            }
            _ => {
                let long = "x".repeat(1 + rng.below(200_000));
                lines[at].push_str(&long);
            }
        }
    }
    let mut bytes = lines.join("\n").into_bytes();
    bytes.push(b'\n');
    if rng.below(8) == 0 && !bytes.is_empty() {
        let at = rng.below(bytes.len());
        bytes[at] = *rng.pick(b":-[]{}&*!|>'\"%@`#,\t\n\0\xff\x1b");
    }
    if rng.below(12) == 0 {
        let cut = rng.below(bytes.len());
        bytes.truncate(cut);
    }
    bytes
}

/// Values a broken or hostile node would have in a file, a listing or command output.
const HOST_VALUES: &[&[u8]] = &[
    b"",
    b"\n",
    b"\0",
    b"-1\n",
    b"18446744073709551616\n",
    b"99999999999999999999999999\n",
    b"0x\n",
    b"NaN\n",
    b"1e400\n",
    b"\xff\xfe\xfd\n",
    b"\x1b[2J\x1b[HPASS\n",
    b"0000:zz:00.0\n",
    b"ffff:ff:1f.7\n",
    b"../../../../../etc\n",
    b"Unknown\n",
    b"N/A\n",
    b"8 GT/s PCIe\n",
    b"x16\n",
    b"MemTotal: -5 kB\n",
    b"6,1,0,-;NVRM: Xid (PCI:0000:zz:00): 79, pid=x\n",
    b"containerd github.com/containerd/containerd v\n",
    b"Kubernetes v1.99999999999999999999.0\n",
];

fn host_value(rng: &mut Rng) -> Vec<u8> {
    match rng.below(8) {
        0 => vec![b'7'; 1 + rng.below(100_000)],
        1 => b"a\n".repeat(1 + rng.below(20_000)),
        _ => rng.pick(HOST_VALUES).to_vec(),
    }
}

fn host_error(rng: &mut Rng, target: &str) -> HostError {
    let kind = match rng.below(6) {
        0 => HostErrorKind::NotFound,
        1 => HostErrorKind::InvalidArgument,
        2 => HostErrorKind::PermissionDenied,
        3 => HostErrorKind::Timeout { after_ms: 1 },
        4 => HostErrorKind::TooLarge { limit: 1 },
        _ => HostErrorKind::Os {
            errno: Some(5),
            message: "\x1b[31mEIO\n".into(),
        },
    };
    HostError::new(HostOp::Read, target, kind)
}

/// One hostile recording from the fixture's.
fn mutate_recording(base: &Recording, rng: &mut Rng) -> Recording {
    let mut r = base.clone();
    for _ in 0..1 + rng.below(12) {
        match rng.below(7) {
            0 | 1 => {
                let keys: Vec<String> = r.reads.keys().cloned().collect();
                let key = rng.pick(&keys).clone();
                let value = if rng.below(6) == 0 {
                    Err(host_error(rng, &key))
                } else {
                    Ok(host_value(rng).into())
                };
                r.reads.insert(key, value);
            }
            2 => {
                let keys: Vec<String> = r.dirs.keys().cloned().collect();
                let key = rng.pick(&keys).clone();
                let names = [
                    "..",
                    ".",
                    "",
                    "a\nb",
                    "0000:zz:00.0",
                    "eth0",
                    "eth0",
                    "nvidia0",
                ];
                let value: Vec<String> = (0..rng.below(6))
                    .map(|_| (*rng.pick(&names)).to_owned())
                    .collect();
                r.dirs.insert(key, Ok(value));
            }
            3 => {
                let keys: Vec<String> = r.links.keys().cloned().collect();
                if !keys.is_empty() {
                    let key = rng.pick(&keys).clone();
                    let targets = [
                        "../../../../../../..",
                        "/",
                        "",
                        "x",
                        "../../devices/pci0000:00/zz",
                    ];
                    r.links.insert(key, Ok((*rng.pick(&targets)).to_owned()));
                }
            }
            4 => {
                let keys: Vec<String> = r.resolved.keys().cloned().collect();
                if !keys.is_empty() {
                    let key = rng.pick(&keys).clone();
                    r.resolved
                        .insert(key, Ok("/sys/devices/pci0000:zz/0000:zz:00.0".to_owned()));
                }
            }
            5 => {
                let keys: Vec<String> = r.commands.keys().cloned().collect();
                if let Some(key) = (!keys.is_empty()).then(|| rng.pick(&keys).clone())
                    && let Some(Ok(out)) = r.commands.get_mut(&key)
                {
                    out.stdout = host_value(rng).into();
                    out.status = [Some(0), Some(1), None, Some(-1)][rng.below(4)];
                }
            }
            _ => {
                let line = String::from_utf8_lossy(&host_value(rng)).into_owned();
                r.kernel_log = Some(Ok(line));
            }
        }
    }
    r
}

/// One hostile nvidia-smi document from the fixture's.
fn mutate_xml(base: &str, rng: &mut Rng) -> String {
    let mut xml = base.to_owned();
    for _ in 0..1 + rng.below(4) {
        match rng.below(8) {
            // Replace one leaf's text.
            0..=3 => {
                let leaves: Vec<(usize, usize)> = xml
                    .match_indices('>')
                    .filter_map(|(i, _)| {
                        let end = xml[i + 1..].find('<')? + i + 1;
                        (end > i + 1 && !xml[i + 1..end].trim().is_empty()).then_some((i + 1, end))
                    })
                    .collect();
                if leaves.is_empty() {
                    continue;
                }
                let (start, end) = *rng.pick(&leaves);
                let values = [
                    "",
                    "N/A",
                    "-1",
                    "99999999999999999999",
                    "1e400",
                    "NaN",
                    "Yes",
                    "Reset",
                    "0000:ZZ:00.0",
                    "00000000:18:00.0",
                    "&amp;&lt;",
                    "&#0;",
                    "&#x1b;[2J",
                    "\u{202e}",
                    "9999999 MiB",
                    "-5 W",
                    "Drain and Reset",
                ];
                let value = *rng.pick(values.as_slice());
                xml.replace_range(start..end, value);
            }
            // Duplicate or drop a <gpu>.
            4 => {
                if let (Some(s), Some(e)) = (xml.find("<gpu "), xml.find("</gpu>")) {
                    let gpu = xml[s..e + 6].to_owned();
                    if rng.below(2) == 0 {
                        xml.insert_str(s, &gpu);
                    } else {
                        xml.replace_range(s..e + 6, "");
                    }
                }
            }
            // An entity, now and then one that expands to 2 GB.
            5 => {
                let (size, uses) = if rng.below(8) == 0 {
                    (100_000, 20_000)
                } else {
                    (10, 2)
                };
                let entity = format!(
                    "<!DOCTYPE nvidia_smi_log [<!ENTITY a \"{}\">]>",
                    "A".repeat(size)
                );
                xml = xml.replacen(
                    "<nvidia_smi_log>",
                    &format!("{entity}<nvidia_smi_log>{}", "&a;".repeat(uses)),
                    1,
                );
            }
            6 => {
                let depth = 1 + rng.below(5000);
                let nest = format!("{}{}", "<x>".repeat(depth), "</x>".repeat(depth));
                xml = xml.replacen("</nvidia_smi_log>", &format!("{nest}</nvidia_smi_log>"), 1);
            }
            _ => {
                let cut = rng.below(xml.len());
                let cut = (0..=cut)
                    .rev()
                    .find(|&i| xml.is_char_boundary(i))
                    .unwrap_or(0);
                xml.truncate(cut);
            }
        }
    }
    xml
}

/// One hostile rocm-smi document from the fixture's: values replaced with other JSON
/// types and extremes, keys dropped, structure cut short.
fn mutate_json(base: &str, rng: &mut Rng) -> String {
    let mut json = base.to_owned();
    for _ in 0..1 + rng.below(4) {
        let quotes: Vec<usize> = json.match_indices("\": \"").map(|(i, _)| i + 4).collect();
        match rng.below(5) {
            0..=2 if !quotes.is_empty() => {
                let start = *rng.pick(&quotes);
                let Some(len) = json[start..].find('"') else {
                    continue;
                };
                let values = [
                    "",
                    "N/A",
                    "-1",
                    "1e400",
                    "0000:zz:00.0",
                    "\\u0000",
                    "99999999999999999999",
                    "\\u001b[2J",
                    "card0",
                    "0x74a1",
                ];
                let value = *rng.pick(values.as_slice());
                json.replace_range(start..start + len, value);
            }
            3 if !quotes.is_empty() => {
                let start = *rng.pick(&quotes) - 1;
                let Some(len) = json[start + 1..].find('"') else {
                    continue;
                };
                let values = [
                    "null",
                    "[]",
                    "{}",
                    "1e400",
                    "-0",
                    "[[[[[[[[1]]]]]]]]",
                    "true",
                ];
                let value = *rng.pick(values.as_slice());
                json.replace_range(start..start + len + 2, value);
            }
            _ => {
                let cut = rng.below(json.len());
                let cut = (0..=cut)
                    .rev()
                    .find(|&i| json.is_char_boundary(i))
                    .unwrap_or(0);
                json.truncate(cut);
            }
        }
    }
    json
}

#[derive(Default)]
struct Tally {
    blueprints: usize,
    loaded: usize,
    rendered: usize,
    built: usize,
    verified_blueprints: usize,
    captures: usize,
    archives: usize,
    replayed: usize,
    xml: usize,
    xml_parsed: usize,
    json: usize,
    json_parsed: usize,
    collected: usize,
    /// Blueprints that validated but did not render (a failure of the test).
    render_failures: Vec<String>,
    panics: Vec<String>,
}

fn worker() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let blueprints_dir = root.join("blueprints");
    let matrix = Matrix::builtin();
    let templates = Templates::embedded();
    let bases: Vec<(PathBuf, String)> = ["h100-sxm-ubuntu", "mi300x-rhel", "cpu-minimal"]
        .iter()
        .map(|n| blueprints_dir.join(format!("{n}.yaml")))
        .chain(std::iter::once(
            root.join("tests/fixtures/valid/gpu-base.yaml"),
        ))
        .map(|p| {
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, text)
        })
        .collect();

    // The fixture node, captured once; its facts and blueprint are the baseline.
    let tree = verify_fixture::healthy_tree();
    let xml = verify_fixture::healthy_xml();
    let options = verify_fixture::options(&xml);
    let captured = capture::capture(&tree.host(), "fixture", &options, RecordLimits::default());
    let replay_options = CollectOptions {
        kernel_log: KernelLogSource::Kmsg,
        ..options.clone()
    };
    let fixture_bp = verify_fixture::blueprint(verify_fixture::BLUEPRINT);
    let fixture_facts = captured.facts.clone();
    let out_dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fixture_host = SnapshotHost::new(captured.recording.clone());

    let rocm_json = fixture_tree::mi300x_rocm_smi_json();
    let base_archive =
        archive::pack(&captured.recording, &captured.manifest).unwrap_or_else(|e| panic!("{e}"));

    let mut tally = Tally::default();
    let mut case: u64 = 0;
    const TARGETS: [&str; 5] = [
        "blueprint",
        "capture",
        "capture archive",
        "nvidia-smi XML",
        "rocm-smi JSON",
    ];
    // Each target has its share of the budget, in turn, so slow targets (a whole
    // collection) cannot starve fast ones (a parse).
    const SHARES: [u32; 5] = [35, 25, 10, 20, 10];
    let started = Instant::now();
    let mut target = 0;
    let mut slice_end = started + BUDGET * SHARES[0] / 100;
    loop {
        let full = [
            tally.blueprints >= MAX_BLUEPRINTS,
            tally.captures >= MAX_CAPTURES,
            tally.archives >= MAX_ARCHIVES,
            tally.xml >= MAX_XML,
            tally.json >= MAX_JSON,
        ];
        if full[target] || Instant::now() >= slice_end {
            target += 1;
            if target == TARGETS.len() {
                break;
            }
            slice_end = Instant::now().max(slice_end) + BUDGET * SHARES[target] / 100;
            continue;
        }
        let mut rng = Rng::new(case);
        case += 1;
        let result = match target {
            0 => {
                tally.blueprints += 1;
                let (path, base) = rng.pick(&bases);
                let bytes = mutate_yaml(base, &mut rng);
                let build_here = tally.built < MAX_BUILDS && tally.rendered % 16 == 15;
                catch_unwind(AssertUnwindSafe(|| {
                    blueprint_case(
                        &bytes,
                        path,
                        &blueprints_dir,
                        &matrix,
                        &templates,
                        &fixture_facts,
                        build_here.then(|| out_dir.path().join(format!("out-{case}"))),
                        &mut tally,
                    )
                }))
            }
            1 => {
                tally.captures += 1;
                let round_trip = tally.captures % COLLECT_EVERY == 0;
                catch_unwind(AssertUnwindSafe(|| {
                    capture_case(
                        &captured,
                        &replay_options,
                        &fixture_bp,
                        &matrix,
                        round_trip,
                        &mut rng,
                        &mut tally,
                    )
                }))
            }
            2 => {
                tally.archives += 1;
                let mut bytes = base_archive.clone();
                for _ in 0..1 + rng.below(8) {
                    let at = rng.below(bytes.len());
                    bytes[at] ^= 1 << rng.below(8);
                }
                if rng.below(4) == 0 {
                    let cut = rng.below(bytes.len());
                    bytes.truncate(cut);
                }
                catch_unwind(AssertUnwindSafe(|| {
                    if let Ok((_, replayed)) = archive::unpack(&bytes) {
                        tally.replayed += 1;
                        let facts = collect(&SnapshotHost::new(replayed), &replay_options);
                        verify(&fixture_bp, &facts, &matrix);
                    }
                }))
            }
            3 => {
                tally.xml += 1;
                let hostile = mutate_xml(&xml, &mut rng);
                let whole = tally.xml % COLLECT_EVERY == 0;
                let host = &fixture_host;
                catch_unwind(AssertUnwindSafe(|| {
                    if nvidia_smi::parse(&hostile).is_ok() {
                        tally.xml_parsed += 1;
                    }
                    if whole {
                        let options = CollectOptions {
                            nvidia_smi: ToolOutput::Provided(hostile.clone()),
                            ..replay_options.clone()
                        };
                        verify(&fixture_bp, &collect(host, &options), &matrix);
                        tally.collected += 1;
                    }
                }))
            }
            _ => {
                tally.json += 1;
                let hostile = mutate_json(&rocm_json, &mut rng);
                catch_unwind(AssertUnwindSafe(|| {
                    if rocm_smi::parse(&hostile).is_ok() {
                        tally.json_parsed += 1;
                    }
                }))
            }
        };
        if result.is_err() {
            tally
                .panics
                .push(format!("{} case {}", TARGETS[target], case - 1));
        }
    }
    let peak = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .map(|l| l.trim_start_matches("VmHWM:").trim().to_owned())
        .unwrap_or_default();
    println!(
        "\nhostile: {} inputs in {:.1} s, peak RSS {peak}",
        tally.blueprints + tally.captures + tally.archives + tally.xml + tally.json,
        started.elapsed().as_secs_f64()
    );
    println!(
        "hostile: blueprints {} (loaded {}, rendered {}, built {}, verified {}); captures {} and damaged archives {} (replayed {}); nvidia-smi XML {} (parsed {}), rocm-smi JSON {} (parsed {}); {} whole collections of tool output",
        tally.blueprints,
        tally.loaded,
        tally.rendered,
        tally.built,
        tally.verified_blueprints,
        tally.captures,
        tally.archives,
        tally.replayed,
        tally.xml,
        tally.xml_parsed,
        tally.json,
        tally.json_parsed,
        tally.collected
    );
    assert!(tally.panics.is_empty(), "panics: {:?}", tally.panics);
    // What validates renders: a template filter refusing a value means a field's type
    // lets through what its rendered format cannot hold.
    assert!(
        tally.render_failures.is_empty(),
        "{} blueprints validated but did not render, e.g.:\n{}",
        tally.render_failures.len(),
        tally.render_failures[..tally.render_failures.len().min(5)].join("\n")
    );
    assert!(tally.blueprints > 0 && tally.captures > 0 && tally.xml > 0);
}

fn verify(bp: &Blueprint, facts: &Facts, matrix: &Matrix) {
    let results = checks::evaluate(bp.spec(), facts, matrix, &Selection::default());
    let json = serde_json::to_string(&results).unwrap_or_default();
    assert!(!json.is_empty());
}

#[allow(clippy::too_many_arguments)]
fn blueprint_case(
    bytes: &[u8],
    path: &Path,
    base_dir: &Path,
    matrix: &Matrix,
    templates: &Templates,
    facts: &Facts,
    build_into: Option<PathBuf>,
    tally: &mut Tally,
) {
    let Ok(loaded) = load_bytes(bytes, path, Some(base_dir), matrix) else {
        return;
    };
    tally.loaded += 1;
    let bp = loaded.blueprint;
    verify(&bp, facts, matrix);
    tally.verified_blueprints += 1;
    let rendered = match render(&bp, templates) {
        Ok(r) => r,
        Err(e) => {
            tally.render_failures.push(e.to_string());
            return;
        }
    };
    tally.rendered += 1;
    if let Some(out) = build_into {
        let Ok(meta) = ImageMeta::from_blueprint(&bp) else {
            return;
        };
        let verifier = Verifier::golden_stand_in();
        let overlay = Overlay::from_blueprint(&bp);
        let sbom = nodeimg::package::sbom::Source::from_blueprint(&bp);
        let inputs = Inputs {
            config: &rendered.layer,
            verifier: &verifier,
            overlay: overlay.as_ref(),
            sbom: Some(&sbom),
        };
        if package::build(inputs, &meta, &BuildOptions::default(), &out, &mut Silent).is_ok() {
            tally.built += 1;
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn capture_case(
    captured: &capture::Captured,
    options: &CollectOptions,
    bp: &Blueprint,
    matrix: &Matrix,
    round_trip: bool,
    rng: &mut Rng,
    tally: &mut Tally,
) {
    let mut recording = mutate_recording(&captured.recording, rng);
    if round_trip {
        let Ok(bytes) = archive::pack(&recording, &captured.manifest) else {
            return;
        };
        let Ok((_, replayed)) = archive::unpack(&bytes) else {
            return;
        };
        recording = replayed;
    }
    tally.replayed += 1;
    let facts = collect(&SnapshotHost::new(recording), options);
    verify(bp, &facts, matrix);
    let json = serde_json::to_string(&facts).unwrap_or_default();
    assert!(!json.is_empty());
}
