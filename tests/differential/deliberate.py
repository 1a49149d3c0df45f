"""Deliberate differences between flint and the reference tools: each one a predicate over a
divergence (tool, case, reference result, flint result) and the reason it stays. Mirrored in
docs/guide/differences.md. A divergence that matches none of these is a bug to fix (or, for
butane and the validator, to write down in the divergence notes).

Results are (exit code, stdout, stderr); for the files stage stdout is the tree's manifest.
"""
import re


def classify(tool, case, ref, got):
    for name, applies in RULES.get(tool, []):
        try:
            if applies(case, ref, got):
                return name
        except Exception:
            pass
    return None


def _kept_table(case, ref, got):
    """wipeTable on a table that already is what wiping and creating would give: flint keeps
    it (a re-run changes nothing), upstream zaps it and draws new partition GUIDs. The layouts
    agree once partition GUIDs are left out."""
    import json
    import re
    if not any(d.get("wipeTable") for d in case["storage"].get("disks", [])):
        return False
    strip = lambda b: re.sub(r'"uuid": "[^"]*"', '"uuid": "-"', b.decode())
    return ref[0] == got[0] == 0 and strip(ref[1]) == strip(got[1])


def _go_type_error_text(case, ref, got):
    """Go's decoder messages (struct names) are not copied: flint names the JSON path and
    the JSON type wanted, at upstream's position."""
    import re
    pos = lambda b: re.findall(rb"^error at (?:\$[^,]*, )?(line \d+ col \d+): ", b, re.M)
    return ref[0] == got[0] and b"json: cannot unmarshal" in ref[1] and \
        sorted(pos(ref[1])) == sorted(pos(got[1])) and \
        len(ref[1].splitlines()) == len(got[1].splitlines())


def _random_key_order(case, ref, got):
    """Upstream reports one object's unused keys in Go's map order, which changes from run to
    run; its report is trimmed at the end, so a key ending in white space keeps it unless its
    line comes last. The lines agree once trailing white space is set aside."""
    import re
    lines = lambda b: sorted(l.rstrip() for l in b.decode("utf-8", "replace").splitlines())
    if not (ref[0] == got[0] and lines(ref[1]) == lines(got[1]) and lines(ref[2]) == lines(got[2])):
        return False
    # Only where the last lines of both reports are unused keys of one object.
    parent = lambda l: re.match(r"^warning at (\$.*)\.[^.]*, line \d+ col \d+: unused key ", l)
    last = [b.decode("utf-8", "replace").rstrip("\n").splitlines()[-1:] for b in (ref[1], got[1])]
    found = [parent(l[0]) if l else None for l in last]
    return all(found) and found[0].group(1) == found[1].group(1)


def _strip_reports(b):
    """stderr without the snippet reports (a header line, then its `-->` and `|` lines)."""
    import re
    text = b.decode("utf-8", "replace")
    text = re.sub(r"(?m)^(?:error|warning|info)(?:\[[^\n]*\])?:\n(?:(?: *-->| *\d* *\|).*\n)*\n?", "", text)
    # A position past the last line has no snippet, and --raw-errors asks for none: the
    # report is one line.
    return re.sub(r"(?m)^(?:error|warning|info)(?: at \$[^,\n]*,)? (?:at )?line \d+ col \d+: .*\n", "", text)


def _locations(text):
    """What the corpora's checker wants a report to name (conformance/butane/check.sh)."""
    import re
    locs = set()
    for m in re.finditer(r"^(?:error|warning|info)\[(\$[^\]]*)\]", text, re.M):
        locs.add(("path", m.group(1)))
    for m in re.finditer(r" at (\$\.[^\s,:]+)", text):
        locs.add(("path", m.group(1)))
    for m in re.finditer(r"--> .*?:(\d+):(\d+)\s*$", text, re.M):
        locs.add(("pos", m.group(1), m.group(2)))
    for m in re.finditer(r"line (\d+) col (\d+)", text):
        locs.add(("pos", m.group(1), m.group(2)))
    for m in re.finditer(r"\bline (\d+):", text):
        locs.add(("line", m.group(1)))
    return locs


def _names_every_location(ref, got):
    want = _locations(ref[2].decode("utf-8", "replace"))
    have = _locations(got[2].decode("utf-8", "replace"))
    lines = {l[1] for l in have if l[0] in ("line", "pos")}
    return all(l in have or (l[0] == "line" and l[1] in lines) for l in want)


def _yaml_error_snippets(case, ref, got):
    """A YAML syntax or type error is shown with a snippet before upstream's own lines. The
    exit code, output, positions and upstream's lines are the same."""
    from difftest import norm_butane_stdout as norm
    return ref[0] == got[0] and norm(ref[1]) == norm(got[1]) and \
        _strip_reports(ref[2]) == _strip_reports(got[2]) and _names_every_location(ref, got)


def _embedded_configs_checked(case, ref, got):
    """An Ignition config given as `local:` is validated by its own version's rules, each
    problem shown at the `local` key with its place inside; upstream embeds it unchecked."""
    err = got[2].decode("utf-8", "replace")
    return got[0] == 1 and ref[0] == 0 and any(k in err for k in (".local]:", ".local:"))


def _alias_limit(case, ref, got):
    """YAML aliases expanding past 1,000,000 nodes are refused (docs/guide/limits.md);
    go-yaml expands them (and may run out of memory)."""
    return got[0] == 1 and b"nodes after expanding aliases" in got[2] and \
        b"nodes after expanding aliases" not in ref[2]


def _oem_sources(case, ref, got):
    """With `variant: flatcar`, resources may be `oem://` URLs, which Flatcar's Ignition
    reads from the OEM partition; upstream refuses the scheme (and reports it among any
    other problems, which flint then reports without it)."""
    src = case["input"]
    return b"flatcar" in src and b"oem://" in src.lower() and ref[0] == 1 and \
        b"invalid url scheme" in ref[2]


def _fragments_and_debug(case, ref, got):
    """Butane fragments (a `local:` Butane config under merge/replace) are translated at
    build time, and `-D` lists flint's own record of where the output came from."""
    return case["name"].startswith("translate-") and ref[0] == got[0] == 0 and (
        b"--debug" in b" ".join(a.encode() for a in case.get("args", [])) or
        "-D" in case.get("args", []) or "fragment" in case["name"])


def _write_out_of_root(case, ref, got):
    """Nothing is written through a link out of the root. Upstream writes where the link
    leads on the machine it runs on; the campaign's host is read-only, so there it fails with
    "read-only file system" where flint writes nothing and succeeds."""
    return ref[0] != 0 and got[0] == 0 and b"read-only file system" in ref[2]


def _duplicate_guid(case, ref, got):
    """A partition made with another partition's GUID is refused (GUIDs unique on a disk);
    upstream's sgdisk writes the duplicate."""
    return ref[0] == 0 and got[0] != 0 and b"a disk's partition GUIDs must be unique" in got[2]


def _newer_system_dirs(case, ref, got):
    """flint reads user.ign and base.d from /run/ignition and /etc/ignition as well as
    /usr/lib/ignition (IGNITION_SYSTEM_RUNTIME_CONFIG_DIR, IGNITION_SYSTEM_LOCAL_CONFIG_DIR),
    as upstream does since after v2.26; the reference reads only the last."""
    system = (case.get("extra") or {}).get("system") or {}
    return any(k in system for k in ("local", "runtime"))


def _config_device_cmdline(case, ref, got):
    """flint takes the config from a labelled device named by ignition.config.device and
    ignition.config.path on the kernel command line (upstream after v2.26); the reference
    ignores both."""
    cmdline = (case.get("extra") or {}).get("cmdline") or ""
    return "ignition.config.device" in cmdline or "ignition.config.path" in cmdline


RULES = {
    "butane": [("snippets before YAML errors", _yaml_error_snippets),
               ("local Ignition configs checked", _embedded_configs_checked),
               ("oem:// sources for Flatcar", _oem_sources),
               ("Butane fragments, -D's translation set", _fragments_and_debug),
               ("YAML alias expansion limit", _alias_limit)],
    "validate": [("Go decoder messages not copied", _go_type_error_text),
                 ("upstream's random order of one object's unused keys", _random_key_order)],
    "files": [("nothing written through a link out of the root", _write_out_of_root),
              ("system config directories /run/ignition and /etc/ignition read", _newer_system_dirs),
              ("ignition.config.device and .path on the kernel command line", _config_device_cmdline)],
    "storage": [("wipeTable keeps a table that already matches (partition GUIDs kept)", _kept_table),
                ("a partition GUID used twice on a disk is refused", _duplicate_guid)],
}
