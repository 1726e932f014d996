//! The GPU and RDMA kernel modules as the running kernel sees them: the file `modprobe`
//! would load for this kernel (its `vermagic`, `srcversion` and signature, from
//! `modinfo`), and the module in memory (`/sys/module/<name>/srcversion` and `taint`).
//!
//! A kernel update without a successful DKMS/akmods rebuild leaves no module for the new
//! kernel, or one built for the old (its `vermagic` names another release); a driver
//! upgrade without a reload leaves in memory a build that is no longer on disk (the two
//! `srcversion`s differ). `modinfo NAME` resolves the name the way `modprobe` does
//! (`modules.dep`, `modules.alias`, `modules.builtin` of the running kernel) and reads
//! compressed modules (`.ko.xz`, `.ko.zst`) too, so nodeimg does not parse ELF files
//! itself; nvidia.ko is tens of MiB and would not fit a capture anyway.
//!
//! Signatures: `modinfo` prints `sig_id`, `signer`, `sig_key` and `sig_hashalgo` for a
//! module with an appended signature (`~Module signature appended~`). Whether the kernel
//! trusted the key shows in the loaded module's taint: `E` (TAINT_UNSIGNED_MODULE, bit 13
//! of `/proc/sys/kernel/tainted`) when the signature was missing or its key not in the
//! kernel's keyrings; `O` (bit 12) marks an out-of-tree module
//! (Documentation/admin-guide/tainted-kernels.rst).

use super::attribute;
use crate::verify::fact::Fact;
use crate::verify::host::{Host, ModuleName, VendorCommand};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// The modules read: the GPU drivers and the RDMA stack. The checks judge those the
/// blueprint implies.
pub const MODULES: [&str; 8] = [
    "nvidia",
    "nvidia_uvm",
    "nvidia_peermem",
    "amdgpu",
    "mlx5_core",
    "mlx5_ib",
    "ib_core",
    "ib_uverbs",
];

/// `/proc/sys/kernel/tainted` bit: a module without a trusted signature was loaded.
pub const TAINT_UNSIGNED_MODULE: u64 = 1 << 13;
/// `/proc/sys/kernel/tainted` bit: an out-of-tree module was loaded.
pub const TAINT_OOT_MODULE: u64 = 1 << 12;

/// What `modinfo` says of the file `modprobe` would load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModuleFile {
    /// The path, or `(builtin)` for a module built into the kernel.
    pub filename: String,
    pub vermagic: Option<String>,
    pub srcversion: Option<String>,
    pub version: Option<String>,
    /// `sig_id` (`PKCS#7`) of an appended signature.
    pub sig_id: Option<String>,
    pub signer: Option<String>,
}

impl ModuleFile {
    pub fn builtin(&self) -> bool {
        self.filename == "(builtin)"
    }

    /// The kernel release the module was built for: `vermagic`'s first word.
    pub fn built_for(&self) -> Option<&str> {
        self.vermagic.as_deref()?.split_whitespace().next()
    }
}

/// The module in memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoadedModule {
    /// `None` when the module has no `srcversion` (built without MODVERSIONS).
    pub srcversion: Option<String>,
    /// The taint letters the module brought (`O`, `E`, `P`…); empty when none.
    pub taint: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModuleBuild {
    /// `None` when the running kernel has no module of this name.
    pub file: Fact<Option<ModuleFile>>,
    /// `None` when it is not loaded.
    pub loaded: Fact<Option<LoadedModule>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModuleBuilds {
    pub modules: BTreeMap<String, ModuleBuild>,
    /// `/proc/sys/kernel/tainted`.
    pub kernel_taint: Fact<u64>,
}

impl ModuleBuilds {
    /// Nothing read, each part saying why.
    pub fn not_read(reason: &str) -> Self {
        ModuleBuilds {
            modules: BTreeMap::new(),
            kernel_taint: Fact::unknown(reason),
        }
    }
}

/// Reads [`MODULES`]: `modinfo` of each and its `/sys/module` directory.
pub fn collect(host: &dyn Host, timeout: Duration) -> ModuleBuilds {
    let modules = MODULES
        .iter()
        .filter_map(|name| ModuleName::parse(name).ok())
        .map(|name| {
            let build = ModuleBuild {
                file: file(host, &name, timeout),
                loaded: loaded(host, name.as_str()),
            };
            (name.as_str().to_owned(), build)
        })
        .collect();
    ModuleBuilds {
        modules,
        kernel_taint: attribute::parsed(host, "/proc/sys/kernel/tainted", attribute::decimal),
    }
}

fn file(host: &dyn Host, name: &ModuleName, timeout: Duration) -> Fact<Option<ModuleFile>> {
    let command = VendorCommand::Modinfo(name.clone());
    match host.run(&command, timeout) {
        Err(e) => Fact::unknown(e.to_string()),
        Ok(output) if output.success() => match parse_modinfo(&output.stdout_text()) {
            Ok(file) => Fact::Known(Some(file)),
            Err(why) => Fact::unknown(format!("{command}: {why}")),
        },
        // kmod's "modinfo: ERROR: Module NAME not found." (exit 1).
        Ok(output) if String::from_utf8_lossy(&output.stderr).contains("not found") => {
            Fact::Known(None)
        }
        Ok(output) => Fact::unknown(format!("{command}: {}", output.failure_summary())),
    }
}

fn loaded(host: &dyn Host, name: &str) -> Fact<Option<LoadedModule>> {
    let dir = format!("/sys/module/{name}");
    // Only a loadable module that is loaded has `initstate`.
    match host.read_text(Path::new(&format!("{dir}/initstate"))) {
        Err(e) if e.is_not_found() => return Fact::Known(None),
        Err(e) => return Fact::unknown(e.to_string()),
        Ok(_) => {}
    }
    let srcversion = match host.read_text(Path::new(&format!("{dir}/srcversion"))) {
        Ok(text) => Some(text.trim().to_owned()),
        Err(e) if e.is_not_found() => None,
        Err(e) => return Fact::unknown(e.to_string()),
    };
    attribute::text(host, &format!("{dir}/taint")).map(|taint| {
        Some(LoadedModule {
            srcversion,
            taint: taint.trim().to_owned(),
        })
    })
}

/// `key:   value` lines as kmod's modinfo prints them; continuation lines (the
/// signature's hex) start with whitespace. The first value of each key is kept.
pub fn parse_modinfo(text: &str) -> Result<ModuleFile, String> {
    let mut fields: BTreeMap<&str, &str> = BTreeMap::new();
    for line in text.lines() {
        if line.starts_with(char::is_whitespace) {
            continue;
        }
        if let Some((key, value)) = line.split_once(':') {
            fields.entry(key.trim()).or_insert(value.trim());
        }
    }
    let field = |key: &str| {
        fields
            .get(key)
            .filter(|v| !v.is_empty())
            .map(|v| (*v).to_owned())
    };
    let filename = field("filename").ok_or("no filename: line")?;
    Ok(ModuleFile {
        filename,
        vermagic: field("vermagic"),
        srcversion: field("srcversion"),
        version: field("version"),
        sig_id: field("sig_id"),
        signer: field("signer"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of `modinfo nvidia` for a DKMS-built, MOK-signed module (kmod 29):
    /// fields in `.modinfo` order, then the signature kmod decodes.
    const NVIDIA: &str = "filename:       /lib/modules/5.15.0-122-generic/updates/dkms/nvidia.ko\n\
        import_ns:      DMA_BUF\n\
        alias:          char-major-195-*\n\
        version:        570.172.08\n\
        supported:      external\n\
        license:        Dual MIT/GPL\n\
        firmware:       nvidia/570.172.08/gsp_tu10x.bin\n\
        srcversion:     7C3F0B0E54A1B6AF2E8C1D9\n\
        alias:          pci:v000010DEd*sv*sd*bc03sc02i00*\n\
        depends:        \n\
        retpoline:      Y\n\
        name:           nvidia\n\
        vermagic:       5.15.0-122-generic SMP mod_unload modversions \n\
        sig_id:         PKCS#7\n\
        signer:         nodeimg-fleet DKMS module signing key\n\
        sig_key:        5A:1C:0E:2B:77:90:3D:44:C1:08:6F:3B:92:DE:10:55:AA:07:61:3C\n\
        sig_hashalgo:   sha512\n\
        signature:      30:65:02:31:00:B4:2F:10:9C:6A:DE:37:5D:11:82:44:70:0B:CF:91:\n\
        \t\t5E:27:43:8A:01:90:FD:2E:6C:17:3B:88:0E:4A:92:D1\n\
        parm:           NvSwitchRegDwords:NvSwitch regkey (charp)\n";

    #[test]
    fn reads_the_fields_the_checks_judge() {
        let file = parse_modinfo(NVIDIA).expect("parses");
        assert_eq!(
            file.filename,
            "/lib/modules/5.15.0-122-generic/updates/dkms/nvidia.ko"
        );
        assert_eq!(file.built_for(), Some("5.15.0-122-generic"));
        assert_eq!(file.srcversion.as_deref(), Some("7C3F0B0E54A1B6AF2E8C1D9"));
        assert_eq!(file.version.as_deref(), Some("570.172.08"));
        assert_eq!(file.sig_id.as_deref(), Some("PKCS#7"));
        assert_eq!(
            file.signer.as_deref(),
            Some("nodeimg-fleet DKMS module signing key")
        );
        assert!(!file.builtin());
    }

    #[test]
    fn an_unsigned_or_builtin_module_says_so() {
        let unsigned = parse_modinfo(
            "filename:       /lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko.zst\nvermagic:       6.8.0-45-generic SMP preempt mod_unload modversions \n",
        )
        .expect("parses");
        assert_eq!(unsigned.signer, None);
        assert_eq!(unsigned.built_for(), Some("6.8.0-45-generic"));
        // kmod 30 on a module in modules.builtin.modinfo.
        let builtin = parse_modinfo(
            "name:           ib_core\nfilename:       (builtin)\nlicense:        Dual BSD/GPL\n",
        )
        .expect("parses");
        assert!(builtin.builtin());
        assert_eq!(builtin.built_for(), None);
        assert!(parse_modinfo("modinfo: ERROR: Module nvidia not found.\n").is_err());
    }
}
