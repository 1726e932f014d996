//! Enablement without a boot: every unit an example's image renders under
//! etc/systemd/system with an `[Install]` section is enabled by the layer
//! itself (a `<target>.wants/` link for each `WantedBy=`) and named by its
//! preset, so no rendered unit waits for a `systemctl enable` nobody runs.

use std::path::PathBuf;

use nodeimg::blueprint::{compat::Matrix, load_file};
use nodeimg::render::{Templates, render};
use nodeimg::tree::Node;

#[test]
fn every_rendered_unit_with_an_install_section_is_enabled_by_the_layer() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("blueprints");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "yaml") {
            continue;
        }
        let bp = load_file(&path, &Matrix::builtin()).unwrap().blueprint;
        let r = render(&bp, &Templates::embedded()).unwrap();
        let entries: Vec<(String, Node)> = r.layer.entries();
        let link = |p: &str| {
            entries.iter().find_map(|(q, n)| match n {
                Node::Symlink { target } if q == p => Some(target.clone()),
                _ => None,
            })
        };
        let preset = entries
            .iter()
            .find_map(|(q, n)| match n {
                Node::File { bytes, .. }
                    if q == "usr/lib/systemd/system-preset/50-nodeimg.preset" =>
                {
                    Some(String::from_utf8(bytes.clone()).unwrap())
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("{}: no preset", bp.name()));
        for (p, n) in &entries {
            let Some(unit) = p.strip_prefix("etc/systemd/system/") else {
                continue;
            };
            let Node::File { bytes, .. } = n else {
                continue;
            };
            if unit.contains('/') {
                continue;
            }
            let text = String::from_utf8_lossy(bytes);
            let wanted_by: Vec<&str> = text
                .lines()
                .filter_map(|l| l.strip_prefix("WantedBy="))
                .flat_map(str::split_whitespace)
                .collect();
            if !text.contains("[Install]") {
                continue;
            }
            assert!(
                !wanted_by.is_empty(),
                "{}: {unit} has no WantedBy=",
                bp.name()
            );
            for target in wanted_by {
                assert_eq!(
                    link(&format!("etc/systemd/system/{target}.wants/{unit}")),
                    Some(format!("/etc/systemd/system/{unit}")),
                    "{}: {unit} is not enabled for {target}",
                    bp.name()
                );
            }
            assert!(
                preset.lines().any(|l| l == format!("enable {unit}")),
                "{}: {unit} is not in the preset:\n{preset}",
                bp.name()
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} units checked");
}
