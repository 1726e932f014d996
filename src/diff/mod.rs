//! `nodeimg diff`: what changes between two blueprints — field by field,
//! in the values nodeimg computes (with the arithmetic of both sides), in
//! every rendered file (unified diffs) and in the overlay files they carry
//! into the image — and what each change means for a running fleet
//! (reboot, drain, live). This is the upgrade review made mechanical.

pub mod impact;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::blueprint::identity::{OverlayRecord, OverlayTree, RecordKind};
use crate::blueprint::model::{DriverAuthority, SharingMode};
use crate::blueprint::{Blueprint, resolve};
use crate::render::Rendered;
use impact::Impact;

#[derive(Debug, Clone, Serialize)]
pub struct FieldChange {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<Value>,
    pub impact: Impact,
    pub why: String,
}

/// A computed value that changed, with how each side was derived.
#[derive(Debug, Clone, Serialize)]
pub struct ComputedChange {
    pub path: String,
    pub old: String,
    pub new: String,
    pub old_how: String,
    pub new_how: String,
    pub impact: Impact,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    Added,
    Removed,
    Changed,
    Mode,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileChange {
    pub path: String,
    pub status: FileStatus,
    pub impact: Impact,
    pub why: String,
    /// Unified diff of the contents (empty for a mode-only change).
    pub diff: String,
}

/// An overlay entry added, removed or changed (content, type, link target
/// or mode).
#[derive(Debug, Clone, Serialize)]
pub struct OverlayChange {
    /// The path on the node (`/usr/local/bin/tool`).
    pub path: String,
    pub status: FileStatus,
    pub impact: Impact,
    pub why: String,
    /// What changed, in words (`1204 → 1310 bytes`, `mode 0644 → 0755`).
    pub detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub old: Side,
    pub new: Side,
    pub fields: Vec<FieldChange>,
    pub computed: Vec<ComputedChange>,
    pub files: Vec<FileChange>,
    pub overlay: Vec<OverlayChange>,
    /// Things a reviewer should know that are not changes (the same
    /// version for different content).
    pub warnings: Vec<String>,
    /// The worst impact of any change; absent when nothing changed.
    pub impact: Option<Impact>,
    /// The distinct reasons behind that impact.
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub name: String,
    pub version: String,
    pub id: String,
}

impl Report {
    pub fn differs(&self) -> bool {
        !(self.fields.is_empty()
            && self.computed.is_empty()
            && self.files.is_empty()
            && self.overlay.is_empty())
    }
}

fn side(bp: &Blueprint) -> Side {
    Side {
        name: bp.name().to_string(),
        version: bp.spec().metadata.version.to_string(),
        id: bp.id().to_string(),
    }
}

/// The driver is the GPU operator's on both sides.
fn operator_driver(old: &Blueprint, new: &Blueprint) -> bool {
    let op = |bp: &Blueprint| {
        bp.spec()
            .accelerators
            .as_ref()
            .is_some_and(|a| a.driver.authority == DriverAuthority::Operator)
    };
    op(old) && op(new)
}

/// The GPU sharing mode (none without accelerators).
fn sharing_mode(bp: &Blueprint) -> SharingMode {
    bp.spec()
        .accelerators
        .as_ref()
        .map_or(SharingMode::None, |a| a.sharing.mode())
}

fn fields(old: &Blueprint, new: &Blueprint) -> Vec<FieldChange> {
    let (a, b) = (old.identity().leaves(), new.identity().leaves());
    let operator_driver = operator_driver(old, new);
    let mut paths: Vec<&String> = a.keys().chain(b.keys()).collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter(|p| a.get(*p) != b.get(*p))
        .map(|p| {
            let (impact, why) = if operator_driver && p.starts_with("accelerators.driver.") {
                impact::OPERATOR_DRIVER
            } else if p.starts_with("accelerators.sharing.") {
                impact::of_sharing(sharing_mode(old), sharing_mode(new))
            } else {
                impact::of_field(p)
            };
            FieldChange {
                path: p.clone(),
                old: a.get(p).cloned(),
                new: b.get(p).cloned(),
                impact,
                why: why.to_string(),
            }
        })
        .collect()
}

/// The computed values that differ (the rows `explain` lists), except
/// those whose path is a changed field: that field's row already shows it.
fn computed(old: &Blueprint, new: &Blueprint, fields: &[FieldChange]) -> Vec<ComputedChange> {
    let (a, b) = (old.kubelet().derived(), new.kubelet().derived());
    let find = |rows: &[resolve::Derived], path: &str| -> (String, String) {
        rows.iter()
            .find(|d| d.path == path)
            .map_or(("(none)".to_string(), String::new()), |d| {
                (d.value.clone(), d.how.clone())
            })
    };
    // Old rows in their order, then rows only the new side has.
    let mut paths: Vec<&str> = a.iter().map(|d| d.path.as_str()).collect();
    for d in &b {
        if !paths.contains(&d.path.as_str()) {
            paths.push(&d.path);
        }
    }
    paths
        .into_iter()
        .filter(|p| !fields.iter().any(|f| f.path == *p))
        .filter_map(|p| {
            let ((old, old_how), (new, new_how)) = (find(&a, p), find(&b, p));
            (old != new).then(|| ComputedChange {
                path: p.to_string(),
                old,
                new,
                old_how,
                new_how,
                impact: Impact::Drain,
            })
        })
        .collect()
}

fn files(old: &Rendered, new: &Rendered) -> Vec<FileChange> {
    let collect = |r: &Rendered| {
        let mut m: BTreeMap<String, (u32, Vec<u8>)> = BTreeMap::new();
        for (p, mode, b) in r.layer.files() {
            m.insert(format!("layer/{p}"), (mode, b.to_vec()));
        }
        for (p, mode, b) in r.cluster.files() {
            m.insert(format!("cluster/{p}"), (mode, b.to_vec()));
        }
        m
    };
    let (a, b) = (collect(old), collect(new));
    let mut paths: Vec<&String> = a.keys().chain(b.keys()).collect();
    paths.sort();
    paths.dedup();
    let text = |x: Option<&(u32, Vec<u8>)>| {
        x.map(|(_, b)| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for p in paths {
        let (x, y) = (a.get(p), b.get(p));
        let status = match (x, y) {
            (None, Some(_)) => FileStatus::Added,
            (Some(_), None) => FileStatus::Removed,
            (Some(x), Some(y)) if x.1 != y.1 => FileStatus::Changed,
            (Some(x), Some(y)) if x.0 != y.0 => FileStatus::Mode,
            _ => continue,
        };
        let (old_text, new_text) = (text(x), text(y));
        let diff = if let Some(note) = summarised(p, &old_text, &new_text) {
            note
        } else if matches!(status, FileStatus::Mode) {
            format!(
                "mode {:04o} → {:04o}\n",
                x.map_or(0, |v| v.0),
                y.map_or(0, |v| v.0)
            )
        } else {
            similar::TextDiff::from_lines(&old_text, &new_text)
                .unified_diff()
                .context_radius(2)
                .header(&format!("old/{p}"), &format!("new/{p}"))
                .to_string()
        };
        // The new side's plan says what the file means; a removed file,
        // the old side's.
        let (impact, why) = if y.is_some() {
            new.impact_of(p)
        } else {
            old.impact_of(p)
        };
        out.push(FileChange {
            path: p.clone(),
            status,
            impact,
            why: why.to_string(),
            diff,
        });
    }
    out
}

/// What changed in the overlay between two trees: each entry added,
/// removed or different, by layer path. A side known only by its digest
/// (read from a lock) gives one change for the whole tree when the
/// digests differ.
fn overlay(old: Option<&OverlayTree>, new: Option<&OverlayTree>) -> Vec<OverlayChange> {
    let (impact, why) = impact::OVERLAY_FILE;
    let change = |path: String, status, detail: String| OverlayChange {
        path,
        status,
        impact,
        why: why.to_string(),
        detail,
    };
    if old.map(OverlayTree::digest) == new.map(OverlayTree::digest) {
        return Vec::new();
    }
    let (a, b) = match (old.map(OverlayTree::records), new.map(OverlayTree::records)) {
        (Some(None), _) | (_, Some(None)) => {
            return vec![change(
                "(overlay)".into(),
                FileStatus::Changed,
                "the overlay tree differs; its entries are not known on one side".into(),
            )];
        }
        (a, b) => (a.flatten().unwrap_or(&[]), b.flatten().unwrap_or(&[])),
    };
    let by_path = |rs: &'_ [OverlayRecord]| -> BTreeMap<String, OverlayRecord> {
        rs.iter().map(|r| (r.path.clone(), r.clone())).collect()
    };
    let (a, b) = (by_path(a), by_path(b));
    let mut paths: Vec<&String> = a.keys().chain(b.keys()).collect();
    paths.sort_by(|x, y| x.split('/').cmp(y.split('/')));
    paths.dedup();
    let mut out = Vec::new();
    for p in paths {
        let node = format!("/{p}");
        match (a.get(p), b.get(p)) {
            (None, Some(r)) => out.push(change(node, FileStatus::Added, describe(r))),
            (Some(r), None) => out.push(change(node, FileStatus::Removed, describe(r))),
            (Some(x), Some(y)) if x.kind != y.kind => {
                let detail = match (&x.kind, &y.kind) {
                    (RecordKind::File { size: s, .. }, RecordKind::File { size: t, .. }) => {
                        if s == t {
                            format!("content changed ({t} bytes)")
                        } else {
                            format!("{s} → {t} bytes")
                        }
                    }
                    (RecordKind::Symlink { target: s }, RecordKind::Symlink { target: t }) => {
                        format!("link {s} → {t}")
                    }
                    _ => format!("{} → {}", describe(x), describe(y)),
                };
                out.push(change(node, FileStatus::Changed, detail));
            }
            (Some(x), Some(y)) if x.mode != y.mode => out.push(change(
                node,
                FileStatus::Mode,
                format!("mode {:04o} → {:04o}", x.mode, y.mode),
            )),
            _ => {}
        }
    }
    out
}

fn describe(r: &OverlayRecord) -> String {
    match &r.kind {
        RecordKind::Dir => "folder".into(),
        RecordKind::File { size, .. } => format!("file, {size} bytes, mode {:04o}", r.mode),
        RecordKind::Symlink { target } => format!("link to {target}"),
    }
}

/// Warnings about the pair: content changed while name and version stayed,
/// so images built from both get the same default tag (`metadata.version`).
fn warnings(old: &Blueprint, new: &Blueprint, differs: bool) -> Vec<String> {
    let (o, n) = (old.spec(), new.spec());
    let mut out = Vec::new();
    if differs && o.metadata.name == n.metadata.name && o.metadata.version == n.metadata.version {
        out.push(format!(
            "the content changed but metadata.version did not ({}): images built from both get the tag {} by default; give the new one its own version",
            n.metadata.version, n.metadata.version
        ));
    }
    out
}

/// The id and lock files change with every change and repeat what the
/// lists above say: one compact line instead of a hunk.
fn summarised(path: &str, old: &str, new: &str) -> Option<String> {
    match path {
        "layer/etc/nodeimg/blueprint.id" => {
            Some(format!("blueprint id {} → {}\n", old.trim(), new.trim()))
        }
        "layer/etc/nodeimg/blueprint.lock.json" => {
            let parse = |t: &str| serde_json::from_str::<Value>(t).unwrap_or(Value::Null);
            let (a, b) = (parse(old), parse(new));
            let parts: Vec<&str> = [
                ("blueprint", "the resolved blueprint"),
                ("matrix", "the matrix entries it is validated with"),
                ("overlay", "the overlay tree"),
            ]
            .into_iter()
            .filter(|(k, _)| a.get(k) != b.get(k))
            .map(|(_, what)| what)
            .collect();
            Some(if parts.is_empty() {
                "the lock (its changes are listed above)\n".into()
            } else {
                format!("the lock: {} changed (listed above)\n", parts.join(", "))
            })
        }
        _ => None,
    }
}

/// Compares two checked blueprints and their rendered trees.
pub fn compare(old: &Blueprint, old_r: &Rendered, new: &Blueprint, new_r: &Rendered) -> Report {
    let fields = fields(old, new);
    let computed = computed(old, new, &fields);
    let files = files(old_r, new_r);
    let overlay = overlay(old.identity().overlay(), new.identity().overlay());
    let impact = fields
        .iter()
        .map(|f| f.impact)
        .chain(computed.iter().map(|c| c.impact))
        .chain(files.iter().map(|f| f.impact))
        .chain(overlay.iter().map(|o| o.impact))
        .max();
    // Each changed field's own sentence (maxPods is not the CPU manager's state
    // file), with the overlay entries no field explains; a rendered file's
    // sentence, which speaks for every field it renders, only where no field
    // reaches the worst impact.
    let worst = |i: Impact| Some(i) == impact;
    let worst_fields: Vec<String> = fields
        .iter()
        .filter(|f| worst(f.impact))
        .map(|f| f.why.clone())
        .collect();
    let worst_overlay = overlay
        .iter()
        .filter(|o| worst(o.impact))
        .map(|o| o.why.clone());
    let worst_files: Vec<String> = files
        .iter()
        .filter(|f| worst(f.impact))
        .map(|f| f.why.clone())
        .collect();
    let mut reasons: Vec<String> = if !worst_fields.is_empty() {
        worst_fields.into_iter().chain(worst_overlay).collect()
    } else if !worst_files.is_empty() || overlay.iter().any(|o| worst(o.impact)) {
        worst_files.into_iter().chain(worst_overlay).collect()
    } else {
        computed
            .iter()
            .filter(|c| worst(c.impact))
            .map(|c| format!("{} changes", c.path))
            .collect()
    };
    reasons.sort();
    reasons.dedup();
    let differs = impact.is_some();
    Report {
        old: side(old),
        new: side(new),
        fields,
        computed,
        files,
        overlay,
        warnings: warnings(old, new, differs),
        impact,
        reasons,
    }
}
