//! `nodeimg apply`: from an OCI image to a root that boots with it.
//!
//! Two ways, one transaction ([`transaction`]):
//! - **onto a root** (`--root DIR`), for image pipelines: the layers land
//!   in DIR by the OCI layer rules, then the distribution's post-apply
//!   steps run inside DIR with DIR's own programs ([`steps`]) and the
//!   pinned packages are checked ([`packages`]);
//! - **in place** (`--in-place`), on a running node: the same, and then what
//!   the change's impact asks ([`impact`], the class `diff` and `rollout
//!   plan` report): `live` and `drain` reload and restart the units whose
//!   files changed, `reboot` puts the new image on trial ([`trial`]) and
//!   reboots; a boot whose verify fails `rollout.bootAttempts` times goes
//!   back to the previous image by itself.
//!
//! Either way the previous state is kept for `--rollback`, a kill at any
//! step is completed by the next run, and re-applying the current image
//! changes nothing.

pub mod check;
pub mod enter;
pub mod entry;
pub mod gate;
pub mod impact;
pub mod packages;
pub mod receipt;
pub mod root;
pub mod steps;
pub mod transaction;
pub mod trial;
mod unpack;

use std::path::{Path, PathBuf};

use serde::Serialize;

use self::root::Root;
use self::steps::{Selection, StepLog};
use self::transaction::{Outcome, State};
use crate::diff::impact::Impact;
use crate::package::layout_reader::LocalImage;

/// Where the image's lock lies in a root.
pub const LOCK: &str = "etc/nodeimg/blueprint.lock.json";

/// What to do.
#[derive(Debug, Clone)]
pub struct Options {
    pub root: PathBuf,
    /// A running node: act on the change's impact.
    pub in_place: bool,
    pub steps: Selection,
    /// Install missing pinned packages with the root's own package manager.
    pub install_packages: bool,
    /// In place, reboot-impact: stage and arm the trial, but leave the reboot to the caller.
    pub no_reboot: bool,
    /// In place: list runtime actions instead of running them.
    pub print_actions: bool,
    /// Judge the pinned packages (off: a root whose packages are not the
    /// node's, or a pipeline that installs them after apply).
    pub check_packages: bool,
    /// Check the applied root statically (onto a root only).
    pub check_root: bool,
    /// The trust policy given on the command line (`--key`, `--trust-policy`); without
    /// it, the root's own.
    pub trust: Option<crate::trust::TrustPolicy>,
}

/// Why apply stopped without a verdict: the input cannot be used (exit 2),
/// or the root could not be changed (exit 1, the journal says what is left).
#[derive(Debug)]
pub enum Error {
    Unusable(String),
    Failed(String),
}

/// What an apply or rollback did, for the text and JSON reports.
#[derive(Debug, Serialize)]
pub struct Report {
    pub op: &'static str,
    pub root: PathBuf,
    pub image: Option<String>,
    pub mode: &'static str,
    #[serde(flatten)]
    pub outcome: Outcome,
    /// The image against the trust policy, when there is one.
    pub signature: Option<gate::Judged>,
    /// The change's impact (in place, with the lock of the image before).
    pub impact: Option<Impact>,
    pub reasons: Vec<String>,
    pub steps: Vec<StepLog>,
    pub packages: Option<Vec<packages::Pin>>,
    /// Package installation, when asked.
    pub installed: Option<StepLog>,
    /// The static check of the applied root (onto a root, not in place).
    pub root_checks: Vec<check::RootCheck>,
    /// Runtime actions in place (daemon-reload, restarts).
    pub actions: Vec<impact::ActionLog>,
    /// A trial was armed and the node reboots (or is to be rebooted).
    pub trial: Option<trial::Trial>,
    pub reboot: bool,
}

impl Report {
    fn new(
        op: &'static str,
        state: &State,
        image: Option<String>,
        options: &Options,
        outcome: Outcome,
    ) -> Self {
        Report {
            op,
            root: state.root.dir().to_path_buf(),
            image,
            mode: if options.in_place { "in-place" } else { "root" },
            outcome,
            signature: None,
            impact: None,
            reasons: Vec::new(),
            steps: Vec::new(),
            packages: None,
            installed: None,
            root_checks: Vec::new(),
            actions: Vec::new(),
            trial: None,
            reboot: false,
        }
    }

    /// Every step ran (or was not needed or skipped as asked), every pin
    /// holds and every action succeeded.
    pub fn passed(&self) -> bool {
        !self.steps.iter().any(StepLog::failed)
            && self
                .packages
                .as_ref()
                .is_none_or(|p| p.iter().all(|p| p.ok))
            && self.installed.as_ref().is_none_or(|s| !s.failed())
            && self.actions.iter().all(|a| a.ok)
            && !self.root_checks.iter().any(check::RootCheck::failed)
    }
}

fn open(root: &Path) -> Result<State, Error> {
    let root =
        Root::new(root).map_err(|e| Error::Unusable(format!("--root {}: {e}", root.display())))?;
    State::open(root).map_err(Error::Failed)
}

/// Applies the OCI layout at `layout` to `options.root`; `source` names where the image
/// came from (the layout folder, or the registry reference it was pulled from).
pub fn apply(
    layout: &Path,
    source: &str,
    repository: Option<String>,
    options: &Options,
) -> Result<Report, Error> {
    let image = LocalImage::open(layout).map_err(|e| Error::Unusable(e.to_string()))?;
    // Judged before anything of it is unpacked, and before apply's state is made.
    let root = Root::new(&options.root)
        .map_err(|e| Error::Unusable(format!("--root {}: {e}", options.root.display())))?;
    let signature = match gate::policy(&root, options.trust.as_ref())? {
        Some(policy) => Some(gate::judge(layout, &policy, repository)?),
        None => None,
    };
    let state = open(&options.root)?;
    let recovered = transaction::recover(&state).map_err(Error::Failed)?;
    // The image the root had before the current one: going back to it is the exact
    // rollback (what stood before, byte for byte), not a new apply over the current
    // image. The rollback Plan of a rollout applies the previous image this way.
    let current = state.current().map_err(Error::Failed)?;
    let before = state.undo().map_err(Error::Failed)?.and_then(|u| u.before);
    if let (Some(current), Some(before)) = (&current, &before)
        && current.image.manifest != image.manifest.digest
        && before.image.manifest == image.manifest.digest
    {
        drop(state);
        let mut report = rollback(options)?;
        report.signature = signature;
        report.reasons.insert(
            0,
            format!(
                "{} is the image this root had before {}: applied as the exact rollback",
                image.manifest.digest, current.image.manifest
            ),
        );
        return Ok(report);
    }
    // The image before, as its lock says (for the impact in place).
    let before = if options.in_place {
        impact::Lock::read(&state.root).map_err(Error::Failed)?
    } else {
        None
    };
    let had_image = state.current().map_err(Error::Failed)?.is_some();
    let owners = state.root.owners();
    let receipt = receipt::files(&image).map_err(Error::Unusable)?;
    let mut outcome =
        transaction::apply(&state, &image, source, owners, &receipt).map_err(|f| match f {
            transaction::Failure::Image(e) => Error::Unusable(e),
            transaction::Failure::Root(e) => Error::Failed(e),
        })?;
    outcome.recovered = recovered;
    let mut report = Report::new(
        "apply",
        &state,
        Some(image.manifest.digest.to_string()),
        options,
        outcome,
    );
    report.signature = signature;
    finish(&state, options, &mut report, before, had_image)?;
    Ok(report)
}

/// Goes back to the image before (`--rollback`).
pub fn rollback(options: &Options) -> Result<Report, Error> {
    let state = open(&options.root)?;
    let recovered = transaction::recover(&state).map_err(Error::Failed)?;
    let before = if options.in_place {
        impact::Lock::read(&state.root).map_err(Error::Failed)?
    } else {
        None
    };
    let mut outcome = transaction::rollback(&state).map_err(Error::Unusable)?;
    outcome.recovered = recovered;
    let image = state
        .current()
        .map_err(Error::Failed)?
        .map(|c| c.image.manifest.to_string());
    let mut report = Report::new("rollback", &state, image, options, outcome);
    trial::clear(&state).map_err(Error::Failed)?;
    finish(&state, options, &mut report, before, true)?;
    Ok(report)
}

/// Completes an interrupted apply or rollback and runs its steps (`--recover`).
pub fn recover(options: &Options) -> Result<Report, Error> {
    let state = open(&options.root)?;
    let recovered = transaction::recover(&state).map_err(Error::Failed)?;
    let image = state
        .current()
        .map_err(Error::Failed)?
        .map(|c| c.image.manifest.to_string());
    let mut report = Report::new(
        "recover",
        &state,
        image,
        options,
        Outcome {
            recovered,
            ..Outcome::default()
        },
    );
    if recovered.is_some() {
        finish(&state, options, &mut report, None, false)?;
    }
    Ok(report)
}

/// After the files are in place: steps, packages, then in place the
/// impact's actions or the trial and reboot. The journal is removed only
/// when every step ran, so a failed step is run again by the next apply.
fn finish(
    state: &State,
    options: &Options,
    report: &mut Report,
    before: Option<impact::Lock>,
    before_image: bool,
) -> Result<(), Error> {
    let root = &state.root;
    // The current image again, nothing pending: no step and no action runs
    // (unless steps are asked by name: `--only-steps boot-loader` once the
    // root is on its disk); the pins and the root are judged again, so a
    // fixed package is seen.
    let pending = state.journal().map_err(Error::Failed)?.is_some();
    let nothing = report.outcome.unchanged && !pending && options.steps.only.is_empty();
    // The image's lock, read once: its family's steps, the root checks, the impact.
    let after = impact::Lock::read(root).map_err(Error::Failed)?;
    if let Some(family) = after.as_ref().map(impact::Lock::family) {
        let mut selection = options.steps.clone();
        if nothing {
            selection.changed = Some(Vec::new());
        } else if before_image && report.outcome.recovered.is_none() && selection.only.is_empty() {
            // On a root that had an image, only the steps whose inputs changed.
            selection.changed = Some(
                report
                    .outcome
                    .put
                    .iter()
                    .chain(&report.outcome.removed)
                    .map(|p| p.as_str().to_string())
                    .collect(),
            );
        }
        report.steps = steps::run(family, root, &selection);
        if options.check_packages {
            if options.install_packages
                && let Some(pins) = packages::check(root, family).map_err(Error::Failed)?
            {
                report.installed = packages::install(root, family, &pins);
            }
            report.packages = packages::check(root, family).map_err(Error::Failed)?;
        }
        // Before the pipeline seals the root: what a boot of it needs.
        if !options.in_place
            && options.check_root
            && let Some(lock) = &after
        {
            let entries = state
                .current()
                .map_err(Error::Failed)?
                .map(|c| c.entries)
                .unwrap_or_default();
            report.root_checks = check::run(root, family, lock, &entries, &report.steps);
        }
    }
    if options.in_place && !nothing {
        // Decided once per apply and kept until it is done: a rerun after a
        // failed step or pin sees the new lock on both sides, not the change.
        let pending_impact = state.dir().join("impact.json");
        let kept = report
            .outcome
            .recovered
            .and_then(|_| crate::input::read(&pending_impact, 64 << 20).ok())
            .and_then(|b| serde_json::from_slice::<impact::Decided>(&b).ok());
        let decided = match kept {
            Some(d) => {
                report.outcome.put = d.put.clone();
                report.outcome.removed = d.removed.clone();
                d
            }
            None => {
                let (impact, reasons) =
                    impact::of_change(before.as_ref(), after.as_ref(), &report.outcome);
                let d = impact::Decided {
                    impact,
                    reasons,
                    put: report.outcome.put.clone(),
                    removed: report.outcome.removed.clone(),
                };
                let bytes = serde_json::to_vec(&d).map_err(|e| Error::Failed(e.to_string()))?;
                crate::atomic::write_file(&pending_impact, &bytes)
                    .map_err(|e| Error::Failed(format!("{}: {e}", pending_impact.display())))?;
                d
            }
        };
        let class = decided.impact;
        report.reasons = decided.reasons;
        report.impact = Some(class);

        if report.passed() {
            match class {
                Impact::Live | Impact::Drain => {
                    report.actions = impact::act(root, &report.outcome, options.print_actions)
                }
                Impact::Reboot if report.op == "apply" => {
                    let attempts = after
                        .as_ref()
                        .map_or(trial::DEFAULT_ATTEMPTS, |l| l.boot_attempts());
                    report.trial = Some(
                        trial::arm(state, report.image.as_deref().unwrap_or_default(), attempts)
                            .map_err(Error::Failed)?,
                    );
                    report.reboot = true;
                }
                Impact::Reboot => report.reboot = true,
            }
        }
    }
    // Every step ran: the transaction is complete (pins and root checks
    // are verdicts, judged again by every apply, not work left to do).
    if !report.steps.iter().any(StepLog::failed) && (!options.in_place || report.passed()) {
        let _ = std::fs::remove_file(state.dir().join("impact.json"));
        state.finish().map_err(Error::Failed)?;
    }
    if report.passed() && report.reboot && !options.no_reboot {
        report
            .actions
            .push(impact::reboot(root, options.print_actions));
    }
    Ok(())
}

/// `--boot-trial`: counts this boot of an image on trial; past its
/// attempts, rolls back, records why, and reboots.
pub fn boot_trial(options: &Options) -> Result<(trial::Boot, Option<Report>), Error> {
    let (verdict, exhausted) = {
        let state = open(&options.root)?;
        transaction::recover(&state).map_err(Error::Failed)?;
        let verdict = trial::count_boot(&state).map_err(Error::Failed)?;
        let exhausted = match verdict {
            trial::Boot::Exhausted { .. } => {
                let trial = trial::current(&state).map_err(Error::Failed)?;
                let back_to = state
                    .undo()
                    .map_err(Error::Failed)?
                    .and_then(|u| u.before)
                    .map(|b| b.image.manifest.to_string());
                trial.map(|t| (t, back_to))
            }
            _ => None,
        };
        (verdict, exhausted)
    };
    let Some((on_trial, back_to)) = exhausted else {
        return Ok((verdict, None));
    };
    // Back to the image before, then the verdict: a rollback that fails
    // leaves the trial as it is, and the next boot tries again.
    let mut report = rollback(&Options {
        in_place: false,
        ..options.clone()
    })?;
    report.mode = "in-place";
    report.reboot = true;
    {
        let state = open(&options.root)?;
        let reason = format!(
            "verify failed on each of {} boot(s) of this image; its last record and evidence are under /var/lib/nodeimg",
            on_trial.boots
        );
        trial::fail(&state, &on_trial, &reason, back_to).map_err(Error::Failed)?;
        report.trial = Some(on_trial);
    }
    // The files are back: reboot into them whatever the steps or pins say
    // (the previous image's own verify judges that boot; staying on the
    // image that failed is never better).
    if !options.no_reboot {
        let root = Root::new(&options.root).map_err(|e| Error::Failed(e.to_string()))?;
        report
            .actions
            .push(impact::reboot(&root, options.print_actions));
    }
    Ok((verdict, Some(report)))
}

/// `--boot-failed`: verify failed for good this boot; on trial, the next
/// attempt is a reboot away. Returns whether a reboot was asked.
pub fn boot_failed(options: &Options) -> Result<Option<impact::ActionLog>, Error> {
    let state = open(&options.root)?;
    if trial::current(&state).map_err(Error::Failed)?.is_none() {
        return Ok(None);
    }
    Ok(Some(impact::reboot(&state.root, options.print_actions)))
}

/// `--bless`: this boot was good; the trial (if any) ends.
pub fn bless(options: &Options) -> Result<Option<trial::Trial>, Error> {
    let state = open(&options.root)?;
    trial::bless(&state).map_err(Error::Failed)
}
