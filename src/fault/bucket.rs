//! NVIDIA's resolution buckets (the Xid catalog's "Fault Resolution Buckets" sheet) and
//! what each asks of a bare-metal node, in nodeimg's [`Action`]s; and the driver's GPU
//! recovery actions (`gpu_recovery_action` in `nvidia-smi -q -x`, the text of Xid 154).
//!
//! The catalog's own definitions, from
//! <https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html>:
//!
//! | bucket | the catalog says | action |
//! | --- | --- | --- |
//! | IGNORE | "No Action required" | ignore |
//! | RESTART_APP | "The application should be restarted; RESET_GPU or RESTART_BM is not deemed necessary" | restart-app |
//! | RESET_GPU | reset the GPU; "RESTART_BM is not deemed necessary" | reset-gpu |
//! | RESTART_BM | "Restart bare metal, system should be restarted" | reboot-node |
//! | RESTART_VM | "VM owning the affected GPU must be restarted" (on bare metal: the node) | reboot-node |
//! | CONTACT_SUPPORT | "contact your support organization" | service |
//! | CHECK_MECHANICALS | "device seating and all applicable connections ... are secure" | check-cooling-power |
//! | UPDATE_SWFW | "Update Firmware and Software to latest versions" (a new image) | service |
//! | CHECK_UVM | "If UVM/vGPU is being utilized, RESET_GPU; otherwise IGNORE" (CUDA uses UVM) | reset-gpu |
//! | WORKFLOW_XID_48 | "Solo: RESET_GPU; w/ 63 or 64: DRAIN_AND_RESET" | reset-gpu |
//! | WORKFLOW_NVLINK_ERR | Xid 74: "A GPU reset or node reboot is needed to clear this error" | reset-gpu |
//! | WORKFLOW_XID_45 | "Solo: RESTART_FM; Not Solo: IGNORE (follow guidance in other Xid)" | see below |
//! | XID_154 | "Follow XID 154 reported guidance": the recovery action in its text | see below |
//! | WORKFLOW_NVLINK5_ERR | decode the Xid 144-150 message against the decode sheet | see below |
//!
//! Xid 45 is also what the driver logs whenever it tears down an application (Ctrl-C, a
//! kill, a GPU reset: the catalog's trigger text): with another Xid on the GPU it is
//! ignored, as the catalog says; alone it asks for Fabric Manager's restart as a warning,
//! so that a killed job never blocks a node. Xid 144-150 carry `Fatal` or `Nonfatal` in
//! their text; the decode sheet's rows give RESET_GPU for the fatal ones and IGNORE (or the
//! Xid 154 guidance) for the non-fatal ones; a message with neither word is an unknown
//! verdict rather than a guess.

use super::{Action, Severity};

/// A bucket name of the catalog's "Immediate Action" column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bucket {
    Ignore,
    RestartApp,
    ResetGpu,
    RestartBm,
    RestartVm,
    ContactSupport,
    CheckMechanicals,
    UpdateSwfw,
    CheckUvm,
    Xid154,
    WorkflowXid45,
    WorkflowXid48,
    WorkflowNvlinkErr,
    WorkflowNvlink5Err,
    /// The catalog leaves the column empty (Xid 162-172 in this copy).
    Unspecified,
}

impl Bucket {
    /// The bucket of a catalog cell (exact, as the catalog spells it).
    pub fn parse(cell: &str) -> Option<Bucket> {
        Some(match cell.trim() {
            "IGNORE" => Bucket::Ignore,
            "RESTART_APP" => Bucket::RestartApp,
            "RESET_GPU" => Bucket::ResetGpu,
            "RESTART_BM" => Bucket::RestartBm,
            "RESTART_VM" => Bucket::RestartVm,
            "CONTACT_SUPPORT" => Bucket::ContactSupport,
            "CHECK_MECHANICALS" => Bucket::CheckMechanicals,
            "UPDATE_SWFW" => Bucket::UpdateSwfw,
            "CHECK_UVM" => Bucket::CheckUvm,
            "XID_154" => Bucket::Xid154,
            "WORKFLOW_XID_45" => Bucket::WorkflowXid45,
            "WORKFLOW_XID_48" => Bucket::WorkflowXid48,
            "WORKFLOW_NVLINK_ERR" => Bucket::WorkflowNvlinkErr,
            "WORKFLOW_NVLINK5_ERR" => Bucket::WorkflowNvlink5Err,
            "" => Bucket::Unspecified,
            _ => return None,
        })
    }

    /// What the bucket asks for, given the event's message and whether it came alone
    /// (no other Xid on the same GPU among the events judged together).
    pub fn resolve(self, message: &str, solo: bool) -> Resolution {
        let plain = |action: Action| Resolution::Action(action, action.severity());
        match self {
            Bucket::Ignore => plain(Action::Ignore),
            Bucket::RestartApp => plain(Action::RestartApp),
            Bucket::ResetGpu | Bucket::CheckUvm | Bucket::WorkflowXid48 => plain(Action::ResetGpu),
            Bucket::WorkflowNvlinkErr => plain(Action::ResetGpu),
            Bucket::RestartBm | Bucket::RestartVm => plain(Action::RebootNode),
            Bucket::ContactSupport | Bucket::UpdateSwfw => plain(Action::Service),
            Bucket::CheckMechanicals => plain(Action::CheckCoolingPower),
            Bucket::WorkflowXid45 if solo => {
                Resolution::Action(Action::RestartDaemon, Severity::Warning)
            }
            Bucket::WorkflowXid45 => plain(Action::Ignore),
            Bucket::Xid154 => match xid154_target(message).map(|t| (t, recovery_action(t))) {
                Some((_, Some(action))) => plain(action),
                Some((name, None)) => Resolution::Unknown(format!(
                    "Xid 154 names the recovery action `{name}`, which nodeimg does not know"
                )),
                None => Resolution::Unknown(
                    "Xid 154 without a recovery action nodeimg can read (\"... to 0xN (Name)\")"
                        .to_owned(),
                ),
            },
            Bucket::WorkflowNvlink5Err => match nvlink5_severity(message) {
                Some(true) => plain(Action::ResetGpu),
                Some(false) => plain(Action::Ignore),
                None => Resolution::Unknown(
                    "the message says neither Fatal nor Nonfatal; the catalog's Xid 144-150 \
                     decode needs it"
                        .to_owned(),
                ),
            },
            Bucket::Unspecified => {
                Resolution::Unknown("the catalog gives no resolution bucket".to_owned())
            }
        }
    }
}

/// What a bucket resolves to for one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    Action(Action, Severity),
    /// Nothing to go on: an unknown verdict, never a guess.
    Unknown(String),
}

/// The driver's GPU recovery action, as `nvidia-smi -q -x` (`gpu_recovery_action`: `None`,
/// `Reset`, `Reboot`, `Drain P2P`, `Drain and Reset`) or Xid 154 (`GPU Reset Required`,
/// `Node Reboot Required`, ...) names it; NVML's `nvmlDeviceGpuRecoveryAction_t` adds the
/// bus reset and the system reboot. Draining P2P traffic comes before a reset, so both
/// drains are a GPU reset here.
pub fn recovery_action(name: &str) -> Option<Action> {
    let key: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    Some(match key.as_str() {
        "none" => Action::Ignore,
        "reset" | "gpureset" | "gpuresetrequired" | "drainp2p" | "drainandreset" | "busreset" => {
            Action::ResetGpu
        }
        "reboot" | "nodereboot" | "noderebootrequired" | "systemreboot" => Action::RebootNode,
        _ => return None,
    })
}

/// The target of `GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot
/// Required)`: the name in the parentheses after ` to `.
fn xid154_target(message: &str) -> Option<&str> {
    let (_, after) = message.rsplit_once(" to ")?;
    let open = after.find('(')?;
    let close = after[open..].find(')')? + open;
    Some(after[open + 1..close].trim())
}

/// `Some(true)` for `Fatal`, `Some(false)` for `Nonfatal`/`Non-fatal`, from the words of an
/// Xid 144-150 message after the code.
fn nvlink5_severity(message: &str) -> Option<bool> {
    let mut fatal = None;
    for word in message.split(|c: char| c.is_whitespace() || c == ',') {
        match word.to_ascii_lowercase().as_str() {
            "nonfatal" | "non-fatal" => return Some(false),
            "fatal" => fatal = Some(true),
            _ => {}
        }
    }
    fatal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xid154_reads_the_new_recovery_action() {
        let r = Bucket::Xid154.resolve(
            "NVRM: Xid (PCI:0000:c1:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)",
            true,
        );
        assert_eq!(
            r,
            Resolution::Action(Action::RebootNode, Severity::Critical)
        );
        let r = Bucket::Xid154.resolve("... from 0x0 (None) to 0x1 (GPU Reset Required)", true);
        assert_eq!(r, Resolution::Action(Action::ResetGpu, Severity::Critical));
        assert!(matches!(
            Bucket::Xid154.resolve("... to 0x9 (Teleport)", true),
            Resolution::Unknown(m) if m.contains("Teleport")
        ));
    }

    #[test]
    fn nvlink5_fatal_or_not() {
        let fatal = "NVRM: Xid (PCI:0008:01:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 08 (0x004505c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)";
        let nonfatal = "NVRM: Xid (PCI:0008:01:00): 145, RLW_REMAP Nonfatal XC0 i0 Link 17 (0x00000102 0x00000100 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)";
        assert_eq!(
            Bucket::WorkflowNvlink5Err.resolve(fatal, true),
            Resolution::Action(Action::ResetGpu, Severity::Critical)
        );
        assert_eq!(
            Bucket::WorkflowNvlink5Err.resolve(nonfatal, true),
            Resolution::Action(Action::Ignore, Severity::Warning)
        );
        assert!(matches!(
            Bucket::WorkflowNvlink5Err.resolve("NVRM: Xid (PCI:0008:01:00): 147, TREX", true),
            Resolution::Unknown(_)
        ));
    }

    #[test]
    fn xid45_follows_other_xids() {
        assert_eq!(
            Bucket::WorkflowXid45.resolve("", false),
            Resolution::Action(Action::Ignore, Severity::Warning)
        );
        assert_eq!(
            Bucket::WorkflowXid45.resolve("", true),
            Resolution::Action(Action::RestartDaemon, Severity::Warning)
        );
    }

    #[test]
    fn the_drivers_recovery_actions() {
        assert_eq!(recovery_action("Drain and Reset"), Some(Action::ResetGpu));
        assert_eq!(recovery_action("Reboot"), Some(Action::RebootNode));
        assert_eq!(recovery_action("None"), Some(Action::Ignore));
        assert_eq!(recovery_action("Recover IMEX Domain"), None);
    }
}
