//! OS and kernel checks: distribution and release, kernel release, required and forbidden
//! kernel arguments, cgroup v2, hugepage pools, `/dev/shm` size, nouveau absent.
//!
//! The command line the blueprint asks for ([`cmdline::full`]) has two parts. The
//! arguments in `boot.kernelArgs.required` are critical. The ones its typed fields imply
//! ([`cmdline::implied`]: IOMMU mode, cgroup mode, hugepages, nouveau off) are warnings:
//! what they are for is checked on its effect (`firmware.iommu`, `os.cgroup`,
//! `os.hugepages`, `os.nouveau.absent`), which a kernel can reach without the argument
//! (a compiled-in IOMMU default, a systemd that only mounts cgroup v2). `/proc/cmdline`
//! is read the way the kernel reads it ([`KernelArg`](crate::blueprint::value::KernelArg)):
//! the last occurrence of a parameter wins (list parameters such as `hugepagesz=`
//! accumulate), numbers compare by value (`0x1` is `1`), booleans by truth value where the
//! parameter is known to be one, and `-` and `_` are alike in names. A required argument
//! passes only when the kernel certainly has it; a forbidden one fails when the kernel
//! could. A `v1` cgroup blueprint accepts the hybrid layout, which runs the v1 controllers.

use super::catalog::os::*;
use super::matcher::Expect;
use super::{Inputs, Observation, Results};
use crate::blueprint::cmdline;
use crate::blueprint::model::{CgroupMode, Vendor};
use crate::blueprint::value::VersionReq;
use crate::verify::fact::Fact;
use crate::verify::facts::cgroup;

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
    let version = facts.os.clone().and_then(|os| os.version_id);
    let exact: Option<VersionReq> = bp.os.version.as_str().parse().ok();
    let expect = exact.map_or_else(|| Expect::equal(bp.os.version.as_str()), Expect::Version);
    out.expect(&VERSION, None, &expect, &version, os_release());
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
        let want = size.units_ceil() as f64;
        let observed = facts.dev_shm.clone().and_then(|shm| shm.size_bytes);
        out.expect(
            &SHM,
            None,
            &Expect::at_least(want),
            &observed,
            vec!["/proc/mounts".to_owned()],
        );
    }
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
