//! Hostile input through the real binary: each test is one attack from the security
//! review, run as an attacker would, under a memory limit (`RLIMIT_AS`) and a deadline so
//! that a regression fails the test instead of taking the machine down or hanging it.
//!
//! Bounded input (blueprint, matrix, saved nvidia-smi XML, sysfs/procfs under `--root`,
//! capture archives), read means read (`--root` never runs the tree's programs), YAML
//! tags and numbers, XML entities, capture replay amplification and oversized members.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::fixture_tree::Tree;
use crate::support::stdout_json;
use crate::support::verify_fixture;

/// Address space each run may use: far above what nodeimg needs (a few hundred MB of
/// mappings for the debug binary and its threads), far below what the attacks cost.
pub const MEMORY_LIMIT: u64 = 2 << 30;
/// How long one run may take before it counts as hung.
pub const DEADLINE: Duration = Duration::from_secs(120);

/// Runs `command` with `RLIMIT_AS` set to `memory` bytes; kills it and panics when it is
/// still running at `deadline` (it blocked or looped).
pub fn run_limited(mut command: Command, memory: u64, deadline: Duration) -> Output {
    let shown = format!("{command:?}");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: the closure runs in the forked child before exec and calls only setrlimit(2),
    // which is async-signal-safe; the rlimit value lives on the closure's own stack.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: memory,
                rlim_max: memory,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap_or_else(|e| panic!("{shown}: {e}"));
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{shown} was still running after {deadline:?}: it blocked");
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("{shown}: {e}"),
        }
    };
    Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// `nodeimg ARGS` under [`MEMORY_LIMIT`] and [`DEADLINE`].
pub fn nodeimg(args: &[&str]) -> Output {
    let mut command = crate::support::cmd();
    command.args(args);
    run_limited(command, MEMORY_LIMIT, DEADLINE)
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts a run ended by itself with `code` (not killed by the memory limit) and that it
/// said `needle` (diagnostics of `validate` go to stdout, errors to stderr).
#[track_caller]
pub fn assert_refused(out: &Output, code: i32, needle: &str) {
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(code),
        "status {:?}; output: {said}",
        out.status,
    );
    assert!(said.contains(needle), "output lacks {needle:?}: {said}");
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .unwrap_or_else(|e| panic!("{e}"));
    // SAFETY: mkfifo reads a valid NUL-terminated path and touches no other memory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

fn sparse(path: &Path, len: u64) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
    }
    let file = std::fs::File::create(path).unwrap_or_else(|e| panic!("{e}"));
    file.set_len(len).unwrap_or_else(|e| panic!("{e}"));
}

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap_or_else(|e| panic!("{e}"));
    path
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap_or_else(|| panic!("{path:?}"))
}

fn example(name: &str) -> String {
    format!("{}/blueprints/{name}.yaml", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn alias_bomb_blueprints_and_matrices_are_refused_by_expanded_bytes() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // 3.3 MB that expands to about 300 GB: one 3 MB string aliased 99,000 times.
    let big = "x".repeat(3_000_000);
    let aliases = vec!["*a"; 99_000].join(",");
    let bomb = write(
        dir.path(),
        "bomb.yaml",
        &format!(
            "apiVersion: nodeimg.dev/v1alpha1\nkind: NodeBlueprint\nmetadata:\n  name: bomb\n  version: '1'\n  description: &a {big}\nx: [{aliases}]\n"
        ),
    );
    let out = nodeimg(&["validate", s(&bomb)]);
    assert_refused(&out, 1, "bytes of text (aliases included)");
    assert!(
        text(&out.stdout).contains("bomb.yaml:7:"),
        "{}",
        text(&out.stdout)
    );

    let matrix = write(
        dir.path(),
        "matrix.yaml",
        &format!(
            "schemaVersion: 1\nmodels:\n  - vendor: nvidia\n    model: X\n    source: s\n    aliases: &a [{big}]\n  - vendor: nvidia\n    model: Y\n    source: s\n    aliases: [{aliases}]\n"
        ),
    );
    let out = nodeimg(&["validate", "--matrix", s(&matrix), &example("cpu-minimal")]);
    assert_refused(&out, 2, "bytes of text (aliases included)");
}

#[test]
fn yaml_tags_on_collections_and_unrepresentable_numbers_are_errors() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let base = std::fs::read_to_string(example("cpu-minimal")).unwrap_or_else(|e| panic!("{e}"));
    let cases = [
        (
            "metadata:\n",
            "metadata: !!python/object/apply:os.system\n",
            "unsupported YAML tag",
        ),
        (
            "  version: \"2026.11.1\"\n",
            "  version: \"2026.11.1\"\n  description: 1e400\n",
            "too large for a 64-bit float",
        ),
        (
            "  version: \"2026.11.1\"\n",
            "  version: \"2026.11.1\"\n  description: .nan\n",
            "not-a-number",
        ),
    ];
    for (i, (from, to, needle)) in cases.into_iter().enumerate() {
        assert!(base.contains(from));
        let path = write(
            dir.path(),
            &format!("bp{i}.yaml"),
            &base.replacen(from, to, 1),
        );
        let out = nodeimg(&["validate", s(&path)]);
        assert_refused(&out, 1, needle);
    }
}

#[test]
fn input_files_that_are_devices_fifos_or_huge_are_refused_without_reading_them() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fifo = dir.path().join("fifo.yaml");
    mkfifo(&fifo);
    let huge = dir.path().join("huge.yaml");
    sparse(&huge, 8 << 30);
    let bp = example("cpu-minimal");
    for (args, needle) in [
        (vec!["validate", "/dev/zero"], "character device"),
        (vec!["validate", s(&fifo)], "a FIFO"),
        (vec!["validate", s(&huge)], "larger than"),
        (vec!["explain", s(&huge)], "larger than"),
        (
            vec!["validate", "--matrix", "/dev/zero", &bp],
            "character device",
        ),
        (vec!["validate", "--matrix", s(&fifo), &bp], "a FIFO"),
        (vec!["validate", "--matrix", s(&huge), &bp], "larger than"),
        (vec!["verify", "--blueprint", s(&huge)], "larger than"),
        (
            vec![
                "facts",
                "--root",
                s(dir.path()),
                "--nvidia-smi-xml",
                "/dev/zero",
            ],
            "character device",
        ),
        (
            vec![
                "facts",
                "--root",
                s(dir.path()),
                "--nvidia-smi-xml",
                s(&fifo),
            ],
            "a FIFO",
        ),
        (vec!["facts", "--snapshot", s(&fifo)], "a FIFO"),
    ] {
        let out = nodeimg(&args);
        assert_refused(&out, 2, needle);
    }
}

#[test]
fn fifos_and_sparse_files_under_root_are_unreadable_facts_not_hangs() {
    let tree = verify_fixture::healthy_tree();
    let cmdline = tree.local("/proc/cmdline");
    std::fs::remove_file(&cmdline).unwrap_or_else(|e| panic!("{e}"));
    mkfifo(&cmdline);
    tree.dir("/etc/nodeimg");
    mkfifo(&tree.local("/etc/nodeimg/break-glass"));
    sparse(&tree.local("/etc/os-release"), 4 << 30);
    let root = tree.root().to_string_lossy().into_owned();

    let out = nodeimg(&["facts", "--root", &root, "--timeout", "5"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let facts = stdout_json(&out);
    let reason = facts["kernel"]["cmdline"]["unknown"]
        .as_str()
        .unwrap_or_default();
    assert!(
        reason.contains("a FIFO, not a regular file"),
        "{}",
        facts["kernel"]
    );
    let reason = facts["os"]["unknown"].as_str().unwrap_or_default();
    assert!(reason.contains("larger than 16 MiB"), "{}", facts["os"]);

    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let bp = write(dir.path(), "bp.yaml", verify_fixture::BLUEPRINT);
    let out = nodeimg(&[
        "verify",
        "--blueprint",
        s(&bp),
        "--root",
        &root,
        "--timeout",
        "5",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("break-glass file ignored"),
        "{}",
        text(&out.stderr)
    );
    let capture = dir.path().join("c.tar.zst");
    let out = nodeimg(&[
        "capture",
        "--root",
        &root,
        "-o",
        s(&capture),
        "--timeout",
        "5",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// A tree whose every program leaves a mark when run.
fn booby_trapped(marker: &Path) -> Tree {
    let tree = verify_fixture::healthy_tree();
    for program in [
        "/usr/bin/nvidia-smi",
        "/usr/bin/kubelet",
        "/usr/bin/containerd",
        "/usr/bin/systemctl",
        "/opt/rocm/bin/rocm-smi",
    ] {
        tree.script(
            program,
            &format!(
                "#!/bin/sh\necho \"$0\" >> '{}'\necho 'Kubernetes v1.31.0'\n",
                marker.display()
            ),
        );
    }
    tree
}

#[test]
fn root_snapshot_and_capture_never_run_programs_from_the_inspected_tree() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let marker = dir.path().join("PWNED");
    let tree = booby_trapped(&marker);
    let root = tree.root().to_string_lossy().into_owned();
    let bp = write(dir.path(), "bp.yaml", verify_fixture::BLUEPRINT);
    let capture = dir.path().join("c.tar.zst");

    let facts = nodeimg(&["facts", "--root", &root, "--timeout", "5"]);
    let verify = nodeimg(&[
        "verify",
        "--blueprint",
        s(&bp),
        "--root",
        &root,
        "--timeout",
        "5",
    ]);
    let captured = nodeimg(&[
        "capture",
        "--root",
        &root,
        "-o",
        s(&capture),
        "--timeout",
        "5",
    ]);
    let replay = nodeimg(&["verify", "--blueprint", s(&bp), "--snapshot", s(&capture)]);
    assert!(
        !marker.exists(),
        "ran programs from the tree: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
    assert_eq!(facts.status.code(), Some(0), "{}", text(&facts.stderr));
    assert_eq!(verify.status.code(), Some(1), "{}", text(&verify.stderr));
    assert_eq!(
        captured.status.code(),
        Some(0),
        "{}",
        text(&captured.stderr)
    );
    assert_eq!(replay.status.code(), Some(1), "{}", text(&replay.stderr));

    // Each fact a program would give is unknown, saying how to supply it.
    let facts = stdout_json(&facts);
    let kubelet = facts["runtime"]["kubelet_version"]["unknown"]
        .as_str()
        .unwrap_or_default();
    assert!(
        kubelet.contains("never executed") && kubelet.contains("--tool kubelet=PATH"),
        "{kubelet}"
    );
    let smi = facts["gpus"]["nvidia_smi"]["unknown"]
        .as_str()
        .unwrap_or_default();
    assert!(smi.contains("--nvidia-smi-xml FILE"), "{smi}");

    // Naming a program is how a user vouches for it.
    let kubelet_path = tree.local("/usr/bin/kubelet");
    let named = nodeimg(&[
        "facts",
        "--root",
        &root,
        "--tool",
        &format!("kubelet={}", kubelet_path.display()),
    ]);
    assert_eq!(named.status.code(), Some(0), "{}", text(&named.stderr));
    assert_eq!(stdout_json(&named)["runtime"]["kubelet_version"], "1.31.0");
    assert!(marker.exists());
    let out = nodeimg(&["facts", "--root", &root, "--tool", "bash=/bin/sh"]);
    assert_refused(&out, 2, "unknown program `bash`");
}

#[test]
fn nvidia_smi_xml_with_entities_is_refused_not_expanded() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // 160 KB that expands to a 2 GB string.
    let big = "A".repeat(100_000);
    let xml = write(
        dir.path(),
        "quad.xml",
        &format!(
            "<?xml version=\"1.0\"?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY a \"{big}\">]>\n<nvidia_smi_log><driver_version>{}</driver_version></nvidia_smi_log>\n",
            "&a;".repeat(20_000)
        ),
    );
    let empty = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = nodeimg(&[
        "facts",
        "--root",
        s(empty.path()),
        "--nvidia-smi-xml",
        s(&xml),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{:?} {}",
        out.status,
        text(&out.stderr)
    );
    let reason = stdout_json(&out)["gpus"]["nvidia_smi"]["unknown"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(reason.contains("declares entities"), "{reason}");
}

/// The tar entries of a capture archive.
fn members(archive: &[u8]) -> Vec<(String, Vec<u8>)> {
    let decoder = zstd::Decoder::new(archive).unwrap_or_else(|e| panic!("{e}"));
    let mut tar = tar::Archive::new(decoder);
    let mut out = Vec::new();
    for entry in tar.entries().unwrap_or_else(|e| panic!("{e}")) {
        let mut entry = entry.unwrap_or_else(|e| panic!("{e}"));
        let name = entry
            .path()
            .unwrap_or_else(|e| panic!("{e}"))
            .to_string_lossy()
            .into_owned();
        let mut data = Vec::new();
        entry
            .read_to_end(&mut data)
            .unwrap_or_else(|e| panic!("{e}"));
        out.push((name, data));
    }
    out
}

fn pack(members: &[(String, Vec<u8>)]) -> Vec<u8> {
    let encoder = zstd::Encoder::new(Vec::new(), 1).unwrap_or_else(|e| panic!("{e}"));
    let mut tar = tar::Builder::new(encoder);
    for (name, data) in members {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, name, data.as_slice())
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let encoder = tar.into_inner().unwrap_or_else(|e| panic!("{e}"));
    encoder.finish().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn capture_replay_cannot_amplify_one_member_into_many_copies() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let tree = verify_fixture::healthy_tree();
    let real = dir.path().join("real.tar.zst");
    let out = nodeimg(&[
        "capture",
        "--root",
        s(tree.root()),
        "-o",
        s(&real),
        "--timeout",
        "5",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut members = members(&std::fs::read(&real).unwrap_or_else(|e| panic!("{e}")));
    // 200 journal entries that all name one 16 MiB member (the most a capture keeps of
    // one item): 3.2 GiB if each is copied.
    for (name, data) in &mut members {
        if name == "journal.json" {
            let mut journal: serde_json::Value =
                serde_json::from_slice(data).unwrap_or_else(|e| panic!("{e}"));
            for i in 0..200 {
                journal["reads"][format!("/sys/fake/{i}")] = serde_json::json!({"Ok": "files/big"});
            }
            *data = serde_json::to_vec(&journal).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    members.push(("files/big".to_owned(), vec![0u8; 16 << 20]));
    let amp = dir.path().join("amp.tar.zst");
    std::fs::write(&amp, pack(&members)).unwrap_or_else(|e| panic!("{e}"));
    assert!(std::fs::metadata(&amp).map(|m| m.len()).unwrap_or(0) < 1 << 20);

    let out = nodeimg(&["facts", "--snapshot", s(&amp)]);
    assert_refused(&out, 2, "names some members many times");
    // The real capture still replays.
    let out = nodeimg(&["facts", "--snapshot", s(&real)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// The fixture node's capture, as tar members.
fn fixture_capture(dir: &Path) -> (PathBuf, Vec<(String, Vec<u8>)>) {
    let tree = verify_fixture::healthy_tree();
    let real = dir.join("real.tar.zst");
    let out = nodeimg(&[
        "capture",
        "--root",
        s(tree.root()),
        "-o",
        s(&real),
        "--timeout",
        "5",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let members = members(&std::fs::read(&real).unwrap_or_else(|e| panic!("{e}")));
    (real, members)
}

#[test]
fn a_capture_member_past_the_limits_is_refused_before_it_is_expanded() {
    // 512 MiB of zeros packs into a few KiB. Replay judged the member only after
    // expanding it (seconds, and 0.5 GiB held); the header says its size, the manifest
    // says the capture kept at most 16 MiB an item: refused at the header, under a
    // memory limit the expanded member would not fit in.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (_, mut members) = fixture_capture(dir.path());
    for (name, data) in &mut members {
        if name == "journal.json" {
            let mut journal: serde_json::Value =
                serde_json::from_slice(data).unwrap_or_else(|e| panic!("{e}"));
            journal["reads"]["/sys/fake"] = serde_json::json!({"Ok": "files/big"});
            *data = serde_json::to_vec(&journal).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    members.push(("files/big".to_owned(), vec![0u8; 512 << 20]));
    let amp = dir.path().join("big.tar.zst");
    std::fs::write(&amp, pack(&members)).unwrap_or_else(|e| panic!("{e}"));
    drop(members);
    let mut command = Command::new(env!("CARGO_BIN_EXE_nodeimg"));
    command.args(["facts", "--snapshot", s(&amp)]);
    let out = run_limited(command, 1 << 30, DEADLINE);
    assert_refused(
        &out,
        2,
        "files/big: 536870912 bytes; this capture member may be at most 16777216 bytes",
    );
}

#[test]
fn a_capture_holds_only_named_unique_regular_members() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (real, members) = fixture_capture(dir.path());
    type Members = Vec<(String, Vec<u8>)>;
    let cases: Vec<(&str, Members, &str)> = vec![
        (
            "a member the journal does not name",
            [
                members.clone(),
                vec![("files/extra".to_owned(), b"x".to_vec())],
            ]
            .concat(),
            "files/extra: journal.json does not name this member",
        ),
        (
            "a member twice",
            {
                let mut m = members.clone();
                let last = m.last().cloned().unwrap_or_else(|| panic!("members"));
                m.push(last);
                m
            },
            "appears twice in the archive",
        ),
    ];
    for (what, members, needle) in cases {
        let path = dir.path().join("case.tar.zst");
        std::fs::write(&path, pack(&members)).unwrap_or_else(|e| panic!("{e}"));
        let out = nodeimg(&["facts", "--snapshot", s(&path)]);
        assert!(
            out.status.code() == Some(2) && text(&out.stderr).contains(needle),
            "{what}: {:?} {}",
            out.status,
            text(&out.stderr)
        );
    }
    // A link member and an oversized GNU long-name record: written by hand, since the tar
    // crate's builder would not write them this way.
    let encoder = zstd::Encoder::new(Vec::new(), 1).unwrap_or_else(|e| panic!("{e}"));
    let mut tar = tar::Builder::new(encoder);
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Symlink);
    header.set_size(0);
    tar.append_link(&mut header, "files/etc/os-release", "/etc/shadow")
        .unwrap_or_else(|e| panic!("{e}"));
    let bytes = tar
        .into_inner()
        .and_then(|e| e.finish())
        .unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("link.tar.zst");
    std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
    assert_refused(
        &nodeimg(&["facts", "--snapshot", s(&path)]),
        2,
        "a capture holds only regular files",
    );
    let mut longname = tar::Header::new_gnu();
    longname.set_entry_type(tar::EntryType::GNULongName);
    longname.set_size(64 << 20);
    longname.set_cksum();
    let mut raw = longname.as_bytes().to_vec();
    raw.resize(512 + (64 << 20), b'a');
    raw.extend_from_slice(&[0u8; 1024]);
    let path = dir.path().join("longname.tar.zst");
    std::fs::write(
        &path,
        zstd::encode_all(raw.as_slice(), 1).unwrap_or_else(|e| panic!("{e}")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut command = Command::new(env!("CARGO_BIN_EXE_nodeimg"));
    command.args(["facts", "--snapshot", s(&path)]);
    assert_refused(
        &run_limited(command, 1 << 30, DEADLINE),
        2,
        "a member name record of",
    );
    // The real capture still replays.
    let out = nodeimg(&["facts", "--snapshot", s(&real)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn a_kernel_log_past_the_limit_is_refused_not_cut() {
    // The log was cut at 64 MiB; the records cut off are the newest, the ones the Xid
    // and error checks most need. Now the fact is unknown, with the reason.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path();
    std::fs::create_dir(root.join("etc")).unwrap_or_else(|e| panic!("{e}"));
    write(root, "etc/os-release", "ID=ubuntu\nVERSION_ID=\"22.04\"\n");
    sparse(&root.join("dev/kmsg"), (64 << 20) + 1);
    let out = nodeimg(&["facts", "--root", s(root)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let facts = stdout_json(&out);
    let reason = facts["kernel_log"]["unknown"].as_str().unwrap_or_default();
    assert!(
        reason.contains("larger than 64 MiB; not read"),
        "{}",
        facts["kernel_log"]
    );
}

#[test]
fn a_snapshot_that_is_not_a_capture_says_so() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let passwd = write(dir.path(), "passwd", "root:x:0:0:root:/root:/bin/bash\n");
    let out = nodeimg(&["facts", "--snapshot", s(&passwd)]);
    assert_refused(&out, 2, "not a nodeimg capture");
    assert!(
        !text(&out.stderr).contains("frame descriptor"),
        "{}",
        text(&out.stderr)
    );
    // zstd, but not a tar inside.
    let zst = dir.path().join("x.zst");
    std::fs::write(
        &zst,
        zstd::encode_all(&b"hello"[..], 1).unwrap_or_else(|e| panic!("{e}")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = nodeimg(&["facts", "--snapshot", s(&zst)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("not a nodeimg capture"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_fifo_beside_a_lock_does_not_hang_verify_or_accept() {
    // The lock is read with its `blueprint.id` sibling; a FIFO there blocked the read.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let lock = dir.path().join("blueprint.lock.json");
    std::fs::copy(
        crate::support::root().join("golden/cpu-minimal/layer/etc/nodeimg/blueprint.lock.json"),
        &lock,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    mkfifo(&dir.path().join("blueprint.id"));
    let outputs = dir.path().join("outputs");
    std::fs::create_dir(&outputs).unwrap_or_else(|e| panic!("{e}"));
    let empty = dir.path().join("root");
    std::fs::create_dir(&empty).unwrap_or_else(|e| panic!("{e}"));
    for args in [
        vec!["verify", "--blueprint", s(&lock), "--root", s(&empty)],
        vec!["accept", "--blueprint", s(&lock), s(&outputs)],
    ] {
        // Ends by itself (run_limited fails the test on a hang) with a verdict or a
        // refusal, never a signal.
        let out = nodeimg(&args);
        assert!(
            out.status.code().is_some(),
            "{args:?}: {:?} {}",
            out.status,
            text(&out.stderr)
        );
    }
}
