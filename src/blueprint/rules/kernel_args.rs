//! Kernel command line rules: none both required and forbidden, none contradicting what
//! typed fields imply (IOMMU, cgroup, hugepages), none required twice with different
//! values, hugepages declared once. Each argument is already a well-formed
//! [`KernelArg`](crate::blueprint::value::KernelArg) (the schema's `kernel-arg` format).

use super::p;
use crate::blueprint::cmdline;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::*;

const HUGEPAGE_ARGS: &[&str] = &["hugepages", "hugepagesz", "default_hugepagesz"];

pub fn check(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let ka = &bp.boot.kernel_args;
    for (i, a) in ka.required.iter().enumerate() {
        let path = p("boot.kernelArgs.required").index(i);
        if HUGEPAGE_ARGS.contains(&a.key().as_str()) {
            out.error(
                "hugepages",
                &path,
                format!("`{a}` declares hugepages on the command line; declare them in boot.hugepages so kubelet and verify see the same pools"),
            );
            continue;
        }
        if let Some((j, prev)) = ka.required[..i]
            .iter()
            .enumerate()
            .find(|(_, r)| r.same_name(a) && !r.same_setting(a))
        {
            out.error(
                "kernel-arg",
                &path,
                format!("`{a}` conflicts with `{prev}` at boot.kernelArgs.required[{j}]"),
            );
        }
    }
    let implied = cmdline::implied(bp);
    for (i, a) in ka.required.iter().enumerate() {
        if let Some(imp) = implied
            .iter()
            .find(|m| m.arg.same_name(a) && !m.arg.same_setting(a))
        {
            out.error(
                "kernel-arg",
                &p("boot.kernelArgs.required").index(i),
                format!("`{a}` contradicts `{imp}`, which {} implies", imp.from),
            );
        }
    }
    for (i, f) in ka.forbidden.iter().enumerate() {
        let path = p("boot.kernelArgs.forbidden").index(i);
        let hits = |a: &crate::blueprint::value::KernelArg| {
            a.same_name(f) && (f.value().is_none() || f.same_setting(a))
        };
        if let Some((j, a)) = ka.required.iter().enumerate().find(|(_, a)| hits(a)) {
            out.error(
                "kernel-arg",
                &path,
                format!("`{f}` is forbidden but `{a}` is required (boot.kernelArgs.required[{j}])"),
            );
        }
        if let Some(imp) = implied.iter().find(|m| hits(&m.arg)) {
            out.error(
                "kernel-arg",
                &path,
                format!("`{f}` is forbidden but {} implies `{imp}`", imp.from),
            );
        }
    }
    let mut sizes = std::collections::BTreeSet::new();
    for (i, pool) in bp.boot.hugepages.iter().enumerate() {
        let path = p("boot.hugepages").index(i);
        if cmdline::hugepage_size_arg(pool).is_none() {
            out.error(
                "hugepages",
                &path.key("size"),
                format!("hugepage size `{}` is neither 2Mi nor 1Gi", pool.size),
            );
        }
        if !sizes.insert(pool.size.units_ceil()) {
            out.error(
                "hugepages",
                &path.key("size"),
                format!("a pool of `{}` pages is declared twice", pool.size),
            );
        }
        if pool.count == 0 {
            out.error(
                "hugepages",
                &path.key("count"),
                "a hugepage pool needs at least one page",
            );
        }
    }
}
