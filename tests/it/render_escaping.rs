//! A value holding a quote, a newline, `]`, `#` or `\` never changes the
//! structure of a rendered file: structured formats (TOML, YAML, JSON) carry
//! it escaped and give it back intact when parsed; fields that reach
//! line-oriented formats or unit files have types that refuse it at
//! validation, and the template filters still refuse it for overridden
//! templates, naming the template.

use crate::support::*;
use nodeimg::blueprint::yaml_path::YamlPath;
use nodeimg::render::{Templates, render};
use serde_json::json;

const NASTY_DECODED: &str = "a\"b\n]c#d\\e";

#[test]
fn toml_containerd_config_keeps_nasty_values_inside_strings() {
    // extraConfig strings may hold anything; node paths may not (see below).
    let bp = Variant::of("cpu-minimal")
        .set_at(
            &YamlPath::parse("runtime.containerd.extraConfig")
                .key("plugins.\"io.containerd.grpc.v1.cri\".stream_server_address"),
            json!(NASTY_DECODED),
        )
        .load();
    let r = rendered(&bp);
    let text = std::str::from_utf8(r.layer.file("etc/containerd/config.toml").unwrap()).unwrap();
    let t: toml::Table = toml::from_str(text).unwrap();
    assert_eq!(
        t["plugins"]["io.containerd.grpc.v1.cri"]["stream_server_address"].as_str(),
        Some(NASTY_DECODED)
    );
    assert_eq!(t["version"].as_integer(), Some(2), "no key was injected");
}

#[test]
fn node_paths_that_a_line_format_cannot_carry_are_refused_at_validation() {
    // A quote or `#` in containerd's root used to reach the config (escaped
    // there, but raw in units and tmpfiles); now no node path may hold one.
    let d = Variant::of("cpu-minimal")
        .set(
            "runtime.containerd.root",
            json!("/var/lib/con\"ta]in#er\\d"),
        )
        .try_load()
        .unwrap_err();
    assert!(
        d.iter().any(|d| d.code == "invalid-value"
            && d.path.to_string() == "runtime.containerd.root"
            && d.message.contains("node paths are limited to")),
        "{d:?}"
    );
}

#[test]
fn yaml_outputs_keep_nasty_values_inside_scalars() {
    let v = Variant::of("h100-sxm-ubuntu");
    let device = "kubernetes.nfd.platformLabels[0].when[1].values";
    assert_eq!(v.get(device), Some(&json!(["2330"])));
    let bp = v
        .set(
            "kubernetes.kubelet.extraConfig.containerLogMaxSize",
            json!(NASTY_DECODED),
        )
        .set(device, json!([NASTY_DECODED]))
        .load();
    let r = rendered(&bp);
    let kubelet: serde_yaml::Value = serde_yaml::from_slice(
        r.layer
            .file("etc/kubernetes/kubelet.conf.d/50-nodeimg.conf")
            .unwrap(),
    )
    .unwrap();
    assert_eq!(kubelet["containerLogMaxSize"].as_str(), Some(NASTY_DECODED));
    assert_eq!(kubelet["kind"].as_str(), Some("KubeletConfiguration"));
    let rule: serde_yaml::Value =
        serde_yaml::from_slice(r.cluster.file("nfd-platform-labels.yaml").unwrap()).unwrap();
    let exprs = &rule["spec"]["rules"][0]["matchFeatures"][0]["matchExpressions"];
    assert_eq!(exprs["device"]["value"][0].as_str(), Some(NASTY_DECODED));
}

#[test]
fn json_lock_keeps_nasty_description() {
    let bp = Variant::of("cpu-minimal")
        .set("metadata.description", json!(NASTY_DECODED))
        .load();
    let r = rendered(&bp);
    let lock: serde_json::Value =
        serde_json::from_slice(r.layer.file("etc/nodeimg/blueprint.lock.json").unwrap()).unwrap();
    assert_eq!(
        lock["blueprint"]["metadata"]["description"].as_str(),
        Some(NASTY_DECODED)
    );
}

#[test]
fn line_format_values_are_refused_at_validation_not_at_render() {
    // `#` would start a comment in chrony.conf and sysctl.d, a blank split a
    // unit's path; each field has a type that refuses them, located, before
    // anything renders.
    let d = Variant::of("h100-sxm-ubuntu")
        .set("system.timeSync.servers[0]", json!("time1#example.com"))
        .try_load()
        .unwrap_err();
    assert!(
        d.iter()
            .any(|d| d.path.to_string() == "system.timeSync.servers[0]" && d.line.is_some()),
        "{d:?}"
    );
    let d = Variant::of("h100-sxm-ubuntu")
        .set_at(
            &YamlPath::parse("security.sysctls").key("kernel.kptr_restrict"),
            json!("2 # x"),
        )
        .try_load()
        .unwrap_err();
    assert!(
        d.iter().any(
            |d| d.path.to_string() == "security.sysctls[\"kernel.kptr_restrict\"]"
                && d.message.contains("holds `#`")
        ),
        "{d:?}"
    );
    let d = Variant::of("h100-sxm-ubuntu")
        .set(
            "system.partitions[1].mountPoint",
            json!("/var/cache/my models"),
        )
        .try_load()
        .unwrap_err();
    assert!(
        d.iter()
            .any(|d| d.path.to_string() == "system.partitions[1].mountPoint"),
        "{d:?}"
    );
    // A NIC group's driver goes into a udev DRIVERS== match as is.
    let d = Variant::of("h100-sxm-ubuntu")
        .set("network.nics[1].driver", json!("mlx5_core\", NAME=\"eth0"))
        .try_load()
        .unwrap_err();
    assert!(
        d.iter()
            .any(|d| d.path.to_string() == "network.nics[1].driver" && d.line.is_some()),
        "{d:?}"
    );
}

#[test]
fn render_filters_still_refuse_what_a_template_override_passes_them() {
    // Templates may be overridden (--templates) and fed any value; the
    // line filters refuse what their format cannot hold.
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("etc/chrony");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(
        t.join("chrony.conf.j2"),
        "server {{ \"a#b\" | token }} iburst\n",
    )
    .unwrap();
    let templates = Templates::with_overrides(dir.path()).unwrap();
    let e = render(&example("h100-sxm-ubuntu"), &templates).unwrap_err();
    assert_eq!(e.template(), Some("etc/chrony/chrony.conf.j2"));
    assert!(e.to_string().contains("cannot hold"), "{e}");
}

#[test]
fn kernel_command_line_refuses_shell_characters_at_validation() {
    let d = Variant::of("h100-sxm-ubuntu")
        .set(
            "boot.kernelArgs.required[1]",
            json!("init_on_alloc=0\"; reboot #"),
        )
        .try_load()
        .unwrap_err();
    assert!(
        d.iter().any(|d| d.code == "invalid-value"
            && d.path.to_string() == "boot.kernelArgs.required[1]"
            && d.message.contains("kernel argument")),
        "{d:?}"
    );
}

#[test]
fn an_undefined_variable_names_the_template_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("etc/sysctl.d");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(
        t.join("90-nodeimg.conf.j2"),
        "first line\n{{ no_such_value }}\n",
    )
    .unwrap();
    let templates = Templates::with_overrides(dir.path()).unwrap();
    assert_eq!(templates.overridden, ["etc/sysctl.d/90-nodeimg.conf.j2"]);
    let e = render(&example("cpu-minimal"), &templates).unwrap_err();
    assert_eq!(e.template(), Some("etc/sysctl.d/90-nodeimg.conf.j2"));
    assert_eq!(e.line(), Some(2));
    assert!(
        e.to_string()
            .starts_with("template etc/sysctl.d/90-nodeimg.conf.j2 line 2:"),
        "{e}"
    );
    // An override that matches no template is refused rather than ignored.
    std::fs::write(dir.path().join("etc/sysctl.d/90-nodeimg.con.j2"), "x").unwrap();
    assert!(
        Templates::with_overrides(dir.path())
            .unwrap_err()
            .to_string()
            .contains("no template is named `etc/sysctl.d/90-nodeimg.con.j2`")
    );
}
