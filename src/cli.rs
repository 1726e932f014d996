//! Command-line definitions (clap derive) and nothing else: the same
//! definitions produce `--help`, shell completions and the man page.
//!
//! One file although it is long: it holds only declarations, a block per subcommand
//! with the value parsers its arguments need, so the whole command line reads top to
//! bottom in one place, as `--help` lists it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::package::{Compression, Tag};
use crate::stdio::{Input, Output};
use crate::verify::checks::Phase;
use crate::verify::report::Format as ReportFormat;

#[derive(Debug, Parser)]
#[command(
    name = "nodeimg",
    version,
    long_version = crate::features::LONG_VERSION,
    about = "Declarative, checkable GPU Kubernetes node images",
    long_about = "nodeimg turns a pinned node blueprint into rendered configuration, a reproducible OCI \
image layer and a boot-time verifier.\n\nExit codes: 0 ok; 1 negative verdict (invalid blueprint, \
failed check, difference found); 2 unusable input or arguments.",
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct Global {
    /// Print only the report, no progress or notes on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// More detail on stderr (repeat for more).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Colour in text output (NO_COLOR in the environment turns `auto` off).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaFormat {
    Json,
    Markdown,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a commented starter blueprint from an embedded example (and the files it refers to).
    #[command(
        after_help = "Examples:\n  nodeimg init --list\n  nodeimg init --example h100-sxm-ubuntu -o site/h100.yaml\n  nodeimg init --example cpu-minimal > bp.yaml"
    )]
    Init(InitArgs),
    /// Check blueprints: structure, typed values and semantic rules; print each one's id.
    #[command(
        after_help = "Examples:\n  nodeimg validate blueprints/*.yaml\n  nodeimg validate --strict --format json blueprints/h100-sxm-ubuntu.yaml\n  nodeimg validate --matrix site-matrix.yaml bp.yaml"
    )]
    Validate(ValidateArgs),
    /// Print every resolved value of a blueprint, with the arithmetic of computed ones.
    #[command(after_help = "Example:\n  nodeimg explain blueprints/h100-sxm-ubuntu.yaml")]
    Explain(ExplainArgs),
    /// Render every configuration file of a blueprint into a folder (atomically).
    #[command(
        after_help = "Examples:\n  nodeimg render blueprints/h100-sxm-ubuntu.yaml -o out/h100\n  nodeimg render --templates my-templates/ bp.yaml -o out/"
    )]
    Render(RenderArgs),
    /// Validate, render and package a blueprint into a reproducible OCI image layout; print its digest.
    #[command(
        after_help = "Examples:\n  nodeimg build blueprints/h100-sxm-ubuntu.yaml -o out/h100\n  SOURCE_DATE_EPOCH=1764374400 nodeimg build --format json bp.yaml -o out/\n  nodeimg build --check-repro bp.yaml -o out/\n  nodeimg build --compression gzip --tag 2026.11.1-gzip bp.yaml -o out/"
    )]
    Build(BuildArgs),
    /// A blueprint repository's review surface: golden/NAME/ holds each blueprint's rendered files, modes and image digests.
    #[command(
        long_about = "Write (`update`) or compare (`check`) the golden folder of each blueprint: \
DIR/<metadata.name>/ holds the rendered tree (`layer/`, `cluster/`), `modes.txt` (file modes and \
link targets, which git does not keep) and `image.txt` (the digests `nodeimg build` gives with \
SOURCE_DATE_EPOCH 0, zstd and a fixed stand-in verifier, so they follow the configuration and the \
overlay, not nodeimg's own code). Committed beside the blueprints, every change shows in review as \
what it does to the files on the node; CI runs `check`.\n\nExit codes: 0 every folder is as \
rendered (update: written); 1 a folder differs (each file named, with a unified diff); 2 a \
blueprint, the templates, the matrix or the folder cannot be used.",
        after_help = "Examples:\n  nodeimg golden update blueprints/*.yaml\n  nodeimg golden check blueprints/*.yaml\n  nodeimg golden check --dir review/golden --format json site/h100.yaml"
    )]
    Golden(GoldenArgs),
    /// Compare two blueprints: field changes, computed values, rendered files, and the fleet impact.
    #[command(
        after_help = "Examples:\n  nodeimg diff old/h100.yaml blueprints/h100-sxm-ubuntu.yaml\n  nodeimg diff main:blueprints/h100.yaml blueprints/h100.yaml\n  git show main:site/h100.yaml | nodeimg diff --base-dir site - site/h100.yaml\n  nodeimg diff --format json --no-files a.yaml b.yaml"
    )]
    Diff(DiffArgs),
    /// Print the blueprint's JSON Schema (for editors and CI).
    #[command(after_help = "Example:\n  nodeimg schema > nodeimg-blueprint.schema.json")]
    Schema(SchemaArgs),
    /// Print a shell completion script.
    #[command(after_help = "Example:\n  nodeimg completions bash > /etc/bash_completion.d/nodeimg")]
    Completions(CompletionsArgs),
    /// Write man pages for nodeimg and its subcommands.
    #[command(after_help = "Example:\n  nodeimg man -o /usr/local/share/man/man1")]
    Man(ManArgs),
    /// Print what verify reads from a machine (or a capture) as JSON.
    #[command(
        after_help = "Examples:\n  nodeimg facts\n  nodeimg facts --snapshot node-a.tar.zst\n  nodeimg facts --root /mnt/fixture --nvidia-smi-xml smi.xml"
    )]
    Facts(FactsArgs),
    /// Save every file and command output verify reads into one archive (read-only, bounded).
    #[command(
        after_help = "Examples:\n  nodeimg capture -o /var/lib/nodeimg/node-a.tar.zst\n  nodeimg verify --snapshot node-a.tar.zst --blueprint bp.yaml"
    )]
    Capture(CaptureArgs),
    /// Check this machine against its blueprint; exit 0 pass, 1 a check failed, 2 unusable input.
    #[command(
        after_help = "Examples:\n  nodeimg verify --phase boot --record /var/lib/nodeimg/acceptance.yaml\n  nodeimg verify --blueprint bp.yaml --format junit --output json=/run/nodeimg/verify.json\n  nodeimg verify --phase health --format summary\n  nodeimg verify --snapshot node-a.tar.zst --blueprint bp.yaml --checks 'gpu.*'\n  nodeimg verify --phase cluster --blueprint bp.yaml --node-name gpu-node-01\n  kubectl get node gpu-node-01 -o json | nodeimg verify --phase cluster --blueprint bp.yaml --node - --pods pods.json --runtime-classes rc.json\n\nBreak-glass: when the file named by --break-glass (default /etc/nodeimg/break-glass) holds a reason and an expiry in the future (`reason: …` and `expires: 2026-12-24T18:00:00Z` lines), failures are reported and recorded as overridden and the exit code is 0; without either, or once expired, it does not apply."
    )]
    Verify(VerifyArgs),
    /// Apply an image to a root (image pipelines) or in place on a running node, with rollback.
    #[command(
        long_about = "Apply an OCI image layout (from `nodeimg build`) to a root: its layers by the OCI \
layer rules (whiteouts, opaque folders; nothing lands outside the root), then the distribution's \
post-apply steps inside the root with the root's own programs (trust store, unit presets, \
initramfs, boot loader), then the pinned packages are checked. Whatever stood at a path the image \
changes is saved first, so `--rollback` returns the root to the state before, byte for byte; a \
killed apply is completed by the next run; applying the current image again changes nothing.\n\n\
In place (`--in-place`, a running node; the host's root at `--root /host` from a container), the \
change's impact decides the rest: live and drain changes reload systemd and restart the daemons \
whose files changed; a reboot change puts the image on trial and reboots: a boot whose verify fails \
rollout.bootAttempts times goes back to the previous image by itself.\n\n\
Exit codes: 0 applied (or nothing to do); 1 a step, a pinned package or an action failed (the \
journal keeps the steps to run again); 2 the image, the root or the arguments cannot be used.",
        after_help = "Examples:\n  nodeimg apply out/h100 --root /mnt/image --skip boot-loader\n  nodeimg apply out/h100 --root /mnt/image --only-steps boot-loader\n  nodeimg apply out/h100 --in-place\n  nodeimg apply --rollback --in-place\n  nodeimg apply --recover --root /mnt/image"
    )]
    Apply(ApplyArgs),
    #[cfg(feature = "push")]
    /// Upload an OCI image layout (from `nodeimg build`) to a registry.
    #[command(
        long_about = "Upload an OCI image layout (from `nodeimg build`) to a registry. Blobs the \
registry already has are skipped; the push succeeds only when the registry's manifest digest \
equals the layout's.\n\nCredentials come from the first of $REGISTRY_AUTH_FILE, \
${XDG_RUNTIME_DIR}/containers/auth.json and ~/.docker/config.json that has an entry for the \
registry (as written by `podman login` / `docker login`).\n\nExit codes: 0 pushed; 1 the \
registry refused or could not be reached (authentication, network, digest mismatch); 2 the \
layout, reference or credentials file cannot be used.",
        after_help = "Examples:\n  nodeimg push out/h100 registry.example.com/nodes/h100-sxm-ubuntu\n  nodeimg push --insecure out/h100 127.0.0.1:5000/nodes/h100:2026.11.1"
    )]
    Push(PushArgs),
    /// Sign an image (an OCI layout, or REF@sha256:… in a registry) with an ECDSA P-256 key, as cosign does.
    #[command(
        long_about = "Sign an image with an ECDSA P-256 key: a sigstore signature in cosign's format \
(a simple-signing payload naming the manifest digest, stored as a layer of the `sha256-<hex>.sig` \
manifest), which skopeo's `sigstoreSigned` policy (with `use-sigstore-attachments: true`) and \
cosign verify. With the build's provenance at hand (a layout from `nodeimg build`), also a signed \
SLSA provenance v1 attestation (`sha256-<hex>.att`).\n\nTARGET is an OCI image layout folder (the \
attachments go into its index.json; `nodeimg push` carries them) or `registry/repository@sha256:…` \
(written to the registry; a tag alone is refused: a signature names a digest).\n\nThe key is a \
PEM file (PKCS#8 `PRIVATE KEY` or SEC1 `EC PRIVATE KEY`) or `env://VAR`.\n\nExit codes: 0 signed; \
1 the registry refused or could not be reached; 2 the key, the layout or the reference cannot be used.",
        after_help = "Examples:\n  openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out release.key\n  openssl pkey -in release.key -pubout -out release.pub\n  nodeimg sign out/h100 --key release.key --identity registry.example.com/nodes/h100:2026.11.1\n  NODEIMG_KEY=\"$(cat release.key)\" nodeimg sign registry.example.com/nodes/h100@sha256:… --key env://NODEIMG_KEY"
    )]
    Sign(SignArgs),
    /// Check an image's signature, provenance and SBOM against trusted keys; exit 0 signed, 1 not, 2 unusable input.
    #[command(
        long_about = "Check an image (an OCI layout, or REF@sha256:… in a registry) against trusted \
public keys: its signature (the `sha256-<hex>.sig` attachment, as cosign and skopeo's \
`sigstoreSigned` read it), its provenance attestation and its SBOM. The keys come from `--key` \
(repeatable), a site policy file (`--trust-policy`) or a blueprint's `security.imageTrust` \
(`--blueprint`).\n\nExit codes: 0 a trusted key signed this digest; 1 the signature is missing, \
by another key, over another digest, for another repository or malformed; 2 the keys, the layout, \
the reference or the registry cannot be used.",
        after_help = "Examples:\n  nodeimg verify-image out/h100 --key release.pub\n  nodeimg verify-image --format json registry.example.com/nodes/h100@sha256:… --blueprint bp.yaml\n  nodeimg verify-image --insecure 127.0.0.1:5000/nodes/h100@sha256:… --trust-policy site-trust.yaml"
    )]
    VerifyImage(VerifyImageArgs),
    /// Judge the outputs of acceptance layers 2-5 and write the complete acceptance record.
    #[command(
        long_about = "Judge the outputs of the acceptance workloads (nccl-tests/rccl-tests, dcgmi diag, \
dcgmproftester, perftest, nvbandwidth, p2pBandwidthLatencyTest, the probe's JSON lines, the Node \
and Pod objects) against the blueprint's topology thresholds and the node's previous record, and \
write the complete acceptance record. Inputs are files or folders; each file's format is \
recognised by its content.\n\nExit codes: 0 every required layer ran and passed; 1 a \
finding failed or a required test did not run or does not cover the node; 2 an input, the \
blueprint, a record or an output is unusable (a truncated or damaged output is named with its \
line).",
        after_help = "Examples:\n  nodeimg accept --blueprint bp.yaml --node-record node-01/verify.json --record node-01/accepted.json results/node-01/\n  nodeimg accept --blueprint /etc/nodeimg/blueprint.lock.json --previous old.json --record new.json --record new.yaml logs/\n  kubectl get node gpu-node-01 -o json > logs/node.json && nodeimg accept --blueprint bp.yaml logs/"
    )]
    Accept(AcceptArgs),
    /// Plan an image upgrade in waves along failure domains, gate each wave on its acceptance records, simulate a plan.
    #[command(
        long_about = "Plan an image upgrade in waves along failure domains (canaries per hardware SKU \
first, then waves where no wave takes more than the blueprint's budget from any failure domain), \
render it as system-upgrade-controller Plans, gate each wave on the acceptance records of its nodes, \
and simulate a plan over a synthetic fleet. nodeimg plans and judges; the controller executes.\n\n\
Exit codes: plan 0; gate 0 proceed, 1 halt; simulate 0 completed, 1 halted; 2 unusable input.",
        after_help = "Examples:\n  kubectl get nodes -o json > nodes.json\n  nodeimg rollout plan old/bp.yaml bp.yaml --nodes nodes.json --old-image reg/nodes/h100@sha256:... --new-image reg/nodes/h100@sha256:... -o rollout/\n  kubectl apply -f rollout/wave-000.yaml\n  nodeimg rollout gate --plan rollout/plan.json --wave 0 --previous records/before/ records/after/\n  nodeimg rollout simulate --nodes 10000 --zones 4 --rack-size 16 --skus 2 --accept-failure 0.002 --seed 7"
    )]
    Rollout(RolloutArgs),
}

#[derive(Debug, Args)]
pub struct RolloutArgs {
    #[command(subcommand)]
    pub command: RolloutCommand,
}

#[derive(Debug, Subcommand)]
pub enum RolloutCommand {
    /// From two blueprints and the Node objects: canaries, waves within the failure-domain budget, gates, rollback.
    Plan(RolloutPlanArgs),
    /// Judge a wave on its nodes' acceptance records: exit 0 proceed, 1 halt (and the rollback to apply).
    Gate(RolloutGateArgs),
    /// Return remediated nodes to service: `kubectl annotate` for each node whose acceptance record passes again; exit 1 if any does not.
    Readmit(RolloutReadmitArgs),
    /// Discrete-event simulation of a plan over a synthetic fleet, deterministic by seed.
    Simulate(RolloutSimulateArgs),
}

#[derive(Debug, Args)]
pub struct RolloutPlanArgs {
    /// The blueprint the fleet runs now (`-`: standard input).
    #[arg(value_name = "OLD")]
    pub old: Input,
    /// The blueprint of the new image.
    #[arg(value_name = "NEW")]
    pub new: Input,
    /// The Node objects (`kubectl get nodes -o json`; `-`: standard input).
    #[arg(long, value_name = "FILE")]
    pub nodes: Input,
    /// The image the fleet runs now, by digest (`registry/repo@sha256:...`): the rollback.
    #[arg(long, value_name = "REF")]
    pub old_image: String,
    /// The new image, by digest (`nodeimg build` prints it).
    #[arg(long, value_name = "REF")]
    pub new_image: String,
    /// Check both images against this site trust policy (default: the blueprints'
    /// `security.imageTrust`) before making Plans; a plan is refused for an image no
    /// trusted key signed.
    #[arg(long, value_name = "FILE")]
    pub trust_policy: Option<PathBuf>,
    /// Make the Plans without checking the images' signatures (offline); the plan says so.
    #[arg(long)]
    pub skip_image_verification: bool,
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Only nodes with this label (`key=value`; default: every node given).
    #[arg(long, value_name = "KEY=VALUE")]
    pub selector: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write `plan.json`, one system-upgrade-controller Plan per wave and `rollback.yaml` here
    /// (atomically; only a new, empty or earlier nodeimg output folder is replaced).
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub templates: TemplatesArg,
    #[command(flatten)]
    pub matrix: MatrixArg,
}

#[derive(Debug, Args)]
pub struct RolloutGateArgs {
    /// Acceptance records of the wave's nodes after the upgrade: files or folders.
    #[arg(required = true, value_name = "RECORDS")]
    pub records: Vec<PathBuf>,
    /// The plan (`plan.json` from `rollout plan -o`, or its `--format json`).
    #[arg(long, value_name = "FILE")]
    pub plan: Input,
    /// The wave to judge (0 is the first canary wave).
    #[arg(long, value_name = "N")]
    pub wave: usize,
    /// The nodes' records before the upgrade (files or folders): each figure is compared
    /// with the node's own; without it, the regression findings the records carry count.
    #[arg(long, value_name = "RECORDS")]
    pub previous: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct RolloutReadmitArgs {
    /// Acceptance records of the nodes after their recovery: files or folders.
    #[arg(required = true, value_name = "RECORDS")]
    pub records: Vec<PathBuf>,
    /// The blueprint the nodes run (their records must be of it).
    #[arg(long, value_name = "FILE")]
    pub blueprint: Input,
    /// Judge only these nodes (repeatable; default: every node with a record).
    #[arg(long = "node", value_name = "NAME")]
    pub nodes: Vec<String>,
    /// The nodes' records before the fault (files or folders): each figure is compared with
    /// the node's own; without it, the regression findings the records carry count.
    #[arg(long, value_name = "RECORDS")]
    pub previous: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub matrix: MatrixArg,
}

#[derive(Debug, Args)]
pub struct RolloutSimulateArgs {
    /// Take the failure-domain budget, canaries and wave cap from this blueprint's `rollout`.
    #[arg(long, value_name = "FILE")]
    pub blueprint: Option<Input>,
    /// Nodes in the synthetic fleet.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub nodes: u64,
    /// Zones (failure domain `topology.kubernetes.io/zone`).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub zones: u64,
    /// Nodes per rack (failure domain `nodeimg.dev/rack`).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub rack_size: u64,
    /// Hardware SKUs (contiguous blocks of racks).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub skus: u64,
    /// Most nodes a wave takes from one domain: a count or a share (`25%`); overrides the blueprint.
    #[arg(long, value_name = "N|P%")]
    pub budget: Option<String>,
    /// Canaries per SKU; overrides the blueprint.
    #[arg(long)]
    pub canaries: Option<u32>,
    /// The change's impact: what each node goes through.
    #[arg(long, value_enum, default_value_t = SimImpact::Reboot)]
    pub impact: SimImpact,
    /// Probability that a node's upgrade Job fails.
    #[arg(long, default_value_t = 0.0, value_parser = probability)]
    pub apply_failure: f64,
    /// Probability that a node fails acceptance on the new image.
    #[arg(long, default_value_t = 0.0, value_parser = probability)]
    pub accept_failure: f64,
    /// Make the first canary fail acceptance.
    #[arg(long)]
    pub canary_fails: bool,
    /// Node faults per node per day, `CLASS=RATE` (transient, driver-daemon, device, link;
    /// repeatable), handled as the rendered remediation does.
    #[arg(long, value_name = "CLASS=RATE", value_parser = parse_fault)]
    pub fault: Vec<(String, f64)>,
    /// NodeHealthCheck `maxUnhealthy`: a count or a share (`5%`); overrides the blueprint.
    #[arg(long, value_name = "N|P%")]
    pub max_unhealthy: Option<String>,
    /// Phase durations in seconds, `PHASE=MIN-MAX` (drain, apply, reboot, accept, gate,
    /// rollback, detect, daemon-restart, repair; repeatable).
    #[arg(long, value_name = "PHASE=MIN-MAX", value_parser = parse_span)]
    pub duration: Vec<(String, f64, f64)>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SimImpact {
    Live,
    Drain,
    Reboot,
}

fn probability(text: &str) -> Result<f64, String> {
    let p: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!("{p} is not a probability (0 to 1)"))
    }
}

fn parse_fault(text: &str) -> Result<(String, f64), String> {
    let (class, rate) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}`: write CLASS=RATE, e.g. device=0.001"))?;
    class.parse::<crate::rollout::faults::Class>()?;
    let rate = rate
        .parse::<f64>()
        .ok()
        .filter(|r| r.is_finite() && (0.0..=100.0).contains(r))
        .ok_or_else(|| format!("`{rate}` is not a rate per node per day (0 to 100)"))?;
    Ok((class.to_owned(), rate))
}

fn parse_span(text: &str) -> Result<(String, f64, f64), String> {
    let (phase, range) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}`: write PHASE=MIN-MAX, e.g. reboot=300-900"))?;
    const PHASES: &[&str] = &[
        "drain",
        "apply",
        "reboot",
        "accept",
        "gate",
        "rollback",
        "detect",
        "daemon-restart",
        "repair",
    ];
    if !PHASES.contains(&phase) {
        return Err(format!("`{phase}` is not a phase ({})", PHASES.join(", ")));
    }
    let (a, b) = range.split_once('-').unwrap_or((range, range));
    let num = |s: &str| {
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("`{s}` is not a number of seconds"))
    };
    let (min, max) = (num(a)?, num(b)?);
    if min > max {
        return Err(format!("{min} > {max}"));
    }
    Ok((phase.to_owned(), min, max))
}

#[derive(Debug, Subcommand)]
pub enum AcceptCommand {
    /// Nodes of the same SKU against the fleet median of each acceptance figure; outliers beyond the tolerance are flagged (exit 1).
    #[command(after_help = "Example:\n  nodeimg accept compare --tolerance 5 records/*.json")]
    Compare(AcceptCompareArgs),
}

#[derive(Debug, Args)]
pub struct AcceptCompareArgs {
    /// Acceptance records: files or folders (the newest record of each node counts).
    #[arg(required = true, value_name = "RECORDS")]
    pub records: Vec<PathBuf>,
    /// How much worse than the SKU's median a figure may be, in percent.
    #[arg(long, default_value_t = 5.0, value_parser = tolerance)]
    pub tolerance: f64,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

fn tolerance(text: &str) -> Result<f64, String> {
    let p: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if (0.0..100.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!("{p} is not a percentage below 100"))
    }
}

fn parse_action(s: &str) -> Result<crate::fault::Action, String> {
    s.trim().parse().map_err(|_| {
        let names: Vec<&str> = <crate::fault::Action as strum::VariantArray>::VARIANTS
            .iter()
            .map(|&a| a.into())
            .collect();
        format!("`{s}` is not an action ({})", names.join(", "))
    })
}

#[derive(Debug, Args)]
pub struct MatrixArg {
    /// Extra compatibility-matrix entries (YAML) laid over the built-in matrix.
    #[arg(long, value_name = "FILE")]
    pub matrix: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Blueprint files (`-`: standard input).
    #[arg(required = true, value_name = "BLUEPRINT")]
    pub files: Vec<Input>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Treat warnings as errors.
    #[arg(long)]
    pub strict: bool,
    #[command(flatten)]
    pub matrix: MatrixArg,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The blueprint (`-`: standard input).
    #[arg(value_name = "BLUEPRINT")]
    pub file: Input,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub matrix: MatrixArg,
}

#[derive(Debug, Args)]
pub struct TemplatesArg {
    /// Folder of templates that replace the built-in ones of the same name.
    #[arg(long, value_name = "DIR")]
    pub templates: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The blueprint (`-`: standard input).
    #[arg(value_name = "BLUEPRINT")]
    pub file: Input,
    /// Output folder: `layer/` (the image tree) and `cluster/` (Helm values, rules). Only a new, empty or earlier render folder is replaced.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    #[command(flatten)]
    pub templates: TemplatesArg,
    #[command(flatten)]
    pub matrix: MatrixArg,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The blueprint (`-`: standard input).
    #[arg(value_name = "BLUEPRINT")]
    pub file: Input,
    /// The OCI image layout folder to write (replaced atomically; only an empty folder or an earlier build is replaced). Default: out/<metadata.name>/.
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Layer compression.
    #[arg(long, value_enum, default_value_t = Compression::Zstd)]
    pub compression: Compression,
    /// Image tag (`org.opencontainers.image.ref.name`); default: metadata.version.
    #[arg(long, value_name = "TAG")]
    pub tag: Option<Tag>,
    /// Also build twice under different conditions (umask, threads) and compare every byte; exit 1 on a difference.
    #[arg(long)]
    pub check_repro: bool,
    /// The nodeimg binary the image carries as /usr/local/bin/nodeimg (default: this executable). It must run on the blueprint's distribution: its glibc symbol versions are checked.
    #[arg(long, value_name = "PATH")]
    pub verifier: Option<PathBuf>,
    /// Pack every layer again instead of reusing unchanged ones from the image already in OUT.
    #[arg(long)]
    pub no_cache: bool,
    /// Attach no SBOM (by default an SPDX 2.3 and a CycloneDX 1.6 document are attached to the image as OCI referrers).
    #[arg(long)]
    pub no_sbom: bool,
    /// Also write the cluster-side files (operator values, NodeFeatureRule) into this folder.
    #[arg(long, value_name = "DIR")]
    pub cluster: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub templates: TemplatesArg,
    #[command(flatten)]
    pub matrix: MatrixArg,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The blueprint before (`-`: standard input; `REV:PATH`: as it was at a git revision,
    /// with that revision's overlay and certificates).
    #[arg(value_name = "OLD")]
    pub old: Input,
    /// The blueprint after (`-`: standard input; `REV:PATH` as for OLD).
    #[arg(value_name = "NEW")]
    pub new: Input,
    /// The folder relative paths (overlay, certificates) of a blueprint read from standard
    /// input resolve against (default: the current folder).
    #[arg(long, value_name = "DIR")]
    pub base_dir: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// List changed files without their unified diffs (text format).
    #[arg(long)]
    pub no_files: bool,
    #[command(flatten)]
    pub templates: TemplatesArg,
    #[command(flatten)]
    pub matrix: MatrixArg,
}

#[derive(Debug, Args)]
pub struct GoldenArgs {
    #[command(subcommand)]
    pub command: GoldenCommand,
}

#[derive(Debug, Subcommand)]
pub enum GoldenCommand {
    /// Compare each blueprint's golden folder with what it renders now; exit 1 naming each differing file.
    Check(GoldenTarget),
    /// Write each blueprint's golden folder (atomically; only an earlier golden folder is replaced).
    Update(GoldenTarget),
}

#[derive(Debug, Args)]
pub struct GoldenTarget {
    /// The blueprints (`-`: standard input).
    #[arg(value_name = "BLUEPRINT", required = true)]
    pub files: Vec<Input>,
    /// The golden folder: each blueprint's files are in DIR/<metadata.name>/.
    #[arg(long, value_name = "DIR", default_value = "golden")]
    pub dir: PathBuf,
    /// Unified diff lines shown per differing file (text format); 0 shows them all.
    #[arg(long, value_name = "N", default_value_t = 40)]
    pub diff_lines: usize,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub templates: TemplatesArg,
    #[command(flatten)]
    pub matrix: MatrixArg,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// `json`: the JSON Schema; `markdown`: the field reference table.
    #[arg(long, value_enum, default_value_t = SchemaFormat::Json)]
    pub format: SchemaFormat,
    /// The acceptance record's JSON Schema instead of the blueprint's.
    #[arg(long, conflicts_with = "format")]
    pub record: bool,
    /// The JSON Schema of a `--matrix` file (a site compatibility matrix) instead.
    #[arg(long, conflicts_with_all = ["format", "record"])]
    pub matrix: bool,
    /// Write to this file (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<Output>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The example to start from (see `--list`).
    #[arg(long, value_name = "NAME", required_unless_present = "list")]
    pub example: Option<String>,
    /// List the examples, one a line with what node each describes.
    #[arg(long, conflicts_with_all = ["example", "output"])]
    pub list: bool,
    /// Write the blueprint to this file, and the certificates and overlay files it refers to
    /// beside it; nothing is overwritten. Without it, the blueprint alone goes to stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Folder to write nodeimg.1 and a page per subcommand into (nodeimg-verify.1, nodeimg-rollout-plan.1, …).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
}

/// Where facts come from: the live machine (under `--root`) or a capture.
#[derive(Debug, Args)]
pub struct SourceArgs {
    /// Read the machine under this folder instead of `/` (a fixture tree, a mounted image).
    #[arg(long, value_name = "DIR", conflicts_with = "snapshot")]
    pub root: Option<PathBuf>,
    /// Replay a capture made by `nodeimg capture` instead of reading a machine (`-`: standard input).
    #[arg(long, value_name = "FILE")]
    pub snapshot: Option<Input>,
    /// Use this saved `nvidia-smi -q -x` output instead of running nvidia-smi (`-`: standard input).
    #[arg(long, value_name = "FILE")]
    pub nvidia_smi_xml: Option<Input>,
    /// Run this program (a path on this machine) for NAME: nvidia-smi, rocm-smi, containerd,
    /// kubelet or systemctl (repeatable). Without it, programs run only from their fixed
    /// paths and only when reading this machine; never from a `--root` tree.
    #[arg(long, value_name = "NAME=PATH", value_parser = parse_tool, conflicts_with = "snapshot")]
    pub tool: Vec<(crate::verify::host::Program, PathBuf)>,
    /// Deadline for each vendor command (nvidia-smi, systemctl, ...) and each Redfish
    /// request to the BMC, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
}

fn parse_tool(text: &str) -> Result<(crate::verify::host::Program, PathBuf), String> {
    let (name, path) = text.split_once('=').ok_or_else(|| {
        format!("`{text}`: expected NAME=PATH, e.g. nvidia-smi=/opt/nvidia/bin/nvidia-smi")
    })?;
    let program = name.parse()?;
    if path.is_empty() {
        return Err(format!("`{text}`: the path is empty"));
    }
    Ok((program, PathBuf::from(path)))
}

#[derive(Debug, Args)]
pub struct FactsArgs {
    #[command(flatten)]
    pub source: SourceArgs,
}

#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// The archive to write (`.tar.zst`), atomically (`-`: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Output,
    /// Read the machine under this folder instead of `/`.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Run this program (a path on this machine) for NAME (repeatable); see `facts --tool`.
    #[arg(long, value_name = "NAME=PATH", value_parser = parse_tool)]
    pub tool: Vec<(crate::verify::host::Program, PathBuf)>,
    /// Deadline for each vendor command, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
    /// Most bytes kept in all (files, command output, kernel log); at most 1 GiB, what
    /// `--snapshot` replays.
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024 * 1024,
          value_parser = clap::value_parser!(u64).range(..=crate::verify::capture::archive::MAX_CONTENT_BYTES))]
    pub max_bytes: u64,
    /// Most bytes kept from one file or output (at most 64 MiB); larger ones are skipped
    /// with the reason.
    #[arg(long, value_name = "BYTES", default_value_t = 16 * 1024 * 1024,
          value_parser = clap::value_parser!(u64).range(..=crate::verify::capture::archive::MAX_ITEM_BYTES))]
    pub max_item_bytes: u64,
}

/// Where the image puts the blueprint it was built from.
pub const DEFAULT_LOCK: &str = "/etc/nodeimg/blueprint.lock.json";

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The blueprint (YAML or JSON; `-`: standard input).
    #[arg(
        long,
        value_name = "FILE",
        default_value = DEFAULT_LOCK
    )]
    pub blueprint: Input,
    #[command(flatten)]
    pub source: SourceArgs,
    #[arg(long, value_enum, default_value_t = Phase::All)]
    pub phase: Phase,
    /// Wait up to this long for states that settle by themselves after boot (Fabric Manager training, links and IB ports coming up, time sync): checks run again every 5 s while only such checks fail. Live machine only.
    #[arg(long, value_name = "SECONDS", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub settle: u64,
    /// Run up to this many times while the node fails (each run writes the record and the evidence); unusable input is never retried.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub attempts: u32,
    /// Pause between attempts, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 20, value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub retry_delay: u64,
    /// Only checks whose id matches one of these patterns (`*` wildcard, `!` excludes), comma-separated.
    #[arg(long, value_name = "PATTERNS", value_delimiter = ',')]
    pub checks: Vec<String>,
    /// Only failures that ask for one of these actions count (`reset-gpu,reboot-node`,
    /// comma-separated): the others are left out of the run. The health rules split by
    /// the recovery ladder's rung with it.
    #[arg(long, value_name = "ACTIONS", value_delimiter = ',', value_parser = parse_action)]
    pub actions: Vec<crate::fault::Action>,
    /// Report format on stdout.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
    /// Print every check verify knows (id, phases, severity, fault class) and exit;
    /// `--format json` prints it as JSON.
    #[arg(long)]
    pub list_checks: bool,
    /// Print one check's runbook and exit: what it checks, its fault class and action, what
    /// blocks it, and the remedy (the ids are `--list-checks`').
    #[arg(long, value_name = "ID", conflicts_with = "list_checks")]
    pub explain: Option<String>,
    /// Also write a report to a file, atomically: `FORMAT=FILE` (repeatable; `FORMAT=-`: on
    /// standard output, in place of the `--format` report).
    #[arg(long, value_name = "FORMAT=FILE", value_parser = parse_output)]
    pub output: Vec<(ReportFormat, Output)>,
    /// Write the node acceptance record (YAML for .yaml/.yml, JSON otherwise), atomically
    /// (`-`: JSON on standard output, in place of the `--format` report). With `--phase
    /// cluster`, layer 2 goes into the record in FILE (made at boot, or new).
    #[arg(long, value_name = "FILE")]
    pub record: Option<Output>,
    /// When anything fails, keep a capture of what verify read in this folder.
    #[arg(long, value_name = "DIR")]
    pub evidence_on_fail: Option<PathBuf>,
    /// Machine path of the break-glass file; when it holds a reason and a future expiry, failures do not fail the run.
    #[arg(long, value_name = "PATH", default_value = "/etc/nodeimg/break-glass")]
    pub break_glass: PathBuf,
    /// `--phase cluster`: the Node object (`kubectl get node NAME -o json`; `-`: standard
    /// input) instead of reading it from the Kubernetes API.
    #[arg(long, value_name = "FILE")]
    pub node: Option<Input>,
    /// `--phase cluster` with `--node`: the Pods on the node (`kubectl get pods -A -o json
    /// --field-selector spec.nodeName=NAME`), to check the device components.
    #[arg(long, value_name = "FILE", requires = "node")]
    pub pods: Option<Input>,
    /// `--phase cluster` with `--node`: the cluster's RuntimeClasses (`kubectl get
    /// runtimeclasses -o json`), to check the node class's own.
    #[arg(long, value_name = "FILE", requires = "node")]
    pub runtime_classes: Option<Input>,
    /// `--phase cluster`: the node's name (default: the only Node in --node).
    #[arg(long, value_name = "NAME", env = "NODE_NAME")]
    pub node_name: Option<String>,
    /// `--phase cluster` from the API: this kubeconfig (default: $KUBECONFIG,
    /// ~/.kube/config, then the in-cluster service account).
    #[arg(long, value_name = "FILE", conflicts_with = "node")]
    pub kubeconfig: Option<PathBuf>,
    #[command(flatten)]
    pub matrix: MatrixArg,
}

fn parse_output(text: &str) -> Result<(ReportFormat, Output), String> {
    let (format, file) = text.split_once('=').ok_or_else(|| {
        format!("`{text}`: expected FORMAT=FILE, e.g. junit=/run/nodeimg/verify.xml")
    })?;
    let format = ReportFormat::from_str(format, true).map_err(|_| {
        let names: Vec<_> = ReportFormat::value_variants()
            .iter()
            .filter_map(|f| f.to_possible_value())
            .map(|v| v.get_name().to_owned())
            .collect();
        format!("`{format}`: not a format ({})", names.join(", "))
    })?;
    let file = file.parse().map_err(|e: String| format!("`{text}`: {e}"))?;
    Ok((format, file))
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("what").required(true).args(["layout", "rollback", "recover", "boot_trial", "boot_failed", "bless"]))]
pub struct ApplyArgs {
    /// The image: an OCI image layout folder (`oci:DIR` to be explicit), or a registry
    /// reference by digest, `registry/repository[:tag]@sha256:…` (`docker://` optional),
    /// pulled and checked against its digest.
    #[arg(value_name = "IMAGE")]
    pub layout: Option<String>,
    /// Take a registry reference that names the image by tag alone (a tag can move).
    #[arg(long)]
    pub allow_tag: bool,
    /// Plain HTTP to the registry (for a registry on a loopback address).
    #[arg(long)]
    pub insecure: bool,
    /// Give up pulling after this many seconds (at most a day).
    #[arg(long, value_name = "SECONDS", default_value_t = 1800,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub pull_timeout: u64,
    /// Apply only an image signed by this public key (PEM; repeatable); without it and
    /// --trust-policy, the root's own policy (its lock's `security.imageTrust`) decides.
    #[arg(long, value_name = "PUB", conflicts_with = "trust_policy")]
    pub key: Vec<PathBuf>,
    /// A site trust policy file (`kind: TrustPolicy`) the image must satisfy.
    #[arg(long, value_name = "FILE")]
    pub trust_policy: Option<PathBuf>,
    /// The root to apply to (default: `/` with --in-place).
    #[arg(long, value_name = "DIR", required_unless_present_any = ["in_place"])]
    pub root: Option<PathBuf>,
    /// A running node: act on the change's impact (restart daemons, or reboot on trial).
    #[arg(long)]
    pub in_place: bool,
    /// Go back to the image before (or the root as it was before the first apply).
    #[arg(long, conflicts_with = "layout")]
    pub rollback: bool,
    /// Complete an interrupted apply or rollback, then run its steps.
    #[arg(long, conflicts_with_all = ["layout", "rollback"])]
    pub recover: bool,
    /// Boot assessment, early in boot: count this boot of an image on trial; past its attempts, go back and reboot.
    #[arg(long, hide_short_help = true, conflicts_with_all = ["layout", "rollback", "recover"])]
    pub boot_trial: bool,
    /// Boot assessment: verify failed this boot; while on trial, reboot for the next attempt.
    #[arg(long, hide_short_help = true, conflicts_with_all = ["layout", "rollback", "recover", "boot_trial"])]
    pub boot_failed: bool,
    /// Boot assessment: this boot was good (boot-complete.target); the trial ends.
    #[arg(long, hide_short_help = true, conflicts_with_all = ["layout", "rollback", "recover", "boot_trial", "boot_failed"])]
    pub bless: bool,
    /// Leave out a post-apply step (trust-store, units, initramfs, boot-loader); repeatable,
    /// or comma-separated in NODEIMG_APPLY_SKIP (which the boot-assessment unit reads from
    /// /etc/nodeimg/apply.env).
    #[arg(long, value_name = "STEP", env = "NODEIMG_APPLY_SKIP", value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(crate::apply::steps::STEP_IDS))]
    pub skip: Vec<String>,
    /// Run only these post-apply steps (comma-separated).
    #[arg(long, value_name = "STEP,...", value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(crate::apply::steps::STEP_IDS))]
    pub only_steps: Vec<String>,
    /// Install the pinned packages the root lacks with its own package manager.
    #[arg(long, conflicts_with = "no_package_check")]
    pub install_packages: bool,
    /// Do not judge the pinned packages (a root whose packages are not the node's, or a
    /// pipeline that installs them after apply); verify still checks the versions at boot.
    #[arg(long, env = "NODEIMG_APPLY_NO_PACKAGE_CHECK", value_parser = clap::builder::BoolishValueParser::new())]
    pub no_package_check: bool,
    /// Onto a root: leave out the static check of the applied root (units' programs, the
    /// pinned kernel and its driver module, boot entries, initramfs, trust store).
    #[arg(long)]
    pub no_root_check: bool,
    /// In place: arm the trial of a reboot change but do not reboot.
    #[arg(long)]
    pub no_reboot: bool,
    /// In place: list the runtime actions (restarts, reboot) instead of running them.
    #[arg(long, env = crate::apply::impact::PRINT_ACTIONS, value_parser = clap::builder::BoolishValueParser::new())]
    pub print_actions: bool,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[cfg(feature = "push")]
#[derive(Debug, Args)]
pub struct PushArgs {
    /// The OCI image layout folder.
    #[arg(value_name = "LAYOUT")]
    pub layout: PathBuf,
    /// `registry[:port]/repository[:tag]`; without a tag, the layout's tag.
    #[arg(value_name = "REF", value_parser = parse_reference)]
    pub reference: String,
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// After the push, sign the image in the registry with this private key (PEM file or
    /// `env://VAR`): the signature for `registry/repository:tag`, and the provenance
    /// attestation from the layout's provenance.json.
    #[arg(long, value_name = "KEY")]
    pub sign: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Checks REF's grammar before anything runs; the tag, when absent, comes
/// from the layout later.
#[cfg(feature = "push")]
fn parse_reference(text: &str) -> Result<String, String> {
    crate::package::push::parse_reference(text, Some("latest"))
        .map(|_| text.to_owned())
        .map_err(|e| e.to_string())
}

/// Where to reach a registry (`sign`, `verify-image`, `push --sign`, `rollout plan`).
#[derive(Debug, Clone, Args)]
pub struct RegistryArgs {
    /// Plain HTTP instead of HTTPS (for a registry on a loopback address).
    #[arg(long)]
    pub insecure: bool,
    /// Give up on the registry after this many seconds (at most a day).
    #[arg(long, value_name = "SECONDS", default_value_t = 600,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
}

#[derive(Debug, Args)]
pub struct SignArgs {
    /// An OCI image layout folder, or `registry/repository@sha256:…`.
    #[arg(value_name = "TARGET")]
    pub target: String,
    /// The private key: a PEM file (PKCS#8 or SEC1, ECDSA P-256) or `env://VAR`.
    #[arg(long, value_name = "KEY")]
    pub key: String,
    /// The name to sign the image for (`registry/repository[:tag]`; the signature's
    /// `docker-reference`). Default: REF's repository for a registry, the image's name and
    /// tag for a layout.
    #[arg(long, value_name = "NAME")]
    pub identity: Option<String>,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct VerifyImageArgs {
    /// An OCI image layout folder, or `registry/repository@sha256:…`.
    #[arg(value_name = "TARGET")]
    pub target: String,
    /// A trusted public key (PEM `PUBLIC KEY`, ECDSA P-256); repeatable.
    #[arg(long = "key", value_name = "PUB")]
    pub keys: Vec<PathBuf>,
    /// A site trust policy (`kind: TrustPolicy`: keys, require).
    #[arg(long, value_name = "FILE")]
    pub trust_policy: Option<PathBuf>,
    /// Take the keys from this blueprint's `security.imageTrust`.
    #[arg(long, value_name = "FILE")]
    pub blueprint: Option<PathBuf>,
    /// Require the signature to name this repository (`registry/repository`).
    #[arg(long, value_name = "REPOSITORY")]
    pub identity: Option<String>,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub matrix: MatrixArg,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct AcceptArgs {
    #[command(subcommand)]
    pub command: Option<AcceptCommand>,
    /// Tool outputs: files, or folders read in name order.
    #[arg(required = true, value_name = "OUTPUT")]
    pub inputs: Vec<PathBuf>,
    /// The blueprint (YAML) or the lock from the image.
    #[arg(long, value_name = "FILE", required = true)]
    pub blueprint: Option<Input>,
    /// The layer-1 record `nodeimg verify --record` wrote on the node.
    #[arg(long, value_name = "FILE")]
    pub node_record: Option<Input>,
    /// The node's previous acceptance record: figures worse beyond the tolerance fail.
    #[arg(long, value_name = "FILE")]
    pub previous: Option<Input>,
    /// The node's name (default: from --node-record, or the only Node object given).
    #[arg(long, value_name = "NAME")]
    pub node_name: Option<String>,
    /// Write the record here, YAML for .yaml/.yml, JSON otherwise (repeatable), atomically;
    /// `-` for standard output (instead of the report).
    #[arg(long, value_name = "FILE")]
    pub record: Vec<Output>,
    /// Where the outputs are kept (recorded as the evidence URI).
    #[arg(long, value_name = "URI")]
    pub evidence: Option<String>,
    /// `text`: the report; `json`: the record.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub matrix: MatrixArg,
}
