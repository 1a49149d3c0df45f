//! Merging what sugar generates into the translated config, as upstream does: the
//! generated config is the parent, the user's the child (Ignition's merge rules), and the
//! path map follows every entry to its new place so that findings still point at what the
//! user wrote, or at the sugar that generated an entry.

use crate::jpath;
use crate::pathmap::PathMap;
use flint_go::tree::JsonPath;
use flint_ignition::merge::{Keyed, Siblings, node_siblings, placement, strs};
use flint_ignition::types as ig;

/// Where each generated entry came from: (path in the generated config, source path,
/// whether everything below comes from that source itself rather than from below it).
pub(crate) type Origins = Vec<(JsonPath, JsonPath, bool)>;

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
pub(crate) fn merge(
    rendered: ig::Config,
    origins: &Origins,
    cfg: &mut ig::Config,
    map: &mut PathMap,
) {
    let st = jpath(&["storage"]);
    let (ps, cs) = (&rendered.storage, &cfg.storage);
    let (cd, cf, cl): (Vec<&str>, Vec<&str>, Vec<&str>) = (
        cs.directories.iter().map(|d| d.path.as_str()).collect(),
        cs.files.iter().map(|f| f.path.as_str()).collect(),
        cs.links.iter().map(|l| l.path.as_str()).collect(),
    );
    let nodes = [&cd[..], &cf[..], &cl[..]];
    let none = Siblings::default;
    // Each list: its name, the generated keys, the user's, and the user's lists that share
    // its identity (files, directories and links share paths).
    let lists: Vec<(&str, Vec<&str>, Vec<&str>, Siblings)> = vec![
        (
            "directories",
            ps.directories.iter().map(|d| d.path.as_str()).collect(),
            cd.clone(),
            node_siblings(nodes, 0),
        ),
        (
            "disks",
            ps.disks.iter().map(|d| d.device.as_str()).collect(),
            cs.disks.iter().map(|d| d.device.as_str()).collect(),
            none(),
        ),
        (
            "files",
            ps.files.iter().map(|f| f.path.as_str()).collect(),
            cf.clone(),
            node_siblings(nodes, 1),
        ),
        (
            "filesystems",
            ps.filesystems.iter().map(|f| f.device.as_str()).collect(),
            cs.filesystems.iter().map(|f| f.device.as_str()).collect(),
            none(),
        ),
        (
            "links",
            ps.links.iter().map(|l| l.path.as_str()).collect(),
            cl.clone(),
            node_siblings(nodes, 2),
        ),
        (
            "luks",
            ps.luks.iter().map(|l| l.name.as_str()).collect(),
            cs.luks.iter().map(|l| l.name.as_str()).collect(),
            none(),
        ),
        (
            "raid",
            ps.raid.iter().map(|r| r.name.as_str()).collect(),
            cs.raid.iter().map(|r| r.name.as_str()).collect(),
            none(),
        ),
    ];
    for (name, parent, child, siblings) in &lists {
        let places = placement(parent, child, siblings);
        let list = st.key(*name);
        follow(map, &list, &places, origins);
        if *name != "disks" {
            continue;
        }
        // The partitions of a user's disk merged with a generated one move as well.
        for (k, (p, c)) in places.iter().enumerate() {
            let (Some(p), Some(j)) = (p, c) else { continue };
            let pp: Vec<String> = ps.disks[*p].partitions.iter().map(Keyed::key).collect();
            let cp: Vec<String> = cs.disks[*j].partitions.iter().map(Keyed::key).collect();
            let places = placement(&strs(&pp), &strs(&cp), &none());
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
    *cfg = flint_ignition::merge::merge(rendered, user);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_like_ignition_merges() {
        let none = Siblings::default();
        assert_eq!(
            placement(&["a", "b"], &["c", "a"], &none),
            vec![(Some(0), Some(1)), (Some(1), None), (None, Some(0))]
        );
        // The child's duplicates collapse into the parent's entry, the last one merged.
        assert_eq!(
            placement(&["a"], &["a", "b", "a"], &none),
            vec![(Some(0), Some(2)), (None, Some(1))]
        );
        let nodes: [&[&str]; 3] = [&["a"], &[], &[]];
        assert_eq!(
            placement(&["a", "b"], &["c"], &node_siblings(nodes, 1)),
            vec![(Some(1), None), (None, Some(0))]
        );
        // A later sibling takes the key even from the list's own entry of it.
        let nodes: [&[&str]; 3] = [&[], &["a"], &["a"]];
        assert_eq!(placement(&["a"], &["a"], &node_siblings(nodes, 1)), vec![]);
    }
}
