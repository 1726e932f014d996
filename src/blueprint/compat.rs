//! The compatibility matrix: which versions of driver, CUDA/ROCm, kernel,
//! container toolkit, containerd, device plugin/DRA and Kubernetes work
//! together, and what each GPU model can do (MIG, NVSwitch, PCIe link).
//!
//! The data ships in `compat-matrix.yaml` beside this file, every entry with
//! its source; `--matrix FILE` adds entries or replaces ones with the same
//! key (CUDA release, model name, rule id). Keeping it as data means a fleet
//! team can pin what they have qualified without a new release of the tool.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::value::{Version, VersionReq};

const BUILTIN: &str = include_str!("compat-matrix.yaml");

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Matrix {
    #[serde(default)]
    schema_version: u32,
    #[serde(default)]
    pub cuda_minimum_driver: Vec<CudaDriver>,
    #[serde(default)]
    pub rocm: Vec<RocmRelease>,
    #[serde(default)]
    pub models: Vec<Model>,
    #[serde(default)]
    pub rules: Vec<Rule>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaDriver {
    pub cuda: Version,
    pub driver: Version,
    pub source: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RocmRelease {
    pub rocm: Version,
    #[serde(default)]
    pub gpus: Vec<String>,
    #[serde(default)]
    pub os: Vec<String>,
    pub source: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Model {
    pub vendor: String,
    pub model: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    #[serde(default)]
    pub mig: bool,
    #[serde(default)]
    pub max_mig_instances: u32,
    #[serde(default)]
    pub nvswitch: Option<bool>,
    #[serde(default)]
    pub pcie_gen: Option<u8>,
    #[serde(default)]
    pub pcie_width: Option<u8>,
    pub source: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleSeverity {
    Error,
    Warning,
}

/// When every `when` constraint holds, every `require` constraint must.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub id: String,
    pub when: BTreeMap<Component, String>,
    pub require: BTreeMap<Component, String>,
    pub severity: RuleSeverity,
    pub message: String,
    pub source: String,
}

/// The things rules talk about. Versions are compared as versions; the
/// last three are names compared literally.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
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
}

/// A component's value in one blueprint.
#[derive(Debug, Clone)]
pub enum Have {
    Version(VersionReq),
    Name(String),
}

impl Have {
    /// Whether the blueprint's value satisfies `want` (a constraint, or a
    /// name). A version range satisfies when it overlaps the constraint.
    pub fn satisfies(&self, want: &str) -> bool {
        match self {
            Have::Name(n) => n == want,
            Have::Version(have) => match want.parse::<VersionReq>() {
                Ok(w) => match have.exact() {
                    Some(v) => w.matches(v),
                    None => have.overlaps(&w),
                },
                Err(_) => false,
            },
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

impl Matrix {
    /// The matrix shipped with nodeimg.
    pub fn builtin() -> Self {
        Self::builtin_ref().clone()
    }

    /// The shipped matrix, parsed once per process.
    pub fn builtin_ref() -> &'static Self {
        static MATRIX: std::sync::OnceLock<Matrix> = std::sync::OnceLock::new();
        MATRIX.get_or_init(|| {
            Self::parse(BUILTIN, "compat-matrix.yaml (built in)")
                .expect("the built-in matrix parses")
        })
    }

    pub fn parse(text: &str, file: &str) -> Result<Self, MatrixError> {
        // The blueprint's own bounded reader first: size, depth, aliases counted in nodes
        // and bytes, duplicate keys and tags (serde_yaml alone would expand an alias bomb).
        super::source::decode(text.as_bytes())
            .and_then(super::source::parse)
            .map_err(|e| MatrixError {
                file: file.to_string(),
                line: e.pos.map(|p| p.line),
                column: e.pos.map(|p| p.column),
                message: e.message,
            })?;
        let m: Matrix = serde_yaml::from_str(text).map_err(|e| MatrixError {
            file: file.to_string(),
            line: e.location().map(|l| l.line()),
            column: e.location().map(|l| l.column()),
            message: e.to_string(),
        })?;
        if m.schema_version != 1 {
            return Err(MatrixError {
                file: file.into(),
                line: None,
                column: None,
                message: format!("schemaVersion must be 1, found {}", m.schema_version),
            });
        }
        for rule in &m.rules {
            for (c, want) in rule.when.iter().chain(rule.require.iter()) {
                if !c.is_name() && want.parse::<VersionReq>().is_err() {
                    return Err(MatrixError {
                        file: file.into(),
                        line: None,
                        column: None,
                        message: format!(
                            "rule `{}`: `{want}` is not a version constraint",
                            rule.id
                        ),
                    });
                }
            }
        }
        Ok(m)
    }

    /// Reads a user matrix and lays it over `self`.
    pub fn extend_from_file(&mut self, path: &Path) -> Result<(), MatrixError> {
        let limit = super::source::MAX_BYTES as u64;
        let text = crate::input::read_text(path, limit).map_err(|e| MatrixError {
            file: path.display().to_string(),
            line: None,
            column: None,
            message: format!("cannot read: {e}"),
        })?;
        let extra = Self::parse(&text, &path.display().to_string())?;
        for row in extra.cuda_minimum_driver {
            self.cuda_minimum_driver.retain(|r| r.cuda != row.cuda);
            self.cuda_minimum_driver.push(row);
        }
        for row in extra.rocm {
            self.rocm.retain(|r| r.rocm != row.rocm);
            self.rocm.push(row);
        }
        for row in extra.models {
            self.models
                .retain(|r| !r.model.eq_ignore_ascii_case(&row.model));
            self.models.push(row);
        }
        for row in extra.rules {
            self.rules.retain(|r| r.id != row.id);
            self.rules.push(row);
        }
        Ok(())
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
    pub fn model(&self, vendor: &str, name: &str) -> Option<&Model> {
        self.models.iter().find(|m| {
            m.vendor == vendor
                && (m.model.eq_ignore_ascii_case(name)
                    || m.aliases.iter().any(|a| a.eq_ignore_ascii_case(name)))
        })
    }

    pub fn model_names(&self, vendor: &str) -> Vec<&str> {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_parses_and_answers() {
        let m = Matrix::builtin();
        let row = m.cuda_driver(&"12.4.1".parse().unwrap()).unwrap();
        assert!(row.cuda.starts_with(&"12.4".parse().unwrap()));
        assert!(m.model("nvidia", "NVIDIA H100 80GB HBM3").unwrap().mig);
        assert!(m.rules.iter().any(|r| r.id == "kubernetes-cgroup-v2"));
    }

    #[test]
    fn have_satisfies() {
        let exact = Have::Version("550.127.05".parse().unwrap());
        assert!(exact.satisfies(">=550.54.14"));
        assert!(!exact.satisfies(">=580"));
        let range = Have::Version(">=550, <560".parse().unwrap());
        assert!(range.satisfies(">=525"));
        assert!(!range.satisfies(">=580"));
        assert!(Have::Name("v2".into()).satisfies("v2"));
    }

    #[test]
    fn bad_matrix_is_located() {
        let e = Matrix::parse(
            "schemaVersion: 1\nrules:\n  - id: x\n    bogus: 1\n",
            "m.yaml",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(4));
    }
}
