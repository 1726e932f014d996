//! The packages the blueprint pins, checked in the root: read from the
//! holds file the image's layer carries (`etc/apt/preferences.d/nodeimg-pins`,
//! priority 1001 records) against the root's dpkg database, so apply says
//! which pinned package is missing or at another version and which
//! blueprint field wants it. `--install-packages` installs what is missing
//! with the root's own apt, which the same holds file then keeps at the
//! pinned version.
//!
//! The RHEL family's versionlock list is checked with the root's own
//! `rpm -qa`; installing there is left to the pipeline's `dnf` (the README
//! says so).

use std::collections::BTreeMap;

use serde::Serialize;

use super::entry::RelPath;
use super::root::Root;
use super::steps::{Family, StepLog};

/// One pin of the holds file and what the root has of it.
#[derive(Debug, Clone, Serialize)]
pub struct Pin {
    /// The holds file's `Explanation:` (names the blueprint field).
    pub why: String,
    /// Package names or patterns (`*nvidia*`).
    pub packages: Vec<String>,
    /// Version pattern (`2.1.4-*`).
    pub version: String,
    /// Installed packages the names match, with their versions.
    pub installed: Vec<(String, String)>,
    pub ok: bool,
    pub detail: String,
}

/// Parses the apt holds file: the records with priority 1001.
pub fn apt_pins(text: &str) -> Vec<(String, Vec<String>, String)> {
    let mut out = Vec::new();
    for record in text.split("\n\n") {
        let mut why = String::new();
        let mut packages = Vec::new();
        let mut version = None;
        let mut priority = None;
        for line in record.lines() {
            if let Some(v) = line.strip_prefix("Explanation:") {
                why = v.trim().to_string();
            } else if let Some(v) = line.strip_prefix("Package:") {
                packages = v.split_whitespace().map(str::to_string).collect();
            } else if let Some(v) = line.strip_prefix("Pin: version") {
                version = Some(v.trim().to_string());
            } else if let Some(v) = line.strip_prefix("Pin-Priority:") {
                priority = v.trim().parse::<i32>().ok();
            }
        }
        if priority == Some(1001)
            && let Some(version) = version
            && !packages.is_empty()
        {
            out.push((why, packages, version));
        }
    }
    out
}

/// Installed packages from dpkg's status database: name → version.
pub fn dpkg_installed(status: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for record in status.split("\n\n") {
        let field = |name: &str| {
            record
                .lines()
                .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
        };
        if let (Some(p), Some(v), Some(s)) =
            (field("Package:"), field("Version:"), field("Status:"))
            && s.ends_with(" installed")
        {
            out.insert(p, v);
        }
    }
    out
}

/// `*` and `?` as apt's (fnmatch) patterns mean them.
pub fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Judges each pin against what is installed, as apt reads the records:
/// a package version belongs to the first record that matches both its
/// name and its version. A record holds when some installed package
/// belongs to it; an installed package whose name a record names but
/// that belongs to no record is at a version the blueprint does not pin.
pub fn judge(
    pins: Vec<(String, Vec<String>, String)>,
    installed: &BTreeMap<String, String>,
) -> Vec<Pin> {
    let matches = |pin: &(String, Vec<String>, String), name: &str, version: &str| {
        pin.1.iter().any(|p| glob(p, name)) && glob(&pin.2, version)
    };
    let owner: BTreeMap<&str, Option<usize>> = installed
        .iter()
        .map(|(n, v)| (n.as_str(), pins.iter().position(|p| matches(p, n, v))))
        .collect();
    pins.iter()
        .enumerate()
        .map(|(i, pin)| {
            let (why, packages, version) = pin.clone();
            let named = |n: &str| packages.iter().any(|p| glob(p, n));
            let have: Vec<(String, String)> = installed
                .iter()
                .filter(|(n, _)| owner[n.as_str()] == Some(i))
                .map(|(n, v)| (n.clone(), v.clone()))
                .collect();
            let wrong: Vec<String> = installed
                .iter()
                .filter(|(n, _)| named(n) && owner[n.as_str()].is_none())
                .map(|(n, v)| format!("{n} {v}"))
                .collect();
            let (ok, detail) = if !wrong.is_empty() {
                (
                    false,
                    format!(
                        "installed at another version: {} (wanted {version})",
                        wrong.join(", ")
                    ),
                )
            } else if have.is_empty() {
                (
                    false,
                    format!(
                        "not installed: none of {} (wanted at {version})",
                        packages.join(" ")
                    ),
                )
            } else {
                (true, String::new())
            };
            Pin {
                why,
                packages,
                version,
                installed: have,
                ok,
                detail,
            }
        })
        .collect()
}

/// The pins of the image now in `root`, judged. `None`: the image pins
/// nothing the root's family can check.
pub fn check(root: &Root, family: Family) -> Result<Option<Vec<Pin>>, String> {
    let read = |p: &str| -> Result<Option<String>, String> {
        let rel = RelPath::parse(p).expect("constant");
        let real = root.locate(&rel).map_err(|e| e.to_string())?;
        match crate::input::read_text(&real, 256 << 20) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(format!("{}: {e}", real.display())),
        }
    };
    match family {
        Family::Debian => {
            let Some(pins) = read("etc/apt/preferences.d/nodeimg-pins")? else {
                return Ok(None);
            };
            let Some(status) = read("var/lib/dpkg/status")? else {
                // Nothing is installed that dpkg knows of: every pin fails.
                let mut judged = judge(apt_pins(&pins), &BTreeMap::new());
                for pin in &mut judged {
                    pin.detail = format!(
                        "{}; the root has no dpkg database (var/lib/dpkg/status)",
                        pin.detail
                    );
                }
                return Ok(Some(judged));
            };
            Ok(Some(judge(apt_pins(&pins), &dpkg_installed(&status))))
        }
        Family::Rhel => {
            let Some(list) = read("etc/dnf/plugins/versionlock.list")? else {
                return Ok(None);
            };
            let out = std::process::Command::new("rpm")
                .arg("--root")
                .arg(root.dir())
                .args([
                    "-qa",
                    "--qf",
                    "%{NAME} %{EPOCHNUM}:%{VERSION}-%{RELEASE}.%{ARCH}\\n",
                ])
                .output()
                .map_err(|e| {
                    format!(
                        "cannot run rpm to read {}'s package database: {e}",
                        root.dir().display()
                    )
                })?;
            let installed: BTreeMap<String, String> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            Ok(Some(judge(versionlock_pins(&list), &installed)))
        }
    }
}

/// `name-epoch:version-release.*` lines of dnf's versionlock list.
pub fn versionlock_pins(text: &str) -> Vec<(String, Vec<String>, String)> {
    let mut why = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(c) = line.strip_prefix("# ") {
            why = c.to_string();
            continue;
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        // The name ends at the last `-` before the epoch's colon.
        if let Some(colon) = line.find(':')
            && let Some(dash) = line[..colon].rfind('-')
        {
            out.push((
                why.clone(),
                vec![line[..dash].to_string()],
                line[dash + 1..].to_string(),
            ));
        }
    }
    out
}

/// The exact names to install for the pins that fail (patterns cannot be
/// installed by name: they are reported instead).
pub fn to_install(pins: &[Pin]) -> (Vec<String>, Vec<String>) {
    let mut names = Vec::new();
    let mut by_pattern = Vec::new();
    for pin in pins.iter().filter(|p| !p.ok) {
        match pin.packages.iter().find(|p| !p.contains(['*', '?'])) {
            Some(name) => names.push(name.clone()),
            None => by_pattern.push(format!("{} ({})", pin.packages.join(" "), pin.why)),
        }
    }
    (names, by_pattern)
}

/// Installs the failing pins' packages with the root's own package
/// manager (`--install-packages`), inside the root with `/proc`, `/sys`
/// and `/dev` bound in; the image's holds then keep the pinned version.
pub fn install(root: &Root, family: Family, pins: &[Pin]) -> Option<StepLog> {
    let (names, by_pattern) = to_install(pins);
    if names.is_empty() && by_pattern.is_empty() {
        return None;
    }
    let start = std::time::Instant::now();
    let (update, install): (Option<&[&str]>, &[&str]) = match family {
        // A package's conffile the image already put there (containerd's config.toml)
        // stays the image's: dpkg would otherwise ask, and fail on the closed stdin.
        Family::Debian => (
            Some(&["apt-get", "update", "-q"]),
            &[
                "apt-get",
                "install",
                "-y",
                "-q",
                "--no-install-recommends",
                "-o",
                "Dpkg::Options::=--force-confdef",
                "-o",
                "Dpkg::Options::=--force-confold",
            ],
        ),
        Family::Rhel => (None, &["dnf", "install", "-y"]),
    };
    let mut argv: Vec<String> = install.iter().map(|a| a.to_string()).collect();
    argv.extend(names.iter().cloned());
    let mut log = StepLog {
        id: "packages",
        command: argv.join(" "),
        status: "ran",
        exit: None,
        millis: 0,
        detail: String::new(),
    };
    let run = |argv: &[String]| super::steps::execute(root, argv, true, 2048);
    let outcome = if names.is_empty() {
        Err(String::new())
    } else {
        match update.map(|u| run(&u.iter().map(|a| a.to_string()).collect::<Vec<_>>())) {
            Some(Ok((Some(0), _))) | None => run(&argv),
            Some(Ok((_, out))) => Err(format!(
                "{} failed inside the root: {out}",
                update.unwrap_or_default().join(" ")
            )),
            Some(Err(e)) => Err(e),
        }
    };
    match outcome {
        Ok((code, out)) => {
            log.exit = code;
            log.detail = out;
            if code != Some(0) {
                log.status = "failed";
            }
        }
        Err(e) => {
            log.status = "failed";
            log.detail = e;
        }
    }
    if !by_pattern.is_empty() {
        log.status = "failed";
        log.detail = format!(
            "{}; pinned by pattern only, name the package to install: {}",
            log.detail,
            by_pattern.join("; ")
        );
    }
    log.millis = start.elapsed().as_millis();
    Some(log)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_apt_means_them() {
        assert!(glob("*nvidia*", "libnvidia-compute-580"));
        assert!(glob("2.1.4-*", "2.1.4-0ubuntu1"));
        assert!(!glob("2.1.4-*", "2.1.40-1"));
        assert!(glob("*", ""));
        assert!(!glob("kubelet", "kubeadm"));
    }

    #[test]
    fn pins_are_the_1001_records_and_judged_by_what_dpkg_has() {
        let pins = "Explanation: containerd 2.1.4 (runtime.containerd.version)\nPackage: containerd containerd.io\nPin: version 2.1.4-*\nPin-Priority: 1001\n\nExplanation: no other kernel\nPackage: linux-image-*\nPin: version *\nPin-Priority: -1\n";
        let parsed = apt_pins(pins);
        assert_eq!(parsed.len(), 1);
        let status = "Package: containerd\nStatus: install ok installed\nVersion: 1.7.24~ds1-6\n\nPackage: zstd\nStatus: deinstall ok config-files\nVersion: 1\n";
        let installed = dpkg_installed(status);
        assert_eq!(installed.len(), 1);
        let judged = judge(parsed, &installed);
        assert!(!judged[0].ok);
        assert!(
            judged[0].detail.contains("containerd 1.7.24~ds1-6"),
            "{}",
            judged[0].detail
        );
        assert_eq!(to_install(&judged).0, ["containerd"]);
    }

    #[test]
    fn a_package_belongs_to_the_first_record_that_matches_its_version() {
        // The driver's `*nvidia*` record names the toolkit too; the toolkit's
        // own record, later, is the one its version matches (as apt decides).
        let pins = vec![
            (
                "driver".to_string(),
                vec!["*nvidia*".to_string()],
                "580.105.08-*".to_string(),
            ),
            (
                "toolkit".to_string(),
                vec!["nvidia-container-toolkit".to_string()],
                "1.18.1-*".to_string(),
            ),
        ];
        let installed: BTreeMap<String, String> = [
            ("nvidia-driver-580".to_string(), "580.105.08-1".to_string()),
            (
                "nvidia-container-toolkit".to_string(),
                "1.18.1-1".to_string(),
            ),
        ]
        .into();
        let judged = judge(pins.clone(), &installed);
        assert!(judged.iter().all(|p| p.ok), "{judged:?}");
        let mut old = installed.clone();
        old.insert("nvidia-container-toolkit".into(), "1.17.0-1".into());
        let judged = judge(pins, &old);
        assert!(
            !judged[0].ok && !judged[1].ok,
            "an unpinned toolkit fails both records that name it: {judged:?}"
        );
    }

    #[test]
    fn versionlock_lines_split_name_from_version() {
        let pins =
            versionlock_pins("# kernel 5.14 (os.kernel)\nkernel-core-0:5.14.0-427.13.1.el9_4.*\n");
        assert_eq!(
            pins,
            [(
                "kernel 5.14 (os.kernel)".to_string(),
                vec!["kernel-core".to_string()],
                "0:5.14.0-427.13.1.el9_4.*".to_string()
            )]
        );
    }
}
