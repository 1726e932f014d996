//! Command-line definitions (clap derive) and nothing else: the same
//! definitions produce `--help`, shell completions and the man page.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "nodeimg",
    version,
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
    /// Check blueprints: structure, typed values and semantic rules; print each one's id.
    #[command(
        after_help = "Examples:\n  nodeimg validate blueprints/*.yaml\n  nodeimg validate --strict --format json blueprints/h100-sxm-ubuntu.yaml\n  nodeimg validate --matrix site-matrix.yaml bp.yaml"
    )]
    Validate(ValidateArgs),
    /// Print every resolved value of a blueprint, with the arithmetic of computed ones.
    #[command(after_help = "Example:\n  nodeimg explain blueprints/h100-sxm-ubuntu.yaml")]
    Explain(ExplainArgs),
    /// Print the blueprint's JSON Schema (for editors and CI).
    #[command(after_help = "Example:\n  nodeimg schema > nodeimg-blueprint.schema.json")]
    Schema(SchemaArgs),
    /// Print a shell completion script.
    #[command(after_help = "Example:\n  nodeimg completions bash > /etc/bash_completion.d/nodeimg")]
    Completions(CompletionsArgs),
    /// Write man pages for nodeimg and its subcommands.
    #[command(after_help = "Example:\n  nodeimg man -o /usr/local/share/man/man1")]
    Man(ManArgs),
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
}

#[derive(Debug, Args)]
pub struct MatrixArg {
    /// Extra compatibility-matrix entries (YAML) laid over the built-in matrix.
    #[arg(long, value_name = "FILE")]
    pub matrix: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Blueprint files.
    #[arg(required = true, value_name = "BLUEPRINT")]
    pub files: Vec<PathBuf>,
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
    #[arg(value_name = "BLUEPRINT")]
    pub file: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub matrix: MatrixArg,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// `json`: the JSON Schema; `markdown`: the field reference table.
    #[arg(long, value_enum, default_value_t = SchemaFormat::Json)]
    pub format: SchemaFormat,
    /// Write to this file (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Folder to write nodeimg.1 and nodeimg-<command>.1 into.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct PushArgs {
    /// The OCI image layout folder.
    #[arg(value_name = "LAYOUT")]
    pub layout: PathBuf,
    /// `registry[:port]/repository[:tag]`; without a tag, the layout's tag.
    #[arg(value_name = "REF")]
    pub reference: String,
    /// Plain HTTP instead of HTTPS (for a registry on a loopback address).
    #[arg(long)]
    pub insecure: bool,
    /// Give up after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub timeout: u64,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}
