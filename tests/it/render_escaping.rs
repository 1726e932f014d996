//! A value holding a quote, a newline, `]`, `#` or `\` never changes the
//! structure of a rendered file: structured formats (TOML, YAML, JSON) carry
//! it escaped and give it back intact when parsed; line-oriented formats and
//! unit files, which cannot escape it, refuse to render and name the template.

use crate::support::*;
use nodeimg::blueprint::yaml_path::YamlPath;
use nodeimg::render::{Templates, render};
use serde_json::json;

const NASTY_DECODED: &str = "a\"b\n]c#d\\e";

#[test]
fn toml_containerd_config_keeps_nasty_values_inside_strings() {
    // An absolute path may hold quotes, `]`, `#` and `\`; extraConfig strings anything.
    let bp = Variant::of("cpu-minimal")
        .set(
            "runtime.containerd.root",
            json!("/var/lib/con\"ta]in#er\\d"),
        )
        .set_at(
            &YamlPath::parse("runtime.containerd.extraConfig")
                .key("plugins.\"io.containerd.grpc.v1.cri\".stream_server_address"),
            json!(NASTY_DECODED),
        )
        .load();
    let r = rendered(&bp);
    let text = std::str::from_utf8(r.layer.file("etc/containerd/config.toml").unwrap()).unwrap();
    let t: toml::Table = toml::from_str(text).unwrap();
    assert_eq!(t["root"].as_str(), Some("/var/lib/con\"ta]in#er\\d"));
    assert_eq!(
        t["plugins"]["io.containerd.grpc.v1.cri"]["stream_server_address"].as_str(),
        Some(NASTY_DECODED)
    );
    assert_eq!(t["version"].as_integer(), Some(2), "no key was injected");
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
    let kubelet: serde_yaml::Value =
        serde_yaml::from_slice(r.layer.file("var/lib/kubelet/config.yaml").unwrap()).unwrap();
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
        lock["metadata"]["description"].as_str(),
        Some(NASTY_DECODED)
    );
}

#[test]
fn line_formats_refuse_comment_characters() {
    // Validation already refuses newlines in these fields; `#` would start a
    // comment in chrony.conf, so rendering refuses it and names the template.
    let bp = Variant::of("h100-sxm-ubuntu")
        .set("system.timeSync.servers[0]", json!("time1#example.com"))
        .load();
    let e = render(&bp, &Templates::embedded()).unwrap_err();
    assert_eq!(e.template(), Some("etc/chrony/chrony.conf.j2"));
    assert!(e.to_string().contains("cannot hold"), "{e}");

    let bp = Variant::of("h100-sxm-ubuntu")
        .set_at(
            &YamlPath::parse("security.sysctls").key("kernel.kptr_restrict"),
            json!("2 # x"),
        )
        .load();
    let e = render(&bp, &Templates::embedded()).unwrap_err();
    assert_eq!(e.template(), Some("etc/sysctl.d/90-nodeimg.conf.j2"));
}

#[test]
fn unit_files_refuse_paths_they_cannot_quote() {
    let bp = Variant::of("h100-sxm-ubuntu")
        .set(
            "system.partitions[1].mountPoint",
            json!("/var/cache/my models"),
        )
        .load();
    let e = render(&bp, &Templates::embedded()).unwrap_err();
    assert!(
        e.to_string()
            .contains("cannot be written as one word in a unit file"),
        "{e}"
    );
    assert!(
        e.template().unwrap_or_default().contains("systemd")
            || e.template().unwrap_or_default().contains("repart"),
        "{e}"
    );
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
        d.iter()
            .any(|d| d.code == "kernel-arg" && d.path.to_string() == "boot.kernelArgs.required[1]"),
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
