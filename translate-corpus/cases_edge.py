# RHEL for Edge and Fedora IoT: the base without storage devices or kernel arguments.

CASES = []


def case(group, name, bu, args="-p", files=None):
    CASES.append(dict(group=group, name=name, args=args, files=files, bu=bu))


REFUSED = """kernel_arguments:
  should_exist: [quiet]
storage:
  disks:
    - device: /dev/sdb
      wipe_table: true
  filesystems:
    - device: /dev/sdb1
      format: ext4
  luks:
    - name: data
      device: /dev/sdc
  raid:
    - name: md0
      level: raid1
      devices: [/dev/sdd, /dev/sde]
"""
ALLOWED = """passwd:
  users:
    - name: core
      ssh_authorized_keys: [ssh-ed25519 AAAA]
      groups: [wheel]
storage:
  files:
    - path: /etc/hostname
      mode: 0644
      contents:
        inline: edge-device
    - path: /etc/repeat
      contents:
        inline: "abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc"
  directories:
    - path: /var/lib/app
      mode: 0700
  links:
    - path: /etc/localtime
      target: /usr/share/zoneinfo/UTC
systemd:
  units:
    - name: app.service
      enabled: true
      contents: "[Service]\\nExecStart=/usr/bin/app\\n[Install]\\nWantedBy=multi-user.target\\n"
"""
for group, versions in [("r4e", ["1.0.0", "1.1.0"]), ("fiot", ["1.0.0"])]:
    for v in versions:
        tag = v.rsplit(".", 1)[0].replace(".", "_")
        case(group, f"{tag}-allowed", f"variant: {group}\nversion: {v}\n" + ALLOWED)
        case(group, f"{tag}-refused", f"variant: {group}\nversion: {v}\n" + REFUSED)
        case(group, f"{tag}-kargs-empty", f"variant: {group}\nversion: {v}\nkernel_arguments: {{}}\nstorage:\n  disks: []\n")
        case(group, f"{tag}-only-luks", f"variant: {group}\nversion: {v}\nstorage:\n  luks:\n    - name: a\n      device: /dev/sda\n")
        case(group, f"{tag}-boot-device-unused", f"variant: {group}\nversion: {v}\nboot_device:\n  luks:\n    tpm2: true\n", args="-p -s")
case("r4e", "1_1-local-refs", """variant: r4e
version: 1.1.0
passwd:
  users:
    - name: core
      ssh_authorized_keys_local: [k.pub]
systemd:
  units:
    - name: x.service
      contents_local: x.service
""", args="-p -d files", files={"k.pub": "ssh-rsa AAAA k\n", "x.service": "[Unit]\n"})
case("r4e", "1_0-local-refs-unused", """variant: r4e
version: 1.0.0
systemd:
  units:
    - name: x.service
      contents_local: x.service
""", args="-p -d files", files={"x.service": "[Unit]\n"})
case("fiot", "1_0-tree", """variant: fiot
version: 1.0.0
storage:
  trees:
    - local: t
      path: /usr/local
""", args="-p -d files", files={"t/bin/x": ("exec", "#!/bin/sh\n"), "t/share/doc": "d\n"})
case("fiot", "1_0-two-sources-and-mode", """variant: fiot
version: 1.0.0
storage:
  files:
    - path: /etc/a
      mode: 600
      contents:
        inline: a
        local: a
""", args="-p -d files", files={"a": "a"})
