//! Rules for the node's own settings: files the blueprint names are regular
//! files inside its folder (after resolving links) and certificates are
//! PEM certificates, names are unique, cache watermarks are ordered, NIC
//! settings are physically possible. (What one field can say about itself,
//! such as a registry host's syntax or a one-line text, is its value type's
//! business, checked when the blueprint is read.)

use std::path::Path;

use super::p;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::*;
use crate::blueprint::pem;
use crate::blueprint::value::RelPath;
use crate::blueprint::yaml_path::YamlPath;

pub fn check(bp: &RawBlueprint, base: Option<&Path>, out: &mut Collector<'_>) {
    files(bp, base, out);
    network(bp, out);
    registries(bp, out);
    system(bp, out);
    security(bp, out);
    nfd(bp, out);
}

/// What a blueprint may name beside itself.
#[derive(Clone, Copy, PartialEq)]
enum Want {
    /// A folder (the overlay root).
    Folder,
    /// A PEM file of CA certificates.
    Certificates,
    /// A PEM ECDSA P-256 public key.
    PublicKey,
}

/// The most a certificate file may hold; CA bundles are kilobytes.
const MAX_CERT_BYTES: u64 = 1024 * 1024;

/// Checks a file or folder the blueprint names: it resolves (links
/// followed) to a regular file or folder inside the blueprint's folder tree
/// (never /proc, a device, or a file elsewhere on the build machine, which
/// would then be copied into the image), and certificates parse as PEM
/// certificates.
fn named_file(
    base: Option<&Path>,
    rel: &RelPath,
    want: Want,
    path: &YamlPath,
    out: &mut Collector<'_>,
) {
    let Some(base) = base else { return };
    let full = base.join(rel.as_str());
    let (root, real) = match (std::fs::canonicalize(base), std::fs::canonicalize(&full)) {
        (Ok(r), Ok(f)) => (r, f),
        (Err(e), _) | (_, Err(e)) => {
            out.error(
                "missing-file",
                path,
                format!("cannot read `{}`: {e}", full.display()),
            );
            return;
        }
    };
    let mut fail = |m: String| {
        out.error("named-file", path, m);
    };
    if !real.starts_with(&root) {
        return fail(format!(
            "`{rel}` resolves to `{}`, outside the blueprint's folder `{}`; files the blueprint names must lie inside its folder (links are followed)",
            real.display(),
            root.display()
        ));
    }
    let meta = match std::fs::metadata(&real) {
        Ok(m) => m,
        Err(e) => return fail(format!("cannot read `{}`: {e}", full.display())),
    };
    match want {
        Want::Folder if !meta.is_dir() => fail(format!("`{}` is not a folder", full.display())),
        Want::Folder => {}
        Want::Certificates | Want::PublicKey if !meta.is_file() => fail(format!(
            "`{}` is not a regular file (a folder, FIFO or device)",
            full.display()
        )),
        Want::Certificates | Want::PublicKey if meta.len() > MAX_CERT_BYTES => fail(format!(
            "`{}` is {} bytes; a certificate or key file is at most {MAX_CERT_BYTES}",
            full.display(),
            meta.len()
        )),
        Want::Certificates | Want::PublicKey => match std::fs::read(&real) {
            Err(e) => fail(format!("cannot read `{}`: {e}", full.display())),
            Ok(bytes) => {
                let checked = if want == Want::PublicKey {
                    pem::public_key(&bytes)
                } else {
                    pem::certificates(&bytes).map(|_| ())
                };
                if let Err(e) = checked {
                    fail(format!("`{}` {e}", full.display()));
                }
            }
        },
    }
}

fn files(bp: &RawBlueprint, base: Option<&Path>, out: &mut Collector<'_>) {
    if let Some(f) = &bp.files {
        named_file(base, &f.overlay, Want::Folder, &p("files.overlay"), out);
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
        named_file(
            base,
            &c.file,
            Want::Certificates,
            &p("system.certificates").index(i).key("file"),
            out,
        );
    }
    if let Some(t) = &bp.security.image_trust {
        for (i, k) in t.keys.iter().enumerate() {
            named_file(
                base,
                &k.file,
                Want::PublicKey,
                &p("security.imageTrust.keys").index(i).key("file"),
                out,
            );
        }
    }
    for (i, r) in bp.runtime.containerd.registries.iter().enumerate() {
        if let Some(ca) = &r.ca_file {
            named_file(
                base,
                ca,
                Want::Certificates,
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

fn registries(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let mut seen = std::collections::BTreeSet::new();
    for (i, r) in bp.runtime.containerd.registries.iter().enumerate() {
        if !seen.insert(r.host.clone()) {
            out.error(
                "duplicate",
                &p("runtime.containerd.registries").index(i).key("host"),
                format!("registry `{}` is listed twice", r.host),
            );
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
    if let Some(t) = &bp.security.image_trust {
        if t.keys.is_empty() {
            out.error(
                "image-trust",
                &p("security.imageTrust.keys"),
                "names no key; an image could never be trusted (leave imageTrust out to sign nothing)",
            );
        }
        let mut seen = std::collections::BTreeSet::new();
        for (i, k) in t.keys.iter().enumerate() {
            if !seen.insert(k.name.as_str()) {
                out.error(
                    "duplicate",
                    &p("security.imageTrust.keys").index(i).key("name"),
                    format!("`{}` is listed twice", k.name),
                );
            }
        }
    }
}
