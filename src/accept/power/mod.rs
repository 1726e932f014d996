//! GPU power, clocks, temperature and clock event reasons sampled while an acceptance
//! workload runs: the CSV `nvidia-smi --query-gpu=… --format=csv -lms N` prints, one
//! header line (`timestamp, index, power.draw [W], …`) and a row per GPU per interval.
//! The rendered framework and NCCL Jobs start it beside their workload and print its rows
//! after the workload's own output, under [`SECTION`] (followed by ` node=<name>` where the
//! Pod knows its node); a file of the rows alone is read too. A multi-node run's log holds
//! one section per node, the MPI launcher's one after another. On AMD nodes the section holds amd-smi's JSON instead ([`amd`]), read into the same
//! samples and judged alike.
//!
//! Columns are found by their header name, so any field list that includes `index` and
//! `power.draw` reads — the sampler's own and a wider one such as the exporter's (`power.draw
//! [W]`, `enforced.power.limit [W]`, `clocks.current.sm [MHz]`, `clocks_event_reasons.*`).
//! Each event reason is read by name, under its current (`clocks_event_reasons.`) or its
//! pre-535 spelling (`clocks_throttle_reasons.`); [`reasons`] says which ones point at the
//! cooling or the power feed. `[N/A]` and `[Not Supported]` read as absent.

pub mod amd;
pub mod reasons;

use super::lines::each;
use crate::line_error::LineError;
use std::collections::BTreeMap;

/// The line the rendered Jobs print before the sampler's rows.
pub const SECTION: &str = "# nodeimg power samples";

/// The fields the rendered sampler asks for, in order (names every driver since 450
/// accepts; the event reasons by their long-standing `clocks_throttle_reasons.` spelling).
pub const QUERY: &[&str] = &[
    "timestamp",
    "index",
    "pci.bus_id",
    "power.draw",
    "enforced.power.limit",
    "clocks.sm",
    "clocks.max.sm",
    "temperature.gpu",
    "clocks_throttle_reasons.sw_power_cap",
    "clocks_throttle_reasons.hw_slowdown",
    "clocks_throttle_reasons.hw_thermal_slowdown",
    "clocks_throttle_reasons.hw_power_brake_slowdown",
    "clocks_throttle_reasons.sw_thermal_slowdown",
];

/// What load the samples were taken under: the output they came with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Load {
    /// The framework Job: matrix multiplications on every GPU (the probe's `load` step).
    Gemm,
    /// An nccl-tests/rccl-tests run.
    Nccl,
    /// A framework run other than the matmul load: the multi-node PyTorch or JAX run.
    Framework,
    /// Samples alone: the load is not known.
    Unknown,
}

/// One GPU at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Line in the file.
    pub line: usize,
    pub index: u32,
    pub bus: Option<String>,
    /// Watts (`power.draw`: a one-second average from Ampere on).
    pub power: Option<f64>,
    /// Watts: `enforced.power.limit`, else `power.limit`.
    pub limit: Option<f64>,
    /// MHz: `clocks.sm` (`clocks.current.sm`) and `clocks.max.sm`.
    pub sm_clock: Option<f64>,
    pub max_sm_clock: Option<f64>,
    /// °C.
    pub temperature: Option<f64>,
    /// The event reasons reported `Active`, by name (`hw_slowdown`).
    pub active: Vec<String>,
}

/// The samples of one output and the load they were taken under.
#[derive(Debug, Clone, PartialEq)]
pub struct Samples {
    pub load: Load,
    /// The node the samples were taken on, where the section names it.
    pub node: Option<String>,
    pub samples: Vec<Sample>,
    /// What the sampler printed instead of samples (`nvidia-smi: not found`), when it did.
    pub error: Option<(usize, String)>,
}

/// A column's name without its unit (`power.draw [W]` → `power.draw`).
fn name(header: &str) -> &str {
    let h = header.trim();
    h.split_once(" [").map_or(h, |(n, _)| n).trim()
}

/// A header line of the sampler's CSV.
fn is_header(line: &str) -> bool {
    if line.starts_with('#') {
        return false;
    }
    let names: Vec<&str> = line.split(',').map(name).collect();
    names.contains(&"index") && names.contains(&"power.draw")
}

/// A value without its unit; `None` for `[N/A]`, `[Not Supported]` and the like.
fn number(field: &str, line: usize, column: &str) -> Result<Option<f64>, LineError> {
    let f = field.trim();
    if f.starts_with('[') || f.is_empty() || f == "N/A" {
        return Ok(None);
    }
    let digits = f.split_whitespace().next().unwrap_or("");
    let v: f64 = digits
        .parse()
        .map_err(|_| LineError::new(line, format!("`{column}`: `{f}` is not a number")))?;
    if !v.is_finite() || v < 0.0 {
        return Err(LineError::new(
            line,
            format!("`{column}`: `{f}` is not a finite, non-negative number"),
        ));
    }
    Ok(Some(v))
}

/// The samples of the first sampler table in `text` after line `from` and every one after
/// it up to line `until` (the header repeats when the sampler restarts). `Ok(None)` when
/// there is none.
fn tables(text: &str, from: usize, until: usize) -> Result<Option<Vec<Sample>>, LineError> {
    let mut columns: Option<BTreeMap<String, usize>> = None;
    let mut width = 0;
    let mut out = Vec::new();
    let mut found = false;
    for line in each(text).skip(from).take(until.saturating_sub(from)) {
        let t = line.text.trim();
        if is_header(t) {
            let names: Vec<&str> = t.split(',').map(name).collect();
            width = names.len();
            columns = Some(
                names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| (n.to_string(), i))
                    .collect(),
            );
            found = true;
            continue;
        }
        let Some(cols) = &columns else { continue };
        let fields: Vec<&str> = t.split(',').map(str::trim).collect();
        if t.is_empty() || fields.len() != width {
            // The end of a table: the sampler's rows stop where other output starts.
            columns = None;
            continue;
        }
        let get = |n: &str| cols.get(n).map(|&i| fields[i]);
        let num = |names: &[&str]| -> Result<Option<f64>, LineError> {
            for n in names {
                if let Some(f) = get(n) {
                    return number(f, line.number, n);
                }
            }
            Ok(None)
        };
        let index = get("index")
            .and_then(|i| i.parse::<u32>().ok())
            .ok_or_else(|| {
                LineError::new(
                    line.number,
                    format!(
                        "`index`: `{}` is not a GPU index",
                        get("index").unwrap_or("")
                    ),
                )
            })?;
        let mut active = Vec::new();
        for (col, &i) in cols {
            let reason = col
                .strip_prefix("clocks_event_reasons.")
                .or_else(|| col.strip_prefix("clocks_throttle_reasons."));
            if let Some(reason) = reason
                && !matches!(reason, "supported" | "active")
                && fields[i] == "Active"
            {
                active.push(reason.to_owned());
            }
        }
        out.push(Sample {
            line: line.number,
            index,
            bus: get("pci.bus_id").map(str::to_owned),
            power: num(&["power.draw", "power.draw.average"])?,
            limit: num(&["enforced.power.limit", "power.limit"])?,
            sm_clock: num(&["clocks.sm", "clocks.current.sm"])?,
            max_sm_clock: num(&["clocks.max.sm"])?,
            temperature: num(&["temperature.gpu"])?,
            active,
        });
    }
    if !found {
        return Ok(None);
    }
    if out.is_empty() {
        return Err(LineError::new(
            1,
            "a power sample header without a sample: the sampler stopped before its first row",
        ));
    }
    Ok(Some(out))
}

/// The samples of a file that holds the sampler's CSV alone.
pub fn parse(text: &str) -> Result<Samples, LineError> {
    let samples = tables(text, 0, usize::MAX)?.ok_or_else(|| {
        LineError::new(
            1,
            "no nvidia-smi --query-gpu header with index and power.draw",
        )
    })?;
    Ok(Samples {
        load: Load::Unknown,
        node: None,
        samples,
        error: None,
    })
}

/// The node a section line names: `# nodeimg power samples node=<name>`; `Ok(None)` for
/// another line, `Ok(Some(None))` for a section without a name.
fn section_line(text: &str) -> Option<Option<&str>> {
    let rest = text.trim().strip_prefix(SECTION)?;
    if rest.is_empty() {
        return Some(None);
    }
    let node = rest.strip_prefix(" node=")?.trim();
    Some((!node.is_empty()).then_some(node))
}

/// The samples a Job printed under [`SECTION`] after its workload's output, one set per
/// section (a multi-node log has one per node): nvidia-smi's CSV or amd-smi's JSON. A
/// section with neither keeps what the sampler printed instead (a workload image without
/// `nvidia-smi` or `amd-smi`), for the judge to report; it is not a damaged file.
pub fn section(text: &str, load: Load) -> Result<Vec<Samples>, LineError> {
    let starts: Vec<(usize, Option<String>)> = each(text)
        .filter_map(|l| section_line(l.text).map(|n| (l.number, n.map(str::to_owned))))
        .collect();
    let mut out = Vec::new();
    for (i, (start, node)) in starts.iter().enumerate() {
        let until = starts.get(i + 1).map_or(usize::MAX, |s| s.0 - 1);
        let found = match tables(text, *start, until)? {
            Some(samples) => Some(samples),
            None => amd::samples(text, *start)?,
        };
        let set = match found {
            Some(samples) => Samples {
                load,
                node: node.clone(),
                samples,
                error: None,
            },
            None => {
                let said = each(text)
                    .skip(*start)
                    .take(until.saturating_sub(*start))
                    .find(|l| !l.text.trim().is_empty())
                    .map_or((*start, "nothing".to_owned()), |l| {
                        (l.number, l.text.trim().chars().take(200).collect())
                    });
                Samples {
                    load,
                    node: node.clone(),
                    samples: Vec::new(),
                    error: Some(said),
                }
            }
        };
        out.push(set);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the rendered sampler prints on two H100s (`--format=csv`, units in the values).
    const SAMPLER: &str = "timestamp, index, pci.bus_id, power.draw [W], enforced.power.limit [W], clocks.sm [MHz], clocks.max.sm [MHz], temperature.gpu, clocks_throttle_reasons.sw_power_cap, clocks_throttle_reasons.hw_slowdown, clocks_throttle_reasons.hw_thermal_slowdown, clocks_throttle_reasons.hw_power_brake_slowdown, clocks_throttle_reasons.sw_thermal_slowdown
2026/12/05 14:02:11.101, 0, 00000000:19:00.0, 69.52 W, 700.00 W, 345 MHz, 1980 MHz, 41, Not Active, Not Active, Not Active, Not Active, Not Active
2026/12/05 14:02:11.102, 1, 00000000:3B:00.0, 70.11 W, 700.00 W, 345 MHz, 1980 MHz, 40, Not Active, Not Active, Not Active, Not Active, Not Active
2026/12/05 14:02:11.601, 0, 00000000:19:00.0, 688.40 W, 700.00 W, 1755 MHz, 1980 MHz, 66, Active, Not Active, Not Active, Not Active, Not Active
2026/12/05 14:02:11.602, 1, 00000000:3B:00.0, [N/A], 700.00 W, 840 MHz, 1980 MHz, 88, Not Active, Active, Active, Not Active, Not Active
";

    #[test]
    fn samples_by_column_name() {
        let s = parse(SAMPLER).unwrap();
        assert_eq!(s.samples.len(), 4);
        let hot = &s.samples[3];
        assert_eq!((hot.index, hot.line), (1, 5));
        assert_eq!(hot.power, None);
        assert_eq!(hot.limit, Some(700.0));
        assert_eq!(hot.sm_clock, Some(840.0));
        assert_eq!(hot.active, ["hw_slowdown", "hw_thermal_slowdown"]);
        assert_eq!(s.samples[2].power, Some(688.4));
        assert_eq!(s.samples[2].active, ["sw_power_cap"]);
        assert_eq!(s.samples[0].bus.as_deref(), Some("00000000:19:00.0"));
    }

    #[test]
    fn a_section_after_the_workload_output() {
        let log = format!(
            "{{\"nodeimg\": \"probe/v1\", \"suite\": \"framework\", \"step\": \"load\", \"status\": \"pass\"}}\n{SECTION}\n{SAMPLER}"
        );
        let s = &section(&log, Load::Gemm).unwrap()[0];
        assert_eq!((s.load, s.samples.len()), (Load::Gemm, 4));
        assert_eq!(s.samples[0].line, 4);
        assert_eq!(s.node, None);
        assert_eq!(section("no samples here\n", Load::Nccl).unwrap(), []);
        // A section whose sampler never started keeps what it printed instead.
        let none = section(
            &format!("{SECTION}\nsh: nvidia-smi: not found\n"),
            Load::Gemm,
        )
        .unwrap()
        .remove(0);
        assert!(none.samples.is_empty());
        assert_eq!(
            none.error,
            Some((2, "sh: nvidia-smi: not found".to_owned()))
        );
        // A damaged value is refused with its line.
        let bad = SAMPLER.replace("688.40 W", "68x.40 W");
        let err = parse(&bad).unwrap_err();
        assert_eq!(err.line, 4);
        assert!(err.message.contains("power.draw"), "{}", err.message);
    }

    #[test]
    fn an_amd_section_after_the_workload_output() {
        let log = format!(
            "# out-of-place in-place\n{SECTION}\n{}",
            amd::tests::SAMPLER
        );
        let s = section(&log, Load::Nccl).unwrap().remove(0);
        assert_eq!((s.load, s.samples.len(), s.error), (Load::Nccl, 3, None));
        assert_eq!(s.samples[0].line, 18);
        let none = section(&format!("{SECTION}\nsh: amd-smi: not found\n"), Load::Gemm)
            .unwrap()
            .remove(0);
        assert_eq!(none.error, Some((2, "sh: amd-smi: not found".to_owned())));
    }

    /// A multi-node log: one section per node, each named, one after another (the MPI
    /// launcher's), the second amd-smi's JSON; each is read up to the next.
    #[test]
    fn one_section_per_node() {
        let log = format!(
            "{{\"nodeimg\": \"probe/v1\", \"suite\": \"framework\", \"step\": \"multinode\", \"status\": \"pass\"}}\n{SECTION} node=gpu-a\n{SAMPLER}{SECTION} node=gpu-b\n{}{SECTION}\nno samples kept on this worker\n",
            amd::tests::SAMPLER
        );
        let sets = section(&log, Load::Framework).unwrap();
        let seen: Vec<(Option<&str>, usize)> = sets
            .iter()
            .map(|s| (s.node.as_deref(), s.samples.len()))
            .collect();
        assert_eq!(seen, [(Some("gpu-a"), 4), (Some("gpu-b"), 3), (None, 0)]);
        assert_eq!(sets[1].samples[0].line, 24);
        assert_eq!(
            sets[2].error.as_ref().map(|e| e.1.as_str()),
            Some("no samples kept on this worker")
        );
        assert_eq!(section_line("# nodeimg power samples node="), Some(None));
        assert_eq!(section_line("# nodeimg power samples nodes"), None);
    }
}
