//! The size of `/dev/shm`, from its line in `/proc/mounts`.
//!
//! NCCL and PyTorch data loaders need a large `/dev/shm`. tmpfs prints `size=` only when it
//! differs from its default, which is half of RAM, so a missing option means
//! `MemTotal / 2`. `size=` may carry a `k`/`m`/`g`/`t` suffix or a `%` of RAM.

use crate::verify::fact::Fact;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DevShm {
    pub fs_type: String,
    /// The mount options as written in `/proc/mounts`.
    pub options: String,
    pub size_bytes: Fact<u64>,
}

/// Finds the last `/dev/shm` mount in `mounts` (later mounts hide earlier ones).
pub fn parse(mounts: &str, mem_total_kb: &Fact<u64>) -> Fact<DevShm> {
    let line = mounts
        .lines()
        .rev()
        .find(|line| line.split_whitespace().nth(1) == Some("/dev/shm"));
    let Some(line) = line else {
        return Fact::unknown("/proc/mounts has no /dev/shm mount");
    };
    let fields: Vec<&str> = line.split_whitespace().collect();
    let fs_type = fields.get(2).copied().unwrap_or("").to_owned();
    let options = fields.get(3).copied().unwrap_or("").to_owned();
    let size_option = options
        .split(',')
        .find_map(|option| option.strip_prefix("size="));
    let half_of_ram = || mem_total_kb.as_ref().map(|kb| kb.saturating_mul(1024) / 2);
    let size_bytes = match size_option {
        None if fs_type == "tmpfs" => half_of_ram(),
        None => Fact::unknown(format!("/dev/shm is {fs_type:?} without a size= option")),
        Some(size) => match parse_size(size, mem_total_kb) {
            Ok(bytes) => Fact::Known(bytes),
            Err(why) => Fact::unknown(format!("/proc/mounts /dev/shm size={size}: {why}")),
        },
    };
    Fact::Known(DevShm {
        fs_type,
        options,
        size_bytes,
    })
}

fn parse_size(size: &str, mem_total_kb: &Fact<u64>) -> Result<u64, String> {
    if let Some(percent) = size.strip_suffix('%') {
        let percent: u64 = percent.parse().map_err(|e| format!("{e}"))?;
        let kb = mem_total_kb
            .known()
            .ok_or_else(|| "a percentage of RAM, and MemTotal is unknown".to_owned())?;
        return Ok(kb.saturating_mul(1024).saturating_mul(percent) / 100);
    }
    let (digits, multiplier) = match size.char_indices().last() {
        Some((i, 'k' | 'K')) => (&size[..i], 1u64 << 10),
        Some((i, 'm' | 'M')) => (&size[..i], 1 << 20),
        Some((i, 'g' | 'G')) => (&size[..i], 1 << 30),
        Some((i, 't' | 'T')) => (&size[..i], 1 << 40),
        _ => (size, 1),
    };
    let value: u64 = digits.parse().map_err(|e| format!("{e}"))?;
    value
        .checked_mul(multiplier)
        .ok_or_else(|| "size overflows".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_size_option_or_tmpfs_default() {
        let ram = Fact::Known(1000u64);
        let shm = parse(
            "tmpfs /dev/shm tmpfs rw,relatime,size=24684084k 0 0\n",
            &ram,
        );
        assert_eq!(
            shm.known().and_then(|s| s.size_bytes.known().copied()),
            Some(24_684_084 * 1024)
        );
        let default = parse("tmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0\n", &ram);
        assert_eq!(
            default.known().and_then(|s| s.size_bytes.known().copied()),
            Some(512_000)
        );
        let pct = parse("tmpfs /dev/shm tmpfs rw,size=25% 0 0\n", &ram);
        assert_eq!(
            pct.known().and_then(|s| s.size_bytes.known().copied()),
            Some(256_000)
        );
        assert!(!parse("proc /proc proc rw 0 0\n", &ram).is_known());
    }
}
