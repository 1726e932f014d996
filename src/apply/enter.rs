//! How apply starts a program of the root it works on, without programs of its own:
//! chrooted into a root being built (a pipeline's folder), or in the namespaces of the
//! host's PID 1 when the root is the host's, mounted in a container (`--root /host`, as
//! system-upgrade-controller runs its Jobs: privileged, `hostPID`).
//!
//! Both are done by nodeimg itself between fork and exec (`chroot(2)`, `setns(2)`), not
//! by `chroot` or `nsenter` binaries: the applier container is the node image itself,
//! which holds nodeimg and the node's files but no userland, so anything it runs must
//! be found in the root it enters. The program is looked up on `PATH` after the switch,
//! i.e. inside the root.

use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The `PATH` a program of the root is looked up on.
pub const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Where a program runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// This machine as it is (the root is `/`).
    Here,
    /// Chrooted into this folder.
    Chroot(PathBuf),
    /// In the mount, UTS, IPC and network namespaces of the host's PID 1 (the root
    /// is the host's, seen from a container): its `/` is the host's.
    Host,
}

/// `argv` as a command that runs in `place`. A failure to enter (a missing folder,
/// no right to `setns`) makes the spawn fail with that error.
pub fn command(place: &Place, argv: &[String]) -> std::io::Result<Command> {
    let mut c = Command::new(&argv[0]);
    c.args(&argv[1..]).env("PATH", PATH);
    match place {
        Place::Here => {}
        Place::Chroot(dir) => {
            let dir = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
                .map_err(std::io::Error::other)?;
            // SAFETY: only chroot(2) and chdir(2), async-signal-safe, between fork and exec.
            unsafe {
                c.pre_exec(move || {
                    if libc::chroot(dir.as_ptr()) != 0 || libc::chdir(c"/".as_ptr()) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        Place::Host => {
            // Opened here, before the fork: the child only calls setns(2).
            let spaces: Vec<(OwnedFd, libc::c_int)> = [
                ("mnt", libc::CLONE_NEWNS),
                ("uts", libc::CLONE_NEWUTS),
                ("ipc", libc::CLONE_NEWIPC),
                ("net", libc::CLONE_NEWNET),
            ]
            .into_iter()
            .map(|(name, flag)| {
                let path = Path::new("/proc/1/ns").join(name);
                File::open(&path)
                    .map(|f| (OwnedFd::from(f), flag))
                    .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
            })
            .collect::<Result<_, _>>()?;
            // SAFETY: only setns(2) and chdir(2), async-signal-safe, between fork and exec.
            unsafe {
                c.pre_exec(move || {
                    for (fd, flag) in &spaces {
                        if libc::setns(fd.as_raw_fd(), *flag) != 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                    }
                    if libc::chdir(c"/".as_ptr()) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn here_runs_as_is() {
        let out = command(&Place::Here, &["true".into()])
            .unwrap()
            .status()
            .unwrap();
        assert!(out.success());
    }

    #[test]
    fn a_chroot_that_cannot_be_entered_fails_the_spawn() {
        // Not root, or a folder without the program: either way the spawn fails and
        // says why, rather than running the program outside the root.
        let dir = tempfile::tempdir().unwrap();
        let e = command(&Place::Chroot(dir.path().to_path_buf()), &["true".into()])
            .unwrap()
            .status();
        assert!(e.is_err(), "{e:?}");
    }
}
