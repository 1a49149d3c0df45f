"""Deliberate differences between flint and the reference tools: each one a predicate over a
divergence (tool, case, reference result, flint result) and the reason it stays. Mirrored in
docs/guide/differences.md. A divergence that matches none of these is a bug to fix (or, for
butane and the validator, to write down in the divergence notes).

Results are (exit code, stdout, stderr); for the files stage stdout is the tree's manifest.
"""


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


RULES = {
    "butane": [],
    "validate": [("Go decoder messages not copied", _go_type_error_text),
                 ("upstream's random order of one object's unused keys", _random_key_order)],
    "files": [],
    "storage": [("wipeTable keeps a table that already matches (partition GUIDs kept)", _kept_table)],
}
