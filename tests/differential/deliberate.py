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


RULES = {
    "butane": [],
    "validate": [],
    "files": [],
    "storage": [],
}
