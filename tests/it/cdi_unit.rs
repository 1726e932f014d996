//! The rendered CDI generator unit, its commands run in order against a temporary spec
//! directory with a stand-in `amd-ctk` (clearly a stand-in: no AMD GPU here) that writes its
//! spec the way each AMD Container Toolkit release does: in place (`os.Create`, then the
//! JSON), at `--output` + `amd.json` (1.0), `--output` + `/amd.json` (1.1, 1.2) or at
//! `--output` itself (1.3, custom file names). Half way through writing it records every
//! spec a CDI runtime would read in the directory at that moment.

use std::path::Path;

use crate::support::{Variant, rendered};

const UNIT: &str = "etc/systemd/system/nodeimg-cdi-generate.service";

/// A stand-in amd-ctk: `$1 $2` = `cdi generate`, `$3` = `--output=…`; `MODE` picks the
/// release's reading of `--output`; `SEEN` is where it records the spec directory's specs.
const AMD_CTK: &str = r#"#!/bin/sh
[ "$1 $2" = "cdi generate" ] || exit 2
out=${3#--output=}
case "$MODE" in
  prefix) file="${out}amd.json" ;;
  folder) file="${out}/amd.json" ;;
  file) mkdir -p "$(dirname "$out")"; file="$out" ;;
esac
printf '{"cdiVersion":"0.6.0","kind":"amd.com/gpu","devices":[' > "$file" || exit 1
for f in "$SPECS"/*.json "$SPECS"/*.yaml; do
  [ -f "$f" ] && { printf '%s: ' "$f"; cat "$f"; echo; } >> "$SEEN"
done
printf '{"name":"all","containerEdits":{"deviceNodes":[{"path":"/dev/kfd"}]}}]}\n' >> "$file"
"#;

const SPEC: &str = r#"{"cdiVersion":"0.6.0","kind":"amd.com/gpu","devices":[{"name":"all","containerEdits":{"deviceNodes":[{"path":"/dev/kfd"}]}}]}"#;

/// The unit's ExecStartPre= and ExecStart= commands, in order, paths moved under `root`.
fn commands(unit: &str, specs: &Path, ctk: &Path) -> Vec<Vec<String>> {
    unit.lines()
        .filter_map(|l| {
            l.strip_prefix("ExecStartPre=")
                .or_else(|| l.strip_prefix("ExecStart="))
        })
        .map(|cmd| {
            cmd.replace("/usr/bin/amd-ctk", ctk.to_str().unwrap())
                .replace("/etc/cdi", specs.to_str().unwrap())
                .replace("/var/run/cdi", specs.to_str().unwrap())
                .split_whitespace()
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// Every release's amd-ctk writes in place; the unit still never lets a runtime read half a
/// spec, and leaves exactly the one spec it names. Seen failing on the unit that passed the
/// spec's own name as `--output`: a half-written `amd.yaml` was in the directory (1.3), and
/// 1.0–1.2 wrote under another name or not at all.
#[test]
fn amd_ctk_specs_appear_whole_under_the_name_the_unit_gives() {
    for (toolkit, mode) in [("1.0.0", "prefix"), ("1.2.0", "folder"), ("1.3.0", "file")] {
        let bp = Variant::of("mi300x-rhel")
            .set("runtime.cdi.generator", serde_json::json!("amd-ctk"))
            .set("accelerators.containerToolkit", serde_json::json!(toolkit))
            .load();
        let r = rendered(&bp);
        let unit = String::from_utf8(r.layer.file(UNIT).expect("CDI unit").to_vec()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let specs = dir.path().join("cdi");
        std::fs::create_dir(&specs).unwrap();
        let ctk = dir.path().join("amd-ctk");
        std::fs::write(&ctk, AMD_CTK).unwrap();
        std::fs::set_permissions(&ctk, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let seen = dir.path().join("seen");
        for cmd in commands(&unit, &specs, &ctk) {
            let out = std::process::Command::new(&cmd[0])
                .args(&cmd[1..])
                .env("MODE", mode)
                .env("SPECS", &specs)
                .env("SEEN", &seen)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{toolkit}: {cmd:?}: {}\n{unit}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        // While amd-ctk wrote, a runtime saw no spec or a whole one.
        let mid = std::fs::read_to_string(&seen).unwrap_or_default();
        for line in mid.lines() {
            let (path, text) = line.split_once(": ").unwrap();
            assert!(
                serde_json::from_str::<serde_json::Value>(text).is_ok(),
                "{toolkit}: {path} was half written while a runtime could read it: {text}"
            );
        }
        let left: Vec<String> = std::fs::read_dir(&specs)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, ["amd.json"], "{toolkit}: {unit}");
        let spec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(specs.join("amd.json")).unwrap())
                .unwrap();
        assert_eq!(
            spec,
            serde_json::from_str::<serde_json::Value>(SPEC).unwrap()
        );
    }
}
