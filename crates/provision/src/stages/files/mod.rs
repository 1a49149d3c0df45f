//! The files stage: users and groups (`passwd/`), then files, directories and links
//! (`nodes.rs`), then units (`units.rs`). It plans, and when applying carries out the plan
//! and checks that planning again finds nothing to do (`converge.rs` says which leftovers
//! the config itself explains); the run's record is written at the end.

mod as_user;
mod content;
mod converge;
pub(crate) mod nodes;
mod owners;
pub(crate) mod passwd;
pub(crate) mod refusals;
mod units;

use crate::entry::EntryError;
use crate::record;
use crate::resources::Fetched;
use crate::root::Root;
use crate::stage::{Acquired, Context, Mode, Outcome, Planned, Stage, StageError, StageName};
use flint_go::tree::JsonPath;
use flint_ignition::Config;
use std::collections::{HashMap, HashSet};
use std::path::Path;

pub(crate) struct Files;

impl Stage for Files {
    fn name(&self) -> StageName {
        StageName::Files
    }

    /// Contents, appended fragments, and the LUKS key files it leaves in the root.
    fn needs(&self) -> crate::stage::Needed {
        crate::stage::Needed::All
    }

    fn run(&self, cx: &mut Context, mode: Mode) -> Result<Outcome, StageError> {
        let opts = cx.options;
        let acq = cx.acquired(StageName::Files)?;
        let notated = super::mount::notated(cx);
        let changes = files_stage(acq, &opts.root, &opts.state_dir, notated, mode)?;
        let failed = |e: std::io::Error| {
            let message = format!("writing the result record: {e}");
            StageError::new(StageName::Files, None, message)
        };
        if mode.applies() && opts.live {
            // A running system gets no record of a first boot (upstream's ignition-apply).
            record::clear_mark(&opts.root).map_err(failed)?;
        } else if mode.applies() && (!changes.is_empty() || !record::has_record(&opts.root)) {
            record::write_result(&opts.root, acq.user_provided).map_err(failed)?;
        }
        Ok(Outcome {
            changes,
            notes: Vec::new(),
            unseen: Vec::new(),
        })
    }
}

fn fail(e: EntryError) -> StageError {
    StageError::new(StageName::Files, Some(e.entry), e.message)
}

/// The files stage on a root. With [`Mode::Apply`], a later run (one with a record, or no
/// in-progress mark) plans first and stops when nothing is to change.
pub(crate) fn files_stage(
    acq: &Acquired,
    root: &Path,
    state_dir: &Path,
    notated: Vec<String>,
    mode: Mode,
) -> Result<Vec<Planned>, StageError> {
    let r = Root::new(root.to_path_buf());
    // LUKS key files and crypttab are files like the config's own.
    // Copied only when there are any: the config and its resources can be large.
    let with_luks;
    let (config, fetched) = if acq.config.storage.luks.is_empty() {
        (&acq.config, &acq.fetched)
    } else {
        let (mut config, mut fetched) = (acq.config.clone(), acq.fetched.clone());
        super::disks::luks::root_files(&mut config, &mut fetched, state_dir, root);
        with_luks = (config, fetched);
        (&with_luks.0, &with_luks.1)
    };
    let first_run = prepare(config, &r, root, mode)?;
    let planner = Planner {
        config,
        fetched,
        r: &r,
        notated,
    };
    // A later run plans first (the files on all cores, see nodes::run) and stops there when
    // nothing is to change; otherwise, or if planning alone fails, it applies as usual.
    let none = HashSet::new();
    let done = match (mode.applies() && !first_run).then(|| planner.plan(Mode::Plan, false, &none))
    {
        Some(Ok(p)) if p.is_empty() => return Ok(Vec::new()),
        Some(_) => {
            r.forget();
            planner.plan(Mode::Apply, false, &none)?
        }
        None => planner.plan(mode, first_run, &none)?,
    };
    // Nothing done, nothing to check again.
    if mode.applies() && !done.is_empty() {
        r.forget();
        let mut skip = converge::overridden_by_units(config, &done);
        skip.extend(converge::targets_replaced_later(config, &done));
        let left = planner.plan(Mode::Plan, false, &skip)?;
        if let Some((a, _)) = left.iter().find(|(l, _)| !converge::displaced(&done, l)) {
            let message = format!(
                "not in the desired state after apply: would still {}",
                a.text
            );
            return Err(StageError::new(
                StageName::Files,
                Some(a.entry.clone()),
                message,
            ));
        }
    }
    Ok(done.into_iter().map(|(p, _)| p).collect())
}

/// What comes before the first change: whether this is the root's first run, the refusals
/// checked, an interrupted run's leftovers cleared and the in-progress mark set.
fn prepare(config: &Config, r: &Root, root: &Path, mode: Mode) -> Result<bool, StageError> {
    // Upstream's files stage meets existing files as it finds them on every run; flint does
    // so on the first run, and leaves what is already as desired on later runs (the result
    // record tells which). The check after apply plans as a later run.
    let mark = record::etc_file(root, record::IN_PROGRESS);
    // Upstream's run ends by reading the record of an earlier run into its own, and fails
    // on one it cannot read: flint fails on it before touching anything.
    let previous = record::previous_record(root)
        .map_err(|message| StageError::new(StageName::Files, None, message))?;
    let interrupted = mark.as_deref().is_some_and(record::is_mark);
    let first_run = previous.is_none() && !interrupted;
    // Nothing is removed across a mount point: refused before anything is done.
    refusals::check_removals(config, r, first_run).map_err(fail)?;
    refusals::check_path_lengths(config, r).map_err(fail)?;
    // A run killed mid-write left its temporary files where it was writing.
    if mode.applies() && interrupted {
        let dirs = converge::written_dirs(config);
        crate::write::clear_leftovers(r, dirs.iter().map(String::as_str));
    }
    // A run that fails half-way leaves this behind: the next run finishes the job rather
    // than failing on what the first one wrote (removed with the result record written).
    if mode.applies()
        && first_run
        && let Some(mark) = mark
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Best effort, and never through a link standing at its name.
        let _ = mark.parent().map(std::fs::create_dir_all);
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&mark);
    }
    Ok(first_run)
}

/// Plans (or makes) the stage's changes: each with whether it replaced or removed what was
/// at its path.
struct Planner<'a> {
    config: &'a Config,
    fetched: &'a Fetched,
    r: &'a Root,
    /// Mount points the mount stage made, handed to the users whose homes hold them.
    notated: Vec<String>,
}

impl Planner<'_> {
    fn plan(
        &self,
        mode: Mode,
        first_run: bool,
        skip: &HashSet<JsonPath>,
    ) -> Result<Vec<(Planned, bool)>, StageError> {
        let (config, r) = (self.config, self.r);
        // Homes are asked for as upstream asks, on a first run; a later run, and the check
        // after this one, converge (a directory of the config may have replaced a home).
        let users = passwd::run(config, r, mode, first_run, &self.notated).map_err(fail)?;
        let mut out: Vec<(Planned, bool)> = (users.into_iter())
            .map(|c| {
                let kind = if c.keys.is_some() {
                    "write-ssh-keys"
                } else {
                    "passwd"
                };
                let p = Planned {
                    kind: kind.into(),
                    user: c.keys.as_ref().map(|(name, _)| name.clone()),
                    path: c.path.clone().unwrap_or_else(|| c.entry.to_string()),
                    entry: c.entry,
                    text: c.what,
                };
                (p, false)
            })
            .collect();
        let keys_made = keys_made(&out);
        // useradd may have moved a home directory.
        r.forget();
        // Names are looked up after users and groups exist (or would, when planning).
        let owners = owners::Owners::read(r).with_planned(config);
        let around = nodes::Around {
            skip,
            keys_made: &keys_made,
        };
        let mut actions =
            nodes::run(config, self.fetched, r, &owners, mode, first_run, around).map_err(fail)?;
        // What the entries make, which a plan of the units has not seen made.
        let mut made = HashMap::new();
        let mut links = HashMap::new();
        if !mode.applies() {
            nodes::note_made(&mut made, &actions, r);
            links = nodes::planned_links(&actions);
        }
        let units = units::run_units(config, r, mode, first_run, &made, &links);
        actions.extend(units.map_err(fail)?);
        out.extend(actions.into_iter().map(|a| {
            let replaces = a.replaces();
            let p = Planned {
                kind: a.kind().into(),
                text: a.describe(&owners),
                path: a.path,
                entry: a.entry,
                user: None,
            };
            (p, replaces)
        }));
        Ok(out)
    }
}

/// What the SSH keys step makes before the entries: the keys file, and `.ssh` and
/// `authorized_keys.d` on its way (true: a directory).
fn keys_made(users: &[(Planned, bool)]) -> HashMap<String, bool> {
    (users.iter())
        .filter(|(p, _)| p.kind == "write-ssh-keys" && p.path.starts_with('/'))
        .flat_map(|(p, _)| {
            let dirs = nodes::ancestors(&p.path)
                .filter(|a| a.ends_with("/.ssh") || a.ends_with("/.ssh/authorized_keys.d"))
                .map(|a| (a.to_string(), true));
            dirs.chain([(p.path.clone(), false)]).collect::<Vec<_>>()
        })
        .collect()
}
