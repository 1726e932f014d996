//! Embeds every file under templates/ in the binary (the tool must work at
//! first boot with nothing beside it) as a sorted (name, text) table.

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
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("templates.rs");
    std::fs::write(out, code).expect("write templates.rs");
}
