//! `cdi`: the CDI generator unit and udev refresh rule, or the static AMD
//! spec (`etc/cdi/amd.com-gpu.yaml`).

use crate::blueprint::Spec;
use serde::Serialize;

use crate::blueprint::model::*;
use crate::verify::checks::container_devices;

#[derive(Debug, Clone, Serialize)]
pub struct Cdi {
    pub enabled: bool,
    /// Specs are generated on the node (nvidia-ctk or amd-ctk).
    pub generate: bool,
    pub vendor: Option<&'static str>,
    pub ctk: Option<&'static str>,
    pub output: Option<String>,
    pub on_boot: bool,
    pub on_driver_change: bool,
    pub keep_previous: bool,
    /// The management spec (`management.nvidia.com/gpu`), written beside
    /// the GPU spec when the GPU Operator runs with CDI but without its
    /// toolkit DaemonSet. The operator expects that DaemonSet to write the
    /// spec its own operands (validator, device plugin) are given:
    /// without it they fail with "unresolvable CDI devices
    /// management.nvidia.com/gpu=all" (NVIDIA/gpu-operator#531).
    pub management_output: Option<String>,
    /// amd-ctk only: it writes its spec in place (`os.Create`, then the
    /// JSON), so a runtime reading the directory meanwhile could load half
    /// a spec. It writes into this folder inside the spec directory (CDI
    /// does not read subfolders: container-device-interface
    /// `scanSpecDirs`), and the unit renames the file into place.
    pub scratch: Option<String>,
    /// amd-ctk's `--output` argument: a file name from AMD Container
    /// Toolkit 1.3.0 (custom spec file names); before it, the folder the
    /// tool writes `amd.json` into (1.0–1.2 join it with or without a
    /// separator, so the folder is given with its trailing `/`).
    pub ctk_output: Option<String>,
    /// The spec amd-ctk wrote in [`Cdi::scratch`], renamed to [`Cdi::output`].
    pub scratch_spec: Option<String>,
    /// A static spec is written into the layer (AMD).
    #[serde(rename = "static")]
    pub is_static: bool,
    pub static_file: Option<String>,
    pub static_devices: Vec<StaticDevice>,
    /// The kernel module whose (re)load refreshes the specs.
    pub module: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct StaticDevice {
    pub name: String,
    pub render: String,
}

pub(super) fn of(s: &Spec) -> Cdi {
    let c = &s.runtime.cdi;
    let generator = match c.generator {
        CdiGenerator::NvidiaCtk => Some(("nvidia", "/usr/bin/nvidia-ctk")),
        CdiGenerator::AmdCtk => Some(("amd", "/usr/bin/amd-ctk")),
        CdiGenerator::Operator | CdiGenerator::None | CdiGenerator::Static => None,
    };
    let static_dir = c
        .spec_dirs
        .iter()
        .find(|d| d.as_str() == "/etc/cdi")
        .or(c.spec_dirs.first());
    let count = s.accelerators.as_ref().map_or(0, |a| a.count);
    let dir = c
        .spec_dirs
        .iter()
        .find(|d| d.as_str() == "/var/run/cdi")
        .or(c.spec_dirs.first());
    // verify's runtime.cdi.management-spec judges the same condition.
    let management_output = container_devices::needs_management_spec(s)
        .then(|| dir.map(|d| format!("{}/management.nvidia.com-gpu.yaml", d.as_str())))
        .flatten();
    // amd-ctk names its spec amd.json (JSON; CDI reads .json and .yaml).
    let output = dir.map(|d| match c.generator {
        CdiGenerator::AmdCtk => format!("{}/amd.json", d.as_str()),
        _ => format!("{}/{}.yaml", d.as_str(), generator.map_or("gpu", |g| g.0)),
    });
    let scratch = (c.generator == CdiGenerator::AmdCtk)
        .then(|| dir.map(|d| format!("{}/.nodeimg-amd-ctk", d.as_str())))
        .flatten();
    let names_its_file = s
        .accelerators
        .as_ref()
        .and_then(|a| a.container_toolkit.as_ref())
        .is_some_and(|v| v.numbers() >= vec![1, 3]);
    let ctk_output = match (&scratch, c.generator) {
        (Some(scratch), CdiGenerator::AmdCtk) if names_its_file => {
            Some(format!("{scratch}/amd.json"))
        }
        (Some(scratch), CdiGenerator::AmdCtk) => Some(format!("{scratch}/")),
        _ => output.clone(),
    };
    Cdi {
        enabled: c.enabled,
        generate: c.enabled && generator.is_some(),
        vendor: generator.map(|g| g.0),
        ctk: generator.map(|g| g.1),
        output,
        scratch_spec: scratch.as_ref().map(|d| format!("{d}/amd.json")),
        scratch,
        ctk_output,
        on_boot: c.refresh_on.contains(&CdiRefresh::Boot),
        on_driver_change: c.refresh_on.contains(&CdiRefresh::DriverChange),
        keep_previous: c.rollback == CdiRollback::KeepPrevious,
        management_output,
        is_static: c.enabled && c.generator == CdiGenerator::Static,
        static_file: static_dir.map(|d| format!("{}/amd.com-gpu.yaml", d.in_layer())),
        static_devices: (0..count)
            .map(|i| StaticDevice {
                name: i.to_string(),
                render: format!("/dev/dri/renderD{}", 128 + i),
            })
            .collect(),
        module: match s.accelerators.as_ref().map(|a| a.vendor) {
            Some(Vendor::Nvidia) => "nvidia",
            Some(Vendor::Amd) => "amdgpu",
            None => "",
        },
    }
}
