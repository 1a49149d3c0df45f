//! `flint plan` and `flint apply`: provision a machine from an Ignition (or Butane) config.

use crate::provision::acquire::{Places, Source};
use crate::provision::{self, Options, Stage};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct ProvisionArgs {
    /// The mounted target root.
    #[arg(long, default_value = "/sysroot", value_name = "DIR")]
    pub root: PathBuf,
    /// Where the config comes from: `auto` looks at the kernel command line
    /// (ignition.config.url=) and then QEMU fw_cfg.
    #[arg(long, value_name = "SOURCE", conflicts_with = "config")]
    pub config_source: Option<String>,
    /// Base configs (*.ign, in name order) merged underneath the user config.
    #[arg(long, value_name = "DIR")]
    pub base_dir: Option<PathBuf>,
    /// Keep the rendered config here, so that separate stage runs read the same config.
    #[arg(long, value_name = "FILE")]
    pub config_cache: Option<PathBuf>,
    /// The grub.cfg on the OEM partition that holds the kernel arguments.
    #[arg(long, default_value = "/usr/share/oem/grub.cfg", value_name = "FILE")]
    pub kargs_file: PathBuf,
    /// Run only this stage.
    #[arg(long, value_enum)]
    pub stage: Option<Stage>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// The config: Ignition 3.0–3.4 JSON or Butane YAML.
    pub config: Option<PathBuf>,
}

/// Runs `plan` (`apply` = false) or `apply`; returns the exit code.
pub fn run(args: &ProvisionArgs, apply: bool) -> i32 {
    let source = match (&args.config, args.config_source.as_deref()) {
        (Some(p), _) => Source::File(p.clone()),
        (None, Some("auto")) => Source::Auto,
        (None, Some(other)) => {
            eprintln!("error: unknown config source {other:?} (use a file or `auto`)");
            return 2;
        }
        (None, None) => {
            eprintln!("error: give a CONFIG file or --config-source auto");
            return 2;
        }
    };
    let opts = Options {
        source,
        places: Places::default(),
        base_dir: args.base_dir.clone(),
        cache: args.config_cache.clone(),
        root: args.root.clone(),
        fetch: crate::fetch::Settings::from_env(),
    };
    let stages: Vec<Stage> = match args.stage {
        Some(s) => vec![s],
        None => vec![Stage::Fetch, Stage::Kargs, Stage::Files],
    };
    if let Some(s) = stages
        .iter()
        .find(|s| !matches!(s, Stage::Fetch | Stage::Kargs | Stage::Files))
    {
        eprintln!("error: the {} stage is not implemented yet", s.name());
        return 2;
    }
    let report = |e: &provision::StageError| match args.format {
        Format::Human => eprintln!("error: {e}"),
        Format::Json => println!(
            "{}",
            serde_json::json!({
                "stage": e.stage.name(),
                "action": "fail",
                "path": e.path.as_ref().map(|p| p.to_string()),
                "message": e.message,
            })
        ),
    };
    let acq = match provision::fetch_stage(&opts) {
        Ok(a) => a,
        Err(e) => {
            report(&e);
            return 1;
        }
    };
    if args.format == Format::Human {
        eprintln!(
            "fetch: config from {}, {} resources ({} bytes) fetched and verified in {:.2} s",
            acq.origin,
            acq.fetched.items.len(),
            acq.fetched.total_bytes(),
            acq.took.as_secs_f64()
        );
    }
    let mut changes = 0;
    if stages.contains(&Stage::Kargs) {
        match provision::kargs_stage(&acq.config, &args.kargs_file, apply) {
            Ok(Some(line)) => {
                changes += 1;
                match args.format {
                    Format::Human if apply => println!("{line}"),
                    Format::Human => println!("would {line}"),
                    Format::Json => println!(
                        "{}",
                        serde_json::json!({"stage": "kargs", "action": "set-kernel-arguments",
                            "path": args.kargs_file.display().to_string(), "detail": line})
                    ),
                }
            }
            Ok(None) => {}
            Err(e) => {
                report(&e);
                return 1;
            }
        }
    }
    if stages.contains(&Stage::Files) {
        match provision::files_stage(&acq, &opts.root, apply) {
            Ok(actions) => {
                for a in &actions {
                    match args.format {
                        Format::Human if apply => println!("{}", a.text),
                        Format::Human => println!("would {}", a.text),
                        Format::Json => println!(
                            "{}",
                            serde_json::json!({
                                "stage": "files",
                                "action": a.kind,
                                "path": a.path,
                                "entry": a.entry.to_string(),
                                "detail": a.text,
                            })
                        ),
                    }
                }
                changes += actions.len();
                let record = opts.root.join("etc/.ignition-result.json");
                if apply
                    && (!actions.is_empty() || !record.exists())
                    && let Err(e) = provision::write_result(&opts.root, true)
                {
                    eprintln!("error: files stage: writing the result record: {e}");
                    return 1;
                }
            }
            Err(e) => {
                report(&e);
                return 1;
            }
        }
    }
    if apply && args.format == Format::Human {
        if changes == 0 {
            println!("apply: nothing to change");
        } else {
            println!("apply: {changes} changes");
        }
    }
    0
}
