//! Rules for the node's own settings: files the blueprint names exist and
//! stay inside its folder, names are unique, cache watermarks are ordered,
//! NIC settings are physically possible, registry hosts and mirrors are well
//! formed, and text that lands in config files is a single line.

use std::path::Path;

use super::p;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::*;
use crate::blueprint::value::RelPath;
use crate::blueprint::yaml_path::YamlPath;

pub fn check(bp: &RawBlueprint, base: Option<&Path>, out: &mut Collector<'_>) {
    files(bp, base, out);
    network(bp, out);
    registries(bp, out);
    system(bp, out);
    security(bp, out);
    nfd(bp, out);
    single_line(bp, out);
}

fn exists(base: Option<&Path>, rel: &RelPath, dir: bool, path: &YamlPath, out: &mut Collector<'_>) {
    let Some(base) = base else { return };
    let full = base.join(rel.as_str());
    match std::fs::metadata(&full) {
        Ok(m) if m.is_dir() == dir => {}
        Ok(_) => {
            out.error(
                "missing-file",
                path,
                format!(
                    "`{}` is not a {}",
                    full.display(),
                    if dir { "folder" } else { "file" }
                ),
            );
        }
        Err(e) => {
            out.error(
                "missing-file",
                path,
                format!("cannot read `{}`: {e}", full.display()),
            );
        }
    }
}

fn files(bp: &RawBlueprint, base: Option<&Path>, out: &mut Collector<'_>) {
    if let Some(f) = &bp.files {
        exists(base, &f.overlay, true, &p("files.overlay"), out);
        let mut seen = std::collections::BTreeSet::new();
        for (i, m) in f.modes.iter().enumerate() {
            if !seen.insert(m.path.clone()) {
                out.error(
                    "duplicate",
                    &p("files.modes").index(i).key("path"),
                    format!("`{}` is listed twice", m.path),
                );
            }
        }
    }
    for (i, c) in bp.system.certificates.iter().enumerate() {
        exists(
            base,
            &c.file,
            false,
            &p("system.certificates").index(i).key("file"),
            out,
        );
    }
    for (i, r) in bp.runtime.containerd.registries.iter().enumerate() {
        if let Some(ca) = &r.ca_file {
            exists(
                base,
                ca,
                false,
                &p("runtime.containerd.registries").index(i).key("caFile"),
                out,
            );
        }
    }
}

fn network(bp: &RawBlueprint, out: &mut Collector<'_>) {
    for (i, nic) in bp.network.nics.iter().enumerate() {
        let path = p("network.nics").index(i);
        if nic.count == 0 {
            out.error(
                "nic",
                &path.key("count"),
                "a NIC group needs at least one NIC",
            );
        }
        match nic.link_layer {
            LinkLayer::Infiniband => {
                if ![256, 512, 1024, 2048, 4096].contains(&nic.mtu) {
                    out.error(
                        "nic",
                        &path.key("mtu"),
                        format!(
                            "InfiniBand MTU {} is not one of 256, 512, 1024, 2048, 4096",
                            nic.mtu
                        ),
                    );
                }
                if !nic.rdma {
                    out.error(
                        "nic",
                        &path.key("rdma"),
                        "InfiniBand is RDMA; set rdma: true",
                    );
                }
            }
            LinkLayer::Ethernet => {
                if !(576..=9216).contains(&nic.mtu) {
                    out.error(
                        "nic",
                        &path.key("mtu"),
                        format!("Ethernet MTU {} is outside 576–9216", nic.mtu),
                    );
                }
            }
        }
        if nic.speed_gbps == 0 {
            out.error("nic", &path.key("speedGbps"), "speed must be positive");
        }
    }
    let a = &bp.network.affinity;
    if a.gpu_nic_same_numa || a.gpu_nic_same_pcie_switch {
        if bp.accelerators.is_none() {
            out.error(
                "affinity",
                &p("network.affinity"),
                "GPU↔NIC affinity is asked for, but no accelerators are declared",
            );
        }
        if !bp.network.nics.iter().any(|n| n.role == NicRole::Compute) {
            out.error(
                "affinity",
                &p("network.affinity"),
                "GPU↔NIC affinity needs at least one NIC group with role: compute",
            );
        }
    }
}

fn host_ok(host: &str) -> bool {
    !host.is_empty()
        && !host.contains("://")
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '_' | '[' | ']'))
}

fn registries(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let mut seen = std::collections::BTreeSet::new();
    for (i, r) in bp.runtime.containerd.registries.iter().enumerate() {
        let path = p("runtime.containerd.registries").index(i);
        if !host_ok(&r.host) {
            out.error(
                "registry",
                &path.key("host"),
                format!(
                    "`{}` is not a registry host (`name[:port]`, no scheme or path)",
                    r.host
                ),
            );
        }
        if !seen.insert(r.host.clone()) {
            out.error(
                "duplicate",
                &path.key("host"),
                format!("registry `{}` is listed twice", r.host),
            );
        }
        for (j, m) in r.mirrors.iter().enumerate() {
            let rest = m
                .strip_prefix("https://")
                .or_else(|| m.strip_prefix("http://"));
            let ok = rest.is_some_and(|r| {
                let host = r.split('/').next().unwrap_or("");
                host_ok(host)
                    && !r
                        .chars()
                        .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\'))
            });
            if !ok {
                out.error(
                    "registry",
                    &path.key("mirrors").index(j),
                    format!("mirror `{m}` is not an http(s) URL"),
                );
            }
        }
    }
}

fn system(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let s = &bp.system;
    if let Some(c) = &s.cache
        && c.low_watermark.value() >= c.high_watermark.value()
    {
        out.error(
            "cache-watermarks",
            &p("system.cache.lowWatermark"),
            format!(
                "low watermark {} must be below the high watermark {}",
                c.low_watermark, c.high_watermark
            ),
        );
    }
    if let Some(t) = &s.time_sync
        && t.servers.is_empty()
        && t.pools.is_empty()
    {
        out.error(
            "time-sync",
            &p("system.timeSync"),
            "time sync needs at least one server or pool",
        );
    }
    let mut labels = std::collections::BTreeSet::new();
    let mut mounts = std::collections::BTreeSet::new();
    for (i, part) in s.partitions.iter().enumerate() {
        let path = p("system.partitions").index(i);
        if !labels.insert(part.label.clone()) {
            out.error(
                "duplicate",
                &path.key("label"),
                format!("partition label `{}` is used twice", part.label),
            );
        }
        if !mounts.insert(part.mount_point.clone()) {
            out.error(
                "duplicate",
                &path.key("mountPoint"),
                format!("`{}` is mounted twice", part.mount_point),
            );
        }
    }
    let unsized_parts = s.partitions.iter().filter(|p| p.size.is_none()).count();
    if unsized_parts > 1 {
        out.error(
            "partitions",
            &p("system.partitions"),
            "only one partition may take the rest of the disk (no size)",
        );
    }
    let mut names = std::collections::BTreeSet::new();
    for (i, r) in s.logs.rotate.iter().enumerate() {
        let path = p("system.logs.rotate").index(i);
        if !names.insert(r.name.clone()) {
            out.error(
                "duplicate",
                &path.key("name"),
                format!("rule `{}` is defined twice", r.name),
            );
        }
        if !r.path.starts_with('/') {
            out.error(
                "logrotate",
                &path.key("path"),
                "the log path must be absolute",
            );
        }
        if r.keep == 0 {
            out.error(
                "logrotate",
                &path.key("keep"),
                "keep at least one rotated file",
            );
        }
    }
    let mut certs = std::collections::BTreeSet::new();
    for (i, c) in s.certificates.iter().enumerate() {
        if !certs.insert(c.name.clone()) {
            out.error(
                "duplicate",
                &p("system.certificates").index(i).key("name"),
                format!("certificate `{}` is listed twice", c.name),
            );
        }
    }
}

fn nfd(bp: &RawBlueprint, out: &mut Collector<'_>) {
    for (i, l) in bp.kubernetes.nfd.platform_labels.iter().enumerate() {
        let path = p("kubernetes.nfd.platformLabels").index(i);
        if l.when.is_empty() {
            out.error(
                "nfd",
                &path.key("when"),
                "a platform label needs at least one feature match",
            );
        }
        for (j, m) in l.when.iter().enumerate() {
            let mp = path.key("when").index(j);
            let ok_name = m.feature.split_once('.').is_some_and(|(a, b)| {
                !a.is_empty()
                    && !b.is_empty()
                    && m.feature
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c == '.' || c == '_')
            });
            if !ok_name {
                out.error(
                    "nfd",
                    &mp.key("feature"),
                    format!(
                        "`{}` is not an NFD feature name (`<source>.<feature>`, e.g. pci.device)",
                        m.feature
                    ),
                );
            }
            if m.attribute.is_empty()
                || m.attribute
                    .chars()
                    .any(|c| c.is_whitespace() || c.is_control())
            {
                out.error(
                    "nfd",
                    &mp.key("attribute"),
                    "an attribute is one non-empty word",
                );
            }
            let want = match m.op {
                MatchOp::In | MatchOp::NotIn => (1, usize::MAX),
                MatchOp::Gt | MatchOp::Lt => (1, 1),
                MatchOp::GtLt => (2, 2),
                MatchOp::Exists | MatchOp::DoesNotExist | MatchOp::IsTrue | MatchOp::IsFalse => {
                    (0, 0)
                }
            };
            let n = m.values.len();
            if n < want.0 || n > want.1 {
                let need = match want {
                    (0, 0) => "no values".to_string(),
                    (1, usize::MAX) => "one or more values".to_string(),
                    (a, b) if a == b => format!("exactly {a} value(s)"),
                    (a, b) => format!("{a}–{b} values"),
                };
                out.error(
                    "nfd",
                    &mp.key("values"),
                    format!("op {:?} takes {need}; {n} given", m.op),
                );
            }
            if matches!(m.op, MatchOp::Gt | MatchOp::Lt | MatchOp::GtLt)
                && m.values.iter().any(|v| v.parse::<i64>().is_err())
            {
                out.error(
                    "nfd",
                    &mp.key("values"),
                    format!("op {:?} compares integers", m.op),
                );
            }
        }
    }
}

fn security(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let ssh = &bp.security.ssh;
    if ssh.enabled && ssh.password_authentication && ssh.permit_root_login == RootLogin::Yes {
        out.warning(
            "ssh",
            &p("security.ssh.permitRootLogin"),
            "root may log in with a password; GPU nodes are usually reached by key only",
        );
    }
    if ssh.max_auth_tries == 0 {
        out.error(
            "ssh",
            &p("security.ssh.maxAuthTries"),
            "maxAuthTries must be at least 1",
        );
    }
    if ssh.port == 0 {
        out.error(
            "ssh",
            &p("security.ssh.port"),
            "port must be between 1 and 65535",
        );
    }
    for (i, w) in bp.security.audit.iter().enumerate() {
        let path = p("security.audit").index(i);
        if w.permissions.is_empty() || !w.permissions.chars().all(|c| "rwxa".contains(c)) {
            out.error(
                "audit",
                &path.key("permissions"),
                format!("`{}` must be made of r, w, x, a", w.permissions),
            );
        }
        if w.key.is_empty()
            || w.key.len() > 31
            || !w
                .key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            out.error(
                "audit",
                &path.key("key"),
                "an audit key is 1–31 letters, digits, `-` or `_`",
            );
        }
    }
    for (name, value) in &bp.security.sysctls {
        let path = p("security.sysctls").key(name.clone());
        let ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
            && !name.starts_with('.')
            && !name.contains("..");
        if !ok {
            out.error_at_key("sysctl", &path, format!("`{name}` is not a sysctl name"));
        }
        if let SysctlValue::Text(t) = value
            && (t.contains('\n') || t.contains('\r'))
        {
            out.error("sysctl", &path, "a sysctl value is one line");
        }
    }
}

/// Free text that ends up inside rendered files must be one printable line.
fn single_line(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let mut fields: Vec<(YamlPath, &str)> = vec![
        (p("metadata.version"), &bp.metadata.version),
        (p("os.patchLevel"), &bp.os.patch_level),
    ];
    if let Some(a) = &bp.accelerators {
        fields.push((p("accelerators.model"), &a.model));
        if let Some(m) = &a.sharing.mig_profile {
            fields.push((p("accelerators.sharing.migProfile"), m));
        }
    }
    for (i, n) in bp.network.nics.iter().enumerate() {
        fields.push((p("network.nics").index(i).key("model"), &n.model));
        if let Some(d) = &n.driver {
            fields.push((p("network.nics").index(i).key("driver"), d));
        }
    }
    if let Some(t) = &bp.system.time_sync {
        for (i, s) in t.servers.iter().enumerate() {
            fields.push((p("system.timeSync.servers").index(i), s));
        }
        for (i, s) in t.pools.iter().enumerate() {
            fields.push((p("system.timeSync.pools").index(i), s));
        }
    }
    if let Some(d) = &bp.system.dns {
        for (i, s) in d.search_domains.iter().enumerate() {
            fields.push((p("system.dns.searchDomains").index(i), s));
        }
    }
    for (i, u) in bp.security.ssh.allow_users.iter().enumerate() {
        fields.push((p("security.ssh.allowUsers").index(i), u));
    }
    for (i, g) in bp.security.ssh.allow_groups.iter().enumerate() {
        fields.push((p("security.ssh.allowGroups").index(i), g));
    }
    for (i, r) in bp.system.logs.rotate.iter().enumerate() {
        fields.push((p("system.logs.rotate").index(i).key("path"), &r.path));
    }
    for (path, text) in fields {
        if text.is_empty() {
            out.error("empty", &path, "must not be empty");
        } else if text.chars().any(|c| c.is_control()) {
            out.error(
                "single-line",
                &path,
                "must be one line without control characters",
            );
        }
    }
    for (i, u) in bp
        .security
        .ssh
        .allow_users
        .iter()
        .chain(&bp.security.ssh.allow_groups)
        .enumerate()
    {
        if u.chars().any(|c| c.is_whitespace()) {
            out.error(
                "ssh",
                &p("security.ssh").key(if i < bp.security.ssh.allow_users.len() {
                    "allowUsers"
                } else {
                    "allowGroups"
                }),
                format!("`{u}` must not contain spaces"),
            );
        }
    }
}
