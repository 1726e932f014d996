//! The compatibility matrix: which versions of driver, CUDA/ROCm, kernel,
//! container toolkit, containerd, device plugin/DRA and Kubernetes work
//! together, what each GPU model can do (MIG, NVSwitch, PCIe link), and the
//! PCI device ids of each NIC model.
//!
//! The data ships in `compat-matrix.yaml` beside this folder, every entry with
//! its source. `--matrix FILE` extends it: an entry whose key (CUDA release,
//! ROCm release, model name, NIC model, rule id) is new is added; one whose key exists
//! is merged into it (lists such as a ROCm release's GPUs and OSes are
//! joined, settings it gives replace the built-in ones); an entry with
//! `replace: true` replaces the built-in one whole. Keeping it as data means
//! a fleet team can pin what they have qualified without a new release of
//! the tool. The file format is documented in the README and published by
//! `nodeimg schema --matrix`.
//!
//! This file holds the matrix as nodeimg uses it and the questions the rules ask of it;
//! `file.rs` reads the file format and lays a file over a matrix.

mod file;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::model::Vendor;
use super::value::{LinkWidth, PcieGen, Version, VersionReq};
use crate::fault::overrides::{Override, Overrides};

const BUILTIN: &str = include_str!("../compat-matrix.yaml");

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
}
