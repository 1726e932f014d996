//! OS and kernel checks: distribution and release, kernel release, required and forbidden
//! kernel arguments, cgroup v2, hugepage pools, memory for the pods' `/dev/shm`, kernel
//! parameters, nouveau absent.
//!
//! The command line the blueprint asks for ([`cmdline::full`]) has two parts. The
//! arguments in `boot.kernelArgs.required` are critical. The ones its typed fields imply
//! (`cmdline::implied`: IOMMU mode, cgroup mode, hugepages, nouveau off) are warnings:
//! what they are for is checked on its effect (`firmware.iommu`, `os.cgroup`,
//! `os.hugepages`, `os.nouveau.absent`), which a kernel can reach without the argument
//! (a compiled-in IOMMU default, a systemd that only mounts cgroup v2). `/proc/cmdline`
//! is read the way the kernel reads it ([`KernelArg`](crate::blueprint::value::KernelArg)):
//! the last occurrence of a parameter wins (list parameters such as `hugepagesz=`
//! accumulate), numbers compare by value (`0x1` is `1`), booleans by truth value where the
//! parameter is known to be one, and `-` and `_` are alike in names. A required argument
//! passes only when the kernel certainly has it; a forbidden one fails when the kernel
//! could. A `v1` cgroup blueprint accepts the hybrid layout, which runs the v1 controllers.
//!
//! `system.shmSize` sizes the `/dev/shm` of pods, which is a memory-backed volume of each
//! pod sandbox set by a cluster-side policy, not the host's `/dev/shm` (the image does not
//! remount it, and pods never see it). What the node can show is whether its memory can
//! back that much: `os.shm.size` compares `MemTotal` less the hugepage pools (tmpfs
//! cannot use them) with `shmSize`. The host mount is still collected as a fact, and
//! judged by nothing.
//!
//! `os.sysctl` reads back every parameter the image writes to `etc/sysctl.d/90-nodeimg.conf`
//! (the blueprint's own list, which render writes too: [`Kernel::of`]) from `/proc/sys`, compared the way the
//! kernel parsed it ([`Setting::holds`]). A parameter the node needs (kubelet's
//! `protectKernelDefaults` set, forwarding and bridge filtering, RoCE reverse-path and
//! ARP settings, anything in `security.sysctls`) is critical, and one that cannot be read
//! is an error: `net.bridge.*` is missing exactly when `br_netfilter` is not loaded.
//! Capacity tuning the node works without ([`TUNING`]) is a warning.

use super::catalog::os::*;
use super::matcher::Expect;
use super::{Inputs, Observation, Results};
use crate::blueprint::cmdline;
use crate::blueprint::kernel::Kernel;
use crate::blueprint::model::{CgroupMode, Vendor};
use crate::blueprint::value::VersionReq;
use crate::fault::Severity;
use crate::verify::fact::Fact;
use crate::verify::facts::cgroup;
use crate::verify::facts::sysctl::Setting;

pub fn evaluate(input: &Inputs, out: &mut Results) {
    let bp = input.blueprint;
    let facts = input.facts;
    let os_release = || vec!["/etc/os-release".to_owned()];
    let distro = facts.os.clone().and_then(|os| os.id);
    out.expect(
        &DISTRO,
        None,
        &Expect::equal(bp.os.distro.as_str()),
        &distro,
        os_release(),
    );
    // Both sides are versions, parsed at their edges: `22.04` is `22.4`, `12.10` is not `12.1`.
    let version = facts.os.as_ref().and_then(|os| os.version_id.clone());
    out.expect(
        &VERSION,
        None,
        &Expect::Version(VersionReq::pinned(&bp.os.version)),
        &version,
        os_release(),
    );
    out.expect(
        &KERNEL_RELEASE,
        None,
        &Expect::equal(bp.os.kernel.as_str()),
        &facts.kernel.release,
        vec!["/proc/sys/kernel/osrelease".to_owned()],
    );
    kernel_args(input, out);
    let v2 = bp.os.cgroup == CgroupMode::V2;
    out.record(
        &CGROUP,
        None,
        if v2 { "v2" } else { "v1 (or hybrid)" },
        Observation::of(
            &facts.cgroup,
            |mode| format!("{mode:?}").to_lowercase(),
            |mode| (*mode == cgroup::CgroupMode::V2) == v2,
        ),
        vec!["/sys/fs/cgroup".to_owned()],
    );
    hugepages(input, out);
    if let Some(size) = &bp.system.shm_size {
        shm(input, out, size);
    }
    sysctls(input, out);
    if bp
        .accelerators
        .as_ref()
        .is_some_and(|a| a.vendor == Vendor::Nvidia)
    {
        out.record(
            &NOUVEAU,
            None,
            "not loaded",
            Observation::of(
                &facts.modules.nouveau_loaded,
                |loaded| if *loaded { "loaded" } else { "not loaded" }.to_owned(),
                |loaded| !*loaded,
            ),
            vec!["/proc/modules".to_owned()],
        );
    }
}

fn kernel_args(input: &Inputs, out: &mut Results) {
    let bp = input.blueprint;
    let evidence = || vec!["/proc/cmdline".to_owned()];
    let params: Fact<Vec<(&str, Option<&str>)>> = input.facts.kernel.cmdline.as_ref().map(|line| {
        line.params
            .iter()
            .map(|p| (p.key.as_str(), p.value.as_deref()))
            .collect()
    });
    let implied = cmdline::implied(bp);
    let required = cmdline::required(bp);
    let all = implied
        .iter()
        .map(|wanted| (&ARG_IMPLIED, wanted))
        .chain(required.iter().map(|wanted| (&ARG_REQUIRED, wanted)));
    for (spec, wanted) in all {
        let observation = match &params {
            Fact::Known(params) => {
                let seen = wanted.arg.required_by(params);
                Observation::value(seen.observed, seen.holds)
            }
            Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        };
        out.record(
            spec,
            Some(wanted.to_string()),
            format!("{wanted} (from {})", wanted.from),
            observation,
            evidence(),
        );
    }
    for arg in &bp.boot.kernel_args.forbidden {
        let observation = match &params {
            Fact::Known(params) => {
                let seen = arg.forbidden_in(params);
                Observation::value(seen.observed, !seen.holds)
            }
            Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        };
        let expected = match arg.value() {
            None => format!("no {} (any value)", arg.name()),
            Some(_) => format!("not {arg} (in any spelling the kernel reads as it)"),
        };
        out.record(
            &ARG_FORBIDDEN,
            Some(arg.to_string()),
            expected,
            observation,
            evidence(),
        );
    }
}

fn hugepages(input: &Inputs, out: &mut Results) {
    let bp = input.blueprint;
    let pools = &input.facts.memory.hugepage_pools;
    for pool in &bp.boot.hugepages {
        let size_kb = (pool.size.units_ceil() / 1024) as u64;
        let dir = format!("/sys/kernel/mm/hugepages/hugepages-{size_kb}kB/nr_hugepages");
        let total: Fact<u64> = pools.clone().and_then(|pools| {
            match pools.into_iter().find(|p| p.size_kb == size_kb) {
                Some(found) => found.total,
                None => Fact::Known(0),
            }
        });
        out.expect(
            &HUGEPAGES,
            Some(pool.size.to_string()),
            &Expect::at_least(f64::from(pool.count)),
            &total,
            vec![dir],
        );
    }
}

/// Parameters the image sets for capacity or performance, which the node works without:
/// a value that does not hold is a warning, not a reason to keep kubelet down (unless the
/// blueprint asks for it itself in `security.sysctls`).
pub const TUNING: &[&str] = &[
    "fs.inotify.max_user_instances",
    "fs.inotify.max_user_watches",
    "kernel.pid_max",
    "kernel.numa_balancing",
];

/// The file the image writes its parameters to (the plan's output path).
const SYSCTL_FILE: &str = "/etc/sysctl.d/90-nodeimg.conf";

fn sysctls(input: &Inputs, out: &mut Results) {
    let bp = input.blueprint;
    for group in Kernel::of(bp).sysctls {
        for entry in group.entries {
            let key = entry.key.as_str();
            let asked = bp.security.sysctls.keys().any(|k| k.as_str() == key);
            let tuning = TUNING.contains(&key) && !asked;
            let path = entry
                .key
                .parse::<crate::blueprint::value::SysctlKey>()
                .map_or_else(
                    |_| format!("/proc/sys/{key}"),
                    |k| format!("/proc/sys/{}", k.proc_path()),
                );
            let setting: Fact<&Setting> = match input.facts.sysctls.get(key) {
                Some(fact) => fact.as_ref(),
                None => Fact::unknown(format!("{path} was not read")),
            };
            let observation =
                Observation::of(&setting, |s| s.to_string(), |s| s.holds(&entry.value));
            let result = out.record(
                &SYSCTL,
                Some(key.to_owned()),
                &entry.value,
                observation,
                vec![path, SYSCTL_FILE.to_owned()],
            );
            if tuning {
                result.severity = Severity::Warning;
            }
        }
    }
}

/// Memory a pod's memory-backed `/dev/shm` can use: `MemTotal` less the hugepage pools.
fn shm(input: &Inputs, out: &mut Results, size: &crate::blueprint::value::ByteSize) {
    let memory = &input.facts.memory;
    let want = u64::try_from(size.units_ceil()).unwrap_or(u64::MAX);
    let usable: Fact<u64> = memory.total_kb.clone().and_then(|total_kb| {
        memory.hugepage_pools.clone().and_then(|pools| {
            let mut reserved_kb: u64 = 0;
            for pool in pools {
                match pool.total {
                    Fact::Known(pages) => {
                        reserved_kb =
                            reserved_kb.saturating_add(pages.saturating_mul(pool.size_kb));
                    }
                    Fact::Unknown { reason } => return Fact::unknown(reason),
                }
            }
            Fact::Known(total_kb.saturating_sub(reserved_kb).saturating_mul(1024))
        })
    });
    out.record(
        &SHM,
        None,
        format!(">= {want} bytes (system.shmSize {size})"),
        Observation::of(
            &usable,
            |bytes| format!("{bytes} bytes outside hugepage pools"),
            |bytes| *bytes >= want,
        ),
        vec![
            "/proc/meminfo".to_owned(),
            "/sys/kernel/mm/hugepages".to_owned(),
        ],
    );
}
