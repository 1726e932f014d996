//! Parses every structured output back and compares it with what was meant:
//! a template or escaping bug shows up here, at render time, with the file
//! named — not on a node.
//!
//! Files are read back as their consumers read them ([`super::read_back`]).

use serde_json::Value;

use super::read_back::{toml, yaml};
use super::{Context, RenderError, Rendered};
use crate::blueprint::{Blueprint, identity};

fn text<'a>(out: &'a Rendered, path: &str) -> Result<&'a str, RenderError> {
    let bytes = out
        .layer
        .file(path)
        .or_else(|| out.cluster.file(path))
        .ok_or_else(|| fail(path, "was not rendered".into()))?;
    std::str::from_utf8(bytes).map_err(|_| fail(path, "is not UTF-8".into()))
}

fn fail(path: &str, message: String) -> RenderError {
    RenderError::SelfCheck {
        path: path.to_string(),
        message,
    }
}

pub fn check(bp: &Blueprint, ctx: &Context<'_>, out: &Rendered) -> Result<(), RenderError> {
    containerd(ctx, out)?;
    kubelet(ctx, out)?;
    cmdline(ctx, out)?;
    lock(bp, out)?;
    if let Some(problem) = super::tolerations::check(out, &bp.spec().kubernetes.taints)
        .into_iter()
        .next()
    {
        return Err(fail(
            &format!("cluster/{}", problem.file),
            problem.to_string(),
        ));
    }
    for (path, _, bytes) in out.layer.files().chain(out.cluster.files()) {
        if path.ends_with(".yaml")
            || path.ends_with(".conf") && path.contains("node-feature-discovery")
        {
            yaml(bytes).map_err(|e| fail(path, e))?;
        }
        if path.ends_with(".json") {
            serde_json::from_slice::<Value>(bytes)
                .map_err(|e| fail(path, format!("not JSON: {e}")))?;
        }
        if path.ends_with("hosts.toml") {
            let t =
                toml(std::str::from_utf8(bytes).unwrap_or_default()).map_err(|e| fail(path, e))?;
            if t.get("server").is_none() {
                return Err(fail(path, "no server".into()));
            }
        }
    }
    Ok(())
}

fn containerd(ctx: &Context<'_>, out: &Rendered) -> Result<(), RenderError> {
    let path = "etc/containerd/config.toml";
    let c = &ctx.containerd;
    let t = toml(text(out, path)?).map_err(|e| fail(path, e))?;
    let version = t.get("version").and_then(Value::as_i64);
    if version != Some(i64::from(c.config_version)) {
        return Err(fail(
            path,
            format!("version is {version:?}, not {}", c.config_version),
        ));
    }
    for (key, want) in [("root", c.root), ("state", c.state)] {
        if t.get(key).and_then(Value::as_str) != Some(want) {
            return Err(fail(path, format!("{key} is not {want}")));
        }
    }
    let rt = t
        .get("plugins")
        .and_then(|p| p.get(c.cri_plugin()))
        .ok_or_else(|| fail(path, format!("no plugin {}", c.cri_plugin())))?;
    let default = rt
        .get("containerd")
        .and_then(|x| x.get("default_runtime_name"))
        .and_then(Value::as_str);
    if default != Some(c.default_runtime) {
        return Err(fail(
            path,
            format!("default runtime is {default:?}, not {}", c.default_runtime),
        ));
    }
    let cdi = rt.get("enable_cdi").and_then(Value::as_bool);
    if cdi != Some(c.cdi_enabled) {
        return Err(fail(
            path,
            format!("enable_cdi is {cdi:?}, not {}", c.cdi_enabled),
        ));
    }
    for r in &c.runtimes {
        let have = rt
            .get("containerd")
            .and_then(|x| x.get("runtimes"))
            .and_then(|x| x.get(r.name))
            .and_then(|x| x.get("runtime_type"))
            .and_then(Value::as_str);
        if have != Some(r.runtime_type) {
            return Err(fail(
                path,
                format!("runtime {} missing or of another type", r.name),
            ));
        }
    }
    for (key, value) in c.extra_config {
        let back = key
            .parts()
            .iter()
            .try_fold(&t, |cur, p| cur.get(p))
            .ok_or_else(|| fail(path, format!("extraConfig `{key}` is missing")))?;
        if back != value {
            return Err(fail(
                path,
                format!("extraConfig `{key}` is {back}, not {value}"),
            ));
        }
    }
    Ok(())
}

fn kubelet(ctx: &Context<'_>, out: &Rendered) -> Result<(), RenderError> {
    let path = ctx.kubelet.config_path;
    let v = yaml(text(out, path)?.as_bytes()).map_err(|e| fail(path, e))?;
    if v["kind"] != "KubeletConfiguration" || v["apiVersion"] != "kubelet.config.k8s.io/v1beta1" {
        return Err(fail(path, "not a KubeletConfiguration".into()));
    }
    for (key, want) in &ctx.kubelet.fields {
        if &v[key] != want {
            return Err(fail(path, format!("{key} is {}, not {want}", v[key])));
        }
    }
    Ok(())
}

fn cmdline(ctx: &Context<'_>, out: &Rendered) -> Result<(), RenderError> {
    let want: Vec<&str> = ctx.cmdline.iter().map(String::as_str).collect();
    if ctx.boot.grub_dropin {
        let path = "etc/default/grub.d/50-nodeimg.cfg";
        let grub = text(out, path)?;
        let inner = grub
            .lines()
            .find_map(|l| l.strip_prefix("GRUB_CMDLINE_LINUX=\"${GRUB_CMDLINE_LINUX}"))
            .and_then(|l| l.strip_suffix('"'))
            .ok_or_else(|| fail(path, "no GRUB_CMDLINE_LINUX line".into()))?;
        let got: Vec<&str> = inner.split_whitespace().collect();
        if got != want {
            return Err(fail(path, format!("arguments are {got:?}, not {want:?}")));
        }
    }
    if ctx.boot.grubby {
        let path = "etc/systemd/system/nodeimg-kernel-args.service";
        let unit = text(out, path)?;
        // One word, quoted by the unit filter when it holds spaces.
        let inner = unit
            .lines()
            .find_map(|l| l.strip_prefix("ExecStart=/usr/sbin/grubby --update-kernel=ALL "))
            .map(|w| {
                w.strip_prefix('"')
                    .and_then(|w| w.strip_suffix('"'))
                    .unwrap_or(w)
            })
            .and_then(|w| w.strip_prefix("--args="))
            .map(|w| w.replace("%%", "%"))
            .ok_or_else(|| fail(path, "no grubby --args line".into()))?;
        let got: Vec<&str> = inner.split_whitespace().collect();
        if got != want {
            return Err(fail(path, format!("arguments are {got:?}, not {want:?}")));
        }
    }
    Ok(())
}

/// The lock and the matrix beside it load back, as verify will load them,
/// to the same id.
fn lock(bp: &Blueprint, out: &Rendered) -> Result<(), RenderError> {
    let path = "etc/nodeimg/blueprint.lock.json";
    let bytes = text(out, path)?.as_bytes();
    let matrix = text(out, "etc/nodeimg/blueprint.matrix.json")?.as_bytes();
    identity::load_lock(bytes, matrix, std::path::Path::new(path), bp.id()).map_err(|d| {
        fail(
            path,
            format!(
                "does not load back: {}",
                d.first().map(|d| d.to_string()).unwrap_or_default()
            ),
        )
    })?;
    Ok(())
}
