//! The compatibility matrix: which versions of driver, CUDA/ROCm, kernel,
//! container toolkit, containerd, device plugin/DRA and Kubernetes work
//! together, what each GPU model can do (MIG, NVSwitch, PCIe link), and the
//! PCI device ids of each NIC model.
//!
//! The data ships in `compat-matrix.yaml` beside this file, every entry with
//! its source. `--matrix FILE` extends it: an entry whose key (CUDA release,
//! ROCm release, model name, NIC model, rule id) is new is added; one whose key exists
//! is merged into it (lists such as a ROCm release's GPUs and OSes are
//! joined, settings it gives replace the built-in ones); an entry with
//! `replace: true` replaces the built-in one whole. Keeping it as data means
//! a fleet team can pin what they have qualified without a new release of
//! the tool. The file format is documented in the README and published by
//! `nodeimg schema --matrix`.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::model::Vendor;
use super::value::{LinkWidth, PcieGen, Version, VersionReq};
use super::yaml_path::YamlPath;
use crate::fault::overrides::{Catalog, Override, Overrides};
use crate::fault::{Action, FaultClass, Severity};

const BUILTIN: &str = include_str!("compat-matrix.yaml");

/// The matrix in use: the built-in data, extended by any `--matrix` files.
/// It serializes as a matrix file that `--matrix` reads back.
#[derive(Debug, Clone, Default)]
pub struct Matrix {
    pub cuda_minimum_driver: Vec<CudaDriver>,
    pub rocm: Vec<RocmRelease>,
    pub models: Vec<Model>,
    pub rules: Vec<Rule>,
    /// The newest releases the matrix was written against.
    pub newest: Vec<Newest>,
    pub nics: Vec<NicModel>,
    /// A site's overrides of single codes of the vendor fault catalogs.
    pub faults: Vec<Override>,
}

impl Serialize for Matrix {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut m = s.serialize_struct("Matrix", 7)?;
        m.serialize_field("schemaVersion", &1)?;
        m.serialize_field("cudaMinimumDriver", &self.cuda_minimum_driver)?;
        m.serialize_field("rocm", &self.rocm)?;
        m.serialize_field("models", &self.models)?;
        m.serialize_field("rules", &self.rules)?;
        m.serialize_field("newest", &self.newest)?;
        // Left out when empty, so that the matrix entries (and the id) of a blueprint
        // without a known NIC read as before NIC models were data.
        if !self.nics.is_empty() {
            m.serialize_field("nics", &self.nics)?;
        }
        if !self.faults.is_empty() {
            m.serialize_field("faults", &self.faults)?;
        }
        m.end()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CudaDriver {
    pub cuda: Version,
    pub driver: Version,
    pub source: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct RocmRelease {
    pub rocm: Version,
    pub gpus: Vec<String>,
    pub os: Vec<String>,
    pub source: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    pub vendor: Vendor,
    pub model: String,
    pub aliases: Vec<String>,
    pub mig: bool,
    pub max_mig_instances: u32,
    pub nvswitch: Option<bool>,
    pub pcie_gen: Option<PcieGen>,
    pub pcie_width: Option<LinkWidth>,
    pub source: String,
}

/// A NIC model and the PCI device ids it is sold under: verify tells the
/// model's interfaces from other NICs of the same link layer by them, and
/// the image's udev rules match them.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NicModel {
    pub model: String,
    #[serde(serialize_with = "hex_ids")]
    pub device_ids: Vec<u16>,
    pub source: String,
}

/// PCI ids as the matrix file writes them (`0x1021`).
fn hex_ids<S: serde::Serializer>(ids: &[u16], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(ids.iter().map(|id| format!("0x{id:04x}")))
}

/// How NIC models are compared: without case, spaces or punctuation
/// (`ConnectX-7`, `connectx7` and `Connect X 7` are one model).
fn nic_key(model: &str) -> String {
    model
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RuleSeverity {
    Error,
    Warning,
}

/// When every `when` constraint holds, every `require` constraint must.
#[derive(Debug, Clone, Serialize)]
pub struct Rule {
    pub id: String,
    pub when: BTreeMap<Component, Want>,
    pub require: BTreeMap<Component, Want>,
    pub severity: RuleSeverity,
    pub message: String,
    pub source: String,
}

/// The newest release of a component the matrix knows; a blueprint that
/// pins a later one gets a warning, since no rule has been checked for it.
#[derive(Debug, Clone, Serialize)]
pub struct Newest {
    pub component: Component,
    pub version: Version,
    pub source: String,
}

/// The things rules talk about. Versions are compared as versions; the
/// last three are names compared literally.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum Component {
    Kubernetes,
    Containerd,
    NvidiaDriver,
    Cuda,
    Rocm,
    Kernel,
    NvidiaContainerToolkit,
    NvidiaDevicePlugin,
    NvidiaDraDriver,
    GpuOperator,
    AmdGpuOperator,
    Cgroup,
    DeviceInjection,
    CdiGenerator,
}

impl Component {
    pub fn is_name(self) -> bool {
        matches!(
            self,
            Component::Cgroup | Component::DeviceInjection | Component::CdiGenerator
        )
    }

    /// How messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Component::Kubernetes => "Kubernetes",
            Component::Containerd => "containerd",
            Component::NvidiaDriver => "the NVIDIA driver",
            Component::Cuda => "CUDA",
            Component::Rocm => "ROCm",
            Component::Kernel => "the kernel",
            Component::NvidiaContainerToolkit => "the NVIDIA container toolkit",
            Component::NvidiaDevicePlugin => "the NVIDIA device plugin",
            Component::NvidiaDraDriver => "the NVIDIA DRA driver",
            Component::GpuOperator => "the GPU Operator",
            Component::AmdGpuOperator => "the AMD GPU Operator",
            Component::Cgroup => "the cgroup mode",
            Component::DeviceInjection => "device injection",
            Component::CdiGenerator => "the CDI generator",
        }
    }
}

/// What a rule asks of a component: a version constraint, or a name.
#[derive(Debug, Clone)]
pub enum Want {
    Version(VersionReq),
    Name(String),
}

impl Want {
    fn parse(component: Component, text: &str) -> Result<Self, String> {
        if component.is_name() {
            Ok(Want::Name(text.to_string()))
        } else {
            text.parse()
                .map(Want::Version)
                .map_err(|e| format!("`{text}` is not a version constraint: {e}"))
        }
    }
}

/// As written in a matrix file: the constraint or the name.
impl Serialize for Want {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl std::fmt::Display for Want {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Want::Version(v) => v.fmt(f),
            Want::Name(n) => f.write_str(n),
        }
    }
}

/// A component's value in one blueprint.
#[derive(Debug, Clone)]
pub enum Have {
    Version(VersionReq),
    Name(String),
}

impl Have {
    /// Whether the blueprint's value meets `want`: an exact version that
    /// matches, a range that lies wholly inside it (every version the range
    /// admits must do), or the same name.
    pub fn satisfies(&self, want: &Want) -> bool {
        match (self, want) {
            (Have::Name(n), Want::Name(w)) => n == w,
            (Have::Version(have), Want::Version(w)) => match have.exact() {
                Some(v) => w.matches(v),
                None => have.is_within(w),
            },
            _ => false,
        }
    }

    /// Whether `want` may hold: for a range, whether some version it admits
    /// matches (rules apply when their `when` may hold).
    pub fn may_satisfy(&self, want: &Want) -> bool {
        match (self, want) {
            (Have::Version(have), Want::Version(w)) if have.exact().is_none() => have.overlaps(w),
            _ => self.satisfies(want),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Have::Name(n) => n.clone(),
            Have::Version(v) => match v.exact() {
                Some(exact) => exact.to_string(),
                None => v.to_string(),
            },
        }
    }
}

/// Where a matrix could not be read.
#[derive(Debug, Clone)]
pub struct MatrixError {
    pub file: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for MatrixError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let (Some(l), Some(c)) = (self.line, self.column) {
            write!(f, ":{l}:{c}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for MatrixError {}

// ---- the file format ----

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
    /// The matrix shipped with nodeimg.
    pub fn builtin() -> Self {
        Self::builtin_ref().clone()
    }

    /// A matrix of exactly these entries (those a blueprint was validated
    /// with; see `identity`).
    pub fn of(
        cuda_minimum_driver: Vec<CudaDriver>,
        rocm: Vec<RocmRelease>,
        models: Vec<Model>,
        rules: Vec<Rule>,
        nics: Vec<NicModel>,
        faults: Vec<Override>,
    ) -> Self {
        Self {
            cuda_minimum_driver,
            rocm,
            models,
            rules,
            newest: Vec::new(),
            nics,
            faults,
        }
    }

    /// The fault-catalog overrides, found by catalog and code.
    pub fn fault_overrides(&self) -> Overrides {
        Overrides::new(self.faults.iter().cloned())
    }

    /// The shipped matrix, parsed once per process.
    pub fn builtin_ref() -> &'static Self {
        static MATRIX: std::sync::OnceLock<Matrix> = std::sync::OnceLock::new();
        MATRIX.get_or_init(|| {
            let mut m = Matrix::default();
            m.extend_from_text(BUILTIN, "compat-matrix.yaml (built in)")
                .expect("the built-in matrix parses");
            m
        })
    }

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
        let bytes = crate::input::read(path, super::source::MAX_BYTES as u64)
            .map_err(|e| err(format!("cannot read: {e}")))?;
        let text = super::source::decode(&bytes).map_err(|e| MatrixError {
            file: file.clone(),
            line: e.pos.map(|p| p.line),
            column: e.pos.map(|p| p.column),
            message: e.message,
        })?;
        self.extend_from_text(text, &file)
    }

    /// Parses matrix text with the blueprint loader (bounded size, depth and
    /// aliases; positions kept) and lays it over `self`.
    fn extend_from_text(&mut self, text: &str, file: &str) -> Result<(), MatrixError> {
        let located =
            |path: Option<&YamlPath>, pos: Option<super::source::Pos>, message: String| {
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
        let doc =
            super::source::parse(text).map_err(|e| located(Some(&e.path), e.pos, e.message))?;
        let raw: MatrixFile = serde_path_to_error::deserialize(&doc.value).map_err(|e| {
            let path = super::yaml_path_of(e.path());
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

    /// A NIC model by name, compared without case, spaces or punctuation.
    pub fn nic(&self, model: &str) -> Option<&NicModel> {
        let key = nic_key(model);
        self.nics.iter().find(|n| nic_key(&n.model) == key)
    }

    /// The PCI device ids of a NIC model the matrix knows.
    pub fn nic_device_ids(&self, model: &str) -> Option<&[u16]> {
        self.nic(model).map(|n| n.device_ids.as_slice())
    }

    /// The row for a CUDA release: the most specific row whose version is a
    /// prefix of `cuda` (`12.4.1` uses a `12.4.1` row, else the `12.4` row).
    pub fn cuda_driver(&self, cuda: &Version) -> Option<&CudaDriver> {
        self.cuda_minimum_driver
            .iter()
            .filter(|r| cuda.starts_with(&r.cuda))
            .max_by_key(|r| r.cuda.numbers().len())
    }

    /// A model by its canonical name or an alias, ignoring case.
    pub fn model(&self, vendor: Vendor, name: &str) -> Option<&Model> {
        self.models.iter().find(|m| {
            m.vendor == vendor
                && (m.model.eq_ignore_ascii_case(name)
                    || m.aliases.iter().any(|a| a.eq_ignore_ascii_case(name)))
        })
    }

    /// The matrix's own spelling of `name` (the canonical name or the
    /// alias it matches, ignoring case).
    pub fn spelling(&self, vendor: Vendor, name: &str) -> Option<&str> {
        let m = self.model(vendor, name)?;
        if m.model.eq_ignore_ascii_case(name) {
            return Some(&m.model);
        }
        m.aliases
            .iter()
            .find(|a| a.eq_ignore_ascii_case(name))
            .map(String::as_str)
    }

    pub fn model_names(&self, vendor: Vendor) -> Vec<&str> {
        self.models
            .iter()
            .filter(|m| m.vendor == vendor)
            .map(|m| m.model.as_str())
            .collect()
    }

    pub fn rocm_release(&self, rocm: &Version) -> Option<&RocmRelease> {
        self.rocm
            .iter()
            .filter(|r| rocm.starts_with(&r.rocm))
            .max_by_key(|r| r.rocm.numbers().len())
    }

    pub fn newest(&self, c: Component) -> Option<&Newest> {
        self.newest.iter().find(|n| n.component == c)
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
    fn builtin_parses_and_answers() {
        let m = Matrix::builtin();
        let row = m.cuda_driver(&"12.4.1".parse().unwrap()).unwrap();
        assert!(row.cuda.starts_with(&"12.4".parse().unwrap()));
        assert!(
            m.model(Vendor::Nvidia, "NVIDIA H100 80GB HBM3")
                .unwrap()
                .mig
        );
        assert_eq!(m.spelling(Vendor::Nvidia, "l40s"), Some("L40S"));
        assert!(m.rules.iter().any(|r| r.id == "kubernetes-cgroup-v2"));
        assert!(m.newest(Component::Kubernetes).is_some());
    }

    fn want(s: &str) -> Want {
        Want::Version(s.parse().unwrap())
    }

    #[test]
    fn have_satisfies() {
        let exact = Have::Version("550.127.05".parse().unwrap());
        assert!(exact.satisfies(&want(">=550.54.14")));
        assert!(!exact.satisfies(&want(">=580")));
        let range = Have::Version(">=550, <560".parse().unwrap());
        assert!(range.satisfies(&want(">=525")));
        assert!(!range.satisfies(&want(">=580")));
        // A range that also admits drivers below the minimum does not meet it.
        assert!(!range.satisfies(&want(">=550.54.14")));
        assert!(range.may_satisfy(&want(">=550.54.14")));
        assert!(Have::Name("v2".into()).satisfies(&Want::Name("v2".into())));
    }

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
