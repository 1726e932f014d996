//! What build, render, diff and explain all start from: the compatibility
//! matrix (built in, extended by `--matrix`), the templates (built in,
//! overridden by `--templates`) and a blueprint that loaded without errors;
//! and what verify and accept judge a node against: a blueprint or the lock
//! an image carries.

use std::path::{Path, PathBuf};

use super::{Env, Failure, OrUnusable};
use crate::blueprint::compat::Matrix;
use crate::blueprint::diagnostic::{Collector, Diagnostic};
use crate::blueprint::identity::FileDigests;
use crate::blueprint::yaml_path::YamlPath;
use crate::blueprint::{self, Blueprint, Loaded, source};
use crate::cli::{DEFAULT_LOCK, MatrixArg, TemplatesArg};
use crate::render::Templates;
use crate::stdio::Input;

/// The inputs of a command that renders.
pub struct Prepared {
    pub matrix: Matrix,
    pub templates: Templates,
    pub blueprint: Blueprint,
}

impl Prepared {
    /// Matrix, templates (`None`: the built-in ones) and the blueprint in `file`.
    pub fn load(
        file: &Input,
        matrix: &MatrixArg,
        templates: Option<&TemplatesArg>,
        env: &mut Env<'_>,
    ) -> Result<Self, Failure> {
        Self::load_with(file, matrix, templates, None, env)
    }

    /// [`load`](Self::load), relative paths of a blueprint on standard input resolved
    /// against `stdin_base` (`diff --base-dir`).
    pub fn load_based(
        file: &Input,
        stdin_base: Option<&Path>,
        matrix: &MatrixArg,
        templates: Option<&TemplatesArg>,
        env: &mut Env<'_>,
    ) -> Result<Self, Failure> {
        Self::load_full(file, matrix, templates, None, stdin_base, env)
    }

    /// [`load`](Self::load), reusing the overlay file digests a build
    /// remembered.
    pub fn load_with(
        file: &Input,
        matrix: &MatrixArg,
        templates: Option<&TemplatesArg>,
        digests: Option<&FileDigests>,
        env: &mut Env<'_>,
    ) -> Result<Self, Failure> {
        Self::load_full(file, matrix, templates, digests, None, env)
    }

    fn load_full(
        file: &Input,
        matrix: &MatrixArg,
        templates: Option<&TemplatesArg>,
        digests: Option<&FileDigests>,
        stdin_base: Option<&Path>,
        env: &mut Env<'_>,
    ) -> Result<Self, Failure> {
        // The blueprint schema's validator is built, and the built-in
        // templates compiled, while the matrix and the blueprint are read.
        std::thread::spawn(crate::blueprint::schema::prepare);
        let overrides = templates.and_then(|t| t.templates.as_deref());
        if overrides.is_none() {
            std::thread::spawn(|| drop(Templates::embedded()));
        }
        let matrix = self::matrix(matrix, env)?;
        let templates = match overrides {
            None => None,
            Some(dir) => {
                let t = Templates::with_overrides(dir).unusable()?;
                for name in &t.overridden {
                    env.note(&format!("template {name} overridden"));
                }
                Some(t)
            }
        };
        let blueprint = valid_with(file, &matrix, digests, stdin_base, env)?;
        let templates = templates.unwrap_or_else(Templates::embedded);
        Ok(Self {
            matrix,
            templates,
            blueprint,
        })
    }

    /// What a render or build reads, so that no output replaces it: the
    /// blueprint and the files it names, `--templates` and `--matrix`.
    pub fn inputs(&self, templates: &TemplatesArg, matrix: &MatrixArg) -> Vec<PathBuf> {
        let mut v = crate::render::inputs(&self.blueprint);
        v.extend(templates.templates.iter().cloned());
        v.extend(matrix.matrix.iter().cloned());
        v
    }

    /// Another blueprint, checked against the same matrix (`diff`'s second side).
    pub fn another(&self, file: &Input, env: &mut Env<'_>) -> Result<Blueprint, Failure> {
        valid(file, &self.matrix, env)
    }

    /// [`another`](Self::another), relative paths of standard input resolved against
    /// `stdin_base` (`diff --base-dir`).
    pub fn another_based(
        &self,
        file: &Input,
        stdin_base: Option<&Path>,
        env: &mut Env<'_>,
    ) -> Result<Blueprint, Failure> {
        valid_with(file, &self.matrix, None, stdin_base, env)
    }
}

/// The built-in matrix, extended by `--matrix` when given.
pub fn matrix(arg: &MatrixArg, env: &mut Env<'_>) -> Result<Matrix, Failure> {
    let mut m = Matrix::builtin();
    if let Some(path) = &arg.matrix {
        m.extend_from_file(path).unusable()?;
    }
    env.detail(&format!(
        "compatibility matrix: {} CUDA rows, {} ROCm rows, {} GPU models, {} rules{}",
        m.cuda_minimum_driver.len(),
        m.rocm.len(),
        m.models.len(),
        m.rules.len(),
        arg.matrix
            .as_ref()
            .map(|p| format!(" (with {})", p.display()))
            .unwrap_or_default()
    ));
    Ok(m)
}

/// Loads a blueprint from a file or standard input. From standard input,
/// relative paths inside it (overlay, certificates) are resolved against the
/// current folder.
pub fn load(file: &Input, matrix: &Matrix) -> Result<Loaded, Vec<Diagnostic>> {
    load_with(file, matrix, None, None)
}

/// [`load`], reusing the overlay file digests a build remembered.
fn load_with(
    file: &Input,
    matrix: &Matrix,
    digests: Option<&FileDigests>,
    stdin_base: Option<&Path>,
) -> Result<Loaded, Vec<Diagnostic>> {
    match file {
        Input::File(path) => blueprint::load_file_with(path, matrix, digests),
        Input::Stdin => {
            let bytes = file.read(source::MAX_BYTES as u64).map_err(|e| {
                let mut c = Collector::new(file.name(), None);
                c.error_pos(
                    "unreadable",
                    &YamlPath::root(),
                    None,
                    format!("cannot read standard input: {e}"),
                );
                c.finish()
            })?;
            let base = stdin_base.unwrap_or(Path::new("."));
            blueprint::load_bytes_with(&bytes, file.name(), Some(base), matrix, digests)
        }
    }
}

/// True when the diagnostics say the file itself could not be read (missing,
/// a folder, too large): unusable input rather than an invalid blueprint.
pub fn unreadable(diagnostics: &[Diagnostic]) -> bool {
    matches!(diagnostics, [d] if d.code == "unreadable" && d.line.is_none())
}

/// A blueprint the command needs valid: warnings become notes, errors a
/// [`Failure`] (exit 2).
pub fn valid(file: &Input, matrix: &Matrix, env: &mut Env<'_>) -> Result<Blueprint, Failure> {
    valid_with(file, matrix, None, None, env)
}

fn valid_with(
    file: &Input,
    matrix: &Matrix,
    digests: Option<&FileDigests>,
    stdin_base: Option<&Path>,
    env: &mut Env<'_>,
) -> Result<Blueprint, Failure> {
    let loaded = load_with(file, matrix, digests, stdin_base).map_err(Failure::invalid)?;
    if !env.quiet {
        for w in &loaded.warnings {
            env.diagnostic(w);
        }
    }
    Ok(loaded.blueprint)
}

/// The blueprint a node is judged against (verify, `verify --phase cluster`,
/// accept): a blueprint file, or the lock an image carries. Relative paths
/// inside a blueprint (overlay, certificates) name files on the build machine,
/// so they are not looked for. A lock was validated at build time (maybe with
/// a site matrix): it is loaded as trusted input with the matrix entries beside
/// it, checked against the id beside it.
pub fn judged_against(input: &Input, matrix: &Matrix) -> Result<Blueprint, Failure> {
    let bytes = input.read(source::MAX_BYTES as u64).map_err(|e| {
        let hint = match input {
            Input::File(p)
                if e.kind() == std::io::ErrorKind::NotFound
                    && p.ends_with(DEFAULT_LOCK.trim_start_matches('/')) =>
            {
                "; on a machine not built with nodeimg, name the blueprint with --blueprint FILE"
            }
            _ => "",
        };
        Failure::unusable(format!("blueprint {input}: {e}{hint}"))
    })?;
    let path = input.name();
    let loaded = if blueprint::identity::is_lock(path) {
        blueprint::identity::load_lock_beside(&bytes, path)
    } else {
        blueprint::load_bytes(&bytes, path, None, matrix).map(|l| l.blueprint)
    };
    loaded.map_err(|diagnostics| Failure {
        messages: vec![format!(
            "blueprint {input} is not usable ({} problem(s))",
            diagnostics.len()
        )],
        ..Failure::invalid(diagnostics)
    })
}
