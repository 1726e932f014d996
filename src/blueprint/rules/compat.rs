//! Checks the blueprint against the compatibility matrix: minimum driver for
//! the CUDA release, ROCm support for the GPU and OS, what the GPU model can
//! do (MIG, NVSwitch, PCIe link), and the matrix's generic version rules.

use std::collections::BTreeMap;

use super::p;
use crate::blueprint::compat::{Component, CudaDriver, Have, Matrix, Rule, RuleSeverity};
use crate::blueprint::diagnostic::{Collector, suggest};
use crate::blueprint::model::*;
use crate::blueprint::value::{Version, VersionReq};
use crate::blueprint::yaml_path::YamlPath;

pub fn check(bp: &RawBlueprint, m: &Matrix, out: &mut Collector<'_>) {
    if let Some(acc) = &bp.accelerators {
        models(acc, m, out);
        toolkits(bp, acc, m, out);
    }
    rules(bp, m, out);
}

fn models(acc: &Accelerators, m: &Matrix, out: &mut Collector<'_>) {
    if acc.count == 0 {
        out.error(
            "gpu-count",
            &p("accelerators.count"),
            "declare at least one GPU, or drop the accelerators section",
        );
    }
    let vendor = acc.vendor;
    let Some(model) = m.model(vendor, &acc.model) else {
        let names = m.model_names(vendor);
        let d = out.warning(
            "unknown-model",
            &p("accelerators.model"),
            format!(
                "`{}` is not in the compatibility matrix; MIG, NVSwitch and PCIe expectations cannot be checked",
                acc.model
            ),
        );
        d.hint = Some(match suggest(&acc.model, names.iter().copied()) {
            Some(s) => format!("did you mean `{s}`? (or extend the matrix with --matrix)"),
            None => format!(
                "known {} models: {} (extend the matrix with --matrix)",
                vendor.as_str(),
                names.join(", ")
            ),
        });
        return;
    };
    if acc.sharing.mode() == SharingMode::Mig && !model.mig {
        out.error(
            "mig-capable",
            &p("accelerators.sharing.mode"),
            format!("{} does not support MIG", model.model),
        )
        .hint = Some(format!("source: {}", model.source));
    }
    if acc.interconnect.nvswitch && model.nvswitch == Some(false) {
        out.error(
            "nvswitch",
            &p("accelerators.interconnect.nvswitch"),
            format!("{} is not built on an NVSwitch baseboard", model.model),
        );
    }
    let have = acc.pcie.generation;
    if let Some(gen_) = model.pcie_gen {
        if have > gen_ {
            out.error(
                "pcie-link",
                &p("accelerators.pcie.generation"),
                format!(
                    "{} links at PCIe Gen{gen_} at most; Gen{have} can never be reached",
                    model.model
                ),
            );
        } else if have < gen_ {
            out.warning(
                "pcie-link",
                &p("accelerators.pcie.generation"),
                format!(
                    "{} is a PCIe Gen{gen_} part; expecting Gen{have} accepts a downgraded link",
                    model.model
                ),
            );
        }
    }
    if let Some(w) = model.pcie_width
        && acc.pcie.width != w
    {
        out.warning(
            "pcie-link",
            &p("accelerators.pcie.width"),
            format!(
                "{} is designed for x{w}; expecting x{}",
                model.model, acc.pcie.width
            ),
        );
    }
}

fn toolkits(bp: &RawBlueprint, acc: &Accelerators, m: &Matrix, out: &mut Collector<'_>) {
    if let Some(cuda) = acc.cuda.as_ref().filter(|_| acc.vendor == Vendor::Nvidia) {
        match m.cuda_driver(cuda) {
            None => {
                out.warning(
                    "unknown-cuda",
                    &p("accelerators.cuda"),
                    format!("CUDA {cuda} is not in the compatibility matrix; its minimum driver cannot be checked"),
                );
            }
            Some(row) => cuda_driver(acc, cuda, row, out),
        }
    }
    if let Some(rocm) = acc.rocm.as_ref().filter(|_| acc.vendor == Vendor::Amd) {
        match m.rocm_release(rocm) {
            None => {
                out.warning(
                    "unknown-rocm",
                    &p("accelerators.rocm"),
                    format!("ROCm {rocm} is not in the compatibility matrix"),
                );
            }
            Some(rel) => {
                if !rel.gpus.is_empty()
                    && !rel.gpus.iter().any(|g| g.eq_ignore_ascii_case(&acc.model))
                {
                    out.error(
                        "rocm-gpu",
                        &p("accelerators.model"),
                        format!(
                            "ROCm {} does not list {} ({})",
                            rel.rocm,
                            acc.model,
                            rel.gpus.join(", ")
                        ),
                    )
                    .hint = Some(format!(
                        "source: {}; a site matrix (--matrix) can add GPUs to the release",
                        rel.source
                    ));
                }
                let os = format!("{} {}", bp.os.distro.as_str(), bp.os.version);
                if !rel.os.is_empty() && !rel.os.iter().any(|o| o.eq_ignore_ascii_case(&os)) {
                    out.warning(
                        "rocm-os",
                        &p("os.version"),
                        format!("ROCm {} does not list {os} as supported", rel.rocm),
                    )
                    .hint = Some(format!(
                        "supported: {}; source: {}",
                        rel.os.join(", "),
                        rel.source
                    ));
                }
            }
        }
    }
}

/// The driver must be at least the CUDA release's minimum. An exact pin is
/// compared; a constraint (an operator-installed driver) must admit no
/// driver below the minimum, since the operator may install any it admits.
fn cuda_driver(acc: &Accelerators, cuda: &Version, row: &CudaDriver, out: &mut Collector<'_>) {
    let driver = &acc.driver.version;
    let need = VersionReq::at_least(&row.driver);
    let (ok, message) = match driver.exact() {
        Some(v) => (
            need.matches(v),
            format!(
                "CUDA {cuda} needs driver {} or later; the driver is {v}",
                row.driver
            ),
        ),
        None => (
            driver.is_within(&need),
            format!(
                "CUDA {cuda} needs driver {} or later; the constraint `{driver}` also admits older drivers",
                row.driver
            ),
        ),
    };
    if ok {
        return;
    }
    let d = out.error("cuda-driver", &p("accelerators.driver.version"), message);
    let partial = driver
        .exact()
        .filter(|v| v.numbers().len() == 1)
        .map(|v| {
            format!(
                "`{v}` means exactly {v}, not the {v} branch: write a full version (e.g. {}.xx.yy) or, for an operator-installed driver, a constraint such as `>={}, <{}`; ",
                v,
                row.driver.clone().max(v.clone()),
                v.major() + 1
            )
        });
    d.hint = Some(format!(
        "{}source: {}",
        partial.unwrap_or_default(),
        row.source
    ));
}

/// Every component the matrix rules can name, with where it is set.
fn components(bp: &RawBlueprint) -> BTreeMap<Component, (Have, YamlPath)> {
    let mut c = BTreeMap::new();
    let exact = |v: &Version| Have::Version(VersionReq::exactly(v));
    c.insert(
        Component::Kubernetes,
        (exact(&bp.kubernetes.version), p("kubernetes.version")),
    );
    c.insert(
        Component::Containerd,
        (
            exact(&bp.runtime.containerd.version),
            p("runtime.containerd.version"),
        ),
    );
    c.insert(Component::Kernel, (exact(&bp.os.kernel), p("os.kernel")));
    let cgroup = match bp.os.cgroup {
        CgroupMode::V1 => "v1",
        CgroupMode::V2 => "v2",
    };
    c.insert(
        Component::Cgroup,
        (Have::Name(cgroup.into()), p("os.cgroup")),
    );
    let inj = &bp.kubernetes.device_injection;
    let mode = match inj.mode {
        InjectionMode::None => "none",
        InjectionMode::DevicePlugin => "device-plugin",
        InjectionMode::Dra => "dra",
    };
    c.insert(
        Component::DeviceInjection,
        (
            Have::Name(mode.into()),
            p("kubernetes.deviceInjection.mode"),
        ),
    );
    let generator = match bp.runtime.cdi.generator {
        CdiGenerator::NvidiaCtk => "nvidia-ctk",
        CdiGenerator::AmdCtk => "amd-ctk",
        CdiGenerator::Operator => "operator",
        CdiGenerator::Static => "static",
        CdiGenerator::None => "none",
    };
    c.insert(
        Component::CdiGenerator,
        (Have::Name(generator.into()), p("runtime.cdi.generator")),
    );
    if let Some(acc) = &bp.accelerators {
        let nvidia = acc.vendor == Vendor::Nvidia;
        if nvidia {
            c.insert(
                Component::NvidiaDriver,
                (
                    Have::Version(acc.driver.version.clone()),
                    p("accelerators.driver.version"),
                ),
            );
            if let Some(v) = &acc.container_toolkit {
                c.insert(
                    Component::NvidiaContainerToolkit,
                    (exact(v), p("accelerators.containerToolkit")),
                );
            }
            if let Some(v) = &inj.version {
                let comp = match inj.mode {
                    InjectionMode::Dra => Some(Component::NvidiaDraDriver),
                    InjectionMode::DevicePlugin => Some(Component::NvidiaDevicePlugin),
                    InjectionMode::None => None,
                };
                if let Some(comp) = comp {
                    c.insert(comp, (exact(v), p("kubernetes.deviceInjection.version")));
                }
            }
        }
        if let Some(v) = &acc.cuda {
            c.insert(Component::Cuda, (exact(v), p("accelerators.cuda")));
        }
        if let Some(v) = &acc.rocm {
            c.insert(Component::Rocm, (exact(v), p("accelerators.rocm")));
        }
        if let Some(op) = &acc.operator {
            let comp = match op.name {
                OperatorName::GpuOperator => Component::GpuOperator,
                OperatorName::AmdGpuOperator => Component::AmdGpuOperator,
            };
            c.insert(
                comp,
                (exact(&op.version), p("accelerators.operator.version")),
            );
        }
    }
    c
}

/// Whether `rule`'s `when` holds for the components `have`.
fn applies(rule: &Rule, have: &BTreeMap<Component, (Have, YamlPath)>) -> bool {
    rule.when
        .iter()
        .all(|(comp, want)| have.get(comp).is_some_and(|(h, _)| h.may_satisfy(want)))
}

/// The rules validation applies to `bp` (their `when` holds); the image
/// records them with the lock.
pub(crate) fn applicable<'m>(bp: &RawBlueprint, m: &'m Matrix) -> Vec<&'m Rule> {
    let have = components(bp);
    m.rules.iter().filter(|r| applies(r, &have)).collect()
}

fn rules(bp: &RawBlueprint, m: &Matrix, out: &mut Collector<'_>) {
    let have = components(bp);
    for rule in &m.rules {
        if !applies(rule, &have) {
            continue;
        }
        for (comp, want) in &rule.require {
            let Some((h, path)) = have.get(comp) else {
                continue;
            };
            if h.satisfies(want) {
                continue;
            }
            let message = format!(
                "{} is {}, needs {want}: {}",
                comp.name(),
                h.describe(),
                rule.message
            );
            let d = match rule.severity {
                RuleSeverity::Error => out.error(&rule.id, path, message),
                RuleSeverity::Warning => out.warning(&rule.id, path, message),
            };
            d.hint = Some(format!("source: {}", rule.source));
        }
    }
    // A release newer than any the matrix was written for has no rules yet.
    for newest in &m.newest {
        let Some((Have::Version(v), path)) = have.get(&newest.component) else {
            continue;
        };
        let Some(v) = v.exact() else { continue };
        let key = |x: &Version| (x.major(), x.minor());
        if key(v) > key(&newest.version) {
            out.warning(
                "newer-than-matrix",
                path,
                format!(
                    "{} {v} is newer than any release the compatibility matrix knows (up to {}); no rule has been checked for it",
                    newest.component.name(),
                    newest.version
                ),
            )
            .hint = Some(format!(
                "qualify it and extend the matrix with --matrix (newest entry); source: {}",
                newest.source
            ));
        }
    }
}
