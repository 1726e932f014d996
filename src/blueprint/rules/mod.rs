//! Semantic rules: what the schema cannot say. Each file holds one family of
//! rules; every rule reports through the collector with the YAML path it is
//! about, so semantic errors are located like syntax errors.

mod acceptance;
mod amd_cdi;
mod authority;
mod compat;
mod eviction;
mod iommu;
mod kernel_args;
mod kubelet;
mod network;
mod nfd;
mod node_labels;
mod operator;
mod rollout;
mod runtime;
mod system;
mod topology;

use std::path::Path;

use super::compat::Matrix;
use super::diagnostic::Collector;
use super::model::RawBlueprint;
use super::yaml_path::YamlPath;

pub(super) use compat::applicable as applicable_rules;

/// What rules may consult besides the blueprint.
pub struct Context<'a> {
    pub matrix: &'a Matrix,
    /// Folder that relative paths in the blueprint are resolved against;
    /// `None` skips the file-existence checks (in-memory loads).
    pub base_dir: Option<&'a Path>,
}

pub fn check(bp: &RawBlueprint, cx: &Context<'_>, out: &mut Collector<'_>) {
    acceptance::check(bp, out);
    amd_cdi::check(bp, out);
    authority::check(bp, out);
    compat::check(bp, cx.matrix, out);
    eviction::check(bp, out);
    iommu::check(bp, out);
    kernel_args::check(bp, out);
    kubelet::check(bp, out);
    network::check(bp, cx.matrix, out);
    nfd::check(bp, out);
    node_labels::check(bp, out);
    operator::check(bp, out);
    rollout::check(bp, out);
    runtime::check(bp, out);
    system::check(bp, cx.base_dir, out);
    topology::check(bp, out);
}

fn p(text: &str) -> YamlPath {
    YamlPath::parse(text)
}
