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
    /// Render every configuration file of a blueprint into a folder (atomically).
    #[command(
        after_help = "Examples:\n  nodeimg render blueprints/h100-sxm-ubuntu.yaml -o out/h100\n  nodeimg render --templates my-templates/ bp.yaml -o out/"
    )]
    Render(RenderArgs),
    /// Compare two blueprints: field changes, computed values, rendered files, and the fleet impact.
    #[command(
        after_help = "Examples:\n  nodeimg diff old/h100.yaml blueprints/h100-sxm-ubuntu.yaml\n  nodeimg diff --format json --no-files a.yaml b.yaml"
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
pub struct TemplatesArg {
    /// Folder of templates that replace the built-in ones of the same name.
    #[arg(long, value_name = "DIR")]
    pub templates: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    #[arg(value_name = "BLUEPRINT")]
    pub file: PathBuf,
    /// Output folder: `layer/` (the image tree) and `cluster/` (Helm values, rules).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    #[command(flatten)]
    pub templates: TemplatesArg,
    #[command(flatten)]
    pub matrix: MatrixArg,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
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
