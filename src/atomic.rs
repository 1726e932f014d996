//! Safe, atomic output: nothing a user has is ever lost.
//!
//! - A **file** is written to a temporary file beside the target, flushed,
//!   then renamed over it. A new file gets mode `0666 & !umask`, like any
//!   Unix tool (a metrics file must be readable by node_exporter); a file
//!   that already exists keeps its mode.
//! - A **folder** ([`StagedDir`]) is built in a staging folder beside the
//!   target and swapped in with one `renameat2(RENAME_EXCHANGE)`. The target
//!   is replaced only when it is missing, empty, or carries nodeimg's own
//!   marker file ([`MARKER`]) for the same kind of output; anything else —
//!   a user's folder, a regular file, a symbolic link, a folder holding the
//!   blueprint or the files it names — is refused and left untouched.
//!
//! Staging folders are named `.<target>.nodeimg-staging-XXXXXX` and carry
//! the marker from their first moment, so one left behind by an interrupted
//! run (SIGKILL, power loss) is recognised and removed by the next run into
//! the same target, and nothing else ever is. The target is locked
//! (`flock` on `.<target>.nodeimg-lock` in the parent, removed when done)
//! for the whole build: a second concurrent run into the same target fails
//! at once instead of both reporting success with different contents.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use thiserror::Error;

/// The marker file nodeimg writes into every output folder it owns.
pub const MARKER: &str = ".nodeimg-output";

/// The folder a path lives in: its parent, or `.` for a bare name.
pub fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename).
pub fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = parent_dir(path);
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("needs a file name"))?;
    // An existing file keeps its mode (as `cmd > file` does); a new one
    // gets 0666 minus the umask, applied by the kernel at creation.
    let keep = fs::metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.permissions().mode() & 0o7777);
    let (tmp, mut f) = create_unique(dir, name.to_string_lossy().as_ref())?;
    let written = (|| {
        f.write_all(bytes)?;
        if let Some(mode) = keep {
            f.set_permissions(fs::Permissions::from_mode(mode))?;
        }
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written?;
    File::open(dir).and_then(|d| d.sync_all())
}

/// A new file `.<name>.nodeimg-tmp-<pid>-<n>` in `dir`, created with mode
/// 0666 (the kernel applies the umask).
fn create_unique(dir: &Path, name: &str) -> std::io::Result<(PathBuf, File)> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.nodeimg-tmp-{}-{n}", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// What an output folder holds, and so what may be replaced by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `nodeimg render -o`, `build --cluster`, the golden updater.
    Render,
    /// `nodeimg build -o`: an OCI image layout.
    Layout,
}

impl Kind {
    /// The marker's first line.
    fn first_line(self) -> &'static str {
        match self {
            Kind::Render => "nodeimg render",
            Kind::Layout => "nodeimg build",
        }
    }

    /// The marker file's text, listing the top-level entries nodeimg wrote.
    fn marker(self, entries: &[String]) -> String {
        let mut text = format!(
            "{}\n# Written by nodeimg, which replaces this folder whole on the next run\n# into it, as long as it holds nothing but these entries:\n",
            self.first_line()
        );
        for e in entries {
            text.push_str(e);
            text.push('\n');
        }
        text
    }
    fn describe(self) -> &'static str {
        match self {
            Kind::Render => "rendered output",
            Kind::Layout => "an OCI image layout",
        }
    }
}

/// Why an output folder cannot be written.
#[derive(Debug, Error)]
pub enum OutputError {
    /// The target holds something nodeimg did not write; it is left as is.
    #[error("output {}: {reason}", path.display())]
    Refused { path: PathBuf, reason: String },
    /// Another nodeimg process is writing the same target.
    #[error("output {}: {}", path.display(), busy_message(lock))]
    Busy { path: PathBuf, lock: PathBuf },
    #[error("output {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Why a locked target cannot be written now.
pub fn busy_message(lock: &Path) -> String {
    format!(
        "another nodeimg is writing it right now (lock {} is held); try again when it has finished",
        lock.display()
    )
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> OutputError + '_ {
    move |source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A folder being built beside its target; it becomes the target on
/// [`StagedDir::commit`] and is removed if dropped before that.
#[derive(Debug)]
pub struct StagedDir {
    target: PathBuf,
    kind: Kind,
    staging: Option<PathBuf>,
    _lock: Lock,
}

impl StagedDir {
    /// Checks that `target` may be replaced by output of `kind` and that it
    /// holds none of `inputs` (the blueprint and the files it names), locks
    /// it, removes stale staging folders of earlier interrupted runs, and
    /// creates a fresh staging folder carrying the marker.
    pub fn new(target: &Path, kind: Kind, inputs: &[PathBuf]) -> Result<Self, OutputError> {
        let name = target
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| *n != "." && *n != "..")
            .ok_or_else(|| OutputError::Refused {
                path: target.to_path_buf(),
                reason: "needs a final path component that is a folder name in UTF-8".into(),
            })?;
        let parent = parent_dir(target);
        fs::create_dir_all(parent).map_err(io(parent))?;
        let lock = Lock::acquire(target, &parent.join(format!(".{name}.nodeimg-lock")))?;
        check_replaceable(target, kind)?;
        check_inputs(target, inputs)?;
        let prefix = format!(".{name}.nodeimg-staging-");
        remove_stale(parent, &prefix)?;
        let staging = tempfile::Builder::new()
            .prefix(&prefix)
            .tempdir_in(parent)
            .map_err(io(parent))?
            .keep();
        let staged = Self {
            target: target.to_path_buf(),
            kind,
            staging: Some(staging.clone()),
            _lock: lock,
        };
        write_marker(&staging, kind, &[])?;
        fs::set_permissions(&staging, fs::Permissions::from_mode(0o755)).map_err(io(&staging))?;
        Ok(staged)
    }

    /// The staging folder to write into.
    pub fn path(&self) -> &Path {
        self.staging.as_deref().unwrap_or(&self.target)
    }

    /// Flushes every folder of the staged tree, then swaps it in
    /// for the target in one step and removes the previous contents.
    pub fn commit(mut self) -> Result<(), OutputError> {
        let staging = self.staging.clone().unwrap_or_default();
        let entries = entries(&staging).map_err(io(&staging))?;
        write_marker(&staging, self.kind, &entries)?;
        sync_tree(&staging).map_err(io(&staging))?;
        swap_in(&staging, &self.target).map_err(io(&self.target))?;
        // From here `staging` holds the previous contents (or is gone).
        self.staging = None;
        if fs::symlink_metadata(&staging).is_ok() {
            fs::remove_dir_all(&staging).map_err(io(&staging))?;
        }
        File::open(parent_dir(&self.target))
            .and_then(|d| d.sync_all())
            .map_err(io(&self.target))
    }
}

impl Drop for StagedDir {
    fn drop(&mut self) {
        if let Some(s) = self.staging.take() {
            let _ = fs::remove_dir_all(s);
        }
    }
}

/// The target may be replaced: missing, an empty folder, or a folder that
/// carries the marker of `kind` (for layouts also one written by a nodeimg
/// from before the marker: `oci-layout` next to nodeimg's `provenance.json`).
fn check_replaceable(target: &Path, kind: Kind) -> Result<(), OutputError> {
    let refuse = |reason: String| OutputError::Refused {
        path: target.to_path_buf(),
        reason,
    };
    let meta = match fs::symlink_metadata(target) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(target)(e)),
    };
    if meta.file_type().is_symlink() {
        return Err(refuse(
            "is a symbolic link; give the folder itself (a link is never replaced)".into(),
        ));
    }
    if !meta.is_dir() {
        return Err(refuse(
            "exists and is not a folder; refusing to replace it".into(),
        ));
    }
    if fs::read_dir(target).map_err(io(target))?.next().is_none() {
        return Ok(());
    }
    let have = entries(target).map_err(io(target))?;
    match marker_of(target) {
        Some((k, wrote)) if k == kind => match have.iter().find(|e| !wrote.contains(e)) {
            None => Ok(()),
            Some(extra) => Err(refuse(format!(
                "holds `{extra}`, which nodeimg did not write there; refusing to replace the folder — move `{extra}` out or choose another folder"
            ))),
        },
        Some((other, _)) => Err(refuse(format!(
            "holds {} written by nodeimg, not {}; refusing to replace it",
            other.describe(),
            kind.describe()
        ))),
        None if kind == Kind::Layout && legacy_layout(target, &have) => Ok(()),
        None => Err(refuse(match kind {
            Kind::Render => format!(
                "exists, is not empty and was not written by nodeimg (no `{MARKER}` file); refusing to replace it — choose a new or empty folder"
            ),
            Kind::Layout => format!(
                "exists, is not empty and is not an OCI image layout nodeimg wrote (no `{MARKER}` file); refusing to replace it — choose a new or empty folder"
            ),
        })),
    }
}

/// Writes the marker, mode 0644 whatever the umask (image layouts must not
/// differ between two builds).
fn write_marker(dir: &Path, kind: Kind, entries: &[String]) -> Result<(), OutputError> {
    let p = dir.join(MARKER);
    fs::write(&p, kind.marker(entries)).map_err(io(&p))?;
    fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).map_err(io(&p))
}

/// The kind of output a folder's marker names, and the entries it lists.
fn marker_of(dir: &Path) -> Option<(Kind, Vec<String>)> {
    let p = dir.join(MARKER);
    if !fs::symlink_metadata(&p).is_ok_and(|m| m.is_file() && m.len() <= 64 * 1024) {
        return None;
    }
    let text = fs::read_to_string(&p).ok()?;
    let mut lines = text.lines();
    let first = lines.next()?;
    let kind = [Kind::Render, Kind::Layout]
        .into_iter()
        .find(|k| k.first_line() == first)?;
    let wrote = lines
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(str::to_string)
        .collect();
    Some((kind, wrote))
}

/// The names in `dir`, sorted, without the marker.
fn entries(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut v = Vec::new();
    for e in fs::read_dir(dir)? {
        let name = e?.file_name().to_string_lossy().into_owned();
        if name != MARKER {
            v.push(name);
        }
    }
    v.sort();
    Ok(v)
}

/// A layout an older nodeimg wrote (before the marker): nothing but
/// `oci-layout`, `index.json`, `blobs` and nodeimg's `provenance.json`.
fn legacy_layout(dir: &Path, have: &[String]) -> bool {
    const LAYOUT: [&str; 4] = ["blobs", "index.json", "oci-layout", "provenance.json"];
    have.iter().all(|e| LAYOUT.contains(&e.as_str()))
        && dir.join("oci-layout").is_file()
        && fs::read_to_string(dir.join("provenance.json")).is_ok_and(|t| t.contains("\"nodeimg\""))
}

/// Refuses a target that holds one of `inputs`, or lies inside one.
pub fn check_inputs(target: &Path, inputs: &[PathBuf]) -> Result<(), OutputError> {
    let Some(target_abs) = resolved(target) else {
        return Ok(());
    };
    for input in inputs {
        let Ok(input_abs) = fs::canonicalize(input) else {
            continue;
        };
        let reason = if input_abs.starts_with(&target_abs) {
            format!(
                "holds {}, an input of this run; refusing to replace it — write the output elsewhere",
                input.display()
            )
        } else if target_abs.starts_with(&input_abs) {
            format!(
                "lies inside {}, an input of this run; write the output elsewhere",
                input.display()
            )
        } else {
            continue;
        };
        return Err(OutputError::Refused {
            path: target.to_path_buf(),
            reason,
        });
    }
    Ok(())
}

/// The absolute, link-free form of `path` (or of its parent joined with its
/// name, when it does not exist yet).
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = fs::canonicalize(path) {
        return Some(p);
    }
    let parent = fs::canonicalize(parent_dir(path)).ok()?;
    Some(parent.join(path.file_name()?))
}

/// Removes staging folders that earlier runs into the same target left
/// behind: only folders named with `prefix` that carry a marker (or are
/// empty), only while holding the target's lock.
fn remove_stale(parent: &Path, prefix: &str) -> Result<(), OutputError> {
    for entry in fs::read_dir(parent).map_err(io(parent))? {
        let entry = entry.map_err(io(parent))?;
        let name = entry.file_name();
        if !name.to_str().is_some_and(|n| n.starts_with(prefix)) {
            continue;
        }
        let path = entry.path();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        let ours =
            marker_of(&path).is_some() || fs::read_dir(&path).is_ok_and(|mut d| d.next().is_none());
        if is_dir && ours {
            fs::remove_dir_all(&path).map_err(io(&path))?;
        }
    }
    Ok(())
}

/// An exclusive `flock` on a lock file beside the target, removed on drop.
#[derive(Debug)]
struct Lock {
    /// Held open for the lock's lifetime; closing it releases the lock.
    _file: File,
    path: PathBuf,
}

impl Lock {
    fn acquire(target: &Path, path: &Path) -> Result<Self, OutputError> {
        use std::os::fd::AsRawFd;
        loop {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o644)
                .open(path)
                .map_err(io(path))?;
            // SAFETY: flock on a file descriptor we own; no memory involved.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc != 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                    return Err(OutputError::Busy {
                        path: target.to_path_buf(),
                        lock: path.to_path_buf(),
                    });
                }
                return Err(io(path)(e));
            }
            // The previous holder may have removed the file between our open
            // and our lock: then we hold a lock nobody else can see. Retry.
            let held = file.metadata().map_err(io(path))?;
            match fs::symlink_metadata(path) {
                Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => {
                    return Ok(Self {
                        _file: file,
                        path: path.to_path_buf(),
                    });
                }
                _ => continue,
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Removed while still held, so a waiter that opened it re-checks.
        let _ = fs::remove_file(&self.path);
    }
}

/// fsyncs every folder under `dir` (writers fsync their own files).
fn sync_tree(dir: &Path) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            sync_tree(&entry.path())?;
        }
    }
    File::open(dir)?.sync_all()
}

/// Puts `staged` in place of `target`. With an existing target, the two
/// are exchanged atomically and `staged` then holds the old contents; on a
/// file system without exchange the old folder is first renamed to a
/// staging name (it carries the marker, so a crash leaves nothing a later
/// run cannot clean) and restored if the second rename fails.
fn swap_in(staged: &Path, target: &Path) -> std::io::Result<()> {
    if fs::symlink_metadata(target).is_err() {
        return fs::rename(staged, target);
    }
    if exchange(staged, target).is_ok() {
        return Ok(());
    }
    let mut aside = staged.as_os_str().to_owned();
    aside.push("-old");
    let aside = PathBuf::from(aside);
    fs::rename(target, &aside)?;
    if let Err(e) = fs::rename(staged, target) {
        let _ = fs::rename(&aside, target);
        return Err(e);
    }
    fs::rename(&aside, staged)
}

/// Atomically exchanges two paths (Linux `renameat2(RENAME_EXCHANGE)`).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::other("path contains NUL"))
    };
    let (ca, cb) = (c(a)?, c(b)?);
    // SAFETY: both are valid NUL-terminated paths; AT_FDCWD resolves them
    // relative to the working directory like `rename` does.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other("no atomic exchange"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(target: &Path, kind: Kind, content: &str) -> Result<(), OutputError> {
        let s = StagedDir::new(target, kind, &[])?;
        fs::write(s.path().join("file.txt"), content).unwrap();
        s.commit()
    }

    fn hidden(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_its_own_output_and_leaves_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        stage(&out, Kind::Render, "one").unwrap();
        stage(&out, Kind::Render, "two").unwrap();
        assert_eq!(fs::read_to_string(out.join("file.txt")).unwrap(), "two");
        assert!(out.join(MARKER).is_file());
        assert!(hidden(dir.path()).is_empty(), "{:?}", hidden(dir.path()));
    }

    #[test]
    fn refuses_user_folders_files_links_and_other_kinds() {
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join("mine");
        fs::create_dir(&mine).unwrap();
        fs::write(mine.join("notes.txt"), "keep").unwrap();
        let err = stage(&mine, Kind::Render, "x").unwrap_err().to_string();
        assert!(err.contains("not written by nodeimg"), "{err}");
        assert_eq!(fs::read_to_string(mine.join("notes.txt")).unwrap(), "keep");

        let file = dir.path().join("file");
        fs::write(&file, "keep").unwrap();
        assert!(stage(&file, Kind::Render, "x").is_err());
        assert_eq!(fs::read_to_string(&file).unwrap(), "keep");

        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&mine, &link).unwrap();
        assert!(stage(&link, Kind::Render, "x").is_err());

        let rendered = dir.path().join("rendered");
        stage(&rendered, Kind::Render, "x").unwrap();
        let err = stage(&rendered, Kind::Layout, "x").unwrap_err().to_string();
        assert!(err.contains("rendered output"), "{err}");
        // Something added beside what nodeimg wrote (an image built into
        // out/oci after `render -o out`) keeps the folder from being replaced.
        fs::create_dir(rendered.join("oci")).unwrap();
        let err = stage(&rendered, Kind::Render, "x").unwrap_err().to_string();
        assert!(err.contains("holds `oci`"), "{err}");
        assert!(rendered.join("oci").is_dir());
        assert!(hidden(dir.path()).is_empty(), "{:?}", hidden(dir.path()));
    }

    #[test]
    fn a_dropped_stage_leaves_the_target_and_no_debris() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        stage(&out, Kind::Render, "one").unwrap();
        {
            let s = StagedDir::new(&out, Kind::Render, &[]).unwrap();
            fs::write(s.path().join("file.txt"), "half").unwrap();
        }
        assert_eq!(fs::read_to_string(out.join("file.txt")).unwrap(), "one");
        assert!(hidden(dir.path()).is_empty(), "{:?}", hidden(dir.path()));
    }

    #[test]
    fn stale_staging_of_a_killed_run_is_removed_but_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let stale = dir.path().join(".out.nodeimg-staging-abc123");
        fs::create_dir(&stale).unwrap();
        fs::write(stale.join(MARKER), Kind::Layout.marker(&[])).unwrap();
        fs::write(stale.join("big.blob"), "x").unwrap();
        let lookalike = dir.path().join(".out.nodeimg-staging-user");
        fs::create_dir(&lookalike).unwrap();
        fs::write(lookalike.join("mine"), "x").unwrap();
        stage(&out, Kind::Layout, "x").unwrap();
        assert!(!stale.exists());
        assert!(lookalike.join("mine").exists());
    }

    #[test]
    fn a_second_writer_is_refused_while_the_first_holds_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let first = StagedDir::new(&out, Kind::Layout, &[]).unwrap();
        let err = StagedDir::new(&out, Kind::Layout, &[]).unwrap_err();
        assert!(matches!(err, OutputError::Busy { .. }), "{err}");
        first.commit().unwrap();
        stage(&out, Kind::Layout, "x").unwrap();
    }

    #[test]
    fn refuses_a_target_that_holds_or_is_inside_an_input() {
        let dir = tempfile::tempdir().unwrap();
        let proj = dir.path().join("proj");
        fs::create_dir_all(proj.join("overlay")).unwrap();
        fs::write(proj.join("bp.yaml"), "x").unwrap();
        let inputs = [proj.join("bp.yaml"), proj.join("overlay")];
        let err = StagedDir::new(&proj, Kind::Render, &inputs)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not written by nodeimg"), "{err}");
        // Even a folder whose marker claims everything is refused when it
        // holds an input.
        let all = ["bp.yaml".to_string(), "overlay".to_string()];
        fs::write(proj.join(MARKER), Kind::Render.marker(&all)).unwrap();
        let err = StagedDir::new(&proj, Kind::Render, &inputs)
            .unwrap_err()
            .to_string();
        assert!(err.contains("an input of this run"), "{err}");
        let err = StagedDir::new(&proj.join("overlay/out"), Kind::Render, &inputs)
            .unwrap_err()
            .to_string();
        assert!(err.contains("lies inside"), "{err}");
        assert!(proj.join("bp.yaml").is_file());
    }

    #[test]
    fn files_honour_the_umask_and_keep_an_existing_mode() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("m.prom");
        // Read, not set: other tests may build under another umask.
        let status = fs::read_to_string("/proc/self/status").unwrap();
        let umask = status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .map(|m| u32::from_str_radix(m.trim(), 8).unwrap())
            .unwrap();
        write_file(&new, b"x 1\n").unwrap();
        let mode = fs::metadata(&new).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask);
        fs::set_permissions(&new, fs::Permissions::from_mode(0o600)).unwrap();
        write_file(&new, b"x 2\n").unwrap();
        assert_eq!(
            fs::metadata(&new).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(fs::read(&new).unwrap(), b"x 2\n");
        assert!(hidden(dir.path()).is_empty(), "{:?}", hidden(dir.path()));
    }
}
