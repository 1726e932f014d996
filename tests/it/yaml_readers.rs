//! The binary's one YAML reader (`blueprint::source`) where it reads what is not a
//! blueprint: CDI specs on the node (hostile input: refused with the reason, an unknown
//! fact, never a hang or unbounded memory) and the render self-check, which reads every
//! rendered YAML and TOML file back and must still catch a broken render.

use crate::support::example;
use crate::support::fixture_tree::{self, Tree};
use nodeimg::render::{Templates, render};
use nodeimg::verify::fact::Fact;
use nodeimg::verify::facts::cdi::{self, CdiSpec};
use std::time::{Duration, Instant};

/// The specs `/etc/cdi` holds when it holds `name` with `content`, and how long reading took.
fn specs_with(name: &str, content: &[u8]) -> (Vec<CdiSpec>, Duration) {
    let tree = Tree::new();
    tree.bytes(&format!("/etc/cdi/{name}"), content);
    let start = Instant::now();
    let specs = match cdi::collect(&tree.host()) {
        Fact::Known(specs) => specs,
        Fact::Unknown { reason } => panic!("the folder itself is readable: {reason}"),
    };
    (specs, start.elapsed())
}

/// The reason the one spec is unknown; it must be refused promptly.
fn refused(name: &str, content: &[u8]) -> String {
    let (specs, took) = specs_with(name, content);
    assert_eq!(specs.len(), 1);
    assert!(took < Duration::from_secs(5), "{name}: took {took:?}");
    match &specs[0].content {
        Fact::Unknown { reason } => reason.clone(),
        Fact::Known(c) => panic!("{name}: read as a spec of kind {}", c.kind),
    }
}

#[test]
fn a_cdi_spec_is_read_as_yaml_and_as_json() {
    let (specs, _) = specs_with("nvidia.yaml", fixture_tree::cdi_spec(2).as_bytes());
    let Fact::Known(spec) = &specs[0].content else {
        panic!("{:?}", specs[0].content)
    };
    assert_eq!(
        (
            spec.kind.as_str(),
            spec.devices.len(),
            spec.cdi_version.as_str()
        ),
        ("nvidia.com/gpu", 3, "0.5.0")
    );
    assert_eq!(spec.devices[0].name, "0");
    let json = r#"{"cdiVersion":"0.6.0","kind":"amd.com/gpu","devices":[{"name":"gpu0","containerEdits":{"deviceNodes":[{"path":"/dev/dri/renderD128"}]}}],"containerEdits":{"deviceNodes":[{"path":"/dev/kfd"}]}}"#;
    let (specs, _) = specs_with("amd.json", json.as_bytes());
    let Fact::Known(spec) = &specs[0].content else {
        panic!("{:?}", specs[0].content)
    };
    assert_eq!(spec.kind, "amd.com/gpu");
    assert_eq!(spec.common.device_nodes[0].path, "/dev/kfd");
}

#[test]
fn a_cdi_spec_alias_bomb_is_refused_with_the_reason() {
    // Nine levels of nine aliases: 9^9 (387 million) strings once expanded.
    let mut bomb = String::from("cdiVersion: 0.5.0\nkind: nvidia.com/gpu\na0: &a0 [\"lol\"]\n");
    for i in 1..10 {
        let prev = format!("*a{}", i - 1);
        bomb.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 9].join(", ")));
    }
    bomb.push_str("devices: []\n");
    let why = refused("bomb.yaml", bomb.as_bytes());
    assert!(
        why.starts_with("/etc/cdi/bomb.yaml: ") && why.contains("(aliases included); refusing it"),
        "{why}"
    );
}

#[test]
fn a_cdi_spec_nested_too_deep_is_refused_with_the_reason() {
    // Block mappings: the reader's own depth limit.
    let mut deep = String::from("cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n");
    for level in 0..1000 {
        deep.push_str(&format!("{}k:\n", " ".repeat(level + 1)));
    }
    let why = refused("deep.yaml", deep.as_bytes());
    assert!(
        why.contains("line 67, column 65: devices")
            && why.contains("nesting is deeper than 64 levels"),
        "{why}"
    );
    // Flow collections: the parser's own recursion limit, before any value is built.
    let flow = format!("cdiVersion: {}{}", "[".repeat(100_000), "]".repeat(100_000));
    let why = refused("flow.yaml", flow.as_bytes());
    assert!(
        why.contains("line 1, column ") && why.contains("recursion limit exceeded"),
        "{why}"
    );
}

#[test]
fn a_huge_cdi_spec_is_refused_before_it_is_parsed() {
    // Valid YAML: one spec with a 5 MiB comment.
    let mut huge = fixture_tree::cdi_spec(1);
    huge.push_str(&format!("# {}\n", "x".repeat(5 * 1024 * 1024)));
    let why = refused("huge.yaml", huge.as_bytes());
    assert!(
        why.contains("a CDI spec may be at most 4194304 bytes"),
        "{why}"
    );
}

#[test]
fn a_cdi_spec_of_the_wrong_shape_names_the_field_and_line() {
    let why = refused(
        "odd.yaml",
        b"cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: all\n  containerEdits:\n    deviceNodes: /dev/nvidia0\n",
    );
    assert!(
        why.contains("line 6, column 18: devices[0].containerEdits.deviceNodes: invalid type"),
        "{why}"
    );
    let why = refused("empty.yaml", b"# nothing\n");
    assert!(
        why.contains("file is empty; a CDI spec starts with `cdiVersion:`"),
        "{why}"
    );
}

/// The built-in template `name` with `edit` applied, as an override folder.
fn override_template(name: &str, edit: impl FnOnce(&str) -> String) -> tempfile::TempDir {
    let (_, text) = Templates::embedded()
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, t)| (n.to_owned(), t.to_owned()))
        .unwrap_or_else(|| panic!("no template {name}"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, edit(&text)).unwrap();
    dir
}

fn self_check_error(name: &str, edit: impl FnOnce(&str) -> String) -> String {
    let dir = override_template(name, edit);
    let templates = Templates::with_overrides(dir.path()).unwrap();
    match render(&example("h100-sxm-ubuntu"), &templates) {
        Ok(_) => panic!("{name}: the broken render passed the self-check"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_self_check_refuses_rendered_yaml_with_a_duplicate_key() {
    // A kubelet refuses a configuration with a field twice (strict decoding); the
    // previous reader let the last one win.
    let e = self_check_error("var/lib/kubelet/config.yaml.j2", |t| {
        format!("{t}\nkind: KubeletConfiguration\n")
    });
    assert!(
        e.contains("not YAML") && e.contains("duplicate key `kind`"),
        "{e}"
    );
}

#[test]
fn the_self_check_refuses_a_cluster_file_that_is_not_yaml() {
    let e = self_check_error("cluster/gpu-operator-values.yaml.j2", |t| {
        format!("{t}\nbroken: [1, 2\n")
    });
    assert!(
        e.contains("cluster/gpu-operator-values.yaml") || e.contains("gpu-operator-values.yaml"),
        "{e}"
    );
    assert!(e.contains("not YAML"), "{e}");
}

#[test]
fn the_self_check_reads_containerd_toml_back() {
    let e = self_check_error("etc/containerd/config.toml.j2", |t| {
        t.replace("enable_cdi = true", "enable_cdi = false")
    });
    assert!(
        e.contains("etc/containerd/config.toml")
            && e.contains("enable_cdi is Some(false), not true"),
        "{e}"
    );
    let e = self_check_error("etc/containerd/config.toml.j2", |t| {
        format!("{t}\n[[broken\n")
    });
    assert!(e.contains("not TOML"), "{e}");
}

#[test]
#[ignore = "needs ../shared/corpus/cdi"]
fn the_upstream_cdi_spec_examples_read_as_serde_json_reads_them() {
    let dir = std::path::Path::new("../shared/corpus/cdi/schema-testdata/good");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("the CDI corpus") {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let want: serde_json::Value = serde_json::from_str(&text).unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        let (specs, _) = specs_with(name, text.as_bytes());
        let Fact::Known(spec) = &specs[0].content else {
            panic!("{name}: {:?}", specs[0].content)
        };
        assert_eq!(spec.kind, want["kind"], "{name}");
        let devices: Vec<&str> = spec.devices.iter().map(|d| d.name.as_str()).collect();
        let want_devices: Vec<&str> = want["devices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap())
            .collect();
        assert_eq!(devices, want_devices, "{name}");
        let mounts: Vec<&str> = want["containerEdits"]["mounts"]
            .as_array()
            .map(|m| m.iter().map(|m| m["hostPath"].as_str().unwrap()).collect())
            .unwrap_or_default();
        assert_eq!(spec.common.mounts, mounts, "{name}");
        n += 1;
    }
    assert!(n >= 2, "{n} examples");
}
