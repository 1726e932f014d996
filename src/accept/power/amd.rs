//! The AMD counterpart of the nvidia-smi samples: what the rendered sampler prints on AMD
//! nodes, `amd-smi static --limit --json` once (each GPU's power cap) and then
//! `amd-smi metric --power --clock --temperature --throttle --json` every half second, one
//! JSON array per call, every element one GPU (`{"gpu": 0, "power": {...}, ...}`).
//!
//! The shapes are amd-smi's own (ROCm/amdsmi `amdsmi_cli/amdsmi_commands.py`, `metric_gpu`
//! and `static_limit`, and the JSON examples in its CHANGELOG for ROCm 6.3.0): a measured
//! value is `{"value": N, "unit": "W"}` (older releases print `"550 W"`), a missing one
//! `"N/A"`. Read per GPU: `power.socket_power` (W), the cap `limit.socket_power` (W), the
//! graphics clocks `clock.gfx_<i>.clk` (their mean: MI300X has one per XCD) and `max_clk`,
//! `temperature.hotspot` (the junction; `edge` where it is absent), and the violation
//! flags `throttle.<kind>_violation_status` (`ACTIVE`), named `amd.<kind>` for the reason
//! table ([`super::reasons`]). `throttle` needs amd-smi from ROCm 6.3 on (MI300 and later);
//! `power.throttle_status` (`THROTTLED`, which says not why) is recorded as `amd.throttled`.

use super::Sample;
use crate::line_error::LineError;
use serde_json::Value;
use std::collections::BTreeMap;

/// The violation kinds `amd-smi metric --throttle` reports a status for.
pub const VIOLATIONS: &[&str] = &[
    "prochot",
    "ppt",
    "socket_thermal",
    "vr_thermal",
    "hbm_thermal",
];

/// The line (1-based) of byte `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at].bytes().filter(|&b| b == b'\n').count() + 1
}

/// A measured value: `{"value": N, "unit": ...}`, a number, or `"N unit"`; `None` for
/// `"N/A"` and absent fields.
fn number(v: Option<&Value>, line: usize, field: &str) -> Result<Option<f64>, LineError> {
    let v = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(o)) => match o.get("value") {
            Some(x) => x,
            None => return Ok(None),
        },
        Some(x) => x,
    };
    let n = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) if s.trim() == "N/A" || s.trim().is_empty() => return Ok(None),
        Value::String(s) => s.split_whitespace().next().and_then(|d| d.parse().ok()),
        _ => None,
    };
    match n {
        Some(n) if n.is_finite() && n >= 0.0 => Ok(Some(n)),
        _ => Err(LineError::new(
            line,
            format!("amd-smi `{field}`: `{v}` is not a finite, non-negative number"),
        )),
    }
}

/// The GPU objects of one JSON document (an array, or one object).
fn gpus(doc: &Value) -> Vec<&serde_json::Map<String, Value>> {
    match doc {
        Value::Array(a) => a.iter().filter_map(Value::as_object).collect(),
        Value::Object(o) => vec![o],
        _ => Vec::new(),
    }
}

/// The samples of the amd-smi JSON documents in `text` from its line `from` (1-based; the
/// documents start after it). `Ok(None)` when the first thing there is not JSON.
pub fn samples(text: &str, from: usize) -> Result<Option<Vec<Sample>>, LineError> {
    // Byte offset where line `from + 1` starts.
    let start = match from {
        0 => 0,
        n => text
            .match_indices('\n')
            .nth(n - 1)
            .map_or(text.len(), |(i, _)| i + 1),
    };
    let rest = &text[start..];
    let first = rest.trim_start();
    if !(first.starts_with('[') || first.starts_with('{')) {
        return Ok(None);
    }
    let mut limits: BTreeMap<u32, f64> = BTreeMap::new();
    let mut out = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
    loop {
        let at = start + stream.byte_offset();
        let doc = match stream.next() {
            None => break,
            Some(Ok(doc)) => doc,
            Some(Err(e)) => {
                // What follows the last document is other output (the workload's exit
                // message), unless nothing was read at all.
                if out.is_empty() && limits.is_empty() {
                    return Err(LineError::new(
                        line_of(text, at) + e.line().saturating_sub(1),
                        format!("amd-smi JSON: {e}"),
                    ));
                }
                break;
            }
        };
        let line = line_of(
            text,
            at + (text[at..].len() - text[at..].trim_start().len()),
        );
        for gpu in gpus(&doc) {
            let index = gpu
                .get("gpu")
                .and_then(Value::as_u64)
                .and_then(|i| u32::try_from(i).ok())
                .ok_or_else(|| {
                    LineError::new(line, "amd-smi JSON: an entry without a `gpu` index")
                })?;
            if let Some(limit) = gpu.get("limit") {
                if let Some(w) = number(limit.get("socket_power"), line, "limit.socket_power")? {
                    limits.insert(index, w);
                }
                continue;
            }
            let power = gpu.get("power");
            let clocks: Vec<(String, &Value)> = gpu
                .get("clock")
                .and_then(Value::as_object)
                .map(|c| {
                    c.iter()
                        .filter(|(k, _)| k.starts_with("gfx_"))
                        .map(|(k, v)| (k.clone(), v))
                        .collect()
                })
                .unwrap_or_default();
            let mut current = Vec::new();
            let mut max = None;
            for (name, c) in &clocks {
                if let Some(v) = number(c.get("clk"), line, &format!("clock.{name}.clk"))? {
                    current.push(v);
                }
                if max.is_none() {
                    max = number(c.get("max_clk"), line, &format!("clock.{name}.max_clk"))?;
                }
            }
            let temperature = gpu.get("temperature");
            let temp = match number(
                temperature.and_then(|t| t.get("hotspot")),
                line,
                "temperature.hotspot",
            )? {
                Some(t) => Some(t),
                None => number(
                    temperature.and_then(|t| t.get("edge")),
                    line,
                    "temperature.edge",
                )?,
            };
            let mut active = Vec::new();
            if let Some(t) = gpu.get("throttle") {
                for kind in VIOLATIONS {
                    let status = t.get(format!("{kind}_violation_status"));
                    if status.and_then(Value::as_str) == Some("ACTIVE") {
                        active.push(format!("amd.{kind}"));
                    }
                }
            }
            if power
                .and_then(|p| p.get("throttle_status"))
                .and_then(Value::as_str)
                == Some("THROTTLED")
            {
                active.push("amd.throttled".to_owned());
            }
            out.push(Sample {
                line,
                index,
                bus: None,
                power: number(
                    power.and_then(|p| p.get("socket_power")),
                    line,
                    "power.socket_power",
                )?,
                limit: limits.get(&index).copied(),
                sm_clock: if current.is_empty() {
                    None
                } else {
                    Some(current.iter().sum::<f64>() / current.len() as f64)
                },
                max_sm_clock: max,
                temperature: temp,
                active,
            });
        }
    }
    if out.is_empty() {
        return Err(LineError::new(
            from + 1,
            "amd-smi printed no `metric` sample: the sampler stopped before its first call returned",
        ));
    }
    Ok(Some(out))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `amd-smi static --limit --json`, then two `amd-smi metric -p -c -t --throttle --json`
    /// rounds on two MI300X, in the shapes of amdsmi's `metric_gpu`/`static_limit` and the
    /// CHANGELOG's JSON example (ROCm 6.3.0): values with units, `N/A` where unread.
    pub(crate) const SAMPLER: &str = r#"[
    {
        "gpu": 0,
        "limit": {
            "max_power": {"value": 750, "unit": "W"},
            "min_power": {"value": 0, "unit": "W"},
            "socket_power": {"value": 750, "unit": "W"},
            "slowdown_edge_temperature": "N/A"
        }
    },
    {
        "gpu": 1,
        "limit": {"max_power": {"value": 750, "unit": "W"}, "socket_power": {"value": 750, "unit": "W"}}
    }
]
[
    {
        "gpu": 0,
        "power": {
            "socket_power": {"value": 131, "unit": "W"},
            "gfx_voltage": "N/A",
            "soc_voltage": "N/A",
            "mem_voltage": "N/A",
            "throttle_status": "UNTHROTTLED",
            "power_management": "ENABLED"
        },
        "clock": {
            "gfx_0": {"clk": {"value": 132, "unit": "MHz"}, "min_clk": {"value": 500, "unit": "MHz"}, "max_clk": {"value": 2100, "unit": "MHz"}, "clk_locked": "DISABLED", "deep_sleep": "ENABLED"},
            "gfx_1": {"clk": {"value": 130, "unit": "MHz"}, "min_clk": {"value": 500, "unit": "MHz"}, "max_clk": {"value": 2100, "unit": "MHz"}, "clk_locked": "DISABLED", "deep_sleep": "ENABLED"},
            "mem_0": {"clk": {"value": 900, "unit": "MHz"}, "min_clk": {"value": 900, "unit": "MHz"}, "max_clk": {"value": 1300, "unit": "MHz"}, "clk_locked": "N/A", "deep_sleep": "DISABLED"}
        },
        "temperature": {"edge": "N/A", "hotspot": {"value": 35, "unit": "C"}, "mem": {"value": 30, "unit": "C"}},
        "throttle": {
            "accumulation_counter": 3808991,
            "ppt_violation_status": "NOT ACTIVE",
            "socket_thermal_violation_status": "NOT ACTIVE",
            "prochot_violation_status": "NOT ACTIVE",
            "vr_thermal_violation_status": "NOT ACTIVE",
            "hbm_thermal_violation_status": "NOT ACTIVE",
            "ppt_violation_activity": {"value": 0, "unit": "%"}
        }
    }
]
[
    {
        "gpu": 0,
        "power": {"socket_power": {"value": 742, "unit": "W"}, "throttle_status": "THROTTLED", "power_management": "ENABLED"},
        "clock": {
            "gfx_0": {"clk": {"value": 2090, "unit": "MHz"}, "max_clk": {"value": 2100, "unit": "MHz"}},
            "gfx_1": {"clk": {"value": 2070, "unit": "MHz"}, "max_clk": {"value": 2100, "unit": "MHz"}},
            "gfx_2": {"clk": "N/A", "max_clk": "N/A"}
        },
        "temperature": {"edge": "N/A", "hotspot": {"value": 71, "unit": "C"}, "mem": {"value": 60, "unit": "C"}},
        "throttle": {"ppt_violation_status": "ACTIVE", "socket_thermal_violation_status": "NOT ACTIVE", "hbm_thermal_violation_status": "N/A"}
    },
    {
        "gpu": 1,
        "power": {"socket_power": "N/A", "throttle_status": "THROTTLED"},
        "clock": {"gfx_0": {"clk": {"value": 900, "unit": "MHz"}, "max_clk": {"value": 2100, "unit": "MHz"}}},
        "temperature": {"edge": {"value": 96, "unit": "C"}, "hotspot": "N/A"},
        "throttle": {"socket_thermal_violation_status": "ACTIVE", "hbm_thermal_violation_status": "ACTIVE"}
    }
]
"#;

    #[test]
    fn samples_per_gpu_with_the_cap_and_the_violations() {
        let s = samples(SAMPLER, 0).unwrap().unwrap();
        assert_eq!(s.len(), 3);
        let idle = &s[0];
        assert_eq!((idle.index, idle.line), (0, 16));
        assert_eq!(idle.power, Some(131.0));
        assert_eq!(idle.limit, Some(750.0));
        assert_eq!(idle.sm_clock, Some(131.0));
        assert_eq!(idle.max_sm_clock, Some(2100.0));
        assert_eq!(idle.temperature, Some(35.0));
        assert!(idle.active.is_empty(), "{:?}", idle.active);
        let busy = &s[1];
        assert_eq!(busy.power, Some(742.0));
        assert_eq!(busy.sm_clock, Some(2080.0));
        assert_eq!(busy.active, ["amd.ppt", "amd.throttled"]);
        let hot = &s[2];
        assert_eq!((hot.index, hot.power, hot.limit), (1, None, Some(750.0)));
        assert_eq!(hot.temperature, Some(96.0), "edge where hotspot is N/A");
        assert_eq!(
            hot.active,
            ["amd.socket_thermal", "amd.hbm_thermal", "amd.throttled"]
        );
        // The older plain-string form reads too.
        let old = r#"[{"gpu": 0, "power": {"socket_power": "550 W"}}]"#;
        assert_eq!(samples(old, 0).unwrap().unwrap()[0].power, Some(550.0));
    }

    #[test]
    fn damage_is_refused_with_its_line() {
        assert_eq!(samples("sh: amd-smi: not found\n", 0).unwrap(), None);
        let bad = SAMPLER.replace(r#""value": 742"#, r#""value": -742"#);
        let err = samples(&bad, 0).unwrap_err();
        assert_eq!(err.line, 44, "{}", err.message);
        assert!(
            err.message.contains("power.socket_power"),
            "{}",
            err.message
        );
        let err = samples("[{\"gpu\": 0, \"power\": {\n", 0).unwrap_err();
        assert!(err.message.contains("amd-smi JSON"), "{}", err.message);
        // Only the cap, no metric round: the sampler stopped too early.
        let only = &SAMPLER[..SAMPLER.find("]\n[").unwrap() + 2];
        assert!(samples(only, 0).is_err());
    }
}
