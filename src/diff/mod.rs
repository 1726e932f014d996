//! `nodeimg diff`: what changes between two blueprints — field by field,
//! in the values nodeimg computes (with the arithmetic of both sides), and
//! in every rendered file (unified diffs) — and what each change means for a
//! running fleet (reboot, drain, live). This is the upgrade review made
//! mechanical.

pub mod impact;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::blueprint::model::DriverAuthority;
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

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub old: Side,
    pub new: Side,
    pub fields: Vec<FieldChange>,
    pub computed: Vec<ComputedChange>,
    pub files: Vec<FileChange>,
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
        !(self.fields.is_empty() && self.computed.is_empty() && self.files.is_empty())
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

fn computed(old: &Blueprint, new: &Blueprint) -> Vec<ComputedChange> {
    let rows = |k: &resolve::Kubelet| {
        let mut v: Vec<(String, String, String)> = Vec::new();
        for (name, res) in [
            ("kubeReserved", &k.kube_reserved),
            ("systemReserved", &k.system_reserved),
        ] {
            for (field, e) in [
                ("cpu", &res.cpu),
                ("memory", &res.memory),
                ("ephemeralStorage", &res.ephemeral_storage),
            ] {
                let (value, how) = e
                    .as_ref()
                    .map_or(("(none)".to_string(), String::new()), |e| {
                        (e.value.to_string(), e.how.clone())
                    });
                v.push((format!("kubernetes.kubelet.{name}.{field}"), value, how));
            }
        }
        v.push((
            "allocatable.cpu".into(),
            k.allocatable_cpu.value.to_string(),
            k.allocatable_cpu.how.clone(),
        ));
        v.push((
            "allocatable.memory".into(),
            k.allocatable_memory.value.to_string(),
            k.allocatable_memory.how.clone(),
        ));
        v
    };
    let (a, b) = (rows(&old.kubelet()), rows(&new.kubelet()));
    a.into_iter()
        .zip(b)
        .filter(|(x, y)| x.1 != y.1)
        .map(|(x, y)| ComputedChange {
            path: x.0,
            old: x.1,
            new: y.1,
            old_how: x.2,
            new_how: y.2,
            impact: Impact::Drain,
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

/// The id and lock files change with every blueprint change and repeat
/// what the field list says: one compact line instead of a hunk.
fn summarised(path: &str, old: &str, new: &str) -> Option<String> {
    match path {
        "layer/etc/nodeimg/blueprint.id" => {
            Some(format!("blueprint id {} → {}\n", old.trim(), new.trim()))
        }
        "layer/etc/nodeimg/blueprint.lock.json" => Some(
            "the resolved blueprint (its changes are the blueprint changes listed above)\n".into(),
        ),
        _ => None,
    }
}

/// Compares two checked blueprints and their rendered trees.
pub fn compare(old: &Blueprint, old_r: &Rendered, new: &Blueprint, new_r: &Rendered) -> Report {
    let fields = fields(old, new);
    let computed = computed(old, new);
    let files = files(old_r, new_r);
    let impact = fields
        .iter()
        .map(|f| f.impact)
        .chain(computed.iter().map(|c| c.impact))
        .chain(files.iter().map(|f| f.impact))
        .max();
    // The actions of the worst files ("restart kubelet"); fields only where
    // no file says more (a driver change, a change without files).
    let worst_files: Vec<String> = files
        .iter()
        .filter(|f| Some(f.impact) == impact)
        .map(|f| f.why.clone())
        .collect();
    let mut reasons: Vec<String> = if worst_files.is_empty() {
        fields
            .iter()
            .filter(|f| Some(f.impact) == impact)
            .map(|f| f.why.clone())
            .chain(
                computed
                    .iter()
                    .filter(|c| Some(c.impact) == impact)
                    .map(|c| format!("{} changes", c.path)),
            )
            .collect()
    } else {
        worst_files
    };
    reasons.sort();
    reasons.dedup();
    Report {
        old: side(old),
        new: side(new),
        fields,
        computed,
        files,
        impact,
        reasons,
    }
}
