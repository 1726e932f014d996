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
mod read_back;
mod selfcheck;
pub mod templates;
pub mod tolerations;
pub mod write;

use std::path::{Path, PathBuf};

use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use thiserror::Error;

use crate::blueprint::Blueprint;
use crate::tree::Tree;
pub use context::Context;
use plan::{FileImpact, PLAN, Side};
use std::collections::BTreeMap;
pub use templates::Templates;

/// The rendered files: the image layer and the cluster-side files, and
/// what changing each one means for a running fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub layer: Tree,
    pub cluster: Tree,
    /// `layer/<path>` or `cluster/<path>` → impact, from the plan row (or
    /// [`plan::EXTRA`] for copied files).
    pub impacts: BTreeMap<String, FileImpact>,
}

impl Rendered {
    /// The impact of changing `path` (`layer/…` or `cluster/…`); a file
    /// with none declared is the most disruptive.
    pub fn impact_of(&self, path: &str) -> FileImpact {
        self.impacts.get(path).copied().unwrap_or(plan::UNDECLARED)
    }
}

/// Why rendering failed; names the template and line, the file or the
/// output it is about.
#[derive(Debug, Error)]
pub enum RenderError {
    /// A template does not compile or render (strict undefined, a filter
    /// refusing a value).
    #[error("template {name}{}: {message}", line.map(|l| format!(" line {l}")).unwrap_or_default())]
    Template {
        name: String,
        line: Option<usize>,
        message: String,
    },
    /// A file the blueprint or `--templates` names cannot be read.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A `--templates` file that replaces no built-in template.
    #[error("{}: no template is named `{name}`; the templates are: {known}", path.display())]
    UnknownTemplate {
        path: PathBuf,
        name: String,
        known: String,
    },
    /// A rendered path the tree cannot hold.
    #[error("{path} (from {template}): {message}")]
    Output {
        path: String,
        template: String,
        message: String,
    },
    /// A value the context cannot express.
    #[error("{what}: {message}")]
    Context { what: &'static str, message: String },
    /// `runtime.containerd.extraConfig` cannot be merged.
    #[error("containerd extraConfig `{key}`: {message}")]
    ExtraConfig { key: String, message: String },
    /// A rendered file does not parse back to what was meant.
    #[error("self-check of {path}: {message}")]
    SelfCheck { path: String, message: String },
}

impl RenderError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    fn from_jinja(e: &minijinja::Error, fallback: &str) -> Self {
        let mut message = e.kind().to_string();
        if let Some(d) = e.detail() {
            message = format!("{message}: {d}");
        }
        Self::Template {
            name: e.name().unwrap_or(fallback).to_string(),
            line: e.line(),
            message,
        }
    }

    /// The template the error is in, if any.
    pub fn template(&self) -> Option<&str> {
        match self {
            Self::Template { name, .. } => Some(name),
            Self::Output { template, .. } => Some(template),
            _ => None,
        }
    }

    /// The template line the error is on, if known.
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::Template { line, .. } => *line,
            _ => None,
        }
    }
}

pub(crate) fn environment(
    templates: &std::collections::BTreeMap<String, String>,
) -> Result<Environment<'static>, RenderError> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .map_err(|e| RenderError::from_jinja(&e, "(syntax)"))?,
    );
    env.add_filter("toml", escape::toml);
    env.add_filter("yaml", escape::yaml);
    env.add_filter("yaml_block", escape::yaml_block);
    env.add_filter("json", escape::json);
    env.add_filter("line", escape::line);
    env.add_filter("comment", escape::comment);
    env.add_filter("token", escape::token);
    env.add_filter("cmdline", escape::cmdline);
    env.add_filter("unit", escape::unit);
    env.add_filter("unit_word", escape::unit_word);
    env.add_filter("unit_path", escape::unit_path);
    env.add_filter("shell_quote", escape::shell_quote);
    for (name, text) in templates {
        env.add_template_owned(name.clone(), text.clone())
            .map_err(|e| RenderError::from_jinja(&e, name))?;
    }
    Ok(env)
}

/// Renders every output of the plan for `bp`. Files the blueprint names
/// (CA certificates) are read relative to the blueprint's folder.
pub fn render(bp: &Blueprint, templates: &Templates) -> Result<Rendered, RenderError> {
    let env = templates.env();
    let ctx = Context::new(bp)?;

    // Converted once; per-item contexts layer `item` over it.
    let base = minijinja::Value::from(minijinja::value::Serde(&ctx));
    let mut out = Rendered {
        layer: Tree::new(),
        cluster: Tree::new(),
        impacts: BTreeMap::new(),
    };
    for row in PLAN {
        if !(row.when)(&ctx) {
            continue;
        }
        let items: Vec<Option<minijinja::Value>> = match row.each {
            Some(list) => list(&ctx).into_iter().map(Some).collect(),
            None => vec![None],
        };
        let tmpl = env
            .get_template(row.template)
            .map_err(|e| RenderError::from_jinja(&e, row.template))?;
        for item in items {
            let local = match item {
                Some(item) => minijinja::context! { item => item, ..base.clone() },
                None => base.clone(),
            };
            let path = env
                .render_str(row.path, &local)
                .map_err(|e| RenderError::from_jinja(&e, row.template))?;
            let mut text = tmpl
                .render(&local)
                .map_err(|e| RenderError::from_jinja(&e, row.template))?;
            if let Some(post) = row.post {
                text = post(text, &ctx)?;
            }
            let (tree, side) = match row.side {
                Side::Layer => (&mut out.layer, "layer"),
                Side::Cluster => (&mut out.cluster, "cluster"),
            };
            out.impacts.insert(format!("{side}/{path}"), row.impact);
            tree.add_file(&path, row.mode, text.into_bytes())
                .map_err(|e| RenderError::Output {
                    path: e.path,
                    template: row.template.to_string(),
                    message: e.message,
                })?;
        }
    }
    out.layer
        .add_file(
            "etc/nodeimg/blueprint.id",
            0o644,
            format!("{}\n", bp.id()).into_bytes(),
        )
        .map_err(|e| tree_error(e, "(blueprint id)"))?;
    copies(bp, &ctx, &mut out.layer)?;
    for link in &ctx.startup.links {
        out.layer
            .add_symlink(&link.path, &link.target)
            .map_err(|e| tree_error(e, "(unit enablement)"))?;
        let key = format!("layer/{}", link.path);
        if let Some((_, impact)) = plan::EXTRA.iter().find(|(p, _)| key.starts_with(p)) {
            out.impacts.insert(key, *impact);
        }
    }
    for (path, _, _) in out.layer.files() {
        let key = format!("layer/{path}");
        if !out.impacts.contains_key(&key)
            && let Some((_, impact)) = plan::EXTRA.iter().find(|(p, _)| key.starts_with(p))
        {
            out.impacts.insert(key, *impact);
        }
    }
    selfcheck::check(bp, &ctx, &out)?;
    Ok(out)
}

fn tree_error(e: crate::tree::TreeError, from: &str) -> RenderError {
    RenderError::Output {
        path: e.path,
        template: from.to_string(),
        message: e.message,
    }
}

/// The lock file: the blueprint's canonical resolved form with the digests
/// of its matrix entries and overlay, pretty-printed with sorted keys.
/// Loading it (with the matrix file beside it) gives back the same
/// blueprint and id.
pub fn lock_json(bp: &Blueprint) -> String {
    bp.identity().lock_text()
}

/// Every file and folder a build of `bp` reads: the blueprint itself, its
/// overlay folder, registry CAs and certificates. An output folder may
/// never hold one of them (see [`crate::atomic::StagedDir`]).
pub fn inputs(bp: &Blueprint) -> Vec<std::path::PathBuf> {
    let s = bp.spec();
    let base = bp.base_dir();
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
    out.extend(
        s.security
            .image_trust
            .iter()
            .flat_map(|t| &t.keys)
            .map(|k| base.join(k.file.as_str())),
    );
    out
}

/// Files copied verbatim from beside the blueprint: registry CAs for
/// containerd, CA certificates for the distro's trust store and the keys
/// images must be signed by.
fn copies(bp: &Blueprint, ctx: &Context<'_>, layer: &mut Tree) -> Result<(), RenderError> {
    let base = bp.base_dir();
    let read = |rel: &str| {
        let p = base.join(rel);
        // Certificates are a few KiB; a bundle of every public CA is about 200 KiB.
        crate::input::read(&p, 1024 * 1024).map_err(|e| RenderError::io(&p, e.into()))
    };
    let add = |layer: &mut Tree, path: String, bytes: Vec<u8>| {
        layer
            .add_file(&path, 0o644, bytes)
            .map_err(|e| tree_error(e, "(copied file)"))
    };
    let (dir, ext) = (ctx.distro.trust_dir, ctx.distro.trust_ext);
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
    // The keys images must be signed by: read by `apply` (the next image) and `verify`.
    for k in bp.spec().security.image_trust.iter().flat_map(|t| &t.keys) {
        add(
            layer,
            format!("{}/{}.pub", crate::blueprint::model::TRUST_DIR, k.name),
            read(k.file.as_str())?,
        )?;
    }
    Ok(())
}
