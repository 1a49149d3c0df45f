# go-yaml edge cases: block scalars at the end of the file (with and without a final line
# break, with trailing blank lines and blanks), chomping and indentation indicators, folding,
# tabs, anchors and aliases across documents, line endings, tags.

CASES = []

HEAD = "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - path: /etc/f\n      contents:\n        inline: "


def case(name, body, args="-p"):
    CASES.append(dict(group="yaml", name=name, args=args, files=None, bu=body))


n = 0
for style in ["|", ">"]:
    for chomp in ["", "-", "+"]:
        for ending, tag in [("", "no-newline"), ("\n", "newline"), ("\n\n\n", "blank-lines"),
                            ("\n          ", "trailing-blanks"), ("\n   \n\t\n", "blank-and-tab-lines")]:
            header = style + chomp
            body = HEAD + header + "\n          first line\n          second: line\n\n            indented\n          last" + ending
            kind = "literal" if style == "|" else "folded"
            case(f"eof-{kind}{chomp or '-clip'}-{tag}".replace("--", "-"), body)

case("eof-empty-block-scalar", HEAD + "|")
case("eof-empty-block-scalar-keep", HEAD + "|+\n\n\n")
case("eof-only-blank-lines", HEAD + ">\n\n  \n")
case("indent-indicator-2", HEAD + "|2\n            two extra\n          base")
case("indent-indicator-keep-order", HEAD + "|+1\n           x\n\n")
case("indent-indicator-strip-order", HEAD + ">-2\n            a\n            b\n")
case("indent-indicator-zero", HEAD + "|0\n          x\n")
case("header-comment", HEAD + "| # a comment\n          x\n")
case("header-garbage", HEAD + "|x\n          x\n")
case("folded-more-indented", HEAD + ">\n          a\n          b\n\n          c\n            d\n          e\n            f\n\n          g\n")
case("folded-leading-blank-lines", HEAD + ">\n\n\n          a\n          b\n")
case("tab-in-block-indentation", HEAD + "|\n\tx\n")
case("tab-after-indentation", HEAD + "|\n          a\tb\n          \tc\n")
case("tab-in-blank-line", HEAD + "|\n          a\n\t\n          b\n")
case("tab-indented-mapping", "variant: fcos\nversion: 1.5.0\nstorage:\n\tfiles: []\n")
case("tab-after-value", "variant: fcos\nversion: 1.5.0\t\nstorage:\t\n  files: []\n")
case("block-then-next-key", HEAD + "|\n          a\n\n\n    - path: /etc/g\n      contents:\n        inline: >-\n          b\n\n")
case("block-in-sequence", "variant: fcos\nversion: 1.5.0\nkernel_arguments:\n  should_exist:\n    - |\n      multi\n      line\n    - >\n      folded\n      arg\n")
case("block-top-level-key", "variant: fcos\nversion: 1.5.0\nsystemd:\n  units:\n    - name: a.service\n      contents: |\n        [Service]\n        ExecStart=/bin/true\n\n        [Install]\n        WantedBy=multi-user.target")
case("crlf-line-endings", (HEAD + "|\n          a\n          b\n").replace("\n", "\r\n"))
case("crlf-no-final-newline", (HEAD + ">\n          a\n          b").replace("\n", "\r\n"))
case("byte-order-mark", "\ufeff" + HEAD + "plain\n")
case("binary-tag", HEAD + "!!binary aGVsbG8gd29ybGQ=\n")
case("str-tag-number", HEAD + "!!str 0644\n")
case("two-documents", HEAD + "first\n---\nvariant: fcos\nversion: 1.0.0\n")
case("document-end-marker", HEAD + "first\n...\n---\nbroken: [\n")
case("anchor-in-first-alias-in-second", "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - &f\n      path: /etc/a\n---\nstorage:\n  files:\n    - *f\n")
case("anchor-used-in-same-document", "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - path: /etc/a\n      contents: &c\n        inline: shared\n    - path: /etc/b\n      contents: *c\n")
case("alias-before-anchor", "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - path: /etc/a\n      contents: *c\n    - path: /etc/b\n      contents: &c\n        inline: x\n")
case("anchor-defined-only-in-second-document", "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - path: /etc/a\n      contents: *c\n---\nx: &c\n  inline: y\n")
case("anchored-block-scalar", HEAD + "&b |\n          anchored\n    - path: /etc/g\n      contents:\n        inline: *b\n")
case("quoted-multiline", HEAD + "\"first\n\n          second\\\n          third\"\n")
case("single-quoted-multiline", HEAD + "'it''s\n          continued'\n")
case("plain-multiline", HEAD + "plain\n          continued\n\n          after blank\n")
case("comment-lines-in-block", HEAD + "|\n          # kept as text\n          x\n# a real comment\n")
case("flow-mapping", "{variant: fcos, version: 1.5.0, storage: {files: [{path: /etc/a, contents: {inline: \"x\"}}]}}\n")
case("empty-document", "")
case("only-comments", "# nothing here\n")
case("only-document-marker", "---\n")

# Roots that are not mappings (go-yaml names the tag it resolved), malformed UTF-8 (its
# reader's words), and more shapes compared with the reference.
for tag, body in [("seq", "[1, 2]\n"), ("int", "5\n"), ("bool", "true\n"), ("float", "1.5\n"),
                  ("hex", "0x1F\n"), ("quoted", '"quoted"\n'), ("long", "hello world this is long\n")]:
    case(f"root-{tag}", body)
for tag, bad in [("leading", b"\xff"), ("incomplete", b"\xc3"), ("trailing", b"\xc3\x28"),
                 ("overlong", b"\xc0\x80"), ("surrogate", b"\xed\xa0\x80"),
                 ("beyond", b"\xf4\x90\x80\x80")]:
    case(f"utf8-{tag}", b"variant: flatcar\nversion: 1.1.0\nx: a" + bad + b"\n")
FL = "variant: flatcar\nversion: 1.1.0\n"
case("flow-map-multiline", FL + "storage: {files: [{path: /a,\n  mode: 0644}]}\n")
case("flow-trailing-comma", FL + "storage: {files: [{path: /a},]}\n")
case("dquote-escapes", FL + 'storage:\n  files:\n    - path: "/a\\x41\\u00e9\\N"\n')
case("dquote-bad-escape", FL + 'storage:\n  files:\n    - path: "/a\\q"\n')
case("squote-multiline", FL + "storage:\n  files:\n    - path: '/a\n        b'\n")
case("plain-multiline-under-key", FL + "storage:\n  files:\n    - path: /a\n        b\n")
case("complex-key", FL + "? storage\n: files: []\n")
case("null-list-item-unused", FL + "storage:\n  files:\n    - ~\n    - path: /a\n      bogus: 1\n")
case("dup-nested-unused", FL + "bogus:\n  a: 1\n  a: 2\n")
case("anchor-redefined", FL + "a: &x 1\nb: &x 2\nc: *x\n")
case("cr-only-line-ends", (FL + "storage:\n  files: []\n").replace("\n", "\r"))
case("nel-in-plain", FL + "storage:\n  files:\n    - path: /a\u0085b\n")
