//! Parses every structured output back and compares it with what was meant:
//! a template or escaping bug shows up here, at render time, with the file
//! named — not on a node.

use serde_json::Value;

use super::{RenderError, Rendered};
use crate::blueprint::{Blueprint, load_bytes};

fn text<'a>(out: &'a Rendered, path: &str) -> Result<&'a str, RenderError> {
    let bytes = out
        .layer
        .file(path)
        .or_else(|| out.cluster.file(path))
        .ok_or_else(|| RenderError::plain(format!("self-check: {path} was not rendered")))?;
    std::str::from_utf8(bytes)
        .map_err(|_| RenderError::plain(format!("self-check: {path} is not UTF-8")))
}

fn fail(path: &str, what: String) -> RenderError {
    RenderError::plain(format!("self-check of {path}: {what}"))
}

pub fn check(bp: &Blueprint, ctx: &Value, out: &Rendered) -> Result<(), RenderError> {
    containerd(bp, ctx, out)?;
    kubelet(ctx, out)?;
    cmdline(ctx, out)?;
    lock(bp, out)?;
    for (path, _, bytes) in out.layer.files().chain(out.cluster.files()) {
        if path.ends_with(".yaml")
            || path.ends_with(".conf") && path.contains("node-feature-discovery")
        {
            serde_yaml::from_slice::<serde_yaml::Value>(bytes)
                .map_err(|e| fail(path, format!("not YAML: {e}")))?;
        }
        if path.ends_with(".json") {
            serde_json::from_slice::<Value>(bytes)
                .map_err(|e| fail(path, format!("not JSON: {e}")))?;
        }
        if path.ends_with("hosts.toml") {
            let t: toml::Table = toml::from_str(std::str::from_utf8(bytes).unwrap_or_default())
                .map_err(|e| fail(path, format!("not TOML: {e}")))?;
            if !t.contains_key("server") {
                return Err(fail(path, "no server".into()));
            }
        }
    }
    Ok(())
}

fn containerd(bp: &Blueprint, ctx: &Value, out: &Rendered) -> Result<(), RenderError> {
    let path = "etc/containerd/config.toml";
    let t: toml::Table =
        toml::from_str(text(out, path)?).map_err(|e| fail(path, format!("not TOML: {e}")))?;
    let c = &ctx["containerd"];
    let want_version = c["config_version"].as_i64();
    if t.get("version").and_then(toml::Value::as_integer) != want_version {
        return Err(fail(path, format!("version is not {want_version:?}")));
    }
    for key in ["root", "state"] {
        if t.get(key).and_then(toml::Value::as_str) != c[key].as_str() {
            return Err(fail(path, format!("{key} is not {}", c[key])));
        }
    }
    let plugin = if want_version == Some(3) {
        "io.containerd.cri.v1.runtime"
    } else {
        "io.containerd.grpc.v1.cri"
    };
    let rt = &t["plugins"][plugin];
    if rt["containerd"]["default_runtime_name"].as_str() != c["default_runtime"].as_str() {
        return Err(fail(path, "default runtime differs".into()));
    }
    if rt["enable_cdi"].as_bool() != c["cdi_enabled"].as_bool() {
        return Err(fail(path, "enable_cdi differs".into()));
    }
    for r in c["runtimes"].as_array().into_iter().flatten() {
        let name = r["name"].as_str().unwrap_or_default();
        let have = rt["containerd"]["runtimes"]
            .get(name)
            .and_then(|x| x.get("runtime_type"))
            .and_then(toml::Value::as_str);
        if have != r["type"].as_str() {
            return Err(fail(
                path,
                format!("runtime {name} missing or of another type"),
            ));
        }
    }
    for (key, value) in &bp.spec().runtime.containerd.extra_config {
        let parts =
            crate::blueprint::known_fields::split_toml_key(key).map_err(RenderError::plain)?;
        let mut cur = toml::Value::Table(t.clone());
        for p in &parts {
            cur = cur
                .get(p)
                .cloned()
                .ok_or_else(|| fail(path, format!("extraConfig `{key}` is missing")))?;
        }
        let back: Value = serde_json::to_value(&cur).map_err(|e| fail(path, e.to_string()))?;
        if &back != value {
            return Err(fail(
                path,
                format!("extraConfig `{key}` is {back}, not {value}"),
            ));
        }
    }
    Ok(())
}

fn kubelet(ctx: &Value, out: &Rendered) -> Result<(), RenderError> {
    let path = "var/lib/kubelet/config.yaml";
    let v: Value =
        serde_yaml::from_str(text(out, path)?).map_err(|e| fail(path, format!("not YAML: {e}")))?;
    if v["kind"] != "KubeletConfiguration" || v["apiVersion"] != "kubelet.config.k8s.io/v1beta1" {
        return Err(fail(path, "not a KubeletConfiguration".into()));
    }
    for (key, want) in ctx["kubelet"]["fields"].as_object().into_iter().flatten() {
        if &v[key] != want {
            return Err(fail(path, format!("{key} is {}, not {want}", v[key])));
        }
    }
    Ok(())
}

fn cmdline(ctx: &Value, out: &Rendered) -> Result<(), RenderError> {
    let want: Vec<&str> = ctx["cmdline"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let path = "etc/kernel/cmdline";
    let got: Vec<&str> = text(out, path)?.split_whitespace().collect();
    if got != want {
        return Err(fail(path, format!("arguments are {got:?}, not {want:?}")));
    }
    let path = "etc/default/grub.d/50-nodeimg.cfg";
    let grub = text(out, path)?;
    let inner = grub
        .lines()
        .find_map(|l| l.strip_prefix("GRUB_CMDLINE_LINUX_DEFAULT=\"${GRUB_CMDLINE_LINUX_DEFAULT}"))
        .and_then(|l| l.strip_suffix('"'))
        .ok_or_else(|| fail(path, "no GRUB_CMDLINE_LINUX_DEFAULT line".into()))?;
    let got: Vec<&str> = inner.split_whitespace().collect();
    if got != want {
        return Err(fail(path, format!("arguments are {got:?}, not {want:?}")));
    }
    Ok(())
}

fn lock(bp: &Blueprint, out: &Rendered) -> Result<(), RenderError> {
    let path = "etc/nodeimg/blueprint.lock.json";
    let bytes = text(out, path)?.as_bytes();
    let loaded = load_bytes(
        bytes,
        std::path::Path::new(path),
        None,
        &crate::blueprint::compat::Matrix::builtin(),
    )
    .map_err(|d| {
        fail(
            path,
            format!(
                "does not load back: {}",
                d.first().map(|d| d.to_string()).unwrap_or_default()
            ),
        )
    })?;
    if loaded.blueprint.id() != bp.id() {
        return Err(fail(
            path,
            format!(
                "loads back with id {}, not {}",
                loaded.blueprint.id(),
                bp.id()
            ),
        ));
    }
    Ok(())
}
