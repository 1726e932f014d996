//! The template set: the files under `templates/`, embedded at build time,
//! optionally overridden by name from a folder (`--templates DIR`).

use std::collections::BTreeMap;
use std::path::Path;

use super::RenderError;

/// Largest override template read (the largest built-in one is a few KiB).
const MAX_TEMPLATE_BYTES: u64 = 1024 * 1024;

include!(concat!(env!("OUT_DIR"), "/templates.rs"));

/// Template name → text, and the environment compiled from them (built
/// once in the constructor, reused for every render).
#[derive(Debug, Clone)]
pub struct Templates {
    texts: BTreeMap<String, String>,
    /// Names taken from the override folder.
    pub overridden: Vec<String>,
    env: std::sync::Arc<minijinja::Environment<'static>>,
}

/// The built-in texts.
fn embedded_texts() -> BTreeMap<String, String> {
    EMBEDDED
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect()
}

impl Templates {
    /// The built-in templates (compiled once per process).
    pub fn embedded() -> Self {
        static BUILTIN: std::sync::OnceLock<Templates> = std::sync::OnceLock::new();
        BUILTIN
            .get_or_init(|| match Self::compile(embedded_texts(), Vec::new()) {
                Ok(t) => t,
                // A build-time property: tests render every example with them.
                Err(e) => panic!("the built-in templates do not compile: {e}"),
            })
            .clone()
    }

    fn compile(
        texts: BTreeMap<String, String>,
        overridden: Vec<String>,
    ) -> Result<Self, RenderError> {
        let env = std::sync::Arc::new(super::environment(&texts)?);
        Ok(Self {
            texts,
            overridden,
            env,
        })
    }

    /// The compiled environment.
    pub(super) fn env(&self) -> &minijinja::Environment<'static> {
        &self.env
    }

    /// The embedded set with files from `dir` replacing templates of the same
    /// name. A file that matches no template is an error (a typo would
    /// otherwise be silently ignored).
    pub fn with_overrides(dir: &Path) -> Result<Self, RenderError> {
        // Compiled once, after the overrides are in.
        let mut texts = embedded_texts();
        let mut overridden = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            let rd = std::fs::read_dir(&d).map_err(|e| RenderError::io(&d, e))?;
            for entry in rd {
                let p = entry.map_err(|e| RenderError::io(&d, e))?.path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                let name = p
                    .strip_prefix(dir)
                    .map(|r| r.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_default();
                if !texts.contains_key(&name) {
                    return Err(RenderError::UnknownTemplate {
                        known: texts.keys().cloned().collect::<Vec<_>>().join(", "),
                        path: p,
                        name,
                    });
                }
                let text = crate::input::read_text(&p, MAX_TEMPLATE_BYTES)
                    .map_err(|e| RenderError::io(&p, e.into()))?;
                texts.insert(name.clone(), text);
                overridden.push(name);
            }
        }
        overridden.sort();
        Self::compile(texts, overridden)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.texts.iter().map(|(n, t)| (n.as_str(), t.as_str()))
    }
}
