# The variant versions on Ignition 3.5.0, 3.6.0 and 3.7.0-experimental: fcos 1.6.0, 1.7.0,
# 1.8.0-experimental, flatcar 1.2.0-experimental, r4e 1.2.0-experimental, fiot
# 1.1.0-experimental, openshift 4.19.0-4.23.0-experimental. Shapes taken from upstream's
# base/v0_6..v0_8_exp and config/*/ translate_test.go and validate_test.go (CEX, tree modes
# and ownership, quadlets, special mode bits, the variants' refusals), and what a version
# does not have yet (reported as unused keys).

CASES = []


def case(group, name, bu, args="-p", files=None):
    CASES.append(dict(group=group, name=name, args=args, files=files, bu=bu))


def head(variant, version):
    return f"variant: {variant}\nversion: {version}\n"


OC_META = """metadata:
  name: 99-worker-new
  labels:
    machineconfiguration.openshift.io/role: worker
"""

TREE_FILES = {
    "tree/etc/app.conf": "key = value\n",
    "tree/bin/run": ("exec", "#!/bin/sh\necho run\n"),
    "tree/sub/dir/note": "note\n",
    "tree/link": ("link", "etc/app.conf"),
}

QUADLET = """  quadlets:
    - name: web.container
      rootful: true
      contents: |
        [Container]
        Image=quay.io/example/web:latest
        [Install]
        WantedBy=multi-user.target
    - name: cache.volume
      contents: |
        [Volume]
"""

# --- fcos 1.6.0 (base 0.6, Ignition 3.5.0)
F16 = head("fcos", "1.6.0")
case("fcos", "1_6-luks-cex", F16 + """storage:
  luks:
    - name: data
      device: /dev/dasdb
      cex:
        enabled: true
""")
case("fcos", "1_6-luks-cex-with-clevis", F16 + """storage:
  luks:
    - name: data
      device: /dev/dasdb
      cex:
        enabled: true
      clevis:
        tpm2: true
""")
case("fcos", "1_6-luks-cex-with-key-file", F16 + """storage:
  luks:
    - name: data
      device: /dev/dasdb
      key_file:
        inline: secret
      cex:
        enabled: true
""")
case("fcos", "1_6-boot-cex-no-layout", F16 + """boot_device:
  luks:
    device: /dev/dasda
    cex:
      enabled: true
""")
case("fcos", "1_6-boot-cex-with-tpm2", F16 + """boot_device:
  layout: s390x-eckd
  luks:
    device: /dev/dasda
    tpm2: true
    cex:
      enabled: true
""")
case("fcos", "1_6-boot-cex-zfcp-discard", F16 + """boot_device:
  layout: s390x-zfcp
  luks:
    device: /dev/sdb
    discard: true
    cex:
      enabled: true
""")
case("fcos", "1_6-partition-reused-by-label", F16 + """storage:
  disks:
    - device: /dev/vdb
      partitions:
        - label: data
          size_mib: 100
    - device: /dev/vdc
      wipe_table: true
      partitions:
        - label: scratch
""")
case("fcos", "1_6-mount-unit-outside-etc-var", F16 + """storage:
  filesystems:
    - device: /dev/vdb1
      path: /srv/data
      format: xfs
      with_mount_unit: true
    - device: /dev/vdc1
      path: /var/lib/data
      format: xfs
      with_mount_unit: true
""")
case("fcos", "1_6-special-mode-bits", F16 + """storage:
  files:
    - path: /usr/local/bin/tool
      mode: 04755
      contents:
        inline: tool
  directories:
    - path: /var/shared
      mode: 01777
""")
case("fcos", "1_6-tree-mode-unused", F16 + """storage:
  trees:
    - local: tree
      path: /opt
      file_mode: 0600
""", args="-p -d files", files=TREE_FILES)
case("fcos", "1_6-clevis-custom-and-grub", F16 + """storage:
  luks:
    - name: data
      device: /dev/vdb
      clevis:
        custom:
          pin: sss
          config: '{"t":1,"pins":{"tang":[{"url":"https://tang.example.com"}]}}'
          needs_network: true
grub:
  users:
    - name: root
      password_hash: grub.pbkdf2.sha512.10000.ABCD
""")

# --- fcos 1.7.0 (base 0.7, Ignition 3.6.0)
F17 = head("fcos", "1.7.0")
case("fcos", "1_7-tree-modes-and-owner", F17 + """storage:
  trees:
    - local: tree
      path: /opt/app
      file_mode: 0640
      dir_mode: 0750
      user:
        name: app
      group:
        id: 1000
""", args="-p -d files", files=TREE_FILES)
case("fcos", "1_7-tree-owner-only", F17 + """storage:
  trees:
    - local: tree
      path: /opt/app
      user:
        id: 500
""", args="-p -d files", files=TREE_FILES)
case("fcos", "1_7-tree-override-file", F17 + """storage:
  trees:
    - local: tree
      path: /opt/app
      file_mode: 0600
  files:
    - path: /opt/app/etc/app.conf
      mode: 0644
""", args="-p -d files", files=TREE_FILES)
case("fcos", "1_7-special-mode-bits", F17 + """storage:
  files:
    - path: /usr/local/bin/tool
      mode: 06755
      contents:
        inline: tool
""")
case("fcos", "1_7-quadlets-unused", F17 + "systemd:\n" + QUADLET)
case("fcos", "1_7-boot-mirror-luks", F17 + """boot_device:
  layout: aarch64
  luks:
    tpm2: true
    discard: true
  mirror:
    devices: [/dev/sda, /dev/sdb]
""")
case("fcos", "1_7-everyday", F17 + """passwd:
  users:
    - name: core
      ssh_authorized_keys: [ssh-ed25519 AAAA core]
systemd:
  units:
    - name: hello.service
      enabled: true
      contents: |
        [Service]
        ExecStart=/usr/bin/echo hi
        [Install]
        WantedBy=multi-user.target
storage:
  links:
    - path: /etc/localtime
      target: ../usr/share/zoneinfo/UTC
kernel_arguments:
  should_exist: [quiet]
""")
case("fcos", "1_7-ignition-3_6-merge", F17 + """ignition:
  config:
    merge:
      - inline: '{"ignition": {"version": "3.6.0"}}'
      - inline: '{"ignition": {"version": "3.7.0-experimental"}}'
""")

# --- fcos 1.8.0-experimental (base 0.8-experimental, Ignition 3.7.0-experimental)
F18 = head("fcos", "1.8.0-experimental")
case("fcos", "1_8-quadlets", F18 + "systemd:\n" + QUADLET)
case("fcos", "1_8-quadlet-bad-extension", F18 + """systemd:
  quadlets:
    - name: web.service
      contents: "[Service]"
""")
case("fcos", "1_8-quadlet-template", F18 + """systemd:
  quadlets:
    - name: web@.container
      rootful: true
      contents: |
        [Container]
        Image=quay.io/example/web:latest
    - name: web@1.container
      rootful: true
    - name: web@2.container
""")
case("fcos", "1_8-quadlet-instance-contents", F18 + """systemd:
  quadlets:
    - name: web@1.container
      contents: "[Container]"
""")
case("fcos", "1_8-quadlet-dropins-local", F18 + """systemd:
  quadlets:
    - name: db.container
      contents_local: db.container
      dropins:
        - name: 10-env.conf
          contents: |
            [Container]
            Environment=A=1
        - name: 20-local.conf
          contents_local: extra.conf
""", args="-p -d files", files={"db.container": "[Container]\nImage=db\n", "extra.conf": "[Container]\nEnvironment=B=2\n"})
case("fcos", "1_8-quadlet-both-contents", F18 + """systemd:
  quadlets:
    - name: db.container
      contents: x
      contents_local: db.container
""", args="-p -d files", files={"db.container": "[Container]\n"})
case("fcos", "1_8-quadlet-conflicts-with-file", F18 + """storage:
  files:
    - path: /etc/containers/systemd/web.container
      contents:
        inline: other
systemd:
  quadlets:
    - name: web.container
      rootful: true
      contents: "[Container]"
""")
case("fcos", "1_8-tree-modes-boot-cex", F18 + """boot_device:
  layout: s390x-eckd
  luks:
    device: /dev/dasda
    cex:
      enabled: true
storage:
  trees:
    - local: tree
      dir_mode: 0700
      file_mode: 0600
      group:
        name: wheel
""", args="-p -d files", files=TREE_FILES)

# --- flatcar 1.2.0-experimental (base 0.8-experimental, Ignition 3.7.0-experimental)
L12 = head("flatcar", "1.2.0-experimental")
case("flatcar", "1_2-clevis-allowed", L12 + """storage:
  luks:
    - name: data
      device: /dev/vdb
      clevis:
        tpm2: true
        tang:
          - url: https://tang.example.com
            thumbprint: abc
        threshold: 2
""")
case("flatcar", "1_2-cex-refused", L12 + """storage:
  luks:
    - name: data
      device: /dev/vdb
      cex:
        enabled: true
""")
case("flatcar", "1_2-quadlets", L12 + "systemd:\n" + QUADLET)
case("flatcar", "1_2-tree-modes", L12 + """storage:
  trees:
    - local: tree
      path: /opt/bin
      file_mode: 0755
      user:
        name: core
      group:
        name: core
""", args="-p -d files", files=TREE_FILES)
case("flatcar", "1_2-everyday", L12 + """passwd:
  users:
    - name: core
      ssh_authorized_keys: [ssh-ed25519 AAAA core]
storage:
  files:
    - path: /etc/flatcar/update.conf
      mode: 0420
      contents:
        inline: |
          REBOOT_STRATEGY=off
  filesystems:
    - device: /dev/disk/by-label/DATA
      format: ext4
      path: /var/data
      with_mount_unit: true
kernel_arguments:
  should_exist: [flatcar.autologin]
""")
case("flatcar", "1_2-boot-device-unused", L12 + """boot_device:
  luks:
    tpm2: true
grub:
  users:
    - name: root
      password_hash: x
""")
case("flatcar", "1_2-special-mode-bits", L12 + """storage:
  files:
    - path: /opt/bin/tool
      mode: 04755
      contents:
        inline: tool
""")
case("flatcar", "1_1-quadlets-unused", head("flatcar", "1.1.0") + "systemd:\n" + QUADLET)

# --- r4e 1.2.0-experimental and fiot 1.1.0-experimental
for group, version, tag in [("r4e", "1.2.0-experimental", "1_2"), ("fiot", "1.1.0-experimental", "1_1")]:
    H = head(group, version)
    case(group, f"{tag}-quadlets-and-tree", H + "systemd:\n" + QUADLET + """storage:
  trees:
    - local: tree
      path: /opt/app
      dir_mode: 0755
""", args="-p -d files", files=TREE_FILES)
    case(group, f"{tag}-storage-refused", H + """kernel_arguments:
  should_exist: [quiet]
storage:
  disks:
    - device: /dev/vdb
      wipe_table: true
  filesystems:
    - device: /dev/vdb1
      format: xfs
  luks:
    - name: data
      device: /dev/vdc
  raid:
    - name: md0
      level: raid1
      devices: [/dev/vdd, /dev/vde]
""")
    case(group, f"{tag}-everyday", H + """passwd:
  users:
    - name: admin
      groups: [wheel]
      ssh_authorized_keys: [ssh-ed25519 AAAA admin]
storage:
  files:
    - path: /etc/motd
      contents:
        inline: hello
      mode: 0644
""")

# --- openshift 4.19.0 - 4.23.0-experimental
def oc(version, body):
    return head("openshift", version) + OC_META + body


LUKS = """storage:
  luks:
    - name: data
      device: /dev/vdb
      clevis:
        tpm2: true
    - name: other
      device: /dev/vdc
      options: [--cipher, aes-xts-plain64]
      clevis:
        tpm2: true
openshift:
  fips: true
"""
case("openshift", "4_19-fips-luks", oc("4.19.0", LUKS))
case("openshift", "4_20-fips-luks", oc("4.20.0", LUKS))
case("openshift", "4_23-fips-luks", oc("4.23.0-experimental", LUKS), args="-p -r")
BOOT_CEX = """boot_device:
  layout: s390x-eckd
  luks:
    device: /dev/dasda
    cex:
      enabled: true
"""
case("openshift", "4_19-boot-cex-missing-karg", oc("4.19.0", BOOT_CEX))
case("openshift", "4_21-boot-cex-with-karg", oc("4.21.0", BOOT_CEX + """openshift:
  kernel_arguments: [rd.luks.key=/etc/luks/cex.key]
"""))
case("openshift", "4_22-root-luks-cex-missing-karg", oc("4.22.0", """storage:
  luks:
    - name: root
      device: /dev/dasda2
      cex:
        enabled: true
"""))
GRUB = """grub:
  users:
    - name: root
      password_hash: grub.pbkdf2.sha512.10000.ABCD
"""
case("openshift", "4_19-grub", oc("4.19.0", GRUB))
case("openshift", "4_23-grub-as-contents", oc("4.23.0-experimental", GRUB))
case("openshift", "4_23-grub-raw", oc("4.23.0-experimental", GRUB), args="-p -r")
case("openshift", "4_23-quadlets", oc("4.23.0-experimental", "systemd:\n" + QUADLET))
case("openshift", "4_20-partition-reused-by-label", oc("4.20.0", """storage:
  disks:
    - device: /dev/vdb
      partitions:
        - label: data
"""))
case("openshift", "4_21-mount-unit-outside-etc-var", oc("4.21.0", """storage:
  filesystems:
    - device: /dev/vdb1
      path: /srv
      format: xfs
      with_mount_unit: true
"""))
case("openshift", "4_22-tree-modes-unused", oc("4.22.0", """storage:
  trees:
    - local: tree
      file_mode: 0600
"""), args="-p -d files", files=TREE_FILES)
case("openshift", "4_24-no-translator", head("openshift", "4.24.0") + OC_META)
case("fcos", "1_9-no-translator", head("fcos", "1.9.0-experimental"))

# Edge cases of the same versions (each compared with the reference while writing them).
EDGE_FILES = {"tree/a/f": "x\n", "q.container": "y\n"}

case('fcos', 'edge-fcos16-cex-boot-tang', 'variant: fcos\nversion: 1.6.0\nboot_device:\n  layout: s390x-eckd\n  luks:\n    device: /dev/dasda\n    tang:\n      - url: http://t\n        thumbprint: x\n    cex:\n      enabled: true\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-fcos16-cex-mirror', 'variant: fcos\nversion: 1.6.0\nboot_device:\n  layout: s390x-virt\n  mirror:\n    devices: [/dev/a, /dev/b]\n  luks:\n    cex:\n      enabled: true\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-fcos16-cex-x86', 'variant: fcos\nversion: 1.6.0\nboot_device:\n  layout: x86_64\n  luks:\n    cex:\n      enabled: true\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-fcos16-clevis-custom-bad', 'variant: fcos\nversion: 1.6.0\nstorage:\n  luks:\n    - name: a\n      device: /dev/a\n      clevis:\n        custom:\n          pin: foo\n          config: bar\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-fcos16-eckd-nodevice', 'variant: fcos\nversion: 1.6.0\nboot_device:\n  layout: s390x-eckd\n  luks:\n    tpm2: true\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-fcos16-merge-35', 'variant: fcos\nversion: 1.6.0\nignition:\n  config:\n    merge:\n      - inline: \'{"ignition":{"version":"3.6.0"}}\'\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-fcos18-tree-override', 'variant: fcos\nversion: 1.8.0-experimental\nstorage:\n  trees:\n    - local: tree\n      path: /t\n      user:\n        name: u\n      file_mode: 0640\n  files:\n    - path: /t/a/f\n      user:\n        name: v\n  directories:\n    - path: /t/a\n      mode: 0700\n', args="-p -d files", files=EDGE_FILES)
case('fiot', 'edge-fiot11-tree-owner', 'variant: fiot\nversion: 1.1.0-experimental\nstorage:\n  trees:\n    - local: tree\n      group:\n        name: wheel\n  files:\n    - path: /a/f\n      mode: 0600\n', args="-p -d files", files=EDGE_FILES)
case('flatcar', 'edge-flatcar12-boot', 'variant: flatcar\nversion: 1.2.0-experimental\nboot_device:\n  luks:\n    cex:\n      enabled: true\n', args="-p -d files", files=EDGE_FILES)
case('flatcar', 'edge-flatcar12-cex-false', 'variant: flatcar\nversion: 1.2.0-experimental\nstorage:\n  luks:\n    - name: a\n      device: /dev/a\n      cex:\n        enabled: false\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-flatcar12-clevis-custom-36', 'variant: fcos\nversion: 1.7.0\nstorage:\n  luks:\n    - name: a\n      device: /dev/a\n      clevis:\n        custom:\n          pin: foo\n          config: bar\n', args="-p -d files", files=EDGE_FILES)
case('flatcar', 'edge-flatcar12-clevis-custom', 'variant: flatcar\nversion: 1.2.0-experimental\nstorage:\n  luks:\n    - name: a\n      device: /dev/a\n      clevis:\n        custom:\n          pin: foo\n          config: bar\n', args="-p -d files", files=EDGE_FILES)
case('openshift', 'edge-oc419-cex-luks-notroot', 'variant: openshift\nversion: 4.19.0\nmetadata:\n  name: x\n  labels:\n    machineconfiguration.openshift.io/role: worker\nstorage:\n  luks:\n    - name: data\n      device: /dev/a\n      cex:\n        enabled: true\n', args="-p -d files", files=EDGE_FILES)
case('openshift', 'edge-oc420-special', 'variant: openshift\nversion: 4.20.0\nmetadata:\n  name: x\n  labels:\n    machineconfiguration.openshift.io/role: worker\nstorage:\n  files:\n    - path: /etc/x\n      mode: 04755\n      contents:\n        inline: a\n', args="-p -d files", files=EDGE_FILES)
case('openshift', 'edge-oc423-grub-userfile', 'variant: openshift\nversion: 4.23.0-experimental\nmetadata:\n  name: x\n  labels:\n    machineconfiguration.openshift.io/role: worker\nstorage:\n  files:\n    - path: /boot/grub2/user.cfg\n      append:\n        - inline: x\ngrub:\n  users:\n    - name: root\n      password_hash: h\n', args="-p -d files", files=EDGE_FILES)
case('openshift', 'edge-oc423-tree', 'variant: openshift\nversion: 4.23.0-experimental\nmetadata:\n  name: x\n  labels:\n    machineconfiguration.openshift.io/role: worker\nstorage:\n  trees:\n    - local: tree\n      file_mode: 0600\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-quadlet-dropin-bad', 'variant: fcos\nversion: 1.8.0-experimental\nsystemd:\n  quadlets:\n    - name: a.kube\n      dropins:\n        - name: x.txt\n          contents: x\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-quadlet-dropin-noname', 'variant: fcos\nversion: 1.8.0-experimental\nsystemd:\n  quadlets:\n    - name: a.pod\n      dropins:\n        - contents: x\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-quadlet-dup-rootful', 'variant: fcos\nversion: 1.8.0-experimental\nsystemd:\n  quadlets:\n    - name: a.container\n      contents: x\n    - name: a.container\n      rootful: true\n      contents: y\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-quadlet-dup', 'variant: fcos\nversion: 1.8.0-experimental\nsystemd:\n  quadlets:\n    - name: a.container\n      contents: x\n    - name: a.container\n      contents: y\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-quadlet-empty', 'variant: fcos\nversion: 1.8.0-experimental\nsystemd:\n  quadlets:\n    - name: a.artifact\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-quadlet-local-missing', 'variant: fcos\nversion: 1.8.0-experimental\nsystemd:\n  quadlets:\n    - name: a.container\n      contents_local: nope\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-quadlet-local', 'variant: fcos\nversion: 1.8.0-experimental\nsystemd:\n  quadlets:\n    - name: a.container\n      contents_local: q.container\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-quadlet-no-name', 'variant: fcos\nversion: 1.8.0-experimental\nsystemd:\n  quadlets:\n    - contents: x\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-quadlet-path-name', 'variant: fcos\nversion: 1.8.0-experimental\nsystemd:\n  quadlets:\n    - name: ../x.container\n      contents: x\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-quadlet-template-only', 'variant: fcos\nversion: 1.8.0-experimental\nsystemd:\n  quadlets:\n    - name: a@.build\n    - name: a@x.build\n      dropins:\n        - name: z.conf\n          contents: q\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-quadlet-unit-collide', 'variant: fcos\nversion: 1.8.0-experimental\nstorage:\n  directories:\n    - path: /etc/containers/systemd/users/a.container\nsystemd:\n  quadlets:\n    - name: a.container\n      contents: x\n', args="-p -d files", files=EDGE_FILES)
case('r4e', 'edge-r4e12-boot', 'variant: r4e\nversion: 1.2.0-experimental\nboot_device:\n  luks:\n    tpm2: true\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-tree-mode-big', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      file_mode: 077777\n      dir_mode: 04755\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-tree-mode-special-35', 'variant: fcos\nversion: 1.6.0\nstorage:\n  files:\n    - path: /x\n      mode: 02755\n', args="-p -d files", files=EDGE_FILES)
case('flatcar', 'edge-tree-mode-special-36', 'variant: flatcar\nversion: 1.2.0-experimental\nstorage:\n  trees:\n    - local: tree\n      file_mode: 04755\n', args="-p -d files", files=EDGE_FILES)
case('fcos', 'edge-tree-user-both', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      user:\n        id: 1\n        name: a\n', args="-p -d files", files=EDGE_FILES)

# More edges: trees over overrides, the fcos 1.6 config-wide checks, OpenShift details.
EDGE2_FILES = {"tree/f": "a\n", "tree/sub/x": ("exec", "#!/bin/sh\n"), "tree/l": ("link", "f"), "empty": None}

case('fcos', 'edge2-c16-bootdisk', 'variant: fcos\nversion: 1.6.0\nstorage:\n  disks:\n    - device: /dev/disk/by-id/coreos-boot-disk\n      partitions:\n        - label: var\n          size_mib: 0\n', args='-p -d files', files=EDGE2_FILES)
case('fcos', 'edge2-c16-bootdisk-raw-strict', 'variant: fcos\nversion: 1.6.0\nstorage:\n  disks:\n    - device: /dev/disk/by-id/coreos-boot-disk\n      partitions:\n        - label: var\n          size_mib: 0\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('fcos', 'edge2-c16-mirror-dev', 'variant: fcos\nversion: 1.6.0\nboot_device:\n  mirror:\n    devices: [/dev/sda, /dev/sdb]\nstorage:\n  disks:\n    - device: /dev/sda\n      partitions:\n        - label: var-1\n', args='-p -d files', files=EDGE2_FILES)
case('fcos', 'edge2-c16-mirror-dev-raw-strict', 'variant: fcos\nversion: 1.6.0\nboot_device:\n  mirror:\n    devices: [/dev/sda, /dev/sdb]\nstorage:\n  disks:\n    - device: /dev/sda\n      partitions:\n        - label: var-1\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('fcos', 'edge2-c16-mount-etc', 'variant: fcos\nversion: 1.6.0\nstorage:\n  filesystems:\n    - device: /dev/a\n      path: /etc\n      format: xfs\n      with_mount_unit: true\n    - device: /dev/b\n      path: /etcetera\n      format: xfs\n      with_mount_unit: true\n    - device: /dev/c\n      path: /var/../srv\n      format: xfs\n      with_mount_unit: true\n', args='-p -d files', files=EDGE2_FILES)
case('fcos', 'edge2-c16-mount-etc-raw-strict', 'variant: fcos\nversion: 1.6.0\nstorage:\n  filesystems:\n    - device: /dev/a\n      path: /etc\n      format: xfs\n      with_mount_unit: true\n    - device: /dev/b\n      path: /etcetera\n      format: xfs\n      with_mount_unit: true\n    - device: /dev/c\n      path: /var/../srv\n      format: xfs\n      with_mount_unit: true\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('fcos', 'edge2-c16-root-small', 'variant: fcos\nversion: 1.6.0\nstorage:\n  disks:\n    - device: /dev/disk/by-id/coreos-boot-disk\n      partitions:\n        - number: 4\n          label: root\n          size_mib: 4000\n', args='-p -d files', files=EDGE2_FILES)
case('fcos', 'edge2-c16-root-small-raw-strict', 'variant: fcos\nversion: 1.6.0\nstorage:\n  disks:\n    - device: /dev/disk/by-id/coreos-boot-disk\n      partitions:\n        - number: 4\n          label: root\n          size_mib: 4000\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('fcos', 'edge2-c16-swap-mount', 'variant: fcos\nversion: 1.6.0\nstorage:\n  filesystems:\n    - device: /dev/a\n      format: swap\n      with_mount_unit: true\n', args='-p -d files', files=EDGE2_FILES)
case('fcos', 'edge2-c16-swap-mount-raw-strict', 'variant: fcos\nversion: 1.6.0\nstorage:\n  filesystems:\n    - device: /dev/a\n      format: swap\n      with_mount_unit: true\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('fcos', 'edge2-fcos18-cex-clevis-custom', "variant: fcos\nversion: 1.8.0-experimental\nstorage:\n  luks:\n    - name: a\n      device: /dev/a\n      cex:\n        enabled: true\n      clevis:\n        custom:\n          pin: tpm2\n          config: '{}'\n", args='-p -d files', files=EDGE2_FILES)
case('fcos', 'edge2-fcos18-cex-clevis-custom-raw-strict', "variant: fcos\nversion: 1.8.0-experimental\nstorage:\n  luks:\n    - name: a\n      device: /dev/a\n      cex:\n        enabled: true\n      clevis:\n        custom:\n          pin: tpm2\n          config: '{}'\n", args='-p -r -s -d files', files=EDGE2_FILES)
case('flatcar', 'edge2-flatcar12-luks-cex-boot', 'variant: flatcar\nversion: 1.2.0-experimental\nstorage:\n  luks:\n    - name: root\n      device: /dev/a\n      cex:\n        enabled: true\n      clevis:\n        tpm2: true\n', args='-p -d files', files=EDGE2_FILES)
case('flatcar', 'edge2-flatcar12-luks-cex-boot-raw-strict', 'variant: flatcar\nversion: 1.2.0-experimental\nstorage:\n  luks:\n    - name: root\n      device: /dev/a\n      cex:\n        enabled: true\n      clevis:\n        tpm2: true\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('openshift', 'edge2-oc19-luks-fips-cex', 'variant: openshift\nversion: 4.19.0\nmetadata:\n  name: n\n  labels:\n    machineconfiguration.openshift.io/role: master\nopenshift:\n  fips: true\n  kernel_arguments: [rd.luks.key=/etc/luks/cex.key]\nboot_device:\n  layout: s390x-zfcp\n  luks:\n    device: /dev/sdb\n    cex:\n      enabled: true\n', args='-p -d files', files=EDGE2_FILES)
case('openshift', 'edge2-oc19-luks-fips-cex-raw-strict', 'variant: openshift\nversion: 4.19.0\nmetadata:\n  name: n\n  labels:\n    machineconfiguration.openshift.io/role: master\nopenshift:\n  fips: true\n  kernel_arguments: [rd.luks.key=/etc/luks/cex.key]\nboot_device:\n  layout: s390x-zfcp\n  luks:\n    device: /dev/sdb\n    cex:\n      enabled: true\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('openshift', 'edge2-oc22-swap-mount', 'variant: openshift\nversion: 4.22.0\nmetadata:\n  name: n\n  labels:\n    machineconfiguration.openshift.io/role: master\nstorage:\n  filesystems:\n    - device: /dev/a\n      format: swap\n      with_mount_unit: true\n', args='-p -d files', files=EDGE2_FILES)
case('openshift', 'edge2-oc22-swap-mount-raw-strict', 'variant: openshift\nversion: 4.22.0\nmetadata:\n  name: n\n  labels:\n    machineconfiguration.openshift.io/role: master\nstorage:\n  filesystems:\n    - device: /dev/a\n      format: swap\n      with_mount_unit: true\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('openshift', 'edge2-oc23-kernel-type', 'variant: openshift\nversion: 4.23.0-experimental\nmetadata:\n  name: n\n  labels:\n    machineconfiguration.openshift.io/role: master\nopenshift:\n  kernel_type: 64k-pages\n  fips: false\n', args='-p -d files', files=EDGE2_FILES)
case('openshift', 'edge2-oc23-kernel-type-raw-strict', 'variant: openshift\nversion: 4.23.0-experimental\nmetadata:\n  name: n\n  labels:\n    machineconfiguration.openshift.io/role: master\nopenshift:\n  kernel_type: 64k-pages\n  fips: false\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('openshift', 'edge2-oc23-special', 'variant: openshift\nversion: 4.23.0-experimental\nmetadata:\n  name: n\n  labels:\n    machineconfiguration.openshift.io/role: master\nstorage:\n  files:\n    - path: /etc/x\n      mode: 04755\n      contents:\n        inline: a\n', args='-p -d files', files=EDGE2_FILES)
case('openshift', 'edge2-oc23-special-raw-strict', 'variant: openshift\nversion: 4.23.0-experimental\nmetadata:\n  name: n\n  labels:\n    machineconfiguration.openshift.io/role: master\nstorage:\n  files:\n    - path: /etc/x\n      mode: 04755\n      contents:\n        inline: a\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-dirmode-override', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      path: /t\n      dir_mode: 0700\n  directories:\n    - path: /t/sub\n      mode: 0755\n', args='-p -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-dirmode-override-raw-strict', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      path: /t\n      dir_mode: 0700\n  directories:\n    - path: /t/sub\n      mode: 0755\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-empty', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: empty\n      path: /e\n      dir_mode: 0700\n', args='-p -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-empty-raw-strict', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: empty\n      path: /e\n      dir_mode: 0700\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-exec-filemode', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      file_mode: 0600\n', args='-p -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-exec-filemode-raw-strict', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      file_mode: 0600\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-file-override-mode', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      path: /t\n      file_mode: 0600\n      user:\n        id: 5\n  files:\n    - path: /t/f\n      user:\n        name: x\n', args='-p -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-file-override-mode-raw-strict', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      path: /t\n      file_mode: 0600\n      user:\n        id: 5\n  files:\n    - path: /t/f\n      user:\n        name: x\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-link-override', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      path: /t\n      user:\n        id: 5\n  links:\n    - path: /t/l\n      hard: false\n', args='-p -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-link-override-raw-strict', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      path: /t\n      user:\n        id: 5\n  links:\n    - path: /t/l\n      hard: false\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-mode-neg', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      file_mode: -1\n', args='-p -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-mode-neg-raw-strict', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      file_mode: -1\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-root', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      group:\n        id: 0\n', args='-p -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-root-raw-strict', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      group:\n        id: 0\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-two-trees', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      path: /a\n      file_mode: 0444\n    - local: tree\n      path: /b\n      dir_mode: 0711\n', args='-p -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-two-trees-raw-strict', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      path: /a\n      file_mode: 0444\n    - local: tree\n      path: /b\n      dir_mode: 0711\n', args='-p -r -s -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-user-empty', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      user: {}\n', args='-p -d files', files=EDGE2_FILES)
case('fcos', 'edge2-t-user-empty-raw-strict', 'variant: fcos\nversion: 1.7.0\nstorage:\n  trees:\n    - local: tree\n      user: {}\n', args='-p -r -s -d files', files=EDGE2_FILES)
