//! DCGM diagnostics (`dcgmi diag -r N`): what ran, on which GPUs, with which status.
//!
//! Two formats carry the same content: the JSON of `dcgmi diag -j` ([`json`], DCGM 3.x
//! root `DCGM GPU Diagnostic`, DCGM 4.x root `DCGM Diagnostic` with per-entity results)
//! and the text table ([`text`]). Test names differ between releases (`GPU Memory` in
//! 3.x is the `memory` plugin in 4.x; the 3.x deployment checks are the 4.x `software`
//! plugin), so each test also has a canonical [`DcgmTest::plugin`] name used to decide
//! which run level an output reaches.

pub mod json;
pub mod text;

use serde::Serialize;

/// Which rendering of the results the file held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DcgmFormat {
    Json,
    Text,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DcgmDiag {
    pub format: DcgmFormat,
    /// DCGM release, when the output names it.
    pub version: Option<String>,
    /// `Driver Version Detected`.
    pub driver: Option<String>,
    /// `GPU Device IDs Detected` (PCI device ids such as `20b2`), one per GPU.
    pub gpu_device_ids: Vec<String>,
    pub tests: Vec<DcgmTest>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DcgmTest {
    /// `Deployment`, `Integration`, `Hardware`, `Stress` (as printed).
    pub category: String,
    /// As printed: `GPU Memory`, `memory`, `Targeted Stress`, ...
    pub name: String,
    pub results: Vec<DcgmResult>,
    /// Where the test appears in the file.
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DcgmResult {
    pub gpus: GpuScope,
    pub status: Status,
    /// `info` strings and the text of warnings, as printed.
    pub detail: Vec<String>,
}

/// Which GPUs a result speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuScope {
    /// A node-wide result (deployment checks) or `- All`.
    All,
    Gpus(Vec<u32>),
}

/// A result's status, as DCGM spells it in any release.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Fail,
    Warn,
    /// A status word this version does not know: never a pass.
    Unknown(String),
    NotRun,
    Skip,
    Pass,
}

impl Status {
    pub fn parse(word: &str) -> Status {
        let lower = word.trim().to_ascii_lowercase().replace(['_', ' '], "");
        match lower.as_str() {
            "pass" | "passed" => Status::Pass,
            "fail" | "failed" => Status::Fail,
            "warn" | "warning" => Status::Warn,
            "skip" | "skipped" => Status::Skip,
            "notrun" => Status::NotRun,
            _ => Status::Unknown(word.trim().to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Warn => "warn",
            Status::Skip => "skip",
            Status::NotRun => "not-run",
            Status::Unknown(word) => word,
        }
    }
}

/// Run level each plugin first belongs to, from the DCGM user guide's run-level table
/// (<https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html>):
/// the deployment (`software`) checks at every level, `pcie` and `memory` from level 2,
/// `diagnostic`, `targeted_stress`, `targeted_power` and `memory_bandwidth` from level 3,
/// `memtest` and `pulse_test` at level 4. Plugins not listed (EUD, nvbandwidth, ...) are
/// optional: judged when present, never required.
pub const LEVELS: &[(&str, u8)] = &[
    ("software", 1),
    ("pcie", 2),
    ("memory", 2),
    ("diagnostic", 3),
    ("targeted_stress", 3),
    ("targeted_power", 3),
    ("memory_bandwidth", 3),
    ("memtest", 4),
    ("pulse_test", 4),
];

impl DcgmTest {
    /// The DCGM 4.x plugin name this test belongs to: every 3.x deployment check is
    /// `software`, `GPU Memory` is `memory`, `Targeted Stress` is `targeted_stress`.
    pub fn plugin(&self) -> String {
        if self.category.eq_ignore_ascii_case("deployment") {
            return "software".to_owned();
        }
        let name = self
            .name
            .trim()
            .to_ascii_lowercase()
            .replace([' ', '-'], "_");
        match name.as_str() {
            "gpu_memory" => "memory".to_owned(),
            "eud_test" => "eud".to_owned(),
            "sm_stress" => "sm_stress".to_owned(),
            _ => name,
        }
    }

    /// The worst status among the test's results (a test with no result is not run).
    pub fn status(&self) -> Status {
        self.results
            .iter()
            .map(|r| r.status.clone())
            .min()
            .unwrap_or(Status::NotRun)
    }

    /// GPUs named by failing results.
    pub fn failed_gpus(&self) -> Vec<u32> {
        named_gpus(self.results.iter().filter(|r| r.status == Status::Fail))
    }
}

impl DcgmDiag {
    /// The highest run level whose plugins all appear with a result other than skip.
    pub fn level(&self) -> u8 {
        let mut level = 0;
        for candidate in 1..=4u8 {
            let complete = LEVELS
                .iter()
                .filter(|(_, l)| *l <= candidate)
                .all(|(plugin, _)| self.ran(plugin));
            if complete {
                level = candidate;
            } else {
                break;
            }
        }
        level
    }

    /// Plugins of `level` that have no result, or only skips.
    pub fn missing_for(&self, level: u8) -> Vec<&'static str> {
        LEVELS
            .iter()
            .filter(|(_, l)| *l <= level)
            .filter(|(plugin, _)| !self.ran(plugin))
            .map(|(plugin, _)| *plugin)
            .collect()
    }

    /// Every GPU id a result names.
    pub fn gpus(&self) -> Vec<u32> {
        named_gpus(self.tests.iter().flat_map(|t| &t.results))
    }

    /// Whether a test of `plugin` has a result other than skip.
    fn ran(&self, plugin: &str) -> bool {
        self.tests
            .iter()
            .any(|t| t.plugin() == plugin && !matches!(t.status(), Status::Skip | Status::NotRun))
    }
}

/// The GPU ids `results` name, sorted, each once (a result for all GPUs names none).
fn named_gpus<'a>(results: impl Iterator<Item = &'a DcgmResult>) -> Vec<u32> {
    let mut gpus: Vec<u32> = results
        .flat_map(|r| match &r.gpus {
            GpuScope::Gpus(g) => g.clone(),
            GpuScope::All => Vec::new(),
        })
        .collect();
    gpus.sort_unstable();
    gpus.dedup();
    gpus
}

/// `0`, `0,1,2`, `0, 1` → GPU ids.
pub(crate) fn gpu_list(text: &str) -> Option<Vec<u32>> {
    text.split(',')
        .map(|p| p.trim().parse().ok())
        .collect::<Option<Vec<u32>>>()
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(category: &str, name: &str, status: &str) -> DcgmTest {
        DcgmTest {
            category: category.into(),
            name: name.into(),
            results: vec![DcgmResult {
                gpus: GpuScope::All,
                status: Status::parse(status),
                detail: vec![],
            }],
            line: 1,
        }
    }

    #[test]
    fn levels_follow_the_plugins_that_ran() {
        let mut diag = DcgmDiag {
            format: DcgmFormat::Text,
            version: None,
            driver: None,
            gpu_device_ids: vec![],
            tests: vec![
                test("Deployment", "Denylist", "Pass"),
                test("Integration", "PCIe", "Pass - All"),
                test("Hardware", "GPU Memory", "Pass"),
            ],
        };
        assert_eq!(diag.level(), 2);
        assert_eq!(
            diag.missing_for(3),
            [
                "diagnostic",
                "targeted_stress",
                "targeted_power",
                "memory_bandwidth"
            ]
        );
        diag.tests[2] = test("Hardware", "GPU Memory", "Skip");
        assert_eq!(diag.level(), 1, "a skipped plugin does not count");
    }

    #[test]
    fn unknown_status_words_are_never_a_pass() {
        assert_eq!(Status::parse("Pass"), Status::Pass);
        assert_eq!(Status::parse("Not Run"), Status::NotRun);
        assert_eq!(Status::parse("SKIPPED"), Status::Skip);
        assert_eq!(
            Status::parse("Inconclusive"),
            Status::Unknown("Inconclusive".into())
        );
        assert!(Status::Unknown(String::new()) < Status::Pass);
        assert_eq!(
            test("Stress", "Targeted Stress", "x").plugin(),
            "targeted_stress"
        );
    }
}
