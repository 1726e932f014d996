//! Waiting for states that settle by themselves at boot.
//!
//! Right after boot some checks fail only because a state is still on its
//! way: Fabric Manager is `activating` and the GPUs' fabric is "In
//! Progress" while NVSwitch training runs; an InfiniBand port stays `INIT`
//! until the subnet manager sweeps; a link or its negotiated speed comes up
//! seconds after the driver; the clock is not yet synchronised. `verify
//! --settle SECONDS` runs the checks again, a few seconds apart, while
//! every blocking failure is of such a kind and the deadline has not
//! passed; any other failure (a wrong driver, a missing GPU, an ECC error)
//! ends the wait at once, since time will not fix it.

use std::time::{Duration, Instant};

use super::checks::catalog::{gpu, network, system};
use super::checks::{CheckResult, Spec};

/// Checks whose failure at boot may be a state still settling.
pub static SETTLING: &[&Spec] = &[
    &gpu::FABRIC_MANAGER,
    &gpu::FABRIC_STATE,
    &gpu::PERSISTENCE,
    &network::LINK_STATE,
    &network::SPEED,
    &network::RDMA_STATE,
    &network::RDMA_RATE,
    &system::TIME_SYNC,
];

/// Pause between two runs.
pub const INTERVAL: Duration = Duration::from_secs(5);

/// Whether the run is blocked only by checks that may still settle.
pub fn only_settling(results: &[CheckResult]) -> bool {
    let mut blocking = results.iter().filter(|r| r.blocks()).peekable();
    blocking.peek().is_some() && blocking.all(|r| SETTLING.contains(&r.spec))
}

/// Runs `attempt` until it is not blocked only by settling checks, or the
/// deadline passes; returns the last run and how many runs there were.
/// `attempt` returns the checks' results along with whatever else the
/// caller needs from the run.
pub fn run<T>(
    deadline: Duration,
    mut attempt: impl FnMut() -> (T, Vec<CheckResult>),
    mut wait: impl FnMut(Duration),
) -> ((T, Vec<CheckResult>), u32) {
    let started = Instant::now();
    let mut runs = 1;
    let mut last = attempt();
    while only_settling(&last.1) && started.elapsed() + INTERVAL <= deadline {
        wait(INTERVAL);
        last = attempt();
        runs += 1;
    }
    (last, runs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::{Action, Severity};
    use crate::verify::checks::Verdict;
    use crate::verify::checks::catalog::os;

    fn result(spec: &'static Spec, verdict: Verdict) -> CheckResult {
        CheckResult {
            spec,
            subject: None,
            severity: Severity::Critical,
            verdict,
            expected: String::new(),
            observed: String::new(),
            evidence: Vec::new(),
            fault: spec.fault,
            action: Action::None,
            blocked_by: None,
        }
    }

    #[test]
    fn waits_while_only_settling_checks_fail() {
        let mut runs = 0;
        let ((_, last), n) = run(
            Duration::from_secs(60),
            || {
                runs += 1;
                let fabric = if runs < 3 {
                    Verdict::Fail
                } else {
                    Verdict::Pass
                };
                (
                    (),
                    vec![
                        result(&gpu::FABRIC_STATE, fabric),
                        result(&os::DISTRO, Verdict::Pass),
                    ],
                )
            },
            |_| {},
        );
        assert_eq!(n, 3);
        assert!(last.iter().all(|r| r.verdict == Verdict::Pass));
    }

    #[test]
    fn a_lasting_failure_or_the_deadline_ends_the_wait() {
        let ((_, _), n) = run(
            Duration::from_secs(60),
            || {
                (
                    (),
                    vec![
                        result(&gpu::FABRIC_STATE, Verdict::Fail),
                        result(&gpu::DRIVER, Verdict::Fail),
                    ],
                )
            },
            |_| panic!("must not wait"),
        );
        assert_eq!(n, 1);
        let ((_, _), n) = run(
            Duration::from_secs(0),
            || ((), vec![result(&network::LINK_STATE, Verdict::Fail)]),
            |_| panic!("no time left"),
        );
        assert_eq!(n, 1);
        assert!(!only_settling(&[result(&os::DISTRO, Verdict::Pass)]));
    }
}
