//! Container runtime rules: which runtime is the default when GPUs reach
//! pods through CDI, which containerd plugin owns a setting, that the
//! sandbox image is pinned, and which GPUDirect RDMA path the host can take.

use super::p;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::*;

pub fn check(bp: &RawBlueprint, out: &mut Collector<'_>) {
    default_runtime(bp, out);
    plugin_owner(bp, out);
    sandbox_image(bp, out);
    gpudirect(bp, out);
}

/// With CDI the device plugin (or DRA driver) asks for GPUs by CDI name and
/// containerd injects exactly those. `nvidia` as the default runtime would
/// also run every container through nvidia-container-runtime, which hands
/// all GPUs to any container whose image sets `NVIDIA_VISIBLE_DEVICES=all`
/// (every CUDA base image) without a GPU request. GPU Operator v25.10 with
/// CDI does not make `nvidia` the default either; it keeps the handler for
/// its RuntimeClass (docs.nvidia.com/datacenter/cloud-native/gpu-operator/
/// latest/cdi.html).
fn default_runtime(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let nvidia = bp
        .accelerators
        .as_ref()
        .is_some_and(|a| a.vendor == Vendor::Nvidia);
    if nvidia
        && bp.runtime.cdi.enabled
        && bp.runtime.containerd.default_runtime == DefaultRuntime::Nvidia
    {
        out.error(
            "default-runtime",
            &p("runtime.containerd.defaultRuntime"),
            "`nvidia` as the default runtime with CDI enabled gives every container whose image sets NVIDIA_VISIBLE_DEVICES (every CUDA image) GPUs it never requested",
        )
        .hint = Some(
            "use `runc`: GPUs arrive through CDI, and the `nvidia` handler stays registered for a RuntimeClass".into(),
        );
    }
}

/// extraConfig keys go to the plugin that owns them. Keys the rendered
/// config owns (imports, the sandbox image) are refused. containerd 2.1
/// switches the CRI plugin to its local pull path (and off the transfer
/// service) when `max_concurrent_downloads` is set on the CRI images plugin
/// (`CheckLocalImagePullConfigs`); the transfer service owns the setting
/// (`io.containerd.transfer.v1.local`).
fn plugin_owner(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let c = &bp.runtime.containerd;
    for key in c.extra_config.keys() {
        let parts: Vec<&str> = key.parts().iter().map(String::as_str).collect();
        let owner = match parts.as_slice() {
            ["imports", ..] => Some("nodeimg's drop-in folder (/etc/containerd/conf.d)"),
            ["plugins", _, "sandbox_image"] | ["plugins", _, "pinned_images", "sandbox"] => {
                Some("runtime.containerd.sandboxImage")
            }
            ["plugins", _, "pinned_images"] => Some("runtime.containerd.sandboxImage"),
            _ => None,
        };
        if let Some(owner) = owner {
            out.error(
                "containerd-plugin",
                &p("runtime.containerd.extraConfig").key(key.as_str()),
                format!("`{key}` is owned by {owner}"),
            );
            continue;
        }
        if let ["plugins", "io.containerd.cri.v1.images", setting] = parts.as_slice()
            && c.version.major() >= 2
            && matches!(
                *setting,
                "max_concurrent_downloads" | "image_pull_progress_timeout"
            )
        {
            out.error(
                "containerd-plugin",
                &p("runtime.containerd.extraConfig").key(key.as_str()),
                format!(
                    "in containerd {} `{setting}` on the CRI images plugin turns on the local pull path and bypasses the transfer service",
                    c.version
                ),
            )
            .hint = Some(format!(
                "set plugins.\"io.containerd.transfer.v1.local\".{setting} instead"
            ));
        }
    }
}

/// The sandbox image must name a tag or a digest, so the node pulls (and
/// pins) the same image every time.
fn sandbox_image(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let Some(image) = &bp.runtime.containerd.sandbox_image else {
        return;
    };
    let last = image.rsplit('/').next().unwrap_or(image);
    let bad_char = image
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '\\'));
    if image.is_empty() || bad_char.is_some() || !(last.contains(':') || image.contains('@')) {
        out.error(
            "sandbox-image",
            &p("runtime.containerd.sandboxImage"),
            format!("`{}` is not a pinned image reference", image.escape_debug()),
        )
        .hint = Some("name a tag or a digest, e.g. registry.k8s.io/pause:3.10".into());
    }
}

/// GPUDirect RDMA reaches NIC memory registration either through
/// `nvidia_peermem`, which needs MLNX_OFED/DOCA-OFED's peer-memory symbols
/// (it fails to load against the inbox RDMA stack), or through DMA-BUF,
/// which needs the open kernel modules and Linux 5.12 or later. NVIDIA
/// recommends DMA-BUF (docs.nvidia.com/datacenter/cloud-native/gpu-operator/
/// latest/gpu-operator-rdma.html).
fn gpudirect(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let Some(acc) = &bp.accelerators else {
        return;
    };
    if !bp.gpudirect_dma_buf() {
        return;
    }
    let hint = "pin network.ofed to load nvidia_peermem instead";
    if acc.driver.kernel_module == Some(KernelModule::Proprietary) {
        out.error(
            "gpudirect",
            &p("accelerators.driver.kernelModule"),
            "GPUDirect RDMA without OFED goes through DMA-BUF, which the proprietary kernel modules do not support",
        )
        .hint = Some(hint.into());
    }
    let kernel = &bp.os.kernel;
    if (kernel.major(), kernel.minor()) < (5, 12) {
        out.error(
            "gpudirect",
            &p("os.kernel"),
            format!("GPUDirect RDMA without OFED goes through DMA-BUF, which needs Linux 5.12 or later; this blueprint pins {kernel}"),
        )
        .hint = Some(hint.into());
    }
}
