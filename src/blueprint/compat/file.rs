//! The matrix file format (the built-in `compat-matrix.yaml` and every `--matrix` file):
//! raw entries (`deny_unknown_fields`) read with the blueprint loader (bounded, located),
//! checked, and laid over a matrix: an entry whose key is new is added, one whose key
//! exists is merged into it (lists joined, settings replaced), one with `replace: true`
//! replaces it whole. Errors name the file, the YAML path and the line.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    Component, CudaDriver, Matrix, MatrixError, Model, Newest, NicModel, RocmRelease, Rule,
    RuleSeverity, Want, nic_key,
};
use crate::blueprint::model::Vendor;
use crate::blueprint::value::{LinkWidth, PcieGen, Version};
use crate::blueprint::yaml_path::YamlPath;
use crate::fault::overrides::{Catalog, Override};
use crate::fault::{Action, FaultClass, Severity};

/// A compatibility matrix file (`--matrix FILE`, and the built-in data).
/// Every entry cites its `source`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "nodeimg compatibility matrix")]
pub struct MatrixFile {
    /// Always 1.
    schema_version: u32,
    /// Minimum NVIDIA driver per CUDA release (key: `cuda`).
    #[serde(default)]
    cuda_minimum_driver: Vec<CudaDriverEntry>,
    /// ROCm releases with the GPUs and OSes they support (key: `rocm`).
    #[serde(default)]
    rocm: Vec<RocmEntry>,
    /// GPU models and what they can do (key: `model`, any case).
    #[serde(default)]
    models: Vec<ModelEntry>,
    /// Version rules between components (key: `id`).
    #[serde(default)]
    rules: Vec<RuleEntry>,
    /// The newest release of a component the matrix was written against
    /// (key: `component`); later pins warn.
    #[serde(default)]
    newest: Vec<NewestEntry>,
    /// NIC models and their PCI device ids (key: `model`, compared
    /// without case, spaces or punctuation).
    #[serde(default)]
    nics: Vec<NicEntry>,
    /// Overrides of single codes of the vendor fault catalogs (key: `catalog` and
    /// `code`): what verify does about that Xid, SXid or AMD RAS signal on this site's
    /// nodes, instead of what the catalog says, or for a code a newer driver added.
    #[serde(default)]
    faults: Vec<FaultEntry>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FaultEntry {
    /// `nvidia-xid`, `nvidia-sxid` or `amd-ras`.
    catalog: Catalog,
    /// The Xid or SXid number, or the AMD RAS signal (`ue`, `log-reset-failed`, ...).
    code: FaultCode,
    /// The fault class; the catalog's when absent.
    #[serde(default)]
    class: Option<FaultClass>,
    action: Action,
    /// The action's own severity when absent (a warning up to restart-app).
    #[serde(default)]
    severity: Option<Severity>,
    /// Why: the site's qualification, ticket or vendor advisory.
    source: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
enum FaultCode {
    Number(u32),
    Text(String),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CudaDriverEntry {
    /// CUDA release: `12.8` (GA) or `12.8.1` (Update 1).
    cuda: Version,
    /// Minimum Linux driver, e.g. `570.26`.
    driver: Version,
    source: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RocmEntry {
    /// ROCm release, e.g. `6.2`.
    rocm: Version,
    /// GPUs to add to the release (joined with the built-in list).
    #[serde(default)]
    gpus: Vec<String>,
    /// OSes to add, `distro version` as blueprints name them, e.g. `rocky 9.5`.
    #[serde(default)]
    os: Vec<String>,
    /// Required for a new release; appended to the built-in source otherwise.
    #[serde(default)]
    source: Option<String>,
    /// Replace the built-in release instead of extending it.
    #[serde(default)]
    replace: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ModelEntry {
    /// `nvidia` or `amd`; required for a new model.
    #[serde(default)]
    vendor: Option<Vendor>,
    /// Canonical name, e.g. `H100 SXM`; blueprints may use any case.
    model: String,
    /// Other names (as nvidia-smi reports them); joined with the built-in list.
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default)]
    mig: Option<bool>,
    #[serde(default)]
    max_mig_instances: Option<u32>,
    #[serde(default)]
    nvswitch: Option<bool>,
    #[serde(default)]
    pcie_gen: Option<PcieGen>,
    #[serde(default)]
    pcie_width: Option<LinkWidth>,
    /// Required for a new model; appended to the built-in source otherwise.
    #[serde(default)]
    source: Option<String>,
    /// Replace the built-in model instead of extending it.
    #[serde(default)]
    replace: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NicEntry {
    /// Model name as blueprints write it (`network.nics[].model`), e.g. `ConnectX-7`.
    model: String,
    /// PCI device ids of the model's network functions, as the kernel's
    /// `device` attribute shows them: `0x1021`. Joined with the built-in list.
    #[serde(default)]
    #[schemars(extend("items" = {"type": "string", "pattern": "^0x[0-9a-fA-F]{4}$"}))]
    device_ids: Vec<String>,
    /// Required for a new model; appended to the built-in source otherwise.
    #[serde(default)]
    source: Option<String>,
    /// Replace the built-in model instead of extending it.
    #[serde(default)]
    replace: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RuleEntry {
    id: String,
    /// Components and constraints that make the rule apply, e.g. `{kubernetes: ">=1.35"}`.
    when: BTreeMap<Component, String>,
    /// Components and constraints that must then hold, e.g. `{cgroup: v2}`.
    require: BTreeMap<Component, String>,
    severity: RuleSeverity,
    message: String,
    source: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NewestEntry {
    component: Component,
    /// Newest release known, `major.minor` (e.g. `1.36`): later minors warn.
    version: Version,
    source: String,
}

impl Matrix {
    /// The JSON Schema of a matrix file.
    pub fn file_schema() -> serde_json::Value {
        schemars::schema_for!(MatrixFile).to_value()
    }

    /// Parses one matrix file on its own (no built-in entries).
    pub fn parse(text: &str, file: &str) -> Result<Self, MatrixError> {
        let mut m = Matrix::default();
        m.extend_from_text(text, file)?;
        Ok(m)
    }

    /// Reads a user matrix and lays it over `self`.
    pub fn extend_from_file(&mut self, path: &Path) -> Result<(), MatrixError> {
        let file = path.display().to_string();
        let err = |message: String| MatrixError {
            file: file.clone(),
            line: None,
            column: None,
            message,
        };
        // Bounded before it is read, and a FIFO or a device refused without blocking.
        let bytes = crate::input::read(path, crate::blueprint::source::MAX_BYTES as u64)
            .map_err(|e| err(format!("cannot read: {e}")))?;
        let text = crate::blueprint::source::decode(&bytes).map_err(|e| MatrixError {
            file: file.clone(),
            line: e.pos.map(|p| p.line),
            column: e.pos.map(|p| p.column),
            message: e.message,
        })?;
        self.extend_from_text(text, &file)
    }

    /// Parses matrix text with the blueprint loader (bounded size, depth and
    /// aliases; positions kept) and lays it over `self`.
    pub(super) fn extend_from_text(&mut self, text: &str, file: &str) -> Result<(), MatrixError> {
        let located = |path: Option<&YamlPath>,
                       pos: Option<crate::blueprint::source::Pos>,
                       message: String| {
            MatrixError {
                file: file.to_string(),
                line: pos.map(|p| p.line),
                column: pos.map(|p| p.column),
                message: match path {
                    Some(p) if !p.is_root() => format!("{p}: {message}"),
                    _ => message,
                },
            }
        };
        let doc = crate::blueprint::source::parse(text)
            .map_err(|e| located(Some(&e.path), e.pos, e.message))?;
        let raw: MatrixFile = serde_path_to_error::deserialize(&doc.value).map_err(|e| {
            let path = crate::blueprint::yaml_path_of(e.path());
            let pos = doc.map.key_pos(&path);
            located(Some(&path), pos, e.inner().to_string())
        })?;
        let at = |path: YamlPath, message: String| {
            let pos = doc.map.value_pos(&path);
            located(Some(&path), pos, message)
        };
        if raw.schema_version != 1 {
            return Err(at(
                YamlPath::parse("schemaVersion"),
                format!("schemaVersion must be 1, found {}", raw.schema_version),
            ));
        }
        for row in raw.cuda_minimum_driver {
            self.cuda_minimum_driver.retain(|r| r.cuda != row.cuda);
            self.cuda_minimum_driver.push(CudaDriver {
                cuda: row.cuda,
                driver: row.driver,
                source: row.source,
            });
        }
        for (i, row) in raw.rocm.into_iter().enumerate() {
            let path = YamlPath::parse("rocm").index(i);
            match self.rocm.iter_mut().find(|r| r.rocm == row.rocm) {
                Some(have) if !row.replace => {
                    join(&mut have.gpus, row.gpus);
                    join(&mut have.os, row.os);
                    if let Some(s) = row.source {
                        have.source = format!("{}; {s}", have.source);
                    }
                }
                _ => {
                    let source = row.source.ok_or_else(|| {
                        at(
                            path.clone(),
                            "a new or replacing entry needs `source`".into(),
                        )
                    })?;
                    self.rocm.retain(|r| r.rocm != row.rocm);
                    self.rocm.push(RocmRelease {
                        rocm: row.rocm,
                        gpus: row.gpus,
                        os: row.os,
                        source,
                    });
                }
            }
        }
        for (i, row) in raw.models.into_iter().enumerate() {
            let path = YamlPath::parse("models").index(i);
            let existing = self
                .models
                .iter()
                .position(|m| m.model.eq_ignore_ascii_case(&row.model));
            match existing {
                Some(at_) if !row.replace => {
                    let have = &mut self.models[at_];
                    if let Some(v) = row.vendor
                        && v != have.vendor
                    {
                        return Err(at(
                            path.key("vendor"),
                            format!("{} is a {} model", have.model, have.vendor.as_str()),
                        ));
                    }
                    join(&mut have.aliases, row.aliases);
                    have.mig = row.mig.unwrap_or(have.mig);
                    have.max_mig_instances =
                        row.max_mig_instances.unwrap_or(have.max_mig_instances);
                    have.nvswitch = row.nvswitch.or(have.nvswitch);
                    have.pcie_gen = row.pcie_gen.or(have.pcie_gen);
                    have.pcie_width = row.pcie_width.or(have.pcie_width);
                    if let Some(s) = row.source {
                        have.source = format!("{}; {s}", have.source);
                    }
                }
                _ => {
                    let (Some(vendor), Some(source)) = (row.vendor, row.source) else {
                        return Err(at(
                            path,
                            "a new or replacing model needs `vendor` and `source`".into(),
                        ));
                    };
                    if let Some(i) = existing {
                        self.models.remove(i);
                    }
                    self.models.push(Model {
                        vendor,
                        model: row.model,
                        aliases: row.aliases,
                        mig: row.mig.unwrap_or(false),
                        max_mig_instances: row.max_mig_instances.unwrap_or(0),
                        nvswitch: row.nvswitch,
                        pcie_gen: row.pcie_gen,
                        pcie_width: row.pcie_width,
                        source,
                    });
                }
            }
        }
        for (i, row) in raw.rules.into_iter().enumerate() {
            let path = YamlPath::parse("rules").index(i);
            let wants = |side: &str, map: BTreeMap<Component, String>| {
                map.into_iter()
                    .map(|(c, text)| {
                        Want::parse(c, &text)
                            .map(|w| (c, w))
                            .map_err(|e| at(path.key(side), format!("rule `{}`: {e}", row.id)))
                    })
                    .collect::<Result<BTreeMap<_, _>, _>>()
            };
            let rule = Rule {
                when: wants("when", row.when.clone())?,
                require: wants("require", row.require.clone())?,
                id: row.id.clone(),
                severity: row.severity,
                message: row.message.clone(),
                source: row.source.clone(),
            };
            self.rules.retain(|r| r.id != rule.id);
            self.rules.push(rule);
        }
        for row in raw.newest {
            self.newest.retain(|n| n.component != row.component);
            self.newest.push(Newest {
                component: row.component,
                version: row.version,
                source: row.source,
            });
        }
        for (i, row) in raw.nics.into_iter().enumerate() {
            let path = YamlPath::parse("nics").index(i);
            let key = nic_key(&row.model);
            if key.is_empty() {
                return Err(at(
                    path.key("model"),
                    format!("`{}` names no model", row.model),
                ));
            }
            let ids = row
                .device_ids
                .iter()
                .enumerate()
                .map(|(j, text)| {
                    pci_id(text).ok_or_else(|| {
                        at(
                            path.key("deviceIds").index(j),
                            format!("`{text}` is not a PCI device id (0x and four hex digits, e.g. 0x1021)"),
                        )
                    })
                })
                .collect::<Result<Vec<u16>, _>>()?;
            let existing = self.nics.iter().position(|n| nic_key(&n.model) == key);
            match existing {
                Some(at_) if !row.replace => {
                    let have = &mut self.nics[at_];
                    for id in ids {
                        if !have.device_ids.contains(&id) {
                            have.device_ids.push(id);
                        }
                    }
                    if let Some(s) = row.source {
                        have.source = format!("{}; {s}", have.source);
                    }
                }
                _ => {
                    let Some(source) = row.source else {
                        return Err(at(
                            path,
                            "a new or replacing NIC model needs `source`".into(),
                        ));
                    };
                    if ids.is_empty() {
                        return Err(at(
                            path.key("deviceIds"),
                            "a new or replacing NIC model needs at least one device id".into(),
                        ));
                    }
                    if let Some(i) = existing {
                        self.nics.remove(i);
                    }
                    self.nics.push(NicModel {
                        model: row.model,
                        device_ids: ids,
                        source,
                    });
                }
            }
        }
        for (i, row) in raw.faults.into_iter().enumerate() {
            let path = YamlPath::parse("faults").index(i);
            let code = match row.code {
                FaultCode::Number(n) => n.to_string(),
                FaultCode::Text(t) => t.trim().to_owned(),
            };
            let entry = Override {
                catalog: row.catalog,
                code,
                class: row.class,
                action: row.action,
                severity: row.severity,
                source: row.source,
            };
            entry.check().map_err(|m| at(path.key("code"), m))?;
            if entry.source.trim().is_empty() {
                return Err(at(
                    path.key("source"),
                    "an override needs a `source`".into(),
                ));
            }
            self.faults
                .retain(|f| !(f.catalog == entry.catalog && f.code == entry.code));
            self.faults.push(entry);
        }
        Ok(())
    }
}

/// `0x1021` (or `0X1021`) as a PCI id.
fn pci_id(text: &str) -> Option<u16> {
    let hex = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))?;
    if hex.len() != 4 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(hex, 16).ok()
}

/// Adds the items of `more` that `list` lacks (ignoring case), in order.
fn join(list: &mut Vec<String>, more: Vec<String>) {
    for item in more {
        if !list.iter().any(|x| x.eq_ignore_ascii_case(&item)) {
            list.push(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_matrix_is_located() {
        let e = Matrix::parse(
            "schemaVersion: 1\nrules:\n  - id: x\n    bogus: 1\n",
            "m.yaml",
        )
        .unwrap_err();
        assert_eq!((e.line, e.column), (Some(4), Some(5)), "{e}");
        let e = Matrix::parse(
            "schemaVersion: 1\nrules:\n  - {id: x, when: {kubernetes: \"abc\"}, require: {cgroup: v2}, severity: error, message: m, source: s}\n",
            "m.yaml",
        )
        .unwrap_err();
        assert!(e.message.contains("not a version constraint"), "{e}");
    }

    #[test]
    fn a_site_matrix_extends_rows_instead_of_replacing_them() {
        let mut m = Matrix::builtin();
        let before = m.rocm_release(&"6.2".parse().unwrap()).unwrap().clone();
        m.extend_from_text(
            "schemaVersion: 1\nrocm:\n  - {rocm: \"6.2\", gpus: [MI250], os: [rocky 9.5]}\nmodels:\n  - {model: mi250, vendor: amd, source: site}\n  - {model: h100 sxm, aliases: [H100-SXM5-80GB]}\n",
            "site.yaml",
        )
        .unwrap();
        let after = m.rocm_release(&"6.2".parse().unwrap()).unwrap();
        assert!(after.os.iter().any(|o| o == "rocky 9.5"));
        assert!(before.os.iter().all(|o| after.os.contains(o)));
        assert!(before.gpus.iter().all(|g| after.gpus.contains(g)));
        assert_eq!(
            after.gpus.len(),
            before.gpus.len(),
            "MI250 was listed already"
        );
        let h100 = m.model(Vendor::Nvidia, "H100-SXM5-80GB").unwrap();
        assert!(h100.mig && h100.aliases.len() >= 2);
        assert!(m.model(Vendor::Amd, "MI250").is_some());
        m.extend_from_text(
            "schemaVersion: 1\nrocm:\n  - {rocm: \"6.2\", gpus: [MI250], os: [rocky 9.5], source: site, replace: true}\n",
            "site.yaml",
        )
        .unwrap();
        assert_eq!(
            m.rocm_release(&"6.2".parse().unwrap()).unwrap().os,
            ["rocky 9.5"]
        );
        let e =
            Matrix::parse("schemaVersion: 1\nmodels:\n  - {model: X9}\n", "s.yaml").unwrap_err();
        assert!(e.message.contains("needs `vendor` and `source`"), "{e}");
        assert_eq!(e.line, Some(3));
    }

    #[test]
    fn a_site_matrix_adds_and_extends_nic_models() {
        let mut m = Matrix::builtin();
        assert_eq!(m.nic_device_ids("connectx 7"), Some(&[0x1021u16][..]));
        assert_eq!(m.nic_device_ids("X710"), None);
        m.extend_from_text(
            "schemaVersion: 1\nnics:\n  - {model: X710, deviceIds: [\"0x1572\"], source: site}\n  - {model: connectx-7, deviceIds: [\"0x1021\", \"0xA2DC\"]}\n",
            "site.yaml",
        )
        .unwrap();
        assert_eq!(m.nic_device_ids("x-710"), Some(&[0x1572u16][..]));
        assert_eq!(
            m.nic_device_ids("ConnectX-7"),
            Some(&[0x1021u16, 0xa2dc][..])
        );
        let e = Matrix::parse(
            "schemaVersion: 1\nnics:\n  - {model: X9, deviceIds: [\"1572\"], source: s}\n",
            "s.yaml",
        )
        .unwrap_err();
        assert!(e.message.contains("not a PCI device id"), "{e}");
        assert_eq!(e.line, Some(3), "{e}");
        let e = Matrix::parse(
            "schemaVersion: 1\nnics:\n  - {model: X9, deviceIds: [\"0x1572\"]}\n",
            "s.yaml",
        )
        .unwrap_err();
        assert!(e.message.contains("needs `source`"), "{e}");
    }
}
