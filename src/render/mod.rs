//! Rendering: a checked blueprint → every configuration file, in memory.
//!
//! The plan (`plan.rs`) lists each output; templates (`templates/`, embedded)
//! lay out values the context (`context.rs`) computed; filters (`escape.rs`)
//! escape every interpolated value for its format. Rendering is strict — an
//! undefined variable is an error naming the template and line — and each
//! structured output is parsed back and compared with the intended values
//! (`selfcheck.rs`) before anything is returned.

pub mod context;
pub mod escape;
mod extra_config;
pub mod plan;
mod selfcheck;
pub mod templates;
pub mod write;

use std::fmt;
use std::path::Path;

use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde_json::Value;

use crate::blueprint::{Blueprint, identity};
use crate::tree::Tree;
use plan::{PLAN, Side};
pub use templates::Templates;

/// The rendered files: the image layer and the cluster-side files.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub layer: Tree,
    pub cluster: Tree,
}

/// Why rendering failed; names the template and line when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderError {
    pub template: Option<String>,
    pub line: Option<usize>,
    pub message: String,
}

impl RenderError {
    pub fn plain(message: impl Into<String>) -> Self {
        Self {
            template: None,
            line: None,
            message: message.into(),
        }
    }

    pub fn io(path: &Path, e: std::io::Error) -> Self {
        Self::plain(format!("{}: {e}", path.display()))
    }

    fn from_jinja(e: &minijinja::Error, fallback: &str) -> Self {
        let mut message = e.kind().to_string();
        if let Some(d) = e.detail() {
            message = format!("{message}: {d}");
        }
        Self {
            template: Some(e.name().unwrap_or(fallback).to_string()),
            line: e.line(),
            message,
        }
    }
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.template, self.line) {
            (Some(t), Some(l)) => write!(f, "template {t} line {l}: {}", self.message),
            (Some(t), None) => write!(f, "template {t}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for RenderError {}

pub(crate) fn environment(templates: &Templates) -> Result<Environment<'static>, RenderError> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .expect("the default delimiters are valid"),
    );
    env.add_filter("toml", escape::toml);
    env.add_filter("yaml", escape::yaml);
    env.add_filter("yaml_block", escape::yaml_block);
    env.add_filter("json", escape::json);
    env.add_filter("line", escape::line);
    env.add_filter("token", escape::token);
    env.add_filter("cmdline", escape::cmdline);
    env.add_filter("unit", escape::unit);
    env.add_filter("unit_word", escape::unit_word);
    env.add_filter("unit_path", escape::unit_path);
    for (name, text) in templates.iter() {
        env.add_template_owned(name.to_string(), text.to_string())
            .map_err(|e| RenderError::from_jinja(&e, name))?;
    }
    Ok(env)
}

/// Renders every output of the plan for `bp`. Files the blueprint names
/// (CA certificates) are read relative to the blueprint's folder.
pub fn render(bp: &Blueprint, templates: &Templates) -> Result<Rendered, RenderError> {
    let env = templates.env();
    let mut ctx = context::build(bp);
    let lock = lock_json(bp);
    ctx["lock"] = Value::String(lock.trim_end().to_string());

    // Converted once; per-item contexts layer `item` over it.
    let base = minijinja::Value::from(minijinja::value::Serde(&ctx));
    let mut out = Rendered {
        layer: Tree::new(),
        cluster: Tree::new(),
    };
    for row in PLAN {
        if !(row.condition)(&ctx) {
            continue;
        }
        let items: Vec<Option<&Value>> = match row.each {
            Some(list) => plan::items(&ctx, list).iter().map(Some).collect(),
            None => vec![None],
        };
        let tmpl = env
            .get_template(row.template)
            .map_err(|e| RenderError::from_jinja(&e, row.template))?;
        for item in items {
            let local = match item {
                Some(item) => {
                    minijinja::context! { item => minijinja::value::Serde(item), ..base.clone() }
                }
                None => base.clone(),
            };
            let path = env
                .render_str(row.path, &local)
                .map_err(|e| RenderError::from_jinja(&e, row.template))?;
            let mut text = tmpl
                .render(&local)
                .map_err(|e| RenderError::from_jinja(&e, row.template))?;
            if path == "etc/containerd/config.toml" {
                text = extra_config::merge_containerd(
                    &text,
                    &bp.spec().runtime.containerd.extra_config,
                )?;
            }
            let tree = match row.side {
                Side::Layer => &mut out.layer,
                Side::Cluster => &mut out.cluster,
            };
            tree.add_file(&path, row.mode, text.into_bytes())
                .map_err(|e| {
                    RenderError::plain(format!("{} (from {}): {}", e.path, row.template, e.message))
                })?;
        }
    }
    out.layer
        .add_file(
            "etc/nodeimg/blueprint.id",
            0o644,
            format!("{}\n", bp.id()).into_bytes(),
        )
        .map_err(|e| RenderError::plain(e.to_string()))?;
    copies(bp, &ctx, &mut out.layer)?;
    selfcheck::check(bp, &ctx, &out)?;
    Ok(out)
}

/// The lock file: the blueprint's canonical resolved form, pretty-printed
/// with sorted keys. Loading it gives back the same blueprint and id.
pub fn lock_json(bp: &Blueprint) -> String {
    let canonical: Value =
        serde_json::from_str(&identity::canonical_json(bp.spec())).expect("canonical JSON parses");
    let mut s = serde_json::to_string_pretty(&canonical).expect("serialises");
    s.push('\n');
    s
}

/// Every file and folder a build of `bp` reads: the blueprint itself, its
/// overlay folder, registry CAs and certificates. An output folder may
/// never hold one of them (see [`crate::atomic::StagedDir`]).
pub fn inputs(bp: &Blueprint) -> Vec<std::path::PathBuf> {
    let s = bp.spec();
    let base = crate::atomic::parent_dir(bp.file());
    let mut out = vec![bp.file().to_path_buf()];
    out.extend(s.files.iter().map(|f| base.join(f.overlay.as_str())));
    out.extend(
        s.runtime
            .containerd
            .registries
            .iter()
            .filter_map(|r| r.ca_file.as_ref())
            .map(|ca| base.join(ca.as_str())),
    );
    out.extend(
        s.system
            .certificates
            .iter()
            .map(|c| base.join(c.file.as_str())),
    );
    out
}

/// Files copied verbatim from beside the blueprint: registry CAs for
/// containerd and CA certificates for the distro's trust store.
fn copies(bp: &Blueprint, ctx: &Value, layer: &mut Tree) -> Result<(), RenderError> {
    let base = crate::atomic::parent_dir(bp.file());
    let read = |rel: &str| {
        let p = base.join(rel);
        std::fs::read(&p).map_err(|e| RenderError::io(&p, e))
    };
    let add = |layer: &mut Tree, path: String, bytes: Vec<u8>| {
        layer
            .add_file(&path, 0o644, bytes)
            .map_err(|e| RenderError::plain(e.to_string()))
    };
    let dir = ctx["distro"]["trust_dir"].as_str().unwrap_or_default();
    let ext = ctx["distro"]["trust_ext"].as_str().unwrap_or_default();
    for r in &bp.spec().runtime.containerd.registries {
        if let Some(ca) = &r.ca_file {
            let pem = read(ca.as_str())?;
            add(
                layer,
                format!("etc/containerd/certs.d/{}/ca.crt", r.host),
                pem.clone(),
            )?;
            // Also trusted system-wide, for tools other than containerd that pull.
            let name = r.host.replace([':', '[', ']'], "_");
            add(layer, format!("{dir}/nodeimg-registry-{name}.{ext}"), pem)?;
        }
    }
    for c in &bp.spec().system.certificates {
        add(
            layer,
            format!("{dir}/nodeimg-{}.{ext}", c.name),
            read(c.file.as_str())?,
        )?;
    }
    Ok(())
}
