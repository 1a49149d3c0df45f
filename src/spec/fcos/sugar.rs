//! Merging what sugar generates into the translated config, as upstream does: the
//! generated config is the parent, the user's the child (Ignition's merge rules), and the
//! path map follows every entry to its new place so that findings still point at what the
//! user wrote, or at the sugar that generated an entry.

use crate::ignition::types as ig;
use crate::spec::jpath;
use crate::spec::pathmap::PathMap;
use crate::tree::JsonPath;

/// Where each generated entry came from: (path in the generated config, source path,
/// whether everything below comes from that source itself rather than from below it).
pub type Origins = Vec<(JsonPath, JsonPath, bool)>;

type KeyedList<'a> = (&'a str, Vec<String>, Vec<String>, Vec<String>);

/// Where the entries of one list end up: for each output entry, the parent and the child
/// entry it came from.
fn placement(
    parent: &[String],
    child: &[String],
    removed: &[String],
) -> Vec<(Option<usize>, Option<usize>)> {
    let mut taken = vec![false; child.len()];
    let mut out = Vec::with_capacity(parent.len() + child.len());
    for (p, key) in parent.iter().enumerate() {
        if let Some(j) = (0..child.len()).find(|&j| !taken[j] && child[j] == *key) {
            taken[j] = true;
            out.push((Some(p), Some(j)));
        } else if !removed.contains(key) {
            out.push((Some(p), None));
        }
    }
    out.extend(
        (0..child.len())
            .filter(|&j| !taken[j])
            .map(|j| (None, Some(j))),
    );
    out
}

fn partition_key(p: &ig::Partition) -> String {
    if p.number != 0 {
        format!("number:{}", p.number)
    } else {
        p.label
            .as_ref()
            .map(|l| format!("label:{l}"))
            .unwrap_or_default()
    }
}

/// Follows one list through the merge: renumbers the user's entries in the path map and
/// maps generated entries (not merged with a user's) to their origin.
fn follow(
    map: &mut PathMap,
    list: &JsonPath,
    places: &[(Option<usize>, Option<usize>)],
    origins: &Origins,
) {
    let moves: Vec<(usize, usize)> = places
        .iter()
        .enumerate()
        .filter_map(|(k, (_, c))| c.map(|j| (j, k)))
        .collect();
    map.reindex(list, &moves);
    let depth = list.segs().len();
    for (k, (p, c)) in places.iter().enumerate() {
        let (Some(p), None) = (p, c) else { continue };
        let generated = list.index(*p);
        for (from, to, exact) in origins {
            if from.segs().starts_with(generated.segs()) {
                let mut at = list.index(k);
                for s in &from.segs()[depth + 1..] {
                    at.push(s.clone());
                }
                if *exact {
                    map.add_exact(at, to.clone());
                } else {
                    map.add(at, to.clone());
                }
            }
        }
    }
}

/// `rendered` merged under `cfg` (the user's values win), with the path map kept right.
pub fn merge(rendered: ig::Config, origins: &Origins, cfg: &mut ig::Config, map: &mut PathMap) {
    let st = jpath(&["storage"]);
    let (ps, cs) = (&rendered.storage, &cfg.storage);
    let paths = |v: &mut dyn Iterator<Item = &String>| v.cloned().collect::<Vec<String>>();
    let (cf, cd, cl) = (
        paths(&mut cs.files.iter().map(|f| &f.path)),
        paths(&mut cs.directories.iter().map(|d| &d.path)),
        paths(&mut cs.links.iter().map(|l| &l.path)),
    );
    // Each list: its name, the generated keys, the user's, and the keys the user's other
    // lists take away (files, directories and links share paths).
    let lists: Vec<KeyedList> = vec![
        (
            "directories",
            paths(&mut ps.directories.iter().map(|d| &d.path)),
            cd.clone(),
            [cf.clone(), cl.clone()].concat(),
        ),
        (
            "disks",
            ps.disks.iter().map(|d| d.device.clone()).collect(),
            cs.disks.iter().map(|d| d.device.clone()).collect(),
            Vec::new(),
        ),
        (
            "files",
            paths(&mut ps.files.iter().map(|f| &f.path)),
            cf.clone(),
            [cd.clone(), cl.clone()].concat(),
        ),
        (
            "filesystems",
            ps.filesystems.iter().map(|f| f.device.clone()).collect(),
            cs.filesystems.iter().map(|f| f.device.clone()).collect(),
            Vec::new(),
        ),
        (
            "links",
            paths(&mut ps.links.iter().map(|l| &l.path)),
            cl.clone(),
            [cf, cd].concat(),
        ),
        (
            "luks",
            ps.luks.iter().map(|l| l.name.clone()).collect(),
            cs.luks.iter().map(|l| l.name.clone()).collect(),
            Vec::new(),
        ),
        (
            "raid",
            ps.raid.iter().map(|r| r.name.clone()).collect(),
            cs.raid.iter().map(|r| r.name.clone()).collect(),
            Vec::new(),
        ),
    ];
    for (name, parent, child, removed) in &lists {
        let places = placement(parent, child, removed);
        let list = st.key(*name);
        follow(map, &list, &places, origins);
        if *name != "disks" {
            continue;
        }
        // The partitions of a user's disk merged with a generated one move as well.
        for (k, (p, c)) in places.iter().enumerate() {
            let (Some(p), Some(j)) = (p, c) else { continue };
            let pp: Vec<String> = ps.disks[*p].partitions.iter().map(partition_key).collect();
            let cp: Vec<String> = cs.disks[*j].partitions.iter().map(partition_key).collect();
            let places = placement(&pp, &cp, &[]);
            let generated_disk = st.key("disks").index(*p).key("partitions");
            let shifted: Origins = origins
                .iter()
                .filter(|(from, _, _)| from.segs().starts_with(generated_disk.segs()))
                .map(|(from, to, exact)| {
                    let mut at = st.key("disks").index(k).key("partitions");
                    for s in &from.segs()[generated_disk.segs().len()..] {
                        at.push(s.clone());
                    }
                    (at, to.clone(), *exact)
                })
                .collect();
            follow(
                map,
                &st.key("disks").index(k).key("partitions"),
                &places,
                &shifted,
            );
        }
    }
    let user = std::mem::take(cfg);
    *cfg = crate::ignition::merge::merge(rendered, user);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_like_ignition_merges() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            placement(&s(&["a", "b"]), &s(&["c", "a"]), &[]),
            vec![(Some(0), Some(1)), (Some(1), None), (None, Some(0))]
        );
        assert_eq!(
            placement(&s(&["a", "b"]), &s(&["c"]), &s(&["a"])),
            vec![(Some(1), None), (None, Some(0))]
        );
    }
}
