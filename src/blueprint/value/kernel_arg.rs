//! One kernel command-line argument, `name` or `name=value`, and how the kernel reads a
//! command line that carries it.
//!
//! The blueprint's `boot.kernelArgs.required/forbidden` hold these, the renderer writes
//! them, and verify compares them with `/proc/cmdline` — all through this one type, so the
//! text is parsed once and compared the same way everywhere.
//!
//! Comparison follows the kernel, not the text:
//! - **Names**: `-` and `_` are the same character in parameter names (`parameq()` in
//!   kernel/params.c, also used for `__setup` and early parameters in init/main.c).
//! - **Repeats**: parameters are applied in order, so the **last** occurrence wins
//!   (`pci=realloc=off pci=realloc=on` leaves realloc on). A few parameters accumulate
//!   instead ([`Semantics::List`]: hugepage pools, consoles, module blacklists; each
//!   comma-separated item counts), and `pci=` is a list of options in which each option's
//!   last setting wins.
//! - **Numbers**: an integer parameter is parsed with `kstrtoint(s, 0, ...)`: an optional
//!   sign, `0x` for hexadecimal, a leading `0` for octal (lib/kstrtox.c). So `0x1`, `01`
//!   and `+1` are all `1`, and `010` is `8`.
//! - **Booleans**: a `bool` module parameter uses `kstrtobool()`: `y`, `Y`, `1`, `on` are
//!   true, `n`, `N`, `0`, `off` false, and since Linux 6.0 `t`/`true`, `f`/`false` as well;
//!   a bare `name` sets it true. systemd reads its `systemd.*` switches with its own
//!   boolean parser (`1`, `yes`, `y`, `true`, `t`, `on` and the negations).
//! - **Sizes**: `hugepagesz=`/`default_hugepagesz=` are read with `memparse()`, so `1G`,
//!   `1024M` and `1073741824` are the same size.
//!
//! Without the kernel's table of parameter types, a comparison is made in the direction
//! that fails closed: a **required** argument holds only when the kernel certainly sees
//! the wanted value (same text, or the same number, or — for a parameter known to be
//! boolean — the same truth value); a **forbidden** argument is present when the kernel
//! could read the value as the forbidden one under any of these readings.

use std::fmt;
use std::str::FromStr;

use super::text_value;

/// One argument as a blueprint writes it: `name` or `name=value`, no spaces or quotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelArg {
    name: String,
    value: Option<String>,
}

/// Whether a character can be carried in an argument as written: ASCII letters, digits
/// and `. _ , : = / + @ -`. The command line has no quoting the blueprint could rely on;
/// GRUB's config is sourced by a shell and `grubby --args` is a systemd `Exec` line, so
/// anything else could end or change the argument on its way to the kernel. The renderer
/// writes arguments with this same rule (`|cmdline`), so what validates renders.
pub fn carried_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._,:=/+@-".contains(c)
}

fn forbidden_char(c: char) -> bool {
    !carried_char(c)
}

impl KernelArg {
    /// An argument from its parts; the same rules as parsing `name=value`.
    pub fn new(name: &str, value: Option<&str>) -> Result<Self, String> {
        let text = match value {
            Some(value) => format!("{name}={value}"),
            None => name.to_owned(),
        };
        let arg: KernelArg = text.parse()?;
        if arg.name != name {
            return Err(format!("kernel argument name `{name}` contains `=`"));
        }
        Ok(arg)
    }

    /// An argument nodeimg writes itself: a fixed parameter name and a value from a typed
    /// field (a number, a size, `on`). Neither can hold a character [`FromStr`] refuses.
    pub(crate) fn typed(name: &'static str, value: impl fmt::Display) -> Self {
        let value = value.to_string();
        debug_assert!(
            !name.contains('=') && !format!("{name}{value}").chars().any(forbidden_char),
            "{name}={value}"
        );
        KernelArg {
            name: name.to_owned(),
            value: Some(value),
        }
    }

    /// The name as written.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The value; `None` for a bare flag (`quiet`).
    pub fn value(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// The name as the kernel compares it (`-` read as `_`).
    pub fn key(&self) -> String {
        normal_name(&self.name)
    }

    /// Same parameter (the kernel treats `-` and `_` alike in names).
    pub fn same_name(&self, other: &KernelArg) -> bool {
        self.key() == other.key()
    }

    /// The same parameter with a value the kernel reads the same way (`x=0x1` and `x=1`).
    pub fn same_setting(&self, other: &KernelArg) -> bool {
        self.same_name(other)
            && match (self.value(), other.value()) {
                (None, None) => true,
                (Some(a), Some(b)) => {
                    equivalent(Semantics::of(&self.key()), a, b, Reading::Certain)
                }
                _ => false,
            }
    }

    /// How a command line (its parameters in order, as `(name, value)`) stands against
    /// this argument when it is **required**: whether the kernel certainly ends up with it,
    /// and the occurrences seen.
    pub fn required_by<'a>(&self, params: &[(&'a str, Option<&'a str>)]) -> Judgement {
        self.judge(params, Reading::Certain)
    }

    /// How a command line stands against this argument when it is **forbidden**: whether
    /// the kernel could end up with it, and the occurrences seen.
    pub fn forbidden_in<'a>(&self, params: &[(&'a str, Option<&'a str>)]) -> Judgement {
        self.judge(params, Reading::Possible)
    }

    fn judge(&self, params: &[(&str, Option<&str>)], reading: Reading) -> Judgement {
        let key = self.key();
        let semantics = Semantics::of(&key);
        let found: Vec<Option<&str>> = params
            .iter()
            .filter(|(name, _)| normal_name(name) == key)
            .map(|(_, value)| *value)
            .collect();
        let shown = show(&self.name, &found);
        let Some(want) = self.value() else {
            // `name` alone: present with any value, however often.
            return Judgement {
                holds: !found.is_empty(),
                observed: shown,
            };
        };
        let holds = match semantics {
            Semantics::List => found.iter().any(|value| {
                value.is_some_and(|value| {
                    value
                        .split(',')
                        .chain(std::iter::once(value))
                        .any(|item| equivalent(semantics, item, want, reading))
                })
            }),
            Semantics::Options => want.split(',').all(|option| {
                let (name, value) = split_option(option);
                let last = found
                    .iter()
                    .flatten()
                    .flat_map(|v| v.split(','))
                    .map(split_option)
                    .rfind(|(n, _)| key_eq(n, name));
                match last {
                    None => false,
                    Some((_, got)) => match (value, got) {
                        (None, None) => true,
                        (Some(a), Some(b)) => equivalent(Semantics::Text, a, b, reading),
                        _ => false,
                    },
                }
            }),
            _ => match found.last() {
                None => false,
                Some(None) => bare_is(semantics, want, reading),
                Some(Some(value)) => equivalent(semantics, value, want, reading),
            },
        };
        Judgement {
            holds,
            observed: shown,
        }
    }
}

/// A command line's standing against one argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// Required: the kernel certainly has the argument. Forbidden: it could have it.
    pub holds: bool,
    /// Every occurrence of the parameter, in order (`pci=realloc=off pci=realloc=on`), or
    /// `absent`.
    pub observed: String,
}

/// Whether a comparison must be certain (required) or only possible (forbidden).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    Certain,
    Possible,
}

/// How the kernel (or systemd) reads a parameter's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Semantics {
    /// Unknown type: text, or a number as `kstrtoint(s, 0)` reads it.
    Text,
    /// A kernel `bool` parameter (`kstrtobool`).
    KernelBool,
    /// A systemd boolean switch (`parse_boolean`).
    SystemdBool,
    /// A size read with `memparse`.
    Size,
    /// Every occurrence (and comma-separated item) counts.
    List,
    /// A comma-separated list of `option[=value]`, each option's last setting wins.
    Options,
}

impl Semantics {
    /// What is known of the parameter named `key` (with `_` for `-`).
    fn of(key: &str) -> Semantics {
        match key {
            // Documentation/admin-guide/kernel-parameters.txt: hugepage pools are given as
            // repeated `hugepagesz=` / `hugepages=` pairs; consoles accumulate; the module
            // blacklists are read by modprobe/dracut from every occurrence.
            "hugepages"
            | "hugepagesz"
            | "console"
            | "modprobe.blacklist"
            | "rd.driver.blacklist"
            | "rd.driver.pre"
            | "rd.driver.post" => Semantics::List,
            // arch/x86/pci/common.c pcibios_setup and drivers/pci/pci.c pci_setup walk a
            // comma-separated option list.
            "pci" => Semantics::Options,
            "default_hugepagesz" => Semantics::Size,
            // `bool` module and core parameters relevant to GPU nodes.
            "iommu.passthrough"
            | "iommu.strict"
            | "module.sig_enforce"
            | "nvidia_drm.modeset"
            | "nvidia_drm.fbdev"
            | "nvme_core.multipath" => Semantics::KernelBool,
            "systemd.unified_cgroup_hierarchy" | "systemd.legacy_systemd_cgroup_controller" => {
                Semantics::SystemdBool
            }
            _ => Semantics::Text,
        }
    }
}

fn normal_name(name: &str) -> String {
    name.replace('-', "_")
}

fn key_eq(a: &str, b: &str) -> bool {
    normal_name(a) == normal_name(b)
}

fn split_option(option: &str) -> (&str, Option<&str>) {
    match option.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (option, None),
    }
}

/// `name=a name=b`, or `absent`.
fn show(name: &str, found: &[Option<&str>]) -> String {
    if found.is_empty() {
        return "absent".to_owned();
    }
    found
        .iter()
        .map(|value| match value {
            Some(value) => format!("{name}={value}"),
            None => name.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether a bare `name` sets the parameter to `want`.
fn bare_is(semantics: Semantics, want: &str, reading: Reading) -> bool {
    match semantics {
        // param_set_bool(NULL) sets true; systemd reads a bare switch as true.
        Semantics::KernelBool => kernel_bool(want, reading) == Some(true),
        Semantics::SystemdBool => systemd_bool(want) == Some(true),
        // An unknown parameter might be a bool: a forbidden truth value may be set.
        Semantics::Text if reading == Reading::Possible => kernel_bool(want, reading) == Some(true),
        _ => false,
    }
}

/// Whether the kernel reads `observed` as `want`.
fn equivalent(semantics: Semantics, observed: &str, want: &str, reading: Reading) -> bool {
    if observed == want {
        return true;
    }
    match semantics {
        Semantics::KernelBool => {
            let (a, b) = (kernel_bool(observed, reading), kernel_bool(want, reading));
            a.is_some() && a == b
        }
        Semantics::SystemdBool => {
            let (a, b) = (systemd_bool(observed), systemd_bool(want));
            a.is_some() && a == b
        }
        Semantics::Size => {
            let (a, b) = (memparse(observed), memparse(want));
            a.is_some() && a == b
        }
        Semantics::Text | Semantics::List | Semantics::Options => {
            let numbers = (kstrtoint(observed), kstrtoint(want));
            if numbers.0.is_some() && numbers.0 == numbers.1 {
                return true;
            }
            // `hugepagesz=` items are sizes.
            if semantics == Semantics::List {
                let sizes = (memparse(observed), memparse(want));
                if sizes.0.is_some() && sizes.0 == sizes.1 {
                    return true;
                }
            }
            // A parameter of unknown type could be a bool: for a forbidden value, two
            // words that are both truth values and agree count as the same.
            reading == Reading::Possible && {
                let (a, b) = (kernel_bool_word(observed), kernel_bool_word(want));
                a.is_some() && a == b
            }
        }
    }
}

/// `kstrtoll(s, 0, ...)`: optional `+`/`-`, then `0x` hexadecimal, `0` octal or decimal,
/// the whole text, one trailing newline allowed.
fn kstrtoint(text: &str) -> Option<i128> {
    let text = text.strip_suffix('\n').unwrap_or(text);
    let (negative, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = if let Some(hex) = rest
        .strip_prefix("0x")
        .or_else(|| rest.strip_prefix("0X"))
        .filter(|h| h.chars().next().is_some_and(|c| c.is_ascii_hexdigit()))
    {
        (16, hex)
    } else if rest.len() > 1 && rest.starts_with('0') {
        (8, &rest[1..])
    } else {
        (10, rest)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    let value = i128::from(magnitude);
    Some(if negative { -value } else { value })
}

/// `kstrtobool()`: by the first character(s). `Possible` also takes `t`/`f`, which Linux
/// accepts since 6.0; `Certain` only what every kernel accepts.
fn kernel_bool(text: &str, reading: Reading) -> Option<bool> {
    let mut chars = text.chars();
    match chars.next()? {
        'y' | 'Y' | '1' => Some(true),
        'n' | 'N' | '0' => Some(false),
        't' | 'T' if reading == Reading::Possible => Some(true),
        'f' | 'F' if reading == Reading::Possible => Some(false),
        'o' | 'O' => match chars.next()? {
            'n' | 'N' => Some(true),
            'f' | 'F' => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// A whole word that every boolean parser reads the same way.
fn kernel_bool_word(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "1" | "y" | "yes" | "on" | "true" => Some(true),
        "0" | "n" | "no" | "off" | "false" => Some(false),
        _ => None,
    }
}

/// systemd's `parse_boolean()`.
fn systemd_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "1" | "yes" | "y" | "true" | "t" | "on" => Some(true),
        "0" | "no" | "n" | "false" | "f" | "off" => Some(false),
        _ => None,
    }
}

/// `memparse()`: a number as `simple_strtoull(s, 0)` reads it and an optional
/// `K`/`M`/`G`/`T`/`P`/`E` suffix (binary multiples, either case).
fn memparse(text: &str) -> Option<u128> {
    let (number, shift) = match text.chars().last()? {
        'k' | 'K' => (&text[..text.len() - 1], 10),
        'm' | 'M' => (&text[..text.len() - 1], 20),
        'g' | 'G' => (&text[..text.len() - 1], 30),
        't' | 'T' => (&text[..text.len() - 1], 40),
        'p' | 'P' => (&text[..text.len() - 1], 50),
        'e' | 'E' if !text.starts_with("0x") && !text.starts_with("0X") => {
            (&text[..text.len() - 1], 60)
        }
        _ => (text, 0),
    };
    let value = u128::try_from(kstrtoint(number)?).ok()?;
    value.checked_shl(shift)
}

impl FromStr for KernelArg {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Err("empty kernel argument".into());
        }
        if let Some(c) = text.chars().find(|c| forbidden_char(*c)) {
            return Err(format!(
                "kernel argument `{}` contains {c:?}; one argument per list item, no quoting \
                 (letters, digits and `._,:=/+@-` only)",
                text.escape_debug()
            ));
        }
        let (name, value) = match text.split_once('=') {
            Some((name, value)) => (name, Some(value.to_owned())),
            None => (text, None),
        };
        if name.is_empty() {
            return Err(format!("kernel argument `{text}` has no name"));
        }
        Ok(KernelArg {
            name: name.to_owned(),
            value,
        })
    }
}

impl fmt::Display for KernelArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Some(value) => write!(f, "{}={value}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

text_value!(
    KernelArg,
    "kernel-arg",
    "A kernel command-line argument: `name` or `name=value`, of letters, digits and `._,:=/+@-`.",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(text: &str) -> KernelArg {
        text.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    fn line(text: &str) -> Vec<(&str, Option<&str>)> {
        text.split_whitespace()
            .map(|t| match t.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (t, None),
            })
            .collect()
    }

    #[test]
    fn parses_and_refuses() {
        assert_eq!(arg("pci=realloc=off").name(), "pci");
        assert_eq!(arg("pci=realloc=off").value(), Some("realloc=off"));
        assert_eq!(arg("quiet").value(), None);
        assert_eq!(arg("foo=").value(), Some(""));
        // What the boot loader's config could not carry as written is refused here, not
        // at render: `%` `{` `}` `*` `|` `&` `<` `[` `]` and non-ASCII.
        for bad in [
            "",
            "=1",
            "a b",
            "a=\"b\"",
            "a;b",
            "a=$x",
            "a\u{1b}b",
            "a=1%m",
            "a={",
            "a=}",
            "a=*",
            "a=|x",
            "a=&x",
            "a=<x",
            "a=[",
            "a=]",
            "a=\u{202e}x",
        ] {
            assert!(bad.parse::<KernelArg>().is_err(), "{bad:?}");
        }
        assert!(KernelArg::new("a=b", Some("c")).is_err());
        assert_eq!(
            KernelArg::new("hugepages", Some("16")),
            Ok(arg("hugepages=16"))
        );
    }

    #[test]
    fn numbers_as_kstrtoint_reads_them() {
        for (text, value) in [
            ("1", 1),
            ("0x1", 1),
            ("0X1f", 31),
            ("01", 1),
            ("010", 8),
            ("+1", 1),
            ("-1", -1),
            ("0", 0),
            ("1\n", 1),
        ] {
            assert_eq!(kstrtoint(text), Some(value), "{text:?}");
        }
        for text in ["", "08", "0x", "1a", "+-1", " 1", "y"] {
            assert_eq!(kstrtoint(text), None, "{text:?}");
        }
        assert_eq!(memparse("1G"), Some(1 << 30));
        assert_eq!(memparse("1024M"), memparse("1073741824"));
    }

    /// A later occurrence overrides an earlier one (the kernel applies them in order).
    #[test]
    fn the_last_occurrence_wins() {
        let want = arg("pci=realloc=off");
        let seen = want.required_by(&line("ro pci=realloc=off pci=realloc=on"));
        assert!(!seen.holds);
        assert_eq!(seen.observed, "pci=realloc=off pci=realloc=on");
        assert!(
            want.required_by(&line("pci=realloc=on pci=realloc=off"))
                .holds
        );
        // pci= options accumulate; only the same option overrides.
        assert!(want.required_by(&line("pci=realloc=off pci=noaer")).holds);
        assert!(!want.required_by(&line("pci=realloc=off,realloc=on")).holds);
        let nopt = arg("iommu=pt");
        assert!(!nopt.required_by(&line("iommu=pt iommu=nopt")).holds);
        // A forbidden value set and then overridden is not in effect.
        let bad = arg("mitigations=off");
        assert!(
            !bad.forbidden_in(&line("mitigations=off mitigations=auto"))
                .holds
        );
        assert!(
            bad.forbidden_in(&line("mitigations=auto mitigations=off"))
                .holds
        );
        // Lists: every occurrence counts.
        assert!(
            arg("hugepagesz=2M")
                .required_by(&line(
                    "hugepagesz=1G hugepages=16 hugepagesz=2M hugepages=512"
                ))
                .holds
        );
        assert!(
            arg("modprobe.blacklist=nouveau")
                .required_by(&line("modprobe.blacklist=nvidiafb,nouveau"))
                .holds
        );
    }

    /// `forbidden: nouveau.modeset=1` catches every spelling `kstrtoint(s, 0)` reads as 1.
    #[test]
    fn numbers_compare_as_the_kernel_parses_them() {
        let forbidden = arg("nouveau.modeset=1");
        for value in ["1", "0x1", "01", "+1", "0X01"] {
            let cmdline = format!("ro nouveau.modeset={value}");
            assert!(forbidden.forbidden_in(&line(&cmdline)).holds, "{value}");
        }
        for value in ["0", "0x0", "2", "010"] {
            let cmdline = format!("ro nouveau.modeset={value}");
            assert!(!forbidden.forbidden_in(&line(&cmdline)).holds, "{value}");
        }
        assert!(
            arg("nvidia.NVreg_X=8")
                .required_by(&line("nvidia.NVreg_X=010"))
                .holds
        );
        assert!(
            !arg("nvidia.NVreg_X=10")
                .required_by(&line("nvidia.NVreg_X=010"))
                .holds
        );
    }

    #[test]
    fn names_treat_dash_and_underscore_alike() {
        let want = arg("nvidia-drm.modeset=1");
        assert!(want.required_by(&line("nvidia_drm.modeset=1")).holds);
        assert!(
            arg("no_timer_check")
                .forbidden_in(&line("no-timer-check"))
                .holds
        );
    }

    #[test]
    fn booleans_where_the_kernel_takes_them() {
        let want = arg("nvidia_drm.modeset=1");
        for value in ["Y", "y", "on", "1"] {
            let cmdline = format!("nvidia_drm.modeset={value}");
            assert!(want.required_by(&line(&cmdline)).holds, "{value}");
        }
        assert!(want.required_by(&line("nvidia_drm.modeset")).holds);
        assert!(!want.required_by(&line("nvidia_drm.modeset=N")).holds);
        // `true` only since Linux 6.0: not certain for a required value ...
        assert!(!want.required_by(&line("nvidia_drm.modeset=true")).holds);
        // ... but possible for a forbidden one.
        assert!(want.forbidden_in(&line("nvidia_drm.modeset=true")).holds);
        // systemd switches use systemd's parser.
        let v2 = arg("systemd.unified_cgroup_hierarchy=1");
        for value in ["yes", "true", "on", "1"] {
            let cmdline = format!("systemd.unified_cgroup_hierarchy={value}");
            assert!(v2.required_by(&line(&cmdline)).holds, "{value}");
        }
        assert!(
            !v2.required_by(&line("systemd.unified_cgroup_hierarchy=0"))
                .holds
        );
        // An unknown parameter is not assumed boolean for a required value, but a
        // forbidden truth value spelled otherwise is caught.
        assert!(!arg("foo=1").required_by(&line("foo=y")).holds);
        assert!(arg("foo=1").forbidden_in(&line("foo=yes")).holds);
        assert!(arg("foo=1").forbidden_in(&line("foo")).holds);
    }

    #[test]
    fn bare_names_and_sizes() {
        assert!(arg("quiet").required_by(&line("ro quiet")).holds);
        assert!(
            arg("mitigations")
                .forbidden_in(&line("mitigations=auto"))
                .holds
        );
        assert!(!arg("mitigations").forbidden_in(&line("ro")).holds);
        assert!(
            arg("default_hugepagesz=1G")
                .required_by(&line("default_hugepagesz=1024M"))
                .holds
        );
        assert!(arg("x=1").same_setting(&arg("x=0x1")));
        assert!(!arg("x=1").same_setting(&arg("x=2")));
    }
}
