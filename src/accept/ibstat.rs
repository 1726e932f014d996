//! `ibstat` and `ibstatus` (infiniband-diags): the state, physical state, rate and link
//! layer of every RDMA port, which [`judge`](super::judge) matches against the
//! blueprint's declared rails.
//!
//! ```text
//! CA 'mlx5_0'                              Infiniband device 'mlx5_0' port 1 status:
//!         CA type: MT4129                          state:           4: ACTIVE
//!         Number of ports: 1                       phys state:      5: LinkUp
//!         Firmware version: 28.41.1000             rate:            200 Gb/sec (4X HDR)
//!         Port 1:                                  link_layer:      InfiniBand
//!                 State: Active
//!                 Physical state: LinkUp
//!                 Rate: 400
//!                 Link layer: InfiniBand
//! ```
//!
//! Both print one block per port; indentation is a tab or eight spaces per level
//! (copy/paste). `ibstat` exits 255 after a partial listing when a device vanishes while
//! it reads (`ibpanic: ... stat of IB device 'mlx5_8' failed`): that line is kept as a
//! finding of its own, not an unreadable file. A port without its state, rate or link
//! layer, or a CA with fewer ports than its `Number of ports`, is refused with the line
//! (a truncated copy).

use super::lines::each;
use crate::line_error::LineError;

/// Which of the two programs printed the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    Ibstat,
    Ibstatus,
}

/// A port's logical state (IBTA `PortState`, as both programs name it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum PortState {
    Down,
    Initializing,
    Armed,
    Active,
    Other(String),
}

impl PortState {
    fn parse(text: &str) -> PortState {
        // ibstatus prints `4: ACTIVE`, ibstat `Active`.
        let word = text.rsplit(": ").next().unwrap_or(text).trim();
        match word.to_ascii_uppercase().as_str() {
            "DOWN" => PortState::Down,
            "INIT" | "INITIALIZING" => PortState::Initializing,
            "ARMED" => PortState::Armed,
            "ACTIVE" => PortState::Active,
            _ => PortState::Other(word.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            PortState::Down => "Down",
            PortState::Initializing => "Initializing",
            PortState::Armed => "Armed",
            PortState::Active => "Active",
            PortState::Other(s) => s,
        }
    }
}

/// One port of one HCA.
#[derive(Debug, Clone, PartialEq)]
pub struct Port {
    /// `mlx5_0`, `mlx5_bond_0`.
    pub device: String,
    pub port: u32,
    /// `MT4129` (ibstat only).
    pub ca_type: Option<String>,
    /// `28.41.1000` (ibstat only).
    pub firmware: Option<String>,
    pub state: PortState,
    /// `LinkUp`, `Polling`, `Disabled` (ibstatus' `5: ` number dropped).
    pub physical_state: String,
    /// Gb/s: ibstat's `Rate: 400`, ibstatus' `400 Gb/sec (4X NDR)`.
    pub rate_gbps: f64,
    /// `InfiniBand` or `Ethernet` (RoCE), as printed.
    pub link_layer: String,
    /// The line that opens the port's block.
    pub line: usize,
}

impl Port {
    pub fn name(&self) -> String {
        format!("{}/{}", self.device, self.port)
    }

    /// Link layer InfiniBand (otherwise Ethernet: RoCE).
    pub fn infiniband(&self) -> bool {
        self.link_layer.eq_ignore_ascii_case("infiniband")
    }

    /// Active and LinkUp.
    pub fn up(&self) -> bool {
        self.state == PortState::Active && self.physical_state == "LinkUp"
    }
}

/// One run of `ibstat` or `ibstatus`.
#[derive(Debug, Clone, PartialEq)]
pub struct Ibstat {
    pub program: Program,
    pub ports: Vec<Port>,
    /// An `ibpanic:` line: the program gave up part way (line, text).
    pub panic: Option<(usize, String)>,
    /// First and last line.
    pub lines: (usize, usize),
}

/// A port block being read.
#[derive(Default)]
struct Open {
    port: u32,
    line: usize,
    state: Option<PortState>,
    physical: Option<String>,
    rate: Option<f64>,
    link_layer: Option<String>,
}

/// The CA an ibstat port belongs to.
#[derive(Default)]
struct Ca {
    name: String,
    line: usize,
    ca_type: Option<String>,
    firmware: Option<String>,
    declared_ports: Option<u32>,
    ports_seen: u32,
}

/// `key: value` with the key compared without case (`State`, `state`).
fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let (k, v) = text.split_once(':')?;
    k.trim().eq_ignore_ascii_case(key).then(|| v.trim())
}

fn rate(value: &str, line: usize) -> Result<f64, LineError> {
    // `400`, or `200 Gb/sec (4X HDR)`.
    value
        .split_whitespace()
        .next()
        .and_then(super::lines::number)
        .filter(|r| *r > 0.0)
        .ok_or_else(|| LineError::new(line, format!("rate `{value}` is not a number of Gb/s")))
}

fn close(open: Open, ca: &Ca, out: &mut Vec<Port>) -> Result<(), LineError> {
    let at = open.line;
    let missing = |what: &str| {
        LineError::new(
            at,
            format!(
                "port {} of {} has no {what} line (a truncated output?)",
                open.port, ca.name
            ),
        )
    };
    out.push(Port {
        device: ca.name.clone(),
        port: open.port,
        ca_type: ca.ca_type.clone(),
        firmware: ca.firmware.clone(),
        state: open.state.clone().ok_or_else(|| missing("state"))?,
        physical_state: open
            .physical
            .clone()
            .ok_or_else(|| missing("physical state"))?,
        rate_gbps: open.rate.ok_or_else(|| missing("rate"))?,
        link_layer: open
            .link_layer
            .clone()
            .ok_or_else(|| missing("link layer"))?,
        line: at,
    });
    Ok(())
}

fn close_ca(ca: &Ca) -> Result<(), LineError> {
    match ca.declared_ports {
        Some(n) if n != ca.ports_seen => Err(LineError::new(
            ca.line,
            format!(
                "{} declares {n} port(s) and lists {} (a truncated output?)",
                ca.name, ca.ports_seen
            ),
        )),
        _ => Ok(()),
    }
}

/// `'name'` quoted as both programs quote device names.
fn quoted(text: &str) -> Option<&str> {
    let rest = text.strip_prefix('\'')?;
    let end = rest.find('\'')?;
    Some(&rest[..end])
}

/// Parses an `ibstat` or `ibstatus` output.
pub fn parse(text: &str) -> Result<Ibstat, LineError> {
    let mut program = None;
    let mut ports = Vec::new();
    let mut ca: Option<Ca> = None;
    let mut open: Option<Open> = None;
    let mut panic = None;
    let mut first = 0;
    let mut last = 0;
    for line in each(text) {
        let t = line.text.trim();
        if t.is_empty() {
            continue;
        }
        if t.starts_with("ibpanic:") || t.starts_with("ibwarn:") {
            if t.starts_with("ibpanic:") {
                panic = Some((line.number, t.to_owned()));
            }
            last = line.number;
            continue;
        }
        if let Some(rest) = t.strip_prefix("CA ")
            && let Some(name) = quoted(rest)
        {
            if let Some(o) = open.take() {
                close(o, ca.as_ref().expect("a port is inside a CA"), &mut ports)?;
            }
            if let Some(c) = &ca {
                close_ca(c)?;
            }
            if program == Some(Program::Ibstatus) {
                return Err(LineError::new(
                    line.number,
                    "an ibstat CA block in ibstatus output",
                ));
            }
            program = Some(Program::Ibstat);
            ca = Some(Ca {
                name: name.to_owned(),
                line: line.number,
                ..Ca::default()
            });
            first = if first == 0 { line.number } else { first };
            last = line.number;
            continue;
        }
        if let Some(rest) = t.strip_prefix("Infiniband device ") {
            let port = quoted(rest).and_then(|name| {
                let after = rest[name.len() + 2..].trim();
                let n = after.strip_prefix("port ")?.strip_suffix(" status:")?;
                Some((name, n.trim().parse::<u32>().ok()?))
            });
            let Some((name, port)) = port else {
                return Err(LineError::new(
                    line.number,
                    format!("`{t}` is not `Infiniband device '<name>' port <n> status:`"),
                ));
            };
            if program == Some(Program::Ibstat) {
                return Err(LineError::new(
                    line.number,
                    "an ibstatus block in ibstat output",
                ));
            }
            if let Some(o) = open.take() {
                close(o, ca.as_ref().expect("a port has a device"), &mut ports)?;
            }
            program = Some(Program::Ibstatus);
            ca = Some(Ca {
                name: name.to_owned(),
                line: line.number,
                ..Ca::default()
            });
            open = Some(Open {
                port,
                line: line.number,
                ..Open::default()
            });
            first = if first == 0 { line.number } else { first };
            last = line.number;
            continue;
        }
        let Some(c) = ca.as_mut() else {
            // Text before the first block (a shell prompt, a heading) is not ibstat's.
            continue;
        };
        last = line.number;
        if program == Some(Program::Ibstat) {
            if let Some(n) = t.strip_prefix("Port ").and_then(|r| r.strip_suffix(':')) {
                let port = n.trim().parse::<u32>().map_err(|_| {
                    LineError::new(line.number, format!("`{t}` is not `Port <n>:`"))
                })?;
                if let Some(o) = open.take() {
                    close(o, c, &mut ports)?;
                }
                c.ports_seen += 1;
                open = Some(Open {
                    port,
                    line: line.number,
                    ..Open::default()
                });
                continue;
            }
            if open.is_none() {
                if let Some(v) = field(t, "CA type") {
                    c.ca_type = Some(v.to_owned());
                } else if let Some(v) = field(t, "Firmware version") {
                    c.firmware = Some(v.to_owned());
                } else if let Some(v) = field(t, "Number of ports") {
                    c.declared_ports = Some(v.parse().map_err(|_| {
                        LineError::new(
                            line.number,
                            format!("number of ports `{v}` is not a number"),
                        )
                    })?);
                }
                continue;
            }
        }
        let Some(o) = open.as_mut() else { continue };
        let (state, physical, rate_key, layer) = match program {
            Some(Program::Ibstatus) => ("state", "phys state", "rate", "link_layer"),
            _ => ("State", "Physical state", "Rate", "Link layer"),
        };
        if let Some(v) = field(t, state) {
            o.state = Some(PortState::parse(v));
        } else if let Some(v) = field(t, physical) {
            let word = v.rsplit(": ").next().unwrap_or(v).trim();
            if word.is_empty() {
                return Err(LineError::new(line.number, "empty physical state"));
            }
            o.physical = Some(word.to_owned());
        } else if let Some(v) = field(t, rate_key) {
            o.rate = Some(rate(v, line.number)?);
        } else if let Some(v) = field(t, layer) {
            if v.is_empty() {
                return Err(LineError::new(line.number, "empty link layer"));
            }
            o.link_layer = Some(v.to_owned());
        }
    }
    if let Some(o) = open.take() {
        close(o, ca.as_ref().expect("a port has a device"), &mut ports)?;
    }
    if let Some(c) = &ca
        && program == Some(Program::Ibstat)
    {
        close_ca(c)?;
    }
    let Some(program) = program else {
        return Err(LineError::new(
            0,
            "no `CA '<name>'` (ibstat) or `Infiniband device` (ibstatus) block",
        ));
    };
    if ports.is_empty() && panic.is_none() {
        return Err(LineError::new(last, "no port listed (a truncated output?)"));
    }
    Ok(Ibstat {
        program,
        ports,
        panic,
        lines: (first, last),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tFirmware version: 28.41.1000\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tLink layer: InfiniBand\nCA 'mlx5_1'\n\tCA type: MT4125\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Disabled\n\t\tRate: 40\n\t\tLink layer: Ethernet\n";

    #[test]
    fn ibstat_ports_are_read() {
        let run = parse(TWO).unwrap();
        assert_eq!(run.program, Program::Ibstat);
        assert_eq!(run.ports.len(), 2);
        let p = &run.ports[0];
        assert_eq!(
            (p.name(), p.ca_type.as_deref(), p.firmware.as_deref()),
            ("mlx5_0/1".into(), Some("MT4129"), Some("28.41.1000"))
        );
        assert!(p.up() && p.infiniband());
        assert_eq!(p.rate_gbps, 400.0);
        let q = &run.ports[1];
        assert_eq!(q.state, PortState::Down);
        assert_eq!((q.physical_state.as_str(), q.line), ("Disabled", 13));
        assert!(!q.up() && !q.infiniband());
    }

    #[test]
    fn ibstatus_ports_are_read() {
        let text = "Infiniband device 'mlx5_0' port 1 status:\n        default gid:     fe80::1\n        state:           4: ACTIVE\n        phys state:      5: LinkUp\n        rate:            200 Gb/sec (4X HDR)\n        link_layer:      InfiniBand\n\nInfiniband device 'mlx5_1' port 1 status:\n        state:           1: DOWN\n        phys state:      3: Disabled\n        rate:            10 Gb/sec (4X SDR)\n        link_layer:      InfiniBand\n";
        let run = parse(text).unwrap();
        assert_eq!(run.program, Program::Ibstatus);
        assert_eq!(run.ports[0].rate_gbps, 200.0);
        assert!(run.ports[0].up());
        assert_eq!(run.ports[1].state, PortState::Down);
        assert_eq!(run.ports[1].physical_state, "Disabled");
    }

    #[test]
    fn truncated_and_mangled_outputs_are_refused_with_the_line() {
        // Cut after the first port's rate: no link layer.
        let cut: String = TWO.lines().take(8).map(|l| format!("{l}\n")).collect();
        let e = parse(&cut).unwrap_err();
        assert_eq!(e.line, 5, "{e}");
        assert!(e.message.contains("no link layer"), "{e}");
        // Cut before the second CA's port.
        let cut: String = TWO.lines().take(12).map(|l| format!("{l}\n")).collect();
        let e = parse(&cut).unwrap_err();
        assert_eq!(e.line, 10, "{e}");
        assert!(e.message.contains("declares 1 port(s) and lists 0"), "{e}");
        let e = parse(&TWO.replace("Rate: 400", "Rate: fast")).unwrap_err();
        assert_eq!(e.line, 8, "{e}");
        assert_eq!(parse("hello\n").unwrap_err().line, 0);
    }

    #[test]
    fn an_ibpanic_keeps_the_ports_listed_before_it() {
        let text = format!(
            "{}ibpanic: [1400444] main: stat of IB device 'mlx5_8' failed: No such file or directory\n",
            TWO
        );
        let run = parse(&text).unwrap();
        assert_eq!(run.ports.len(), 2);
        let (line, msg) = run.panic.unwrap();
        assert_eq!(line, 18);
        assert!(msg.contains("mlx5_8"));
    }
}
