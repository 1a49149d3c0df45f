# OpenShift: MachineConfig output (and --raw), metadata and openshift sections, what the
# MCO refuses, FIPS, the fcos sugar underneath; shapes taken from upstream's
# config/openshift/*/translate_test.go and validate_test.go.

CASES = []

META = """metadata:
  name: {name}
  labels:
    machineconfiguration.openshift.io/role: worker
"""


def case(name, bu, args="-p", files=None):
    CASES.append(dict(group="openshift", name=name, args=args, files=files, bu=bu))


def oc(version, body, name="99-worker-custom"):
    return f"variant: openshift\nversion: {version}\n" + META.format(name=name) + body


FULL = """openshift:
  kernel_arguments:
    - loglevel=7
    - "quoted: value"
  extensions: [usbguard, kerberos]
  fips: true
  kernel_type: realtime
storage:
  files:
    - path: /etc/hostname
      mode: 0644
      contents:
        inline: worker-1
    - path: /etc/motd
      contents:
        inline: |
          Welcome!
          It is: {{ today }}
    - path: /etc/trailing
      contents:
        inline: "spaces at the end   \\nand a tab\\there\\n"
    - path: /etc/long
      contents:
        inline: "one long line that keeps going and going and going well past the eightieth column of the output"
  luks:
    - name: data
      device: /dev/sdb
      key_file:
        inline: secret
    - name: named-cipher
      device: /dev/sdc
      options: [--cipher=aes-xts-plain64]
systemd:
  units:
    - name: hello.service
      enabled: true
      contents: |
        [Unit]
        Description=Hello: world

        [Service]
        ExecStart=/usr/bin/echo "hi"

        [Install]
        WantedBy=multi-user.target
passwd:
  users:
    - name: core
      ssh_authorized_keys:
        - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK core@example
"""

for v in ["4.8.0", "4.9.0", "4.10.0", "4.11.0", "4.12.0", "4.13.0", "4.14.0", "4.15.0",
          "4.16.0", "4.17.0", "4.18.0", "4.19.0", "4.20.0", "4.21.0", "4.22.0",
          "4.23.0-experimental"]:
    tag = v.rsplit(".", 1)[0].replace(".", "_")
    case(f"{tag}-full", oc(v, FULL))
    case(f"{tag}-full-raw", oc(v, FULL), args="-p -r")

case("4_8-no-compression", oc("4.8.0", """storage:
  files:
    - path: /etc/big
      contents:
        inline: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    - path: /etc/user-compressed
      contents:
        source: data:;base64,H4sIAAAAAAAC/0tMBAIAwkxoZQIAAAA=
        compression: gzip
"""))
case("4_9-compressed-source-refused", oc("4.9.0", """storage:
  files:
    - path: /etc/user-compressed
      contents:
        source: data:;base64,H4sIAAAAAAAC/0tMBAIAwkxoZQIAAAA=
        compression: gzip
"""))
case("4_10-compression-allowed", oc("4.10.0", """storage:
  files:
    - path: /etc/big
      contents:
        inline: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
"""))

UNSUPPORTED = """storage:
  files:
    - path: /f
      append:
        - inline: z
    - path: /h
      contents:
        source: https://example.com/
      mode: 04755
    - path: /i
      contents:
        source: data:,z
        http_headers:
          - name: foo
            value: bar
  filesystems:
    - device: /dev/vda4
      format: btrfs
    - device: /dev/vda5
      format: none
  directories:
    - path: /d
  links:
    - path: /l
      target: /t
passwd:
  users:
    - name: core
      gecos: mercury delay line
      groups: [z]
      home_dir: /home/drum
      no_create_home: true
      no_log_init: true
      no_user_group: true
      password_hash: corned beef
      primary_group: wheel
      ssh_authorized_keys: [value]
      shell: /bin/tcsh
      should_exist: false
      system: true
      uid: 42
    - name: bovik
  groups:
    - name: mock
kernel_arguments:
  should_exist: [foo]
  should_not_exist: [bar]
"""
for v in ["4.8.0", "4.10.0", "4.12.0", "4.13.0", "4.14.0", "4.18.0", "4.19.0", "4.22.0",
          "4.23.0-experimental"]:
    tag = v.rsplit(".", 1)[0].replace(".", "_")
    case(f"{tag}-unsupported", oc(v, UNSUPPORTED))
    case(f"{tag}-unsupported-raw", oc(v, UNSUPPORTED), args="-p -r")

case("4_13-password-hash-allowed", oc("4.13.0", """passwd:
  users:
    - name: core
      password_hash: $y$j9T$abc
"""))
case("4_12-password-hash-refused", oc("4.12.0", """passwd:
  users:
    - name: core
      password_hash: $y$j9T$abc
"""))
case("4_8-metadata-missing", """variant: openshift
version: 4.8.0
storage:
  files:
    - path: /etc/x
""")
case("4_14-metadata-role-empty", """variant: openshift
version: 4.14.0
metadata:
  name: x
  labels:
    machineconfiguration.openshift.io/role: ""
    other: value
""")
case("4_14-kernel-type-bad", oc("4.14.0", """openshift:
  kernel_type: lowlatency
"""))
case("4_14-kernel-type-default", oc("4.14.0", """openshift:
  kernel_type: default
  fips: false
"""))
case("4_14-labels-quoting", """variant: openshift
version: 4.14.0
metadata:
  name: "yes"
  labels:
    machineconfiguration.openshift.io/role: master
    "on": "off"
    "123": "0x1F"
    date: "2001-12-14"
    colon: "a: b"
    hash: "# not a comment"
    dash: "- item"
    empty: ""
    tilde: "~"
    star: "*alias"
    unicode: "héllo wörld"
    emoji: "rocket 🚀"
    a10: ten
    a9: nine
    A: upper
    _under: score
    time: "1:20"
""")
case("4_14-numbers-as-go-floats", oc("4.14.0", """storage:
  disks:
    - device: /dev/sdb
      partitions:
        - number: 1
          label: big
          size_mib: 1000000
          start_mib: 123456
        - number: 2
          label: bigger
          size_mib: 9007199254740993
  files:
    - path: /etc/x
      mode: 0644
"""))
case("4_14-strings-that-need-quotes", oc("4.14.0", """storage:
  files:
    - path: /etc/true
      contents:
        inline: "true"
    - path: "/etc/with: colon"
      contents:
        inline: "null"
    - path: /etc/leading space
      contents:
        inline: " leading"
    - path: /etc/quote
      contents:
        inline: "it's \\"quoted\\""
    - path: /etc/crlf
      contents:
        inline: "dos\\r\\nline\\r\\n"
    - path: /etc/only-newlines
      contents:
        inline: "\\n\\n"
    - path: /etc/keep
      contents:
        inline: "two trailing\\n\\n"
    - path: /etc/leading-newline
      contents:
        inline: "\\nfirst line empty\\n"
systemd:
  units:
    - name: "a b.service"
      contents: "[Unit]\\nDescription= spaced \\n"
    - name: tab.service
      contents: "[Service]\\n\\tExecStart=/bin/true\\n"
    - name: unicode.service
      contents: "[Unit]\\nDescription=caf\\u00e9 \\u2028 sep\\n"
"""))
case("4_14-boot-device-and-grub", oc("4.14.0", """boot_device:
  layout: x86_64
  luks:
    tpm2: true
    discard: true
  mirror:
    devices: [/dev/sda, /dev/sdb]
grub:
  users:
    - name: root
      password_hash: grub.pbkdf2.sha512.10000.874A958E526409
openshift:
  fips: true
"""))
case("4_13-boot-device-fips", oc("4.13.0", """boot_device:
  luks:
    tang:
      - url: https://tang.example.com
        thumbprint: t
openshift:
  fips: true
storage:
  luks:
    - name: short-c
      device: /dev/sdc
      options: [-c, aes-cbc-essiv:sha256]
"""))
case("4_13-grub-unused", oc("4.13.0", """grub:
  users:
    - name: root
      password_hash: x
"""))
case("4_14-tree-with-links-refused", oc("4.14.0", """storage:
  trees:
    - local: tree
"""), args="-p -d files", files={"tree/etc/a": "a\n", "tree/etc/l": ("link", "a")})
case("4_14-mount-units", oc("4.14.0", """storage:
  filesystems:
    - device: /dev/disk/by-label/var
      format: xfs
      path: /var
      with_mount_unit: true
"""))
case("4_14-yaml-compact-flag-ignored", oc("4.14.0", """storage:
  files:
    - path: /etc/x
      contents:
        inline: x
"""), args="")
case("4_15-check-only", oc("4.15.0", """storage:
  files:
    - path: /etc/x
"""), args="-c")
case("4_16-strict-warning", oc("4.16.0", """systemd:
  units:
    - name: a.service
      enabled: true
      contents: "[Service]\\nExecStart=/bin/true\\n"
"""), args="-p -s")
case("4_17-unknown-openshift-key", oc("4.17.0", """openshift:
  kernel_arguments: [a]
  kernel_argument: [b]
"""))
case("4_8-rhcos-removed", """variant: rhcos
version: 0.1.0
""")
case("4_99-no-translator", """variant: openshift
version: 4.99.0
""")
