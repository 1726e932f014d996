//! The image this node runs, as `apply` kept it under `/var/lib/nodeimg/image`: its
//! manifest digest, which of the node's trust keys (`/etc/nodeimg/trust/*.pub`) signed it,
//! its provenance and SBOM status, and whether the lock, matrix, blueprint id and trust
//! keys on disk are the files of its signed config layer.
//!
//! Everything is read through the host, so a capture keeps it and a replay judges the same
//! bytes; the verification itself is `trust`'s, the same `verify-image` and `apply` run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::blueprint::model::TRUST_DIR;
use crate::trust::node::{self, Binding, NodeFiles};
use crate::trust::{Expect, Files, KeyId, Layout, PublicKey, Report, verify_image};
use crate::verify::fact::Fact;
use crate::verify::host::{Host, HostErrorKind};

/// What the node holds of the image it runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunningImage {
    /// The image checked against every key under `/etc/nodeimg/trust`.
    pub report: Report,
    /// Those keys by name (the file name without `.pub`).
    pub keys: BTreeMap<String, KeyId>,
    /// The bound files on disk against the signed config layer.
    pub binding: Fact<Binding>,
}

/// The kept layout, read through the host.
struct HostLayout<'a> {
    host: &'a dyn Host,
    root: PathBuf,
}

impl Files for HostLayout<'_> {
    fn read(&self, rel: &str, limit: u64) -> Result<Option<Vec<u8>>, String> {
        let path = self.root.join(rel);
        match self.host.read(&path) {
            Ok(b) if b.len() as u64 > limit => Err(format!(
                "{} is {} bytes, more than {limit}",
                path.display(),
                b.len()
            )),
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind == HostErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }

    fn location(&self) -> String {
        self.root.display().to_string()
    }
}

/// The node's own files, read through the host.
struct HostFiles<'a>(&'a dyn Host);

impl NodeFiles for HostFiles<'_> {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        match self.0.read(&Path::new("/").join(path)) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind == HostErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }

    fn list(&self, dir: &str) -> Result<Vec<String>, String> {
        match self.0.list_dir(&Path::new("/").join(dir)) {
            Ok(names) => Ok(names),
            Err(e) if e.kind == HostErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// The trust keys the image put on the node, by name.
fn trust_keys(host: &dyn Host) -> Result<Vec<(String, PublicKey)>, String> {
    let files = HostFiles(host);
    let mut keys = Vec::new();
    for name in files.list(TRUST_DIR)? {
        let Some(stem) = name.strip_suffix(".pub") else {
            continue;
        };
        let path = format!("{TRUST_DIR}/{name}");
        let bytes = files.read(&path)?.unwrap_or_default();
        let text = String::from_utf8(bytes).map_err(|_| format!("/{path}: not UTF-8"))?;
        let key = PublicKey::from_pem(&text).map_err(|m| format!("/{path}: {m}"))?;
        keys.push((stem.to_owned(), key));
    }
    Ok(keys)
}

/// Reads the kept image and judges it with the node's keys.
pub fn collect(host: &dyn Host) -> Fact<RunningImage> {
    let root = Path::new("/").join(node::KEPT_DIR);
    let files = HostLayout {
        host,
        root: root.clone(),
    };
    if matches!(files.read("oci-layout", 64 * 1024), Ok(None)) {
        return Fact::unknown(format!(
            "no image kept at {}: apply keeps there the image it applies; an image put on the node otherwise cannot be judged",
            root.display()
        ));
    }
    let layout = match Layout::open(&files) {
        Ok(l) => l,
        Err(e) => {
            return Fact::unknown(e.to_string());
        }
    };
    let keys = match trust_keys(host) {
        Ok(k) => k,
        Err(reason) => return Fact::unknown(reason),
    };
    let public: Vec<PublicKey> = keys.iter().map(|(_, k)| k.clone()).collect();
    let report = match verify_image(&layout, &public, &Expect::default()) {
        Ok(r) => r,
        Err(e) => return Fact::unknown(e.to_string()),
    };
    let binding = match node::bind(&layout, &report.image, &HostFiles(host)) {
        Ok(b) => Fact::Known(b),
        Err(reason) => Fact::unknown(reason),
    };
    Fact::Known(RunningImage {
        report,
        keys: keys.into_iter().map(|(n, k)| (n, k.id().clone())).collect(),
        binding,
    })
}
