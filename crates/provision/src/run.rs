//! The engine: one run of the provisioner. It takes the locks, runs the fetch stage first,
//! checks what every asked-for stage can refuse before a disk is touched, runs the stages in
//! order, releases what a plan mounted, unmounts after a failed full run, and tells the
//! platform how each stage went. What happens is told to an [`Observer`]: the command line
//! prints it; nothing here prints.

use crate::lock::{self, Role};
use crate::stage::{Context, Mode, Options, Planned, Stage, StageError, StageName};
use crate::stages;
use std::time::{Duration, Instant};

/// Who hears what a run does.
pub trait Observer {
    /// A line about the run (what was found, reused, how long it took).
    fn note(&mut self, text: &str);
    /// A stage's changes, made (apply) or to be made (plan), at once per stage.
    fn changes(&mut self, stage: StageName, changes: &[Planned]);
}

/// Why a run failed.
#[derive(Debug)]
pub enum RunError {
    /// Another run holds the root or the state directory.
    Busy(String),
    /// A stage failed.
    Stage(StageError),
    /// The state file ([`Options::state_file`]) could not be read (upstream exits 3).
    ReadState(String),
    /// The state file could not be written after the stage (upstream exits 1).
    WriteState(String),
}

/// What a run that succeeded did.
#[derive(Debug)]
pub struct Summary {
    /// How many changes were made (or would be).
    pub changes: usize,
    /// How long each stage took, in the order they ran.
    pub times: Vec<(StageName, Duration)>,
    /// What a plan could not look at (see [`crate::stage::Outcome::unseen`]).
    pub unseen: Vec<String>,
}

/// Runs `only` that stage, or every stage in order ([`stages::ORDER`]).
pub fn run(
    opts: &Options,
    only: Option<StageName>,
    mode: Mode,
    obs: &mut dyn Observer,
) -> Result<Summary, RunError> {
    // One run at a time on a root and a state directory (see lock.rs).
    let dirs = [
        (opts.root.as_path(), Role::Root),
        (opts.state_dir.as_path(), Role::StateDir),
    ];
    let _locks = lock::take(&dirs, mode.applies()).map_err(RunError::Busy)?;
    let mut cx = Context::new(opts);
    cx.asked = only;
    // The fetch stage fetches what the asked-for stages need (itself: everything).
    cx.needed = match only {
        Some(name) => stages::get(name).needs(),
        None => crate::resources::Needed::All,
    };
    if let Some(file) = &opts.state_file {
        cx.state = crate::state::State::load(file)
            .map_err(|e| RunError::ReadState(format!("reading state: {e}")))?;
    }
    let summary = run_stages(&mut cx, only, mode, obs)?;
    // As upstream, the state is kept only after a stage that succeeded, and only by apply.
    if let Some(file) = opts.state_file.as_ref().filter(|_| mode.applies()) {
        (cx.state.save(file)).map_err(|e| RunError::WriteState(format!("writing state: {e}")))?;
    }
    Ok(summary)
}

/// The stages of a run, once the locks are held and the state read.
fn run_stages(
    cx: &mut Context,
    only: Option<StageName>,
    mode: Mode,
    obs: &mut dyn Observer,
) -> Result<Summary, RunError> {
    let opts = cx.options;
    let asked: Vec<&dyn Stage> = match only {
        Some(name) => vec![stages::get(name)],
        None => stages::ORDER.to_vec(),
    };
    // The fetch stage comes first, whatever is asked: every other stage works on its config.
    let first = match only {
        Some(StageName::FetchOffline) => StageName::FetchOffline,
        _ => StageName::Fetch,
    };
    let start = Instant::now();
    match stages::get(first).run(cx, mode) {
        Ok(o) => notes(obs, first, &o.notes),
        Err(e) => {
            if first == StageName::Fetch {
                report_fetch_failure(opts, obs, &e);
            }
            return Err(RunError::Stage(e));
        }
    }
    let mut times = vec![(first, start.elapsed())];
    // The offline fetch is all a fetch-offline run does.
    if first == StageName::FetchOffline {
        return Ok(Summary {
            changes: 0,
            times,
            unseen: Vec::new(),
        });
    }
    let later = || asked.iter().filter(|s| s.name() != StageName::Fetch);
    for s in later() {
        s.check(cx, mode).map_err(RunError::Stage)?;
    }
    let mut changes = 0;
    let mut unseen = Vec::new();
    let mut result = Ok(());
    for s in later() {
        let start = Instant::now();
        let step = s.run(cx, mode);
        times.push((s.name(), start.elapsed()));
        match step {
            Ok(o) => {
                notes(obs, s.name(), &o.notes);
                notes(obs, s.name(), &o.unseen);
                unseen.extend(o.unseen);
                changes += o.changes.len();
                obs.changes(s.name(), &o.changes);
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    crate::stages::mount::release(&cx.plan_mounts);
    report_stages(cx, mode, &asked, &times, result.as_ref().err(), obs);
    if let Err(e) = result {
        // A run that fails after mounting leaves nothing mounted behind.
        if mode.applies()
            && asked.len() > 1
            && let Some(acq) = &cx.acquired
        {
            let _ = crate::stages::umount::umount_all(&acq.config, &opts.root);
        }
        return Err(RunError::Stage(e));
    }
    obs.note(&format!(
        "stage times: {}",
        (times.iter())
            .map(|(s, d)| format!("{} {:.2} s", s.name(), d.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Ok(Summary {
        changes,
        times,
        unseen,
    })
}

fn notes(obs: &mut dyn Observer, stage: StageName, notes: &[String]) {
    for n in notes {
        obs.note(&format!("{}: {n}", stage.name()));
    }
}

/// The platform hears of a failed fetch too (Equinix Metal's timeline), when the config
/// was to come from one.
fn report_fetch_failure(opts: &Options, obs: &mut dyn Observer, e: &StageError) {
    use crate::acquire::Source;
    let explicit = match &opts.source {
        Source::File(_) | Source::Given(_) => return,
        Source::Platform(n) => Some(n.as_str()),
        Source::Auto => None,
    };
    if let Ok(p) = crate::platform::select(explicit, &opts.places) {
        let fetcher = crate::fetch::Fetcher::with(opts.fetch.clone());
        let pcx = crate::platform::Context::new(fetcher, opts.places.clone());
        report(obs, p, &pcx, StageName::Fetch, Some(&e.message));
    }
}

/// After an apply, the platform hears how each asked-for stage that ran went, as upstream
/// reports once per stage run.
fn report_stages(
    cx: &Context,
    mode: Mode,
    asked: &[&dyn Stage],
    times: &[(StageName, Duration)],
    failed: Option<&StageError>,
    obs: &mut dyn Observer,
) {
    let Some(acq) = cx.acquired.as_ref().filter(|_| mode.applies()) else {
        return;
    };
    let Some(p) = acq.platform else { return };
    let pcx = crate::platform::Context::new(acq.fetcher.clone(), cx.options.places.clone());
    for (s, _) in times
        .iter()
        .filter(|(s, _)| asked.iter().any(|a| a.name() == *s))
    {
        let error = failed.filter(|e| e.stage == *s).map(|e| e.message.as_str());
        report(obs, p, &pcx, *s, error);
    }
}

/// Tells the platform how a stage went (only Equinix Metal listens); a failure to tell is
/// a note, not a failed run.
fn report(
    obs: &mut dyn Observer,
    p: &dyn crate::platform::Platform,
    cx: &crate::platform::Context,
    stage: StageName,
    error: Option<&str>,
) {
    if let Err(e) = p.report(cx, stage.name(), error) {
        obs.note(&format!("{}: POST status error: {e}", stage.name()));
    }
}
