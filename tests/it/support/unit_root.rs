//! A root folder for systemd-analyze: the rendered layer over the host's own
//! units, with stand-ins for the programs the units start.

use std::path::Path;

/// Copies the rendered layer over a root holding the host's own systemd
/// units, plus empty stand-ins for the programs the units start (nodeimg,
/// nvidia-ctk, kubelet are not installed on the test machine).
pub fn unit_root(r: &nodeimg::render::Rendered, root: &Path) {
    for (path, mode, bytes) in r.layer.files() {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let units = root.join("usr/lib/systemd/system");
    std::fs::create_dir_all(&units).unwrap();
    for e in std::fs::read_dir("/lib/systemd/system").unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, units.join(p.file_name().unwrap())).unwrap();
        }
    }
    std::fs::write(
        root.join("etc/systemd/system/kubelet.service"),
        "[Unit]\nDescription=kubelet\n[Service]\nExecStart=/usr/bin/kubelet\n[Install]\nWantedBy=multi-user.target\n",
    )
    .unwrap();
    for exe in [
        "usr/local/bin/nodeimg",
        "usr/bin/nvidia-ctk",
        "usr/bin/amd-ctk",
        "usr/bin/kubelet",
        "bin/sh",
        "bin/mv",
        "bin/rm",
        "bin/mkdir",
        "bin/rmdir",
        "bin/mount",
        "usr/sbin/grubby",
        "usr/bin/mkdir",
        "usr/bin/touch",
        "usr/bin/systemctl",
        "usr/sbin/swapoff",
        "usr/sbin/update-ca-certificates",
        "usr/bin/update-ca-trust",
    ] {
        let p = root.join(exe);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}
