//! A value holding a quote, a newline, `]`, `#` or `\` never changes the
//! structure of a rendered file: structured formats (TOML, YAML, JSON) carry
//! it escaped and give it back intact when parsed; line-oriented formats and
//! unit files, which cannot escape it, refuse to render and name the template.

use crate::common::*;
use nodeimg::render::{Templates, render};

const NASTY: &str = "a\\\"b\\n]c#d\\\\e";
const NASTY_DECODED: &str = "a\"b\n]c#d\\e";

#[test]
fn toml_containerd_config_keeps_nasty_values_inside_strings() {
    // An absolute path may hold quotes, `]`, `#` and `\`; extraConfig strings anything.
    let bp = variant(
        "cpu-minimal",
        &[(
            "    version: 1.7.22\n",
            "    version: 1.7.22\n    root: \"/var/lib/con\\\"ta]in#er\\\\d\"\n    extraConfig:\n      plugins.\"io.containerd.grpc.v1.cri\".sandbox_image: \"a\\\"b\\n]c#d\\\\e\"\n",
        )],
    );
    let r = rendered(&bp);
    let text = std::str::from_utf8(r.layer.file("etc/containerd/config.toml").unwrap()).unwrap();
    let t: toml::Table = toml::from_str(text).unwrap();
    assert_eq!(t["root"].as_str(), Some("/var/lib/con\"ta]in#er\\d"));
    assert_eq!(
        t["plugins"]["io.containerd.grpc.v1.cri"]["sandbox_image"].as_str(),
        Some(NASTY_DECODED)
    );
    assert_eq!(t["version"].as_integer(), Some(2), "no key was injected");
}

#[test]
fn yaml_outputs_keep_nasty_values_inside_scalars() {
    let bp = variant(
        "h100-sxm-ubuntu",
        &[
            (
                "      containerLogMaxSize: 50Mi\n",
                &format!("      containerLogMaxSize: \"{NASTY}\"\n"),
            ),
            ("values: [\"2330\"]", &format!("values: [\"{NASTY}\"]")),
        ],
    );
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
    let bp = variant(
        "cpu-minimal",
        &[(
            "  version: \"2026.11.1\"\n",
            &format!("  version: \"2026.11.1\"\n  description: \"{NASTY}\"\n"),
        )],
    );
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
    let bp = variant(
        "h100-sxm-ubuntu",
        &[(
            "servers: [time1.example.com,",
            "servers: [\"time1#example.com\",",
        )],
    );
    let e = render(&bp, &Templates::embedded()).unwrap_err();
    assert_eq!(e.template(), Some("etc/chrony/chrony.conf.j2"));
    assert!(e.to_string().contains("cannot hold"), "{e}");

    let bp = variant(
        "h100-sxm-ubuntu",
        &[("kernel.kptr_restrict: 2", "kernel.kptr_restrict: \"2 # x\"")],
    );
    let e = render(&bp, &Templates::embedded()).unwrap_err();
    assert_eq!(e.template(), Some("etc/sysctl.d/90-nodeimg.conf.j2"));
}

#[test]
fn unit_files_refuse_paths_they_cannot_quote() {
    let bp = variant(
        "h100-sxm-ubuntu",
        &[(
            "mountPoint: /var/cache/models",
            "mountPoint: \"/var/cache/my models\"",
        )],
    );
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
    let path = root().join("blueprints/h100-sxm-ubuntu.yaml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("- init_on_alloc=0", "- \"init_on_alloc=0\\\"; reboot #\"");
    let d = nodeimg::blueprint::load_bytes(
        text.as_bytes(),
        &path,
        Some(&root().join("blueprints")),
        &nodeimg::blueprint::compat::Matrix::builtin(),
    )
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
    let t = dir.path().join("etc/kernel");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join("cmdline.j2"), "first line\n{{ no_such_value }}\n").unwrap();
    let templates = Templates::with_overrides(dir.path()).unwrap();
    assert_eq!(templates.overridden, ["etc/kernel/cmdline.j2"]);
    let e = render(&example("cpu-minimal"), &templates).unwrap_err();
    assert_eq!(e.template(), Some("etc/kernel/cmdline.j2"));
    assert_eq!(e.line(), Some(2));
    assert!(
        e.to_string()
            .starts_with("template etc/kernel/cmdline.j2 line 2:"),
        "{e}"
    );
    // An override that matches no template is refused rather than ignored.
    std::fs::write(dir.path().join("etc/kernel/cmdlin.j2"), "x").unwrap();
    assert!(
        Templates::with_overrides(dir.path())
            .unwrap_err()
            .to_string()
            .contains("no template is named `etc/kernel/cmdlin.j2`")
    );
}
