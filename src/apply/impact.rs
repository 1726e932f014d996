//! What an in-place apply does after the files are in place, decided by
//! the change's impact — the class `nodeimg diff` prints and `rollout plan`
//! plans with, computed the same way: both images' locks loaded as checked
//! blueprints, both rendered, [`crate::diff::compare`].
//!
//! `live` and `drain` changes take effect by reloading systemd and running
//! the action of each changed path's row in [`ACTIONS`] (a restart of the
//! daemon that reads it, `sysctl --system`, a udev reload); `reboot`
//! changes wait for the next boot, which [`super::trial`] assesses.
//! Commands reach the node's systemd directly when the root is `/`, and
//! through `nsenter --target 1` when it is the host's root mounted in a
//! container (the system-upgrade-controller's `/host`).

use std::time::Instant;

use serde::Serialize;

use super::entry::RelPath;
use super::root::Root;
use super::steps::Family;
use super::transaction::Outcome;
use crate::blueprint::Blueprint;
use crate::diff::impact::Impact;

/// A root's lock, loaded as a checked blueprint.
pub struct Lock(Blueprint);

impl Lock {
    /// The lock in the root (`None`: no nodeimg image there yet).
    pub fn read(root: &Root) -> Result<Option<Lock>, String> {
        let real = root
            .locate(&RelPath::parse(super::LOCK).expect("constant"))
            .map_err(|e| e.to_string())?;
        if !real.exists() {
            return Ok(None);
        }
        crate::blueprint::identity::lock::load_lock_file(&real)
            .map(|bp| Some(Lock(bp)))
            .map_err(|diags| {
                let first = diags.first().map(|d| d.to_string()).unwrap_or_default();
                format!(
                    "{}: the image's lock does not load: {first}",
                    real.display()
                )
            })
    }

    /// The distribution family whose steps the image's root takes.
    pub fn family(&self) -> Family {
        if self.0.spec().os.distro.is_rhel_family() {
            Family::Rhel
        } else {
            Family::Debian
        }
    }

    pub fn blueprint(&self) -> &Blueprint {
        &self.0
    }

    pub fn spec(&self) -> &crate::blueprint::Spec {
        self.0.spec()
    }

    /// `rollout.bootAttempts`, or the default.
    pub fn boot_attempts(&self) -> u32 {
        self.0
            .spec()
            .rollout
            .as_ref()
            .map_or(super::trial::DEFAULT_ATTEMPTS, |r| r.boot_attempts)
    }
}

/// The impact decided for an in-place apply and the paths it changed,
/// kept (`impact.json`) until its actions or trial have happened.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decided {
    pub impact: Impact,
    pub reasons: Vec<String>,
    pub put: Vec<RelPath>,
    pub removed: Vec<RelPath>,
}

/// The impact of going from `before` to `after`, with the reasons `diff`
/// gives. Without both locks nothing is known of the change: reboot.
pub fn of_change(
    before: Option<&Lock>,
    after: Option<&Lock>,
    outcome: &Outcome,
) -> (Impact, Vec<String>) {
    let (Some(before), Some(after)) = (before, after) else {
        return (
            Impact::Reboot,
            vec!["no nodeimg image was applied before: the whole image is new".into()],
        );
    };
    let templates = crate::render::templates::Templates::embedded();
    let (old, new) = match (
        crate::render::render(&before.0, &templates),
        crate::render::render(&after.0, &templates),
    ) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(e), _) | (_, Err(e)) => {
            return (
                Impact::Reboot,
                vec![format!("an image's lock does not render: {e}")],
            );
        }
    };
    let report = crate::diff::compare(&before.0, &old, &after.0, &new);
    match report.impact {
        Some(i) => (i, report.reasons),
        // Same blueprint: only the verifier or the overlay's bytes moved.
        None if outcome.put.is_empty() && outcome.removed.is_empty() => (Impact::Live, vec!["nothing changed".into()]),
        None => (Impact::Live, vec!["the blueprint is the same; the files that changed are read when their program next starts".into()]),
    }
}

/// What to run when a path under a prefix changed in place.
#[derive(Debug, Clone, Copy)]
pub enum Action {
    /// `systemctl try-restart UNIT…` (only units that run).
    Restart(&'static [&'static str]),
    /// `systemctl try-reload-or-restart UNIT…`.
    Reload(&'static [&'static str]),
    Run(&'static [&'static str]),
}

/// Changed path prefix → action. The plan's impact column says the same in
/// words (`render::plan`); paths not listed are read when their program
/// next starts or at the next boot (verify, units, enablement, holds).
#[rustfmt::skip]
pub const ACTIONS: &[(&str, Action)] = &[
    ("etc/sysctl.d/", Action::Run(&["sysctl", "--system"])),
    ("etc/tmpfiles.d/", Action::Run(&["systemd-tmpfiles", "--create"])),
    ("etc/udev/rules.d/", Action::Run(&["udevadm", "control", "--reload"])),
    ("etc/containerd/", Action::Restart(&["containerd.service"])),
    ("etc/systemd/system/containerd.service.d/", Action::Restart(&["containerd.service"])),
    ("etc/kubernetes/kubelet.conf.d/", Action::Restart(&["kubelet.service"])),
    ("var/lib/kubelet/config.yaml", Action::Restart(&["kubelet.service"])),
    ("etc/chrony/", Action::Restart(&["chrony.service"])),
    ("etc/chrony.conf", Action::Restart(&["chronyd.service"])),
    ("etc/systemd/journald.conf.d/", Action::Restart(&["systemd-journald.service"])),
    ("etc/systemd/resolved.conf.d/", Action::Restart(&["systemd-resolved.service"])),
    ("etc/NetworkManager/conf.d/", Action::Run(&["nmcli", "general", "reload"])),
    ("etc/ssh/sshd_config.d/", Action::Reload(&["ssh.service", "sshd.service"])),
    ("etc/audit/rules.d/", Action::Run(&["augenrules", "--load"])),
];

/// One runtime action and how it went.
#[derive(Debug, Clone, Serialize)]
pub struct ActionLog {
    pub command: String,
    /// The changed paths it is for.
    pub because: Vec<String>,
    pub ok: bool,
    pub exit: Option<i32>,
    pub millis: u128,
    pub detail: String,
}

/// `systemctl daemon-reload`, then each action once, for the changed paths.
pub fn act(root: &Root, outcome: &Outcome, print: bool) -> Vec<ActionLog> {
    let changed: Vec<&RelPath> = outcome.put.iter().chain(&outcome.removed).collect();
    let mut planned: Vec<(Vec<String>, Vec<String>)> = vec![(
        vec!["systemctl".into(), "daemon-reload".into()],
        vec!["unit files are read again".into()],
    )];
    for (prefix, action) in ACTIONS {
        let because: Vec<String> = changed
            .iter()
            .filter(|p| p.as_str().starts_with(prefix))
            .map(|p| p.to_string())
            .collect();
        if because.is_empty() {
            continue;
        }
        let argv: Vec<String> = match action {
            Action::Restart(units) => ["systemctl", "try-restart"]
                .iter()
                .chain(units.iter())
                .map(|s| s.to_string())
                .collect(),
            Action::Reload(units) => ["systemctl", "try-reload-or-restart"]
                .iter()
                .chain(units.iter())
                .map(|s| s.to_string())
                .collect(),
            Action::Run(argv) => argv.iter().map(|s| s.to_string()).collect(),
        };
        match planned.iter_mut().find(|(a, _)| *a == argv) {
            Some((_, b)) => b.extend(because),
            None => planned.push((argv, because)),
        }
    }
    planned
        .into_iter()
        .map(|(argv, because)| run(root, &argv, because, print))
        .collect()
}

/// `systemctl --no-block reboot` on the node.
pub fn reboot(root: &Root, print: bool) -> ActionLog {
    run(
        root,
        &["systemctl".into(), "--no-block".into(), "reboot".into()],
        vec!["the change takes effect at boot".into()],
        print,
    )
}

/// `--print-actions` from the environment (the boot tests' stand-in
/// for a node's systemd is the one in the container they boot).
pub const PRINT_ACTIONS: &str = "NODEIMG_APPLY_PRINT_ACTIONS";

fn run(root: &Root, argv: &[String], because: Vec<String>, print: bool) -> ActionLog {
    let start = Instant::now();
    let command = argv.join(" ");
    if print {
        return ActionLog {
            command,
            because,
            ok: true,
            exit: None,
            millis: 0,
            detail: "printed, not run (--print-actions)".into(),
        };
    }
    // The host's root in a container: its systemd is PID 1's.
    let out = super::enter::command(&root.place_for_actions(), argv)
        .and_then(|mut cmd| cmd.stdin(std::process::Stdio::null()).output());
    let millis = start.elapsed().as_millis();
    match out {
        Ok(o) => ActionLog {
            command,
            because,
            ok: o.status.success(),
            exit: o.status.code(),
            millis,
            detail: String::from_utf8_lossy(&o.stderr)
                .trim()
                .chars()
                .take(2048)
                .collect(),
        },
        Err(e) => ActionLog {
            command,
            because,
            ok: false,
            exit: None,
            millis,
            detail: format!("cannot run {}: {e}", argv[0]),
        },
    }
}
