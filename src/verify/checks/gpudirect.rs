//! GPUDirect RDMA through DMA-BUF: what the node needs when the blueprint declares NVIDIA
//! GPUs and RDMA NICs without a pinned OFED ([`RawBlueprint::gpudirect_dma_buf`]).
//!
//! Without MLNX_OFED/DOCA-OFED the image loads no `nvidia_peermem` (it needs OFED's
//! peer-memory symbols), so the NIC reaches GPU memory only through the kernel's DMA-BUF
//! framework (`ibv_reg_dmabuf_mr`), which NVIDIA recommends over `nvidia_peermem`
//! (docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-rdma.html).
//! Its prerequisites, each a check:
//!
//! - `gpudirect.dma-buf.kernel` (host): Linux 5.12 or later, built with
//!   `CONFIG_DMA_SHARED_BUFFER` (`/boot/config-<release>` or `/proc/config.gz`; unknown,
//!   never assumed, when neither is there).
//! - `gpudirect.dma-buf.driver` (driver): the NVIDIA *open* kernel modules are loaded;
//!   the proprietary ones cannot export GPU memory as DMA-BUF. The signal is the banner the
//!   loaded `nvidia.ko` prints in `/proc/driver/nvidia/version` (`nv_procfs_read_version`
//!   prints `NVRM version: <pNVRM_ID>`, kernel-open/nvidia/nv-procfs.c in
//!   NVIDIA/open-gpu-kernel-modules): `NVIDIA UNIX Open Kernel Module for x86_64 …` for the
//!   open modules, `NVIDIA UNIX x86_64 Kernel Module …` for the proprietary ones. It names
//!   the module running now, not a package on disk.
//!
//! `nvidia_peermem` is not required: the observation says whether it is loaded, and its
//! absence never fails.

use super::catalog::gpudirect::{DMA_BUF_DRIVER, DMA_BUF_KERNEL};
use super::{Inputs, Observation, Results};
use crate::blueprint::model::RawBlueprint;
use crate::verify::fact::Fact;

/// The DMA-BUF option of the kernel configuration.
const DMA_SHARED_BUFFER: &str = "CONFIG_DMA_SHARED_BUFFER";

/// The first kernel with RDMA DMA-BUF memory registration (`ib_umem_dmabuf_get`).
const FIRST_KERNEL: (u64, u64) = (5, 12);

pub fn evaluate(input: &Inputs, out: &mut Results) {
    if !input.blueprint.gpudirect_dma_buf() {
        return;
    }
    kernel(input, out);
    driver(input, out);
}

fn kernel(input: &Inputs, out: &mut Results) {
    let facts = input.facts;
    let mut evidence = vec!["/proc/sys/kernel/osrelease".to_owned()];
    let observation = match &facts.kernel.release {
        Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        Fact::Known(release) => match major_minor(release) {
            None => Observation::unknown(format!("kernel release {release:?} has no major.minor")),
            Some(version) if version < FIRST_KERNEL => Observation::value(
                format!(
                    "Linux {release}: older than {}.{}",
                    FIRST_KERNEL.0, FIRST_KERNEL.1
                ),
                false,
            ),
            Some(_) => match &facts.kernel_config {
                Fact::Unknown { reason } => {
                    evidence.push(format!("/boot/config-{release}"));
                    evidence.push("/proc/config.gz".to_owned());
                    Observation::unknown(reason.clone())
                }
                Fact::Known(config) => {
                    evidence.push(config.source.clone());
                    let value = match config
                        .options
                        .get(DMA_SHARED_BUFFER)
                        .and_then(Option::as_deref)
                    {
                        Some(value) => format!("{DMA_SHARED_BUFFER}={value}"),
                        None => format!("{DMA_SHARED_BUFFER} not set"),
                    };
                    Observation::value(
                        format!("Linux {release}, {value}"),
                        config.enabled(DMA_SHARED_BUFFER),
                    )
                }
            },
        },
    };
    out.record(
        &DMA_BUF_KERNEL,
        None,
        format!(
            "Linux {}.{} or later with {DMA_SHARED_BUFFER}=y",
            FIRST_KERNEL.0, FIRST_KERNEL.1
        ),
        observation,
        evidence,
    );
}

fn driver(input: &Inputs, out: &mut Results) {
    let modules = &input.facts.modules;
    // Whether nvidia_peermem is loaded is reported, never judged.
    let peermem = match &modules.loaded {
        Fact::Known(names) if names.iter().any(|n| n == "nvidia_peermem") => {
            "; nvidia_peermem loaded (not used by DMA-BUF)"
        }
        Fact::Known(_) => "; nvidia_peermem not loaded (not needed)",
        Fact::Unknown { .. } => "",
    };
    out.record(
        &DMA_BUF_DRIVER,
        None,
        "the NVIDIA open kernel modules (`Open Kernel Module` in /proc/driver/nvidia/version)",
        Observation::of(
            &modules.nvidia_driver,
            |d| {
                let flavour = if d.open { "open" } else { "proprietary" };
                format!("{flavour} kernel modules {}{peermem}", d.version)
            },
            |d| d.open,
        ),
        vec![
            "/proc/driver/nvidia/version".to_owned(),
            "/proc/modules".to_owned(),
        ],
    );
}

/// `6.8.0-45-generic` → (6, 8).
fn major_minor(release: &str) -> Option<(u64, u64)> {
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .map(str::parse::<u64>);
    let major = parts.next()?.ok()?;
    let minor = parts.next()?.ok()?;
    Some((major, minor))
}

/// The checks a blueprint gets from this family, for [`super::Needs`].
pub fn applies(blueprint: &RawBlueprint) -> bool {
    blueprint.gpudirect_dma_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_releases_compare_by_major_and_minor() {
        assert_eq!(major_minor("5.15.0-122-generic"), Some((5, 15)));
        assert_eq!(major_minor("6.1.0-28-amd64"), Some((6, 1)));
        assert_eq!(major_minor("5.4.0"), Some((5, 4)));
        assert!(major_minor("5.4.0").unwrap() < FIRST_KERNEL);
        assert!(major_minor("5.12.0").unwrap() >= FIRST_KERNEL);
        assert_eq!(major_minor("linux"), None);
    }
}
