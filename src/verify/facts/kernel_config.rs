//! The running kernel's build configuration, for the options a check asks about.
//!
//! Distributions install it as `/boot/config-<release>` (Debian, Ubuntu, the RHEL
//! family); kernels built with `CONFIG_IKCONFIG_PROC` also expose it gzipped as
//! `/proc/config.gz`. The first one found is read; with neither, the configuration is
//! unknown, never assumed. Lines are `CONFIG_X=y|m|"string"|number` or
//! `# CONFIG_X is not set`; an option absent from the file is not set either (Kconfig
//! writes only the options visible in that configuration).
//!
//! Only the options in [`OPTIONS`] are kept, so a record or capture does not carry the
//! whole configuration.

use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// The options verify reads: `CONFIG_DMA_SHARED_BUFFER` is the DMA-BUF framework that
/// GPUDirect RDMA without `nvidia_peermem` registers GPU memory through
/// (`ibv_reg_dmabuf_mr`, Linux 5.12+).
pub const OPTIONS: &[&str] = &["CONFIG_DMA_SHARED_BUFFER"];

/// A decompressed `/proc/config.gz` larger than this is refused (real ones are about
/// 250 KiB).
const MAX_CONFIG_BYTES: u64 = 16 << 20;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelConfig {
    /// The file it came from.
    pub source: String,
    /// Each option of [`OPTIONS`]: its value (`y`, `m`, ...), or `None` when not set.
    pub options: BTreeMap<String, Option<String>>,
}

impl KernelConfig {
    /// `y` (built in) or `m` (a module) for a tristate or bool option.
    pub fn enabled(&self, option: &str) -> bool {
        matches!(
            self.options.get(option).and_then(Option::as_deref),
            Some("y" | "m")
        )
    }
}

/// Reads the configuration of the kernel `release` (unknown release: only
/// `/proc/config.gz` can say).
pub fn collect(host: &dyn Host, release: &Fact<String>) -> Fact<KernelConfig> {
    let mut tried = Vec::new();
    if let Fact::Known(release) = release {
        let path = format!("/boot/config-{}", release.trim());
        match host.read_text(Path::new(&path)) {
            Ok(text) => return Fact::Known(parse(&text, &path)),
            Err(e) => tried.push(e.to_string()),
        }
    }
    match host.read(Path::new("/proc/config.gz")) {
        Ok(bytes) => match gunzip(&bytes) {
            Ok(text) => Fact::Known(parse(&text, "/proc/config.gz")),
            Err(why) => Fact::unknown(format!("/proc/config.gz: {why}")),
        },
        Err(e) => {
            tried.push(e.to_string());
            Fact::unknown(format!(
                "the kernel configuration is not readable: {}",
                tried.join("; ")
            ))
        }
    }
}

fn gunzip(bytes: &[u8]) -> Result<String, String> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes)
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("not a gzipped text: {e}"))?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(format!("larger than {MAX_CONFIG_BYTES} bytes decompressed"));
    }
    Ok(text)
}

/// Keeps the [`OPTIONS`] of a `.config` text.
pub fn parse(text: &str, source: &str) -> KernelConfig {
    let mut options: BTreeMap<String, Option<String>> =
        OPTIONS.iter().map(|o| ((*o).to_owned(), None)).collect();
    for line in text.lines() {
        let Some((key, value)) = line.trim().split_once('=') else {
            continue;
        };
        if let Some(slot) = options.get_mut(key) {
            *slot = Some(value.trim_matches('"').to_owned());
        }
    }
    KernelConfig {
        source: source.to_owned(),
        options,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn set_unset_and_absent_options() {
        let set = parse(
            "# Linux/x86 6.1.0 Kernel Configuration\nCONFIG_DMA_SHARED_BUFFER=y\nCONFIG_X=m\n",
            "/boot/config-6.1.0",
        );
        assert!(set.enabled("CONFIG_DMA_SHARED_BUFFER"));
        assert_eq!(set.source, "/boot/config-6.1.0");
        let unset = parse("# CONFIG_DMA_SHARED_BUFFER is not set\n", "x");
        assert!(!unset.enabled("CONFIG_DMA_SHARED_BUFFER"));
        assert_eq!(unset.options["CONFIG_DMA_SHARED_BUFFER"], None);
        assert!(!parse("CONFIG_OTHER=y\n", "x").enabled("CONFIG_DMA_SHARED_BUFFER"));
        // Options verify does not ask about are not kept.
        assert_eq!(set.options.len(), OPTIONS.len());
    }

    #[test]
    fn gzipped_config_is_read_and_bounded() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"CONFIG_DMA_SHARED_BUFFER=y\n").unwrap();
        let bytes = gz.finish().unwrap();
        assert_eq!(gunzip(&bytes).unwrap(), "CONFIG_DMA_SHARED_BUFFER=y\n");
        assert!(gunzip(b"CONFIG_DMA_SHARED_BUFFER=y\n").is_err());
    }
}
