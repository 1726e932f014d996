//! OS and kernel checks: distribution and release, kernel release, required and forbidden
//! kernel arguments, cgroup v2, hugepage pools, `/dev/shm` size, nouveau absent.
//!
//! The command line the blueprint asks for ([`cmdline::full`]) has two parts. The
//! arguments in `boot.kernelArgs.required` are critical. The ones its typed fields imply
//! ([`cmdline::implied`]: IOMMU mode, cgroup mode, hugepages, nouveau off) are warnings:
//! what they are for is checked on its effect (`firmware.iommu`, `os.cgroup`,
//! `os.hugepages`, `os.nouveau.absent`), which a kernel can reach without the argument
//! (a compiled-in IOMMU default, a systemd that only mounts cgroup v2). A repeated argument
//! (`hugepagesz=1G ... hugepagesz=2M`) passes when any occurrence carries the value;
//! names compare with `-` and `_` alike, as the kernel does. A `v1` cgroup blueprint
//! accepts the hybrid layout, which runs the v1 controllers.

use super::catalog::os::*;
use super::matcher::Expect;
use super::{Inputs, Observation, Results};
use crate::blueprint::cmdline::{self, KernelArg};
use crate::blueprint::model::{CgroupMode, Vendor};
use crate::blueprint::value::VersionReq;
use crate::verify::fact::Fact;
use crate::verify::facts::cgroup;
use crate::verify::facts::kernel::KernelCmdline;

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

fn norm(name: &str) -> String {
    name.replace('-', "_")
}

/// The values given for `name` on the command line, in order (`None` for a bare flag).
fn values<'a>(cmdline: &'a KernelCmdline, name: &str) -> Vec<Option<&'a str>> {
    let name = norm(name);
    cmdline
        .params
        .iter()
        .filter(|p| norm(&p.key) == name)
        .map(|p| p.value.as_deref())
        .collect()
}

fn show(name: &str, found: &[Option<&str>]) -> String {
    if found.is_empty() {
        return "absent".to_owned();
    }
    found
        .iter()
        .map(|v| match v {
            Some(v) => format!("{name}={v}"),
            None => name.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn kernel_args(input: &Inputs, out: &mut Results) {
    let bp = input.blueprint;
    let cmdline = &input.facts.kernel.cmdline;
    let evidence = || vec!["/proc/cmdline".to_owned()];
    let implied = cmdline::implied(bp);
    let required = bp
        .boot
        .kernel_args
        .required
        .iter()
        .enumerate()
        .filter_map(|(i, text)| {
            KernelArg::parse(text, &format!("boot.kernelArgs.required[{i}]")).ok()
        });
    let all = implied
        .into_iter()
        .map(|arg| (&ARG_IMPLIED, arg))
        .chain(required.map(|arg| (&ARG_REQUIRED, arg)));
    for (spec, arg) in all {
        let observation = match cmdline {
            Fact::Known(line) => {
                let found = values(line, &arg.name);
                let pass = match &arg.value {
                    None => !found.is_empty(),
                    Some(want) => found.contains(&Some(want.as_str())),
                };
                Observation::value(show(&arg.name, &found), pass)
            }
            Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        };
        let expected = format!("{arg} (from {})", arg.from);
        out.record(
            spec,
            Some(arg.to_string()),
            expected,
            observation,
            evidence(),
        );
    }
    for (i, text) in bp.boot.kernel_args.forbidden.iter().enumerate() {
        let Ok(arg) = KernelArg::parse(text, &format!("boot.kernelArgs.forbidden[{i}]")) else {
            continue;
        };
        let observation = match cmdline {
            Fact::Known(line) => {
                let found = values(line, &arg.name);
                let present = match &arg.value {
                    None => !found.is_empty(),
                    Some(bad) => found.contains(&Some(bad.as_str())),
                };
                Observation::value(show(&arg.name, &found), !present)
            }
            Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        };
        let expected = match &arg.value {
            None => format!("no {} (any value)", arg.name),
            Some(_) => format!("not {arg}"),
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
