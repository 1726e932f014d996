//! The template set: the files under `templates/`, embedded at build time,
//! optionally overridden by name from a folder (`--templates DIR`).

use std::collections::BTreeMap;
use std::path::Path;

use super::RenderError;

include!(concat!(env!("OUT_DIR"), "/templates.rs"));

/// Template name → text, and the environment compiled from them (built
/// once, reused for every render).
#[derive(Debug, Clone)]
pub struct Templates {
    texts: BTreeMap<String, String>,
    /// Names taken from the override folder.
    pub overridden: Vec<String>,
    env: Option<std::sync::Arc<minijinja::Environment<'static>>>,
}

impl Templates {
    pub fn embedded() -> Self {
        let mut t = Self::uncompiled();
        t.compile().expect("the built-in templates compile");
        t
    }

    /// The built-in texts, not yet compiled.
    fn uncompiled() -> Self {
        Self {
            texts: EMBEDDED
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect(),
            overridden: Vec::new(),
            env: None,
        }
    }

    fn compile(&mut self) -> Result<(), RenderError> {
        self.env = Some(std::sync::Arc::new(super::environment(self)?));
        Ok(())
    }

    /// The compiled environment.
    pub(super) fn env(&self) -> &minijinja::Environment<'static> {
        self.env
            .as_deref()
            .expect("templates are compiled when built")
    }

    /// The embedded set with files from `dir` replacing templates of the same
    /// name. A file that matches no template is an error (a typo would
    /// otherwise be silently ignored).
    pub fn with_overrides(dir: &Path) -> Result<Self, RenderError> {
        // Compiled once, after the overrides are in.
        let mut t = Self::uncompiled();
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
                if !t.texts.contains_key(&name) {
                    return Err(RenderError::plain(format!(
                        "{}: no template is named `{name}`; the templates are: {}",
                        p.display(),
                        t.texts.keys().cloned().collect::<Vec<_>>().join(", ")
                    )));
                }
                let text = std::fs::read_to_string(&p).map_err(|e| RenderError::io(&p, e))?;
                t.texts.insert(name.clone(), text);
                t.overridden.push(name);
            }
        }
        t.overridden.sort();
        t.compile()?;
        Ok(t)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.texts.iter().map(|(n, t)| (n.as_str(), t.as_str()))
    }
}
