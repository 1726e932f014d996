//! Exactly one owner for the GPU driver, and vendor-consistent choices
//! around it: the toolkit (CUDA or ROCm), the default runtime, the CDI
//! generator, the operator, Fabric Manager on NVSwitch systems.
//!
//! Two components that both believe they own the driver is the classic way
//! a GPU node breaks after an upgrade; this is where it is stopped.

use super::p;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::*;

pub fn check(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let rt = &bp.runtime;
    if rt.cdi.enabled && rt.containerd.version < "1.7".parse().expect("literal") {
        out.error(
            "cdi-containerd",
            &p("runtime.cdi.enabled"),
            format!("containerd {} has no CDI support (it arrived in 1.7); disable CDI or upgrade containerd", rt.containerd.version),
        );
    }
    let Some(acc) = &bp.accelerators else {
        if rt.containerd.default_runtime == DefaultRuntime::Nvidia {
            out.error(
                "vendor-mismatch",
                &p("runtime.containerd.defaultRuntime"),
                "the nvidia runtime needs NVIDIA accelerators, and this blueprint declares none",
            );
        }
        if !matches!(rt.cdi.generator, CdiGenerator::None) {
            out.error(
                "vendor-mismatch",
                &p("runtime.cdi.generator"),
                "a CDI generator needs accelerators, and this blueprint declares none",
            );
        }
        if bp.kubernetes.device_injection.mode != InjectionMode::None {
            out.error(
                "vendor-mismatch",
                &p("kubernetes.deviceInjection.mode"),
                "device injection needs accelerators, and this blueprint declares none",
            );
        }
        return;
    };
    let nvidia = acc.vendor == Vendor::Nvidia;
    let manages = |c: OperatorComponent| {
        acc.operator
            .as_ref()
            .is_some_and(|o| o.manages.contains(&c))
    };

    // The single driver authority.
    let op_manages_driver = acc
        .operator
        .as_ref()
        .is_some_and(|o| o.manages.contains(&OperatorComponent::Driver));
    match acc.driver.authority {
        DriverAuthority::Preinstalled => {
            if op_manages_driver {
                out.error(
                    "driver-authority",
                    &p("accelerators.operator.manages"),
                    "the driver is preinstalled in the image, but the operator is also told to manage it; exactly one component may own the driver",
                )
                .hint = Some("remove `driver` from accelerators.operator.manages, or set accelerators.driver.authority: operator".into());
            }
            if acc.driver.version.exact().is_none() {
                out.error(
                    "driver-authority",
                    &p("accelerators.driver.version"),
                    format!(
                        "a preinstalled driver is pinned to one version; `{}` is a range",
                        acc.driver.version
                    ),
                );
            }
        }
        DriverAuthority::Operator => {
            if !op_manages_driver {
                out.error(
                    "driver-authority",
                    &p("accelerators.driver.authority"),
                    "the driver authority is `operator`, but no operator manages the driver; nothing would install it",
                )
                .hint = Some("add accelerators.operator with `driver` in manages".into());
            }
        }
    }

    if let Some(op) = &acc.operator {
        let fits = matches!(
            (op.name, acc.vendor),
            (OperatorName::GpuOperator, Vendor::Nvidia)
                | (OperatorName::AmdGpuOperator, Vendor::Amd)
        );
        if !fits {
            out.error(
                "vendor-mismatch",
                &p("accelerators.operator.name"),
                format!("this operator does not serve {} GPUs", acc.vendor.as_str()),
            );
        }
        let mut seen = std::collections::BTreeSet::new();
        for (i, c) in op.manages.iter().enumerate() {
            if !seen.insert(*c) {
                out.error(
                    "duplicate",
                    &p("accelerators.operator.manages").index(i),
                    "listed twice",
                );
            }
        }
        if op.manages.contains(&OperatorComponent::Toolkit) && acc.container_toolkit.is_some() {
            out.error(
                "toolkit-authority",
                &p("accelerators.containerToolkit"),
                "the container toolkit is pinned in the image and also managed by the operator; choose one",
            );
        }
    }

    // Toolkit per vendor.
    match acc.vendor {
        Vendor::Nvidia => {
            if acc.rocm.is_some() {
                out.error(
                    "vendor-mismatch",
                    &p("accelerators.rocm"),
                    "ROCm applies to AMD GPUs, not NVIDIA",
                );
            }
            if acc.cuda.is_none() {
                out.error_at_key(
                    "missing-field",
                    &p("accelerators"),
                    "NVIDIA accelerators need `cuda` (the CUDA release workloads use)",
                )
                .hint = Some(
                    "e.g. cuda: \"12.8\"; it sets the minimum driver (quote it, or YAML reads 12.10 as 12.1)".into(),
                );
            }
        }
        Vendor::Amd => {
            if acc.cuda.is_some() {
                out.error(
                    "vendor-mismatch",
                    &p("accelerators.cuda"),
                    "CUDA applies to NVIDIA GPUs, not AMD",
                );
            }
            if acc.rocm.is_none() {
                out.error_at_key(
                    "missing-field",
                    &p("accelerators"),
                    "AMD accelerators need `rocm` (the ROCm release)",
                )
                .hint = Some("e.g. rocm: \"6.2.4\" (quoted)".into());
            }
            if rt.containerd.default_runtime == DefaultRuntime::Nvidia {
                out.error(
                    "vendor-mismatch",
                    &p("runtime.containerd.defaultRuntime"),
                    "the nvidia runtime does not serve AMD GPUs; use runc with CDI",
                );
            }
            if acc.driver.kernel_module.is_some() {
                out.error(
                    "vendor-mismatch",
                    &p("accelerators.driver.kernelModule"),
                    "kernelModule (open/proprietary) applies to NVIDIA drivers",
                );
            }
        }
    }

    // CDI generator per vendor and authority.
    let gen_path = p("runtime.cdi.generator");
    match rt.cdi.generator {
        CdiGenerator::NvidiaCtk if !nvidia => {
            out.error(
                "vendor-mismatch",
                &gen_path,
                "nvidia-ctk generates specs for NVIDIA GPUs only",
            );
        }
        CdiGenerator::AmdCtk if nvidia => {
            out.error(
                "vendor-mismatch",
                &gen_path,
                "amd-ctk generates specs for AMD GPUs only",
            );
        }
        CdiGenerator::Static if nvidia => {
            out.error(
                "cdi-generator",
                &gen_path,
                "a static CDI spec cannot describe NVIDIA GPUs (it depends on the installed driver's files); use nvidia-ctk",
            );
        }
        CdiGenerator::Operator if acc.operator.is_none() => {
            out.error(
                "cdi-generator",
                &gen_path,
                "CDI specs are to come from the operator, but no operator is declared",
            );
        }
        CdiGenerator::Operator if nvidia && !manages(OperatorComponent::Toolkit) => {
            // The GPU Operator writes CDI specs from its toolkit container.
            out.error(
                "cdi-generator",
                &gen_path,
                "CDI specs are to come from the operator, but it does not manage the toolkit, which writes them; nothing would generate them",
            )
            .hint = Some(
                "add `toolkit` to accelerators.operator.manages, or set runtime.cdi.generator: nvidia-ctk".into(),
            );
        }
        CdiGenerator::None if rt.cdi.enabled => {
            let how = if out.written(&p("runtime.cdi.enabled")) {
                "CDI is enabled"
            } else {
                "CDI is enabled (runtime.cdi.enabled defaults to true)"
            };
            out.error(
                "cdi-generator",
                &gen_path,
                format!("{how} for GPUs, but nothing generates the specs"),
            )
            .hint = Some(format!(
                "set runtime.cdi.generator: {} (or operator, when the GPU operator's toolkit writes them)",
                if nvidia { "nvidia-ctk" } else { "amd-ctk" }
            ));
        }
        _ => {}
    }
    if rt.cdi.generator == CdiGenerator::NvidiaCtk && acc.container_toolkit.is_none() {
        let owned = acc
            .operator
            .as_ref()
            .is_some_and(|o| o.manages.contains(&OperatorComponent::Toolkit));
        if !owned {
            out.error(
                "cdi-generator",
                &p("accelerators.containerToolkit"),
                "nvidia-ctk generates the CDI specs, so the image needs the NVIDIA container toolkit; pin its version",
            );
        }
    }

    // NVIDIA containers need the container toolkit from somewhere.
    if nvidia
        && acc.container_toolkit.is_none()
        && !manages(OperatorComponent::Toolkit)
        && rt.cdi.generator != CdiGenerator::NvidiaCtk
    {
        out.error(
            "toolkit-authority",
            &p("accelerators.containerToolkit"),
            "nothing provides the NVIDIA container toolkit: it is not pinned in the image and no operator manages it",
        )
        .hint = Some(
            "pin accelerators.containerToolkit (e.g. \"1.17.8\"), or add `toolkit` to accelerators.operator.manages".into(),
        );
    }

    // Device injection needs something to run it.
    let inj = &bp.kubernetes.device_injection;
    if inj.mode == InjectionMode::None {
        let plugin_by_operator = manages(OperatorComponent::DevicePlugin);
        out.error(
            "device-injection",
            &p("kubernetes.deviceInjection.mode"),
            "accelerators are declared, but no device plugin or DRA driver hands them to pods",
        )
        .hint = Some(if plugin_by_operator {
            "the operator deploys the device plugin (manages: device-plugin); say so: kubernetes.deviceInjection: {mode: device-plugin}".into()
        } else {
            "e.g. kubernetes.deviceInjection: {mode: device-plugin, version: \"0.17.2\"} (or mode: dra)".into()
        });
    }
    if inj.mode == InjectionMode::DevicePlugin
        && manages(OperatorComponent::Driver)
        && !manages(OperatorComponent::DevicePlugin)
    {
        // The operator's values then switch its device plugin off.
        out.error(
            "device-injection",
            &p("accelerators.operator.manages"),
            "device injection is by device plugin, and the operator manages the driver but not the device plugin, so its values turn the device plugin off and nothing deploys one",
        )
        .hint = Some("add `device-plugin` to accelerators.operator.manages".into());
    }
    if inj.mode == InjectionMode::Dra && !rt.cdi.enabled {
        out.error(
            "device-injection",
            &p("runtime.cdi.enabled"),
            "DRA drivers inject devices through CDI; enable CDI",
        );
    }

    // Sharing: which settings go with which mode is the type's business;
    // what is left is which vendor offers the mode.
    match acc.sharing.mode() {
        SharingMode::Mig if !nvidia => {
            out.error(
                "sharing",
                &p("accelerators.sharing.mode"),
                "MIG is an NVIDIA feature",
            );
        }
        SharingMode::Mps if !nvidia => {
            out.error(
                "sharing",
                &p("accelerators.sharing.mode"),
                "MPS is an NVIDIA feature",
            );
        }
        SharingMode::TimeSlicing if !nvidia => {
            out.error(
                "sharing",
                &p("accelerators.sharing.mode"),
                "time-slicing is rendered into the NVIDIA device plugin's sharing configuration; \
                 the AMD device plugin offers none",
            );
        }
        _ => {}
    }
    // A sharing mode nothing renders for is a setting without effect: the
    // device plugin's sharing configuration (and the MIG manager's label)
    // live in the GPU operator's values, so the operator must deploy them.
    if nvidia && acc.sharing.mode() != SharingMode::None {
        let mig = acc.sharing.mode() == SharingMode::Mig;
        let needed: &[(OperatorComponent, &str)] = if mig {
            &[
                (OperatorComponent::DevicePlugin, "device-plugin"),
                (OperatorComponent::MigManager, "mig-manager"),
            ]
        } else {
            &[(OperatorComponent::DevicePlugin, "device-plugin")]
        };
        let missing: Vec<&str> = needed
            .iter()
            .filter(|(c, _)| !manages(*c))
            .map(|(_, n)| *n)
            .collect();
        if !missing.is_empty() {
            let what = if mig {
                "the MIG manager partitions the GPUs by the node's nvidia.com/mig.config label and \
                 the device plugin advertises the partitions"
            } else {
                "the device plugin reads the rendered sharing configuration"
            };
            out.error(
                "sharing",
                &p("accelerators.sharing.mode"),
                format!(
                    "sharing mode `{}` is applied by the GPU operator ({what}), and it does not deploy {}",
                    acc.sharing.mode().as_str(),
                    missing.join(" or ")
                ),
            )
            .hint = Some(format!(
                "add {} to accelerators.operator.manages",
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ));
        }
    }

    // Fabric Manager on NVSwitch systems, at the driver's version.
    let ic = &acc.interconnect;
    if ic.nvswitch {
        if !nvidia {
            out.error(
                "fabric-manager",
                &p("accelerators.interconnect.nvswitch"),
                "NVSwitch is an NVIDIA baseboard part",
            );
        }
        match &ic.fabric_manager {
            None => {
                out.error(
                    "fabric-manager",
                    &p("accelerators.interconnect"),
                    "NVSwitch systems need Fabric Manager; without it CUDA fails to initialise on every GPU",
                )
                .hint = Some("add fabricManager: {version: <the driver version>}".into());
            }
            Some(fm) => {
                if let Some(driver) = acc.driver.version.exact() {
                    if fm.version != *driver {
                        out.error(
                            "fabric-manager",
                            &p("accelerators.interconnect.fabricManager.version"),
                            format!(
                                "Fabric Manager {} must equal the driver version {driver}",
                                fm.version
                            ),
                        );
                    }
                } else if !acc.driver.version.matches(&fm.version) {
                    out.error(
                        "fabric-manager",
                        &p("accelerators.interconnect.fabricManager.version"),
                        format!(
                            "Fabric Manager {} is outside the driver constraint {}",
                            fm.version, acc.driver.version
                        ),
                    );
                }
            }
        }
    } else if ic.fabric_manager.is_some() {
        out.warning(
            "fabric-manager",
            &p("accelerators.interconnect.fabricManager"),
            "Fabric Manager is only needed on NVSwitch systems (interconnect.nvswitch: true)",
        );
    }
}
