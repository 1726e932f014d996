//! The fixed set of vendor commands verify may run, and what a run returns.
//!
//! Commands are an enum, not free-form strings: the host runs only these, with fixed
//! arguments, from a fixed absolute path on the machine running nodeimg (the first
//! candidate that exists) or from a path the user named for that [`Program`]. A systemd
//! unit name is parsed into [`UnitName`] first so that it can never be taken for an option.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// A program verify may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Program {
    NvidiaSmi,
    RocmSmi,
    Containerd,
    Kubelet,
    Systemctl,
    Df,
    Modinfo,
    Ipmitool,
}

impl Program {
    pub const ALL: [Program; 8] = [
        Program::NvidiaSmi,
        Program::RocmSmi,
        Program::Containerd,
        Program::Kubelet,
        Program::Systemctl,
        Program::Df,
        Program::Modinfo,
        Program::Ipmitool,
    ];

    /// The program's name (`nvidia-smi`), as on the command line (`--tool nvidia-smi=PATH`).
    pub fn name(self) -> &'static str {
        match self {
            Program::NvidiaSmi => "nvidia-smi",
            Program::RocmSmi => "rocm-smi",
            Program::Containerd => "containerd",
            Program::Kubelet => "kubelet",
            Program::Systemctl => "systemctl",
            Program::Df => "df",
            Program::Modinfo => "modinfo",
            Program::Ipmitool => "ipmitool",
        }
    }

    /// Absolute paths on the live machine, tried in order; the first that exists is run.
    pub fn candidates(self) -> &'static [&'static str] {
        match self {
            Program::NvidiaSmi => &["/usr/bin/nvidia-smi", "/usr/local/bin/nvidia-smi"],
            Program::RocmSmi => &["/opt/rocm/bin/rocm-smi", "/usr/bin/rocm-smi"],
            Program::Containerd => &["/usr/bin/containerd", "/usr/local/bin/containerd"],
            Program::Kubelet => &["/usr/bin/kubelet", "/usr/local/bin/kubelet"],
            Program::Systemctl => &["/usr/bin/systemctl", "/bin/systemctl"],
            Program::Df => &["/usr/bin/df", "/bin/df"],
            Program::Modinfo => &["/usr/sbin/modinfo", "/sbin/modinfo", "/usr/bin/modinfo"],
            Program::Ipmitool => &["/usr/bin/ipmitool", "/usr/sbin/ipmitool"],
        }
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Program {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Program::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown program `{s}`; one of: {}",
                    Program::ALL.map(Program::name).join(", ")
                )
            })
    }
}

/// A systemd unit name: letters, digits and `@._:-\`, not starting with `-`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct UnitName(String);

impl UnitName {
    pub fn parse(name: &str) -> Result<Self, String> {
        let valid_char = |c: char| c.is_ascii_alphanumeric() || "@._:-\\".contains(c);
        if name.is_empty() || name.len() > 255 {
            return Err(format!("unit name {name:?}: must be 1 to 255 characters"));
        }
        if name.starts_with('-') || !name.chars().all(valid_char) {
            return Err(format!(
                "unit name {name:?}: invalid character or leading '-'"
            ));
        }
        Ok(UnitName(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A mount point to ask `df` about: an absolute path without line breaks (df prints one
/// line per mount point, the path last).
/// A kernel module name (`nvidia`, `mlx5_core`): letters, digits, `_` and `-`, never an
/// option.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct ModuleName(String);

impl ModuleName {
    pub fn parse(name: &str) -> Result<Self, String> {
        let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        if name.is_empty() || name.len() > 55 || name.starts_with('-') || !name.chars().all(valid) {
            return Err(format!(
                "module name {name:?}: 1 to 55 letters, digits, '_' or '-', not starting with '-'"
            ));
        }
        Ok(ModuleName(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct MountPoint(String);

impl MountPoint {
    pub fn parse(path: &str) -> Result<Self, String> {
        if !path.starts_with('/') || path.chars().any(char::is_control) {
            return Err(format!(
                "mount point {path:?}: must be absolute, without control characters"
            ));
        }
        Ok(MountPoint(path.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// One of the commands verify runs on the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VendorCommand {
    /// `nvidia-smi -q -x`: the full NVIDIA device query as XML.
    NvidiaSmiQueryXml,
    /// `rocm-smi ... --json`: AMD GPU identity, bus, VBIOS, temperature, power, NUMA.
    RocmSmiJson,
    /// `containerd --version`.
    ContainerdVersion,
    /// `kubelet --version`.
    KubeletVersion,
    /// `systemctl is-active -- UNIT...`: one state line per unit, in order.
    SystemctlIsActive(Vec<UnitName>),
    /// `df --block-size=1 --output=size,avail,itotal,iavail,target -- MOUNT...` (GNU
    /// coreutils): bytes and inodes, in all and available, of each mount point.
    DfUsage(Vec<MountPoint>),
    /// `modinfo -- NAME`: the module file `modprobe` would load for the running kernel,
    /// and its `.modinfo` fields and signature.
    Modinfo(ModuleName),
    /// `ipmitool mc info`: the BMC's Get Device ID answer (its firmware revision).
    IpmitoolMcInfo,
}

impl VendorCommand {
    /// The program this command runs.
    pub fn program(&self) -> Program {
        match self {
            VendorCommand::NvidiaSmiQueryXml => Program::NvidiaSmi,
            VendorCommand::RocmSmiJson => Program::RocmSmi,
            VendorCommand::ContainerdVersion => Program::Containerd,
            VendorCommand::KubeletVersion => Program::Kubelet,
            VendorCommand::SystemctlIsActive(_) => Program::Systemctl,
            VendorCommand::DfUsage(_) => Program::Df,
            VendorCommand::Modinfo(_) => Program::Modinfo,
            VendorCommand::IpmitoolMcInfo => Program::Ipmitool,
        }
    }

    pub fn args(&self) -> Vec<String> {
        let fixed: &[&str] = match self {
            VendorCommand::NvidiaSmiQueryXml => &["-q", "-x"],
            VendorCommand::RocmSmiJson => &[
                "--showproductname",
                "--showid",
                "--showbus",
                "--showvbios",
                "--showserial",
                "--showuniqueid",
                "--showtemp",
                "--showpower",
                "--showtoponuma",
                "--showdriverversion",
                "--showmeminfo",
                "vram",
                "--json",
            ],
            VendorCommand::ContainerdVersion | VendorCommand::KubeletVersion => &["--version"],
            VendorCommand::Modinfo(name) => {
                return vec!["--".to_owned(), name.as_str().to_owned()];
            }
            VendorCommand::IpmitoolMcInfo => &["mc", "info"],
            VendorCommand::SystemctlIsActive(units) => {
                return ["is-active", "--"]
                    .into_iter()
                    .map(str::to_owned)
                    .chain(units.iter().map(|unit| unit.as_str().to_owned()))
                    .collect();
            }
            VendorCommand::DfUsage(mounts) => {
                return [
                    "--block-size=1",
                    "--output=size,avail,itotal,iavail,target",
                    "--",
                ]
                .into_iter()
                .map(str::to_owned)
                .chain(mounts.iter().map(|m| m.as_str().to_owned()))
                .collect();
            }
        };
        fixed.iter().map(|s| (*s).to_owned()).collect()
    }

    /// The program's short name, for messages.
    pub fn program_name(&self) -> &'static str {
        self.program().name()
    }
}

impl fmt::Display for VendorCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.program_name())?;
        for arg in self.args() {
            write!(f, " {arg}")?;
        }
        Ok(())
    }
}

/// What a finished command printed, and how it exited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutput {
    /// The exit code; `None` when a signal ended the process.
    pub status: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub elapsed: Duration,
}

impl CommandOutput {
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }

    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// A one-line summary of a failed run, for an `Unknown` reason.
    pub fn failure_summary(&self) -> String {
        let stderr = String::from_utf8_lossy(&self.stderr);
        let first = stderr
            .lines()
            .chain(String::from_utf8_lossy(&self.stdout).lines())
            .map(str::trim)
            .find(|line| !line.is_empty())
            .unwrap_or("")
            .to_owned();
        match self.status {
            Some(code) => format!("exited with status {code}: {first}"),
            None => format!("killed by a signal: {first}"),
        }
    }
}
