//! Kernel command line rules: each argument well formed, none both required
//! and forbidden, none contradicting what typed fields imply (IOMMU, cgroup,
//! hugepages), hugepages declared once.

use super::p;
use crate::blueprint::cmdline::{self, KernelArg};
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::*;

const HUGEPAGE_ARGS: &[&str] = &["hugepages", "hugepagesz", "default_hugepagesz"];

pub fn check(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let ka = &bp.boot.kernel_args;
    let mut required = Vec::new();
    for (i, text) in ka.required.iter().enumerate() {
        let path = p("boot.kernelArgs.required").index(i);
        match KernelArg::parse(text, "") {
            Err(e) => {
                out.error("kernel-arg", &path, e);
            }
            Ok(a) if HUGEPAGE_ARGS.contains(&a.name.as_str()) => {
                out.error(
                    "hugepages",
                    &path,
                    format!("`{a}` declares hugepages on the command line; declare them in boot.hugepages so kubelet and verify see the same pools"),
                );
            }
            Ok(a) => {
                if let Some((j, prev)) = required
                    .iter()
                    .find(|(_, r): &&(usize, KernelArg)| r.same_name(&a) && r.value != a.value)
                {
                    out.error(
                        "kernel-arg",
                        &path,
                        format!("`{a}` conflicts with `{prev}` at boot.kernelArgs.required[{j}]"),
                    );
                }
                required.push((i, a));
            }
        }
    }
    let implied = cmdline::implied(bp);
    for (i, a) in &required {
        if let Some(imp) = implied
            .iter()
            .find(|m| m.same_name(a) && m.value != a.value)
        {
            out.error(
                "kernel-arg",
                &p("boot.kernelArgs.required").index(*i),
                format!("`{a}` contradicts `{imp}`, which {} implies", imp.from),
            );
        }
    }
    for (i, text) in ka.forbidden.iter().enumerate() {
        let path = p("boot.kernelArgs.forbidden").index(i);
        let f = match KernelArg::parse(text, "") {
            Ok(f) => f,
            Err(e) => {
                out.error("kernel-arg", &path, e);
                continue;
            }
        };
        let hits = |a: &KernelArg| a.same_name(&f) && (f.value.is_none() || f.value == a.value);
        if let Some((j, a)) = required.iter().find(|(_, a)| hits(a)) {
            out.error(
                "kernel-arg",
                &path,
                format!("`{f}` is forbidden but `{a}` is required (boot.kernelArgs.required[{j}])"),
            );
        }
        if let Some(imp) = implied.iter().find(|a| hits(a)) {
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
