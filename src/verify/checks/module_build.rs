//! The module the kernel runs: each GPU and RDMA module the blueprint implies was built for
//! the running kernel and the loaded one is that file (`os.module.kernel-build`), and, with
//! Secure Boot on, it is signed by a key the kernel trusts (`os.module.signature`).
//!
//! The modules judged: the GPU driver of the blueprint's vendor (`nvidia`, `amdgpu`) when
//! the image carries it (an operator-installed driver lives in the operator's container,
//! not in this kernel's module tree), and for RDMA NIC groups their driver
//! (`mlx5_core`…) and `ib_core`. A kernel update is where this breaks: DKMS or akmods
//! must rebuild the out-of-tree modules for every new kernel, and a failed rebuild leaves
//! no module (or one for the old kernel) while the node boots normally.
//!
//! Trust is the kernel's own verdict: a loaded module tainted `E` had no signature the
//! kernel's keyrings accept. A file with no signature at all fails before it is loaded
//! (with `module.sig_enforce` the kernel would refuse it).

use super::catalog::os::{MODULE_BUILD, MODULE_SIGNATURE};
use super::{Inputs, Observation, Results};
use crate::blueprint;
use crate::blueprint::model::{DriverAuthority, Toggle, Vendor};
use crate::verify::fact::Fact;
use crate::verify::facts::boot_security::SecureBoot;
use crate::verify::facts::module_build::{ModuleBuild, ModuleFile, TAINT_UNSIGNED_MODULE};

/// The modules the blueprint implies, in a stable order.
pub fn required(blueprint: &blueprint::Spec) -> Vec<String> {
    let mut names = Vec::new();
    if let Some(accelerators) = &blueprint.accelerators
        && accelerators.driver.authority != DriverAuthority::Operator
    {
        names.push(
            match accelerators.vendor {
                Vendor::Nvidia => "nvidia",
                Vendor::Amd => "amdgpu",
            }
            .to_owned(),
        );
    }
    let rdma: Vec<_> = blueprint.network.nics.iter().filter(|g| g.rdma).collect();
    for group in &rdma {
        if let Some(driver) = &group.driver {
            let driver = driver.to_string();
            if !names.contains(&driver) {
                names.push(driver);
            }
        }
    }
    if !rdma.is_empty() {
        names.push("ib_core".to_owned());
    }
    names
}

pub fn applies(blueprint: &blueprint::Spec) -> bool {
    !required(blueprint).is_empty()
}

pub fn evaluate(input: &Inputs, out: &mut Results) {
    let names = required(input.blueprint);
    if names.is_empty() {
        return;
    }
    let facts = input.facts;
    let secure_boot_wanted = input
        .blueprint
        .firmware
        .as_ref()
        .and_then(|f| f.bios.secure_boot)
        == Some(Toggle::Enabled);
    // Judged when Secure Boot is on, or unknown while the blueprint wants it.
    let signatures = match &facts.boot_security.secure_boot {
        Fact::Known(SecureBoot::Enabled) => Some(None),
        Fact::Known(_) => None,
        Fact::Unknown { reason } => secure_boot_wanted.then(|| Some(reason.clone())),
    };
    let kernel_taint = match facts.module_builds.kernel_taint.known() {
        Some(taint) if taint & TAINT_UNSIGNED_MODULE != 0 => {
            "; the kernel is tainted E (a module without a trusted signature was loaded)"
        }
        _ => "",
    };
    for name in names {
        let subject = Some(name.clone());
        let build = facts.module_builds.modules.get(&name);
        let evidence = vec![
            format!("modinfo {name}"),
            format!("/sys/module/{name}/srcversion"),
            format!("/sys/module/{name}/taint"),
        ];
        let (built, signed) = match build {
            None => {
                let why = format!("{name} was not read");
                (Observation::unknown(&why), Observation::unknown(why))
            }
            Some(build) => (
                kernel_build(build, &facts.kernel.release, &name),
                signature(build, &name, kernel_taint),
            ),
        };
        out.record(
            &MODULE_BUILD,
            subject.clone(),
            "built for the running kernel (vermagic); the loaded module is the installed file (srcversion)",
            built,
            evidence.clone(),
        );
        match &signatures {
            None => {}
            Some(Some(reason)) => {
                out.record(
                    &MODULE_SIGNATURE,
                    subject,
                    "signed by a key the kernel trusts (Secure Boot on)",
                    Observation::unknown(format!("whether Secure Boot is on: {reason}")),
                    evidence,
                );
            }
            Some(None) => {
                out.record(
                    &MODULE_SIGNATURE,
                    subject,
                    "signed by a key the kernel trusts (Secure Boot on)",
                    signed,
                    evidence,
                );
            }
        }
    }
}

fn kernel_build(build: &ModuleBuild, release: &Fact<String>, name: &str) -> Observation {
    let release = match release {
        Fact::Known(release) => release,
        Fact::Unknown { reason } => return Observation::unknown(reason.clone()),
    };
    let file: &ModuleFile = match &build.file {
        Fact::Unknown { reason } => return Observation::unknown(reason.clone()),
        Fact::Known(None) => {
            return Observation::value(
                format!(
                    "no {name} module for Linux {release}: modprobe has nothing to load (the DKMS/akmods build for this kernel failed or never ran, or the kernel's module package is missing)"
                ),
                false,
            );
        }
        Fact::Known(Some(file)) => file,
    };
    if file.builtin() {
        return Observation::value(format!("built into Linux {release}"), true);
    }
    let Some(built_for) = file.built_for() else {
        return Observation::unknown(format!("{} has no vermagic", file.filename));
    };
    if built_for != release {
        return Observation::value(
            format!(
                "{} was built for {built_for}, the running kernel is {release}",
                file.filename
            ),
            false,
        );
    }
    match &build.loaded {
        Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        Fact::Known(None) => Observation::value(
            format!("{} built for {release}; not loaded", file.filename),
            true,
        ),
        Fact::Known(Some(loaded)) => match (&loaded.srcversion, &file.srcversion) {
            (Some(running), Some(installed)) if running != installed => Observation::value(
                format!(
                    "the loaded {name} (srcversion {running}) is not {} (srcversion {installed}): another build is in memory; reload the module or reboot",
                    file.filename
                ),
                false,
            ),
            (Some(_), Some(_)) => Observation::value(
                format!(
                    "{} built for {release}; the loaded module is this file (srcversion)",
                    file.filename
                ),
                true,
            ),
            _ => Observation::value(
                format!(
                    "{} built for {release}; loaded (no srcversion to compare)",
                    file.filename
                ),
                true,
            ),
        },
    }
}

fn signature(build: &ModuleBuild, name: &str, kernel_taint: &str) -> Observation {
    let file = match &build.file {
        Fact::Unknown { reason } => return Observation::unknown(reason.clone()),
        Fact::Known(None) => {
            return Observation::value(format!("no {name} module to load"), false);
        }
        Fact::Known(Some(file)) => file,
    };
    if file.builtin() {
        return Observation::value("built into the kernel image", true);
    }
    let Some(signer) = &file.signer else {
        return Observation::value(
            format!(
                "{} carries no signature{kernel_taint}: with Secure Boot on the kernel refuses it (module.sig_enforce) or taints itself E",
                file.filename
            ),
            false,
        );
    };
    match &build.loaded {
        Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        Fact::Known(None) => Observation::value(
            format!("{} signed by {signer:?}; not loaded", file.filename),
            true,
        ),
        Fact::Known(Some(loaded)) if loaded.taint.contains('E') => Observation::value(
            format!(
                "{} is signed by {signer:?}, but the loaded {name} is tainted E: the kernel trusts no key that signed it{kernel_taint}",
                file.filename
            ),
            false,
        ),
        Fact::Known(Some(loaded)) => Observation::value(
            format!(
                "{} signed by {signer:?}; loaded, taint {:?} (no E)",
                file.filename, loaded.taint
            ),
            true,
        ),
    }
}
