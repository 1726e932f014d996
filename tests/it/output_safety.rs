//! Nothing a user has is lost: `render -o`, `build -o`, `build --cluster`
//! and the default `build` output replace only what nodeimg wrote, refuse
//! folders holding the blueprint or its inputs, leave no staging debris,
//! lock the output against a concurrent run, and files written with `-o`
//! honour the umask. Each case is a reproduction of a data-loss report.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::root;

fn nodeimg_in(dir: &Path, args: &[&str]) -> Output {
    crate::support::cmd()
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn bp(name: &str) -> String {
    root()
        .join("blueprints")
        .join(format!("{name}.yaml"))
        .to_string_lossy()
        .into_owned()
}

/// Copies blueprints/ (examples, overlays, certs) into `dir`.
fn copy_examples(dir: &Path) {
    for e in walkdir::WalkDir::new(root().join("blueprints")) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(root().join("blueprints")).unwrap();
        let to = dir.join(rel);
        if e.file_type().is_dir() {
            fs::create_dir_all(&to).unwrap();
        } else if e.file_type().is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(e.path()).unwrap(), &to).unwrap();
        } else {
            fs::copy(e.path(), &to).unwrap();
        }
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn render_refuses_a_folder_it_did_not_write() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("fakehome");
    fs::create_dir_all(home.join(".ssh")).unwrap();
    fs::write(home.join(".ssh/id_ed25519"), "key").unwrap();
    fs::write(home.join("thesis.tex"), "doc").unwrap();
    let o = nodeimg_in(
        tmp.path(),
        &["render", &bp("cpu-minimal"), "-o", "fakehome"],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not written by nodeimg"),
        "{}",
        stderr(&o)
    );
    assert_eq!(names(&home), [".ssh", "thesis.tex"]);
    assert_eq!(fs::read_to_string(home.join("thesis.tex")).unwrap(), "doc");
    assert_eq!(
        names(tmp.path()),
        ["fakehome"],
        "nothing staged or locked left behind"
    );
}

#[test]
fn render_into_the_blueprint_folder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let x = tmp.path().join("x");
    fs::create_dir(&x).unwrap();
    copy_examples(&x);
    fs::write(x.join("NOTES.txt"), "precious").unwrap();
    let before = names(&x);
    let o = nodeimg_in(tmp.path(), &["render", "x/h100-sxm-ubuntu.yaml", "-o", "x"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert_eq!(names(&x), before);
    // Also when the folder is otherwise empty: only the blueprint is there.
    let proj = tmp.path().join("proj");
    fs::create_dir(&proj).unwrap();
    fs::copy(bp("cpu-minimal"), proj.join("bp.yaml")).unwrap();
    let o = nodeimg_in(tmp.path(), &["render", "proj/bp.yaml", "-o", "proj"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(proj.join("bp.yaml").is_file());
    // An output inside the overlay folder would end up in the next image.
    let o = nodeimg_in(
        tmp.path(),
        &[
            "render",
            "x/h100-sxm-ubuntu.yaml",
            "-o",
            "x/overlays/h100/out",
        ],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("lies inside"), "{}", stderr(&o));
    assert!(!x.join("overlays/h100/out").exists());
}

#[test]
fn a_regular_file_as_the_target_is_left_in_place() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("important.txt"), "keep").unwrap();
    for args in [
        vec!["render", &bp("cpu-minimal"), "-o", "important.txt"],
        vec!["build", &bp("cpu-minimal"), "-o", "important.txt"],
    ] {
        let o = nodeimg_in(tmp.path(), &args);
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert!(stderr(&o).contains("not a folder"), "{}", stderr(&o));
        assert_eq!(
            fs::read_to_string(tmp.path().join("important.txt")).unwrap(),
            "keep"
        );
        assert_eq!(names(tmp.path()), ["important.txt"]);
    }
}

#[test]
fn build_cluster_refuses_a_user_folder_before_building() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("h");
    fs::create_dir(&home).unwrap();
    fs::write(home.join(".bashrc"), "secret").unwrap();
    let o = nodeimg_in(
        tmp.path(),
        &["build", &bp("h100-sxm-ubuntu"), "-o", "o", "--cluster", "h"],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert_eq!(fs::read_to_string(home.join(".bashrc")).unwrap(), "secret");
    assert!(
        !tmp.path().join("o").exists(),
        "no image built before the refusal"
    );
    // A new folder gets the files directly, and can be replaced next time.
    for _ in 0..2 {
        let o = nodeimg_in(
            tmp.path(),
            &["build", &bp("h100-sxm-ubuntu"), "-o", "o", "--cluster", "c"],
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    assert!(tmp.path().join("c/gpu-operator-values.yaml").is_file());
    assert!(tmp.path().join("c/.nodeimg-output").is_file());
}

#[test]
fn the_readme_sequence_keeps_the_image_built_into_the_render_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let b = bp("cpu-minimal");
    for (args, want) in [
        (vec!["render", &b, "-o", "out/"], 0),
        (vec!["build", &b, "-o", "out/oci"], 0),
        (vec!["render", &b, "-o", "out/"], 2),
    ] {
        let o = nodeimg_in(tmp.path(), &args);
        assert_eq!(code(&o), want, "{args:?}: {}", stderr(&o));
    }
    assert!(tmp.path().join("out/oci/index.json").is_file());
    // Re-rendering and rebuilding into their own folders just works.
    for args in [
        vec!["render", &b, "-o", "r"],
        vec!["render", &b, "-o", "r"],
        vec!["build", &b, "-o", "out/oci"],
    ] {
        let o = nodeimg_in(tmp.path(), &args);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
    }
    // A render folder is not an image layout, and the other way round.
    let o = nodeimg_in(tmp.path(), &["build", &b, "-o", "r"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let o = nodeimg_in(tmp.path(), &["render", &b, "-o", "out/oci"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

#[test]
fn build_without_output_writes_the_documented_default() {
    let tmp = tempfile::tempdir().unwrap();
    fs::copy(bp("cpu-minimal"), tmp.path().join("bp.yaml")).unwrap();
    for _ in 0..2 {
        let o = nodeimg_in(tmp.path(), &["build", "bp.yaml"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    let out = tmp.path().join("out/cpu-minimal");
    assert!(out.join("index.json").is_file());
    assert!(out.join("oci-layout").is_file());
    // The same refusal as with -o.
    fs::remove_dir_all(&out).unwrap();
    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("mine"), "x").unwrap();
    let o = nodeimg_in(tmp.path(), &["build", "bp.yaml"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(out.join("mine").is_file());
}

#[test]
fn stale_staging_folders_of_killed_builds_are_removed() {
    let tmp = tempfile::tempdir().unwrap();
    // What a SIGKILLed build leaves: a staging folder carrying the marker.
    let stale = tmp.path().join(".oci.nodeimg-staging-Ab12Cd");
    fs::create_dir_all(stale.join("blobs/sha256")).unwrap();
    fs::write(
        stale.join(".nodeimg-output"),
        "nodeimg build\n# Written by nodeimg\n",
    )
    .unwrap();
    fs::write(stale.join("blobs/sha256/partial"), vec![0u8; 4096]).unwrap();
    let o = nodeimg_in(tmp.path(), &["build", &bp("cpu-minimal"), "-o", "oci"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(names(tmp.path()), ["oci"]);
}

#[test]
fn a_build_into_an_output_another_run_is_writing_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let out: PathBuf = tmp.path().join("oci");
    let held = nodeimg::atomic::StagedDir::new(&out, nodeimg::atomic::Kind::Layout, &[]).unwrap();
    let o = nodeimg_in(tmp.path(), &["build", &bp("cpu-minimal"), "-o", "oci"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("another nodeimg is writing"),
        "{}",
        stderr(&o)
    );
    drop(held);
    let o = nodeimg_in(tmp.path(), &["build", &bp("cpu-minimal"), "-o", "oci"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn files_written_with_output_honour_the_umask() {
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "umask 022 && exec {} schema -o schema.json",
            crate::support::BIN
        ))
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mode = fs::metadata(tmp.path().join("schema.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644, "readable by others, as umask 022 says");
}
