//! Embeds two things in the binary:
//!
//! - every file under templates/ (the tool must work at first boot with
//!   nothing beside it) as a sorted (name, text) table;
//! - the crates compiled into this build, in the format cargo auditable
//!   embeds (`.dep-v0` linker section: zlib-compressed JSON
//!   `{"packages":[{"name","version","source","kind"?,"dependencies"?,"root"?}],"format":1}`),
//!   so that `nodeimg build` writes the verifier's crates into the image's
//!   SBOM, and `cargo audit bin`, syft and trivy read them from any
//!   nodeimg binary. The list comes from `cargo metadata --offline
//!   --locked` with this build's features and target: the crates reachable
//!   from nodeimg through normal and build dependencies (never dev), a
//!   proc-macro and what only it pulls in counted as build-time, as cargo
//!   auditable records them.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

fn collect(dir: &Path, root: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("templates/ is readable")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            // A new file changes its folder's mtime: rebuild when one appears.
            println!("cargo:rerun-if-changed={}", p.display());
            collect(&p, root, out);
        } else {
            let rel = p
                .strip_prefix(root)
                .expect("under root")
                .to_string_lossy()
                .replace('\\', "/");
            out.push(rel);
        }
    }
}

fn main() {
    // Read at run time: `env!` would be the folder the build script was
    // compiled in, and a target folder shared by two checkouts would embed
    // the other checkout's templates.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let root = Path::new(&manifest).join("templates");
    println!("cargo:rerun-if-changed=templates");
    let mut names = Vec::new();
    collect(&root, &root, &mut names);
    let mut code = String::from("pub const EMBEDDED: &[(&str, &str)] = &[\n");
    for n in &names {
        println!("cargo:rerun-if-changed=templates/{n}");
        code.push_str(&format!(
            "    ({n:?}, include_str!({:?})),\n",
            root.join(n).to_string_lossy()
        ));
    }
    code.push_str("];\n");
    let out_dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    let out = Path::new(&out_dir).join("templates.rs");
    std::fs::write(out, code).expect("write templates.rs");
    embed_crates(Path::new(&manifest), Path::new(&out_dir));
    embed_commit(Path::new(&manifest));
    embed_examples(Path::new(&manifest), Path::new(&out_dir));
}

/// `OUT_DIR/examples.rs`: the example blueprints (`blueprints/*.yaml`) and
/// the files they refer to (`blueprints/certs`, `blueprints/overlays`), for
/// `nodeimg init` to write without a checkout.
fn embed_examples(manifest_dir: &Path, out_dir: &Path) {
    let root = manifest_dir.join("blueprints");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut examples: Vec<String> = std::fs::read_dir(&root)
        .expect("blueprints/ is readable")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    examples.sort();
    let mut files = Vec::new();
    for dir in ["certs", "overlays"] {
        collect(&root.join(dir), &root, &mut files);
    }
    let mut code = String::from("pub const EXAMPLES: &[(&str, &str)] = &[\n");
    for n in &examples {
        println!("cargo:rerun-if-changed=blueprints/{n}");
        code.push_str(&format!(
            "    ({:?}, include_str!({:?})),\n",
            n.trim_end_matches(".yaml"),
            root.join(n).to_string_lossy()
        ));
    }
    code.push_str("];\npub const REFERENCED: &[(&str, &[u8])] = &[\n");
    for n in &files {
        println!("cargo:rerun-if-changed=blueprints/{n}");
        code.push_str(&format!(
            "    ({n:?}, include_bytes!({:?})),\n",
            root.join(n).to_string_lossy()
        ));
    }
    code.push_str("];\n");
    std::fs::write(out_dir.join("examples.rs"), code).expect("write examples.rs");
}

/// `OUT_DIR/long_version.rs` for `nodeimg --version`: the version, the commit this
/// source is, the features and the target. The commit comes from
/// `NODEIMG_COMMIT` in the environment (a build from a tarball) or git, else
/// `unknown`. Rebuilt when HEAD moves (the HEAD file and the branch it names).
fn embed_commit(manifest_dir: &Path) {
    println!("cargo:rerun-if-env-changed=NODEIMG_COMMIT");
    let git = |args: &[&str]| -> Option<String> {
        let o = std::process::Command::new("git")
            .args(args)
            .current_dir(manifest_dir)
            .output()
            .ok()?;
        let text = String::from_utf8(o.stdout).ok()?.trim().to_string();
        (o.status.success() && !text.is_empty()).then_some(text)
    };
    let commit = std::env::var("NODEIMG_COMMIT").ok().or_else(|| {
        for watched in [
            git(&["rev-parse", "--git-path", "HEAD"]),
            git(&["symbolic-ref", "-q", "HEAD"])
                .and_then(|r| git(&["rev-parse", "--git-path", &r])),
            git(&["rev-parse", "--git-path", "packed-refs"]),
        ]
        .into_iter()
        .flatten()
        {
            println!(
                "cargo:rerun-if-changed={}",
                manifest_dir.join(watched).display()
            );
        }
        git(&["rev-parse", "--short=12", "HEAD"])
    });
    let features: Vec<&str> = [
        ("push", "CARGO_FEATURE_PUSH"),
        ("kube", "CARGO_FEATURE_KUBE"),
    ]
    .into_iter()
    .filter(|(_, var)| std::env::var_os(var).is_some())
    .map(|(name, _)| name)
    .collect();
    let text = format!(
        "{}\ncommit: {}\nfeatures: {}\ntarget: {}",
        std::env::var("CARGO_PKG_VERSION").expect("CARGO_PKG_VERSION"),
        commit.unwrap_or_else(|| "unknown".into()),
        if features.is_empty() {
            "none".to_string()
        } else {
            features.join(" ")
        },
        std::env::var("TARGET").expect("TARGET"),
    );
    let out_dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    std::fs::write(
        Path::new(&out_dir).join("long_version.rs"),
        format!("pub const LONG_VERSION: &str = {text:?};\n"),
    )
    .expect("write long_version.rs");
}

/// Writes `OUT_DIR/dep_v0.rs`: the `.dep-v0` static `src/main.rs`
/// includes, or nothing (with a warning) when cargo cannot list the crates.
fn embed_crates(manifest_dir: &Path, out_dir: &Path) {
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=Cargo.toml");
    let code = match crate_list(manifest_dir) {
        Ok(json) => {
            use std::io::Write as _;
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
            z.write_all(json.as_bytes()).expect("compress in memory");
            let bytes = z.finish().expect("compress in memory");
            let blob = out_dir.join("dep-v0.zlib");
            std::fs::write(&blob, &bytes).expect("write dep-v0.zlib");
            format!(
                "/// The crates compiled into this binary (see build.rs), where cargo\n\
                 /// auditable puts them: the `.dep-v0` section.\n\
                 #[used]\n\
                 #[unsafe(link_section = \".dep-v0\")]\n\
                 static AUDITABLE_VERSION_INFO: [u8; {}] = *include_bytes!({:?});\n",
                bytes.len(),
                blob.to_string_lossy()
            )
        }
        Err(e) => {
            println!(
                "cargo:warning=the list of compiled crates is not embedded ({e}); the image SBOM will name the verifier without its crates"
            );
            String::new()
        }
    };
    std::fs::write(out_dir.join("dep_v0.rs"), code).expect("write dep_v0.rs");
}

/// The crate list as cargo auditable's JSON, from `cargo metadata`.
fn crate_list(manifest_dir: &Path) -> Result<String, String> {
    use serde_json::{Value, json};
    let cargo = std::env::var("CARGO").map_err(|e| format!("CARGO: {e}"))?;
    let target = std::env::var("TARGET").map_err(|e| format!("TARGET: {e}"))?;
    // The enabled features, as cargo names them to build scripts
    // (CARGO_FEATURE_<NAME>, upper case, `-` as `_`).
    let enabled: BTreeSet<String> = std::env::vars()
        .filter_map(|(k, _)| k.strip_prefix("CARGO_FEATURE_").map(str::to_string))
        .collect();
    let run = |features: &[String]| -> Result<Value, String> {
        let mut cmd = std::process::Command::new(&cargo);
        cmd.args(["metadata", "--format-version", "1", "--offline", "--locked"])
            .arg("--manifest-path")
            .arg(manifest_dir.join("Cargo.toml"))
            .args(["--filter-platform", &target, "--no-default-features"]);
        if !features.is_empty() {
            cmd.arg("--features").arg(features.join(","));
        }
        let out = cmd
            .stderr(std::process::Stdio::piped())
            .output()
            .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(format!("cargo metadata failed: {}", err.trim()));
        }
        serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata: {e}"))
    };
    // First without features, to learn the package's feature names; then
    // with those this build enabled.
    let plain = run(&[])?;
    let root = plain["resolve"]["root"]
        .as_str()
        .ok_or("cargo metadata names no root package")?
        .to_string();
    let declared: Vec<String> = plain["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["id"] == root.as_str())
        .and_then(|p| p["features"].as_object())
        .map(|f| f.keys().cloned().collect())
        .unwrap_or_default();
    let features: Vec<String> = declared
        .into_iter()
        .filter(|f| enabled.contains(&f.to_uppercase().replace('-', "_")))
        .collect();
    let meta = if features.is_empty() {
        plain
    } else {
        run(&features)?
    };

    struct Pkg {
        name: String,
        version: String,
        source: String,
        proc_macro: bool,
    }
    let mut pkgs: HashMap<String, Pkg> = HashMap::new();
    for p in meta["packages"].as_array().ok_or("no packages")? {
        let id = p["id"].as_str().ok_or("package without id")?.to_string();
        let source = match p["source"].as_str() {
            None => "local".to_string(),
            Some(s)
                if s == "registry+https://github.com/rust-lang/crates.io-index"
                    || s == "sparse+https://index.crates.io/" =>
            {
                "crates.io".to_string()
            }
            Some(s) if s.starts_with("git+") => "git".to_string(),
            Some(_) => "registry".to_string(),
        };
        let proc_macro = p["targets"].as_array().into_iter().flatten().any(|t| {
            t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "proc-macro"))
        });
        pkgs.insert(
            id,
            Pkg {
                name: p["name"].as_str().unwrap_or_default().to_string(),
                version: p["version"].as_str().unwrap_or_default().to_string(),
                source,
                proc_macro,
            },
        );
    }
    // id → (dependency id, whether a normal (run-time) edge).
    let mut edges: HashMap<String, Vec<(String, bool)>> = HashMap::new();
    for n in meta["resolve"]["nodes"]
        .as_array()
        .ok_or("no resolve graph")?
    {
        let id = n["id"].as_str().ok_or("node without id")?.to_string();
        let mut out = Vec::new();
        for d in n["deps"].as_array().into_iter().flatten() {
            let kinds: Vec<&Value> = d["dep_kinds"].as_array().into_iter().flatten().collect();
            let normal = kinds.iter().any(|k| k["kind"].is_null());
            let build = kinds.iter().any(|k| k["kind"] == "build");
            if normal || build {
                out.push((d["pkg"].as_str().unwrap_or_default().to_string(), normal));
            }
        }
        edges.insert(id, out);
    }
    // Everything reachable, and what is reachable at run time (normal
    // edges, not into a proc-macro).
    let walk = |runtime_only: bool| -> BTreeSet<String> {
        let mut seen = BTreeSet::from([root.clone()]);
        let mut todo = vec![root.clone()];
        while let Some(id) = todo.pop() {
            for (dep, normal) in edges.get(&id).into_iter().flatten() {
                let into_macro = pkgs.get(dep).is_some_and(|p| p.proc_macro);
                if runtime_only && (!normal || into_macro) {
                    continue;
                }
                if seen.insert(dep.clone()) {
                    todo.push(dep.clone());
                }
            }
        }
        seen
    };
    let all = walk(false);
    let runtime = walk(true);
    let key = |id: &String| {
        let p = &pkgs[id];
        (p.name.clone(), p.version.clone(), p.source.clone())
    };
    let mut order: Vec<&String> = all.iter().filter(|id| pkgs.contains_key(*id)).collect();
    order.sort_by_key(|id| key(id));
    let index: BTreeMap<&String, usize> =
        order.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let mut packages = Vec::with_capacity(order.len());
    for id in &order {
        let p = &pkgs[*id];
        let mut deps: Vec<usize> = edges
            .get(*id)
            .into_iter()
            .flatten()
            .filter_map(|(d, _)| index.get(d).copied())
            .collect();
        deps.sort_unstable();
        deps.dedup();
        let mut entry = json!({"name": p.name, "version": p.version, "source": p.source});
        if !runtime.contains(*id) {
            entry["kind"] = json!("build");
        }
        if !deps.is_empty() {
            entry["dependencies"] = json!(deps);
        }
        if **id == root {
            entry["root"] = json!(true);
        }
        packages.push(entry);
    }
    Ok(json!({"packages": packages, "format": 1}).to_string())
}
