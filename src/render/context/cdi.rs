//! `cdi`: the CDI generator unit and udev refresh rule, or the static AMD
//! spec (`etc/cdi/amd.com-gpu.yaml`).

use serde::Serialize;

use crate::blueprint::model::*;

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

pub(super) fn of(s: &RawBlueprint) -> Cdi {
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
    let operator_without_toolkit = s.accelerators.as_ref().is_some_and(|a| {
        a.vendor == Vendor::Nvidia
            && a.operator
                .as_ref()
                .is_some_and(|o| !o.manages.contains(&OperatorComponent::Toolkit))
    });
    let management_output =
        (c.enabled && c.generator == CdiGenerator::NvidiaCtk && operator_without_toolkit)
            .then(|| dir.map(|d| format!("{}/management.nvidia.com-gpu.yaml", d.as_str())))
            .flatten();
    Cdi {
        enabled: c.enabled,
        generate: c.enabled && generator.is_some(),
        vendor: generator.map(|g| g.0),
        ctk: generator.map(|g| g.1),
        output: dir.map(|d| format!("{}/{}.yaml", d.as_str(), generator.map_or("gpu", |g| g.0))),
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
