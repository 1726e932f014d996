//! Applying an image to a root, and going back, as a journaled transaction
//! that a kill at any moment cannot leave half done.
//!
//! One file although long: the journal's phases and the recovery of each are read
//! together, and a split would put a phase and its recovery in different files.
//!
//! State lives in the root, under `var/lib/nodeimg/apply/`:
//! - `current.json`: the image applied last and every path it put there;
//! - `previous/`: how to go back to the state before it — one change per
//!   path the apply touched (absent before, or saved: the folder's, file's
//!   or link's entry, and for a file its bytes under `previous/files/`);
//! - `journal.json`: an apply or rollback in progress and its phase;
//! - `staging/`: the image being applied, unpacked; `next/`: the
//!   `previous/` being written.
//!
//! Order: unpack and check the image into `staging/`; save what stands at
//! every path it changes into `next/` (hard links: free on one file
//! system, so nothing a user had is lost and nothing is copied twice);
//! journal `installing`; put every path in place (each a rename of a
//! complete file or link, never a write into a file); journal
//! `committing`; `next/` becomes `previous/` and `current.json` the new
//! image; journal `steps`, after which the distribution's post-apply steps
//! run and the journal is removed. [`recover`] completes whatever a killed
//! run left (installing and committing are redone from the journal, which
//! names the target; a run killed before `installing` left the root
//! untouched and its folders are discarded). Applying the image that is
//! already current with nothing drifted changes nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::entry::{Entry, Kind, RelPath};
use super::root::{self, Root};
use super::unpack::{self, Staged};
use crate::package::digest::Digest;
use crate::package::layout_reader::LocalImage;

/// Where apply keeps its state, relative to the root.
pub const STATE_DIR: &str = "var/lib/nodeimg/apply";

/// The test hook that kills the process at a named point (see the README's
/// crash tests): `NODEIMG_APPLY_KILL_AT=installing:3` kills after the
/// third path was put in place. Nothing else reads it.
const KILL_AT: &str = "NODEIMG_APPLY_KILL_AT";

/// An image as the state files name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageId {
    /// The manifest digest: what "the same image" means.
    pub manifest: Digest,
    pub tag: Option<String>,
    /// Where it was applied from (a layout folder).
    pub source: String,
}

/// `current.json`: the image applied and every path it put in the root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Applied {
    pub image: ImageId,
    pub entries: Vec<Entry>,
}

/// `previous/undo.json`: the state before the current image.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Undo {
    /// The image applied before (none: the root as it was before any apply).
    pub before: Option<Applied>,
    pub changes: Vec<Change>,
}

/// One path an apply touched and what stood there before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Change {
    pub path: RelPath,
    pub before: Before,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "lowercase", deny_unknown_fields)]
pub enum Before {
    /// Nothing stood there: going back removes what the image put.
    Absent,
    /// This stood there; a file's bytes are `previous/files/<file>`.
    Saved { entry: Entry, file: Option<String> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Apply,
    Rollback,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Installing,
    Committing,
    Steps,
}

/// `journal.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Journal {
    pub op: Op,
    pub phase: Phase,
    /// The state the operation ends in (`None`: no image applied).
    pub target: Option<Applied>,
}

/// What a transaction did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Outcome {
    /// The image was already applied and nothing had drifted: no change.
    pub unchanged: bool,
    /// Paths put in place (made, replaced or given new mode/owner).
    pub put: Vec<RelPath>,
    /// Paths removed (saved first).
    pub removed: Vec<RelPath>,
    /// Folders left in place on removal because they hold files nodeimg
    /// did not write.
    pub kept: Vec<RelPath>,
    /// Paths whose previous content was saved for rollback.
    pub saved: usize,
    /// An interrupted operation this run completed first.
    pub recovered: Option<Op>,
}

/// The state folder of a root.
pub struct State {
    pub root: Root,
    dir: PathBuf,
    _lock: fs::File,
}

impl State {
    /// Opens (making it when missing) the state folder and takes its lock:
    /// one apply at a time per root.
    pub fn open(root: Root) -> Result<Self, String> {
        let rel = RelPath::parse(&format!("{STATE_DIR}/x")).expect("constant path");
        let dir =
            crate::atomic::parent_dir(&root.locate(&rel).map_err(|e| e.to_string())?).to_path_buf();
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let lock_path = dir.join(".lock");
        let lock = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| format!("{}: {e}", lock_path.display()))?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe {
            libc::flock(
                std::os::fd::AsRawFd::as_raw_fd(&lock),
                libc::LOCK_EX | libc::LOCK_NB,
            )
        } != 0
        {
            return Err(format!(
                "another nodeimg apply holds {} (wait for it to finish)",
                lock_path.display()
            ));
        }
        Ok(State {
            root,
            dir,
            _lock: lock,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub fn current(&self) -> Result<Option<Applied>, String> {
        self.read_json("current.json")
    }

    pub fn journal(&self) -> Result<Option<Journal>, String> {
        self.read_json("journal.json")
    }

    pub fn undo(&self) -> Result<Option<Undo>, String> {
        self.read_json("previous/undo.json")
    }

    fn read_json<T: serde::de::DeserializeOwned>(&self, name: &str) -> Result<Option<T>, String> {
        let p = self.path(name);
        match crate::input::read(&p, 1 << 30) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                format!(
                    "{}: {e} (apply's own state; restore it from a backup or remove it by hand)",
                    p.display()
                )
            }),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(format!("{}: {e}", p.display())),
        }
    }

    fn write_json<T: Serialize>(&self, name: &str, value: &T) -> Result<(), String> {
        let p = self.path(name);
        let bytes = serde_json::to_vec_pretty(value).map_err(|e| e.to_string())?;
        crate::atomic::write_file(&p, &bytes).map_err(|e| format!("{}: {e}", p.display()))?;
        root::sync_dir(crate::atomic::parent_dir(&p)).map_err(|e| e.to_string())
    }

    fn set_journal(&self, journal: &Journal) -> Result<(), String> {
        self.write_json("journal.json", journal)
    }

    /// The journal is removed: the operation is complete.
    pub fn finish(&self) -> Result<(), String> {
        remove_path(&self.path("journal.json"))?;
        root::sync_dir(&self.dir).map_err(|e| e.to_string())
    }
}

fn remove_path(p: &Path) -> Result<(), String> {
    let r = match fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(p),
        Ok(_) => fs::remove_file(p),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    };
    r.map_err(|e| format!("{}: {e}", p.display()))
}

fn kill_point(name: &str) {
    if std::env::var(KILL_AT).is_ok_and(|v| v == name) {
        // SAFETY: sending a signal to this very process.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
}

/// Completes an interrupted operation, if the journal names one. Returns
/// the operation and whether its post-apply steps still have to run.
pub fn recover(state: &State) -> Result<Option<Op>, String> {
    let Some(journal) = state.journal()? else {
        // Killed before `installing`: the root was not touched.
        remove_path(&state.path("staging"))?;
        remove_path(&state.path("next"))?;
        return Ok(None);
    };
    match (journal.op, journal.phase) {
        (Op::Apply, Phase::Installing) => {
            let undo: Undo = state
                .read_json("next/undo.json")?
                .ok_or("the journal says installing, but next/undo.json is missing")?;
            install(
                state,
                &undo,
                journal.target.as_ref(),
                &state.path("staging"),
                &mut Outcome::default(),
            )?;
            commit_apply(state, &journal)?;
        }
        (Op::Apply, Phase::Committing) => commit_apply(state, &journal)?,
        (Op::Rollback, Phase::Installing) => {
            let undo = state
                .undo()?
                .ok_or("the journal says rolling back, but previous/undo.json is missing")?;
            restore(state, &undo, &mut Outcome::default())?;
            commit_rollback(state, &journal)?;
        }
        (Op::Rollback, Phase::Committing) => commit_rollback(state, &journal)?,
        (_, Phase::Steps) => {}
    }
    Ok(Some(journal.op))
}

/// Applies `image` to the state's root. The journal is left at `steps`
/// (unless nothing changed): the caller runs the post-apply steps and then
/// [`State::finish`].
pub fn apply(
    state: &State,
    image: &LocalImage,
    source: &str,
    owners: bool,
    receipt: &[(RelPath, Vec<u8>)],
) -> Result<Outcome, Failure> {
    let staging = state.path("staging");
    let staged = stage(state, image, &staging, owners, receipt)?;
    kill_point("staged");
    put(state, image, source, &staging, &staged).map_err(Failure::Root)
}

/// Why an apply stopped: the image cannot be used (nothing of the root
/// was touched), or the root could not be changed (the journal says what
/// the next run completes).
#[derive(Debug)]
pub enum Failure {
    Image(String),
    Root(String),
}

/// The image unpacked and checked into `staging`, or refused.
fn stage(
    state: &State,
    image: &LocalImage,
    staging: &Path,
    owners: bool,
    receipt: &[(RelPath, Vec<u8>)],
) -> Result<Staged, Failure> {
    remove_path(staging).map_err(Failure::Root)?;
    remove_path(&state.path("next")).map_err(Failure::Root)?;
    fs::create_dir_all(staging)
        .map_err(|e| Failure::Root(format!("{}: {e}", staging.display())))?;
    let refuse = |e: String| {
        let _ = remove_path(staging);
        Failure::Image(e)
    };
    let mut staged = unpack::unpack(image, staging, owners).map_err(refuse)?;
    for reserved in [STATE_DIR, super::receipt::DIR] {
        let reserved = RelPath::parse(reserved).expect("constant path");
        if let Some(p) = staged
            .entries
            .keys()
            .chain(&staged.whiteouts)
            .chain(&staged.opaque)
            .find(|p| p.is_within(&reserved) || reserved.is_within(p))
        {
            return Err(refuse(format!(
                "the image touches {p}, where apply keeps its own state"
            )));
        }
    }
    for (path, bytes) in receipt {
        staged.add_file(path, bytes, 0o644).map_err(refuse)?;
    }
    Ok(staged)
}

/// Saves what stands and puts the staged image in place.
fn put(
    state: &State,
    image: &LocalImage,
    source: &str,
    staging: &Path,
    staged: &Staged,
) -> Result<Outcome, String> {
    let staging = staging.to_path_buf();
    let mut outcome = Outcome::default();
    let target = Applied {
        image: ImageId {
            manifest: image.manifest.digest.clone(),
            tag: image.tag.clone(),
            source: source.to_string(),
        },
        entries: with_parents(staged),
    };
    let current = state.current()?;
    let changes = plan(state, staged, &target, current.as_ref())?;
    let same_image = current
        .as_ref()
        .is_some_and(|c| c.image.manifest == target.image.manifest);
    if changes.is_empty() {
        remove_path(&staging)?;
        outcome.unchanged = same_image;
        if !same_image {
            // A new image whose every path already stands as it wants.
            state.write_json("current.json", &target)?;
        }
        return Ok(outcome);
    }
    // Save what stands at every path to change.
    let next = state.path("next");
    let files = next.join("files");
    fs::create_dir_all(&files).map_err(|e| format!("{}: {e}", files.display()))?;
    let mut undo = Undo {
        // Re-applying the current image over drift keeps the way back to
        // the image before it, and saves the drifted files beside.
        before: if same_image {
            state.undo()?.and_then(|u| u.before)
        } else {
            current.clone()
        },
        changes: Vec::with_capacity(changes.len()),
    };
    for (n, (path, cur)) in changes.into_iter().enumerate() {
        let before = match cur {
            None => Before::Absent,
            Some(cur) => {
                let entry = cur.entry(&path).map_err(|e| format!("{path}: {e}"))?;
                let file = if matches!(entry.kind, Kind::File { .. }) {
                    let name = n.to_string();
                    root::place(&cur.real, &files.join(&name))
                        .map_err(|e| format!("saving {path}: {e}"))?;
                    Some(name)
                } else {
                    None
                };
                outcome.saved += 1;
                Before::Saved { entry, file }
            }
        };
        undo.changes.push(Change { path, before });
    }
    if same_image && let Some(prev) = state.undo()? {
        // The drifted content is saved in `drift/`, the way back kept.
        let drift = state.path("drift");
        remove_path(&drift)?;
        fs::rename(&next, &drift).map_err(|e| e.to_string())?;
        state.write_json("drift/undo.json", &undo)?;
        fs::create_dir_all(&next).map_err(|e| e.to_string())?;
        let keep = Undo {
            before: prev.before,
            changes: prev.changes,
        };
        copy_tree(&state.path("previous"), &next)?;
        state.write_json("next/undo.json", &keep)?;
        let journal = Journal {
            op: Op::Apply,
            phase: Phase::Installing,
            target: Some(target.clone()),
        };
        state.set_journal(&journal)?;
        install(state, &undo, Some(&target), &staging, &mut outcome)?;
        commit_apply(state, &journal)?;
        return Ok(outcome);
    }
    state.write_json("next/undo.json", &undo)?;
    kill_point("saved");
    let journal = Journal {
        op: Op::Apply,
        phase: Phase::Installing,
        target: Some(target),
    };
    state.set_journal(&journal)?;
    install(
        state,
        &undo,
        journal.target.as_ref(),
        &staging,
        &mut outcome,
    )?;
    kill_point("installed");
    commit_apply(state, &journal)?;
    Ok(outcome)
}

/// Goes back to the state before the current image: every path the apply
/// touched as it was (files byte for byte, with mode, owner and times),
/// every path it added gone. The journal is left at `steps`.
pub fn rollback(state: &State) -> Result<Outcome, String> {
    let undo = state.undo()?.ok_or_else(|| {
        format!(
            "there is no previous state to go back to ({} holds none): nothing was applied here, or it was rolled back already",
            state.path("previous").display()
        )
    })?;
    let journal = Journal {
        op: Op::Rollback,
        phase: Phase::Installing,
        target: undo.before.clone(),
    };
    state.set_journal(&journal)?;
    let mut outcome = Outcome::default();
    restore(state, &undo, &mut outcome)?;
    kill_point("restored");
    commit_rollback(state, &journal)?;
    Ok(outcome)
}

/// Every entry of the image, with the folders its archive left implicit
/// (made 0755, root's), sorted parents first.
fn with_parents(staged: &Staged) -> Vec<Entry> {
    let mut all: BTreeMap<RelPath, Entry> = staged.entries.clone();
    for path in staged.entries.keys() {
        let mut p = path.parent();
        while let Some(dir) = p {
            if all.contains_key(&dir) {
                break;
            }
            p = dir.parent();
            all.insert(
                dir.clone(),
                Entry {
                    path: dir,
                    kind: Kind::Dir,
                    mode: 0o755,
                    uid: 0,
                    gid: 0,
                },
            );
        }
    }
    all.into_values().collect()
}

/// The paths whose state must change, each with what stands there now.
fn plan(
    state: &State,
    staged: &Staged,
    target: &Applied,
    current: Option<&Applied>,
) -> Result<Vec<(RelPath, Option<root::Current>)>, String> {
    let root = &state.root;
    fn at(p: &RelPath) -> impl FnOnce(io::Error) -> String + '_ {
        move |e| format!("{p}: {e}")
    }
    let wanted: BTreeMap<&RelPath, &Entry> = target.entries.iter().map(|e| (&e.path, e)).collect();
    let mut out: BTreeMap<RelPath, Option<root::Current>> = BTreeMap::new();
    // Whiteouts and opaque folders remove what the root holds there, whole.
    let mut hide: BTreeSet<RelPath> = staged.whiteouts.clone();
    for dir in &staged.opaque {
        let real = root.locate(dir).map_err(at(dir))?;
        if let Ok(list) = fs::read_dir(&real) {
            for child in list {
                let child = child.map_err(at(dir))?;
                let name = child.file_name();
                let p = dir
                    .join(&name.to_string_lossy())
                    .map_err(|e| format!("{dir}: {e}"))?;
                if !wanted.contains_key(&p) {
                    hide.insert(p);
                }
            }
        }
    }
    for p in &hide {
        subtree(root, p, &mut out)?;
    }
    // What the image puts.
    for (path, want) in &wanted {
        let cur = root.current(path).map_err(at(path))?;
        match cur {
            Some(c) if c.matches(path, want).map_err(at(path))? => {}
            Some(c) => {
                if c.is_dir() && !want.is_dir() {
                    subtree(root, path, &mut out)?;
                } else {
                    out.insert((*path).clone(), Some(c));
                }
            }
            None => {
                out.insert((*path).clone(), None);
            }
        }
    }
    // What the image before put and this one does not.
    for old in current.map_or(&[][..], |c| &c.entries) {
        if !wanted.contains_key(&old.path)
            && !out.contains_key(&old.path)
            && let Some(c) = root.current(&old.path).map_err(at(&old.path))?
        {
            out.insert(old.path.clone(), Some(c));
        }
    }
    Ok(out.into_iter().collect())
}

/// `path` and, when it is a folder, everything below it, as they stand.
fn subtree(
    root: &Root,
    path: &RelPath,
    out: &mut BTreeMap<RelPath, Option<root::Current>>,
) -> Result<(), String> {
    let Some(cur) = root.current(path).map_err(|e| format!("{path}: {e}"))? else {
        return Ok(());
    };
    let real = cur.real.clone();
    let dir = cur.is_dir();
    out.insert(path.clone(), Some(cur));
    if dir {
        for item in walkdir::WalkDir::new(&real).min_depth(1) {
            let item = item.map_err(|e| format!("{path}: {e}"))?;
            let rel = item.path().strip_prefix(&real).map_err(|e| e.to_string())?;
            let p = path
                .join(&rel.to_string_lossy())
                .map_err(|e| format!("{path}: {e}"))?;
            let meta = item
                .path()
                .symlink_metadata()
                .map_err(|e| format!("{p}: {e}"))?;
            out.insert(
                p,
                Some(root::Current {
                    real: item.path().to_path_buf(),
                    meta,
                    owners: root.owners(),
                }),
            );
        }
    }
    Ok(())
}

/// Puts the target's entries at the changed paths and removes the others
/// (deepest first). Redone whole by [`recover`]: each step is idempotent.
fn install(
    state: &State,
    undo: &Undo,
    target: Option<&Applied>,
    staging: &Path,
    outcome: &mut Outcome,
) -> Result<(), String> {
    let root = &state.root;
    let wanted: BTreeMap<&RelPath, &Entry> = target.map_or(BTreeMap::new(), |t| {
        t.entries.iter().map(|e| (&e.path, e)).collect()
    });
    let mut removals: Vec<&RelPath> = undo
        .changes
        .iter()
        .map(|c| &c.path)
        .filter(|p| !wanted.contains_key(p))
        .collect();
    removals.sort_by_key(|p| std::cmp::Reverse(p.depth()));
    for p in removals {
        let real = root.locate(p).map_err(|e| format!("{p}: {e}"))?;
        if root::remove(&real).map_err(|e| format!("removing {p}: {e}"))? {
            outcome.removed.push(p.clone());
        } else {
            outcome.kept.push(p.clone());
        }
    }
    let mut n = 0;
    for change in &undo.changes {
        let Some(want) = wanted.get(&change.path) else {
            continue;
        };
        let p = &change.path;
        let real = root.locate(p).map_err(|e| format!("{p}: {e}"))?;
        let fail = |e: io::Error| format!("putting {p} in place: {e}");
        match &want.kind {
            Kind::Dir => {
                if fs::symlink_metadata(&real).is_ok_and(|m| !m.is_dir()) {
                    fs::remove_file(&real).map_err(fail)?;
                }
                root::make_dir(&real, want).map_err(fail)?;
            }
            Kind::File { .. } | Kind::Symlink { .. } => {
                let src = p.under(staging);
                if fs::symlink_metadata(&src).is_err() {
                    // Put in place by the run a kill interrupted, and the
                    // staging folder gone with its commit: check, not trust.
                    let cur = root.current(p).map_err(fail)?;
                    if !cur.is_some_and(|c| c.matches(p, want).unwrap_or(false)) {
                        return Err(format!(
                            "{p}: its staged copy is gone and the root does not hold it; apply the image again"
                        ));
                    }
                } else {
                    root::place(&src, &real).map_err(fail)?;
                }
            }
        }
        outcome.put.push(p.clone());
        n += 1;
        kill_point(&format!("installing:{n}"));
    }
    sync_parents(root, undo)
}

/// Flushes every folder whose entries an operation renamed.
fn sync_parents(root: &Root, undo: &Undo) -> Result<(), String> {
    let dirs: BTreeSet<PathBuf> = undo
        .changes
        .iter()
        .filter_map(|c| root.locate(&c.path).ok())
        .map(|p| crate::atomic::parent_dir(&p).to_path_buf())
        .collect();
    for d in dirs {
        if d.is_dir() {
            root::sync_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
    }
    Ok(())
}

fn commit_apply(state: &State, journal: &Journal) -> Result<(), String> {
    state.set_journal(&Journal {
        phase: Phase::Committing,
        ..journal.clone()
    })?;
    kill_point("committing");
    let (next, previous, old) = (
        state.path("next"),
        state.path("previous"),
        state.path("previous.old"),
    );
    if next.exists() {
        remove_path(&old)?;
        if previous.exists() {
            fs::rename(&previous, &old).map_err(|e| format!("{}: {e}", previous.display()))?;
        }
        fs::rename(&next, &previous).map_err(|e| format!("{}: {e}", next.display()))?;
    }
    match &journal.target {
        Some(t) => state.write_json("current.json", t)?,
        None => remove_path(&state.path("current.json"))?,
    }
    remove_path(&old)?;
    remove_path(&state.path("staging"))?;
    state.set_journal(&Journal {
        phase: Phase::Steps,
        ..journal.clone()
    })
}

/// Puts back what the changes saved: the paths that were absent go
/// (deepest first), the saved ones return (parents first).
fn restore(state: &State, undo: &Undo, outcome: &mut Outcome) -> Result<(), String> {
    let root = &state.root;
    let files = state.path("previous/files");
    let mut absent: Vec<&RelPath> = undo
        .changes
        .iter()
        .filter(|c| c.before == Before::Absent)
        .map(|c| &c.path)
        .collect();
    absent.sort_by_key(|p| std::cmp::Reverse(p.depth()));
    for p in absent {
        let real = root.locate(p).map_err(|e| format!("{p}: {e}"))?;
        if fs::symlink_metadata(&real).is_ok_and(|m| m.is_dir()) {
            // A folder the image made; what others put in it since stays.
            if !root::remove(&real).map_err(|e| format!("removing {p}: {e}"))? {
                outcome.kept.push(p.clone());
                continue;
            }
        } else {
            root::remove(&real).map_err(|e| format!("removing {p}: {e}"))?;
        }
        outcome.removed.push(p.clone());
    }
    let mut saved: Vec<(&RelPath, &Entry, &Option<String>)> = undo
        .changes
        .iter()
        .filter_map(|c| match &c.before {
            Before::Saved { entry, file } => Some((&c.path, entry, file)),
            Before::Absent => None,
        })
        .collect();
    saved.sort_by(|a, b| a.0.cmp(b.0));
    for (p, entry, file) in saved {
        let real = root.locate(p).map_err(|e| format!("{p}: {e}"))?;
        let fail = |e: io::Error| format!("restoring {p}: {e}");
        match (&entry.kind, file) {
            (Kind::Dir, _) => {
                if fs::symlink_metadata(&real).is_ok_and(|m| !m.is_dir()) {
                    fs::remove_file(&real).map_err(fail)?;
                }
                root::make_dir(&real, entry).map_err(fail)?;
            }
            (Kind::File { .. }, Some(name)) => {
                if fs::symlink_metadata(&real).is_ok_and(|m| m.is_dir()) {
                    fs::remove_dir_all(&real).map_err(fail)?;
                }
                root::place(&files.join(name), &real).map_err(fail)?;
            }
            (Kind::Symlink { target }, _) => {
                let tmp = files.join(format!(".link-{}", std::process::id()));
                let _ = fs::remove_file(&tmp);
                std::os::unix::fs::symlink(target, &tmp).map_err(fail)?;
                root::set_meta(&tmp, entry).map_err(fail)?;
                if fs::symlink_metadata(&real).is_ok_and(|m| m.is_dir()) {
                    fs::remove_dir_all(&real).map_err(fail)?;
                }
                fs::rename(&tmp, &real).map_err(fail)?;
            }
            (Kind::File { .. }, None) => {
                return Err(format!("{p}: saved as a file without its bytes"));
            }
        }
        outcome.put.push(p.clone());
    }
    sync_parents(root, undo)
}

fn commit_rollback(state: &State, journal: &Journal) -> Result<(), String> {
    state.set_journal(&Journal {
        phase: Phase::Committing,
        ..journal.clone()
    })?;
    match &journal.target {
        Some(t) => state.write_json("current.json", t)?,
        None => remove_path(&state.path("current.json"))?,
    }
    remove_path(&state.path("previous"))?;
    state.set_journal(&Journal {
        phase: Phase::Steps,
        ..journal.clone()
    })
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let files = from.join("files");
    let dest = to.join("files");
    fs::create_dir_all(&dest).map_err(|e| e.to_string())?;
    if let Ok(list) = fs::read_dir(&files) {
        for f in list {
            let f = f.map_err(|e| e.to_string())?;
            root::place(&f.path(), &dest.join(f.file_name())).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}
