//! Boot assessment: an image applied in place with reboot impact is on
//! trial until a boot of it passes verify.
//!
//! The way systemd's Automatic Boot Assessment and greenboot define it:
//! a boot is good when `boot-complete.target` is reached, and
//! `nodeimg-verify.service` is ordered before it and required by it, so
//! only a passing verify makes a boot good. On GRUB nodes nodeimg keeps the
//! count itself, in `trial.json` beside the apply state:
//! - `nodeimg-boot-trial.service` (early, before verify) runs
//!   `nodeimg apply --boot-trial`: it counts this boot; past
//!   `rollout.bootAttempts` boots it rolls the node back to the previous
//!   image, records why in `trial-failed.json`, and reboots;
//! - `nodeimg-verify-failed.service` runs `nodeimg apply --boot-failed`:
//!   while on trial, a failed verify reboots for the next attempt;
//! - `nodeimg-boot-bless.service` (after `boot-complete.target`) runs
//!   `nodeimg apply --bless`: the trial ends, the image is kept.
//!
//! On a node that boots with systemd-boot, `systemd-bless-boot.service`
//! hears the same target for the boot entry's own counter.

use serde::{Deserialize, Serialize};

use super::transaction::State;

/// Boots an image may fail before the node goes back (greenboot's and
/// systemd-boot's usual count).
pub const DEFAULT_ATTEMPTS: u32 = 3;

/// `trial.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trial {
    /// The manifest digest of the image on trial.
    pub image: String,
    /// Boots allowed.
    pub attempts: u32,
    /// Boots of it counted so far.
    pub boots: u32,
}

/// `trial-failed.json`: the image the node went back from, and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failed {
    pub image: String,
    pub boots: u32,
    pub reason: String,
    /// The image the node is back on (`None`: the root before any image).
    pub back_to: Option<String>,
}

const TRIAL: &str = "trial.json";
const FAILED: &str = "trial-failed.json";

fn path(state: &State, name: &str) -> std::path::PathBuf {
    state.dir().join(name)
}

fn read<T: serde::de::DeserializeOwned>(state: &State, name: &str) -> Result<Option<T>, String> {
    let p = path(state, name);
    match crate::input::read(&p, 1 << 20) {
        Ok(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| format!("{}: {e}", p.display())),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(format!("{}: {e}", p.display())),
    }
}

fn write<T: Serialize>(state: &State, name: &str, v: &T) -> Result<(), String> {
    let p = path(state, name);
    let bytes = serde_json::to_vec_pretty(v).map_err(|e| e.to_string())?;
    crate::atomic::write_file(&p, &bytes).map_err(|e| format!("{}: {e}", p.display()))?;
    super::root::sync_dir(state.dir()).map_err(|e| e.to_string())
}

pub fn current(state: &State) -> Result<Option<Trial>, String> {
    read(state, TRIAL)
}

pub fn last_failure(state: &State) -> Result<Option<Failed>, String> {
    read(state, FAILED)
}

/// Puts `image` on trial for `attempts` boots.
pub fn arm(state: &State, image: &str, attempts: u32) -> Result<Trial, String> {
    let trial = Trial {
        image: image.to_string(),
        attempts: attempts.max(1),
        boots: 0,
    };
    write(state, TRIAL, &trial)?;
    Ok(trial)
}

/// Ends the trial without a verdict (a rollback or a new apply replaces it).
pub fn clear(state: &State) -> Result<(), String> {
    match std::fs::remove_file(path(state, TRIAL)) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// What this boot of the trial is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "verdict")]
pub enum Boot {
    /// No image on trial.
    NoTrial,
    /// Attempt `boot` of `attempts`: verify decides.
    Attempt { boot: u32, attempts: u32 },
    /// Every attempt failed: go back.
    Exhausted { boots: u32 },
}

/// Counts this boot (`--boot-trial`).
pub fn count_boot(state: &State) -> Result<Boot, String> {
    let Some(mut trial) = current(state)? else {
        return Ok(Boot::NoTrial);
    };
    if trial.boots >= trial.attempts {
        return Ok(Boot::Exhausted { boots: trial.boots });
    }
    trial.boots += 1;
    write(state, TRIAL, &trial)?;
    Ok(Boot::Attempt {
        boot: trial.boots,
        attempts: trial.attempts,
    })
}

/// Records that the trial failed; the caller rolls back.
pub fn fail(
    state: &State,
    trial: &Trial,
    reason: &str,
    back_to: Option<String>,
) -> Result<(), String> {
    write(
        state,
        FAILED,
        &Failed {
            image: trial.image.clone(),
            boots: trial.boots,
            reason: reason.to_string(),
            back_to,
        },
    )?;
    clear(state)
}

/// A good boot: the trial ends (`--bless`).
pub fn bless(state: &State) -> Result<Option<Trial>, String> {
    let trial = current(state)?;
    clear(state)?;
    Ok(trial)
}
